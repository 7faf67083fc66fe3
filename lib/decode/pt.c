/* lib/decode/pt.c - the Intel PT format of the recording decoder (ops
 * hwt_decoder_intel_pt; internals: pt_int.h).
 *
 * Design: each AUXTRACE chunk of a per-thread queue is decoded when it is
 * met, with the image of its thread's process at that point, in regions
 * that start at a PSB and end at the next region's PSB (pt_chunk.c:
 * memory is bounded by the PSB period, not by the trace).  A region that
 * ends at a PSB would run on past the PSB's IP until it needs a packet;
 * what it decodes from the PSB's FUP IP on is held back and dropped, since
 * the next region starts there: the output does not depend on where the
 * recorder cut the trace into chunks.  Only the last visit of that IP
 * counts, and it comes after the packets that move the flow (TNT, TIP)
 * before the PSB: the batch path watches for the IP only once the
 * decoder has taken them (pt_stop_from), since a PSB often lands in the
 * hottest loop, whose every turn would be a visit (and would keep the
 * path cache from delivering the loop).  Taken branches are derived from
 * consecutive instructions (plus asynchronous branch events): with the
 * block decoder unless the consumer wants every instruction's bytes or it
 * is a per-CPU queue (blocks end at every branch, so only a block's first
 * instruction can be a branch target; times are the ones the instruction
 * decoder would give, read before and after each block), else with the
 * instruction decoder.  The regions' decoders share one decode cache per
 * process image.  Every decoder error is reported as a gap with its
 * offset in the AUX stream and decoding resumes at the next PSB.
 * Consumers of taken branches (no instructions or events; with times or
 * without) get the block decoder's output in batches (region_batch:
 * hwt_pt_block_batch, with the path cache and, with times, its time
 * entries), the same branches at the same times with one decoder call
 * per many; branches go to a consumer's branches callback
 * in arrays (PT_BB_CAP).  Consumers of instruction ranges get the block
 * loop's (or, per-CPU, the instruction decoder's) instructions gathered
 * into runs of sequential instructions at one time, each closed by the
 * taken branch after it (rg_add, rg_branch: the branch the loop derives
 * when its target's instruction comes), a far transfer, or a change of
 * time, mode or destination (output or the pending list, which holds
 * ranges then), in arrays (PT_RB_CAP).  Per-CPU queues: pt_cpu.c;
 * regions decoded on several threads: pt_par.c.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "decode/pt_int.h"
#include "hwt/error.h"
#include "hwt/x86.h"

_Static_assert(sizeof(struct hwt_dec_insn) == sizeof(struct hwt_pt_insn) &&
		   offsetof(struct hwt_dec_insn, raw) == offsetof(struct hwt_pt_insn, raw) &&
		   offsetof(struct hwt_dec_insn, truncated) ==
		       offsetof(struct hwt_pt_insn, truncated),
	       "hwt_dec_insn is laid out as hwt_pt_insn");

/* ---------------- PSB helpers ---------------- */
const uint8_t hwt_pt_psb_pat[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

/* The first PSB in [p, p+n), as the packet decoder sees it: a PSB
 * pattern inside a longer run of 02 82 pairs (a CYC byte 02 and a TNT
 * byte 82 can precede a PSB) is the run's last 16 bytes. */
const uint8_t *pt_find_psb(const uint8_t *p, size_t n)
{
	/* Horspool on the window's last byte: the pattern ends in 82, holds
	 * 82 two bytes before its end and 02 one byte before it, no other */
	const uint8_t *h = NULL;
	for (size_t i = 0; n >= 16 && i <= n - 16;) {
		uint8_t c = p[i + 15];
		if (c == 0x82) {
			if (!memcmp(p + i, hwt_pt_psb_pat, sizeof(hwt_pt_psb_pat))) {
				h = p + i;
				break;
			}
			i += 2;
		} else {
			i += c == 0x02 ? 1 : 16;
		}
	}
	if (!h)
		return NULL;
	const uint8_t *end = p + n;
	while (end - h >= 18 && h[16] == 0x02 && h[17] == 0x82)
		h += 2;
	return h;
}

int pt_psb_fup_ip(const uint8_t *p, size_t n, uint64_t *ip)
{
	struct hwt_pt_last_ip lip;
	hwt_pt_last_ip_init(&lip);
	size_t pos = 0;
	for (int k = 0; k < PSBP_MAX_PKTS; k++) {
		struct hwt_pt_packet pkt;
		int sz = hwt_pt_pkt_parse(p + pos, n - pos, &pkt);
		if (sz == HWT_ERR_EOS)
			return HWT_ERR_EOS;
		if (sz <= 0 || pkt.type == HWT_PKT_PSBEND)
			return 0;
		pos += (size_t)sz;
		if (pkt.type == HWT_PKT_FUP)
			return !hwt_pt_last_ip_update(&lip, pkt.u.ip.ipc, pkt.u.ip.ip) &&
			       !hwt_pt_last_ip_query(&lip, ip);
	}
	return 0;
}

/* Is there a PSB at p (the last 16 bytes of a run of 02 82 pairs, as
 * pt_find_psb sees it; end: the readable end)? */
static int psb_at(const uint8_t *p, const uint8_t *end)
{
	if (memcmp(p, hwt_pt_psb_pat, sizeof(hwt_pt_psb_pat)))
		return 0;
	return end - p < 18 || p[16] != 0x02 || p[17] != 0x82;
}

/* The end of a run of short TNTs (even bytes from 04) in [pos, cut):
 * eight bytes a step (a byte ends the run where its bit 0 is set or its
 * bits 2-7 are clear: both put in its bit 7), then byte by byte. */
static size_t tnt_run_end(const uint8_t *data, size_t pos, size_t cut)
{
	const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull,
		       m7 = 0x7f7f7f7f7f7f7f7full;
	for (; cut - pos >= 8; pos += 8) {
		uint64_t w;
		memcpy(&w, data + pos, 8);
		w = le64toh(w);
		uint64_t x = w & 0xfcfcfcfcfcfcfcfcull;
		uint64_t small = ~(((x & m7) + m7) | x) & hi; /* bits 2-7 clear */
		uint64_t end = ((w & lo) << 7) | small;
		if (end)
			return pos + (size_t)__builtin_ctzll(end) / 8;
	}
	while (pos < cut && !(data[pos] & 1) && data[pos] >= 4)
		pos++;
	return pos;
}

size_t pt_stop_from(const uint8_t *data, size_t cut)
{
	const size_t w = sizeof(hwt_pt_psb_pat);
	size_t end = cut, lim = cut > PT_STOP_SCAN ? cut - PT_STOP_SCAN : 0;
	while (end > w) {
		/* the last PSB before end: a packet boundary to parse from */
		size_t s = end - w;
		while (s > lim && !(data[s] == 0x02 && psb_at(data + s, data + cut))) {
			const uint8_t *b = memrchr(data + lim, 0x02, s - lim);
			s = b ? (size_t)(b - data) : lim;
		}
		if (!(data[s] == 0x02 && psb_at(data + s, data + cut)))
			return 0;
		size_t pos = s, last = 0;
		while (pos < cut) {
			/* a run of short TNTs (even bytes from 04: 00 is a PAD, 02
			 * an extended opcode), most of a TNT-dense trace */
			if (!(data[pos] & 1) && data[pos] >= 4) {
				pos = tnt_run_end(data, pos + 1, cut);
				last = pos;
				continue;
			}
			struct hwt_pt_packet pkt;
			int sz = hwt_pt_pkt_parse(data + pos, cut - pos, &pkt);
			if (sz <= 0 || pkt.type == HWT_PKT_BBP)
				return 0; /* (block items need their context) */
			pos += (size_t)sz;
			switch (pkt.type) {
			case HWT_PKT_TNT8:
			case HWT_PKT_TNT64:
			case HWT_PKT_TIP:
			case HWT_PKT_TIP_PGE:
			case HWT_PKT_TIP_PGD:
				last = pos;
				break;
			default:
				break;
			}
		}
		if (pos != cut)
			return 0;
		if (last)
			return last;
		end = s; /* none since that PSB: look before it */
	}
	return 0;
}

/* Does the previous instruction fall through to ip? */
static int falls_through(struct pt *e, uint64_t ip)
{
	if (e->prev_end)
		return ip == e->prev_end;
	uint64_t d = ip - e->prev_ip; /* size unknown: close enough */
	return d && d <= 15;
}

/* ---------------- delivery ---------------- */
static void ev_convert(struct hwt_dec_event *o, const struct hwt_pt_event *ev)
{
	memset(o, 0, sizeof(*o));
	o->format = HWT_PERF_AUXTRACE_INTEL_PT;
	o->raw = ev;
	o->ip_suppressed = ev->ip_suppressed;
	o->status_update = ev->status_update;
	o->ip = ev->ip;
	switch (ev->type) {
	case HWT_EV_ENABLED:
		o->type = HWT_DEV_ENABLED;
		break;
	case HWT_EV_DISABLED:
		o->type = HWT_DEV_DISABLED;
		break;
	case HWT_EV_ASYNC_DISABLED:
		o->type = HWT_DEV_ASYNC_DISABLED;
		o->ip = ev->u.async_disabled.at;
		break;
	case HWT_EV_ASYNC_BRANCH:
		o->type = HWT_DEV_ASYNC;
		o->from = ev->u.async_branch.from;
		break;
	case HWT_EV_EXEC_MODE:
		o->type = HWT_DEV_MODE;
		o->mode = ev->u.exec_mode.mode;
		break;
	case HWT_EV_OVERFLOW:
		o->type = HWT_DEV_OVERFLOW;
		break;
	default:
		o->type = HWT_DEV_OTHER;
		break;
	}
}

/* ---- output: to the consumer (taken branches gathered into arrays for
 * its branches callback, delivered before anything else), or, in a
 * worker of the parallel decode, into the job's output (pt_par.c) */
void pt_out_flush(struct pt *e)
{
	if (e->nrb) {
		e->c->ranges(e->c->arg, e->th, e->rb, e->nrb, e->img);
		e->nrb = 0;
	}
	if (e->nbb) {
		e->c->branches(e->c->arg, e->th, e->bb, e->nbb, e->img);
		e->nbb = 0;
	}
}

static void out_branch(struct pt *e, uint64_t from, uint64_t to, int kind, int have_time,
		       uint64_t t)
{
	struct hwt_dec_branch *b;
	if (e->cap) {
		if (!pt_cap_room(e->cap, &b))
			return;
		e->cap->tail->n++;
		e->cap->nbr++;
	} else if (e->c->branches) {
		if (!e->bb && !(e->bb = malloc(PT_BB_CAP * sizeof(*e->bb)))) {
			struct hwt_dec_branch one = {from, to, (uint8_t)kind, (uint8_t)have_time,
						     t};
			e->c->branches(e->c->arg, e->th, &one, 1, e->img);
			return;
		}
		if (e->nbb == PT_BB_CAP)
			pt_out_flush(e);
		b = &e->bb[e->nbb++];
	} else {
		hwt_dec_emit_branch(e->dec, e->th, from, to, kind, e->img, have_time, t);
		return;
	}
	b->from = from;
	b->to = to;
	b->kind = (uint8_t)kind;
	b->have_time = (uint8_t)have_time;
	b->time_ns = t;
}

void pt_out_insn(struct pt *e, const struct hwt_dec_insn *in, int have_time, uint64_t t)
{
	if (e->cap) {
		struct pt_item *it = pt_cap_item(e, P_INSN);
		if (it) {
			it->have_time = (uint8_t)have_time;
			it->time = t;
			it->u.in = *in;
		}
		return;
	}
	pt_out_flush(e);
	hwt_dec_emit_insn(e->dec, e->th, in, e->img, have_time, t);
}

void pt_out_gap(struct pt *e, uint64_t off, uint64_t ip, int err)
{
	if (e->cap) {
		struct pt_item *it = pt_cap_item(e, P_GAP);
		if (it) {
			it->err = err;
			it->u.gap.off = off;
			it->u.gap.ip = ip;
		}
		return;
	}
	pt_out_flush(e);
	hwt_dec_emit_gap(e->dec, e->th, off, ip, err);
}

void pt_out_event(struct pt *e, const struct hwt_pt_event *ev, int have_time, uint64_t t)
{
	if (e->cap) {
		pt_cap_event(e, ev, have_time, t);
		return;
	}
	pt_out_flush(e);
	struct hwt_dec_event o;
	ev_convert(&o, ev);
	o.have_time = (uint8_t)have_time;
	o.time_ns = t;
	e->c->event(e->c->arg, e->th, &o);
}

void pt_out_branch(struct pt *e, uint64_t from, uint64_t to, int kind, int have_time, uint64_t t)
{
	out_branch(e, from, to, kind, have_time, t);
}

/* A finished range to the consumer's array (or the worker's output). */
static void out_range(struct pt *e, const struct hwt_dec_range *r)
{
	if (e->cap) {
		struct hwt_dec_range *o = pt_cap_range(e);
		if (o)
			*o = *r;
		return;
	}
	if (!e->rb && !(e->rb = malloc(PT_RB_CAP * sizeof(*e->rb)))) {
		e->c->ranges(e->c->arg, e->th, r, 1, e->img);
		return;
	}
	if (e->nrb == PT_RB_CAP)
		pt_out_flush(e);
	e->rb[e->nrb++] = *r;
}

static void deliver_event(struct pt *e, const struct hwt_pt_event *ev, int have_time, uint64_t t)
{
	pt_out_event(e, ev, have_time, t);
}

/* Output goes straight to the consumer, or, in a region that ends at a
 * PSB, from each visit of that PSB's IP on into the pending list: flushed
 * when the IP comes again (or an event or gap shows the flow went on),
 * dropped at the end of the region (the next region decodes it). */
static struct pt_item *pend_new(struct pt *e)
{
	if (e->npend == e->cappend) {
		size_t nc = e->cappend ? 2 * e->cappend : 1024;
		struct pt_item *nv = nc <= (1u << 22) ? realloc(e->pend, nc * sizeof(*nv)) : NULL;
		if (!nv)
			return NULL;
		e->pend = nv;
		e->cappend = nc;
	}
	return &e->pend[e->npend++];
}

static inline void rg_close(struct pt *e);

static void flush_pending(struct pt *e)
{
	const struct hwt_decode_consumer *c = e->c;
	if (e->have_rcur)
		rg_close(e);
	for (size_t i = 0; i < e->npend; i++) {
		const struct pt_item *p = &e->pend[i];
		if (p->what == P_RANGE) {
			out_range(e, &e->prg[p->u.ev]);
		} else if (p->what == P_BRANCH) {
			out_branch(e, p->u.br.from, p->u.br.to, p->kind, p->have_time, p->time);
		} else if (p->what == P_EVENT) {
			deliver_event(e, &e->pevs[p->u.ev], p->have_time, p->time);
		} else if (c->insn) {
			pt_out_insn(e, &p->u.in, p->have_time, p->time);
		}
	}
	e->npend = 0;
	e->npevs = 0;
	e->nprg = 0;
	e->pend_active = 0;
}

/* Room for one more of n elements of size elem held back in *arr (of
 * *cap; first: the first capacity, at most 2^20): 1, or 0 when it cannot
 * grow (the caller then delivers what it holds and goes on unheld). */
static int pend_room(void **arr, size_t *cap, size_t n, size_t elem, size_t first)
{
	if (n < *cap)
		return 1;
	size_t nc = *cap ? 2 * *cap : first;
	void *nv = nc <= (1u << 20) ? realloc(*arr, nc * elem) : NULL;
	if (!nv)
		return 0;
	*arr = nv;
	*cap = nc;
	return 1;
}

/* ---- ranges (consumers of ranges): the instructions go into the range
 * being built (rcur) while they follow one another at one time; a taken
 * branch ends it; a finished range goes out, or into the pending list */
static void rg_put(struct pt *e, const struct hwt_dec_range *r)
{
	if (e->pend_active) {
		struct pt_item *p =
		    pend_room((void **)&e->prg, &e->capprg, e->nprg, sizeof(*e->prg), 256)
			? pend_new(e)
			: NULL;
		if (p) {
			p->what = P_RANGE;
			p->u.ev = e->nprg;
			e->prg[e->nprg++] = *r;
			return;
		}
		flush_pending(e);
		e->pend_overflow = 1;
	}
	out_range(e, r);
}

static inline void rg_close(struct pt *e)
{
	if (!e->have_rcur)
		return;
	e->have_rcur = 0;
	if (!e->pend_active && !e->cap && e->rb && e->nrb < PT_RB_CAP)
		e->rb[e->nrb++] = e->rcur; /* (out_range's common case) */
	else
		rg_put(e, &e->rcur);
}

/* n instructions from ip on, in sequence, the last at last (its end:
 * end), all at one time; cls: the last one's class. */
static inline void rg_add(struct pt *e, uint64_t ip, uint64_t last, uint64_t end, uint32_t n,
			  int cls, int mode, int have_time, uint64_t t)
{
	struct hwt_dec_range *c = &e->rcur;
	if (!have_time)
		t = 0;
	if (e->have_rcur && c->kind == HWT_DEC_NO_BRANCH && ip == c->end &&
	    c->have_time == have_time && c->time_ns == t && c->mode == mode &&
	    (c->iclass == HWT_INSN_OTHER || c->iclass == HWT_INSN_JCC)) {
		c->last = last;
		c->end = end;
		c->n += n;
		c->iclass = (uint8_t)cls;
		return;
	}
	rg_close(e);
	c->ip = ip;
	c->last = last;
	c->end = end;
	c->n = n;
	c->have_time = (uint8_t)have_time;
	c->time_ns = t;
	c->iclass = (uint8_t)cls;
	c->mode = (uint8_t)mode;
	c->kind = HWT_DEC_NO_BRANCH;
	c->from = c->to = c->br_time_ns = 0;
	c->br_have_time = 0;
	e->have_rcur = 1;
}

/* A taken branch: it ends the range being built (or comes alone). */
static void rg_branch(struct pt *e, uint64_t from, uint64_t to, int kind, int have_time, uint64_t t)
{
	struct hwt_dec_range *c = &e->rcur;
	if (!e->have_rcur || c->kind != HWT_DEC_NO_BRANCH) {
		rg_close(e);
		memset(c, 0, sizeof(*c));
	}
	c->from = from;
	c->to = to;
	c->kind = (uint8_t)kind;
	c->br_have_time = (uint8_t)have_time;
	c->br_time_ns = have_time ? t : 0;
	e->have_rcur = 1;
	rg_close(e);
}

static void emit_branch(struct pt *e, uint64_t from, uint64_t to, int kind, int have_time,
			uint64_t t)
{
	if (e->rmode) {
		rg_branch(e, from, to, kind, have_time, t);
		return;
	}
	if (e->pend_active) {
		struct pt_item *p = pend_new(e);
		if (p) {
			p->what = P_BRANCH;
			p->kind = (uint8_t)kind;
			p->have_time = (uint8_t)have_time;
			p->time = t;
			p->u.br.from = from;
			p->u.br.to = to;
			return;
		}
		flush_pending(e);
		e->pend_overflow = 1;
	}
	out_branch(e, from, to, kind, have_time, t);
}

static void emit_event(struct pt *e, const struct hwt_pt_event *ev)
{
	int have_time = ev->has_tsc;
	uint64_t t = have_time ? pt_tsc_to_ns(e, ev->tsc) : 0;
	if (e->have_rcur)
		rg_close(e);
	if (e->pend_active) {
		struct pt_item *p =
		    pend_room((void **)&e->pevs, &e->cappevs, e->npevs, sizeof(*e->pevs), 64)
			? pend_new(e)
			: NULL;
		if (p) {
			p->what = P_EVENT;
			p->have_time = (uint8_t)have_time;
			p->time = t;
			p->u.ev = e->npevs;
			e->pevs[e->npevs++] = *ev;
			return;
		}
		flush_pending(e);
		e->pend_overflow = 1;
	}
	deliver_event(e, ev, have_time, t);
}

static void on_insn(struct pt *e, const struct hwt_dec_insn *in, int have_time, uint64_t t)
{
	int at_stop = e->holding && in->ip == e->stop_ip && !e->pend_overflow;
	if (e->have_prev && hwt_insn_is_branch(e->prev_class)) {
		/* a taken branch into in: unconditional ones always; a jcc or a
		 * far transfer (syscall round trip) that lands on the next
		 * instruction was not taken / is not a branch of the flow */
		int fall = in->ip == e->prev_end;
		int taken =
		    e->prev_class == HWT_INSN_JCC || hwt_insn_is_far(e->prev_class) ? !fall : 1;
		if (taken) {
			if (at_stop) /* it happened before the PSB: this region's */
				flush_pending(e);
			emit_branch(e, e->prev_ip, in->ip, hwt_branch_kind_of(e->prev_class),
				    have_time, t);
		}
	}
	if (at_stop) {
		flush_pending(e);
		e->pend_active = 1;
	}
	e->prev_ip = in->ip;
	e->prev_end = in->ip + in->size;
	e->prev_class = in->iclass;
	e->have_prev = 1;
	if (e->rmode) {
		rg_add(e, in->ip, in->ip, in->ip + in->size, 1, in->iclass, in->mode, have_time, t);
		return;
	}
	if (!e->c->insn)
		return;
	if (e->pend_active) {
		struct pt_item *p = pend_new(e);
		if (p) {
			p->what = P_INSN;
			p->have_time = (uint8_t)have_time;
			p->time = t;
			p->u.in = *in;
			return;
		}
		flush_pending(e);
		e->pend_overflow = 1;
	}
	pt_out_insn(e, in, have_time, t);
}

/* One instruction of a block (the general case of on_block). */
static void block_ip(struct pt *e, uint64_t ip, unsigned size, int cls, int mode, int have_time,
		     uint64_t t)
{
	int at_stop = e->holding && ip == e->stop_ip && !e->pend_overflow;
	if (e->have_prev && hwt_insn_is_branch(e->prev_class)) {
		int taken = e->prev_class == HWT_INSN_JCC || hwt_insn_is_far(e->prev_class)
				? !falls_through(e, ip)
				: 1;
		if (taken) {
			if (at_stop)
				flush_pending(e);
			emit_branch(e, e->prev_ip, ip, hwt_branch_kind_of(e->prev_class), have_time,
				    t);
		}
	}
	if (at_stop) {
		flush_pending(e);
		e->pend_active = 1;
	}
	e->prev_ip = ip;
	e->prev_end = ip + size;
	e->prev_mode = mode;
	e->prev_class = cls;
	e->have_prev = 1;
}

/* A block of n instructions.  With end_on_call and end_on_jump set, the
 * block decoder ends a block at every branch, so its instructions are in
 * sequence and only its first one can be a branch target; the stop ip of
 * a held region inside the block needs a look at each instruction.
 * Times as the instruction decoder gives them (the time after each
 * instruction executed): tb, from before the block, for the instructions
 * that need no trace (all but the last); ta, from after it, for the last. */
static void on_block(struct pt *e, const struct hwt_pt_block *b, uint32_t n, int last_class, int hb,
		     uint64_t tb, int ha, uint64_t ta)
{
	if (!n)
		return;
	const uint64_t *ips = b->ips;
	const uint8_t *sz = b->sizes;
	uint64_t stop = e->holding && !e->pend_overflow ? e->stop_ip : 0;
	if (n == 1) {
		block_ip(e, ips[0], sz[0], last_class, b->mode, ha, ta);
	} else if (stop > ips[0] && stop <= ips[n - 1]) {
		for (uint32_t i = 0; i < n; i++) {
			int last = i + 1 == n;
			block_ip(e, ips[i], sz[i], last ? last_class : HWT_INSN_OTHER, b->mode,
				 last ? ha : hb, last ? ta : tb);
		}
	} else {
		block_ip(e, ips[0], sz[0], HWT_INSN_OTHER, b->mode, hb, tb);
		e->prev_ip = ips[n - 1];
		e->prev_end = ips[n - 1] + sz[n - 1];
	}
	e->prev_class = last_class;
}

/* A block's instructions one by one, for consumers of instructions that
 * need no raw bytes (no HWT_DEC_WANT_RAW): as the instruction decoder
 * would give them (times as for on_block; only the last one has a
 * branch class). */
static void block_insns(struct pt *e, const struct hwt_pt_block *b, uint32_t n, int last_class,
			int hb, uint64_t tb, int ha, uint64_t ta)
{
	struct hwt_dec_insn in;
	memset(&in, 0, sizeof(in));
	in.mode = b->mode;
	in.speculative = b->speculative;
	for (uint32_t i = 0; i < n; i++) {
		int last = i + 1 == n;
		in.ip = b->ips[i];
		in.size = b->sizes[i];
		in.iclass = (uint8_t)(last ? last_class : HWT_INSN_OTHER);
		in.truncated = (uint8_t)(last ? b->truncated : 0);
		on_insn(e, &in, last ? ha : hb, last ? ta : tb);
	}
}

/* A block as ranges (consumers of ranges): its instructions are in
 * sequence (blocks end at every branch); the first and the last go
 * through on_insn (a branch into the block, the stop ip, the last one's
 * time and class), the ones between at once. */
static void block_ranges(struct pt *e, const struct hwt_pt_block *b, uint32_t n, int last_class,
			 int hb, uint64_t tb, int ha, uint64_t ta)
{
	const uint64_t *ips = b->ips;
	const uint8_t *sz = b->sizes;
	uint64_t stop = e->holding && !e->pend_overflow ? e->stop_ip : 0;
	if (n <= 2 || (stop > ips[0] && stop <= ips[n - 1])) {
		block_insns(e, b, n, last_class, hb, tb, ha, ta);
		return;
	}
	struct hwt_dec_insn in;
	memset(&in, 0, sizeof(in));
	in.mode = b->mode;
	in.speculative = b->speculative;
	in.ip = ips[0];
	in.size = sz[0];
	on_insn(e, &in, hb, tb);
	uint64_t pl = ips[n - 2], pe = pl + sz[n - 2];
	rg_add(e, ips[1], pl, pe, n - 2, HWT_INSN_OTHER, b->mode, hb, tb);
	e->prev_ip = pl;
	e->prev_end = pe;
	e->prev_class = HWT_INSN_OTHER;
	in.ip = ips[n - 1];
	in.size = sz[n - 1];
	in.iclass = (uint8_t)last_class;
	in.truncated = b->truncated;
	on_insn(e, &in, ha, ta);
}

/* Per-CPU: the thread that runs at time t (the engine's timeline of the
 * queue's CPU). */
static void thread_for_time(struct pt *e, int have_time, uint64_t t)
{
	struct hwt_dec_queue *q = e->q;
	if (!q->per_cpu || !have_time)
		return;
	uint32_t tid = hwt_dec_cpu_tid_at(e->dec, q->cpu, t, &e->pq->cur);
	if (tid == (uint32_t)-1 || (e->th && e->th->tid == tid))
		return;
	struct hwt_dec_thread *th = hwt_dec_thread_get(e->dec, tid, (uint32_t)-1);
	if (th && th != e->th) {
		flush_pending(e);
		pt_out_flush(e);
		e->have_prev = 0;
		e->have_async_at = 0;
		e->th = th;
	}
}

/* The decoder's verbs, block or instruction decoder. */
static void d_offset(const struct pt *e, uint64_t *off)
{
	if (e->bd)
		hwt_pt_block_offset(e->bd, off);
	else
		hwt_pt_insn_offset(e->d, off);
}

static int d_sync(struct pt *e)
{
	return e->bd ? hwt_pt_block_sync_forward(e->bd) : hwt_pt_insn_sync_forward(e->d);
}

static int d_event(struct pt *e, struct hwt_pt_event *ev)
{
	return e->bd ? hwt_pt_block_event(e->bd, ev) : hwt_pt_insn_event(e->d, ev);
}

static void gap(struct pt *e, uint64_t base, int err)
{
	uint64_t off = 0;
	d_offset(e, &off);
	flush_pending(e);
	pt_out_gap(e, base + off, e->bd ? hwt_pt_block_ip(e->bd) : hwt_pt_insn_ip(e->d), err);
	e->have_prev = 0;
	e->have_async_at = 0;
}

/* An asynchronous event at ip (its FUP): the instruction at ip did not
 * execute, so a branch into it (the last instruction seen was a taken
 * branch) is reported here, not at ip's instruction. */
static void branch_into(struct pt *e, uint64_t ip, int have_time, uint64_t t)
{
	if (!e->have_prev || !hwt_insn_is_branch(e->prev_class))
		return;
	int taken = e->prev_class == HWT_INSN_JCC || hwt_insn_is_far(e->prev_class)
			? !falls_through(e, ip)
			: 1;
	if (taken)
		emit_branch(e, e->prev_ip, ip, hwt_branch_kind_of(e->prev_class), have_time, t);
	e->have_prev = 0;
}

static void handle_event(struct pt *e, const struct hwt_pt_event *ev, int have_time, uint64_t t)
{
	if (ev->type == HWT_EV_ASYNC_BRANCH && !ev->ip_suppressed)
		branch_into(e, ev->u.async_branch.from, have_time, t);
	else if (ev->type == HWT_EV_ASYNC_DISABLED) /* at is the FUP's: known */
		branch_into(e, ev->u.async_disabled.at, have_time, t);
	if (e->c->event)
		emit_event(e, ev);
	int async_at = e->have_async_at;
	switch (ev->type) {
	case HWT_EV_ASYNC_BRANCH:
		e->have_async_at = 0;
		flush_pending(e);
		if (!ev->ip_suppressed)
			emit_branch(e, ev->u.async_branch.from, ev->ip, HWT_BR_ASYNC, have_time, t);
		e->have_prev = 0;
		break;
	case HWT_EV_ASYNC_DISABLED:
		/* user-only tracing: the signal handler (or the kernel's return
		 * elsewhere) shows as the next enable at another ip */
		e->have_async_at = 1;
		e->async_at = ev->u.async_disabled.at;
		e->have_prev = 0;
		break;
	case HWT_EV_ENABLED:
		if (async_at && !ev->ip_suppressed && ev->ip != e->async_at)
			emit_branch(e, e->async_at, ev->ip, HWT_BR_ASYNC, have_time, t);
		e->have_async_at = 0;
		e->have_prev = 0;
		break;
	case HWT_EV_DISABLED:
	case HWT_EV_OVERFLOW:
	case HWT_EV_TSX:
	case HWT_EV_STOP:
		e->have_async_at = 0;
		e->have_prev = 0;
		break;
	default:
		break;
	}
}

/* The block decoder's time now, in ns: 1 and *t, or 0 if unknown. */
static int blk_time(struct pt *e, uint64_t *t)
{
	uint64_t tsc;
	uint32_t lm, lc;
	if (hwt_pt_block_time(e->bd, &tsc, &lm, &lc) < 0)
		return 0;
	*t = pt_tsc_to_ns(e, tsc);
	return 1;
}

/* The region's thread, process and image: of the queue's thread, or of
 * every process (per-CPU).  Engine calls: the main thread only.  0 or -1. */
int pt_region_resolve(struct pt *e, struct hwt_dec_queue *q)
{
	e->q = q;
	e->pq = q->fmt;
	e->th = hwt_dec_thread_get(e->dec, q->tid, (uint32_t)-1);
	if (!e->th)
		return -1;
	struct hwt_process *p;
	if (q->per_cpu) {
		p = hwt_dec_all_processes(e->dec);
		thread_for_time(e, e->have_rtime, e->rtime);
	} else {
		p = hwt_dec_process_get(e->dec, e->th->pid);
	}
	if (!p)
		return -1;
	e->img = hwt_process_image(p, NULL);
	if (!e->img)
		return -1;
	e->rproc = p;
	e->rgen = hwt_process_generation(p);
	e->repoch = hwt_dec_process_epoch(e->dec);
	return 0;
}

/* Set up the region's decoder (a worker of the parallel decode has the
 * region resolved already).  0 or -1. */
static int region_start(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n)
{
	if (!e->cap && !e->par_state && pt_region_resolve(e, q))
		return -1;
	struct hwt_pt_config cfg = e->cfg;
	cfg.buf.begin = data;
	cfg.buf.end = data + n;
	cfg.buf.begin2 = cfg.buf.end2 = NULL;
	struct hwt_pt_flow_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	opt.query.size = sizeof(opt.query);
	opt.no_path_cache = (uint8_t) !!(e->dflags & HWT_DECODER_NO_PATH_CACHE);
	/* Branches only: blocks (one decoder call per block; per-CPU needs
	 * the time at every instruction for the thread that runs).  The
	 * decode cache belongs to the image of one process generation. */
	int blk = (!e->c->insn || !(e->c->flags & HWT_DEC_WANT_RAW)) && !q->per_cpu;
	if (!e->pc)
		e->pc = hwt_pt_cache_alloc(); /* NULL: each decoder has its own */
	if (e->pc && (e->pc_img != e->img || e->pc_proc != e->rproc || e->pc_gen != e->rgen ||
		      e->pc_epoch != e->repoch)) {
		hwt_pt_cache_clear(e->pc);
		e->pc_img = e->img;
		e->pc_proc = e->rproc;
		e->pc_gen = e->rgen;
		e->pc_epoch = e->repoch;
	}
	opt.cache = e->pc;
	/* region_batch without times: no time tracking (the output is the
	 * same; the block loop of --no-batch keeps it, as the reference) */
	int want_time = (e->c->flags & HWT_DEC_WANT_TIME) || q->per_cpu;
	opt.query.no_time = (uint8_t)(blk && !want_time && !e->c->insn && !e->c->event &&
				      !(e->dflags & HWT_DECODER_NO_BATCH));
	if (blk) {
		opt.end_on_call = 1;
		opt.end_on_jump = 1;
		e->bd = hwt_pt_block_alloc(&cfg, e->img, &opt);
	} else {
		e->d = hwt_pt_insn_alloc(&cfg, e->img, &opt);
	}
	if (!e->d && !e->bd) {
		if (!e->cap)
			hwt_dec_set_err(e->dec,
					"cannot allocate an Intel PT decoder (out of memory)");
		e->nomem = 1;
		return -1;
	}
	return 0;
}

/* Is ev an asynchronous transfer whose FUP says where the flow stood (a
 * branch into that ip did not reach its target's instruction)?  1 and
 * *at, as handle_event's branch_into sees it. */
static int batch_async_at(const struct hwt_pt_event *ev, uint64_t *at)
{
	if (ev->type == HWT_EV_ASYNC_BRANCH && !ev->ip_suppressed) {
		*at = ev->u.async_branch.from;
		return 1;
	}
	if (ev->type == HWT_EV_ASYNC_DISABLED) {
		*at = ev->u.async_disabled.at;
		return 1;
	}
	return 0;
}

/* An entry's time in ns (the conversion of the tsc before it reused). */
struct bt_ns {
	uint64_t tsc, ns;
};

static inline uint64_t ent_ns(const struct pt *e, struct bt_ns *c, uint64_t tsc)
{
	if (tsc != c->tsc) {
		c->tsc = tsc;
		c->ns = pt_tsc_to_ns(e, tsc);
	}
	return c->ns;
}

/* The region in batches (hwt_pt_block_batch), for consumers of taken
 * branches alone (no instructions or events): the output is what the
 * block loop of pt_decode_region gives.  That loop derives a branch
 * when the instruction at its target comes, so a batch's branch is held
 * (tentative) until an entry counts an instruction after it, or the
 * stop ip is visited (HWT_PTE_STOP), and is dropped by a gap or an event
 * that breaks the flow; the batch goes on past the end of the trace as
 * the block loop does.
 * Times (want_time): the loop gives a branch the time before its
 * target's block, or after it when that block is one instruction
 * (on_block).  With time entries (HWT_PTE_TIME), the time before a block
 * is the last entry's (ph/pns), and the time after a block of one
 * instruction is that of the branch or time entry that counts just that
 * instruction (any other entry that counts one finds the time unmoved:
 * an event's or the end's own time is the one after them, and an error's
 * block counts as before it).  Events bind the time of their group (the
 * events taken between two blocks: the loop's have_time/t) to the
 * branches and async rows they make. */
/* One branch of region_batch's output. */
static inline void put_dec_branch(struct hwt_dec_branch *o, uint64_t from, uint64_t to, int kind,
				  int have_time, uint64_t time_ns)
{
	o->from = from;
	o->to = to;
	o->kind = (uint8_t)kind;
	o->have_time = (uint8_t)have_time;
	o->time_ns = time_ns;
}

static void region_batch(struct pt *e, const uint8_t *data, size_t n, uint64_t base, int want_time)
{
	struct hwt_pt_entry ent[PT_BATCH];
	struct hwt_pt_event evs[PT_BATCH_EVENTS];
	struct hwt_pt_batch b;
	hwt_pt_batch_init(&b, ent, PT_BATCH, evs, PT_BATCH_EVENTS);
	b.past_end = 1;
	b.want_time = (uint8_t)want_time;
	b.time_entries = (uint8_t)want_time;
	b.stop_ip = e->stop_ip;
	if (e->holding && e->ext < n)
		b.stop_from = pt_stop_from(data, n - e->ext);
	int tent = 0, tk = 0;
	uint64_t tf = 0, tt = 0, at = 0;
	/* times: of the last entry (ph, pns), of the event group (gh, gns) */
	int ph = 0, gh = 0, in_group = 0;
	uint64_t pns = 0, gns = 0;
	struct bt_ns cv = {0, pt_tsc_to_ns(e, 0)};
	e->have_prev = 1; /* handle_event clears it where the flow breaks */
	for (;;) {
		b.have_stop = (uint8_t)(e->holding && !e->pend_overflow);
		int st = hwt_pt_block_batch(e->bd, &b);
		if (st < 0)
			break;
		for (size_t i = 0; i < b.n; i++) {
			/* runs of branches while nothing is held back: straight
			 * into the output array (out_branch's common case) */
			size_t room = 0, k = 0;
			struct hwt_dec_branch *o = NULL;
			if (e->pend_active || ent[i].type != HWT_PTE_BRANCH) {
			} else if (e->cap) {
				room = pt_cap_room(e->cap, &o);
			} else if (e->bb) {
				if (e->nbb == PT_BB_CAP)
					pt_out_flush(e);
				o = e->bb + e->nbb;
				room = PT_BB_CAP - e->nbb;
			}
			if (!want_time) {
				/* (at most one output a branch: room entries
				 * cannot overflow o) */
				size_t end = b.n - i < room ? b.n : i + room;
				if (!tent && i < end && ent[i].type == HWT_PTE_BRANCH) {
					tent = 1;
					tf = ent[i].from;
					tt = ent[i].to;
					tk = e->kinds[ent[i].iclass];
					i++;
				}
				if (i < end) {
					/* the held branch is written always and
					 * kept when x counts instructions (tent):
					 * no jump on it */
					struct hwt_dec_branch *w = o;
					for (; i < end && ent[i].type == HWT_PTE_BRANCH; i++) {
						const struct hwt_pt_entry *x = &ent[i];
						put_dec_branch(w, tf, tt, tk, 0, 0);
						w += x->ninsn != 0;
						tf = x->from;
						tt = x->to;
						tk = e->kinds[x->iclass];
					}
					k = (size_t)(w - o);
				}
			} else {
				for (; i < b.n && k < room && ent[i].type == HWT_PTE_BRANCH; i++) {
					const struct hwt_pt_entry *x = &ent[i];
					uint64_t xns = x->has_time ? ent_ns(e, &cv, x->tsc) : 0;
					if (x->ninsn)
						in_group = 0;
					if (tent &&
					    x->ninsn) /* (one instruction: the time after it) */
						put_dec_branch(&o[k++], tf, tt, tk,
							       x->ninsn == 1 ? x->has_time : ph,
							       x->ninsn == 1 ? xns : pns);
					ph = x->has_time;
					pns = xns;
					tent = 1;
					tf = x->from;
					tt = x->to;
					tk = e->kinds[x->iclass];
				}
			}
			if (e->cap) {
				if (k) {
					e->cap->tail->n += k;
					e->cap->nbr += k;
				}
			} else {
				e->nbb += k;
			}
			if (i == b.n)
				break;
			const struct hwt_pt_entry *x = &ent[i];
			if (x->type == HWT_PTE_STOP) {
				int at_stop = e->holding && !e->pend_overflow;
				in_group = 0;
				if (tent) {
					if (at_stop)
						flush_pending(e);
					emit_branch(e, tf, tt, tk, ph, pns);
					tent = 0;
				}
				if (at_stop) {
					flush_pending(e);
					e->pend_active = 1;
				}
				continue;
			}
			int xh = want_time && x->has_time;
			uint64_t xns = xh ? ent_ns(e, &cv, x->tsc) : 0;
			if (tent && x->ninsn) {
				if (x->ninsn == 1 &&
				    (x->type == HWT_PTE_BRANCH || x->type == HWT_PTE_TIME))
					emit_branch(e, tf, tt, tk, xh, xns);
				else
					emit_branch(e, tf, tt, tk, ph, pns);
				tent = 0;
			}
			if (want_time) {
				ph = xh;
				pns = xns;
			}
			/* the events of one group: no block between them (a
			 * branch without instructions is one held back for an
			 * event of the group) */
			if (x->ninsn || (x->type != HWT_PTE_EVENT && x->type != HWT_PTE_BRANCH))
				in_group = 0;
			switch (x->type) {
			case HWT_PTE_BRANCH:
				tent = 1;
				tf = x->from;
				tt = x->to;
				tk = e->kinds[x->iclass];
				break;
			case HWT_PTE_EVENT: {
				const struct hwt_pt_event *ev = &evs[x->index];
				if (!in_group) {
					in_group = 1;
					gh = 0;
					gns = 0;
				}
				if (want_time && ev->has_tsc) {
					gh = 1;
					gns = pt_tsc_to_ns(e, ev->tsc);
				}
				if (tent && batch_async_at(ev, &at)) {
					/* the branch into an asynchronous event: the
					 * instruction at its target did not execute,
					 * the block loop reports it here (branch_into) */
					emit_branch(e, tf, at, tk, gh, gns);
					tent = 0;
				}
				handle_event(e, ev, gh, gns);
				if (!e->have_prev)
					tent = 0; /* the flow broke */
				e->have_prev = 1;
				break;
			}
			case HWT_PTE_ERROR:
				tent = 0;
				flush_pending(e);
				pt_out_gap(e, base + x->to, x->from, x->err);
				break;
			case HWT_PTE_TIME:
				break;
			default: /* HWT_PTE_END */
				tent = 0;
				break;
			}
		}
		if (!st)
			break;
	}
}

/* Decode one region [data, data+n) of queue q whose first byte is at
 * stream offset base.  holding: a PSB follows the region, whose FUP says
 * the flow resumes at stop_ip (what the decoder yields from there on past
 * the end belongs to the next region). */
void pt_decode_region(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n,
		      uint64_t base, int holding, uint64_t stop_ip)
{
	if (!n)
		return;
	int want_time = (e->c->flags & HWT_DEC_WANT_TIME) || q->per_cpu;
	if (region_start(e, q, data, n))
		return;
	e->have_prev = 0;
	e->have_async_at = 0;
	e->npend = 0;
	e->npevs = 0;
	e->nprg = 0;
	e->have_rcur = 0;
	e->pend_overflow = 0;
	e->pend_active = 0;
	e->holding = holding;
	e->stop_ip = stop_ip;
	if (e->bd && !e->c->insn && !e->c->event && !e->rmode &&
	    !(e->dflags & HWT_DECODER_NO_BATCH)) {
		region_batch(e, data, n, base, want_time);
		goto done;
	}
	uint64_t last_err_off = UINT64_MAX;
	int same_err = 0;
	/* the time after the last block (kept: the time before the next one
	 * when no event or sync came between) */
	int kept = 0, kh = 0;
	uint64_t kt = 0;
	int st = d_sync(e);
	for (;;) {
		if (st < 0) {
			kept = 0;
			if (st == HWT_ERR_EOS)
				break;
			uint64_t off = 0;
			d_offset(e, &off);
			gap(e, base, st);
			if (off == last_err_off && ++same_err > 4)
				break; /* not moving: give up on this region */
			if (off != last_err_off)
				same_err = 0;
			last_err_off = off;
			st = d_sync(e);
			continue;
		}
		int have_time = 0;
		uint64_t t = 0;
		while (st >= 0 && (st & HWT_PTS_EVENT_PENDING)) {
			struct hwt_pt_event ev;
			st = d_event(e, &ev);
			kept = 0;
			if (st < 0)
				break;
			if (want_time && ev.has_tsc) {
				have_time = 1;
				t = pt_tsc_to_ns(e, ev.tsc);
			}
			handle_event(e, &ev, have_time, t);
		}
		if (st < 0)
			continue;
		/* Past the end-of-trace flag the decoder still yields the
		 * instructions that need no trace, up to the first that does
		 * (returned with HWT_ERR_EOS): the flow up to the next region's
		 * PSB. */
		if (e->bd) {
			struct hwt_pt_block b;
			int hb = 0, ha = 0;
			uint64_t tb = 0, ta = 0;
			if (want_time) {
				hb = kept ? kh : blk_time(e, &tb);
				tb = kept ? kt : tb;
			}
			st = hwt_pt_block_next(e->bd, &b);
			if (want_time) {
				ha = blk_time(e, &ta);
				kept = 1;
				kh = ha;
				kt = ta;
			}
			/* past the end, the block ends with the first instruction
			 * that needs trace: it was reached (as with insn_next) */
			void (*deliver)(struct pt *, const struct hwt_pt_block *, uint32_t, int,
					int, uint64_t, int, uint64_t) = e->rmode     ? block_ranges
									: e->c->insn ? block_insns
										     : on_block;
			if (st >= 0 || st == HWT_ERR_EOS)
				deliver(e, &b, b.ninsn, b.iclass, hb, tb, ha, ta);
			else if (b.ninsn > 1) /* the last one failed (as with insn_next) */
				deliver(e, &b, b.ninsn - 1, HWT_INSN_JCC, hb, tb, hb, tb);
			continue;
		}
		union {
			struct hwt_pt_insn pt;
			struct hwt_dec_insn dec;
		} in;
		st = hwt_pt_insn_next(e->d, &in.pt);
		if (st < 0 && !(st == HWT_ERR_EOS && in.pt.size))
			continue;
		if (want_time) {
			uint64_t tsc;
			uint32_t lm, lc;
			have_time = hwt_pt_insn_time(e->d, &tsc, &lm, &lc) >= 0;
			t = have_time ? pt_tsc_to_ns(e, tsc) : 0;
			if (q->per_cpu)
				thread_for_time(e, have_time, t);
		}
		struct hwt_dec_insn di;
		memcpy(&di, &in.pt, sizeof(di));
		on_insn(e, &di, have_time, t);
	}
done:
	rg_close(e);
	e->reached_stop = e->pend_active || e->pend_overflow;
	if (!e->holding)
		flush_pending(e);
	pt_out_flush(e);
	e->npend = 0; /* held back: the next region decodes it */
	e->npevs = 0;
	e->nprg = 0;
	e->pend_active = 0;
	hwt_pt_insn_free(e->d);
	e->d = NULL;
	hwt_pt_block_free(e->bd);
	e->bd = NULL;
}

/* ---------------- the ops ---------------- */
/* The decoder's configuration: the CPU (errata) from the CPUID feature;
 * CTC ratio, nominal frequency, MTC frequency (from the intel_pt attr's
 * config) and time conversion from AUXTRACE_INFO. */
static void setup_config(struct pt *e, struct hwt_perf_reader *r)
{
	hwt_pt_config_init(&e->cfg);
	const char *cpuid = r ? hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID) : NULL;
	unsigned fam, model, step = 0;
	if (cpuid && !strncmp(cpuid, "GenuineIntel,", 13) &&
	    sscanf(cpuid + 13, "%u,%u,%u", &fam, &model, &step) >= 2) {
		e->cfg.cpu.vendor = HWT_CPU_INTEL;
		e->cfg.cpu.family = (uint16_t)fam;
		e->cfg.cpu.model = (uint8_t)model;
		e->cfg.cpu.stepping = (uint8_t)step;
		hwt_pt_cpu_errata(&e->cfg.errata, &e->cfg.cpu);
	}
	if (!e->have_info)
		return;
	e->cfg.cpuid_0x15_eax = e->info.tsc_ctc_ratio_d;
	e->cfg.cpuid_0x15_ebx = e->info.tsc_ctc_ratio_n;
	e->cfg.nom_freq = (uint8_t)e->info.max_nonturbo_ratio;
	for (size_t i = 0; r && i < hwt_perf_reader_nr_attrs(r); i++) {
		const struct hwt_perf_attr_info *a = hwt_perf_reader_attr(r, i);
		if (a->attr.type != e->info.pmu_type || !e->info.mtc_freq_bits)
			continue;
		uint64_t m = e->info.mtc_freq_bits;
		e->cfg.mtc_freq = (uint8_t)((a->attr.config & m) >> __builtin_ctzll(m));
	}
	if (e->info.cap_user_time_zero && e->info.time_mult) {
		e->have_conv = 1;
		e->time_shift = e->info.time_shift;
		e->time_mult = e->info.time_mult;
		e->time_zero = e->info.time_zero;
		hwt_dec_set_time_conv(e->dec, e->time_shift, e->time_mult, e->time_zero);
	}
}

static int pt_create(struct hwt_decoder *dec, const uint64_t *priv, size_t npriv, void **state)
{
	struct pt *e = calloc(1, sizeof(*e));
	if (!e)
		return HWT_ERR_NOMEM;
	e->dec = dec;
	e->c = hwt_dec_consumer(dec);
	e->dflags = hwt_dec_flags(dec);
	e->jobs = hwt_dec_jobs(dec);
	e->rmode = e->c->ranges != NULL;
	for (size_t i = 0; i < sizeof(e->kinds); i++)
		e->kinds[i] = (uint8_t)hwt_branch_kind_of((int)i);
	if (priv && !hwt_perf_intel_pt_info_parse(&e->info, priv, npriv))
		e->have_info = 1;
	setup_config(e, hwt_dec_reader(dec));
	*state = e;
	return 0;
}

static int pt_chunk(void *state, struct hwt_dec_queue *q, const uint8_t *data, size_t size,
		    uint64_t offset)
{
	struct pt *e = state;
	if (!q->fmt && !(q->fmt = calloc(1, sizeof(struct ptq))))
		return HWT_ERR_NOMEM;
	if (q->per_cpu)
		pt_cpu_chunk(e, q, data, size, offset);
	else
		pt_on_chunk(e, q, data, size, offset);
	return 0;
}

static int pt_flush(void *state, struct hwt_dec_queue *q)
{
	struct pt *e = state;
	if (!q->fmt)
		return 0;
	if (q->per_cpu) {
		pt_par_drain(e);
		pt_cpu_seg_end(e, q);
	} else {
		pt_flush_carry(e, q);
	}
	return 0;
}

static int pt_finish(void *state)
{
	struct pt *e = state;
	pt_par_drain(e);
	pt_cpu_decode_all(e);
	return e->nomem ? HWT_ERR_NOMEM : 0;
}

/* The engine is about to change its threads, processes or images, or to
 * deliver something itself: what the workers decode goes out first. */
static int pt_quiesce(void *state)
{
	struct pt *e = state;
	pt_par_drain(e);
	return e->nomem ? HWT_ERR_NOMEM : 0;
}

static void pt_free(void *state)
{
	struct pt *e = state;
	if (!e)
		return;
	/* the queues' states (the engine frees the queues themselves) */
	for (size_t i = 0;; i++) {
		struct hwt_dec_queue *q = hwt_dec_queue_at(e->dec, i);
		if (!q)
			break;
		struct ptq *pq = q->fmt;
		if (pq)
			free(pq->carry);
		free(pq);
		q->fmt = NULL;
	}
	for (size_t s = 0; s < e->nsegs; s++)
		free(e->segs[s].d);
	free(e->segs);
	pt_par_free(e);
	free(e->pend);
	free(e->pevs);
	free(e->bb);
	free(e->rb);
	free(e->prg);
	hwt_pt_cache_free(e->pc);
	free(e);
}

extern const struct hwt_decoder_ops hwt_decoder_intel_pt; /* formats.c lists it */
const struct hwt_decoder_ops hwt_decoder_intel_pt = {
    .name = "intel_pt",
    .auxtrace_type = HWT_PERF_AUXTRACE_INTEL_PT,
    .create = pt_create,
    .chunk = pt_chunk,
    .flush = pt_flush,
    .finish = pt_finish,
    .free = pt_free,
    .quiesce = pt_quiesce,
};
