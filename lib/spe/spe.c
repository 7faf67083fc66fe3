/* lib/spe/spe.c - the Arm SPE record decoder (hwt/spe.h).
 *
 * Design: a cursor over caller-owned memory.  next() skips Padding, then
 * reads packets into one struct hwt_spe_record until an End or Timestamp
 * packet closes it.  Damaged data (an unknown header, a packet or record
 * cut by the end of the buffer, a record that never ends within
 * SPE_MAX_RECORD bytes) is returned as HWT_ERR_BAD_PACKET once; the next
 * call resynchronizes: it searches forward for a PC Address packet from
 * which a whole record decodes.  No allocation but the decoder itself.
 * Lifecycle: hwt_spe_alloc -> sync_forward/next ... -> hwt_spe_free.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/spe.h"

/* A record longer than this is damage (real records are < 100 bytes). */
#define SPE_MAX_RECORD 512

struct hwt_spe_decoder {
	struct hwt_spe_config cfg;
	const uint8_t *pos;
	const uint8_t *err_at;
	int need_sync;
};

void hwt_spe_config_init(struct hwt_spe_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

struct hwt_spe_decoder *hwt_spe_alloc(const struct hwt_spe_config *cfg)
{
	if (!cfg || cfg->size < sizeof(*cfg) || (!cfg->begin && cfg->end) || cfg->end < cfg->begin)
		return NULL;
	struct hwt_spe_decoder *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->cfg = *cfg;
	d->pos = cfg->begin;
	return d;
}

void hwt_spe_free(struct hwt_spe_decoder *d)
{
	free(d);
}

int hwt_spe_offset(const struct hwt_spe_decoder *d, uint64_t *offset)
{
	if (!d || !offset)
		return HWT_ERR_INVALID;
	const uint8_t *at = d->err_at ? d->err_at : d->pos;
	*offset = d->cfg.offset + (uint64_t)(at - d->cfg.begin);
	return 0;
}

static void apply(struct hwt_spe_record *r, const struct hwt_spe_packet *p)
{
	uint64_t v = p->payload;
	switch (p->type) {
	case HWT_SPE_TIMESTAMP:
		r->ts = v;
		r->flags |= HWT_SPE_HAVE_TS;
		break;
	case HWT_SPE_EVENTS:
		r->events = (uint32_t)v;
		r->flags |= HWT_SPE_HAVE_EVENTS;
		break;
	case HWT_SPE_DATA_SOURCE:
		r->data_source = (uint16_t)v;
		r->flags |= HWT_SPE_HAVE_DATA_SOURCE;
		break;
	case HWT_SPE_CONTEXT:
		r->context = (uint32_t)v;
		r->flags |= HWT_SPE_HAVE_CONTEXT;
		break;
	case HWT_SPE_OP_TYPE:
		r->op_class = p->index;
		r->op_bits = (uint8_t)v;
		r->flags |= HWT_SPE_HAVE_OP;
		break;
	case HWT_SPE_ADDRESS:
		switch (p->index) {
		case HWT_SPE_ADDR_PC:
			r->pc = hwt_spe_insn_addr(v);
			r->el = (uint8_t)((v >> 61) & 3);
			r->ns = (uint8_t)(v >> 63);
			r->flags |= HWT_SPE_HAVE_PC;
			break;
		case HWT_SPE_ADDR_TARGET:
			r->target = hwt_spe_insn_addr(v);
			r->flags |= HWT_SPE_HAVE_TARGET;
			break;
		case HWT_SPE_ADDR_DATA_VA:
			r->va = v;
			r->flags |= HWT_SPE_HAVE_VA;
			break;
		case HWT_SPE_ADDR_DATA_PA:
			r->pa = v & 0x00ffffffffffffffull;
			r->flags |= HWT_SPE_HAVE_PA;
			break;
		case HWT_SPE_ADDR_PREV_TARGET:
			r->prev_target = hwt_spe_insn_addr(v);
			break;
		default:
			break;
		}
		break;
	case HWT_SPE_COUNTER:
		if (p->index == HWT_SPE_CNT_TOTAL) {
			r->lat_total = (uint16_t)v;
			r->flags |= HWT_SPE_HAVE_TOTAL;
		} else if (p->index == HWT_SPE_CNT_ISSUE) {
			r->lat_issue = (uint16_t)v;
			r->flags |= HWT_SPE_HAVE_ISSUE;
		} else if (p->index == HWT_SPE_CNT_XLAT) {
			r->lat_xlat = (uint16_t)v;
			r->flags |= HWT_SPE_HAVE_XLAT;
		}
		break;
	default:
		break;
	}
}

/* Decode one record at p (no leading padding): its size, or
 * HWT_ERR_BAD_PACKET (*bad: where). */
static int record_at(const uint8_t *p, const uint8_t *end, struct hwt_spe_record *r,
		     const uint8_t **bad)
{
	const uint8_t *q = p;
	memset(r, 0, sizeof(*r));
	while (q < end) {
		struct hwt_spe_packet pkt;
		int k = hwt_spe_pkt_decode(q, (size_t)(end - q), &pkt);
		if (k < 0 || q + k - p > SPE_MAX_RECORD) {
			*bad = q;
			return HWT_ERR_BAD_PACKET;
		}
		q += k;
		if (pkt.type == HWT_SPE_PAD)
			continue;
		apply(r, &pkt);
		if (pkt.type == HWT_SPE_END || pkt.type == HWT_SPE_TIMESTAMP) {
			r->size = (uint32_t)(q - p);
			return (int)(q - p);
		}
	}
	*bad = q; /* cut by the end of the buffer */
	return HWT_ERR_BAD_PACKET;
}

int hwt_spe_sync_forward(struct hwt_spe_decoder *d)
{
	if (!d)
		return HWT_ERR_INVALID;
	const uint8_t *end = d->cfg.end;
	d->need_sync = 0;
	d->err_at = NULL;
	for (const uint8_t *p = d->pos; p < end; p++) {
		if (*p != 0xb0)
			continue;
		struct hwt_spe_record r;
		const uint8_t *bad;
		if (record_at(p, end, &r, &bad) > 0) {
			d->pos = p;
			return 0;
		}
	}
	d->pos = end;
	return HWT_ERR_EOS;
}

int hwt_spe_next(struct hwt_spe_decoder *d, struct hwt_spe_record *rec)
{
	if (!d || !rec)
		return HWT_ERR_INVALID;
	if (d->need_sync) {
		int s = hwt_spe_sync_forward(d);
		if (s < 0)
			return s;
	}
	d->err_at = NULL;
	const uint8_t *end = d->cfg.end;
	while (d->pos < end && *d->pos == 0x00)
		d->pos++;
	if (d->pos >= end)
		return HWT_ERR_EOS;
	const uint8_t *bad = NULL;
	int k = record_at(d->pos, end, rec, &bad);
	if (k < 0) {
		d->err_at = d->pos;
		d->pos++; /* search from the next byte on */
		d->need_sync = 1;
		return k;
	}
	rec->offset = d->cfg.offset + (uint64_t)(d->pos - d->cfg.begin);
	d->pos += k;
	return 0;
}

const char *hwt_spe_op_name(const struct hwt_spe_record *r)
{
	if (!(r->flags & HWT_SPE_HAVE_OP))
		return "other";
	switch (r->op_class) {
	case HWT_SPE_OP_LDST:
		if (!(r->flags & HWT_SPE_HAVE_VA))
			return "other";
		return r->op_bits & 1 ? "st" : "ld";
	case HWT_SPE_OP_BRANCH:
		if (r->op_bits & 2)
			return "bind";
		return r->op_bits & 1 ? "bcond" : "b";
	default:
		return "other";
	}
}

/* perf_mem_data_src fields (linux/perf_event.h) */
#define MEM_OP_LOAD 0x02ull
#define MEM_OP_STORE 0x04ull
#define MEM_LVL_HIT 0x02ull
#define MEM_LVL_MISS 0x04ull
#define MEM_LVL_L1 0x08ull
#define MEM_LVL_L3 0x40ull
#define MEM_LVL_REM_CCE1 0x800ull
#define MEM_TLB_HIT 0x02ull
#define MEM_TLB_MISS 0x04ull
#define MEM_TLB_WK 0x20ull
#define SHIFT_LVL 5
#define SHIFT_DTLB 26

uint64_t hwt_spe_data_src(const struct hwt_spe_record *r)
{
	if (!(r->flags & HWT_SPE_HAVE_OP) || r->op_class != HWT_SPE_OP_LDST)
		return 0;
	uint64_t op = r->op_bits & 1 ? MEM_OP_STORE : MEM_OP_LOAD, lvl = 0, tlb = 0;
	uint32_t e = r->events;
	if (e & (HWT_SPE_EV_LLC_ACCESS | HWT_SPE_EV_LLC_MISS))
		lvl = MEM_LVL_L3 | (e & HWT_SPE_EV_LLC_MISS ? MEM_LVL_MISS : MEM_LVL_HIT);
	else if (e & (HWT_SPE_EV_L1D_ACCESS | HWT_SPE_EV_L1D_REFILL))
		lvl = MEM_LVL_L1 | (e & HWT_SPE_EV_L1D_REFILL ? MEM_LVL_MISS : MEM_LVL_HIT);
	if (e & HWT_SPE_EV_REMOTE)
		lvl |= MEM_LVL_REM_CCE1;
	if (e & (HWT_SPE_EV_TLB_ACCESS | HWT_SPE_EV_TLB_WALK))
		tlb = MEM_TLB_WK | (e & HWT_SPE_EV_TLB_WALK ? MEM_TLB_MISS : MEM_TLB_HIT);
	return op | lvl << SHIFT_LVL | tlb << SHIFT_DTLB;
}
