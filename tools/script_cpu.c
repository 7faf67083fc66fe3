/* tools/script_cpu.c - per-CPU recordings in "hwt script": the switch
 * records of the whole file (first pass) say which thread runs on a CPU
 * when; each CPU's trace is joined (held in memory: the limit of this
 * mode) and the PSB-to-PSB regions of all CPUs are decoded in the order
 * of their PSB's time, after all sideband, with one image of every
 * process's mappings.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "script_int.h"

/* ---------------- per-CPU recordings ---------------- */
/* First pass: a switch-in or ITRACE_START goes to its CPU's timeline. */
void sp_tl_add(struct engine *e, const struct hwt_perf_record *rec)
{
	uint32_t tid, pid;
	if (!sp_switch_in(rec, &tid, &pid))
		return;
	struct cpu_tl *tl = NULL;
	for (size_t i = 0; i < e->ntls; i++)
		if (e->tls[i].cpu == rec->sid.cpu)
			tl = &e->tls[i];
	if (!tl) {
		struct cpu_tl *nv = realloc(e->tls, (e->ntls + 1) * sizeof(*nv));
		if (!nv)
			return;
		e->tls = nv;
		tl = &e->tls[e->ntls++];
		memset(tl, 0, sizeof(*tl));
		tl->cpu = rec->sid.cpu;
	}
	if (tl->nsw == tl->capsw) {
		size_t nc = tl->capsw ? 2 * tl->capsw : 64;
		struct switch_ev *nv = realloc(tl->sw, nc * sizeof(*nv));
		if (!nv)
			return;
		tl->sw = nv;
		tl->capsw = nc;
	}
	tl->sw[tl->nsw].time = rec->sid.time;
	tl->sw[tl->nsw].tid = tid;
	tl->sw[tl->nsw].seq = (uint32_t)tl->nsw;
	tl->nsw++;
}

static int sw_cmp(const void *a, const void *b)
{
	const struct switch_ev *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* After the first pass: each per-CPU queue takes its CPU's timeline. */
void sp_tl_attach(struct engine *e)
{
	for (size_t i = 0; i < e->ntls; i++) {
		struct cpu_tl *tl = &e->tls[i];
		if (tl->nsw)
			qsort(tl->sw, tl->nsw, sizeof(*tl->sw), sw_cmp);
		for (size_t k = 0; k < e->nqueues && tl->sw; k++) {
			struct queue *q = &e->queues[k];
			if (q->per_cpu && q->cpu == tl->cpu && !q->sw) {
				q->sw = tl->sw;
				q->nsw = tl->nsw;
				q->capsw = tl->capsw;
				tl->sw = NULL;
			}
		}
		free(tl->sw);
	}
	free(e->tls);
	e->tls = NULL;
	e->ntls = 0;
}

/* The queue's joined trace (in its carry buffer) becomes a segment. */
static void cpu_seg_end(struct engine *e, struct queue *q)
{
	if (!q->clen)
		return;
	struct cpu_seg *nv = realloc(e->segs, (e->nsegs + 1) * sizeof(*nv));
	if (!nv) {
		q->clen = 0;
		return;
	}
	e->segs = nv;
	nv[e->nsegs].qi = (size_t)(q - e->queues);
	nv[e->nsegs].d = q->carry;
	nv[e->nsegs].n = q->clen;
	nv[e->nsegs++].base = q->carry_off;
	q->carry = NULL;
	q->clen = q->ccap = 0;
}

/* An AUXTRACE payload of a per-CPU queue: appended to the current segment
 * if it continues it (payloads are zero-padded to 8 bytes: one that starts
 * in the previous one's padding continues it), else it starts one. */
void sp_cpu_chunk(struct engine *e, struct queue *q, const uint8_t *data, size_t n,
		  uint64_t aux_off)
{
	if (q->clen && q->have_next && aux_off < q->next_off && q->next_off - aux_off < 8 &&
	    q->next_off - aux_off <= q->clen)
		q->clen -= (size_t)(q->next_off - aux_off);
	else if (q->clen && aux_off != q->next_off)
		cpu_seg_end(e, q);
	if (!q->clen)
		q->carry_off = aux_off;
	if (sp_carry_append(q, data, n))
		cpu_seg_end(e, q);
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
void sp_cpu_decode_all(struct engine *e)
{
	for (size_t i = 0; i < e->nqueues; i++)
		if (e->queues[i].per_cpu)
			cpu_seg_end(e, &e->queues[i]);
	size_t nr = 0, cap = 0;
	struct cpu_region *rg = NULL;
	for (size_t s = 0; s < e->nsegs; s++) {
		const struct cpu_seg *g = &e->segs[s];
		uint64_t t = 0;
		for (const uint8_t *p = sp_find_psb(g->d, g->n); p;) {
			size_t off = (size_t)(p - g->d);
			const uint8_t *nx = sp_find_psb(p + 16, g->n - off - 16);
			uint64_t tsc;
			if (!psb_tsc(p, g->n - off, &tsc))
				t = sp_tsc_to_ns(e, tsc);
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
		    rg[i].have_next && sp_psb_fup_ip(g->d + end, g->n - end, &stop_ip) > 0;
		e->have_rtime = 1;
		e->rtime = rg[i].time;
		sp_decode_region(e, &e->queues[g->qi], p, rg[i].n, g->base + rg[i].off, holding,
				 stop_ip);
	}
	e->have_rtime = 0;
	free(rg);
	for (size_t s = 0; s < e->nsegs; s++)
		free(e->segs[s].d);
	free(e->segs);
	e->segs = NULL;
	e->nsegs = 0;
}
