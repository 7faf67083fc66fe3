/* lib/pt/insn_flow.c - the instruction flow engine.
 *
 * Walks the code from the current ip, asking the query decoder how each
 * branch went, and decides where each event belongs:
 *  - "ip events" apply before the instruction at the current ip (enable,
 *    async branch/disable at their FUP ip, mode/TSX changes at their ip,
 *    overflow, power events, ...);
 *  - "instruction events" apply after a given instruction, which is then
 *    held back (postponed) and executed once the events are taken: a
 *    synchronous disable at the branch that left the traced area, a PIP at
 *    a far branch or MOV CR3, a VMCS at VMPTRLD/VMLAUNCH, a PTWRITE.
 * Decoded instructions are cached by (ip, image piece, mode) in a
 * direct-mapped table allocated once, so hot loops decode nothing and
 * allocate nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/x86.h"
#include "insn_int.h"

/* At most this many instructions after the end of the trace. */
#define FLOW_EOS_MAX_INSN 65536u

int flow_init(struct flow *f, const struct hwt_pt_config *cfg, const struct hwt_image *img,
	      const struct hwt_pt_flow_options *opt)
{
	memset(f, 0, sizeof(*f));
	if (opt)
		memcpy(&f->opt, opt, opt->size < sizeof(f->opt) ? opt->size : sizeof(f->opt));
	f->opt.size = sizeof(f->opt);
	f->q = hwt_pt_query_alloc(cfg, &f->opt.query);
	if (!f->q)
		return HWT_ERR_NOMEM;
	f->img = img;
	f->errata = cfg->errata;
	f->filter = cfg->addr_filter;
	f->cache = f->opt.cache;
	if (!f->cache) {
		f->cache = hwt_pt_cache_alloc();
		f->own_cache = 1;
	}
	if (!f->cache) {
		hwt_pt_query_free(f->q);
		return HWT_ERR_NOMEM;
	}
	cache_bind(f->cache, img);
	return 0;
}

void flow_fini(struct flow *f)
{
	hwt_pt_query_free(f->q);
	if (f->own_cache)
		hwt_pt_cache_free(f->cache);
}

int flow_sync_forward(struct flow *f)
{
	uint64_t ip = 0;
	int st = hwt_pt_query_sync_forward(f->q, &ip);
	if (st < 0)
		return st;
	f->synced = 1;
	f->eos_insns = 0;
	f->was_disabled = 0;
	f->postponed = 0;
	f->speculative = 0;
	f->mode = 0;
	retstack_clear(&f->rs);
	if (st & HWT_PTS_IP_SUPPRESSED) {
		f->enabled = 0;
		f->have_ip = 0;
	} else {
		f->enabled = 1;
		f->have_ip = 1;
		f->ip = ip;
	}
	return flow_status(f);
}

int flow_decode(struct flow *f, struct hwt_x86_insn *xi, int *truncated)
{
	struct hwt_image_span span;
	int err;
	int mode = f->mode ? f->mode : 64;

	*truncated = 0;
	if (!f->img)
		return HWT_ERR_NOMAP;
	err = hwt_image_lookup(f->img, f->ip, &span);
	if (err)
		return err;
	if (span.avail >= 15) {
		struct icache_entry *e =
		    &f->cache
			 ->icache[(f->ip ^ (f->ip >> 12) ^ span.id * 0x9e37u) & (ICACHE_SIZE - 1)];
		if (e->valid && e->ip == f->ip && e->id == span.id && e->mode == mode) {
			*xi = e->insn;
			return 0;
		}
		err = hwt_x86_decode(span.data, 15, f->ip, mode, xi);
		if (err)
			return err == HWT_ERR_NOMAP ? HWT_ERR_BAD_INSN : err;
		e->ip = f->ip;
		e->id = span.id;
		e->mode = (uint8_t)mode;
		e->valid = 1;
		e->insn = *xi;
		return 0;
	}
	uint8_t buf[15];
	int n = hwt_image_read(f->img, f->ip, buf, sizeof(buf));
	if (n < 0)
		return n;
	if ((uint64_t)n > span.avail)
		*truncated = 1;
	err = hwt_x86_decode(buf, (size_t)n, f->ip, mode, xi);
	if (err == HWT_ERR_NOMAP && n < 15)
		return HWT_ERR_NOMAP;
	return err;
}

static int is_far(const struct hwt_x86_insn *xi)
{
	return hwt_insn_is_far(xi->iclass);
}

/* BDM64: after a TSX abort the packets before it may be wrong.  Can the
 * flow reach the abort's ip without another branch?  If not, the abort
 * is taken where we are. */
static int abort_reachable(const struct flow *f, uint64_t ip)
{
	struct flow *mf = (struct flow *)f;
	uint64_t save = mf->ip;
	int res = 0;
	for (int i = 0; i < 64; i++) {
		struct hwt_x86_insn xi;
		int tr;
		if (mf->ip == ip) {
			res = 1;
			break;
		}
		if (flow_decode(mf, &xi, &tr))
			break;
		if (xi.iclass != HWT_INSN_OTHER && xi.iclass != HWT_INSN_PTWRITE)
			break;
		mf->ip += xi.size;
	}
	mf->ip = save;
	return res;
}

int flow_event_applies(const struct flow *f, const struct hwt_pt_event *ev)
{
	switch (ev->type) {
	case HWT_EV_DISABLED:
	case HWT_EV_PAGING:
	case HWT_EV_VMCS:
	case HWT_EV_STOP:
		return !f->enabled;
	case HWT_EV_PTWRITE:
		return !f->enabled;
	case HWT_EV_ASYNC_DISABLED:
		if (!f->enabled || !f->have_ip)
			return 1;
		/* TNT bits before the FUP belong to branches before the event
		 * (a loop may pass its ip several times first) */
		if (f->ip != ev->u.async_disabled.at || qry_tnt_cached(f->q))
			return 0;
		if (f->errata.skd022) {
			/* SKD022: a VM entry that clears TraceEn may send a
			 * FUP; the disable then follows the VMLAUNCH/VMRESUME */
			struct hwt_x86_insn xi;
			int tr;
			struct flow *mf = (struct flow *)f;
			if (!flow_decode(mf, &xi, &tr) && (xi.flags & HWT_INSN_F_VMENTRY))
				return 0;
		}
		return 1;
	case HWT_EV_ASYNC_BRANCH:
		return !f->enabled || !f->have_ip ||
		       (f->ip == ev->u.async_branch.from && !qry_tnt_cached(f->q));
	case HWT_EV_TSX:
		if (ev->ip_suppressed || !f->enabled || !f->have_ip || f->ip == ev->ip)
			return 1;
		return f->errata.bdm64 && ev->u.tsx.aborted && !abort_reachable(f, ev->ip);
	case HWT_EV_EXEC_MODE:
	case HWT_EV_IFLAGS:
	case HWT_EV_EXSTOP:
	case HWT_EV_MWAIT:
	case HWT_EV_ASYNC_PAGING:
	case HWT_EV_ASYNC_VMCS:
		return ev->ip_suppressed || !f->enabled || !f->have_ip || f->ip == ev->ip;
	case HWT_EV_IRET:
	case HWT_EV_UIRET:
	case HWT_EV_VMENTRY:
		return !f->enabled;
	case HWT_EV_INTERRUPT:
	case HWT_EV_SMI:
	case HWT_EV_RSM:
	case HWT_EV_INIT:
	case HWT_EV_SIPI:
	case HWT_EV_SHUTDOWN:
	case HWT_EV_SYSCALL:
	case HWT_EV_SWINTR:
	case HWT_EV_UINTR:
	case HWT_EV_VMEXIT:
		return ev->ip_suppressed || !f->enabled || !f->have_ip || f->ip == ev->ip;
	case HWT_EV_TRIG:
		if (!f->enabled)
			return 1;
		if (!ev->ip_suppressed)
			return !f->have_ip || f->ip == ev->ip;
		return !ev->u.trig.icntv || !ev->u.trig.icnt;
	default:
		return 1;
	}
}

/* SKL014: a TIP.PGD may lack its ip when a direct branch leaves the
 * address filter ranges.  Is target outside every filter range? */
static int leaves_filter(const struct flow *f, uint64_t target)
{
	int any = 0;
	for (int i = 0; i < HWT_PT_MAX_ADDR_RANGES; i++) {
		if (f->filter.cfg[i] != 1)
			continue;
		any = 1;
		if (target >= f->filter.a[i] && target <= f->filter.b[i])
			return 0;
	}
	return any;
}

int flow_event_binds(const struct flow *f, const struct hwt_pt_event *ev,
		     const struct hwt_x86_insn *xi)
{
	switch (ev->type) {
	case HWT_EV_ASYNC_DISABLED:
		return f->errata.skd022 && (xi->flags & HWT_INSN_F_VMENTRY) &&
		       xi->ip == ev->u.async_disabled.at;
	case HWT_EV_DISABLED:
		if (ev->ip_suppressed) {
			if (xi->iclass == HWT_INSN_RET)
				return !qry_tnt_cached(f->q);
			if (f->errata.skl014 && (xi->flags & HWT_INSN_F_DIRECT) &&
			    (xi->iclass == HWT_INSN_JMP || xi->iclass == HWT_INSN_CALL) &&
			    leaves_filter(f, xi->target))
				return 1;
			return hwt_insn_is_indirect(xi->iclass) || (xi->flags & HWT_INSN_F_MOV_CR3);
		}
		switch (xi->iclass) {
		case HWT_INSN_JCC:
			if (qry_tnt_cached(f->q))
				return 0;
			return xi->target == ev->ip || xi->ip + xi->size == ev->ip;
		case HWT_INSN_JMP:
		case HWT_INSN_CALL:
			return xi->target == ev->ip;
		case HWT_INSN_OTHER:
		case HWT_INSN_PTWRITE:
			return 0;
		case HWT_INSN_RET:
			/* a compressed return would use a TNT bit */
			return !qry_tnt_cached(f->q);
		default:
			return 1;
		}
	case HWT_EV_PAGING:
		return is_far(xi) || (xi->flags & (HWT_INSN_F_MOV_CR3 | HWT_INSN_F_VMENTRY));
	case HWT_EV_VMCS:
		return is_far(xi) || (xi->flags & (HWT_INSN_F_VMPTRLD | HWT_INSN_F_VMENTRY));
	case HWT_EV_PTWRITE:
		if (ev->ip_suppressed)
			return xi->iclass == HWT_INSN_PTWRITE;
		return xi->ip == ev->ip;
	case HWT_EV_IRET:
	case HWT_EV_UIRET:
	case HWT_EV_VMENTRY:
		if (ev->ip_suppressed)
			return is_far(xi);
		return xi->ip == ev->ip;
	default:
		return 0;
	}
}

static int next_is_tnt(struct flow *f)
{
	struct hwt_pt_query *q = f->q;
	if (qry_tnt_cached(q))
		return 1;
	if (!q->la_valid) {
		uint64_t off;
		hwt_pt_pkt_offset(q->pd, &off);
		if (hwt_pt_pkt_next(q->pd, &q->la) < 0)
			return 0;
		q->la_off = off;
		q->la_valid = 1;
	}
	return q->la.type == HWT_PKT_TNT8 || q->la.type == HWT_PKT_TNT64;
}

static int indirect(struct flow *f, uint64_t *ip)
{
	int st = hwt_pt_query_indirect_branch(f->q, ip);
	if (st < 0)
		return st;
	if (st & HWT_PTS_IP_SUPPRESSED)
		return HWT_ERR_NOIP;
	return 0;
}

/* Count an executed instruction for triggers waiting for their count
 * (from the point where all earlier branches are resolved). */
static void count_trig(struct flow *f)
{
	struct hwt_pt_event *ev;
	for (int i = 0; (ev = qry_ready(f->q, i)); i++) {
		if (ev->type != HWT_EV_TRIG || !ev->ip_suppressed || !ev->u.trig.icntv ||
		    !ev->u.trig.icnt)
			continue;
		/* counts run one after the other, from where all branches
		 * before the trigger are resolved */
		if (!ev->u.trig.armed) {
			if (!qry_tnt_cached(f->q))
				ev->u.trig.armed = 1;
		} else {
			ev->u.trig.icnt--;
		}
		return;
	}
}

static int proceed(struct flow *f, const struct hwt_x86_insn *xi);

int flow_proceed(struct flow *f, const struct hwt_x86_insn *xi)
{
	f->q->in_proceed = 1;
	int err = proceed(f, xi);
	f->q->in_proceed = 0;
	if (!err)
		count_trig(f);
	return err;
}

int flow_proceed_jcc(struct flow *f, const struct run *r)
{
	/* hwt_pt_query_cond_branch with a bit cached and no tick due, then
	 * what flow_proceed does around it */
	struct hwt_pt_query *q = f->q;
	q->in_proceed = 1;
	q->tnt_n--;
	int taken = (int)((q->tnt_bits >> q->tnt_n) & 1);
	/* qry_read_ahead's way over the timing packets up to the next TNT,
	 * without its other cases (it takes over at any other packet) */
	int ended = 0; /* the end or an error: as qry_read_ahead ends there */
	while (!q->la_valid && !q->err && !q->nready && !q->fup_pending && q->pd->synced) {
		if (qry_next_tnt8(q)) {
			q->la_valid = 1;
			break; /* (the TNT case below) */
		}
		uint64_t at = q->pd->pos;
		int rc = hwt_pt_pkt_next(q->pd, &q->la);
		if (rc == HWT_ERR_EOS) {
			q->eos = 1;
			ended = 1;
			break;
		}
		if (rc < 0) {
			q->err = rc;
			q->err_off = at;
			ended = 1;
			break;
		}
		q->la_off = at;
		q->la_valid = 1;
		int t = q->la.type;
		if (t != HWT_PKT_MTC && t != HWT_PKT_CYC && t != HWT_PKT_TSC && t != HWT_PKT_TMA)
			break;
		if (qry_time_packet(q, &q->la, 0) && q->opt.enable_tick_events)
			q->tick_pending = 1; /* reported with the next branch */
		q->la_valid = 0;
	}
	if (!ended)
		qry_read_ahead(q);
	q->in_proceed = 0;
	f->ip = taken ? r->target : r->ip + r->last + r->size;
	if (q->nready)
		count_trig(f);
	return 0;
}

static int proceed(struct flow *f, const struct hwt_x86_insn *xi)
{
	uint64_t next = xi->ip + xi->size, ip;
	int st, taken;

	switch (xi->iclass) {
	case HWT_INSN_OTHER:
	case HWT_INSN_PTWRITE:
		f->ip = next;
		return 0;
	case HWT_INSN_JCC:
		st = hwt_pt_query_cond_branch(f->q, &taken);
		if (st < 0)
			return st;
		f->ip = taken ? xi->target : next;
		return 0;
	case HWT_INSN_JMP:
		if (flow_no_trace_cycle(f, xi->ip))
			return HWT_ERR_BAD_QUERY;
		f->ip = xi->target;
		return 0;
	case HWT_INSN_CALL:
		if (flow_no_trace_cycle(f, xi->ip))
			return HWT_ERR_BAD_QUERY;
		if (xi->target != next)
			retstack_push(&f->rs, next);
		f->ip = xi->target;
		return 0;
	case HWT_INSN_RET:
		if (next_is_tnt(f)) {
			st = hwt_pt_query_cond_branch(f->q, &taken);
			if (st < 0)
				return st;
			if (!taken)
				return HWT_ERR_BAD_RETCOMP;
			return retstack_pop(&f->rs, &f->ip);
		}
		st = indirect(f, &ip);
		if (st)
			return st;
		f->ip = ip;
		return 0;
	case HWT_INSN_CALL_IND:
		st = indirect(f, &ip);
		if (st)
			return st;
		retstack_push(&f->rs, next);
		f->ip = ip;
		return 0;
	default:
		st = indirect(f, &ip);
		if (st)
			return st;
		f->ip = ip;
		return 0;
	}
}

/* The pending event, completing an async branch whose FUP ip the flow
 * has reached. */
static const struct hwt_pt_event *head(struct flow *f)
{
	const struct hwt_pt_event *ev = hwt_pt_query_peek(f->q);
	if (!ev && f->q->fup_pending &&
	    (!f->enabled || !f->have_ip || f->ip == f->q->fup_ip || f->resyncing)) {
		qry_complete_async(f->q);
		ev = hwt_pt_query_peek(f->q);
	}
	if (ev && f->resyncing && !ev->ip_suppressed && ev->type != HWT_EV_DISABLED &&
	    ev->type != HWT_EV_TICK && ev->type != HWT_EV_ENABLED) {
		/* resync: the first event with an ip tells where we are */
		f->resyncing = 0;
		f->enabled = 1;
		f->have_ip = 1;
		f->ip = ev->type == HWT_EV_ASYNC_BRANCH	    ? ev->u.async_branch.from
			: ev->type == HWT_EV_ASYNC_DISABLED ? ev->u.async_disabled.at
							    : ev->ip;
	}
	return ev;
}

int flow_status(struct flow *f)
{
	const struct hwt_pt_event *ev = head(f);
	int st = 0;
	if (ev) {
		if (f->postponed || f->resyncing || flow_event_applies(f, ev))
			st |= HWT_PTS_EVENT_PENDING;
	} else if (f->q->eos && !qry_tnt_cached(f->q) && !f->q->err) {
		st |= HWT_PTS_EOS;
	}
	if (!f->enabled)
		st |= HWT_PTS_IP_SUPPRESSED;
	return st;
}

int flow_event(struct flow *f, struct hwt_pt_event *ev)
{
	const struct hwt_pt_event *hd = head(f);
	if (!hd) {
		if (f->q->err)
			return f->q->err;
		return HWT_ERR_BAD_QUERY;
	}
	int st = hwt_pt_query_event(f->q, ev);
	if (st < 0)
		return st;
	if (f->resyncing && ev->type == HWT_EV_ENABLED)
		f->resyncing = 0;
	switch (ev->type) {
	case HWT_EV_ENABLED:
		ev->u.enabled.resumed =
		    !ev->ip_suppressed && f->was_disabled && f->have_ip && f->ip == ev->ip;
		f->enabled = !ev->ip_suppressed;
		if (!ev->ip_suppressed) {
			f->ip = ev->ip;
			f->have_ip = 1;
		}
		break;
	case HWT_EV_DISABLED:
		f->was_disabled = 1;
		if (f->postponed) {
			f->ip = f->pinsn.ip + f->pinsn.size;
			f->have_ip = 1;
		}
		f->postponed = 0;
		f->enabled = 0;
		if (!ev->ip_suppressed) {
			f->ip = ev->ip;
			f->have_ip = 1;
		}
		break;
	case HWT_EV_ASYNC_DISABLED:
		f->was_disabled = 1;
		f->postponed = 0;
		f->enabled = 0;
		f->ip = ev->u.async_disabled.at;
		f->have_ip = 1;
		break;
	case HWT_EV_ASYNC_BRANCH:
		if (!ev->ip_suppressed) {
			f->ip = ev->ip;
			f->have_ip = 1;
		}
		break;
	case HWT_EV_OVERFLOW:
		retstack_clear(&f->rs);
		f->postponed = 0;
		f->speculative = 0;
		if (ev->ip_suppressed) {
			f->enabled = 0;
			f->have_ip = 0;
		} else {
			f->enabled = 1;
			f->have_ip = 1;
			f->ip = ev->ip;
		}
		break;
	case HWT_EV_EXEC_MODE:
		f->mode = ev->u.exec_mode.mode;
		break;
	case HWT_EV_TSX:
		f->speculative = ev->u.tsx.speculative && !ev->u.tsx.aborted;
		if (ev->u.tsx.aborted && !ev->ip_suppressed && f->enabled) {
			f->ip = ev->ip; /* BDM64: the abort happened here */
			f->have_ip = 1;
		}
		break;
	case HWT_EV_STOP:
		f->enabled = 0;
		break;
	case HWT_EV_TRIG:
		if (ev->ip_suppressed && f->have_ip && f->enabled) {
			ev->ip = f->ip;
			ev->ip_suppressed = 0;
		}
		break;
	case HWT_EV_TICK:
		if (f->have_ip && f->enabled) {
			ev->ip = f->ip;
			ev->ip_suppressed = 0;
		}
		break;
	default:
		break;
	}
	if (f->postponed) {
		const struct hwt_pt_event *nx = hwt_pt_query_peek(f->q);
		if (!nx || !flow_event_binds(f, nx, &f->pinsn) || nx->type == ev->type) {
			f->postponed = 0;
			int err = flow_proceed(f, &f->pinsn);
			if (err < 0)
				return err;
		}
	}
	st = flow_status(f);
	return st;
}

/* Is the FUP ahead (if any) due at instruction xi? */
static int fup_due(const struct flow *f, const struct hwt_x86_insn *xi)
{
	const struct hwt_pt_query *q = f->q;
	struct hwt_pt_last_ip lip = q->lip;
	uint64_t ip;
	if (!q->la_valid || q->la.type != HWT_PKT_FUP || !q->nwait)
		return 1;
	for (int i = 0; i < q->nwait; i++)
		if (f->errata.bdm64 && q->wait[i].type == HWT_EV_TSX && q->wait[i].u.tsx.aborted)
			return 1; /* BDM64: the abort may bind before its ip */
	if (xi->iclass != HWT_INSN_OTHER && xi->iclass != HWT_INSN_PTWRITE &&
	    xi->iclass != HWT_INSN_JMP && xi->iclass != HWT_INSN_CALL)
		return 1;
	if (hwt_pt_last_ip_update(&lip, q->la.u.ip.ipc, q->la.u.ip.ip) ||
	    hwt_pt_last_ip_query(&lip, &ip))
		return 1;
	return ip == f->ip;
}

/* Is the flow, about to take the direct jump or call at ip, in a cycle
 * that needs no trace and so never ends?  In the middle of the trace only
 * a trace that does not match the code (an event whose ip the cycle never
 * reaches, a branch answer no instruction asks for) leaves it there; past
 * the end FLOW_EOS_MAX_INSN bounds the flow instead.  Brent's method: the
 * jump and the state of the trace are saved after 1, 2, 4, ... jumps;
 * meeting both again is a cycle.  Trace taken in between (packets, TNT
 * bits, events, a trigger counting instructions) starts over. */
int flow_no_trace_cycle(struct flow *f, uint64_t ip)
{
	const struct hwt_pt_query *q = f->q;
	const struct hwt_pt_event *ev;
	if (f->eos_insns && q->eos)
		return 0;
	uint64_t pos = qry_pos(q);
	int flags = q->eos | q->fup_pending << 1;
	int same = pos == f->cyc.pos && q->tnt_n == f->cyc.tnt_n && q->nready == f->cyc.nready &&
		   q->nwait == f->cyc.nwait && flags == f->cyc.flags && f->cyc.lim;

	for (int i = 0; same && (ev = qry_ready(f->q, i)); i++)
		if (ev->type == HWT_EV_TRIG && ev->ip_suppressed && ev->u.trig.icntv)
			same = 0; /* counting down: not a cycle */
	if (same && ip == f->cyc.ip)
		return 1;
	if (same && ++f->cyc.n < f->cyc.lim)
		return 0;
	f->cyc.lim = same ? f->cyc.lim * 2 : 1;
	f->cyc.n = 0;
	f->cyc.ip = ip;
	f->cyc.pos = pos;
	f->cyc.tnt_n = q->tnt_n;
	f->cyc.nready = q->nready;
	f->cyc.nwait = q->nwait;
	f->cyc.flags = flags;
	return 0;
}

int flow_step(struct flow *f, struct hwt_x86_insn *xi, int *have_insn, int *truncated)
{
	int err, st;
	const struct hwt_pt_event *ev;

	*have_insn = 0;
	*truncated = 0;
	f->err_deferred = 0;
	if (f->postponed) {
		f->postponed = 0;
		err = flow_proceed(f, &f->pinsn);
		if (err < 0)
			return err;
	}
	ev = hwt_pt_query_peek(f->q);
	if (ev && (f->resyncing || flow_event_applies(f, ev)))
		return flow_status(f);
	if (f->resyncing && !ev)
		return flow_resync(f);
	if (!ev && f->q->err) {
		f->err_deferred = f->q->err != HWT_ERR_BAD_STATUS_UPDATE;
		return f->q->err;
	}
	if (!f->enabled) {
		qry_fetch(f->q);
		ev = head(f);
		if (ev)
			return flow_status(f);
		if (f->q->err)
			return f->q->err;
		if (f->q->eos)
			return HWT_ERR_EOS; /* disabled at the end: nothing more */
		return HWT_ERR_NO_ENABLE;
	}
	/* At the end of the trace (HWT_PTS_EOS was reported) the flow goes
	 * on through instructions that need no trace; the first one that
	 * does is returned with HWT_ERR_EOS.  A bound keeps a loop of direct
	 * jumps from running forever. */
	if (!ev && !f->q->nwait && !f->q->fup_pending && f->q->eos && !qry_tnt_cached(f->q) &&
	    ++f->eos_insns > FLOW_EOS_MAX_INSN)
		return HWT_ERR_EOS;
	err = flow_decode(f, xi, truncated);
	if (err < 0)
		return err;
	/* now take what the trace says about this instruction: a FUP that
	 * gives waiting events their ip is read when the flow reaches that
	 * ip, or before the next branch answer (which comes after it) */
	if (fup_due(f, xi))
		qry_fetch(f->q);
	ev = head(f);
	if (ev && flow_event_applies(f, ev))
		return flow_status(f);
	if (!ev && f->q->err) {
		f->err_deferred = f->q->err != HWT_ERR_BAD_STATUS_UPDATE;
		return f->q->err;
	}
	*have_insn = 1;
	if (ev && f->enabled && flow_event_binds(f, ev, xi)) {
		f->postponed = 1;
		f->pinsn = *xi;
		return flow_status(f) | HWT_PTS_EVENT_PENDING;
	}
	err = flow_proceed(f, xi);
	if (err < 0)
		return err;
	st = flow_status(f);
	return st;
}

int flow_resync(struct flow *f)
{
	struct hwt_pt_query *q = f->q;
	struct hwt_pt_packet *p;

	f->postponed = 0;
	q->tnt_n = 0;
	f->resyncing = 1;
	for (;;) {
		qry_fetch(q);
		if (q->fup_pending)
			qry_complete_async(q);
		if (q->nready)
			return flow_status(f);
		if (q->err)
			return q->err;
		if (q->eos) {
			f->resyncing = 0;
			return flow_status(f);
		}
		if (!q->la_valid) {
			uint64_t off;
			hwt_pt_pkt_offset(q->pd, &off);
			int r = hwt_pt_pkt_next(q->pd, &q->la);
			if (r == HWT_ERR_EOS) {
				q->eos = 1;
				continue;
			}
			if (r < 0)
				return r;
			q->la_off = off;
			q->la_valid = 1;
		}
		if (q->la.type == HWT_PKT_TNT8 || q->la.type == HWT_PKT_TNT64) {
			q->la_valid = 0;
			continue;
		}
		if (q->la.type == HWT_PKT_TIP_PGE && f->enabled) {
			/* tracing was disabled somewhere we lost */
			f->enabled = 0;
			qry_push_disabled(q);
			continue;
		}
		if (q->la.type == HWT_PKT_TIP && !q->fup_pending) {
			uint64_t ip;
			int st = hwt_pt_query_indirect_branch(q, &ip);
			if (st < 0)
				return st;
			f->resyncing = 0;
			if (!(st & HWT_PTS_IP_SUPPRESSED)) {
				f->ip = ip;
				f->have_ip = 1;
				f->enabled = 1;
			}
			return flow_status(f);
		}
		qry_read_ahead(q);
		(void)p;
	}
}

void *flow_alloc(size_t size, const struct hwt_pt_config *cfg, const struct hwt_image *img,
		 const struct hwt_pt_flow_options *opt)
{
	if (!cfg || cfg->size < sizeof(*cfg) || size < sizeof(struct flow))
		return NULL;
	struct flow *f = calloc(1, size);
	if (!f)
		return NULL;
	if (flow_init(f, cfg, img, opt)) {
		free(f);
		return NULL;
	}
	return f;
}

void flow_free(struct flow *f)
{
	if (!f)
		return;
	flow_fini(f);
	free(f);
}
