/* lib/pt/time.c - Intel PT time tracking and calibration (hwt/pt_time.h).
 *
 * Design: one heap object holding two small state machines, the clock
 * (TSC estimate) and the calibration (fcr), plus a copy of the config
 * values they use.  Every entry point is O(1); no allocation after
 * hwt_pt_time_alloc(); no printing.
 *
 * Units (SDM "Intel Processor Trace", timing packets):
 *   - TSC: the 56-bit time-stamp counter carried by TSC packets.
 *   - CTC: the crystal clock counter.  TMA carries CTC[15:0] at the TSC and
 *     the "fast counter" FC, the TSC ticks since that CTC edge.  MTC carries
 *     CTC[mtc_freq+7 : mtc_freq].  One CTC tick is ebx/eax TSC ticks
 *     (CPUID.15H: EBX/EAX is the TSC:crystal ratio).
 *   - CYC: core cycles since the previous CYC.  Scaled to TSC ticks by fcr.
 *   - CBR: core:bus ratio; with the nominal ratio P1 (MSR_PLATFORM_INFO),
 *     TSC ticks per core cycle are P1 / CBR.
 *
 * The clock keeps `base`, the TSC of the last TSC/MTC reference point, and
 * `fc`, the TSC ticks accumulated from CYCs since base; the estimate is
 * base + fc after a CYC and base after TSC/MTC.  A CYC counts from the
 * previous CYC; when MTCs passed without a CYC, the part of the count that
 * belongs to the earlier MTC periods is removed using the calibration.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_time.h"

#define TMA_CTC_BITS 16u
#define MTC_PAYLOAD_BITS 8u
#define TSC_BITS 56u

struct hwt_clock {
	uint64_t tsc;	   /* the current estimate */
	uint64_t base;	   /* TSC at the last reference (TSC or MTC) */
	uint64_t fc;	   /* CYC-derived ticks since base */
	uint32_t ctc;	   /* CTC of the last MTC (or TMA) */
	uint32_t ctc_cyc;  /* CTC of the MTC period in which fc started */
	uint32_t lost_mtc; /* MTCs that could not be used */
	uint32_t lost_cyc; /* CYCs that could not be used */
	uint8_t cbr;
	uint8_t have_tsc, have_cbr, have_tma, have_mtc;
};

struct hwt_tcal {
	uint64_t fcr;		 /* current ratio */
	uint64_t fcr_lo, fcr_hi; /* range seen; lo > hi: no ratio yet */
	uint64_t tsc;		 /* last TSC, for calibrating at a PSB+ TSC */
	uint64_t cyc_tsc;	 /* cycles since that TSC */
	uint64_t cyc_mtc;	 /* cycles since the last MTC */
	uint32_t ctc;		 /* CTC of the last MTC */
	uint32_t lost_mtc;
	uint8_t have_mtc;
	uint8_t skl168_check; /* first MTC after a PSB on an SKL168 cpu */
};

struct hwt_pt_time {
	struct hwt_clock clk;
	struct hwt_tcal cal;
	uint32_t eax, ebx;
	uint8_t nom_freq, mtc_freq, skl168;
	uint8_t in_psb;
	struct hwt_pt_time_opts opts;
};

/* x << n for a 32-bit x, 0 when everything is shifted out. */
static uint32_t shl32(uint32_t x, unsigned n)
{
	return n >= 32 ? 0 : (uint32_t)(x << n);
}

/* Ticks from last_ctc to ctc, allowing the counter (as far as MTC sees it)
 * to have wrapped once. */
static int ctc_span(const struct hwt_pt_time *t, uint32_t ctc, uint32_t last_ctc, uint32_t *span)
{
	if (ctc < last_ctc) {
		ctc += shl32(1u, t->mtc_freq + MTC_PAYLOAD_BITS);
		if (ctc < last_ctc)
			return HWT_ERR_BAD_PACKET;
	}
	*span = ctc - last_ctc;
	return 0;
}

/* CTC ticks to TSC ticks. */
static int ctc_to_tsc(const struct hwt_pt_time *t, uint64_t ctc, uint64_t *tsc)
{
	if (!t->eax || !t->ebx)
		return HWT_ERR_BAD_CONFIG;
	*tsc = (ctc * t->ebx) / t->eax;
	return 0;
}

/* ---- calibration ---------------------------------------------------- */

static void tcal_clear(struct hwt_tcal *c)
{
	memset(c, 0, sizeof(*c));
	c->fcr_lo = UINT64_MAX;
}

static int tcal_have(const struct hwt_tcal *c)
{
	return c->fcr_lo <= c->fcr_hi;
}

static void tcal_set(struct hwt_tcal *c, uint64_t fcr)
{
	c->fcr = fcr;
	if (fcr < c->fcr_lo)
		c->fcr_lo = fcr;
	if (fcr > c->fcr_hi)
		c->fcr_hi = fcr;
}

/* TSC outside PSB+: time may have been lost, so only restart counting. */
static void tcal_tsc(struct hwt_tcal *c, uint64_t tsc)
{
	c->tsc = tsc;
	c->cyc_tsc = 0;
}

/* TSC inside PSB+: ticks since the previous TSC over the cycles counted. */
static int tcal_psb_tsc(struct hwt_tcal *c, uint64_t tsc)
{
	uint64_t prev = c->tsc, cycles = c->cyc_tsc, span;

	tcal_tsc(c, tsc);
	if (!prev || !cycles || c->have_mtc) /* MTCs calibrate better */
		return 0;
	if (tsc < prev) {
		tsc += 1ull << TSC_BITS;
		if (tsc < prev)
			return HWT_ERR_BAD_PACKET;
	}
	span = tsc - prev;
	if (span >> (64 - HWT_PT_FCR_SHIFT))
		return HWT_ERR_INTERNAL;
	tcal_set(c, (span << HWT_PT_FCR_SHIFT) / cycles);
	return 0;
}

/* CBR: TSC ticks per core cycle are P1 / CBR. */
static int tcal_cbr(struct hwt_pt_time *t, uint8_t ratio)
{
	uint64_t p1 = t->nom_freq;

	if (!p1)
		return 0;
	if (!ratio)
		return HWT_ERR_BAD_PACKET;
	tcal_set(&t->cal, (p1 << HWT_PT_FCR_SHIFT) / ratio);
	return 0;
}

static int tcal_mtc(struct hwt_pt_time *t, uint8_t payload)
{
	struct hwt_tcal *c = &t->cal;
	uint32_t prev_ctc = c->ctc, ctc, span;
	uint64_t cycles = c->cyc_mtc, ticks, fcr;
	int check = c->skl168_check, err;

	c->skl168_check = 0;
	ctc = shl32(payload, t->mtc_freq);
	if (!c->have_mtc) {
		c->have_mtc = 1;
		c->ctc = ctc;
		c->cyc_mtc = 0;
		return 0;
	}
	/* No cycles in this period: keep counting over the next one too. */
	if (!cycles)
		return 0;
	c->ctc = ctc;
	c->cyc_mtc = 0;
	c->lost_mtc++; /* until the update below succeeds */

	err = ctc_span(t, ctc, prev_ctc, &span);
	if (!err)
		err = ctc_to_tsc(t, span, &ticks);
	if (err)
		return err;
	if (ticks >> (64 - HWT_PT_FCR_SHIFT))
		return HWT_ERR_INTERNAL;
	fcr = (ticks << HWT_PT_FCR_SHIFT) / cycles;

	/* SKL168: a CYC (and maybe its MTC) right before a PSB may be
	 * dropped.  Do not calibrate at the first MTC after a PSB if MTCs are
	 * missing, or if (at high MTC rates, with a previous ratio) the
	 * cycles fall short by about one 4096-cycle counter wrap. */
	if (check) {
		if (shl32(1u, t->mtc_freq) < span)
			return 0;
		if (t->mtc_freq < 10 && tcal_have(c)) {
			uint64_t expect = (c->fcr * (cycles + 0xf00)) >> HWT_PT_FCR_SHIFT;
			if (expect < ticks)
				return 0;
		}
	}
	tcal_set(c, fcr);
	c->lost_mtc = 0;
	return 0;
}

static void tcal_cyc(struct hwt_tcal *c, uint64_t cycles)
{
	c->cyc_mtc += cycles;
	c->cyc_tsc += cycles;
}

/* OVF with keep_tcal_on_ovf: keep the ratio, restart the measurements. */
static void tcal_restart(struct hwt_tcal *c)
{
	c->tsc = 0;
	c->cyc_tsc = 0;
	c->cyc_mtc = 0;
	c->ctc = 0;
	c->have_mtc = 0;
}

/* ---- clock ------------------------------------------------------------ */

static void clk_tsc(struct hwt_clock *k, uint64_t tsc)
{
	k->have_tsc = 1;
	k->have_tma = 0;
	k->have_mtc = 0;
	k->tsc = k->base = tsc;
	k->ctc = 0;
	k->fc = 0;
	k->lost_mtc = 0; /* a full time stamp: past losses no longer matter */
	k->lost_cyc = 0;
}

static int clk_cbr(struct hwt_clock *k, uint8_t ratio)
{
	if (!ratio)
		return HWT_ERR_BAD_PACKET;
	k->have_cbr = 1;
	k->cbr = ratio;
	return 0;
}

static int clk_tma(struct hwt_pt_time *t, uint16_t ctc, uint16_t fc)
{
	struct hwt_clock *k = &t->clk;
	unsigned hi = t->mtc_freq + MTC_PAYLOAD_BITS;
	uint32_t mask = hi >= 32 ? UINT32_MAX : (1u << hi) - 1u;

	if (!k->have_tsc || k->have_tma)
		return HWT_ERR_BAD_CONTEXT;
	if (k->have_mtc)
		return HWT_ERR_INTERNAL;
	k->have_tma = 1;
	/* The TSC was fc ticks after the CTC edge: put the reference on the
	 * edge and carry fc so that the estimate does not move. */
	k->base -= fc;
	k->fc += fc;
	/* When the TMA holds every CTC bit an MTC carries, it serves as the
	 * first MTC; otherwise the next MTC supplies the missing high bits. */
	if (hi <= TMA_CTC_BITS)
		k->have_mtc = 1;
	k->ctc = k->ctc_cyc = ctc & mask;
	return 0;
}

static int clk_mtc(struct hwt_pt_time *t, uint8_t payload)
{
	struct hwt_clock *k = &t->clk;
	int had_mtc = k->have_mtc, err;
	uint32_t prev_ctc = k->ctc, ctc, span;
	uint64_t ticks;

	/* Between TSC and TMA an MTC cannot be placed: skip it. */
	if (k->have_tsc && !k->have_tma)
		return 0;
	ctc = shl32(payload, t->mtc_freq);
	/* fc restarts here if it ran (or would have) in this period. */
	if (k->fc || k->lost_cyc || !had_mtc)
		k->ctc_cyc = ctc;
	k->have_mtc = 1;
	k->fc = 0;
	k->ctc = ctc;
	k->lost_cyc = 0;

	if (!had_mtc) {
		uint32_t lo, hi;

		/* Without TMA, the first MTC only starts the count. */
		if (!k->have_tma)
			return 0;
		/* After a TMA that lacked high CTC bits: take them from this
		 * MTC, one TMA wrap back if its low bits are smaller. */
		if (prev_ctc >> TMA_CTC_BITS)
			return HWT_ERR_INTERNAL;
		lo = ctc & 0xffffu;
		hi = ctc & ~0xffffu;
		if (lo < prev_ctc) {
			hi -= 1u << TMA_CTC_BITS;
			hi &= shl32(0xffu, t->mtc_freq);
		}
		prev_ctc |= hi;
	}
	err = ctc_span(t, ctc, prev_ctc, &span);
	if (err) {
		k->lost_mtc++;
		return err;
	}
	err = ctc_to_tsc(t, span, &ticks);
	if (err)
		return err;
	k->base += ticks;
	k->tsc = k->base;
	return 0;
}

/* The cycles of a CYC that fall into the current MTC period, when MTCs
 * passed since fc started: subtract the cycles the elapsed periods took at
 * the current ratio (never below zero). */
static int cyc_this_period(const struct hwt_pt_time *t, uint64_t fcr, uint64_t *cycles)
{
	const struct hwt_clock *k = &t->clk;
	uint32_t span;
	uint64_t ticks, before;
	int err;

	if (k->ctc == k->ctc_cyc)
		return 0;
	err = ctc_span(t, k->ctc, k->ctc_cyc, &span);
	if (!err)
		err = ctc_to_tsc(t, span, &ticks);
	if (err)
		return err;
	before = (ticks << HWT_PT_FCR_SHIFT) / fcr;
	*cycles = *cycles > before ? *cycles - before : 0;
	return 0;
}

static int clk_cyc(struct hwt_pt_time *t, uint64_t cycles, uint64_t fcr)
{
	struct hwt_clock *k = &t->clk;

	if (!fcr) {
		k->lost_cyc++;
		return HWT_ERR_NO_CALIBRATION;
	}
	if (!k->fc) {
		int err = cyc_this_period(t, fcr, &cycles);
		if (err)
			return err;
	}
	k->fc += (cycles * fcr) >> HWT_PT_FCR_SHIFT;
	k->tsc = k->base + k->fc;
	return 0;
}

/* ---- public ----------------------------------------------------------- */

struct hwt_pt_time *hwt_pt_time_alloc(const struct hwt_pt_config *cfg,
				      const struct hwt_pt_time_opts *opts)
{
	struct hwt_pt_time *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (cfg) {
		t->eax = cfg->cpuid_0x15_eax;
		t->ebx = cfg->cpuid_0x15_ebx;
		t->nom_freq = cfg->nom_freq;
		t->mtc_freq = cfg->mtc_freq;
		t->skl168 = cfg->errata.skl168;
	}
	if (opts) {
		size_t n = opts->size < sizeof(t->opts) ? opts->size : sizeof(t->opts);
		memcpy(&t->opts, opts, n);
	}
	t->opts.size = sizeof(t->opts);
	hwt_pt_time_reset(t);
	return t;
}

void hwt_pt_time_free(struct hwt_pt_time *t)
{
	free(t);
}

void hwt_pt_time_reset(struct hwt_pt_time *t)
{
	memset(&t->clk, 0, sizeof(t->clk));
	tcal_clear(&t->cal);
	t->in_psb = 0;
}

void hwt_pt_time_psb(struct hwt_pt_time *t)
{
	t->in_psb = 1;
	if (t->skl168)
		t->cal.skl168_check = 1;
}

void hwt_pt_time_psbend(struct hwt_pt_time *t)
{
	t->in_psb = 0;
}

void hwt_pt_time_ovf(struct hwt_pt_time *t)
{
	if (t->opts.keep_tcal_on_ovf)
		tcal_restart(&t->cal);
	else
		tcal_clear(&t->cal);
}

int hwt_pt_time_update(struct hwt_pt_time *t, const struct hwt_pt_packet *pkt,
		       struct hwt_pt_time_report *report)
{
	struct hwt_pt_time_report r;
	int use_tcal = !t->opts.no_tcal;

	memset(&r, 0, sizeof(r));
	switch (pkt->type) {
	case HWT_PKT_PSB:
		hwt_pt_time_psb(t);
		break;
	case HWT_PKT_PSBEND:
		hwt_pt_time_psbend(t);
		break;
	case HWT_PKT_OVF:
		hwt_pt_time_ovf(t);
		break;
	case HWT_PKT_TSC:
		r.timing = r.new_time = r.new_tcal = 1;
		if (use_tcal) {
			if (t->in_psb)
				r.tcal_err = tcal_psb_tsc(&t->cal, pkt->u.tsc.tsc);
			else
				tcal_tsc(&t->cal, pkt->u.tsc.tsc);
		}
		clk_tsc(&t->clk, pkt->u.tsc.tsc);
		break;
	case HWT_PKT_CBR:
		r.timing = r.new_tcal = 1;
		if (use_tcal) {
			/* Outside PSB+ a CBR means the frequency changed. */
			if (!t->in_psb)
				tcal_clear(&t->cal);
			r.tcal_err = tcal_cbr(t, pkt->u.cbr.ratio);
		}
		r.time_err = clk_cbr(&t->clk, pkt->u.cbr.ratio);
		break;
	case HWT_PKT_TMA:
		r.timing = r.new_time = 1;
		r.time_err = clk_tma(t, pkt->u.tma.ctc, pkt->u.tma.fc);
		break;
	case HWT_PKT_MTC:
		r.timing = r.new_time = r.new_tcal = 1;
		if (use_tcal)
			r.tcal_err = tcal_mtc(t, pkt->u.mtc.ctc);
		r.time_err = clk_mtc(t, pkt->u.mtc.ctc);
		break;
	case HWT_PKT_CYC: {
		uint64_t fcr = 0;

		if (t->opts.no_cyc)
			break;
		r.timing = r.new_time = 1;
		if (use_tcal) {
			if (tcal_have(&t->cal))
				fcr = t->cal.fcr;
			else
				r.fcr_err = HWT_ERR_NO_TIME;
			tcal_cyc(&t->cal, pkt->u.cyc.value);
		}
		r.time_err = clk_cyc(t, pkt->u.cyc.value, fcr);
		break;
	}
	default:
		break;
	}
	if (report)
		*report = r;
	if (r.fcr_err)
		return r.fcr_err;
	if (r.tcal_err)
		return r.tcal_err;
	return r.time_err;
}

int hwt_pt_time_query(const struct hwt_pt_time *t, uint64_t *tsc, uint32_t *lost_mtc,
		      uint32_t *lost_cyc)
{
	if (tsc)
		*tsc = t->clk.tsc;
	if (lost_mtc)
		*lost_mtc = t->clk.lost_mtc;
	if (lost_cyc)
		*lost_cyc = t->clk.lost_cyc;
	if (!t->clk.have_tsc && !t->opts.no_wall_clock)
		return HWT_ERR_NO_TIME;
	return 0;
}

int hwt_pt_time_cbr(const struct hwt_pt_time *t, uint32_t *cbr)
{
	if (!t->clk.have_cbr)
		return HWT_ERR_NO_CBR;
	*cbr = t->clk.cbr;
	return 0;
}

int hwt_pt_time_fcr(const struct hwt_pt_time *t, uint64_t *fcr)
{
	if (t->opts.no_tcal || !tcal_have(&t->cal))
		return HWT_ERR_NO_TIME;
	*fcr = t->cal.fcr;
	return 0;
}
