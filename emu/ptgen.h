/* emu/ptgen.h - the emulated Intel PT packet generator (one per thread).
 *
 * The plugin tells the generator what the traced thread did (conditional
 * branch outcome, indirect target, near call/ret, trace disable/enable,
 * asynchronous event, time passing) and the generator writes the packets
 * hardware writes for it into a per-thread byte buffer, which the owner
 * drains (ptg_consume) in large pieces.  No I/O, no allocation after init.
 */
#ifndef HWT_EMU_PTGEN_H
#define HWT_EMU_PTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/pt_packet.h"

/* Nominal clocks: one guest instruction = one core cycle = one TSC tick
 * (1 GHz), crystal clock (CTC) = TSC / PTG_TSC_CTC_RATIO, core:bus ratio
 * (CBR) PTG_CBR. */
#define PTG_TSC_CTC_RATIO 40
#define PTG_CBR 10
#define PTG_RETSTACK 64

struct ptg_cfg {
	int tsc, mtc, cyc, noretcomp, branch;
	unsigned mtc_period; /* 0..15 */
	unsigned cyc_thresh; /* 0..15 */
	unsigned psb_period; /* term value: PSB every 2^(n+11) bytes */
};

struct ptgen {
	struct ptg_cfg cfg;
	uint8_t *buf;
	size_t len, cap;
	uint64_t total;	   /* bytes generated so far */
	uint64_t psb_next; /* generate PSB+ once total reaches this */
	struct hwt_pt_last_ip lip;
	uint64_t tnt;
	unsigned ntnt;
	uint64_t rs[PTG_RETSTACK];
	unsigned rs_top, rs_n;
	int en;		   /* PacketEn */
	uint64_t tsc;	   /* now */
	uint64_t mtc_last; /* CTC >> mtc_period at the last MTC/TMA */
	uint64_t mtc_next; /* TSC at which the next MTC is due */
	uint64_t cyc_last; /* TSC at the last CYC */
};

/* API (all static inline: the plugin calls these once per translated
 * block, so they must inline into its callbacks):
 *   ptg_init(g, cfg, buf, cap, tsc)  caller-owned buffer (cap >= 4096)
 *   ptg_begin(g)          stream start: PSB+ without FUP (PacketEn still 0)
 *   ptg_time(g, tsc)      time passes (monotonic): MTCs
 *   ptg_psb_due/ptg_psb(g, ip)   PSB+ at an instruction boundary (ip next)
 *   ptg_tnt(g, taken)     conditional branch outcome
 *   ptg_tip(g, ip)        indirect branch target
 *   ptg_call(g, next_ip) / ptg_ret(g, target)  RET compression stack; ret
 *                         returns 1 if compressed into a TNT bit
 *   ptg_pgd(g, have_ip, ip) / ptg_pge(g, ip)   PacketEn 1 -> 0 / 0 -> 1
 *   ptg_fup(g, ip)        asynchronous event at ip (next unexecuted insn)
 *   ptg_flush_tnt(g)      force out pending TNT bits
 *   ptg_pending/ptg_consume(g, n)   bytes waiting / taken by the owner
 *
 * Packet rules (Intel SDM vol. 3, "Intel Processor Trace"):
 *  - Jcc and compressed RETs give TNT bits, packed into short TNTs (6 bits);
 *    any other control-flow packet first forces out the pending TNT.
 *  - RET compression: a 64-entry stack of call next-IPs (oldest dropped
 *    when full; zero-length calls not pushed, as decoders expect).  Every
 *    RET pops; it is compressed when the popped entry equals its target.
 *    The stack is emptied at each PSB and when tracing (re)starts, so only
 *    RETs of CALLs seen since the last PSB are compressed.
 *  - PSB+ = PSB, TSC, TMA, CBR, MODE.Exec, FUP (only while PacketEn), PSBEND;
 *    the last IP is reset by the PSB.  PSB+ is due every 2^(psb_period+11)
 *    bytes and is emitted at the next instruction boundary.
 *  - MTC every 2^mtc_period crystal ticks, CYC (cycles since the last CYC)
 *    in front of TNT/TIP/FUP/PGE/PGD packets when cyc is on.
 * Limits: the buffer must be drained before it fills: each call writes at
 * most ~64 bytes except ptg_time (2 bytes per MTC); owners drain at 3/4.
 */
#include <string.h>

static inline void ptg_put(struct ptgen *g, const struct hwt_pt_packet *p)
{
	if (g->cap - g->len < HWT_PT_PKT_MAX_SIZE)
		return; /* owner failed to drain: drop (never happens in practice) */
	int n = hwt_pt_pkt_encode(g->buf + g->len, g->cap - g->len, p);
	if (n > 0)
		g->len += (size_t)n;
}

static inline void put_cyc(struct ptgen *g)
{
	if (!g->cfg.cyc)
		return;
	uint64_t d = g->tsc - g->cyc_last;
	uint64_t thresh = g->cfg.cyc_thresh ? (1ull << (g->cfg.cyc_thresh - 1)) : 1;
	if (d < thresh)
		return;
	struct hwt_pt_packet p = {.type = HWT_PKT_CYC};
	p.u.cyc.value = d;
	ptg_put(g, &p);
	g->cyc_last = g->tsc;
}

static inline uint64_t ctc_of(uint64_t tsc)
{
	return tsc / PTG_TSC_CTC_RATIO;
}

static inline void ptg_init(struct ptgen *g, const struct ptg_cfg *cfg, uint8_t *buf, size_t cap,
			    uint64_t tsc)
{
	memset(g, 0, sizeof(*g));
	g->cfg = *cfg;
	g->buf = buf;
	g->cap = cap;
	g->tsc = tsc;
	g->cyc_last = tsc;
	g->mtc_last = ctc_of(tsc) >> cfg->mtc_period;
	g->mtc_next =
	    cfg->mtc ? ((g->mtc_last + 1) << cfg->mtc_period) * PTG_TSC_CTC_RATIO : UINT64_MAX;
	hwt_pt_last_ip_init(&g->lip);
	g->psb_next = 0;
}

static inline void put_ip(struct ptgen *g, int type, uint64_t ip)
{
	struct hwt_pt_packet p = {.type = (uint8_t)type};
	uint8_t ipc = hwt_pt_ipc_for(&g->lip, ip);
	static const uint8_t bytes[8] = {0, 2, 4, 6, 6, 0, 8, 0};
	p.u.ip.ipc = ipc;
	p.u.ip.ip = bytes[ipc] == 8 ? ip : (ip & ((1ull << (8 * bytes[ipc])) - 1));
	ptg_put(g, &p);
	g->lip.ip = ip;
	g->lip.have_ip = 1;
	g->lip.suppressed = 0;
}

static inline void ptg_flush_tnt(struct ptgen *g)
{
	if (!g->ntnt)
		return;
	if (g->cap - g->len >= 1) /* short TNT: payload, stop bit, header bit 0 = 0 */
		g->buf[g->len++] = (uint8_t)((g->tnt | (1u << g->ntnt)) << 1);
	g->tnt = 0;
	g->ntnt = 0;
}

static inline void psb_plus(struct ptgen *g, int fup, uint64_t ip)
{
	struct hwt_pt_packet p = {.type = HWT_PKT_PSB};
	ptg_flush_tnt(g);
	ptg_put(g, &p);
	hwt_pt_last_ip_init(&g->lip);
	g->rs_n = 0;
	if (g->cfg.tsc) {
		p.type = HWT_PKT_TSC;
		p.u.tsc.tsc = g->tsc & ((1ull << 56) - 1);
		ptg_put(g, &p);
		if (g->cfg.mtc) {
			uint64_t ctc = ctc_of(g->tsc);
			memset(&p, 0, sizeof(p));
			p.type = HWT_PKT_TMA;
			p.u.tma.ctc = (uint16_t)ctc;
			p.u.tma.fc = (uint16_t)(g->tsc % PTG_TSC_CTC_RATIO);
			ptg_put(g, &p);
			g->mtc_last = ctc >> g->cfg.mtc_period;
			g->mtc_next = ((g->mtc_last + 1) << g->cfg.mtc_period) * PTG_TSC_CTC_RATIO;
		}
	}
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_CBR;
	p.u.cbr.ratio = PTG_CBR;
	ptg_put(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_MODE_EXEC;
	p.u.mode_exec.csl = 1;
	p.u.mode_exec.iflag = 1;
	ptg_put(g, &p);
	if (fup)
		put_ip(g, HWT_PKT_FUP, ip);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_PSBEND;
	ptg_put(g, &p);
	uint64_t period = 1ull << (g->cfg.psb_period + 11);
	g->psb_next = g->total + g->len + period;
}

static inline void ptg_begin(struct ptgen *g)
{
	psb_plus(g, 0, 0);
}

static inline void ptg_psb(struct ptgen *g, uint64_t ip)
{
	psb_plus(g, g->en, ip);
}

static inline void ptg_time(struct ptgen *g, uint64_t tsc)
{
	g->tsc = tsc;
	if (!g->cfg.mtc || tsc < g->mtc_next)
		return;
	uint64_t m = ctc_of(tsc) >> g->cfg.mtc_period;
	g->mtc_next = ((m + 1) << g->cfg.mtc_period) * PTG_TSC_CTC_RATIO;
	if (m == g->mtc_last)
		return;
	if (m - g->mtc_last > 64) /* a long stall: the newest MTCs suffice */
		g->mtc_last = m - 64;
	while (g->mtc_last != m) {
		g->mtc_last++;
		struct hwt_pt_packet p = {.type = HWT_PKT_MTC};
		p.u.mtc.ctc = (uint8_t)g->mtc_last;
		ptg_put(g, &p);
	}
}

static inline void ptg_tnt(struct ptgen *g, int taken)
{
	if (!g->en || !g->cfg.branch)
		return;
	if (!g->ntnt)
		put_cyc(g);
	g->tnt = (g->tnt << 1) | (taken ? 1u : 0u);
	if (++g->ntnt == 6)
		ptg_flush_tnt(g);
}

static inline void ptg_tip(struct ptgen *g, uint64_t ip)
{
	if (!g->en || !g->cfg.branch)
		return;
	ptg_flush_tnt(g);
	put_cyc(g);
	put_ip(g, HWT_PKT_TIP, ip);
}

static inline void ptg_call(struct ptgen *g, uint64_t next_ip)
{
	if (!g->en)
		return;
	g->rs_top = (g->rs_top + 1) % PTG_RETSTACK;
	g->rs[g->rs_top] = next_ip;
	if (g->rs_n < PTG_RETSTACK)
		g->rs_n++;
}

static inline int ptg_ret(struct ptgen *g, uint64_t target)
{
	if (!g->en)
		return 0;
	int match = 0;
	if (g->rs_n) {
		match = g->rs[g->rs_top] == target;
		g->rs_top = (g->rs_top + PTG_RETSTACK - 1) % PTG_RETSTACK;
		g->rs_n--;
	}
	if (match && !g->cfg.noretcomp) {
		ptg_tnt(g, 1);
		return 1;
	}
	ptg_tip(g, target);
	return 0;
}

static inline void ptg_pgd(struct ptgen *g, int have_ip, uint64_t ip)
{
	if (!g->en)
		return;
	ptg_flush_tnt(g);
	put_cyc(g);
	if (have_ip) {
		put_ip(g, HWT_PKT_TIP_PGD, ip);
	} else {
		struct hwt_pt_packet p = {.type = HWT_PKT_TIP_PGD};
		ptg_put(g, &p);
	}
	g->en = 0;
}

static inline void ptg_pge(struct ptgen *g, uint64_t ip)
{
	if (g->en)
		return;
	g->en = 1;
	g->rs_n = 0;
	put_cyc(g);
	put_ip(g, HWT_PKT_TIP_PGE, ip);
}

static inline void ptg_fup(struct ptgen *g, uint64_t ip)
{
	if (!g->en)
		return;
	ptg_flush_tnt(g);
	put_cyc(g);
	put_ip(g, HWT_PKT_FUP, ip);
}

static inline int ptg_psb_due(const struct ptgen *g)
{
	return g->total + g->len >= g->psb_next;
}

static inline size_t ptg_pending(const struct ptgen *g)
{
	return g->len;
}

static inline void ptg_consume(struct ptgen *g, size_t n)
{
	if (n >= g->len) {
		g->total += g->len;
		g->len = 0;
		return;
	}
	memmove(g->buf, g->buf + n, g->len - n);
	g->len -= n;
	g->total += n;
}

#endif /* HWT_EMU_PTGEN_H */
