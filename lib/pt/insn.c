/* lib/pt/insn.c - the instruction decoder: one executed instruction per
 * hwt_pt_insn_next() call.
 *
 * A thin shell over the flow engine (insn_flow.c), which it owns.  The
 * decoder owns its query decoder; the trace buffer and the image belong
 * to the caller and must outlive it.
 */
#include <stdlib.h>
#include <string.h>

#include "insn_int.h"

/* The run being walked on the fast path (a copy: the cache slot may be
 * reused); at is the index of the next instruction, data its code. */
struct cursor {
	struct run r;
	const uint8_t *data; /* the code of r's first instruction */
	uint32_t at;
	uint32_t epoch; /* the cache's epoch when r was taken */
	int valid;
};

struct hwt_pt_insn_decoder {
	struct flow f;
	struct cursor cur;
};

struct hwt_pt_insn_decoder *hwt_pt_insn_alloc(const struct hwt_pt_config *cfg,
					      const struct hwt_image *img,
					      const struct hwt_pt_flow_options *opt)
{
	/* f is the first member: the flow engine allocates the whole object */
	return flow_alloc(sizeof(struct hwt_pt_insn_decoder), cfg, img, opt);
}

void hwt_pt_insn_free(struct hwt_pt_insn_decoder *d)
{
	flow_free(d ? &d->f : NULL);
}

int hwt_pt_insn_sync_forward(struct hwt_pt_insn_decoder *d)
{
	return flow_sync_forward(&d->f);
}

/* Fast path (see flow_fast_ok): the next instruction of a cached run.
 * 1 and *st when it gave one, 0 when the caller must step. */
static int run_next(struct hwt_pt_insn_decoder *d, struct hwt_pt_insn *insn, int *st)
{
	struct flow *f = &d->f;
	struct hwt_pt_cache *c = f->cache;
	struct cursor *k = &d->cur;
	int mode = f->mode ? f->mode : 64;
	if (!k->valid || k->epoch != c->epoch || k->r.mode != mode ||
	    c->ips[k->r.pool + k->at] != f->ip) {
		struct hwt_image_span span;
		const struct run *r = cache_run(c, f->ip, mode);
		if (!r || hwt_image_lookup(f->img, f->ip, &span))
			return 0;
		k->r = *r;
		k->epoch = c->epoch;
		k->data = span.data;
		k->at = 0;
		k->valid = 1;
	}
	const struct run *r = &k->r;
	uint64_t ip = f->ip;
	unsigned size = c->sizes[r->pool + k->at];
	insn->ip = ip;
	insn->size = (uint8_t)size;
	insn->mode = (uint8_t)mode;
	insn->speculative = (uint8_t)f->speculative;
	memcpy(insn->raw, k->data + (ip - r->ip), size);
	f->err_deferred = 0;
	if (++k->at < r->n) {
		insn->iclass = HWT_INSN_OTHER;
		f->ip = ip + size;
		*st = 0;
		return 1;
	}
	k->valid = 0;
	insn->iclass = r->iclass;
	if (flow_quick_proceed(f, r, ip)) {
		*st = 0;
		return 1;
	}
	struct hwt_x86_insn xi;
	run_last(c, r, &xi);
	int err = flow_proceed(f, &xi);
	*st = err < 0 ? err : flow_status(f);
	return 1;
}

int hwt_pt_insn_next(struct hwt_pt_insn_decoder *d, struct hwt_pt_insn *insn)
{
	struct hwt_x86_insn xi;
	int have, trunc, st;
	memset(insn, 0, sizeof(*insn));
	insn->ip = d->f.ip;
	cache_bind(d->f.cache, d->f.img);
	if (d->f.img && flow_fast_ok(&d->f) && run_next(d, insn, &st))
		return st;
	d->cur.valid = 0;
	st = flow_step(&d->f, &xi, &have, &trunc);
	if (st < 0 && !have && d->f.err_deferred)
		insn->ip = 0;
	if (have) {
		insn->ip = xi.ip;
		insn->size = xi.size;
		insn->iclass = xi.iclass;
		insn->mode = xi.mode;
		insn->speculative = (uint8_t)d->f.speculative;
		insn->truncated = (uint8_t)trunc;
		memcpy(insn->raw, xi.raw, sizeof(insn->raw));
	}
	return st;
}

int hwt_pt_insn_event(struct hwt_pt_insn_decoder *d, struct hwt_pt_event *ev)
{
	return flow_event(&d->f, ev);
}

int hwt_pt_insn_offset(const struct hwt_pt_insn_decoder *d, uint64_t *offset)
{
	return hwt_pt_query_offset(d->f.q, offset);
}

int hwt_pt_insn_sync_offset(const struct hwt_pt_insn_decoder *d, uint64_t *offset)
{
	return hwt_pt_query_sync_offset(d->f.q, offset);
}

int hwt_pt_insn_time(const struct hwt_pt_insn_decoder *d, uint64_t *tsc, uint32_t *lost_mtc,
		     uint32_t *lost_cyc)
{
	return hwt_pt_query_time(d->f.q, tsc, lost_mtc, lost_cyc);
}

uint64_t hwt_pt_insn_ip(const struct hwt_pt_insn_decoder *d)
{
	return d->f.have_ip ? d->f.ip : 0;
}

int hwt_pt_insn_resync(struct hwt_pt_insn_decoder *d)
{
	return flow_resync(&d->f);
}
