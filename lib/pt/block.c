/* lib/pt/block.c - the block decoder: one basic block per call.
 *
 * A block is a run of instructions that ends after an instruction that
 * needs the trace to go on (conditional and indirect branches, returns,
 * far transfers), after a direct call or jump when end_on_call /
 * end_on_jump are set, before an event, or when it reaches
 * HWT_PT_BLOCK_MAX_INSN instructions.  Built on the same flow engine as
 * the instruction decoder (insn_flow.c).
 *
 * Fast path: when nothing is pending (flow_fast_ok), a block is one or
 * more cached runs (cache.c) crossed with one lookup each, and the
 * branch that ends it takes its TNT bit straight from the query decoder
 * (flow_quick_proceed); a block of one run points into the cache instead
 * of being copied.  Otherwise the flow engine steps one instruction at a
 * time.  Either way the addresses and sizes stay valid until the next
 * call.
 */
#include <stdlib.h>
#include <string.h>

#include "insn_int.h"

struct hwt_pt_block_decoder *hwt_pt_block_alloc(const struct hwt_pt_config *cfg,
						const struct hwt_image *img,
						const struct hwt_pt_flow_options *opt)
{
	/* f is the first member: the flow engine allocates the whole object */
	return flow_alloc(sizeof(struct hwt_pt_block_decoder), cfg, img, opt);
}

void hwt_pt_block_free(struct hwt_pt_block_decoder *d)
{
	flow_free(d ? &d->f : NULL);
}

int hwt_pt_block_sync_forward(struct hwt_pt_block_decoder *d)
{
	d->quiet = 0;
	d->bst = flow_sync_forward(&d->f);
	d->have_bst = 1;
	d->bt.pend = 0;
	if (d->bst >= 0)
		d->bt.ended = 0;
	return d->bst;
}

/* Does an instruction of this class end a block? */
static int ends_block(const struct flow *f, int iclass)
{
	switch (iclass) {
	case HWT_INSN_OTHER:
	case HWT_INSN_PTWRITE:
		return 0;
	case HWT_INSN_JMP:
		return f->opt.end_on_jump;
	case HWT_INSN_CALL:
		return f->opt.end_on_call;
	default:
		return 1;
	}
}

/* Fast path: cross a cached run (see flow_fast_ok) and execute its last
 * instruction.  0 when the caller must step one instruction; else 1 (the
 * block is complete, *st the status) or 2 (go on with the block). */
static int run_step(struct hwt_pt_block_decoder *d, struct hwt_pt_block *b, int *st)
{
	struct flow *f = &d->f;
	struct hwt_pt_cache *c = f->cache;
	int mode = f->mode ? f->mode : 64;
	if (b->ninsn && b->ips != d->ips) {
		/* the block so far points into the cache: copy it out before a
		 * lookup that may build a run over it (a full pool starts over) */
		memcpy(d->ips, b->ips, b->ninsn * sizeof(*d->ips));
		memcpy(d->sizes, b->sizes, b->ninsn);
		b->ips = d->ips;
		b->sizes = d->sizes;
	}
	const struct run *r = cache_run(c, f->ip, mode);
	if (!r || b->ninsn + r->n > HWT_PT_BLOCK_MAX_INSN)
		return 0;
	const uint64_t *ips = c->ips + r->pool;
	const uint8_t *sizes = c->sizes + r->pool;
	uint64_t last_ip = r->ip + r->last;
	if (!b->ninsn) {
		b->ip = f->ip;
		b->mode = (uint8_t)mode;
		b->speculative = (uint8_t)f->speculative;
		/* a block of one run points into the cache (no copy) */
		b->ips = ips;
		b->sizes = sizes;
	} else {
		memcpy(d->ips + b->ninsn, ips, r->n * sizeof(*d->ips));
		memcpy(d->sizes + b->ninsn, sizes, r->n);
	}
	b->ninsn += r->n;
	b->end_ip = last_ip;
	b->iclass = r->iclass;
	f->err_deferred = 0;
	if (flow_quick_proceed(f, r, last_ip)) {
		*st = 0;
	} else {
		struct hwt_x86_insn xi;
		run_last(c, r, &xi);
		int err = flow_proceed(f, &xi);
		if (err < 0) {
			*st = err;
			return 1;
		}
		*st = flow_status(f);
		if (*st & (HWT_PTS_EVENT_PENDING | HWT_PTS_EOS))
			return 1;
	}
	return ends_block(f, r->iclass) || b->ninsn == HWT_PT_BLOCK_MAX_INSN ? 1 : 2;
}

/* The general loop: runs where it can, single steps where it must. */
static __attribute__((noinline)) int block_loop(struct hwt_pt_block_decoder *d,
						struct hwt_pt_block *b)
{
	struct hwt_x86_insn xi;
	int have, trunc, st;

	for (;;) {
		if (d->f.img && flow_fast_ok(&d->f)) {
			int r = run_step(d, b, &st);
			if (r == 2)
				continue;
			if (r == 1)
				return st;
		}
		st = flow_step(&d->f, &xi, &have, &trunc);
		if (have) {
			if (!b->ninsn) {
				b->ip = xi.ip;
				b->mode = xi.mode;
				b->speculative = (uint8_t)d->f.speculative;
			}
			if (b->ips != d->ips) {
				memcpy(d->ips, b->ips, b->ninsn * sizeof(*d->ips));
				memcpy(d->sizes, b->sizes, b->ninsn);
				b->ips = d->ips;
				b->sizes = d->sizes;
			}
			d->sizes[b->ninsn] = xi.size;
			d->ips[b->ninsn++] = xi.ip;
			b->end_ip = xi.ip;
			b->iclass = xi.iclass;
			b->truncated |= (uint8_t)trunc;
		}
		if (st < 0 && !have && b->ninsn)
			return 0; /* end the block here; the error comes back next time */
		if (st < 0 && !have && d->f.err_deferred)
			b->ip = 0;
		if (st < 0 || !have || (st & (HWT_PTS_EVENT_PENDING | HWT_PTS_EOS)))
			return st;
		if (ends_block(&d->f, xi.iclass) || b->ninsn == HWT_PT_BLOCK_MAX_INSN)
			return st;
	}
}

/* The block of one cached run r at f->ip ending in a conditional branch
 * whose bit says taken: fill in b (pointing into the cache) and go on. */
static inline void jcc_block(struct flow *f, const struct run *r, int mode, int taken,
			     struct hwt_pt_block *b)
{
	const struct hwt_pt_cache *c = f->cache;
	uint64_t last_ip = r->ip + r->last;
	b->ip = r->ip;
	b->end_ip = last_ip;
	b->ninsn = r->n;
	b->mode = (uint8_t)mode;
	b->iclass = HWT_INSN_JCC;
	b->speculative = (uint8_t)f->speculative;
	b->truncated = 0;
	b->ips = c->ips + r->pool;
	b->sizes = c->sizes + r->pool;
	f->err_deferred = 0;
	f->ip = taken ? r->target : last_ip + r->size;
}

/* hwt_pt_block_next without the quiet lane below. */
static __attribute__((noinline)) int block_next(struct hwt_pt_block_decoder *d,
						struct hwt_pt_block *b)
{
	struct flow *f = &d->f;
	struct hwt_pt_cache *c = f->cache;
	int taken;

	memset(b, 0, sizeof(*b));
	b->ip = f->ip;
	d->have_bst = 0; /* (the quiet lane needs a call of this first) */
	cache_bind(c, f->img);
	/* The common case in one go: a block that is one cached run ending
	 * in a conditional branch whose TNT bit is at hand. */
	if (f->img && (d->quiet || flow_fast_ok(f))) {
		int mode = f->mode ? f->mode : 64;
		const struct run *r = cache_run(c, f->ip, mode);
		if (r && r->iclass == HWT_INSN_JCC && flow_quick_bit(f->q, &taken)) {
			jcc_block(f, r, mode, taken, b);
			d->quiet = 1;
			return 0;
		}
	}
	d->quiet = 0;
	b->ips = d->ips;
	b->sizes = d->sizes;
	return block_loop(d, b);
}

int hwt_pt_block_next(struct hwt_pt_block_decoder *d, struct hwt_pt_block *b)
{
	struct flow *f = &d->f;
	struct hwt_pt_cache *c = f->cache;
	struct hwt_pt_query *q = f->q;

	/* The quiet lane: straight after a fast-lane block (d->quiet), with
	 * the cache still bound to the image, a cached run ending in a
	 * conditional branch, and its TNT bit at hand with the next TNT
	 * packet already read: what block_next would do, without a call. */
	if (d->quiet && c->img == f->img && c->version == f->img->next_id && q->tnt_n &&
	    !q->tnt_tick && q->la_valid &&
	    (q->la.type == HWT_PKT_TNT8 || q->la.type == HWT_PKT_TNT64)) {
		int mode = f->mode ? f->mode : 64;
		uint64_t ip = f->ip;
		const struct run *r = &c->runs[run_slot(ip, mode)];
		if (r->valid && r->ip == ip && r->mode == mode && r->iclass == HWT_INSN_JCC) {
			int taken;
			flow_quick_bit(q, &taken); /* cannot fail here */
			jcc_block(f, r, mode, taken, b);
			return 0;
		}
	}
	return block_next(d, b);
}

int hwt_pt_block_event(struct hwt_pt_block_decoder *d, struct hwt_pt_event *ev)
{
	d->quiet = 0;
	d->bst = flow_event(&d->f, ev);
	d->have_bst = 1;
	return d->bst;
}

int hwt_pt_block_resync(struct hwt_pt_block_decoder *d)
{
	d->quiet = 0;
	d->bst = flow_resync(&d->f);
	d->have_bst = 1;
	return d->bst;
}

int hwt_pt_block_offset(const struct hwt_pt_block_decoder *d, uint64_t *offset)
{
	return hwt_pt_query_offset(d->f.q, offset);
}

int hwt_pt_block_sync_offset(const struct hwt_pt_block_decoder *d, uint64_t *offset)
{
	return hwt_pt_query_sync_offset(d->f.q, offset);
}

int hwt_pt_block_time(const struct hwt_pt_block_decoder *d, uint64_t *tsc, uint32_t *lost_mtc,
		      uint32_t *lost_cyc)
{
	return hwt_pt_query_time(d->f.q, tsc, lost_mtc, lost_cyc);
}

uint64_t hwt_pt_block_ip(const struct hwt_pt_block_decoder *d)
{
	return d->f.have_ip ? d->f.ip : 0;
}
