/* tests/unit/t_syn.h - synthetic Intel PT streams for the flow tests
 * (test_pt_flow.c, test_pt_batch.c): a small hand-assembled loop (a
 * conditional branch, a call, a return, a backward conditional branch)
 * in a memory image, and its trace built with the packet encoder, with
 * TNT-8 or TNT-64, with or without return compression, with a PSB+
 * anywhere.  Header-only (static functions). */
#ifndef HWT_TESTS_T_SYN_H
#define HWT_TESTS_T_SYN_H

#include <string.h>

#include "hwt/pt_packet.h"

#define SYN_ORG 0x401000ull
static const uint8_t syn_code[] = {
    0x74, 0x01,			  /* +00: je +03 */
    0x90,			  /* +02: nop */
    0xe8, 0x04, 0x00, 0x00, 0x00, /* +03: call +0c */
    0x75, 0xf6,			  /* +08: jne +00 */
    0xeb, 0xfe,			  /* +0a: jmp +0a */
    0x90,			  /* +0c: nop */
    0xc3,			  /* +0d: ret */
};

struct syn {
	uint8_t buf[2048];
	size_t n;
	uint64_t bits;
	int nbits, maxbits; /* pending TNT bits; 6: TNT-8, 47: TNT-64 */
	int err;
};

static void syn_put(struct syn *e, const struct hwt_pt_packet *p)
{
	int r = hwt_pt_pkt_encode(e->buf + e->n, sizeof(e->buf) - e->n, p);
	if (r < 0)
		e->err = r;
	else
		e->n += (size_t)r;
}

static void syn_flush_tnt(struct syn *e)
{
	struct hwt_pt_packet p;
	if (!e->nbits)
		return;
	memset(&p, 0, sizeof(p));
	p.type = e->maxbits > 6 ? HWT_PKT_TNT64 : HWT_PKT_TNT8;
	p.u.tnt.bits = (uint8_t)e->nbits;
	p.u.tnt.payload = e->bits;
	syn_put(e, &p);
	e->nbits = 0;
	e->bits = 0;
}

static void syn_bit(struct syn *e, int taken)
{
	e->bits = e->bits << 1 | (uint64_t)taken;
	if (++e->nbits == e->maxbits)
		syn_flush_tnt(e);
}

static void syn_ip(struct syn *e, int type, uint64_t ip)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	p.u.ip.ipc = HWT_IPC_FULL;
	p.u.ip.ip = ip;
	syn_put(e, &p);
}

/* PSB+ (64-bit mode, FUP ip) after the pending TNT bits. */
static void syn_psb(struct syn *e, uint64_t ip)
{
	struct hwt_pt_packet p;
	syn_flush_tnt(e);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_PSB;
	syn_put(e, &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_MODE_EXEC;
	p.u.mode_exec.csl = 1;
	syn_put(e, &p);
	syn_ip(e, HWT_PKT_FUP, ip);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_PSBEND;
	syn_put(e, &p);
}

/* The trace of nans branch answers (je: bit k of pattern, ret: a TNT bit
 * with return compression else a TIP, jne: taken), with a PSB+ after
 * psb_at answers (-1: none) whose FUP is the next instruction. */
static void syn_build(struct syn *e, int retcomp, int maxbits, int nans, int psb_at,
		      unsigned pattern)
{
	memset(e, 0, sizeof(*e));
	e->maxbits = maxbits;
	syn_psb(e, SYN_ORG);
	for (int k = 0; k < nans;) {
		int step = k % 3;
		uint64_t next = step == 0 ? SYN_ORG + 3 : step == 1 ? SYN_ORG + 8 : SYN_ORG;
		if (step == 0)
			syn_bit(e, (int)(pattern >> (k % 32)) & 1);
		else if (step == 2 || retcomp)
			syn_bit(e, 1);
		else {
			syn_flush_tnt(e);
			syn_ip(e, HWT_PKT_TIP, SYN_ORG + 8);
		}
		if (++k == psb_at)
			syn_psb(e, next);
	}
	syn_flush_tnt(e);
}

#endif
