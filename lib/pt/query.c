/* lib/pt/query.c - the query decoder: packets -> branch answers and events.
 *
 * Design (from the SDM's description of how packets bind to instructions):
 *  - TNT bits answer conditional branches (and compressed returns), TIP
 *    packets answer indirect branches; both are "query packets" that are
 *    only consumed when the flow decoder asks.
 *  - Everything else is read ahead after each answer, up to the next query
 *    packet or until an event is ready.  Events that need an IP (MODE.EXEC,
 *    MODE.TSX, PIP/VMCS inside an async branch, EXSTOP/PTW with IP, MWAIT,
 *    OVF) wait in a small list until the FUP or TIP that gives it; a FUP
 *    with nothing waiting starts an asynchronous branch that the next TIP
 *    (interrupt) or TIP.PGD (async disable) completes.
 *  - A PSB+ is read as a whole, once the cached TNT bits are used up (they
 *    answer branches before it); its FUP/MODE packets become status-update
 *    events.  CFE/EVD packets (event trace) become events of their own.
 *  - Errors met while reading ahead are kept and returned by the next call
 *    (after any events that were ready before them).
 * Memory: fixed-size queues, no allocation after hwt_pt_query_alloc.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_flow.h"
#include "hwt/pt_packet.h"
#include "packet_int.h"
#include "query_int.h"

static void ev_clear(struct hwt_pt_event *ev, int type)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = (uint8_t)type;
}

static struct hwt_pt_event *ready_push(struct hwt_pt_query *q)
{
	if (q->nready == QRY_MAXEV)
		return NULL;
	struct hwt_pt_event *ev = &q->ready[(q->rhead + q->nready) % QRY_MAXEV];
	q->nready++;
	return ev;
}

static int wait_push(struct hwt_pt_query *q, const struct hwt_pt_event *ev);
static int push(struct hwt_pt_query *q, const struct hwt_pt_event *ev);

/* A standalone event: ready now, unless earlier events still wait for
 * their ip (then it waits behind them, to keep the order). */
static int push_or_wait(struct hwt_pt_query *q, const struct hwt_pt_event *ev)
{
	struct hwt_pt_event e = *ev;
	e.ip_suppressed = 1;
	if (q->nwait)
		return wait_push(q, &e);
	return push(q, &e);
}

static int push(struct hwt_pt_query *q, const struct hwt_pt_event *ev)
{
	struct hwt_pt_event *e = ready_push(q);
	if (!e)
		return HWT_ERR_INTERNAL;
	*e = *ev;
	qry_stamp(q, e);
	return 0;
}

static int wait_push(struct hwt_pt_query *q, const struct hwt_pt_event *ev)
{
	if (q->nwait == QRY_MAXWAIT)
		return HWT_ERR_INTERNAL;
	q->wait[q->nwait++] = *ev;
	return 0;
}

/* Give the waiting events an ip (or none) and make them ready.  Events
 * that wanted the ip come first, then power entries (which complete with
 * the EXSTOP), then standalone events that queued up behind them.  At an
 * overflow (no ip) with an incomplete EXSTOP the power entry goes first. */
static int wait_class(const struct hwt_pt_event *ev)
{
	if (ev->type == HWT_EV_EXSTOP)
		return 0;
	return ev->type == HWT_EV_PWRE ? 1 : ev->ip_suppressed ? 2 : 0;
}

/* May the FUP that gives this event its ip also be the source of an
 * asynchronous branch (interrupt, abort)? */
static int async_capable(const struct hwt_pt_event *ev)
{
	switch (ev->type) {
	case HWT_EV_EXEC_MODE:
	case HWT_EV_IFLAGS:
	case HWT_EV_TRIG:
	case HWT_EV_IRET:
	case HWT_EV_UIRET:
	case HWT_EV_VMENTRY:
	case HWT_EV_NTYPES:
		return 0;
	case HWT_EV_TSX:
		/* only an abort is a branch (FUP + TIP/TIP.PGD to the
		 * handler); the FUP of a begin or commit just names the
		 * XBEGIN/XEND */
		return ev->u.tsx.aborted;
	default:
		return 1;
	}
}

static int flush_class(struct hwt_pt_query *q, const uint8_t *cls, int want, int have_ip,
		       uint64_t ip)
{
	for (int i = 0; i < q->nwait; i++) {
		struct hwt_pt_event *ev = &q->wait[i];
		if (cls[i] != want)
			continue;
		if (!ev->ip_suppressed) {
			if (have_ip)
				ev->ip = ip;
			else
				ev->ip_suppressed = 1;
		}
		if (!async_capable(ev))
			q->fup_noasync = 1;
		if (ev->type == HWT_EV_NTYPES)
			continue; /* a placeholder: it only took the ip */
		int err = push(q, ev);
		if (err)
			return err;
	}
	return 0;
}

static int wait_flush(struct hwt_pt_query *q, int have_ip, uint64_t ip)
{
	static const int normal[3] = {0, 1, 2}, pwre_first[3] = {1, 0, 2};
	const int *order = normal;
	int err = 0;
	if (!have_ip)
		for (int i = 0; i < q->nwait; i++)
			if (q->wait[i].type == HWT_EV_EXSTOP && !q->wait[i].ip_suppressed)
				order = pwre_first;
	uint8_t cls[QRY_MAXWAIT];
	for (int i = 0; i < q->nwait; i++)
		cls[i] = (uint8_t)wait_class(&q->wait[i]);
	for (int k = 0; k < 3 && !err; k++)
		err = flush_class(q, cls, order[k], have_ip, ip);
	q->nwait = 0;
	return err;
}

void qry_stamp(struct hwt_pt_query *q, struct hwt_pt_event *ev)
{
	uint64_t tsc;
	uint32_t lm, lc;
	if (qry_time(q, &tsc, &lm, &lc) == 0) {
		ev->has_tsc = 1;
		ev->tsc = tsc;
		ev->lost_mtc = lm;
		ev->lost_cyc = lc;
	}
}

/* ---- packet access with one packet of lookahead ---- */

static int peek(struct hwt_pt_query *q, struct hwt_pt_packet **pkt)
{
	if (!q->la_valid) {
		/* (a TNT-8, the most common packet, the short way) */
		if (!pkt_next_tnt8(q->pd, &q->la, &q->la_off)) {
			uint64_t off;
			hwt_pt_pkt_offset(q->pd, &off);
			int r = hwt_pt_pkt_next(q->pd, &q->la);
			if (r < 0)
				return r;
			q->la_off = off;
		}
		q->la_valid = 1;
	}
	*pkt = &q->la;
	return 0;
}

static void consume(struct hwt_pt_query *q)
{
	q->la_valid = 0;
}

uint64_t qry_pos(const struct hwt_pt_query *q)
{
	uint64_t off = 0;
	if (q->la_valid)
		return q->la_off;
	hwt_pt_pkt_offset(q->pd, &off);
	return off;
}

static int ip_update(struct hwt_pt_query *q, const struct hwt_pt_packet *p, uint64_t *ip)
{
	int err = hwt_pt_last_ip_update(&q->lip, p->u.ip.ipc, p->u.ip.ip);
	if (err)
		return err;
	if (p->u.ip.ipc == HWT_IPC_SUPPRESSED)
		return HWT_ERR_IP_SUPPRESSED;
	return hwt_pt_last_ip_query(&q->lip, ip);
}

static int exec_mode_of(const struct hwt_pt_packet *p)
{
	if (p->u.mode_exec.csl)
		return p->u.mode_exec.csd ? HWT_EXEC_UNKNOWN : HWT_EXEC_64;
	return p->u.mode_exec.csd ? HWT_EXEC_32 : HWT_EXEC_16;
}

/* ---- PSB+ ---- */

/* Read a PSB+ (the PSB is the lookahead packet).  Status events are made
 * ready at PSBEND.  *ip gets the FUP's ip; returns 0 with the ip, or
 * HWT_ERR_IP_SUPPRESSED / HWT_ERR_NOIP, or another error. */
static int read_psb(struct hwt_pt_query *q, int initial, uint64_t *ip)
{
	struct hwt_pt_packet *p;
	int err, have_fup = 0, ipres = HWT_ERR_NOIP, have_mode = 0, have_tsx = 0;
	int mode = 0, iflag = 0;
	struct hwt_pt_packet tsx = {0};
	uint64_t fup_ip = 0;

	q->sync_off = qry_pos(q);
	consume(q);
	qry_time_psb(q);
	hwt_pt_last_ip_init(&q->lip);
	q->tnt_n = 0;
	q->fup_pending = 0;
	q->nwait = 0;
	int ovf = q->ovf_pending;
	q->ovf_pending = 0;
	for (;;) {
		uint64_t at = qry_pos(q);
		err = peek(q, &p);
		if (err)
			return err;
		switch (p->type) {
		case HWT_PKT_PSBEND:
			if (!initial)
				goto end; /* read ahead takes the PSBEND later */
			consume(q);
			qry_time_psbend(q);
			goto end;
		case HWT_PKT_PAD:
		case HWT_PKT_INVALID:
			break;
		case HWT_PKT_TSC:
		case HWT_PKT_TMA:
		case HWT_PKT_MTC:
		case HWT_PKT_CYC:
		case HWT_PKT_CBR:
			qry_time_packet(q, p, 1);
			break;
		case HWT_PKT_FUP:
			ipres = ip_update(q, p, &fup_ip);
			if (ipres == HWT_ERR_BAD_PACKET)
				return ipres;
			have_fup = 1;
			break;
		case HWT_PKT_MODE_EXEC:
			mode = exec_mode_of(p);
			iflag = p->u.mode_exec.iflag;
			if (!initial && q->enabled && q->mode && mode != q->mode) {
				q->err_off = at;
				return HWT_ERR_BAD_STATUS_UPDATE;
			}
			have_mode = 1;
			break;
		case HWT_PKT_MODE_TSX:
			tsx = *p;
			have_tsx = 1;
			break;
		case HWT_PKT_PIP:
			q->cr3 = p->u.pip.cr3;
			break;
		case HWT_PKT_VMCS:
			q->vmcs = p->u.vmcs.base;
			break;
		case HWT_PKT_MNT: {
			struct hwt_pt_event ev;
			ev_clear(&ev, HWT_EV_MNT);
			ev.ip_suppressed = 1;
			ev.u.mnt.payload = p->u.mnt.payload;
			consume(q);
			push(q, &ev);
			continue;
		}
		case HWT_PKT_OVF:
			/* an overflow ends the PSB+; read ahead handles it */
			goto end;
		default:
			q->err_off = at;
			return HWT_ERR_BAD_CONTEXT;
		}
		consume(q);
	}
end:
	(void)have_fup;
	q->enabled = ipres == 0;
	if (ovf) {
		struct hwt_pt_event ev;
		ev_clear(&ev, HWT_EV_OVERFLOW);
		ev.ip = fup_ip;
		ev.ip_suppressed = ipres != 0;
		push(q, &ev);
	}
	if (have_mode) {
		struct hwt_pt_event ev;
		ev_clear(&ev, HWT_EV_EXEC_MODE);
		ev.status_update = 1;
		ev.u.exec_mode.mode = (uint8_t)mode;
		ev.ip = fup_ip;
		ev.ip_suppressed = ipres != 0;
		q->mode = mode;
		q->iflag = iflag;
		q->have_iflag = 1;
		push(q, &ev);
	}
	if (have_tsx) {
		struct hwt_pt_event ev;
		ev_clear(&ev, HWT_EV_TSX);
		ev.status_update = 1;
		ev.u.tsx.speculative = tsx.u.mode_tsx.intx;
		ev.u.tsx.aborted = tsx.u.mode_tsx.abrt;
		ev.ip = fup_ip;
		ev.ip_suppressed = ipres != 0;
		push(q, &ev);
	}
	if (!ipres)
		*ip = fup_ip;
	return ipres;
}

/* ---- overflow ---- */

/* The first packet after an OVF that is not timing or padding (and, with
 * the SKD010 erratum, not a MODE either): its type, or -1. */
static int ovf_next(struct hwt_pt_query *q)
{
	uint64_t save;
	struct hwt_pt_packet p;
	int res = -1;
	hwt_pt_pkt_offset(q->pd, &save);
	for (;;) {
		if (hwt_pt_pkt_next(q->pd, &p) < 0)
			break;
		if (p.type == HWT_PKT_PAD || p.type == HWT_PKT_TSC || p.type == HWT_PKT_TMA ||
		    p.type == HWT_PKT_MTC || p.type == HWT_PKT_CYC || p.type == HWT_PKT_CBR ||
		    p.type == HWT_PKT_MNT || p.type == HWT_PKT_INVALID)
			continue;
		if (q->cfg.errata.skd010 &&
		    (p.type == HWT_PKT_MODE_TSX || p.type == HWT_PKT_MODE_EXEC))
			continue;
		res = p.type;
		break;
	}
	hwt_pt_pkt_sync_set(q->pd, save);
	return res;
}

/* APL12: is the FUP after an OVF followed (past VMCS/PIP/MODE/timing)
 * by a TIP.PGE or a PSB, i.e. not the resume ip? */
static int ovf_fup_bogus(struct hwt_pt_query *q)
{
	uint64_t save;
	struct hwt_pt_packet p;
	int res = 0, seen_fup = 0;
	hwt_pt_pkt_offset(q->pd, &save);
	while (hwt_pt_pkt_next(q->pd, &p) >= 0) {
		if (p.type == HWT_PKT_FUP && !seen_fup) {
			seen_fup = 1;
			continue;
		}
		if (p.type == HWT_PKT_PAD || p.type == HWT_PKT_TSC || p.type == HWT_PKT_TMA ||
		    p.type == HWT_PKT_MTC || p.type == HWT_PKT_CYC || p.type == HWT_PKT_CBR ||
		    p.type == HWT_PKT_VMCS || p.type == HWT_PKT_PIP ||
		    p.type == HWT_PKT_MODE_EXEC || p.type == HWT_PKT_MODE_TSX)
			continue;
		res = p.type == HWT_PKT_TIP_PGE || p.type == HWT_PKT_PSB;
		break;
	}
	hwt_pt_pkt_sync_set(q->pd, save);
	return res;
}

/* Consume one timing/padding packet (before a dropped FUP). */
static void qry_read_one(struct hwt_pt_query *q, struct hwt_pt_packet *p)
{
	if (p->type == HWT_PKT_TSC || p->type == HWT_PKT_TMA || p->type == HWT_PKT_MTC ||
	    p->type == HWT_PKT_CYC || p->type == HWT_PKT_CBR)
		qry_time_packet(q, p, 0);
	consume(q);
}

static int do_ovf(struct hwt_pt_query *q)
{
	struct hwt_pt_event ev;
	consume(q);
	q->tnt_n = 0;
	q->fup_pending = 0;
	q->tick_pending = 0;
	int err = wait_flush(q, 0, 0);
	if (err)
		return err;
	qry_time_ovf(q);
	ev_clear(&ev, HWT_EV_OVERFLOW);
	q->mode = 0; /* an overflow loses the execution mode */
	int next = ovf_next(q);
	if (next == HWT_PKT_FUP && q->cfg.errata.apl12 && ovf_fup_bogus(q)) {
		/* APL12: an unexpected FUP after OVF, before a TIP.PGE or
		 * PSB: drop it; tracing is disabled */
		struct hwt_pt_packet *p;
		while (peek(q, &p) == 0 && p->type != HWT_PKT_FUP)
			qry_read_one(q, p);
		consume(q);
		next = -1;
	}
	if (next == HWT_PKT_FUP ||
	    (q->cfg.errata.skd010 && (next == HWT_PKT_TIP || next == HWT_PKT_PSB))) {
		/* SKD010: the FUP may be missing; the TIP or the PSB+ gives
		 * the ip instead */
		q->ovf_pending = 1;
		return 0;
	}
	if (next == HWT_PKT_TIP_PGD && (q->cfg.errata.skd010 || q->cfg.errata.apl11)) {
		struct hwt_pt_packet *p;
		while (peek(q, &p) == 0 && p->type != HWT_PKT_TIP_PGD)
			consume(q);
		consume(q); /* a stray TIP.PGD in place of the FUP */
	}
	ev.ip_suppressed = 1;
	q->enabled = 0;
	return push(q, &ev);
}

/* ---- read ahead ---- */

static int do_fup(struct hwt_pt_query *q, struct hwt_pt_packet *p)
{
	uint64_t ip = 0;
	int r = ip_update(q, p, &ip);
	if (r == HWT_ERR_BAD_PACKET)
		return r;
	consume(q);
	q->fup_weak = 0;
	if (q->ovf_pending) {
		struct hwt_pt_event ev;
		ev_clear(&ev, HWT_EV_OVERFLOW);
		ev.ip = ip;
		ev.ip_suppressed = r != 0;
		q->ovf_pending = 0;
		q->enabled = r == 0;
		push(q, &ev);
		return wait_flush(q, r == 0, ip);
	}
	if (q->nwait) {
		q->fup_noasync = 0;
		int err = wait_flush(q, r == 0, ip);
		if (err)
			return err;
		q->fup_weak = 1;
		if (q->fup_noasync)
			return 0; /* the FUP named an instruction, no async branch */
	}
	q->fup_pending = 1;
	q->fup_ip = ip;
	q->fup_ok = r == 0;
	return 0;
}

int qry_read_ahead(struct hwt_pt_query *q)
{
	struct hwt_pt_packet *p;
	struct hwt_pt_event ev;
	int err;

	while (!q->err) {
		/* where the packet starts (qry_pos, read in place) */
		uint64_t at = q->la_valid ? q->la_off : q->pd->synced ? q->pd->pos : 0;
		err = peek(q, &p);
		if (q->nready && (err || p->type != HWT_PKT_TRIG))
			return 0;
		if (err == HWT_ERR_EOS) {
			q->eos = 1;
			return 0;
		}
		if (err) {
			q->err = err;
			q->err_off = at;
			return 0;
		}
		if (q->fup_pending) {
			/* what follows belongs to the async branch: taken when
			 * the flow reaches the FUP's ip (qry_complete_async) */
			if (p->type == HWT_PKT_TIP || p->type == HWT_PKT_TIP_PGD ||
			    p->type == HWT_PKT_PIP || p->type == HWT_PKT_VMCS ||
			    p->type == HWT_PKT_MODE_EXEC || !q->fup_weak)
				return 0;
			q->fup_pending = 0;
		}
		if (p->type == HWT_PKT_TIP && q->ovf_pending) {
			if ((err = do_fup(q, p)))
				goto bad;
			continue;
		}
		switch (p->type) {
		case HWT_PKT_TNT8:
		case HWT_PKT_TNT64:
			if (!q->tnt_n)
				qry_take_tnt(q); /* the next branch answers: cache them now */
			return 0;
		case HWT_PKT_TIP:
			if (!q->fup_pending)
				return 0;
			{
				uint64_t ip = 0;
				int r = ip_update(q, p, &ip);
				if (r == HWT_ERR_BAD_PACKET)
					goto bad;
				consume(q);
				ev_clear(&ev, HWT_EV_ASYNC_BRANCH);
				ev.u.async_branch.from = q->fup_ip;
				ev.ip = ip;
				ev.ip_suppressed = r != 0;
				q->fup_pending = 0;
				push(q, &ev);
				if ((err = wait_flush(q, r == 0, ip)))
					goto bad;
			}
			break;
		case HWT_PKT_TIP_PGE: {
			uint64_t ip = 0;
			int r = ip_update(q, p, &ip);
			if (r == HWT_ERR_BAD_PACKET)
				goto bad;
			consume(q);
			/* TSX state applies from before the enable */
			for (int i = 0; i < q->nwait; i++)
				if ((q->wait[i].type == HWT_EV_TSX && !q->wait[i].ip_suppressed) ||
				    (q->wait[i].type >= HWT_EV_INTERRUPT &&
				     q->wait[i].type < HWT_EV_NTYPES)) {
					q->wait[i].ip_suppressed = 1;
					push(q, &q->wait[i]);
					q->wait[i].type = 0xff; /* taken */
				}
			{
				int k = 0;
				for (int i = 0; i < q->nwait; i++)
					if (q->wait[i].type != 0xff)
						q->wait[k++] = q->wait[i];
				q->nwait = k;
			}
			ev_clear(&ev, HWT_EV_ENABLED);
			ev.ip = ip;
			ev.ip_suppressed = r != 0;
			q->enabled = 1;
			q->fup_pending = 0;
			push(q, &ev);
			if ((err = wait_flush(q, r == 0, ip)))
				goto bad;
			break;
		}
		case HWT_PKT_TIP_PGD: {
			uint64_t ip = 0;
			int r = ip_update(q, p, &ip);
			if (r == HWT_ERR_BAD_PACKET)
				goto bad;
			consume(q);
			if (q->fup_pending) {
				ev_clear(&ev, HWT_EV_ASYNC_DISABLED);
				ev.u.async_disabled.at = q->fup_ip;
			} else {
				ev_clear(&ev, HWT_EV_DISABLED);
			}
			ev.ip = ip;
			ev.ip_suppressed = r != 0;
			q->enabled = 0;
			q->fup_pending = 0;
			if ((err = wait_flush(q, r == 0, ip)))
				goto bad;
			push(q, &ev);
			break;
		}
		case HWT_PKT_FUP:
			if (q->nwait && !q->ovf_pending && !q->fetch)
				return 0; /* taken when the flow asks (qry_fetch) */
			if ((err = do_fup(q, p)))
				goto bad;
			if (q->nready || q->fup_pending)
				return 0;
			break;
		case HWT_PKT_MODE_EXEC: {
			int mode = exec_mode_of(p), iflag = p->u.mode_exec.iflag;
			consume(q);
			int n0 = q->nwait;
			if (mode != q->mode) {
				ev_clear(&ev, HWT_EV_EXEC_MODE);
				ev.u.exec_mode.mode = (uint8_t)mode;
				q->mode = mode;
				wait_push(q, &ev);
			}
			if (q->opt.enable_iflags_events && (!q->have_iflag || iflag != q->iflag)) {
				ev_clear(&ev, HWT_EV_IFLAGS);
				ev.u.iflags.iflag = (uint8_t)iflag;
				wait_push(q, &ev);
			}
			if (q->nwait == n0) {
				/* no change: it still takes the next ip */
				ev_clear(&ev, HWT_EV_NTYPES);
				wait_push(q, &ev);
			}
			q->iflag = iflag;
			q->have_iflag = 1;
			break;
		}
		case HWT_PKT_MODE_TSX:
			ev_clear(&ev, HWT_EV_TSX);
			ev.u.tsx.speculative = p->u.mode_tsx.intx;
			ev.u.tsx.aborted = p->u.mode_tsx.abrt;
			consume(q);
			wait_push(q, &ev);
			break;
		case HWT_PKT_PIP:
			q->cr3 = p->u.pip.cr3;
			ev_clear(&ev, q->fup_pending ? HWT_EV_ASYNC_PAGING : HWT_EV_PAGING);
			ev.u.paging.cr3 = p->u.pip.cr3;
			ev.u.paging.non_root = p->u.pip.nr;
			consume(q);
			push_or_wait(q, &ev);
			break;
		case HWT_PKT_VMCS:
			q->vmcs = p->u.vmcs.base;
			ev_clear(&ev, q->fup_pending ? HWT_EV_ASYNC_VMCS : HWT_EV_VMCS);
			ev.u.vmcs.base = p->u.vmcs.base;
			consume(q);
			push_or_wait(q, &ev);
			break;
		case HWT_PKT_OVF:
			if ((err = do_ovf(q)))
				goto bad;
			break;
		case HWT_PKT_TRACESTOP:
			consume(q);
			ev_clear(&ev, HWT_EV_STOP);
			ev.ip_suppressed = 1;
			push_or_wait(q, &ev);
			break;
		case HWT_PKT_EXSTOP:
			ev_clear(&ev, HWT_EV_EXSTOP);
			consume(q);
			if (p->u.exstop.ip) {
				wait_push(q, &ev);
			} else {
				ev.ip_suppressed = 1;
				if ((err = wait_push(q, &ev)))
					goto bad;
				if ((err = wait_flush(q, 0, 0)))
					goto bad;
			}
			break;
		case HWT_PKT_MWAIT:
			ev_clear(&ev, HWT_EV_MWAIT);
			ev.u.mwait.hints = p->u.mwait.hints;
			ev.u.mwait.ext = p->u.mwait.ext;
			consume(q);
			wait_push(q, &ev);
			break;
		case HWT_PKT_PWRE:
			ev_clear(&ev, HWT_EV_PWRE);
			ev.ip_suppressed = 1;
			ev.u.pwre.state = p->u.pwre.state;
			ev.u.pwre.sub_state = p->u.pwre.sub_state;
			ev.u.pwre.hw = p->u.pwre.hw;
			consume(q);
			if (peek(q, &p) == 0 && p->type == HWT_PKT_EXSTOP)
				wait_push(q, &ev); /* completes with the EXSTOP */
			else
				push_or_wait(q, &ev);
			break;
		case HWT_PKT_PWRX:
			ev_clear(&ev, HWT_EV_PWRX);
			ev.ip_suppressed = 1;
			ev.u.pwrx.last = p->u.pwrx.last;
			ev.u.pwrx.deepest = p->u.pwrx.deepest;
			ev.u.pwrx.interrupt = p->u.pwrx.interrupt;
			ev.u.pwrx.store = p->u.pwrx.store;
			ev.u.pwrx.autonomous = p->u.pwrx.autonomous;
			consume(q);
			push_or_wait(q, &ev);
			break;
		case HWT_PKT_PTW:
			ev_clear(&ev, HWT_EV_PTWRITE);
			ev.u.ptwrite.size = p->u.ptw.plc ? 8 : 4;
			ev.u.ptwrite.payload = p->u.ptw.payload;
			consume(q);
			if (p->u.ptw.ip)
				wait_push(q, &ev);
			else
				push_or_wait(q, &ev);
			break;
		case HWT_PKT_MNT:
			ev_clear(&ev, HWT_EV_MNT);
			ev.ip_suppressed = 1;
			ev.u.mnt.payload = p->u.mnt.payload;
			consume(q);
			push_or_wait(q, &ev);
			break;
		case HWT_PKT_CBR:
			qry_time_packet(q, p, 0);
			ev_clear(&ev, HWT_EV_CBR);
			ev.ip_suppressed = 1;
			ev.u.cbr.ratio = p->u.cbr.ratio;
			consume(q);
			push_or_wait(q, &ev);
			break;
		case HWT_PKT_TSC:
		case HWT_PKT_TMA:
		case HWT_PKT_MTC:
		case HWT_PKT_CYC:
			if (qry_time_packet(q, p, 0) && q->opt.enable_tick_events)
				q->tick_pending = 1; /* reported with the next branch */
			consume(q);
			break;
		case HWT_PKT_PSB: {
			uint64_t ip;
			if (q->tnt_n)
				return 0; /* the cached TNT bits come first */
			err = read_psb(q, 0, &ip);
			if (err && err != HWT_ERR_IP_SUPPRESSED && err != HWT_ERR_NOIP) {
				q->err = err;
				if (!q->err_off)
					q->err_off = at;
				return 0;
			}
			break;
		}
		case HWT_PKT_CFE:
		case HWT_PKT_EVD:
		case HWT_PKT_TRIG:
			if ((err = qry_event_trace(q, p)))
				goto bad;
			break;
		case HWT_PKT_PSBEND:
			qry_time_psbend(q);
			consume(q);
			break;
		case HWT_PKT_PAD:
		case HWT_PKT_BBP:
		case HWT_PKT_BIP:
		case HWT_PKT_BEP:
		case HWT_PKT_INVALID:
		default:
			consume(q);
			break;
		}
		continue;
	bad:
		q->err = err;
		q->err_off = at;
		return 0;
	}
	return 0;
}

int qry_cfe(struct hwt_pt_query *q, const struct hwt_pt_event *ev, int ip)
{
	struct hwt_pt_event e = *ev;
	if (qry_cfe_after_insn(e.type) && !ip) {
		e.ip_suppressed = 1; /* binds to the next far transfer */
		if (q->nwait)
			return wait_push(q, &e);
		return push(q, &e);
	}
	if (!ip)
		e.ip_hidden = 1;
	return wait_push(q, &e);
}

int qry_trig(struct hwt_pt_query *q, const struct hwt_pt_event *ev, int ip)
{
	struct hwt_pt_event e = *ev;
	if (ip)
		return wait_push(q, &e);
	e.ip_suppressed = 1;
	e.u.trig.armed = !q->in_proceed && !q->tnt_n;
	return push(q, &e);
}

void qry_fetch(struct hwt_pt_query *q)
{
	struct hwt_pt_packet *p;
	if (q->nready || !q->nwait || q->err || peek(q, &p) || p->type != HWT_PKT_FUP)
		return;
	q->fetch = 1;
	qry_read_ahead(q);
	q->fetch = 0;
}

int qry_push_disabled(struct hwt_pt_query *q)
{
	struct hwt_pt_event ev;
	ev_clear(&ev, HWT_EV_DISABLED);
	ev.ip_suppressed = 1;
	return push(q, &ev);
}

struct hwt_pt_event *qry_ready(struct hwt_pt_query *q, int i)
{
	return i < q->nready ? &q->ready[(q->rhead + i) % QRY_MAXEV] : NULL;
}

/* The flow reached the ip of a pending FUP: read the packets that belong
 * to the asynchronous branch up to its TIP / TIP.PGD. */
int qry_complete_async(struct hwt_pt_query *q)
{
	struct hwt_pt_packet *p;
	struct hwt_pt_event ev;
	int err;

	while (q->fup_pending && !q->err) {
		uint64_t at = qry_pos(q);
		err = peek(q, &p);
		if (err == HWT_ERR_EOS) {
			q->eos = 1;
			q->fup_pending = 0;
			return 0;
		}
		if (err)
			goto bad;
		switch (p->type) {
		case HWT_PKT_PIP:
			q->cr3 = p->u.pip.cr3;
			ev_clear(&ev, HWT_EV_ASYNC_PAGING);
			ev.u.paging.cr3 = p->u.pip.cr3;
			ev.u.paging.non_root = p->u.pip.nr;
			consume(q);
			wait_push(q, &ev);
			break;
		case HWT_PKT_VMCS:
			q->vmcs = p->u.vmcs.base;
			ev_clear(&ev, HWT_EV_ASYNC_VMCS);
			ev.u.vmcs.base = p->u.vmcs.base;
			consume(q);
			wait_push(q, &ev);
			break;
		case HWT_PKT_MODE_EXEC: {
			int mode = exec_mode_of(p), iflag = p->u.mode_exec.iflag;
			consume(q);
			if (mode != q->mode) {
				ev_clear(&ev, HWT_EV_EXEC_MODE);
				ev.u.exec_mode.mode = (uint8_t)mode;
				q->mode = mode;
				wait_push(q, &ev);
			}
			if (q->opt.enable_iflags_events && (!q->have_iflag || iflag != q->iflag)) {
				ev_clear(&ev, HWT_EV_IFLAGS);
				ev.u.iflags.iflag = (uint8_t)iflag;
				wait_push(q, &ev);
			}
			q->iflag = iflag;
			q->have_iflag = 1;
			break;
		}
		case HWT_PKT_PAD:
		case HWT_PKT_TSC:
		case HWT_PKT_TMA:
		case HWT_PKT_MTC:
		case HWT_PKT_CYC:
			qry_time_packet(q, p, 0);
			consume(q);
			break;
		case HWT_PKT_TIP:
		case HWT_PKT_TIP_PGD: {
			uint64_t ip = 0;
			int r = ip_update(q, p, &ip);
			if (r == HWT_ERR_BAD_PACKET) {
				err = r;
				goto bad;
			}
			consume(q);
			if (p->type == HWT_PKT_TIP) {
				ev_clear(&ev, HWT_EV_ASYNC_BRANCH);
				ev.u.async_branch.from = q->fup_ip;
			} else {
				ev_clear(&ev, HWT_EV_ASYNC_DISABLED);
				ev.u.async_disabled.at = q->fup_ip;
				q->enabled = 0;
			}
			ev.ip = ip;
			ev.ip_suppressed = r != 0;
			q->fup_pending = 0;
			push(q, &ev);
			for (int i = 0; i < q->nwait; i++)
				if (q->wait[i].type == HWT_EV_ASYNC_VMCS) {
					struct hwt_pt_event v = q->wait[i];
					memmove(&q->wait[1], &q->wait[0], (size_t)i * sizeof(v));
					q->wait[0] = v;
				}
			if ((err = wait_flush(q, r == 0, ip)))
				goto bad;
			return qry_read_ahead(q);
		}
		default:
			/* the FUP only gave an ip to events */
			q->fup_pending = 0;
			return qry_read_ahead(q);
		}
		continue;
	bad:
		q->err = err;
		q->err_off = at;
		return 0;
	}
	return 0;
}

/* ---- public verbs ---- */

struct hwt_pt_query *hwt_pt_query_alloc(const struct hwt_pt_config *cfg,
					const struct hwt_pt_query_options *opt)
{
	if (!cfg || cfg->size < sizeof(*cfg))
		return NULL;
	struct hwt_pt_query *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->cfg = *cfg;
	if (opt)
		memcpy(&q->opt, opt, opt->size < sizeof(q->opt) ? opt->size : sizeof(q->opt));
	q->opt.size = sizeof(q->opt);
	q->pd = hwt_pt_pkt_alloc(&cfg->buf);
	if (!q->pd || qry_time_init(q)) {
		hwt_pt_query_free(q);
		return NULL;
	}
	hwt_pt_pkt_set_errata(q->pd, &cfg->errata); /* SKD007, SKZ84 */
	hwt_pt_last_ip_init(&q->lip);
	return q;
}

void hwt_pt_query_free(struct hwt_pt_query *q)
{
	if (!q)
		return;
	qry_time_fini(q);
	hwt_pt_pkt_free(q->pd);
	free(q);
}

int qry_status(const struct hwt_pt_query *q)
{
	int st = 0;
	if (q->nready)
		st |= HWT_PTS_EVENT_PENDING;
	else if (q->err)
		return q->err;
	else if (q->eos && !q->tnt_n)
		st |= HWT_PTS_EOS;
	return st;
}

int hwt_pt_query_sync_forward(struct hwt_pt_query *q, uint64_t *ip)
{
	struct hwt_pt_packet *p;
	int err;

	if (q->la_valid && q->la.type == HWT_PKT_PSB && !q->synced_here) {
		/* already at a PSB (after an error at it we move on) */
	}
	consume(q);
	if (q->synced) {
		/* move past the current sync point */
		uint64_t next = q->sync_off + 1;
		if (q->err_off + 1 > next && q->err)
			next = q->sync_off + 1;
		hwt_pt_pkt_sync_set(q->pd, next);
	}
	err = hwt_pt_pkt_sync_forward(q->pd);
	if (err)
		return err;
	q->synced = 1;
	q->ovf_pending = 0;
	q->have_evd_cr2 = q->have_evd_vmxq = q->have_evd_vmxr = 0;
	q->nready = 0;
	q->rhead = 0;
	q->nwait = 0;
	q->err = 0;
	q->err_off = 0;
	q->eos = 0;
	q->tnt_n = 0;
	q->fup_pending = 0;
	q->enabled = 0;
	q->mode = 0;
	q->have_iflag = 0;
	err = peek(q, &p);
	if (err)
		return err;
	uint64_t fip = 0;
	err = read_psb(q, 1, &fip);
	if (err == 0) {
		*ip = fip;
	} else if (err != HWT_ERR_IP_SUPPRESSED && err != HWT_ERR_NOIP) {
		q->err = err;
		if (!q->err_off)
			q->err_off = qry_pos(q);
	}
	qry_read_ahead(q);
	int st = qry_status(q);
	if (st < 0 && q->nready == 0)
		return st;
	if (err)
		st |= HWT_PTS_IP_SUPPRESSED;
	return st;
}

/* A branch answer after timing packets: a tick at that branch. */
static void tick(struct hwt_pt_query *q)
{
	if (!q->tick_pending)
		return;
	q->tick_pending = 0;
	if (!q->enabled)
		return;
	struct hwt_pt_event ev;
	ev_clear(&ev, HWT_EV_TICK);
	ev.ip_suppressed = 1; /* the flow decoder fills in its ip */
	push(q, &ev);
}

static int load_tnt(struct hwt_pt_query *q)
{
	struct hwt_pt_packet *p;
	uint64_t at = qry_pos(q);
	int err = peek(q, &p);
	if (err == HWT_ERR_EOS)
		return HWT_ERR_EOS;
	if (err) {
		q->err_off = at;
		return err;
	}
	if (p->type != HWT_PKT_TNT8 && p->type != HWT_PKT_TNT64) {
		q->err_off = at;
		return HWT_ERR_BAD_QUERY;
	}
	qry_take_tnt(q);
	return 0;
}

int hwt_pt_query_cond_branch(struct hwt_pt_query *q, int *taken)
{
	if (!q->tnt_n) {
		if (q->nready)
			return HWT_ERR_BAD_QUERY;
		if (q->err)
			return q->err;
		int err = load_tnt(q);
		if (err)
			return err;
	}
	q->tnt_n--;
	*taken = (int)((q->tnt_bits >> q->tnt_n) & 1);
	if (q->tnt_tick) {
		q->tnt_tick = 0;
		q->tick_pending = 1;
		tick(q);
	}
	qry_read_ahead(q);
	int st = qry_status(q);
	return st < 0 ? 0 : st;
}

int qry_tnt_cached(const struct hwt_pt_query *q)
{
	return q->tnt_n;
}

int hwt_pt_query_indirect_branch(struct hwt_pt_query *q, uint64_t *ip)
{
	struct hwt_pt_packet *p;
	if (q->nready)
		return HWT_ERR_BAD_QUERY;
	if (q->err)
		return q->err;
	uint64_t at = qry_pos(q);
	int err = peek(q, &p);
	if (err) {
		q->err_off = at;
		return err;
	}
	if (!q->tnt_n && (p->type == HWT_PKT_TNT8 || p->type == HWT_PKT_TNT64)) {
		/* a deferred TIP: it comes after the next TNT */
		q->tnt_bits = p->u.tnt.payload;
		q->tnt_n = p->u.tnt.bits;
		consume(q);
		at = qry_pos(q);
		err = peek(q, &p);
		if (err) {
			q->err_off = at;
			return err;
		}
	}
	if (p->type != HWT_PKT_TIP) {
		q->err_off = at;
		return HWT_ERR_BAD_QUERY;
	}
	uint64_t tip = 0;
	int r = ip_update(q, p, &tip);
	if (r == HWT_ERR_BAD_PACKET)
		return r;
	consume(q);
	wait_flush(q, r == 0, tip);
	tick(q);
	int st = 0;
	if (r == 0)
		*ip = tip;
	else
		st |= HWT_PTS_IP_SUPPRESSED;
	qry_read_ahead(q);
	int s2 = qry_status(q);
	return s2 < 0 ? st : (st | s2);
}

const struct hwt_pt_event *hwt_pt_query_peek(const struct hwt_pt_query *q)
{
	return q->nready ? &q->ready[q->rhead] : NULL;
}

int hwt_pt_query_event(struct hwt_pt_query *q, struct hwt_pt_event *ev)
{
	if (!q->nready) {
		if (q->err)
			return q->err;
		return HWT_ERR_BAD_QUERY;
	}
	*ev = q->ready[q->rhead];
	q->rhead = (q->rhead + 1) % QRY_MAXEV;
	q->nready--;
	qry_read_ahead(q);
	int st = qry_status(q);
	if (ev->ip_suppressed)
		st = st < 0 ? HWT_PTS_IP_SUPPRESSED : (st | HWT_PTS_IP_SUPPRESSED);
	return st < 0 ? 0 : st;
}

int hwt_pt_query_offset(const struct hwt_pt_query *q, uint64_t *offset)
{
	if (!q->synced)
		return HWT_ERR_NOSYNC;
	*offset = q->err && !q->nready && q->err_off ? q->err_off : qry_pos(q);
	return 0;
}

int hwt_pt_query_sync_offset(const struct hwt_pt_query *q, uint64_t *offset)
{
	if (!q->synced)
		return HWT_ERR_NOSYNC;
	*offset = q->sync_off;
	return 0;
}

int hwt_pt_query_time(const struct hwt_pt_query *q, uint64_t *tsc, uint32_t *lost_mtc,
		      uint32_t *lost_cyc)
{
	return qry_time(q, tsc, lost_mtc, lost_cyc);
}
