/* bench/bench_hwt_fmt.c - the branch and instruction formatters of
 * "hwt script" (lib/out) alone: the first ROWS taken branches of a
 * recording are captured (with their times and symbols), then formatted
 * again and again into the output buffer, written to /dev/null.
 *
 * usage: bench_hwt_fmt FILE [ROWS [MIN_SECONDS]]
 * prints per format "fmt NAME ROWS NS_PER_ROW BYTES_PER_ROW MB_PER_S"
 * (CPU time of the formatting loop; MB/s of output):
 *   tsv        hwt_out_branches_tsv per batch (script --format tsv)
 *   tsv-row    hwt_out_branch_tsv per branch (--no-batch)
 *   text       hwt_out_branch_text with times (script --branches)
 *   text-nt    the same without times (--no-time)
 *   insn       hwt_out_insn of each branch's source (script --insn)
 * Symbols are looked up while capturing (not timed): the symbol cache of
 * the command (tools/script_perf.c) is not part of this figure.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwt/decode.h"
#include "hwt/image.h"
#include "out/out.h"

struct batch {
	uint32_t tid;
	size_t first, n;
};

/* ip -> symbol (copied: images go away with the decoder) */
#define SYMS (1u << 16)
struct sym {
	uint64_t ip, off;
	const char *name;
	int used;
};

struct cap {
	size_t max, n, nb, capb;
	struct hwt_dec_branch *br;
	uint32_t *fsym, *tsym; /* index into syms */
	struct batch *b;
	struct sym *syms;
	size_t nsyms;
};

static const char *dupname(const char *s)
{
	char *d = strdup(s);
	if (!d)
		exit(2);
	return d;
}

static uint32_t sym_of(struct cap *c, const struct hwt_image *img, uint64_t ip)
{
	uint32_t h = (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> 48);
	for (uint32_t i = 0; i < SYMS; i++, h = (h + 1) & (SYMS - 1)) {
		struct sym *s = &c->syms[h];
		if (s->used && s->ip == ip)
			return h;
		if (s->used)
			continue;
		if (c->nsyms + 1 >= SYMS / 2) /* full: the last one found */
			return h ? h - 1 : 0;
		const char *name = NULL;
		uint64_t off = 0;
		s->used = 1;
		s->ip = ip;
		if (img && !hwt_image_symbol(img, ip, &name, &off) && name) {
			s->name = dupname(name);
			s->off = off;
		}
		c->nsyms++;
		return h;
	}
	return 0;
}

static void grab(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_branch *br, size_t n,
		 const struct hwt_image *img)
{
	struct cap *c = arg;
	if (c->n + n > c->max)
		n = c->max - c->n;
	if (!n)
		return;
	if (c->nb == c->capb) {
		c->capb = c->capb ? 2 * c->capb : 1024;
		c->b = realloc(c->b, c->capb * sizeof(*c->b));
		if (!c->b)
			exit(2);
	}
	c->b[c->nb++] = (struct batch){t->tid, c->n, n};
	for (size_t i = 0; i < n; i++) {
		c->br[c->n + i] = br[i];
		c->fsym[c->n + i] = sym_of(c, img, br[i].from);
		c->tsym[c->n + i] = sym_of(c, img, br[i].to);
	}
	c->n += n;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum { F_TSV, F_TSV_ROW, F_TEXT, F_TEXT_NT, F_INSN, F_N };
static const char *const fnames[F_N] = {"tsv", "tsv-row", "text", "text-nt", "insn"};

static void loc_of(const struct cap *c, uint32_t si, uint64_t ip, struct hwt_out_loc *l)
{
	l->ip = ip;
	l->sym = c->syms[si].name;
	l->off = c->syms[si].off;
	l->src = NULL;
}

static void run_once(const struct cap *c, struct hwt_outbuf *o, int f)
{
	for (size_t k = 0; k < c->nb; k++) {
		const struct batch *b = &c->b[k];
		const struct hwt_dec_branch *br = c->br + b->first;
		if (f == F_TSV) {
			hwt_out_branches_tsv(o, b->tid, br, b->n);
			continue;
		}
		for (size_t i = 0; i < b->n; i++) {
			size_t j = b->first + i;
			struct hwt_out_loc lf, lt;
			switch (f) {
			case F_TSV_ROW:
				hwt_out_branch_tsv(o, b->tid, br[i].from, br[i].to, br[i].kind);
				break;
			case F_TEXT:
			case F_TEXT_NT:
				loc_of(c, c->fsym[j], br[i].from, &lf);
				loc_of(c, c->tsym[j], br[i].to, &lt);
				hwt_out_branch_text(o, b->tid, f == F_TEXT && br[i].have_time,
						    br[i].time_ns, br[i].kind, &lf, &lt);
				break;
			case F_INSN:
				loc_of(c, c->fsym[j], br[i].from, &lf);
				hwt_out_insn(o, b->tid, br[i].have_time, br[i].time_ns, &lf, 0,
					     NULL, 0, 64);
				break;
			}
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_hwt_fmt FILE [ROWS [MIN_SECONDS]]\n");
		return 2;
	}
	struct cap c = {0};
	c.max = argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : 2000000;
	double min_s = argc > 3 ? atof(argv[3]) : 0.5;
	c.br = malloc(c.max * sizeof(*c.br));
	c.fsym = malloc(c.max * sizeof(*c.fsym));
	c.tsym = malloc(c.max * sizeof(*c.tsym));
	c.syms = calloc(SYMS, sizeof(*c.syms));
	if (!c.br || !c.fsym || !c.tsym || !c.syms)
		return 2;
	struct hwt_decode_consumer cons = {
	    .size = sizeof(cons), .arg = &c, .flags = HWT_DEC_WANT_TIME, .branches = grab};
	char err[256] = "";
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.path = argv[1];
	cfg.consumer = &cons;
	cfg.jobs = 1;
	cfg.errbuf = err;
	cfg.errlen = sizeof(err);
	struct hwt_decoder *d;
	if (hwt_decoder_alloc(&d, &cfg)) {
		fprintf(stderr, "bench_hwt_fmt: cannot decode %s: %s\n", argv[1], err);
		return 1;
	}
	int rc;
	while ((rc = hwt_decoder_step(d)) == 1 && c.n < c.max)
		;
	hwt_decoder_free(d);
	if (!c.n) {
		fprintf(stderr, "bench_hwt_fmt: no taken branches in %s\n", argv[1]);
		return 1;
	}
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 2;
	for (int f = 0; f < F_N; f++) {
		struct hwt_outbuf o;
		if (hwt_outbuf_init(&o, fd, 1u << 20))
			return 2;
		unsigned reps = 0;
		double t0 = cpu_now(), t;
		do {
			run_once(&c, &o, f);
			hwt_outbuf_flush(&o);
			reps++;
			t = cpu_now() - t0;
		} while (t < min_s);
		hwt_outbuf_fini(&o);
		/* the bytes of one round */
		struct hwt_outbuf o2;
		if (hwt_outbuf_init(&o2, fd, (size_t)1 << 30))
			return 2;
		run_once(&c, &o2, f);
		double per = (double)o2.len / (double)c.n;
		hwt_outbuf_fini(&o2);
		double rows = (double)c.n * reps;
		printf("fmt %-7s %zu %.2f ns/row %.1f B/row %.0f MB/s\n", fnames[f], c.n,
		       t / rows * 1e9, per, per * rows / t / 1e6);
	}
	close(fd);
	return 0;
}
