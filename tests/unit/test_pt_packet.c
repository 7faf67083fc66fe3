/* Unit tests: lib/pt/packet_parse.c, packet_encode.c, last_ip.c,
 * packet_names.c, cpu.c.
 *
 * Oracles: the Intel SDM packet layouts (byte tables below, written from
 * the SDM, not from running hwt), the libipt-ptt corpus (dump-all-packets
 * and the error/errata tests are re-dumped ptdump-style and compared with
 * their -ptdump.exp, and each errata test's meta.json cpus must get that
 * erratum).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_config.h"
#include "hwt/pt_packet.h"
#include "t.h"
#include "t_util.h"

#define P(...) ((const uint8_t[]){__VA_ARGS__}), sizeof((const uint8_t[]){__VA_ARGS__})

struct pcase {
	const uint8_t *bytes;
	size_t len;
	struct hwt_pt_packet pkt;
};

static int pkt_eq(const struct hwt_pt_packet *a, const struct hwt_pt_packet *b)
{
	if (a->type != b->type || a->size != b->size)
		return 0;
	const __typeof__(a->u) *x = &a->u, *y = &b->u;
	switch (a->type) {
	case HWT_PKT_TIP:
	case HWT_PKT_TIP_PGE:
	case HWT_PKT_TIP_PGD:
	case HWT_PKT_FUP:
		return x->ip.ipc == y->ip.ipc && x->ip.ip == y->ip.ip;
	case HWT_PKT_TNT8:
	case HWT_PKT_TNT64:
		return x->tnt.bits == y->tnt.bits && x->tnt.payload == y->tnt.payload;
	case HWT_PKT_MODE_EXEC:
		return x->mode_exec.csl == y->mode_exec.csl &&
		       x->mode_exec.csd == y->mode_exec.csd &&
		       x->mode_exec.iflag == y->mode_exec.iflag;
	case HWT_PKT_MODE_TSX:
		return x->mode_tsx.intx == y->mode_tsx.intx && x->mode_tsx.abrt == y->mode_tsx.abrt;
	case HWT_PKT_PIP:
		return x->pip.cr3 == y->pip.cr3 && x->pip.nr == y->pip.nr;
	case HWT_PKT_TSC:
		return x->tsc.tsc == y->tsc.tsc;
	case HWT_PKT_CBR:
		return x->cbr.ratio == y->cbr.ratio;
	case HWT_PKT_TMA:
		return x->tma.ctc == y->tma.ctc && x->tma.fc == y->tma.fc;
	case HWT_PKT_MTC:
		return x->mtc.ctc == y->mtc.ctc;
	case HWT_PKT_CYC:
		return x->cyc.value == y->cyc.value;
	case HWT_PKT_VMCS:
		return x->vmcs.base == y->vmcs.base;
	case HWT_PKT_MNT:
		return x->mnt.payload == y->mnt.payload;
	case HWT_PKT_EXSTOP:
		return x->exstop.ip == y->exstop.ip;
	case HWT_PKT_MWAIT:
		return x->mwait.hints == y->mwait.hints && x->mwait.ext == y->mwait.ext;
	case HWT_PKT_PWRE:
		return x->pwre.state == y->pwre.state && x->pwre.sub_state == y->pwre.sub_state &&
		       x->pwre.hw == y->pwre.hw;
	case HWT_PKT_PWRX:
		return x->pwrx.last == y->pwrx.last && x->pwrx.deepest == y->pwrx.deepest &&
		       x->pwrx.interrupt == y->pwrx.interrupt && x->pwrx.store == y->pwrx.store &&
		       x->pwrx.autonomous == y->pwrx.autonomous;
	case HWT_PKT_PTW:
		return x->ptw.plc == y->ptw.plc && x->ptw.ip == y->ptw.ip &&
		       x->ptw.payload == y->ptw.payload;
	case HWT_PKT_BBP:
		return x->bbp.sz == y->bbp.sz && x->bbp.type == y->bbp.type;
	case HWT_PKT_BIP:
		return x->bip.id == y->bip.id && x->bip.payload == y->bip.payload;
	case HWT_PKT_BEP:
		return x->bep.ip == y->bep.ip;
	case HWT_PKT_CFE:
		return x->cfe.type == y->cfe.type && x->cfe.ip == y->cfe.ip &&
		       x->cfe.vector == y->cfe.vector;
	case HWT_PKT_EVD:
		return x->evd.type == y->evd.type && x->evd.payload == y->evd.payload;
	case HWT_PKT_TRIG:
		return x->trig.trbv == y->trig.trbv && x->trig.ip == y->trig.ip &&
		       x->trig.mult == y->trig.mult && x->trig.icntv == y->trig.icntv &&
		       (!x->trig.icntv || x->trig.icnt == y->trig.icnt);
	default:
		return 1;
	}
}

#define K(t, s) .type = HWT_PKT_##t, .size = s

/* Byte layouts from the SDM packet tables (little-endian payloads). */
static const struct pcase cases[] = {
    {P(0x00), {K(PAD, 1)}},
    {P(0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
       0x82),
     {K(PSB, 16)}},
    {P(0x02, 0x23), {K(PSBEND, 2)}},
    {P(0x02, 0xf3), {K(OVF, 2)}},
    {P(0x02, 0x83), {K(TRACESTOP, 2)}},
    /* TNT-8: 1 (stop) then the bits, oldest first, then 0 */
    {P(0x04), {K(TNT8, 1), .u.tnt = {1, 0}}},
    {P(0x06), {K(TNT8, 1), .u.tnt = {1, 1}}},
    {P(0xa2), {K(TNT8, 1), .u.tnt = {6, 0x11}}},
    {P(0xfe), {K(TNT8, 1), .u.tnt = {6, 0x3f}}},
    {P(0x02, 0xa3, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00), {K(TNT64, 8), .u.tnt = {1, 0}}},
    {P(0x02, 0xa3, 0x34, 0x12, 0x00, 0x00, 0x00, 0x80), {K(TNT64, 8), .u.tnt = {47, 0x1234}}},
    /* IP packets, every IPBytes value */
    {P(0x0d), {K(TIP, 1), .u.ip = {0, 0}}},
    {P(0x2d, 0x34, 0x12), {K(TIP, 3), .u.ip = {1, 0x1234}}},
    {P(0x4d, 0x78, 0x56, 0x34, 0x12), {K(TIP, 5), .u.ip = {2, 0x12345678}}},
    {P(0x6d, 0x00, 0x10, 0xff, 0xff, 0xff, 0xff), {K(TIP, 7), .u.ip = {3, 0xffffffff1000}}},
    {P(0x8d, 0x00, 0x40, 0xff, 0xff, 0xff, 0xff), {K(TIP, 7), .u.ip = {4, 0xffffffff4000}}},
    {P(0xcd, 0x00, 0x40, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0x00),
     {K(TIP, 9), .u.ip = {6, 0x00cccccccccc4000}}},
    {P(0x11), {K(TIP_PGE, 1), .u.ip = {0, 0}}},
    {P(0x71, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06), {K(TIP_PGE, 7), .u.ip = {3, 0x060504030201}}},
    {P(0x01), {K(TIP_PGD, 1), .u.ip = {0, 0}}},
    {P(0x21, 0xef, 0xbe), {K(TIP_PGD, 3), .u.ip = {1, 0xbeef}}},
    {P(0x1d), {K(FUP, 1), .u.ip = {0, 0}}},
    {P(0x9d, 1, 2, 3, 4, 5, 6), {K(FUP, 7), .u.ip = {4, 0x060504030201}}},
    {P(0xdd, 1, 2, 3, 4, 5, 6, 7, 8), {K(FUP, 9), .u.ip = {6, 0x0807060504030201}}},
    /* PIP: payload bit 0 NR, bits 47:1 CR3[51:5] */
    {P(0x02, 0x43, 0xfa, 0xfa, 0x0a, 0x00, 0x00, 0x00), {K(PIP, 8), .u.pip = {0xafafa0, 0}}},
    {P(0x02, 0x43, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff), {K(PIP, 8), .u.pip = {0xfffffffffffa0, 1}}},
    /* MODE: leaf in bits 7:5 */
    {P(0x99, 0x00), {K(MODE_EXEC, 2), .u.mode_exec = {0, 0, 0}}},
    {P(0x99, 0x01), {K(MODE_EXEC, 2), .u.mode_exec = {1, 0, 0}}},
    {P(0x99, 0x02), {K(MODE_EXEC, 2), .u.mode_exec = {0, 1, 0}}},
    {P(0x99, 0x05), {K(MODE_EXEC, 2), .u.mode_exec = {1, 0, 1}}},
    {P(0x99, 0x20), {K(MODE_TSX, 2), .u.mode_tsx = {0, 0}}},
    {P(0x99, 0x21), {K(MODE_TSX, 2), .u.mode_tsx = {1, 0}}},
    {P(0x99, 0x22), {K(MODE_TSX, 2), .u.mode_tsx = {0, 1}}},
    {P(0x02, 0x03, 0x24, 0x00), {K(CBR, 4), .u.cbr = {0x24}}},
    {P(0x19, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00, 0x80), {K(TSC, 8), .u.tsc = {0x80000000012345}}},
    {P(0x59, 0x94), {K(MTC, 2), .u.mtc = {0x94}}},
    {P(0x02, 0x73, 0x12, 0x34, 0x00, 0xff, 0x01), {K(TMA, 7), .u.tma = {0x3412, 0x1ff}}},
    /* CYC: 5 bits in byte 0 (bit 2 = more), 7 bits per further byte */
    {P(0x03), {K(CYC, 1), .u.cyc = {0}}},
    {P(0xfb), {K(CYC, 1), .u.cyc = {0x1f}}},
    {P(0xbf, 0x04), {K(CYC, 2), .u.cyc = {0x57}}},
    {P(0x07, 0x01, 0x02), {K(CYC, 3), .u.cyc = {1ull << 12}}},
    {P(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe),
     {K(CYC, 9), .u.cyc = {(1ull << 61) - 1}}},
    {P(0x02, 0xc8, 0x00, 0xcd, 0xab, 0x00, 0x00), {K(VMCS, 7), .u.vmcs = {0xabcd00000}}},
    {P(0x02, 0xc3, 0x88, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0x42, 0x22, 0x2a),
     {K(MNT, 11), .u.mnt = {0x2a2242e5d4c3b2a1}}},
    {P(0x02, 0x62), {K(EXSTOP, 2), .u.exstop = {0}}},
    {P(0x02, 0xe2), {K(EXSTOP, 2), .u.exstop = {1}}},
    {P(0x02, 0xc2, 0x0b, 0, 0, 0, 0x01, 0, 0, 0), {K(MWAIT, 10), .u.mwait = {0xb, 1}}},
    {P(0x02, 0x22, 0x00, 0xff), {K(PWRE, 4), .u.pwre = {0xf, 0xf, 0}}},
    {P(0x02, 0x22, 0x08, 0x21), {K(PWRE, 4), .u.pwre = {2, 1, 1}}},
    {P(0x02, 0xa2, 0x05, 0x01, 0, 0, 0), {K(PWRX, 7), .u.pwrx = {0, 5, 1, 0, 0}}},
    {P(0x02, 0xa2, 0x21, 0x04, 0, 0, 0), {K(PWRX, 7), .u.pwrx = {2, 1, 0, 1, 0}}},
    {P(0x02, 0xa2, 0x05, 0x08, 0, 0, 0), {K(PWRX, 7), .u.pwrx = {0, 5, 0, 0, 1}}},
    /* PTW: bit 7 IP, bits 6:5 payload size (0: 4 bytes, 1: 8 bytes) */
    {P(0x02, 0x92, 0xef, 0xcd, 0xab, 0x90), {K(PTW, 6), .u.ptw = {0, 1, 0x90abcdef}}},
    {P(0x02, 0x32, 0xef, 0xcd, 0xab, 0x90, 0x78, 0x56, 0x34, 0x12),
     {K(PTW, 10), .u.ptw = {1, 0, 0x1234567890abcdef}}},
    /* BBP/BEP (SDM "PEBS via Intel PT") */
    {P(0x02, 0x63, 0x81), {K(BBP, 3), .u.bbp = {1, 1}}},
    {P(0x02, 0x63, 0x1f), {K(BBP, 3), .u.bbp = {0, 0x1f}}},
    {P(0x02, 0x33), {K(BEP, 2), .u.bep = {0}}},
    {P(0x02, 0xb3), {K(BEP, 2), .u.bep = {1}}},
    /* CFE/EVD/TRIG as in the corpus' dump-all-packets */
    {P(0x02, 0x13, 0x02, 0x00), {K(CFE, 4), .u.cfe = {2, 0, 0}}},
    {P(0x02, 0x13, 0x83, 0xf0), {K(CFE, 4), .u.cfe = {3, 1, 0xf0}}},
    {P(0x02, 0x13, 0x01, 0x0e), {K(CFE, 4), .u.cfe = {1, 0, 0x0e}}},
    {P(0x02, 0x53, 0x02, 0xaa, 0x0b, 0xf0, 0, 0, 0, 0, 0), {K(EVD, 11), .u.evd = {2, 0xf00baa}}},
    {P(0xd9, 0x20, 0xa1), {K(TRIG, 3), .u.trig = {0xa1, 0, 1, 0, 0}}},
    {P(0xd9, 0x40, 0xa1, 0x17, 0x00), {K(TRIG, 5), .u.trig = {0xa1, 0, 0, 1, 23}}},
    {P(0xd9, 0xe0, 0xa1, 0x17, 0x00), {K(TRIG, 5), .u.trig = {0xa1, 1, 1, 1, 23}}},
};

static void t_table_parse_and_encode(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		struct hwt_pt_packet got;
		uint8_t out[32];
		int n = hwt_pt_pkt_parse(c->bytes, c->len, &got);
		CHECKF(n == (int)c->len, "case %zu (%s): parse gave %d", i,
		       hwt_pt_pkt_name(c->pkt.type), n);
		CHECKF(pkt_eq(&got, &c->pkt), "case %zu (%s): fields differ", i,
		       hwt_pt_pkt_name(c->pkt.type));
		n = hwt_pt_pkt_encode(out, sizeof(out), &c->pkt);
		CHECKF(n == (int)c->len && !memcmp(out, c->bytes, c->len),
		       "case %zu (%s): encode gave %d bytes / different bytes", i,
		       hwt_pt_pkt_name(c->pkt.type), n);
		/* every proper prefix is truncated */
		for (size_t k = 0; k < c->len; k++)
			CHECKF(hwt_pt_pkt_parse(c->bytes, k, &got) == HWT_ERR_EOS &&
				   got.type == HWT_PKT_INVALID,
			       "case %zu (%s): prefix %zu not EOS", i, hwt_pt_pkt_name(c->pkt.type),
			       k);
		/* room too small */
		CHECK(hwt_pt_pkt_encode(out, c->len - 1, &c->pkt) == HWT_ERR_NOMEM);
	}
}

static void t_bip_needs_block_context(void)
{
	struct hwt_pt_packet pkt;
	const uint8_t b4[] = {0x0c, 0x11, 0x22, 0x33, 0x44}; /* id 1 */
	const uint8_t b8[] = {0xfc, 1, 2, 3, 4, 5, 6, 7, 8}; /* id 31 */
	CHECK(hwt_pt_pkt_parse(b4, sizeof(b4), &pkt) == 1 && pkt.type == HWT_PKT_TNT8);
	CHECK(hwt_pt_pkt_parse_ctx(b4, sizeof(b4), HWT_PKT_CTX_BIP4, &pkt) == 5);
	CHECK(pkt.type == HWT_PKT_BIP && pkt.u.bip.id == 1 && pkt.u.bip.payload == 0x44332211);
	CHECK(hwt_pt_pkt_parse_ctx(b8, sizeof(b8), HWT_PKT_CTX_BIP8, &pkt) == 9);
	CHECK(pkt.type == HWT_PKT_BIP && pkt.u.bip.id == 31 &&
	      pkt.u.bip.payload == 0x0807060504030201ull);
	CHECK(hwt_pt_pkt_parse_ctx(b8, 8, HWT_PKT_CTX_BIP8, &pkt) == HWT_ERR_EOS);
	/* BBP sz=1: 4-byte items; sz=0: 8-byte items; BEP ends the block */
	struct hwt_pt_packet bbp = {.type = HWT_PKT_BBP, .size = 3, .u.bbp = {1, 0}};
	CHECK(hwt_pt_pkt_ctx_after(HWT_PKT_CTX_NONE, &bbp) == HWT_PKT_CTX_BIP4);
	bbp.u.bbp.sz = 0;
	CHECK(hwt_pt_pkt_ctx_after(HWT_PKT_CTX_NONE, &bbp) == HWT_PKT_CTX_BIP8);
	struct hwt_pt_packet bep = {.type = HWT_PKT_BEP, .size = 2};
	CHECK(hwt_pt_pkt_ctx_after(HWT_PKT_CTX_BIP8, &bep) == HWT_PKT_CTX_NONE);
	/* encode uses .size for the payload width */
	uint8_t out[16];
	struct hwt_pt_packet bip = {.type = HWT_PKT_BIP, .size = 5, .u.bip = {1, 0x44332211}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &bip) == 5 && !memcmp(out, b4, 5));
	bip.size = 7;
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &bip) == HWT_ERR_INVALID);
}

/* Which bytes are "unknown opcode" and which "unknown packet": libipt's
 * packet decoder says bad opcode for an opcode (or extension byte) that is
 * no packet, bad packet for a reserved payload of a known packet. */
static void t_error_classes(void)
{
	struct hwt_pt_packet pkt;
	static const uint8_t bad_opc1[] = {0x05, 0x09, 0x15, 0x25, 0x29, 0x35, 0x39, 0xc9, 0xf9};
	for (size_t i = 0; i < sizeof(bad_opc1); i++)
		CHECKF(hwt_pt_pkt_parse(&bad_opc1[i], 1, &pkt) == HWT_ERR_BAD_OPC &&
			   pkt.type == HWT_PKT_INVALID,
		       "opcode %02x", bad_opc1[i]);
	static const uint8_t bad_ext[] = {0x00, 0x01, 0x02, 0x04, 0x42, 0xff, 0x93};
	for (size_t i = 0; i < sizeof(bad_ext); i++) {
		uint8_t b[16] = {0x02, bad_ext[i]};
		int r = hwt_pt_pkt_parse(b, sizeof(b), &pkt);
		if (bad_ext[i] == 0x83) /* TraceStop: a packet, not an error */
			CHECK(r == 2);
		else if (bad_ext[i] == 0x93) /* 0x93 & 0x1f == 0x13 but not CFE: bad */
			CHECK(r == HWT_ERR_BAD_OPC);
		else
			CHECKF(r == HWT_ERR_BAD_OPC, "ext %02x gave %d", bad_ext[i], r);
	}
	uint8_t ext2[16] = {0x02, 0xc3, 0x89};
	CHECK(hwt_pt_pkt_parse(ext2, sizeof(ext2), &pkt) == HWT_ERR_BAD_OPC);
	CHECK(hwt_pt_pkt_parse(ext2, 2, &pkt) == HWT_ERR_EOS);
	CHECK(hwt_pt_pkt_parse(ext2, 1, &pkt) == HWT_ERR_EOS);
	/* reserved IPBytes 5 and 7: bad packet even when truncated */
	static const uint8_t ipops[] = {0x0d, 0x11, 0x01, 0x1d};
	for (int i = 0; i < 4; i++) {
		uint8_t b5[16] = {(uint8_t)(ipops[i] | 0xa0)},
			b7[16] = {(uint8_t)(ipops[i] | 0xe0)};
		CHECK(hwt_pt_pkt_parse(b5, 16, &pkt) == HWT_ERR_BAD_PACKET);
		CHECK(hwt_pt_pkt_parse(b7, 1, &pkt) == HWT_ERR_BAD_PACKET);
	}
	/* PTW payload size 2 and 3 are reserved */
	uint8_t ptw[16] = {0x02, 0x52};
	CHECK(hwt_pt_pkt_parse(ptw, 16, &pkt) == HWT_ERR_BAD_PACKET);
	ptw[1] = 0xf2;
	CHECK(hwt_pt_pkt_parse(ptw, 2, &pkt) == HWT_ERR_BAD_PACKET);
	/* MODE leaves other than exec (000) and tsx (001) */
	for (int leaf = 2; leaf < 8; leaf++) {
		uint8_t m[2] = {0x99, (uint8_t)(leaf << 5)};
		CHECK(hwt_pt_pkt_parse(m, 2, &pkt) == HWT_ERR_BAD_PACKET);
		CHECK(hwt_pt_pkt_parse(m, 1, &pkt) == HWT_ERR_EOS);
	}
	/* TNT-64 without a stop bit, or with no branch bit */
	uint8_t t64[8] = {0x02, 0xa3};
	CHECK(hwt_pt_pkt_parse(t64, 8, &pkt) == HWT_ERR_BAD_PACKET);
	t64[2] = 1;
	CHECK(hwt_pt_pkt_parse(t64, 8, &pkt) == HWT_ERR_BAD_PACKET);
	/* a broken PSB pattern; a short one is truncated */
	uint8_t psb[16];
	for (int i = 0; i < 16; i += 2)
		psb[i] = 0x02, psb[i + 1] = 0x82;
	psb[15] = 0x7d;
	CHECK(hwt_pt_pkt_parse(psb, 16, &pkt) == HWT_ERR_BAD_PACKET);
	CHECK(hwt_pt_pkt_parse(psb, 15, &pkt) == HWT_ERR_EOS);
	/* CYC longer than 64 bits */
	uint8_t cyc[12];
	memset(cyc, 0xff, sizeof(cyc));
	CHECK(hwt_pt_pkt_parse(cyc, sizeof(cyc), &pkt) == HWT_ERR_BAD_PACKET);
	CHECK(hwt_pt_pkt_parse(cyc, 9, &pkt) == HWT_ERR_EOS);
	/* TMA reserved bits (corpus tma-reserved_ctc / tma-reserved_fc) */
	const uint8_t tma1[] = {0x02, 0x73, 0x01, 0x01, 0x01, 0x01, 0x00};
	const uint8_t tma2[] = {0x02, 0x73, 0x01, 0x01, 0x00, 0x01, 0x40};
	CHECK(hwt_pt_pkt_parse(tma1, 7, &pkt) == HWT_ERR_BAD_PACKET);
	CHECK(hwt_pt_pkt_parse(tma2, 7, &pkt) == HWT_ERR_BAD_PACKET);
	/* nothing at all */
	CHECK(hwt_pt_pkt_parse(psb, 0, &pkt) == HWT_ERR_EOS);
}

static void t_encode_rejects_bad_fields(void)
{
	uint8_t out[32];
	struct hwt_pt_packet p = {.type = HWT_PKT_TIP, .u.ip = {5, 0}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_TNT8, .u.tnt = {7, 0}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_TNT8, .u.tnt = {2, 4}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_TNT64, .u.tnt = {48, 0}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_PIP, .u.pip = {0x1001, 0}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_TSC, .u.tsc = {1ull << 56}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_TMA, .u.tma = {0, 0x200}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_CYC, .u.cyc = {1ull << 61}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_VMCS, .u.vmcs = {0x1234}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_PTW, .u.ptw = {2, 0, 0}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_PTW, .u.ptw = {0, 0, 1ull << 32}};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_INVALID};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
	p = (struct hwt_pt_packet){.type = HWT_PKT_NTYPES};
	CHECK(hwt_pt_pkt_encode(out, sizeof(out), &p) == HWT_ERR_INVALID);
}

static void t_cyc_minimal_encoding(void)
{
	/* 5 bits fit the first byte, then 7 bits per byte */
	static const struct {
		uint64_t v;
		int size;
	} c[] = {{0, 1}, {31, 1}, {32, 2}, {(1u << 12) - 1, 2}, {1u << 12, 3}, {1ull << 60, 9}};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct hwt_pt_packet p = {.type = HWT_PKT_CYC, .u.cyc = {c[i].v}}, q;
		uint8_t out[16];
		int n = hwt_pt_pkt_encode(out, sizeof(out), &p);
		CHECKF(n == c[i].size, "cyc %" PRIx64 " gave %d bytes", c[i].v, n);
		CHECK(hwt_pt_pkt_parse(out, (size_t)n, &q) == n && q.u.cyc.value == c[i].v);
	}
}

static void t_last_ip(void)
{
	struct hwt_pt_last_ip lip;
	uint64_t ip = 1;
	hwt_pt_last_ip_init(&lip);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == HWT_ERR_NOIP && ip == 0);
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_SEXT_48, 0xffffffff1000ull) == 0);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == 0 && ip == 0xffffffffffff1000ull);
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_SEXT_48, 0x7fffffff1000ull) == 0);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == 0 && ip == 0x7fffffff1000ull);
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_UPDATE_16, 0xabcd) == 0);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == 0 && ip == 0x7fffffffabcdull);
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_UPDATE_32, 0x12345678) == 0);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == 0 && ip == 0x7fff12345678ull);
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_SUPPRESSED, 0) == 0);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == HWT_ERR_IP_SUPPRESSED);
	/* ipc 4: upper 16 bits from the last IP */
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_FULL, 0xffee000000000000ull) == 0);
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_UPDATE_48, 0xffffffff4000ull) == 0);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == 0 && ip == 0xffeeffffffff4000ull);
	CHECK(hwt_pt_last_ip_update(&lip, 5, 0) == HWT_ERR_BAD_PACKET);
	CHECK(hwt_pt_last_ip_update(&lip, 7, 0) == HWT_ERR_BAD_PACKET);
	/* ipc 1 before any full IP: the initial last IP is 0 (libipt) */
	hwt_pt_last_ip_init(&lip);
	CHECK(hwt_pt_last_ip_update(&lip, HWT_IPC_UPDATE_16, 0x1234) == 0);
	CHECK(hwt_pt_last_ip_query(&lip, &ip) == 0 && ip == 0x1234);
}

static void t_ipc_for(void)
{
	struct hwt_pt_last_ip lip;
	hwt_pt_last_ip_init(&lip);
	CHECK(hwt_pt_ipc_for(&lip, 0x1000) == HWT_IPC_SEXT_48);
	CHECK(hwt_pt_ipc_for(&lip, 0xffffffffffff1000ull) == HWT_IPC_SEXT_48);
	CHECK(hwt_pt_ipc_for(&lip, 0x00cccccccccc4000ull) == HWT_IPC_FULL);
	hwt_pt_last_ip_update(&lip, HWT_IPC_FULL, 0x00cccccccccc4000ull);
	CHECK(hwt_pt_ipc_for(&lip, 0x00cccccccccc4321ull) == HWT_IPC_UPDATE_16);
	CHECK(hwt_pt_ipc_for(&lip, 0x00cccccc12344321ull) == HWT_IPC_UPDATE_32);
	CHECK(hwt_pt_ipc_for(&lip, 0x00cc1234cccc4000ull) == HWT_IPC_UPDATE_48);
	CHECK(hwt_pt_ipc_for(&lip, 0x0000123412344000ull) == HWT_IPC_SEXT_48);
	CHECK(hwt_pt_ipc_for(&lip, 0x8000000000000000ull) == HWT_IPC_FULL);
	/* whatever ipc is chosen, applying it reproduces the IP */
	uint64_t s = 88172645463325252ull;
	for (int i = 0; i < 20000; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		uint64_t ip = lip.ip;
		switch (s % 5) {
		case 0:
			ip ^= (s >> 8) & 0xffff;
			break;
		case 1:
			ip ^= (s >> 8) & 0xffffffff;
			break;
		case 2:
			ip = (s >> 16) & 0x7fffffffffffull;
			break;
		case 3:
			ip ^= (s >> 8) & 0xffffffffffffull;
			break;
		default:
			ip = s;
			break;
		}
		uint8_t ipc = hwt_pt_ipc_for(&lip, ip);
		static const uint64_t masks[7] = {
		    0, 0xffff, 0xffffffff, 0xffffffffffff, 0xffffffffffff, 0, ~0ull};
		hwt_pt_last_ip_update(&lip, ipc, ip & masks[ipc]);
		CHECKF(lip.ip == ip, "ip %" PRIx64 " ipc %u", ip, ipc);
	}
}

static void t_names(void)
{
	static const char *const want[] = {
	    "<invalid>", "pad",	    "psb",   "psbend", "tnt.8",	    "tnt.64",	"tip",
	    "tip.pge",	 "tip.pgd", "fup",   "pip",    "mode.exec", "mode.tsx", "stop",
	    "cbr",	 "tsc",	    "mtc",   "tma",    "cyc",	    "vmcs",	"ovf",
	    "mnt",	 "exstop",  "mwait", "pwre",   "pwrx",	    "ptw",	"bbp",
	    "bip",	 "bep",	    "cfe",   "evd",    "trig"};
	_Static_assert(sizeof(want) / sizeof(want[0]) == HWT_PKT_NTYPES, "names");
	for (int i = 0; i < HWT_PKT_NTYPES; i++)
		CHECKF(!strcmp(hwt_pt_pkt_name(i), want[i]), "type %d: %s", i, hwt_pt_pkt_name(i));
	CHECK(!strcmp(hwt_pt_pkt_name(HWT_PKT_NTYPES), "<invalid>"));
	CHECK(!strcmp(hwt_pt_pkt_name((enum hwt_pt_pkt_type)200), "<invalid>"));
}

/* ---- corpus: a minimal ptdump (default columns) ---------------------- */

static const char *corpus(void)
{
	const char *c = getenv("CORPUS");
	return c && *c ? c : "../shared/corpus/libipt-ptt";
}

static char *fmt_payload(char *o, const struct hwt_pt_packet *p)
{
	const __typeof__(p->u) *u = &p->u;
	switch (p->type) {
	case HWT_PKT_TIP:
	case HWT_PKT_TIP_PGE:
	case HWT_PKT_TIP_PGD:
	case HWT_PKT_FUP: {
		static const int digits[8] = {0, 4, 8, 16, 12, 0, 16, 0};
		uint64_t ip = u->ip.ip;
		if (u->ip.ipc == 3 && (ip & (1ull << 47)))
			ip |= 0xffff000000000000ull;
		char hex[17];
		snprintf(hex, sizeof(hex), "%016" PRIx64, ip);
		int d = digits[u->ip.ipc & 7];
		for (int i = 0; i < 16 - d; i++)
			hex[i] = '?';
		return o + sprintf(o, " %u: %s", u->ip.ipc, hex);
	}
	case HWT_PKT_TNT8:
	case HWT_PKT_TNT64:
		*o++ = ' ';
		for (int i = u->tnt.bits - 1; i >= 0; i--)
			*o++ = (u->tnt.payload >> i) & 1 ? '!' : '.';
		*o = 0;
		return o;
	case HWT_PKT_MODE_EXEC: {
		const char *sep = " ";
		if (u->mode_exec.csl)
			o += sprintf(o, "%scs.l", sep), sep = ", ";
		if (u->mode_exec.csd)
			o += sprintf(o, "%scs.d", sep), sep = ", ";
		if (u->mode_exec.iflag)
			o += sprintf(o, "%sif", sep);
		return o;
	}
	case HWT_PKT_MODE_TSX:
		return o + sprintf(o, "%s",
				   u->mode_tsx.intx   ? " intx"
				   : u->mode_tsx.abrt ? " abrt"
						      : "");
	case HWT_PKT_PIP:
		return o + sprintf(o, " %" PRIx64 "%s", u->pip.cr3, u->pip.nr ? ", nr" : "");
	case HWT_PKT_TSC:
		return o + sprintf(o, " %" PRIx64, u->tsc.tsc);
	case HWT_PKT_CBR:
		return o + sprintf(o, " %x", u->cbr.ratio);
	case HWT_PKT_TMA:
		return o + sprintf(o, " %x, %x", u->tma.ctc, u->tma.fc);
	case HWT_PKT_MTC:
		return o + sprintf(o, " %x", u->mtc.ctc);
	case HWT_PKT_CYC:
		return o + sprintf(o, " %" PRIx64, u->cyc.value);
	case HWT_PKT_VMCS:
		return o + sprintf(o, " %" PRIx64, u->vmcs.base);
	case HWT_PKT_MNT:
		return o + sprintf(o, " %" PRIx64, u->mnt.payload);
	case HWT_PKT_EXSTOP:
		return o + sprintf(o, "%s", u->exstop.ip ? " ip" : "");
	case HWT_PKT_MWAIT:
		return o + sprintf(o, " %08x, %08x", u->mwait.hints, u->mwait.ext);
	case HWT_PKT_PWRE:
		return o + sprintf(o, " c%u.%u%s", (u->pwre.state + 1) & 15,
				   (u->pwre.sub_state + 1) & 15, u->pwre.hw ? ", hw" : "");
	case HWT_PKT_PWRX:
		return o + sprintf(o, " %s: c%u, c%u",
				   u->pwrx.interrupt ? "int"
				   : u->pwrx.store   ? "st"
						     : "hw",
				   (u->pwrx.last + 1) & 15, (u->pwrx.deepest + 1) & 15);
	case HWT_PKT_PTW:
		return o + sprintf(o, " %u: %" PRIx64 "%s", u->ptw.plc, u->ptw.payload,
				   u->ptw.ip ? ", ip" : "");
	case HWT_PKT_CFE:
		o += sprintf(o, " %u", u->cfe.type);
		if (u->cfe.type == 1) /* INTR carries a vector */
			o += sprintf(o, ": %u", u->cfe.vector);
		return o + sprintf(o, "%s", u->cfe.ip ? ", ip" : "");
	case HWT_PKT_EVD:
		return o + sprintf(o, " %u: %" PRIx64, u->evd.type, u->evd.payload);
	case HWT_PKT_TRIG:
		o += sprintf(o, " %x%s%s", u->trig.trbv, u->trig.ip ? ", ip" : "",
			     u->trig.mult ? ", mult" : "");
		if (u->trig.icntv)
			o += sprintf(o, ", icnt: %u", u->trig.icnt);
		return o;
	default:
		*o = 0;
		return o;
	}
}

/* Collapse whitespace runs, strip the ends. */
static void norm(char *s)
{
	char *o = s;
	int sp = 0;
	for (char *i = s; *i; i++) {
		if (isspace((unsigned char)*i)) {
			sp = 1;
			continue;
		}
		if (sp && o != s)
			*o++ = ' ';
		sp = 0;
		*o++ = *i;
	}
	*o = 0;
}

/* ptdump's loop: sync forward (unless nosync), dump, on error print the
 * diagnostic and sync forward again.  Compares with the .exp line by
 * line; tracking columns (cr3/vmcs/type) after the payload are ignored. */
enum { D_NOSYNC = 1, D_NOOFFSET = 2 };

static void dump_compare(const char *test, int flags, const struct hwt_pt_errata *errata)
{
	char path[1024], line[512];
	size_t len, elen;
	snprintf(path, sizeof(path), "%s/%s/%s.pt", corpus(), test, test);
	uint8_t *pt = t_slurp(path, &len);
	snprintf(path, sizeof(path), "%s/%s/%s-ptdump.exp", corpus(), test, test);
	char *exp = (char *)t_slurp(path, &elen);
	CHECKF(pt && exp, "cannot read %s", path);
	if (!pt || !exp) {
		free(pt), free(exp);
		return;
	}
	struct hwt_pt_buf buf = {pt, pt + len, NULL, NULL};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	if (errata)
		hwt_pt_pkt_set_errata(dec, errata);
	char *save = NULL, *e = strtok_r(exp, "\n", &save);
	int r = (flags & D_NOSYNC) ? hwt_pt_pkt_sync_set(dec, 0) : hwt_pt_pkt_sync_forward(dec);
	for (int guard = 0; r >= 0 && guard < 100000; guard++) {
		uint64_t off = 0;
		struct hwt_pt_packet pkt;
		hwt_pt_pkt_offset(dec, &off);
		r = hwt_pt_pkt_next(dec, &pkt);
		if (r == HWT_ERR_EOS)
			break;
		if (r < 0) {
			snprintf(line, sizeof(line), "[%" PRIx64 ": error decoding packet: %s]",
				 off, hwt_errstr(r));
			r = hwt_pt_pkt_sync_forward(dec);
		} else {
			char *o = line;
			if (!(flags & D_NOOFFSET))
				o += sprintf(o, "%016" PRIx64 " ", off);
			o += sprintf(o, "%s", hwt_pt_pkt_name(pkt.type));
			fmt_payload(o, &pkt);
		}
		norm(line);
		while (e && e[0] == ';')
			e = strtok_r(NULL, "\n", &save);
		CHECKF(e != NULL, "%s: extra output '%s'", test, line);
		if (!e)
			break;
		norm(e);
		size_t n = strlen(line);
		int ok = !strncmp(e, line, n) &&
			 (e[n] == 0 || (e[n] == ' ' && (!strncmp(e + n + 1, "cr3 ", 4) ||
							!strncmp(e + n + 1, "vmcs ", 5) ||
							!strncmp(e + n + 1, "type ", 5))));
		CHECKF(ok, "%s: got '%s', want '%s'", test, line, e);
		e = strtok_r(NULL, "\n", &save);
	}
	while (e && e[0] == ';')
		e = strtok_r(NULL, "\n", &save);
	CHECKF(e == NULL, "%s: missing '%s'", test, e ? e : "");
	hwt_pt_pkt_free(dec);
	free(pt);
	free(exp);
}

static void t_corpus_dump_all_packets(void)
{
	dump_compare("dump-all-packets", D_NOSYNC, NULL);
}

static void t_corpus_error_resync(void)
{
	dump_compare("ptdump-bad_opc-resync", 0, NULL);
	dump_compare("ptdump-trunc-resync", D_NOOFFSET, NULL);
	dump_compare("tma-reserved_ctc", 0, NULL);
	dump_compare("tma-reserved_fc", 0, NULL);
}

static void t_corpus_packet_errata(void)
{
	struct hwt_pt_errata er;
	struct hwt_cpu cpu;
	CHECK(hwt_pt_cpu_parse(&cpu, "6/78") == 0 && hwt_pt_cpu_errata(&er, &cpu) == 0);
	dump_compare("skd007", 0, &er);
	CHECK(hwt_pt_cpu_parse(&cpu, "6/85") == 0 && hwt_pt_cpu_errata(&er, &cpu) == 0);
	dump_compare("skz84", 0, &er);
}

/* ---- cpu / errata ---------------------------------------------------- */

static void t_cpu_parse(void)
{
	struct hwt_cpu c;
	CHECK(hwt_pt_cpu_parse(&c, "6/142") == 0 && c.vendor == HWT_CPU_INTEL && c.family == 6 &&
	      c.model == 142 && c.stepping == 0);
	CHECK(hwt_pt_cpu_parse(&c, "6/85/7") == 0 && c.model == 85 && c.stepping == 7);
	CHECK(hwt_pt_cpu_parse(&c, "0/0") == 0 && c.family == 0 && c.model == 0);
	static const char *const bad[] = {"",	     "6",     "6/",  "/6",   "6/x",  "6/1/",
					  "6/1/2/3", "6/256", "a/b", "6 /1", "-6/1", "6/1x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECKF(hwt_pt_cpu_parse(&c, bad[i]) == HWT_ERR_INVALID, "'%s'", bad[i]);
}

static int errata_flag(const struct hwt_pt_errata *e, const char *name)
{
	static const char *const names[] = {"bdm70",  "bdm64", "skd007", "skd022", "skd010",
					    "skl014", "apl12", "apl11",	 "skl168", "skz84"};
	const unsigned v[] = {e->bdm70,	 e->bdm64, e->skd007, e->skd022, e->skd010,
			      e->skl014, e->apl12, e->apl11,  e->skl168, e->skz84};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(name, names[i], strlen(names[i])))
			return (int)v[i];
	return -1;
}

/* Every cpu listed in an errata test's index.tsv row must get that erratum. */
static void t_cpu_errata_corpus(void)
{
	char path[1024];
	size_t len;
	snprintf(path, sizeof(path), "%s/index.tsv", corpus());
	char *idx = (char *)t_slurp(path, &len);
	CHECKF(idx != NULL, "cannot read %s", path);
	if (!idx)
		return;
	int rows = 0, pairs = 0;
	char *save = NULL;
	for (char *ln = strtok_r(idx, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *tab1 = strchr(ln, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
		char *tab3 = tab2 ? strchr(tab2 + 1, '\t') : NULL;
		if (!tab3 || tab3 == tab2 + 1)
			continue;
		*tab1 = *tab3 = 0;
		struct hwt_pt_errata dummy = {0};
		if (errata_flag(&dummy, ln) < 0)
			continue;
		rows++;
		char *s2 = NULL;
		for (char *c = strtok_r(tab2 + 1, ",", &s2); c; c = strtok_r(NULL, ",", &s2)) {
			struct hwt_cpu cpu;
			struct hwt_pt_errata er;
			CHECKF(hwt_pt_cpu_parse(&cpu, c) == 0, "%s: cpu %s", ln, c);
			CHECKF(hwt_pt_cpu_errata(&er, &cpu) == 0, "%s: cpu %s unknown", ln, c);
			CHECKF(errata_flag(&er, ln) == 1, "%s: cpu %s lacks the erratum", ln, c);
			pairs++;
		}
	}
	CHECKF(rows >= 21 && pairs > 100, "only %d rows, %d cpus", rows, pairs);
	free(idx);
}

static void t_cpu_errata_unknown(void)
{
	struct hwt_cpu c;
	struct hwt_pt_errata er;
	memset(&er, 0xff, sizeof(er));
	hwt_pt_cpu_parse(&c, "0/0");
	CHECK(hwt_pt_cpu_errata(&er, &c) == HWT_ERR_BAD_CPU);
	CHECK(!er.bdm70 && !er.skz84 && !er.apl11);
	c.vendor = HWT_CPU_UNKNOWN;
	c.family = 6, c.model = 0x3d;
	CHECK(hwt_pt_cpu_errata(&er, &c) == HWT_ERR_BAD_CPU);
	/* Broadwell: BDM64 and BDM70 only (the bdm64-* tests list exactly these) */
	hwt_pt_cpu_parse(&c, "6/61");
	CHECK(hwt_pt_cpu_errata(&er, &c) == 0 && er.bdm64 && er.bdm70 && !er.skd007 && !er.skl014 &&
	      !er.skz84 && !er.apl11 && !er.apl12);
	CHECK(hwt_pt_cpu_errata(NULL, &c) == HWT_ERR_INVALID);
}

int main(void)
{
	RUN(t_table_parse_and_encode);
	RUN(t_bip_needs_block_context);
	RUN(t_error_classes);
	RUN(t_encode_rejects_bad_fields);
	RUN(t_cyc_minimal_encoding);
	RUN(t_last_ip);
	RUN(t_ipc_for);
	RUN(t_names);
	RUN(t_corpus_dump_all_packets);
	RUN(t_corpus_error_resync);
	RUN(t_corpus_packet_errata);
	RUN(t_cpu_parse);
	RUN(t_cpu_errata_corpus);
	RUN(t_cpu_errata_unknown);
	return t_done();
}
