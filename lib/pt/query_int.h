/* lib/pt/query_int.h - the query decoder's state, shared by query*.c and
 * the flow decoders (insn*.c, block*.c). */
#ifndef HWT_LIB_PT_QUERY_INT_H
#define HWT_LIB_PT_QUERY_INT_H

#include "hwt/pt_flow.h"
#include "hwt/pt_packet.h"
#include "packet_int.h"

#define QRY_MAXEV 64
#define QRY_MAXWAIT 16

struct hwt_pt_query {
	struct hwt_pt_config cfg;
	struct hwt_pt_query_options opt;
	struct hwt_pt_pkt_decoder *pd;
	struct hwt_pt_last_ip lip;

	/* one packet of lookahead */
	struct hwt_pt_packet la;
	uint64_t la_off;
	int la_valid;

	uint64_t tnt_bits;
	int tnt_n;

	/* ready events (a ring) and events waiting for an ip */
	struct hwt_pt_event ready[QRY_MAXEV];
	int rhead, nready;
	struct hwt_pt_event wait[QRY_MAXWAIT];
	int nwait;

	/* an async branch in flight (FUP seen, TIP/TIP.PGD to come) */
	int fup_pending, fup_ok, fup_weak, fup_noasync;
	int ovf_pending;  /* an OVF waits for its FUP */
	int in_proceed;	  /* the flow decoder is executing an instruction */
	int tick_pending; /* time moved since the last branch answer */
	int fetch;	  /* read ahead may take a FUP that gives waiting events their ip */
	int tnt_tick;	  /* ... reported with the first bit of the cached TNT */
	uint64_t fup_ip;
	/* event trace (CFE/EVD) state */
	struct hwt_pt_event evd; /* collected EVD payloads */
	int have_evd_cr2, have_evd_vmxq, have_evd_vmxr;
	uint64_t evd_cr2, evd_vmxq, evd_vmxr;

	int enabled; /* tracing enabled according to the packets */
	int mode;    /* exec mode according to the packets */
	int iflag, have_iflag;
	uint64_t cr3, vmcs;

	int err;	  /* deferred error */
	uint64_t err_off; /* its offset */
	int eos;
	int synced, synced_here;
	uint64_t sync_off;

	/* timing */
	int no_time; /* no time tracking (opt.no_time without ticks): time is NULL */
	int have_tsc;
	uint64_t tsc;
	void *time; /* struct from lib/pt/time.c when available */
};

/* Take the lookahead packet, a TNT, as the next branch answers (with
 * the tick of the timing packets before it). */
static inline void qry_take_tnt(struct hwt_pt_query *q)
{
	q->tnt_bits = q->la.u.tnt.payload;
	q->tnt_n = q->la.u.tnt.bits;
	q->tnt_tick = q->tick_pending;
	q->tick_pending = 0;
	q->la_valid = 0;
}

/* Look ahead at the next packet if it is a TNT-8, the way reading ahead
 * would: into q->la (not marked valid), 1; else 0, nothing changed.
 * Without time tracking (no_time) and where reading ahead would read
 * timing packets only for the time (no event ready or in flight, no
 * error), timing packets before the TNT-8 are read past. */
static inline int qry_next_tnt8(struct hwt_pt_query *q)
{
	if (pkt_next_tnt8(q->pd, &q->la, &q->la_off))
		return 1;
	return q->no_time && !q->nready && !q->fup_pending && !q->err &&
	       pkt_next_tnt8_past_time(q->pd, &q->la, &q->la_off);
}

uint64_t qry_pos(const struct hwt_pt_query *q);
int qry_read_ahead(struct hwt_pt_query *q);
int qry_complete_async(struct hwt_pt_query *q);
int qry_status(const struct hwt_pt_query *q);
int qry_tnt_cached(const struct hwt_pt_query *q);
void qry_stamp(struct hwt_pt_query *q, struct hwt_pt_event *ev);

/* query_time.c */
int qry_time_init(struct hwt_pt_query *q);
void qry_time_fini(struct hwt_pt_query *q);
/* Feed a timing packet; returns 1 if it is a tick (time moved). */
int qry_time_packet(struct hwt_pt_query *q, const struct hwt_pt_packet *p, int in_psb);
void qry_time_psb(struct hwt_pt_query *q);
void qry_time_psbend(struct hwt_pt_query *q);
void qry_time_ovf(struct hwt_pt_query *q);
int qry_time(const struct hwt_pt_query *q, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);

/* query_evtrace.c: CFE, EVD, TRIG */
int qry_event_trace(struct hwt_pt_query *q, struct hwt_pt_packet *p);
int qry_cfe_after_insn(int type);
/* The i-th ready event (0 = head), NULL past the end. */
struct hwt_pt_event *qry_ready(struct hwt_pt_query *q, int i);
/* Queue a disabled event without ip (resync found tracing re-enabled). */
int qry_push_disabled(struct hwt_pt_query *q);
/* Take the FUP that gives waiting events their ip (read ahead leaves it). */
void qry_fetch(struct hwt_pt_query *q);
/* query.c: queue a CFE / TRIG event (ip: the packet's IP bit). */
int qry_cfe(struct hwt_pt_query *q, const struct hwt_pt_event *ev, int ip);
int qry_trig(struct hwt_pt_query *q, const struct hwt_pt_event *ev, int ip);

#endif
