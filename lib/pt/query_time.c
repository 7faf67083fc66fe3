/* lib/pt/query_time.c - time for the query decoder's events.
 *
 * The query decoder feeds every timing packet (and PSB, PSBEND, OVF) to a
 * hwt_pt_time tracker (lib/pt/time.c) that it owns; events are stamped
 * with its TSC estimate.  A timing packet that may move the time is a
 * "tick" (reported as an event when the caller asks for ticks).  With
 * hwt_pt_query_options.no_time there is no tracker: timing packets are
 * only read past, and the time is never known.
 */
#include "hwt/pt_time.h"
#include "query_int.h"

int qry_time_init(struct hwt_pt_query *q)
{
	q->no_time = q->opt.no_time && !q->opt.enable_tick_events;
	if (q->no_time)
		return 0;
	struct hwt_pt_time_opts o = {.size = sizeof(o)};
	o.keep_tcal_on_ovf = q->opt.keep_tcal_on_ovf;
	q->time = hwt_pt_time_alloc(&q->cfg, &o);
	return q->time ? 0 : HWT_ERR_NOMEM;
}

void qry_time_fini(struct hwt_pt_query *q)
{
	hwt_pt_time_free(q->time);
	q->time = NULL;
}

int qry_time_packet(struct hwt_pt_query *q, const struct hwt_pt_packet *p, int in_psb)
{
	struct hwt_pt_time_report rep = {0};
	(void)in_psb;
	if (!q->time)
		return 0;
	if (p->type == HWT_PKT_CYC) {
		uint64_t before = 0, after = 0;
		hwt_pt_time_query(q->time, &before, NULL, NULL);
		hwt_pt_time_update(q->time, p, &rep);
		hwt_pt_time_query(q->time, &after, NULL, NULL);
		if (after == before)
			rep.new_time = 0; /* a CYC that could not be used */
		return rep.new_time;
	}
	hwt_pt_time_update(q->time, p, &rep);
	if (p->type == HWT_PKT_TSC) {
		q->tsc = p->u.tsc.tsc;
		q->have_tsc = 1;
	}
	return rep.new_time;
}

void qry_time_psb(struct hwt_pt_query *q)
{
	if (q->time)
		hwt_pt_time_psb(q->time);
}

void qry_time_psbend(struct hwt_pt_query *q)
{
	if (q->time)
		hwt_pt_time_psbend(q->time);
}

void qry_time_ovf(struct hwt_pt_query *q)
{
	if (q->time)
		hwt_pt_time_ovf(q->time);
}

int qry_time(const struct hwt_pt_query *q, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
	if (!q->time) {
		if (tsc)
			*tsc = 0;
		if (lost_mtc)
			*lost_mtc = 0;
		if (lost_cyc)
			*lost_cyc = 0;
		return HWT_ERR_NO_TIME;
	}
	return hwt_pt_time_query(q->time, tsc, lost_mtc, lost_cyc);
}
