/* tests/unit/test_pt_time.c - the timing module (hwt/pt_time.h) on
 * hand-built packet sequences.
 *
 * Every expected value is derived in the comments from the SDM's timing
 * formulas ("Intel Processor Trace" chapter, timing packets):
 *   TSC ticks per CTC tick  = CPUID.15H:EBX / CPUID.15H:EAX
 *   MTC payload             = CTC[mtc_freq+7 : mtc_freq], so one MTC step
 *                             is 2^mtc_freq CTC ticks
 *   TMA                     = CTC[15:0] at the TSC, and FC, the TSC ticks
 *                             from that CTC edge to the TSC
 *   TSC ticks per core cycle = P1 (nominal ratio) / CBR, or measured as
 *                             (TSC ticks between two MTCs) / (CYC cycles
 *                             counted between them)
 * fcr is that last ratio as a fixed-point number with 8 fraction bits;
 * time after a CYC = reference time + cycles * fcr >> 8 (truncating).
 */
#include <string.h>

#include "hwt/pt_time.h"
#include "t.h"

static struct hwt_pt_packet pk(enum hwt_pt_pkt_type type)
{
	struct hwt_pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	return p;
}

static int feed_tsc(struct hwt_pt_time *t, uint64_t tsc)
{
	struct hwt_pt_packet p = pk(HWT_PKT_TSC);
	p.u.tsc.tsc = tsc;
	return hwt_pt_time_update(t, &p, NULL);
}

static int feed_tma(struct hwt_pt_time *t, uint16_t ctc, uint16_t fc)
{
	struct hwt_pt_packet p = pk(HWT_PKT_TMA);
	p.u.tma.ctc = ctc;
	p.u.tma.fc = fc;
	return hwt_pt_time_update(t, &p, NULL);
}

static int feed_mtc(struct hwt_pt_time *t, uint8_t ctc)
{
	struct hwt_pt_packet p = pk(HWT_PKT_MTC);
	p.u.mtc.ctc = ctc;
	return hwt_pt_time_update(t, &p, NULL);
}

static int feed_cbr(struct hwt_pt_time *t, uint8_t ratio)
{
	struct hwt_pt_packet p = pk(HWT_PKT_CBR);
	p.u.cbr.ratio = ratio;
	return hwt_pt_time_update(t, &p, NULL);
}

static int feed_cyc(struct hwt_pt_time *t, uint64_t cycles, struct hwt_pt_time_report *r)
{
	struct hwt_pt_packet p = pk(HWT_PKT_CYC);
	p.u.cyc.value = cycles;
	return hwt_pt_time_update(t, &p, r);
}

static void feed(struct hwt_pt_time *t, enum hwt_pt_pkt_type type)
{
	struct hwt_pt_packet p = pk(type);
	hwt_pt_time_update(t, &p, NULL);
}

static uint64_t now(const struct hwt_pt_time *t)
{
	uint64_t tsc = ~0ull;
	hwt_pt_time_query(t, &tsc, NULL, NULL);
	return tsc;
}

static struct hwt_pt_time *mk(uint32_t eax, uint32_t ebx, uint8_t mtc_freq, uint8_t nom_freq,
			      const struct hwt_pt_time_opts *o)
{
	struct hwt_pt_config cfg;

	hwt_pt_config_init(&cfg);
	cfg.cpuid_0x15_eax = eax;
	cfg.cpuid_0x15_ebx = ebx;
	cfg.mtc_freq = mtc_freq;
	cfg.nom_freq = nom_freq;
	return hwt_pt_time_alloc(&cfg, o);
}

/* Before any TSC there is no wall-clock time; a TSC gives it exactly. */
static void t_tsc_only(void)
{
	struct hwt_pt_time *t = mk(0, 0, 0, 0, NULL);
	uint64_t tsc = 1;
	uint32_t lm = 9, lc = 9;

	CHECK_EQ(hwt_pt_time_query(t, &tsc, &lm, &lc), HWT_ERR_NO_TIME);
	CHECK_EQ(tsc, 0);
	CHECK_EQ(feed_tsc(t, 0x123456), 0);
	CHECK_EQ(hwt_pt_time_query(t, &tsc, &lm, &lc), 0);
	CHECK_EQ(tsc, 0x123456);
	CHECK_EQ(lm, 0);
	CHECK_EQ(lc, 0);
	hwt_pt_time_reset(t);
	CHECK_EQ(hwt_pt_time_query(t, &tsc, NULL, NULL), HWT_ERR_NO_TIME);
	hwt_pt_time_free(t);
}

/* TSC 0x1000, TMA(ctc 0x105, fc 2), ratio EBX/EAX = 6/2 = 3 TSC per CTC,
 * mtc_freq 3 (one MTC step = 8 CTC = 24 TSC).
 * The CTC edge 0x105 was at TSC 0x1000 - 2 = 0xffe.
 * MTC payload 0x21 = CTC[10:3] -> CTC 0x108: 3 CTC after 0x105 -> 9 TSC
 *   -> 0xffe + 9 = 0x1007.
 * MTC 0x22: one step more -> 0x1007 + 24 = 0x101f.
 * MTC 0x25: three steps -> 0x101f + 72 = 0x1067. */
static void t_tma_mtc(void)
{
	struct hwt_pt_time *t = mk(2, 6, 3, 0, NULL);

	CHECK_EQ(feed_tsc(t, 0x1000), 0);
	CHECK_EQ(feed_tma(t, 0x105, 2), 0);
	CHECK_EQ(now(t), 0x1000); /* TMA itself does not move the time */
	CHECK_EQ(feed_mtc(t, 0x21), 0);
	CHECK_EQ(now(t), 0x1007);
	CHECK_EQ(feed_mtc(t, 0x22), 0);
	CHECK_EQ(now(t), 0x101f);
	CHECK_EQ(feed_mtc(t, 0x25), 0);
	CHECK_EQ(now(t), 0x1067);
	hwt_pt_time_free(t);
}

/* The 8-bit MTC payload wraps: mtc_freq 0, ratio 1 (EBX = EAX = 5).
 * TSC 0x500, TMA(ctc 0x1fe, fc 0): MTC 0xff is 1 CTC later -> 0x501;
 * MTC 0x01 is 0x100 + 1 - 0xff = 2 CTC later (wrapped) -> 0x503. */
static void t_mtc_wrap(void)
{
	struct hwt_pt_time *t = mk(5, 5, 0, 0, NULL);

	feed_tsc(t, 0x500);
	feed_tma(t, 0x1fe, 0);
	CHECK_EQ(feed_mtc(t, 0xff), 0);
	CHECK_EQ(now(t), 0x501);
	CHECK_EQ(feed_mtc(t, 0x01), 0);
	CHECK_EQ(now(t), 0x503);
	hwt_pt_time_free(t);
}

/* MTC rate lower than TMA's 16 bits cover: mtc_freq 12, ratio 1/2
 * (EAX 2, EBX 1).  TSC 0x2000, TMA(ctc 0xe020, fc 8): the CTC edge
 * 0xe020 was at TSC 0x1ff8.  MTC 0x3f = CTC[19:12] -> CTC[15:12] = 0xf, so
 * the MTC is at CTC 0xf000 (within TMA's 16 bits): 0xfe0 CTC later ->
 * 0x7f0 TSC -> 0x1ff8 + 0x7f0 = 0x27e8.  MTC 0x40: 0x1000 CTC more ->
 * +0x800 -> 0x2fe8. */
static void t_mtc_infrequent(void)
{
	struct hwt_pt_time *t = mk(2, 1, 12, 0, NULL);

	feed_tsc(t, 0x2000);
	feed_tma(t, 0xe020, 8);
	CHECK_EQ(feed_mtc(t, 0x3f), 0);
	CHECK_EQ(now(t), 0x27e8);
	CHECK_EQ(feed_mtc(t, 0x40), 0);
	CHECK_EQ(now(t), 0x2fe8);
	hwt_pt_time_free(t);
}

/* An MTC between TSC and its TMA cannot be placed and is skipped; a TMA
 * without a TSC before it is out of context. */
static void t_mtc_before_tma(void)
{
	struct hwt_pt_time *t = mk(1, 1, 0, 0, NULL);

	CHECK_EQ(feed_tma(t, 1, 0), HWT_ERR_BAD_CONTEXT);
	feed_tsc(t, 0x100);
	CHECK_EQ(feed_mtc(t, 0x77), 0);
	CHECK_EQ(now(t), 0x100);
	CHECK_EQ(feed_tma(t, 0x10, 0), 0);
	CHECK_EQ(feed_tma(t, 0x10, 0), HWT_ERR_BAD_CONTEXT); /* one TMA per TSC */
	/* MTC 0x12: 2 CTC after 0x10 at ratio 1 -> 0x102. */
	CHECK_EQ(feed_mtc(t, 0x12), 0);
	CHECK_EQ(now(t), 0x102);
	hwt_pt_time_free(t);
}

/* CBR calibration: P1 = 6, CBR 3 -> 2 TSC ticks per cycle, fcr = 2 << 8.
 * After TSC 0x40: CYC 5 -> +10 = 0x4a; CYC 1 -> +2 = 0x4c.
 * A CBR outside PSB+ (frequency change) to 6: fcr = 1 << 8; CYC 4 -> 0x50. */
static void t_cbr_calibration(void)
{
	struct hwt_pt_time *t = mk(0, 0, 0, 6, NULL);
	struct hwt_pt_time_report r;
	uint64_t fcr = 0;
	uint32_t cbr = 0;

	CHECK_EQ(hwt_pt_time_cbr(t, &cbr), HWT_ERR_NO_CBR);
	feed_tsc(t, 0x40);
	CHECK_EQ(feed_cbr(t, 3), 0);
	CHECK_EQ(hwt_pt_time_cbr(t, &cbr), 0);
	CHECK_EQ(cbr, 3);
	CHECK_EQ(hwt_pt_time_fcr(t, &fcr), 0);
	CHECK_EQ(fcr, 2 << HWT_PT_FCR_SHIFT);
	CHECK_EQ(feed_cyc(t, 5, &r), 0);
	CHECK_EQ(r.fcr_err, 0);
	CHECK_EQ(r.time_err, 0);
	CHECK_EQ(now(t), 0x4a);
	feed_cyc(t, 1, NULL);
	CHECK_EQ(now(t), 0x4c);
	CHECK_EQ(feed_cbr(t, 6), 0);
	hwt_pt_time_fcr(t, &fcr);
	CHECK_EQ(fcr, 1 << HWT_PT_FCR_SHIFT);
	feed_cyc(t, 4, NULL);
	CHECK_EQ(now(t), 0x50);
	CHECK_EQ(feed_cbr(t, 0), HWT_ERR_BAD_PACKET);
	hwt_pt_time_free(t);
}

/* A CYC without calibration cannot be used: it is counted as lost and
 * reported; a TSC clears the loss count. */
static void t_cyc_uncalibrated(void)
{
	struct hwt_pt_time *t = mk(0, 0, 0, 0, NULL);
	struct hwt_pt_time_report r;
	uint32_t lc = 0;
	uint64_t tsc;

	feed_tsc(t, 0x10);
	CHECK(feed_cyc(t, 0x100, &r) < 0);
	CHECK_EQ(r.fcr_err, HWT_ERR_NO_TIME);
	CHECK_EQ(r.time_err, HWT_ERR_NO_CALIBRATION);
	CHECK_EQ(hwt_pt_time_query(t, &tsc, NULL, &lc), 0);
	CHECK_EQ(tsc, 0x10);
	CHECK_EQ(lc, 1);
	feed_tsc(t, 0x20);
	hwt_pt_time_query(t, NULL, NULL, &lc);
	CHECK_EQ(lc, 0);
	hwt_pt_time_free(t);
}

/* MTC calibration without TSC (no_wall_clock): mtc_freq 0, ratio 4 (EAX 1,
 * EBX 4), so one MTC step is 4 TSC ticks.  MTC 1, CYC 0x40, MTC 2: 4 ticks
 * in 0x40 cycles -> fcr = (4 << 8) / 0x40 = 16 (1/16 tick per cycle).
 * Time: the first MTC only starts the count (0); MTC 2 -> 4.
 * CYC 0x20 -> 4 + (0x20 * 16 >> 8) = 4 + 2 = 6. */
static void t_mtc_calibration(void)
{
	struct hwt_pt_time_opts o = {.size = sizeof(o), .no_wall_clock = 1};
	struct hwt_pt_time *t = mk(1, 4, 0, 0, &o);
	uint64_t fcr = 0, tsc = 0;

	feed_mtc(t, 1);
	CHECK_EQ(hwt_pt_time_query(t, &tsc, NULL, NULL), 0); /* no_wall_clock */
	CHECK_EQ(tsc, 0);
	CHECK_EQ(hwt_pt_time_fcr(t, &fcr), HWT_ERR_NO_TIME);
	feed_cyc(t, 0x40, NULL); /* uncalibrated: lost, but counted for tcal */
	feed_mtc(t, 2);
	CHECK_EQ(now(t), 4);
	CHECK_EQ(hwt_pt_time_fcr(t, &fcr), 0);
	CHECK_EQ(fcr, 16);
	CHECK_EQ(feed_cyc(t, 0x20, NULL), 0);
	CHECK_EQ(now(t), 6);
	hwt_pt_time_free(t);
}

/* A CYC spanning MTCs: freq 0, ratio 4, P1 1 and CBR 2 -> fcr = 1/2.
 * MTC 0x10 (start, time 0); CYC 8 -> 8 / 2 = 4; MTC 0x11 -> 4 (the
 * period's reference); MTC 0x12 -> 8 (no CYC in between).  CYC 12 counts
 * from the CYC at time 4: 12 / 2 = 6 ticks -> 10.  Computed as the
 * decoder must: the elapsed period (MTC 0x11 to 0x12, 4 ticks) took
 * 4 / (1/2) = 8 cycles, leaving 4 cycles -> 2 ticks after MTC 0x12 = 10. */
static void t_cyc_spans_mtc(void)
{
	struct hwt_pt_time_opts o = {.size = sizeof(o), .no_wall_clock = 1};
	struct hwt_pt_time *t = mk(1, 4, 0, 1, &o);

	feed(t, HWT_PKT_PSB);
	feed_cbr(t, 2);
	feed(t, HWT_PKT_PSBEND);
	feed_mtc(t, 0x10);
	feed_cyc(t, 8, NULL);
	CHECK_EQ(now(t), 4);
	feed_mtc(t, 0x11);
	CHECK_EQ(now(t), 4);
	feed_mtc(t, 0x12);
	CHECK_EQ(now(t), 8);
	CHECK_EQ(feed_cyc(t, 12, NULL), 0);
	CHECK_EQ(now(t), 10);
	hwt_pt_time_free(t);
}

/* TSC calibration happens at a TSC inside PSB+ only: PSB, TSC 0x1000,
 * PSBEND, CYC 0x100, TSC 0x1200 (outside PSB+: restarts the count, no
 * calibration), CYC 0x100, PSB, TSC 0x1300 (inside): 0x100 ticks over
 * 0x100 cycles -> fcr 1.0.  Then CYC 0x80 -> 0x1380. */
static void t_tsc_calibration(void)
{
	struct hwt_pt_time *t = mk(0, 0, 0, 0, NULL);
	uint64_t fcr = 0;

	feed(t, HWT_PKT_PSB);
	feed_tsc(t, 0x1000);
	feed(t, HWT_PKT_PSBEND);
	feed_cyc(t, 0x100, NULL);
	feed_tsc(t, 0x1200);
	CHECK_EQ(hwt_pt_time_fcr(t, &fcr), HWT_ERR_NO_TIME);
	feed_cyc(t, 0x100, NULL);
	feed(t, HWT_PKT_PSB);
	feed_tsc(t, 0x1300);
	feed(t, HWT_PKT_PSBEND);
	CHECK_EQ(hwt_pt_time_fcr(t, &fcr), 0);
	CHECK_EQ(fcr, 1 << HWT_PT_FCR_SHIFT);
	feed_cyc(t, 0x80, NULL);
	CHECK_EQ(now(t), 0x1380);
	hwt_pt_time_free(t);
}

/* OVF restarts the calibration; keep_tcal_on_ovf keeps the ratio.  The
 * time itself is kept either way. */
static void t_ovf(void)
{
	struct hwt_pt_time_opts keep = {.size = sizeof(keep), .keep_tcal_on_ovf = 1};
	struct hwt_pt_time *a = mk(0, 0, 0, 4, NULL), *b = mk(0, 0, 0, 4, &keep);
	uint64_t fcr = 0;

	feed_tsc(a, 0x10);
	feed_tsc(b, 0x10);
	feed_cbr(a, 2); /* fcr 2 */
	feed_cbr(b, 2);
	feed(a, HWT_PKT_OVF);
	feed(b, HWT_PKT_OVF);
	CHECK_EQ(hwt_pt_time_fcr(a, &fcr), HWT_ERR_NO_TIME);
	CHECK_EQ(hwt_pt_time_fcr(b, &fcr), 0);
	CHECK_EQ(fcr, 2 << HWT_PT_FCR_SHIFT);
	CHECK_EQ(now(a), 0x10);
	feed_cyc(b, 3, NULL); /* 3 cycles * 2 */
	CHECK_EQ(now(b), 0x16);
	hwt_pt_time_free(a);
	hwt_pt_time_free(b);
}

/* no_tcal: nothing calibrates, so CYCs are lost; no_cyc: CYCs are not
 * even looked at. */
static void t_switches(void)
{
	struct hwt_pt_time_opts nt = {.size = sizeof(nt), .no_tcal = 1};
	struct hwt_pt_time_opts nc = {.size = sizeof(nc), .no_cyc = 1};
	struct hwt_pt_time *a = mk(0, 0, 0, 4, &nt), *b = mk(0, 0, 0, 4, &nc);
	struct hwt_pt_time_report r;
	uint64_t fcr;
	uint32_t lc = 0;

	feed_tsc(a, 0x10);
	feed_cbr(a, 2);
	CHECK_EQ(hwt_pt_time_fcr(a, &fcr), HWT_ERR_NO_TIME);
	feed_cyc(a, 3, &r);
	CHECK_EQ(r.fcr_err, 0); /* no calibration was asked for */
	CHECK_EQ(r.time_err, HWT_ERR_NO_CALIBRATION);
	hwt_pt_time_query(a, NULL, NULL, &lc);
	CHECK_EQ(lc, 1);

	feed_tsc(b, 0x10);
	feed_cbr(b, 2);
	CHECK_EQ(feed_cyc(b, 3, &r), 0);
	CHECK_EQ(r.timing, 0);
	CHECK_EQ(now(b), 0x10);
	hwt_pt_time_free(a);
	hwt_pt_time_free(b);
}

/* Missing CPUID.15H: MTC after TMA cannot be converted. */
static void t_bad_config(void)
{
	struct hwt_pt_time *t = mk(0, 0, 0, 0, NULL);

	feed_tsc(t, 0x10);
	feed_tma(t, 0x10, 1);
	CHECK_EQ(feed_mtc(t, 0x11), HWT_ERR_BAD_CONFIG);
	hwt_pt_time_free(t);
}

/* SKL168 (a CYC before a PSB may be dropped): at the first MTC after a
 * PSB, skip calibrating if MTC periods were lost.  mtc_freq 4, ratio 4:
 * one step = 16 CTC = 64 ticks.  MTC 1, CYC 0x100, MTC 2 -> fcr
 * (64 << 8) / 0x100 = 64 (0.25).  PSB, CYC 0x80, MTC 4 (2 steps: one
 * lost): 128 ticks / 0x80 cycles would give 1.0 -- skipped on an SKL168
 * cpu, taken without the erratum. */
static void t_skl168(void)
{
	struct hwt_pt_config cfg;
	struct hwt_pt_time_opts o = {.size = sizeof(o), .no_wall_clock = 1};
	struct hwt_pt_time *t[2];
	uint64_t fcr;

	for (int i = 0; i < 2; i++) {
		hwt_pt_config_init(&cfg);
		cfg.cpuid_0x15_eax = 1;
		cfg.cpuid_0x15_ebx = 4;
		cfg.mtc_freq = 4;
		cfg.errata.skl168 = i;
		t[i] = hwt_pt_time_alloc(&cfg, &o);
		feed_mtc(t[i], 1);
		feed_cyc(t[i], 0x100, NULL);
		feed_mtc(t[i], 2);
		fcr = 0;
		hwt_pt_time_fcr(t[i], &fcr);
		CHECK_EQ(fcr, 64);
		feed(t[i], HWT_PKT_PSB);
		feed(t[i], HWT_PKT_PSBEND);
		feed_cyc(t[i], 0x80, NULL);
		feed_mtc(t[i], 4);
		hwt_pt_time_fcr(t[i], &fcr);
		CHECK_EQ(fcr, i ? 64 : 256);
		hwt_pt_time_free(t[i]);
	}
}

int main(void)
{
	RUN(t_tsc_only);
	RUN(t_tma_mtc);
	RUN(t_mtc_wrap);
	RUN(t_mtc_infrequent);
	RUN(t_mtc_before_tma);
	RUN(t_cbr_calibration);
	RUN(t_cyc_uncalibrated);
	RUN(t_mtc_calibration);
	RUN(t_cyc_spans_mtc);
	RUN(t_tsc_calibration);
	RUN(t_ovf);
	RUN(t_switches);
	RUN(t_bad_config);
	RUN(t_skl168);
	return t_done();
}
