/* tools/script_perf.c - "hwt script" on perf.data recordings, and the
 * decoding engine shared with "hwt report" (internals: script_int.h).
 *
 * Design: one pass over the records in file order.  Sideband (COMM exec,
 * MMAP/MMAP2, FORK) updates a table of processes (hwt/process.h) and
 * threads; each AUXTRACE chunk is decoded when it is met, with the image of
 * its thread's process, in regions that start at a PSB and end at the
 * next region's PSB (script_chunk.c: memory is bounded by the PSB period,
 * not by the trace).  A region that ends at a PSB would run on past the
 * PSB's IP until it needs a packet; what it decodes from the PSB's FUP IP
 * on is held back and dropped, since the next region starts there: the
 * output does not depend on where the recorder cut the trace into
 * chunks.  Taken branches are derived from consecutive instructions (plus
 * asynchronous branch events): with the block decoder unless the consumer
 * wants every instruction's bytes or it is a per-CPU queue (blocks end at
 * every branch, so only a block's first instruction can be a branch
 * target; times are the ones the instruction decoder would give, read
 * before and after each block), else with the instruction decoder.  The regions' decoders
 * share one decode cache per process image.  Every decoder error is
 * reported as a gap with its offset in the AUX stream and decoding
 * resumes at the next PSB.  The vdso's code comes from the build-id cache
 * (the build-id from the file's BUILD_ID feature).  Per-CPU recordings:
 * script_cpu.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/process.h"
#include "hwt/pt_config.h"
#include "hwt/pt_flow.h"
#include "hwt/x86.h"
#include "out/out.h"
#include "script_int.h"
#include "vdso.h"

/* ---------------- symbol cache ---------------- */
#define SC_SIZE 8192
#define INTERN_BUCKETS 4096

struct intern {
	struct intern *next;
	char name[];
};

struct sc_entry {
	uint64_t ip;
	const char *name;
	uint64_t off;
	int valid;
};

struct sp_symcache {
	const struct hwt_image *img;
	struct sc_entry e[SC_SIZE];
	struct intern *b[INTERN_BUCKETS];
};

struct sp_symcache *sp_symcache_alloc(void)
{
	return calloc(1, sizeof(struct sp_symcache));
}

void sp_symcache_free(struct sp_symcache *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < INTERN_BUCKETS; i++)
		for (struct intern *n = sc->b[i], *nx; n; n = nx) {
			nx = n->next;
			free(n);
		}
	free(sc);
}

static const char *intern(struct sp_symcache *sc, const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = s; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	struct intern **b = &sc->b[h % INTERN_BUCKETS];
	for (struct intern *n = *b; n; n = n->next)
		if (!strcmp(n->name, s))
			return n->name;
	size_t len = strlen(s);
	struct intern *n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	memcpy(n->name, s, len + 1);
	n->next = *b;
	*b = n;
	return n->name;
}

const char *sp_symbol(struct sp_symcache *sc, const struct hwt_image *img, uint64_t ip,
		      uint64_t *off)
{
	if (sc->img != img) {
		memset(sc->e, 0, sizeof(sc->e));
		sc->img = img;
	}
	struct sc_entry *e = &sc->e[(ip ^ (ip >> 13)) % SC_SIZE];
	if (!e->valid || e->ip != ip) {
		const char *name = NULL;
		uint64_t o = 0;
		e->ip = ip;
		e->valid = 1;
		e->name = NULL;
		e->off = 0;
		const char *path;
		if (img && !hwt_image_symbol(img, ip, &name, &o) && name) {
			e->name = intern(sc, name);
			e->off = o;
		} else if (img && !hwt_image_where(img, ip, &path, &o)) {
			/* no symbol: "[file]+0xoffset", the offset in the file */
			char buf[256];
			const char *base = strrchr(path, '/');
			snprintf(buf, sizeof(buf), "[%s]", base ? base + 1 : path);
			e->name = intern(sc, buf);
			e->off = o;
		}
	}
	*off = e->off;
	return e->name;
}

static struct hwt_process *proc_get(struct engine *e, uint32_t pid, int create)
{
	for (size_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].pid == pid)
			return e->procs[i].p;
	if (!create)
		return NULL;
	if (e->nprocs == e->capprocs) {
		size_t nc = e->capprocs ? 2 * e->capprocs : 16;
		struct proc_ent *nv = realloc(e->procs, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		e->procs = nv;
		e->capprocs = nc;
	}
	struct hwt_process *p = hwt_process_alloc(pid);
	if (!p)
		return NULL;
	e->procs[e->nprocs].pid = pid;
	e->procs[e->nprocs++].p = p;
	return p;
}

static void proc_replace(struct engine *e, uint32_t pid, struct hwt_process *np)
{
	for (size_t i = 0; i < e->nprocs; i++)
		if (e->procs[i].pid == pid) {
			if (e->pc_proc == e->procs[i].p)
				e->pc_proc = NULL; /* the decode cache is stale */
			hwt_process_free(e->procs[i].p);
			e->procs[i].p = np;
			return;
		}
	if (e->nprocs == e->capprocs) {
		size_t nc = e->capprocs ? 2 * e->capprocs : 16;
		struct proc_ent *nv = realloc(e->procs, nc * sizeof(*nv));
		if (!nv) {
			hwt_process_free(np);
			return;
		}
		e->procs = nv;
		e->capprocs = nc;
	}
	e->procs[e->nprocs].pid = pid;
	e->procs[e->nprocs++].p = np;
}

static struct sp_thread *thread_get(struct engine *e, uint32_t tid, uint32_t pid)
{
	for (size_t i = 0; i < e->nthreads; i++)
		if (e->threads[i]->tid == tid) {
			if (pid != (uint32_t)-1 && e->threads[i]->pid != pid)
				e->threads[i]->pid = pid;
			return e->threads[i];
		}
	if (e->nthreads == e->capthreads) {
		size_t nc = e->capthreads ? 2 * e->capthreads : 16;
		struct sp_thread **nv = realloc(e->threads, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		e->threads = nv;
		e->capthreads = nc;
	}
	struct sp_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid == (uint32_t)-1 ? tid : pid;
	e->threads[e->nthreads++] = t;
	return t;
}

static struct queue *queue_get(struct engine *e, uint32_t idx)
{
	for (size_t i = 0; i < e->nqueues; i++)
		if (e->queues[i].idx == idx)
			return &e->queues[i];
	struct queue *nv = realloc(e->queues, (e->nqueues + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	e->queues = nv;
	struct queue *q = &e->queues[e->nqueues++];
	memset(q, 0, sizeof(*q));
	q->idx = idx;
	return q;
}

uint64_t sp_tsc_to_ns(const struct engine *e, uint64_t tsc)
{
	if (!e->have_conv)
		return tsc;
	uint64_t quot = tsc >> e->time_shift;
	uint64_t rem = tsc & ((1ull << e->time_shift) - 1);
	return e->time_zero + quot * e->time_mult + ((rem * e->time_mult) >> e->time_shift);
}

/* ---------------- PSB helpers ---------------- */
const uint8_t sp_psb_pat[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

const uint8_t *sp_find_psb(const uint8_t *p, size_t n)
{
	return memmem(p, n, sp_psb_pat, sizeof(sp_psb_pat));
}

/* The FUP of the PSB+ at p (n bytes readable): 1 and *ip where the flow
 * resumes; 0 when there is none to wait for (PSB+ without an FUP, or not
 * parseable); HWT_ERR_EOS when the PSB+ runs past the n bytes (the rest
 * is in the next chunk). */
int sp_psb_fup_ip(const uint8_t *p, size_t n, uint64_t *ip)
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

/* Does the previous instruction fall through to ip? */
static int falls_through(struct engine *e, uint64_t ip)
{
	if (e->prev_end)
		return ip == e->prev_end;
	uint64_t d = ip - e->prev_ip; /* size unknown: close enough */
	return d && d <= 15;
}

/* ---------------- delivery ---------------- */
/* Output goes straight to the consumer, or, in a region that ends at a
 * PSB, from each visit of that PSB's IP on into the pending list: flushed
 * when the IP comes again (or an event or gap shows the flow went on),
 * dropped at the end of the region (the next region decodes it). */
static struct pending *pend_new(struct engine *e)
{
	if (e->npend == e->cappend) {
		size_t nc = e->cappend ? 2 * e->cappend : 1024;
		struct pending *nv = nc <= (1u << 22) ? realloc(e->pend, nc * sizeof(*nv)) : NULL;
		if (!nv)
			return NULL;
		e->pend = nv;
		e->cappend = nc;
	}
	return &e->pend[e->npend++];
}

static void flush_pending(struct engine *e)
{
	const struct sp_consumer *c = e->c;
	for (size_t i = 0; i < e->npend; i++) {
		const struct pending *p = &e->pend[i];
		if (p->is_branch) {
			if (c->branch)
				c->branch(c->arg, e->th, p->u.br.from, p->u.br.to, p->kind, e->img,
					  p->have_time, p->time);
		} else if (c->insn) {
			c->insn(c->arg, e->th, &p->u.in, e->img, p->have_time, p->time);
		}
	}
	e->npend = 0;
	e->pend_active = 0;
}

static void emit_branch(struct engine *e, uint64_t from, uint64_t to, int kind, int have_time,
			uint64_t t)
{
	if (e->pend_active) {
		struct pending *p = pend_new(e);
		if (p) {
			p->is_branch = 1;
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
	if (e->c->branch)
		e->c->branch(e->c->arg, e->th, from, to, kind, e->img, have_time, t);
}

static void on_insn(struct engine *e, const struct hwt_pt_insn *in, int have_time, uint64_t t)
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
	if (!e->c->insn)
		return;
	if (e->pend_active) {
		struct pending *p = pend_new(e);
		if (p) {
			p->is_branch = 0;
			p->have_time = (uint8_t)have_time;
			p->time = t;
			p->u.in = *in;
			return;
		}
		flush_pending(e);
		e->pend_overflow = 1;
	}
	e->c->insn(e->c->arg, e->th, in, e->img, have_time, t);
}

/* One instruction of a block (the general case of on_block). */
static void block_ip(struct engine *e, uint64_t ip, unsigned size, int cls, int mode, int have_time,
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
static void on_block(struct engine *e, const struct hwt_pt_block *b, uint32_t n, int last_class,
		     int hb, uint64_t tb, int ha, uint64_t ta)
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
 * need no raw bytes (sp_consumer.no_raw): as the instruction decoder
 * would give them (times as for on_block; only the last one has a
 * branch class). */
static void block_insns(struct engine *e, const struct hwt_pt_block *b, uint32_t n, int last_class,
			int hb, uint64_t tb, int ha, uint64_t ta)
{
	struct hwt_pt_insn in;
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

/* Per-CPU: the thread that runs at time t is the last one switched in at
 * or before t (the first one if t precedes them all). */
static void thread_for_time(struct engine *e, int have_time, uint64_t t)
{
	struct queue *q = e->q;
	if (!q->per_cpu || !q->nsw || !have_time)
		return;
	size_t i = q->cur < q->nsw ? q->cur : 0;
	if (q->sw[i].time > t || (i + 1 < q->nsw && q->sw[i + 1].time <= t)) {
		size_t lo = 0, hi = q->nsw;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (q->sw[mid].time <= t)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo ? lo - 1 : 0;
	}
	q->cur = i;
	if (e->th && e->th->tid == q->sw[i].tid)
		return;
	struct sp_thread *th = thread_get(e, q->sw[i].tid, (uint32_t)-1);
	if (th && th != e->th) {
		flush_pending(e);
		e->have_prev = 0;
		e->th = th;
	}
}

/* The decoder's verbs, block or instruction decoder. */
static void d_offset(const struct engine *e, uint64_t *off)
{
	if (e->bd)
		hwt_pt_block_offset(e->bd, off);
	else
		hwt_pt_insn_offset(e->d, off);
}

static int d_sync(struct engine *e)
{
	return e->bd ? hwt_pt_block_sync_forward(e->bd) : hwt_pt_insn_sync_forward(e->d);
}

static int d_event(struct engine *e, struct hwt_pt_event *ev)
{
	return e->bd ? hwt_pt_block_event(e->bd, ev) : hwt_pt_insn_event(e->d, ev);
}

static void gap(struct engine *e, uint64_t base, int err)
{
	uint64_t off = 0;
	d_offset(e, &off);
	flush_pending(e);
	e->gaps++;
	if (e->c->gap)
		e->c->gap(e->c->arg, e->th, base + off,
			  e->bd ? hwt_pt_block_ip(e->bd) : hwt_pt_insn_ip(e->d), err);
	e->have_prev = 0;
}

static void handle_event(struct engine *e, const struct hwt_pt_event *ev, int have_time, uint64_t t)
{
	switch (ev->type) {
	case HWT_EV_ASYNC_BRANCH:
		flush_pending(e);
		if (!ev->ip_suppressed)
			emit_branch(e, ev->u.async_branch.from, ev->ip, HWT_BR_ASYNC, have_time, t);
		e->have_prev = 0;
		break;
	case HWT_EV_ENABLED:
	case HWT_EV_DISABLED:
	case HWT_EV_ASYNC_DISABLED:
	case HWT_EV_OVERFLOW:
	case HWT_EV_TSX:
	case HWT_EV_STOP:
		e->have_prev = 0;
		break;
	default:
		break;
	}
}

/* The block decoder's time now, in ns: 1 and *t, or 0 if unknown. */
static int blk_time(struct engine *e, uint64_t *t)
{
	uint64_t tsc;
	uint32_t lm, lc;
	if (hwt_pt_block_time(e->bd, &tsc, &lm, &lc) < 0)
		return 0;
	*t = sp_tsc_to_ns(e, tsc);
	return 1;
}

/* Decode one region [data, data+n) of queue q whose first byte is at
 * stream offset base.  holding: a PSB follows the region, whose FUP says
 * the flow resumes at stop_ip (what the decoder yields from there on past
 * the end belongs to the next region). */
void sp_decode_region(struct engine *e, struct queue *q, const uint8_t *data, size_t n,
		      uint64_t base, int holding, uint64_t stop_ip)
{
	if (!n)
		return;
	e->q = q;
	e->th = thread_get(e, q->tid, (uint32_t)-1);
	if (!e->th)
		return;
	struct hwt_process *p;
	if (q->per_cpu) {
		p = e->all;
		thread_for_time(e, e->have_rtime, e->rtime);
	} else {
		p = proc_get(e, e->th->pid, 1);
	}
	if (!p)
		return;
	e->img = hwt_process_image(p, NULL);
	if (!e->img)
		return;
	struct hwt_pt_config cfg = e->cfg;
	cfg.buf.begin = data;
	cfg.buf.end = data + n;
	cfg.buf.begin2 = cfg.buf.end2 = NULL;
	struct hwt_pt_flow_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	opt.query.size = sizeof(opt.query);
	int want_time = e->c->want_time || q->per_cpu;
	/* Branches only: blocks (one decoder call per block; per-CPU needs
	 * the time at every instruction for the thread that runs).  The
	 * decode cache belongs to the image of one process generation. */
	int blk = (!e->c->insn || e->c->no_raw) && !q->per_cpu;
	if (!e->pc)
		e->pc = hwt_pt_cache_alloc(); /* NULL: each decoder has its own */
	if (e->pc &&
	    (e->pc_img != e->img || e->pc_proc != p || e->pc_gen != hwt_process_generation(p))) {
		hwt_pt_cache_clear(e->pc);
		e->pc_img = e->img;
		e->pc_proc = p;
		e->pc_gen = hwt_process_generation(p);
	}
	opt.cache = e->pc;
	if (blk) {
		opt.end_on_call = 1;
		opt.end_on_jump = 1;
		e->bd = hwt_pt_block_alloc(&cfg, e->img, &opt);
	} else {
		e->d = hwt_pt_insn_alloc(&cfg, e->img, &opt);
	}
	if (!e->d && !e->bd) {
		cli_err(e->cmd, "cannot allocate a decoder (out of memory)");
		return;
	}
	e->have_prev = 0;
	e->npend = 0;
	e->pend_overflow = 0;
	e->pend_active = 0;
	e->holding = holding;
	e->stop_ip = stop_ip;
	uint64_t last_err_off = UINT64_MAX;
	int same_err = 0;
	int st = d_sync(e);
	for (;;) {
		if (st < 0) {
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
			if (st < 0)
				break;
			if (want_time && ev.has_tsc) {
				have_time = 1;
				t = sp_tsc_to_ns(e, ev.tsc);
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
			if (want_time)
				hb = blk_time(e, &tb);
			st = hwt_pt_block_next(e->bd, &b);
			if (want_time)
				ha = blk_time(e, &ta);
			/* past the end, the block ends with the first instruction
			 * that needs trace: it was reached (as with insn_next) */
			void (*deliver)(struct engine *, const struct hwt_pt_block *, uint32_t, int,
					int, uint64_t, int, uint64_t) =
			    e->c->insn ? block_insns : on_block;
			if (st >= 0 || st == HWT_ERR_EOS)
				deliver(e, &b, b.ninsn, b.iclass, hb, tb, ha, ta);
			else if (b.ninsn > 1) /* the last one failed (as with insn_next) */
				deliver(e, &b, b.ninsn - 1, HWT_INSN_JCC, hb, tb, hb, tb);
			continue;
		}
		struct hwt_pt_insn in;
		st = hwt_pt_insn_next(e->d, &in);
		if (st < 0 && !(st == HWT_ERR_EOS && in.size))
			continue;
		if (want_time) {
			uint64_t tsc;
			uint32_t lm, lc;
			have_time = hwt_pt_insn_time(e->d, &tsc, &lm, &lc) >= 0;
			t = have_time ? sp_tsc_to_ns(e, tsc) : 0;
			if (q->per_cpu)
				thread_for_time(e, have_time, t);
		}
		on_insn(e, &in, have_time, t);
	}
	if (!e->holding)
		flush_pending(e);
	e->npend = 0; /* held back: the next region decodes it */
	e->pend_active = 0;
	hwt_pt_insn_free(e->d);
	e->d = NULL;
	hwt_pt_block_free(e->bd);
	e->bd = NULL;
}

/* ---------------- setup from the recording ---------------- */
static void setup_config(struct engine *e, struct hwt_perf_reader *r)
{
	hwt_pt_config_init(&e->cfg);
	const char *cpuid = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID);
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
	for (size_t i = 0; i < hwt_perf_reader_nr_attrs(r); i++) {
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
	}
}

static const char *rec_str(const struct hwt_perf_record *rec, size_t off)
{
	const char *s = (const char *)rec->hdr + off;
	size_t max = rec->size > off ? rec->size - off : 0;
	return memchr(s, 0, max) ? s : NULL;
}

/* A record that says which thread runs on its CPU from its time on
 * (ITRACE_START, a switch-in): 1 and *tid, *pid; else 0. */
int sp_switch_in(const struct hwt_perf_record *rec, uint32_t *tid, uint32_t *pid)
{
	if (!rec->have_sid ||
	    (rec->type != PERF_RECORD_ITRACE_START && rec->type != PERF_RECORD_SWITCH &&
	     rec->type != PERF_RECORD_SWITCH_CPU_WIDE))
		return 0;
	if (rec->type != PERF_RECORD_ITRACE_START && (rec->misc & PERF_RECORD_MISC_SWITCH_OUT))
		return 0;
	*tid = rec->sid.tid;
	*pid = rec->sid.pid;
	if (rec->type == PERF_RECORD_ITRACE_START &&
	    rec->size >= sizeof(struct hwt_perf_rec_itrace_start)) {
		*tid = ((const struct hwt_perf_rec_itrace_start *)rec->hdr)->tid;
		*pid = ((const struct hwt_perf_rec_itrace_start *)rec->hdr)->pid;
	}
	return 1;
}

static void on_sideband(struct engine *e, const struct hwt_perf_record *rec)
{
	const void *h = rec->hdr;
	switch (rec->type) {
	case PERF_RECORD_COMM: {
		if (rec->size < sizeof(struct hwt_perf_rec_comm))
			break;
		const struct hwt_perf_rec_comm *c = h;
		thread_get(e, c->tid, c->pid);
		if (rec->misc & PERF_RECORD_MISC_COMM_EXEC) {
			struct hwt_process *p = proc_get(e, c->pid, 1);
			if (p)
				hwt_process_exec(p);
		}
		break;
	}
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_MMAP: {
		int v2 = rec->type == PERF_RECORD_MMAP2;
		size_t fix =
		    v2 ? sizeof(struct hwt_perf_rec_mmap2) : sizeof(struct hwt_perf_rec_mmap);
		if (rec->size < fix)
			break;
		const struct hwt_perf_rec_mmap *m = h;
		uint32_t prot = v2 ? ((const struct hwt_perf_rec_mmap2 *)h)->prot : 0;
		const char *path = rec_str(rec, fix);
		if (!path || m->pid == (uint32_t)-1 || !m->len)
			break;
		struct hwt_process *p = proc_get(e, m->pid, 1);
		if (e->vdso && !strcmp(path, "[vdso]")) {
			size_t n = e->vdso_size < m->len ? e->vdso_size : (size_t)m->len;
			if (p)
				hwt_process_map_mem(p, m->addr, e->vdso, n, path);
			hwt_process_map_mem(e->all, m->addr, e->vdso, n, path);
			break;
		}
		if (p)
			hwt_process_mmap(p, m->addr, m->len, m->pgoff, prot, path);
		hwt_process_mmap(e->all, m->addr, m->len, m->pgoff, prot, path);
		break;
	}
	case PERF_RECORD_FORK: {
		if (rec->size < sizeof(struct hwt_perf_rec_fork))
			break;
		const struct hwt_perf_rec_fork *f = h;
		thread_get(e, f->tid, f->pid);
		if (f->pid != f->ppid) {
			struct hwt_process *pp = proc_get(e, f->ppid, 0);
			struct hwt_process *np =
			    pp ? hwt_process_fork(pp, f->pid) : hwt_process_alloc(f->pid);
			if (np)
				proc_replace(e, f->pid, np);
		}
		break;
	}
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		uint32_t tid, pid;
		if (sp_switch_in(rec, &tid, &pid))
			thread_get(e, tid, pid);
		break;
	}
	default:
		break;
	}
}

/* The vdso the recording names in its BUILD_ID feature (perf.data-file-
 * format.txt: records of header, pid, 24 bytes of build-id whose 21st byte
 * is the length when misc has bit 15, name padded to 64), read from the
 * build-id cache as perf record left it. */
static void load_vdso(struct engine *e, struct hwt_perf_reader *r)
{
	size_t size = 0;
	const uint8_t *f = hwt_perf_reader_feature(r, HWT_FEAT_BUILD_ID, &size);
	char dir[4096];
	if (!f || buildid_dir(dir, sizeof(dir)))
		return;
	for (size_t off = 0; off + 36 < size;) {
		struct perf_event_header h;
		memcpy(&h, f + off, sizeof(h));
		if (h.size <= 36 || h.size > size - off)
			break;
		const uint8_t *rec = f + off;
		size_t len = h.misc & (1u << 15) ? rec[32] : 20;
		const char *name = (const char *)rec + 36;
		if (len && len <= 20 && memchr(name, 0, h.size - 36) && !strcmp(name, "[vdso]") &&
		    !vdso_cache_load(dir, rec + 12, len, &e->vdso, &e->vdso_size))
			return;
		off += h.size;
	}
}

int sp_run(const char *path, const char *cmd, const struct sp_consumer *c)
{
	char errbuf[256] = "";
	struct hwt_perf_reader *r = NULL;
	int err = hwt_perf_reader_open(&r, path, errbuf, sizeof(errbuf));
	if (err) {
		if (err == HWT_ERR_IO)
			cli_err(cmd,
				"cannot open '%s': %s (record one with 'hwt record' or name the "
				"file with -i)",
				path, strerror(errno));
		else
			cli_err(cmd, "'%s' is not a valid perf.data file: %s", path, errbuf);
		return 2;
	}
	struct engine e;
	memset(&e, 0, sizeof(e));
	e.cmd = cmd;
	e.c = c;
	e.all = hwt_process_alloc(0);
	if (!e.all) {
		hwt_perf_reader_free(r);
		return 2;
	}
	/* AUXTRACE_INFO and the per-CPU queues first (they precede the data
	 * in perf's files; look anyway). */
	struct hwt_perf_record rec;
	int ret = 0, n_aux = 0, etm = 0;
	while ((ret = hwt_perf_reader_next(r, &rec)) == 1) {
		if (rec.type == HWT_PERF_RECORD_AUXTRACE_INFO && !e.have_info &&
		    rec.size >= sizeof(struct hwt_perf_rec_auxtrace_info)) {
			const struct hwt_perf_rec_auxtrace_info *ai = (const void *)rec.hdr;
			size_t nr = (rec.size - sizeof(*ai)) / 8;
			etm |= ai->type == HWT_PERF_AUXTRACE_CS_ETM;
			if (ai->type == HWT_PERF_AUXTRACE_INTEL_PT &&
			    !hwt_perf_intel_pt_info_parse(&e.info, (const uint64_t *)(ai + 1), nr))
				e.have_info = 1;
		} else if (rec.type == HWT_PERF_RECORD_AUXTRACE) {
			struct queue *q = queue_get(&e, rec.aux_idx);
			if (q) {
				q->tid = rec.sid.tid;
				q->cpu = rec.sid.cpu;
				q->per_cpu =
				    rec.sid.tid == (uint32_t)-1 || rec.sid.cpu != (uint32_t)-1;
				if (q->per_cpu && rec.sid.tid != (uint32_t)-1)
					q->per_cpu =
					    0; /* per-thread with a cpu: still per-thread */
			}
			n_aux++;
		} else {
			sp_tl_add(&e, &rec);
		}
	}
	sp_tl_attach(&e);
	if (ret < 0)
		cli_err(cmd, "'%s': %s (decoding what comes before)", path,
			hwt_perf_reader_errmsg(r));
	if (etm)
		cli_err(cmd,
			"'%s' is a CoreSight ETM (cs_etm) recording: hwt does not decode ETM "
			"trace yet; decode it with 'perf script -i %s' (OpenCSD) or list its "
			"packets with 'hwt dump %s'",
			path, path, path);
	else if (!n_aux)
		cli_err(cmd, "'%s' holds no AUX trace data (record with an intel_pt event)", path);
	if (!n_aux || etm) {
		for (size_t i = 0; i < e.nprocs; i++)
			hwt_process_free(e.procs[i].p);
		free(e.procs);
		free(e.queues);
		hwt_process_free(e.all);
		hwt_perf_reader_free(r);
		return 2;
	}
	setup_config(&e, r);
	load_vdso(&e, r);
	hwt_perf_reader_rewind(r);
	while (hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type == HWT_PERF_RECORD_AUXTRACE) {
			struct queue *q = queue_get(&e, rec.aux_idx);
			if (q && rec.aux_data && rec.aux_size && q->per_cpu)
				sp_cpu_chunk(&e, q, rec.aux_data, (size_t)rec.aux_size,
					     rec.aux_offset);
			else if (q && rec.aux_data && rec.aux_size)
				sp_on_chunk(&e, q, rec.aux_data, (size_t)rec.aux_size,
					    rec.aux_offset);
		} else {
			on_sideband(&e, &rec);
		}
	}
	for (size_t i = 0; i < e.nqueues; i++)
		if (!e.queues[i].per_cpu)
			sp_flush_carry(&e, &e.queues[i]);
	sp_cpu_decode_all(&e);
	int gaps = e.gaps;
	for (size_t i = 0; i < e.nqueues; i++) {
		free(e.queues[i].carry);
		free(e.queues[i].sw);
	}
	free(e.queues);
	for (size_t i = 0; i < e.nprocs; i++)
		hwt_process_free(e.procs[i].p);
	free(e.procs);
	for (size_t i = 0; i < e.nthreads; i++) {
		free(e.threads[i]->user);
		free(e.threads[i]);
	}
	free(e.threads);
	free(e.pend);
	hwt_pt_cache_free(e.pc);
	free(e.vdso);
	hwt_process_free(e.all);
	hwt_perf_reader_free(r);
	return gaps || ret < 0 ? 1 : 0;
}
