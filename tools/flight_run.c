/* tools/flight_run.c - the flight recorder's report on a recording: the
 * library's recording decoder (hwt/decode.h, run as "hwt script" runs it:
 * sp_run) feeds flight.c; symbols and source lines as "hwt script
 * --srcline" finds them.  The only file that ties flight.c to a decoder. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "flight.h"
#include "hwt/decode.h"
#include "script_perf.h"
#include "srcline.h"

struct fr_ctx {
	struct flight *f;
	struct sp_symcache *sc;
	struct sl_cache *sl;
};

static void fr_locate(void *arg, const void *img, uint64_t ip, struct hwt_out_loc *l)
{
	struct fr_ctx *c = arg;
	l->ip = ip;
	l->sym = sp_symbol(c->sc, img, ip, &l->off);
	l->src = c->sl ? sl_srcline(c->sl, img, ip) : NULL;
}

static void fr_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		      const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	(void)have_time, (void)time_ns;
	struct fr_ctx *c = arg;
	flight_branch(c->f, t->pid, t->tid, from, to, kind, img);
}

static void fr_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	struct fr_ctx *c = arg;
	if (t)
		flight_gap(c->f, t->tid, offset, ip, err);
}

int flight_run(const char *path, const char *cmd, unsigned last_n, long tid, int srcline,
	       struct hwt_outbuf *o)
{
	struct fr_ctx c = {0};
	c.sc = sp_symcache_alloc();
	c.sl = srcline ? sl_cache_alloc() : NULL;
	c.f = flight_alloc(last_n, fr_locate, &c);
	if (!c.sc || !c.f || (srcline && !c.sl)) {
		flight_free(c.f);
		sp_symcache_free(c.sc);
		sl_cache_free(c.sl);
		return 2;
	}
	struct hwt_decode_consumer cons = {
	    .size = sizeof(cons),
	    .arg = &c,
	    .branch = fr_branch,
	    .gap = fr_gap,
	};
	int rc = sp_run(path, cmd, &cons);
	if (rc != 2) {
		struct flight_fatal fat[16];
		int nf = flight_read_fatal(path, fat, 16);
		const struct flight_fatal *fatal = nf ? &fat[0] : NULL;
		if (tid == FLIGHT_FATAL)
			tid = fatal ? fatal->tid : FLIGHT_ALL;
		if (!flight_report(c.f, o, tid, fatal)) {
			if (tid >= 0) {
				cli_err(cmd,
					"'%s' has no branches of thread %ld (hwt info lists "
					"its threads)",
					path, tid);
				rc = 2;
			} else {
				hwt_out_str(o, "no branches in the trace\n");
			}
		}
	}
	flight_free(c.f);
	sp_symcache_free(c.sc);
	sl_cache_free(c.sl);
	return rc;
}
