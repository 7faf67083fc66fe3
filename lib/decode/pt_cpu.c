/* lib/decode/pt_cpu.c - per-CPU Intel PT queues: each CPU's trace is
 * joined (held in memory to the end of the recording: the limit of this
 * mode) and the PSB-to-PSB regions of all CPUs are decoded in the order of
 * their PSB's time, after all sideband, with one image of every process's
 * mappings; the engine's switch timelines (complete by then) say which
 * thread runs on a CPU when.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "decode/pt_int.h"

/* The queue's joined trace (in its carry buffer) becomes a segment (at
 * a discontinuity, and at the end: flush). */
void pt_cpu_seg_end(struct pt *e, struct hwt_dec_queue *qq)
{
	struct ptq *q = qq->fmt;
	if (!q || !q->clen)
		return;
	struct cpu_seg *nv = realloc(e->segs, (e->nsegs + 1) * sizeof(*nv));
	if (!nv) {
		q->clen = 0;
		return;
	}
	e->segs = nv;
	nv[e->nsegs].q = qq;
	nv[e->nsegs].d = q->carry;
	nv[e->nsegs].n = q->clen;
	nv[e->nsegs++].base = q->carry_off;
	q->carry = NULL;
	q->clen = q->ccap = 0;
}

/* An AUXTRACE payload of a per-CPU queue: appended to the current segment
 * if it continues it (payloads are zero-padded to 8 bytes: one that starts
 * in the previous one's padding continues it), else it starts one. */
void pt_cpu_chunk(struct pt *e, struct hwt_dec_queue *qq, const uint8_t *data, size_t n,
		  uint64_t aux_off)
{
	struct ptq *q = qq->fmt;
	if (q->clen && q->have_next && aux_off < q->next_off && q->next_off - aux_off < 8 &&
	    q->next_off - aux_off <= q->clen)
		q->clen -= (size_t)(q->next_off - aux_off);
	else if (q->clen && aux_off != q->next_off)
		pt_cpu_seg_end(e, qq);
	if (!q->clen)
		q->carry_off = aux_off;
	if (pt_carry_append(q, data, n))
		pt_cpu_seg_end(e, qq);
	q->next_off = aux_off + n;
	q->have_next = 1;
}

/* TSC of the PSB+ at p (0 and *tsc), else -1. */
static int psb_tsc(const uint8_t *p, size_t n, uint64_t *tsc)
{
	size_t pos = 0;
	for (int k = 0; k < 64 && pos < n; k++) {
		struct hwt_pt_packet pkt;
		int sz = hwt_pt_pkt_parse(p + pos, n - pos, &pkt);
		if (sz <= 0 || pkt.type == HWT_PKT_PSBEND)
			return -1;
		pos += (size_t)sz;
		if (pkt.type == HWT_PKT_TSC) {
			*tsc = pkt.u.tsc.tsc;
			return 0;
		}
	}
	return -1;
}

static int region_cmp(const void *a, const void *b)
{
	const struct cpu_region *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->seg != y->seg)
		return x->seg < y->seg ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Decode every per-CPU segment, region by region, all CPUs' regions in
 * order of time: a thread that moves between CPUs comes out in order. */
void pt_cpu_decode_all(struct pt *e)
{
	size_t nr = 0, cap = 0;
	struct cpu_region *rg = NULL;
	for (size_t s = 0; s < e->nsegs; s++) {
		const struct cpu_seg *g = &e->segs[s];
		uint64_t t = 0;
		for (const uint8_t *p = pt_find_psb(g->d, g->n); p;) {
			size_t off = (size_t)(p - g->d);
			const uint8_t *nx = pt_find_psb(p + 16, g->n - off - 16);
			uint64_t tsc;
			if (!psb_tsc(p, g->n - off, &tsc))
				t = pt_tsc_to_ns(e, tsc);
			if (nr == cap) {
				size_t nc = cap ? 2 * cap : 256;
				struct cpu_region *nv = realloc(rg, nc * sizeof(*nv));
				if (!nv)
					break;
				rg = nv;
				cap = nc;
			}
			rg[nr].time = t;
			rg[nr].seg = s;
			rg[nr].off = off;
			rg[nr].n = (size_t)((nx ? nx : g->d + g->n) - p);
			rg[nr++].have_next = nx != NULL;
			p = nx;
		}
	}
	if (nr)
		qsort(rg, nr, sizeof(*rg), region_cmp);
	for (size_t i = 0; i < nr; i++) {
		const struct cpu_seg *g = &e->segs[rg[i].seg];
		const uint8_t *p = g->d + rg[i].off;
		size_t end = rg[i].off + rg[i].n;
		uint64_t stop_ip = 0;
		int holding =
		    rg[i].have_next && pt_psb_fup_ip(g->d + end, g->n - end, &stop_ip) > 0;
		e->have_rtime = 1;
		e->rtime = rg[i].time;
		pt_decode_region(e, g->q, p, rg[i].n, g->base + rg[i].off, holding, stop_ip);
	}
	e->have_rtime = 0;
	free(rg);
	for (size_t s = 0; s < e->nsegs; s++)
		free(e->segs[s].d);
	free(e->segs);
	e->segs = NULL;
	e->nsegs = 0;
}
