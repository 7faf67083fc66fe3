/* lib/pt/batch.c - batch decoding: taken branches, events and errors in
 * one array per call (hwt_pt_block_batch, hwt/pt_flow.h).
 *
 * A batch runs the block decoder's loop (block.c) inside the library and
 * writes what a consumer of taken branches needs: each block that ends
 * in a branch gives one entry when the branch went elsewhere than the
 * next instruction, events and errors come in order between them, and
 * each entry counts the instructions since the one before.  A branch
 * that an event binds to (held back by the flow engine until the event
 * is taken) follows that event.  After an error the batch syncs forward
 * by itself.
 *
 * Fast path: while nothing is pending (flow_fast_ok), the batch crosses
 * cached runs itself, as the block decoder's fast path does, without a
 * call per block; and where the next TNT bits come from a packet that a
 * quick bit may take (flow_quick_bit's conditions), one path-cache
 * lookup (path.c) delivers every branch those bits select, copied as
 * finished entries.  Where a path ends at another conditional branch,
 * the next lookup follows at once, with the bits of the TNT-8 packets
 * that come next in the buffer added to the key (span_key: up to
 * SPAN_MAX more, each followed by a TNT again; without time tracking,
 * timing packets between them are read past), and the TNT state is
 * left as taking the bits one by one would (span_take).  Visits of the
 * stop ip: a path that has one where visits count (stop_live) is not
 * taken; before they count, spans end before stop_from (so they start
 * counting only between paths, where they are looked at).  The time is
 * the same along a path (no timing packet is read there: a path needs
 * the next packet to be a TNT), so it moves only where the query
 * decoder answers: flow_proceed_jcc for the first bit of a TNT that
 * timing packets follow (it reads them as the query decoder would),
 * flow_proceed, a block of the block decoder, an event, a sync; entries
 * made after that carry the new time.
 *
 * Time entries (want_time and time_entries): a block that moved the time
 * and made no entry of its own (a branch not taken or not reported, a
 * block that ends before an event) is followed by a HWT_PTE_TIME entry,
 * and a STOP by one before it, so that the last entry before a block
 * always has the time at its start, and an entry right after a block of
 * one instruction the time after it: what a caller needs to give each
 * branch the time the block decoder's loop reads around its target's
 * block.  Blocks that end in an error make none (the loop uses the time
 * before them).
 *
 * State between calls lives in the decoder (struct
 * hwt_pt_block_decoder.bt): the instructions not yet reported, a branch
 * held back, the end.  No allocation here.
 */
#include <endian.h>
#include <string.h>

#include "insn_int.h"

void hwt_pt_batch_init(struct hwt_pt_batch *b, struct hwt_pt_entry *entries, size_t cap,
		       struct hwt_pt_event *events, size_t ev_cap)
{
	memset(b, 0, sizeof(*b));
	b->size = sizeof(*b);
	b->entries = entries;
	b->cap = cap;
	b->events = events;
	b->ev_cap = ev_cap;
}

static inline int reported(int iclass, uint64_t to, uint64_t next)
{
	/* a conditional branch or far transfer to the next instruction was
	 * not taken / is no branch of the flow */
	if (iclass == HWT_INSN_JCC || hwt_insn_is_far(iclass))
		return to != next;
	return 1;
}

static void stamp(struct hwt_pt_block_decoder *d, const struct hwt_pt_batch *b,
		  struct hwt_pt_entry *e)
{
	e->has_time = 0;
	e->tsc = 0;
	if (b->want_time && qry_time(d->f.q, &e->tsc, NULL, NULL) >= 0)
		e->has_time = 1;
}

/* The time of the last entry made (for time entries). */
static inline void note(struct hwt_pt_block_decoder *d, const struct hwt_pt_entry *e)
{
	d->bt.lhas = e->has_time;
	d->bt.ltsc = e->tsc;
}

/* A TIME entry at e: tmpl's time, ninsn instructions (time entries). */
static void time_entry(struct hwt_pt_block_decoder *d, struct hwt_pt_entry *e,
		       const struct hwt_pt_entry *tmpl, uint32_t ninsn)
{
	*e = *tmpl;
	e->type = HWT_PTE_TIME;
	e->ninsn = ninsn;
	note(d, e);
}

/* A branch entry at e: tmpl's time, from -> to (a taken branch of class
 * iclass), ninsn instructions. */
static inline void branch_entry(struct hwt_pt_block_decoder *d, struct hwt_pt_entry *e,
				const struct hwt_pt_entry *tmpl, int iclass, uint64_t from,
				uint64_t to, uint32_t ninsn)
{
	*e = *tmpl;
	e->iclass = (uint8_t)iclass;
	e->from = from;
	e->to = to;
	e->ninsn = ninsn;
	note(d, e);
}

static struct hwt_pt_entry *put(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b, int type)
{
	struct hwt_pt_entry *e = &b->entries[b->n++];
	memset(e, 0, sizeof(*e));
	e->type = (uint8_t)type;
	e->ninsn = d->bt.acc;
	d->bt.acc = 0;
	stamp(d, b, e);
	note(d, e);
	return e;
}

/* With time entries, after a block (or before a STOP in it): a
 * HWT_PTE_TIME entry if the time is not the last entry's. */
static void time_check(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b)
{
	if (!b->time_entries || !b->want_time)
		return;
	uint64_t tsc = 0;
	int has = qry_time(d->f.q, &tsc, NULL, NULL) >= 0;
	if (!has)
		tsc = 0;
	if (has != d->bt.lhas || tsc != d->bt.ltsc)
		put(d, b, HWT_PTE_TIME);
}

static void put_branch(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b, uint64_t from,
		       uint64_t to, int iclass, int mode)
{
	struct hwt_pt_entry *e = put(d, b, HWT_PTE_BRANCH);
	e->from = from;
	e->to = to;
	e->iclass = (uint8_t)iclass;
	e->mode = (uint8_t)mode;
}

static void put_end(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b)
{
	put(d, b, HWT_PTE_END);
	d->bt.ended = 1;
	d->bt.pend = 0;
}

/* HWT_PTE_STOP (b->have_stop): an entry saying the flow executed the
 * instruction at b->stop_ip; no instruction count of its own.  With
 * b->stop_from, only once the decoder has taken the packets before that
 * offset (the last visits of a PSB's ip come after the packets before the
 * PSB: reporting none before them spares the checks, and keeps the path
 * cache, in the loops that visit stop_ip long before the end). */
static inline int stop_live(const struct hwt_pt_block_decoder *d, const struct hwt_pt_batch *b)
{
	return b->have_stop && (!b->stop_from || qry_pos(d->f.q) >= b->stop_from);
}

static inline void stop_at(struct hwt_pt_entry *e, uint64_t stop);
static void put_stop(struct hwt_pt_batch *b)
{
	stop_at(&b->entries[b->n++], b->stop_ip);
}

static inline void stop_at(struct hwt_pt_entry *e, uint64_t stop)
{
	memset(e, 0, sizeof(*e));
	e->type = HWT_PTE_STOP;
	e->from = stop;
}

/* A visit of stop after the query decoder answered (out[n]): a TIME
 * entry first if the time moved and no entry says so yet (*moved, then
 * cleared, with the *acc instructions), then the STOP.  Returns n. */
static inline size_t stop_visit(struct hwt_pt_block_decoder *d, struct hwt_pt_entry *out, size_t n,
				const struct hwt_pt_entry *tmpl, uint32_t *acc, int *moved,
				uint64_t stop)
{
	if (*moved) {
		time_entry(d, &out[n++], tmpl, *acc);
		*acc = 0;
		*moved = 0;
	}
	stop_at(&out[n++], stop);
	return n;
}

/* Is stop one of the n instructions at ips? */
static inline int stop_in(const uint64_t *ips, size_t n, uint64_t stop)
{
	if (!n || stop - ips[0] > ips[n - 1] - ips[0])
		return 0;
	for (size_t i = 0; i < n; i++)
		if (ips[i] == stop)
			return 1;
	return 0;
}

/* An error entry for st, then sync forward; the new status. */
static int on_error(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b, int st)
{
	if (st == HWT_ERR_EOS) {
		put_end(d, b);
		return st;
	}
	uint64_t off = 0;
	hwt_pt_query_offset(d->f.q, &off);
	struct hwt_pt_entry *e = put(d, b, HWT_PTE_ERROR);
	e->err = st;
	e->from = hwt_pt_block_ip(d);
	e->to = off;
	d->bt.pend = 0;
	if (off == d->bt.err_off && ++d->bt.same_err > 4) {
		put_end(d, b); /* not moving: give up */
		return HWT_ERR_EOS;
	}
	if (off != d->bt.err_off)
		d->bt.same_err = 0;
	d->bt.err_off = off;
	return flow_sync_forward(&d->f);
}

/* Is the next TNT packet one that flow_quick_bit takes (reading it as it
 * would)?  Then all the cached bits can go the quick way. */
static inline int la_tnt(struct hwt_pt_query *q)
{
	if (q->la_valid)
		return q->la.type == HWT_PKT_TNT8 || q->la.type == HWT_PKT_TNT64;
	if (!qry_next_tnt8(q))
		return 0;
	q->la_valid = 1;
	return 1;
}

/* A path may take the bits of the TNT-8 packets that follow the cached
 * ones, up to SPAN_MAX of them, where each is followed by a TNT again
 * (what flow_quick_bit asks before taking a bit): the lookahead first,
 * then the packets at the packet decoder's position, in its first part
 * (np of them in all, at off[]); without time tracking, timing packets
 * between them are read past as flow_quick_bit does (qry_next_tnt8). */
#define SPAN_MAX 4
struct span {
	int np; /* packets in the key after the cached bits */
	/* the TNT-8 after each: offset, bit count, payload */
	uint64_t off[SPAN_MAX], pay[SPAN_MAX];
	unsigned m[SPAN_MAX];
};

/* The TNT-8 byte c (the packet decoder's test, pkt_next_tnt8): its bit
 * count (0: no TNT-8: bit 0 set, PAD, 02) and payload, by table. */
#define T8M(c)                                                                                     \
	(((c)&1) || (c) <= 2 ? 0                                                                   \
	 : (c) >= 0x80	     ? 6                                                                   \
	 : (c) >= 0x40	     ? 5                                                                   \
	 : (c) >= 0x20	     ? 4                                                                   \
	 : (c) >= 0x10	     ? 3                                                                   \
	 : (c) >= 0x08	     ? 2                                                                   \
			     : 1)
#define T8P(c) (((c) >> 1) & ((1 << T8M(c)) - 1))
#define R4(F, i) F(i), F(i + 1), F(i + 2), F(i + 3)
#define R16(F, i) R4(F, i), R4(F, i + 4), R4(F, i + 8), R4(F, i + 12)
#define R64(F, i) R16(F, i), R16(F, i + 16), R16(F, i + 32), R16(F, i + 48)
#define R256(F) R64(F, 0), R64(F, 64), R64(F, 128), R64(F, 192)
static const uint8_t tnt8_m[256] = {R256(T8M)}, tnt8_p[256] = {R256(T8P)};
#undef R4
#undef R16
#undef R64
#undef R256

/* The key of the cached bits and the TNT-8 packets after them (s) that
 * start before offset lim. */
static inline uint64_t span_key(const struct hwt_pt_query *q, struct span *s, uint64_t lim)
{
	const struct hwt_pt_pkt_decoder *dec = q->pd;
	uint64_t key = path_key(q->tnt_bits, q->tnt_n);
	s->np = 0;
	if (q->la.type != HWT_PKT_TNT8 || q->tick_pending || dec->ctx != HWT_PKT_CTX_NONE ||
	    !dec->synced)
		return key;
	const uint8_t *b1 = dec->b1;
	uint64_t at = dec->pos, n1 = dec->n1 < lim ? dec->n1 : lim, pay = q->la.u.tnt.payload;
	unsigned m = q->la.u.tnt.bits, nb = (unsigned)q->tnt_n;
	int j = 0, nt = q->no_time;
	for (; j < SPAN_MAX && at < n1; j++, at++) {
		unsigned nm = tnt8_m[b1[at]];
		if (!nm) {
			/* (timing packets, then a TNT-8?) */
			uint64_t t;
			if (!nt || (t = pkt_past_time(dec, at)) == at || t >= n1 ||
			    !(nm = tnt8_m[b1[t]]))
				break;
			at = t;
		}
		if (nb + m > 63)
			break;
		key = (key << m) | pay;
		nb += m;
		m = nm;
		pay = tnt8_p[b1[at]];
		s->off[j] = at;
		s->m[j] = m;
		s->pay[j] = pay;
	}
	s->np = j;
	return key;
}

/* After a path took u bits of span_key's key (s->np > 0): the TNT state
 * as taking them one by one with flow_quick_bit leaves it (the packet
 * that holds the next bit cached, the one after it looked ahead at if a
 * bit of the former was taken). */
static inline void span_take(struct hwt_pt_query *q, const struct span *s, unsigned u)
{
	if (u < (unsigned)q->tnt_n) {
		q->tnt_n -= (int)u;
		return;
	}
	u -= (unsigned)q->tnt_n;
	uint64_t pay = q->la.u.tnt.payload, off = q->la_off; /* packet j */
	unsigned m = q->la.u.tnt.bits;
	int j = 0;
	while (j < s->np && u >= m) {
		u -= m;
		m = s->m[j];
		pay = s->pay[j];
		off = s->off[j++];
	}
	q->tnt_bits = pay;
	q->tnt_n = (int)(m - u);
	q->tnt_tick = 0; /* (no tick pending: span_key) */
	if (!u) {
		q->la_valid = 0;
		q->pd->pos = off + 1;
	} else {
		/* (u > 0: j < np, key bits were left) */
		q->la.type = HWT_PKT_TNT8;
		q->la.size = 1;
		q->la.u.tnt.bits = (uint8_t)s->m[j];
		q->la.u.tnt.payload = s->pay[j];
		q->la_off = s->off[j];
		q->la_valid = 1;
		q->pd->pos = s->off[j] + 1;
	}
}

/* The path for key at ip, looked up in place. */
static inline const struct path *path_key_at(struct hwt_pt_cache *c, uint64_t ip, int mode,
					     uint64_t key)
{
	if (c->paths) {
		const struct path *p = &c->paths[path_slot(ip, mode, key)];
		if (p->epoch == c->path_epoch && p->ip == ip && p->key == key && p->mode == mode)
			return p;
	}
	return path_get(c, ip, mode, key);
}

/* Does the flow pass stop within path p from ip (its straight lines)? */
static int path_stops(const struct hwt_pt_cache *c, const struct path *p, uint64_t ip,
		      uint64_t stop)
{
	const struct hwt_pt_entry *br = c->pent + p->br;
	uint64_t seg = ip;
	for (unsigned i = 0; i < p->nbr; seg = br[i].to, i++)
		if (stop - seg <= br[i].from - seg)
			return 1;
	return stop - seg < p->end - seg;
}

/* Copy n entries; the common small counts with fixed sizes (inline
 * moves, no call). */
static inline void copy_entries(struct hwt_pt_entry *to, const struct hwt_pt_entry *from,
				unsigned n)
{
	switch (n) {
	case 0:
		break;
	case 1:
		memcpy(to, from, sizeof(*to));
		break;
	case 2:
		memcpy(to, from, 2 * sizeof(*to));
		break;
	case 3:
		memcpy(to, from, 3 * sizeof(*to));
		break;
	case 4:
		memcpy(to, from, 4 * sizeof(*to));
		break;
	default:
		memcpy(to, from, n * sizeof(*to));
		break;
	}
}

/* The return stack operations of path p, in order (most branches have
 * none: the operation bytes are looked at eight at a time; the pool has
 * 8 bytes to spare). */
static void path_rs(struct retstack *rs, const struct hwt_pt_cache *c, const struct path *p)
{
	const struct hwt_pt_entry *br = c->pent + p->br;
	const uint8_t *op = c->prs + p->br;
	for (unsigned i = 0; i < p->nbr; i += 8) {
		uint64_t w;
		memcpy(&w, op + i, 8);
		w = le64toh(w);
		if (p->nbr - i < 8)
			w &= (1ull << (8 * (p->nbr - i))) - 1; /* (not the next path's) */
		while (w) {
			unsigned k = i + (unsigned)__builtin_ctzll(w) / 8;
			w &= ~(0xffull << (8 * (k - i)));
			if (op[k] == PATH_POP) {
				uint64_t to;
				retstack_pop(rs, &to); /* (to == br[k].to) */
			} else {
				retstack_push(rs, br[k].from + op[k]);
			}
		}
	}
}

/* The fast path (see above) while flow_fast_ok holds and there is room.
 * Returns the number of steps taken (0: the block decoder must go on);
 * *st is the status then (as hwt_pt_block_next would return it). */
static size_t fast(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b, int *st)
{
	struct flow *f = &d->f;
	struct hwt_pt_cache *c = f->cache;
	struct hwt_pt_query *q = f->q;
	struct hwt_pt_entry *out = b->entries, tmpl;
	size_t n = b->n, cap = b->cap - 1, steps = 0; /* one slot for the end */
	uint32_t acc = d->bt.acc;
	int paths = !f->opt.no_path_cache;
	/* hs: visits of stop count (stop_live); packets are taken on the
	 * way, so it is looked at again (LIVE) where a visit may be, only
	 * then: the position is a call when no packet is looked ahead at */
	int ws = b->have_stop, hs = stop_live(d, b);
	/* te: time entries (a TIME before a STOP needs a slot more) */
	int te = b->time_entries && b->want_time;
	size_t need = 1u + (size_t)(te && ws);
#define LIVE() (hs || (ws && (hs = (q->la_valid ? q->la_off : qry_pos(q)) >= b->stop_from)))
	uint64_t stop = b->stop_ip;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.type = HWT_PTE_BRANCH;
	stamp(d, b, &tmpl); /* no timing packet is read on the way */
	/* flow_fast_ok holds on: nothing here reads a packet but TNTs (no
	 * event, error or end comes), except that the bits may run out at
	 * the end of the trace */
	while (n + need < cap && (q->tnt_n || !q->eos)) {
		int mode = f->mode ? f->mode : 64;
		uint64_t ip = f->ip;
		tmpl.mode = (uint8_t)mode;
		const struct run *r = cache_run(c, ip, mode);
		if (!r)
			break;
		/* (a path starts with a run that ends in a conditional branch) */
		if (paths && r->iclass == HWT_INSN_JCC && q->tnt_n && !q->tnt_tick && la_tnt(q)) {
			struct span sp;
			sp.np = 0;
			/* (with stop visits that count (LIVE): the bits of
			 * this packet alone, checked below; with visits that
			 * do not count yet: the packets before stop_from, so
			 * that none come to count on the way) */
			uint64_t lim = !ws ? UINT64_MAX : LIVE() ? 0 : b->stop_from;
			const struct path *p = path_key_at(c, ip, mode, span_key(q, &sp, lim));
			if (p && LIVE() && path_stops(c, p, ip, stop))
				p = NULL;
			if (p && n + p->nbr <= cap) {
				size_t n0 = n;
				/* this path, and the next ones while each ends
				 * where another may start (with the bits of the
				 * TNT packets after the cached ones) */
				for (;;) {
					struct hwt_pt_entry *e = out + n;
					copy_entries(e, c->pent + p->br, p->nbr);
					if (p->nbr) {
						e->ninsn += acc;
						acc = 0;
						if (b->want_time)
							for (unsigned i = 0; i < p->nbr; i++) {
								e[i].has_time = tmpl.has_time;
								e[i].tsc = tmpl.tsc;
							}
					}
					if (p->flags & PATH_RS)
						path_rs(&f->rs, c, p);
					n += p->nbr;
					acc += p->tail;
					f->ip = p->end;
					if (sp.np) {
						span_take(q, &sp, p->used);
					} else {
						q->tnt_n -= p->used;
						if (!q->tnt_n)
							qry_take_tnt(
							    q); /* as flow_quick_bit does */
					}
					steps++;
					if (!(p->flags & PATH_END_JCC) || n + 1 >= cap ||
					    !q->tnt_n || q->tnt_tick || !la_tnt(q) ||
					    (ws && LIVE()))
						break;
					p = path_key_at(c, f->ip, mode, span_key(q, &sp, lim));
					if (!p || n + p->nbr > cap)
						break;
				}
				if (n != n0) /* (every entry of a chain: tmpl's time) */
					note(d, &tmpl);
				f->err_deferred = 0;
				continue;
			}
			/* (building a path may have replaced the run: look again) */
			r = cache_run(c, ip, mode);
			if (!r)
				break;
		}
		uint64_t last = r->ip + r->last;
		f->err_deferred = 0;
		steps++;
		if (!flow_quick_proceed(f, r, last)) {
			if (r->iclass == HWT_INSN_JCC && q->tnt_n && !q->tnt_tick) {
				/* the first bit of a TNT that timing packets follow:
				 * the query decoder reads them (as run_step below,
				 * without its detours) */
				flow_proceed_jcc(f, r);
				acc += r->n;
				stamp(d, b, &tmpl);
				/* (time entries: as below) */
				int moved =
				    te && (tmpl.has_time != d->bt.lhas || tmpl.tsc != d->bt.ltsc);
				if (stop - r->ip <= r->last && LIVE() &&
				    stop_in(c->ips + r->pool, r->n, stop))
					n = stop_visit(d, out, n, &tmpl, &acc, &moved, stop);
				/* (flow_status is 0 where flow_fast_ok holds) */
				int ok = flow_fast_ok(f);
				*st = ok ? 0 : flow_status(f);
				if (f->ip != last + r->size) {
					branch_entry(d, &out[n++], &tmpl, HWT_INSN_JCC, last, f->ip,
						     acc);
					acc = 0;
				} else if (moved) {
					time_entry(d, &out[n++], &tmpl, acc);
					acc = 0;
				}
				if (!ok)
					break;
				continue;
			}
			/* the query decoder answers (as the block decoder's
			 * run_step does): packets are read, time may move */
			struct hwt_x86_insn xi;
			run_last(c, r, &xi);
			int err = flow_proceed(f, &xi);
			if (err < 0) {
				acc += r->n - 1; /* the last one failed */
				if (stop - r->ip <= r->last && LIVE() &&
				    stop_in(c->ips + r->pool, r->n - 1u, stop))
					stop_at(&out[n++], stop);
				*st = err;
				break;
			}
			acc += r->n;
			stamp(d, b, &tmpl);
			/* (time entries: the time moved where no entry says so) */
			int moved = te && (tmpl.has_time != d->bt.lhas || tmpl.tsc != d->bt.ltsc);
			if (stop - r->ip <= r->last && LIVE() &&
			    stop_in(c->ips + r->pool, r->n, stop))
				n = stop_visit(d, out, n, &tmpl, &acc, &moved, stop);
			*st = flow_status(f);
			if (r->iclass != HWT_INSN_OTHER && f->enabled && f->have_ip &&
			    reported(r->iclass, f->ip, last + r->size)) {
				branch_entry(d, &out[n++], &tmpl, r->iclass, last, f->ip, acc);
				acc = 0;
			} else if (moved) {
				time_entry(d, &out[n++], &tmpl, acc);
				acc = 0;
			}
			if (*st)
				break; /* events, the end: back to the main loop */
			if (!flow_fast_ok(f))
				break;
			continue;
		}
		acc += r->n;
		if (stop - r->ip <= r->last && LIVE() && stop_in(c->ips + r->pool, r->n, stop))
			stop_at(&out[n++], stop);
		if (r->iclass != HWT_INSN_OTHER && reported(r->iclass, f->ip, last + r->size)) {
			branch_entry(d, &out[n++], &tmpl, r->iclass, last, f->ip, acc);
			acc = 0;
		}
	}
	b->n = n;
	d->bt.acc = acc;
	return steps;
#undef LIVE
}

/* A block that ended in a branch (its last instruction at from, the
 * next one at next): report it, or hold it back if an event binds to it. */
static void block_branch(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b, uint64_t from,
			 uint64_t next, int iclass, int mode)
{
	struct flow *f = &d->f;
	if (f->postponed) {
		d->bt.pend = 1;
		d->bt.pend_from = from;
		d->bt.pend_next = next;
		d->bt.pend_class = (uint8_t)iclass;
		d->bt.pend_mode = (uint8_t)mode;
		return;
	}
	if (f->enabled && f->have_ip && reported(iclass, f->ip, next))
		put_branch(d, b, from, f->ip, iclass, mode);
}

int hwt_pt_block_batch(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b)
{
	int te = b && b->time_entries && b->want_time;
	if (!d || !b || b->size < sizeof(*b) || !b->entries ||
	    b->cap < 2u + !!b->have_stop + !!(te && b->have_stop) || !b->events || !b->ev_cap)
		return HWT_ERR_INVALID;
	b->n = b->nev = 0;
	if (d->bt.ended)
		return 0;
	struct flow *f = &d->f;
	uint8_t eoc = f->opt.end_on_call, eoj = f->opt.end_on_jump;
	f->opt.end_on_call = f->opt.end_on_jump = 1;
	int st;
	if (d->have_bst)
		st = d->bst;
	else if (!f->synced)
		st = flow_sync_forward(f);
	else
		st = flow_status(f);
	cache_bind(f->cache, f->img);
	/* (a time, a stop, a branch, the end) */
	size_t room = b->have_stop ? 3u + !!te : 2;
	while (b->cap - b->n >= room && !d->bt.ended) {
		if (st < 0) {
			st = on_error(d, b, st);
			continue;
		}
		if (st & HWT_PTS_EVENT_PENDING) {
			if (b->nev == b->ev_cap)
				break;
			struct hwt_pt_event *ev = &b->events[b->nev];
			st = flow_event(f, ev);
			if (st < 0)
				continue;
			put(d, b, HWT_PTE_EVENT)->index = (uint32_t)b->nev++;
			if (d->bt.pend && !f->postponed) {
				d->bt.pend = 0;
				if (f->enabled && f->have_ip &&
				    reported(d->bt.pend_class, f->ip, d->bt.pend_next))
					put_branch(d, b, d->bt.pend_from, f->ip, d->bt.pend_class,
						   d->bt.pend_mode);
			}
			continue;
		}
		if ((st & HWT_PTS_EOS) && !b->past_end) {
			put_end(d, b);
			break;
		}
		if (f->img && flow_fast_ok(f)) {
			/* (cache_bind above: the image cannot change in a call) */
			int fst = 0;
			if (fast(d, b, &fst)) {
				st = fst;
				continue;
			}
		}
		struct hwt_pt_block blk;
		st = hwt_pt_block_next(d, &blk);
		if (st == HWT_ERR_EOS) {
			/* what comes past the end is not counted, but with
			 * past_end: the instructions up to the one that needs
			 * trace (reached) */
			if (b->past_end) {
				d->bt.acc += blk.ninsn;
				if (stop_live(d, b) && stop_in(blk.ips, blk.ninsn, b->stop_ip)) {
					time_check(d, b);
					put_stop(b);
				}
				if (blk.ninsn)
					time_check(d, b);
			}
			put_end(d, b);
			break;
		}
		if (st < 0) {
			d->bt.acc += blk.ninsn ? blk.ninsn - 1 : 0; /* the last one failed */
			if (stop_live(d, b) && blk.ninsn &&
			    stop_in(blk.ips, blk.ninsn - 1u, b->stop_ip))
				put_stop(b);
			continue;
		}
		d->bt.acc += blk.ninsn;
		if (stop_live(d, b) && stop_in(blk.ips, blk.ninsn, b->stop_ip)) {
			time_check(d, b);
			put_stop(b);
		}
		if (blk.ninsn && hwt_insn_is_branch(blk.iclass))
			block_branch(d, b, blk.end_ip, blk.end_ip + blk.sizes[blk.ninsn - 1],
				     blk.iclass, blk.mode);
		time_check(d, b); /* (after a branch entry: the same time) */
	}
	f->opt.end_on_call = eoc;
	f->opt.end_on_jump = eoj;
	d->bst = st;
	d->have_bst = 1;
	d->quiet = 0;
	return d->bt.ended ? 0 : 1;
}
