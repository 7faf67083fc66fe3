/* lib/pt/packet_parse.c - bytes -> one Intel PT packet.
 *
 * Design: hwt_pt_pkt_parse() is a pure function.  The first byte selects a
 * class through a 256-entry table and one switch (no per-packet function
 * pointers); the two-byte (0x02 ...) packets are a second switch.  Facts
 * come from the Intel SDM vol. 3, "Intel Processor Trace", packet
 * definitions; the newer CFE/EVD/TRIG layouts and the error classes follow
 * what the libipt-ptt corpus shows:
 *   - HWT_ERR_BAD_OPC: the opcode (or its extension byte) is not a packet;
 *   - HWT_ERR_BAD_PACKET: a known opcode with a reserved payload (IPBytes 5
 *     or 7, PTW payload size 2/3, MODE leaf other than exec/tsx, TNT-64
 *     without payload bits, TMA reserved bits, a broken PSB pattern, a CYC
 *     longer than 64 bits);
 *   - HWT_ERR_EOS: the packet does not fit into avail.  For IP and PTW
 *     packets the reserved-size check comes first (the size is unknown).
 * BIP packets exist only between BBP and BEP (their header collides with
 * TNT-8): hwt_pt_pkt_parse_ctx() takes the block context, which the packet
 * decoder tracks.  No allocation, no state; reads never go past avail.
 */
#include <string.h>

#include "hwt/pt_packet.h"

enum pkt_class {
	K_BAD = 0,
	K_PAD,
	K_TNT8,
	K_TIP,
	K_PGE,
	K_PGD,
	K_FUP,
	K_CYC,
	K_TSC,
	K_MTC,
	K_MODE,
	K_TRIG,
	K_EXT,
};

/* Class of each first byte (generated from the opcode masks:
 * xxxxxxx0 TNT-8 except 00 PAD and 02 EXT, xxxxxx11 CYC, low five bits
 * 01/0d/11/1d the IP packets, 19/59/99/d9 TSC/MTC/MODE/TRIG). */
static const uint8_t first_class[256] = {
    K_PAD,  K_PGD,  K_EXT,  K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 00 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* 08 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 10 */
    K_TNT8, K_TSC,  K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* 18 */
    K_TNT8, K_PGD,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 20 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* 28 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 30 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* 38 */
    K_TNT8, K_PGD,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 40 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* 48 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 50 */
    K_TNT8, K_MTC,  K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* 58 */
    K_TNT8, K_PGD,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 60 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* 68 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 70 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* 78 */
    K_TNT8, K_PGD,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 80 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* 88 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* 90 */
    K_TNT8, K_MODE, K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* 98 */
    K_TNT8, K_PGD,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* a0 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* a8 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* b0 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* b8 */
    K_TNT8, K_PGD,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* c0 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* c8 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* d0 */
    K_TNT8, K_TRIG, K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* d8 */
    K_TNT8, K_PGD,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* e0 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_TIP, K_TNT8, K_CYC, /* e8 */
    K_TNT8, K_PGE,  K_TNT8, K_CYC, K_TNT8, K_BAD, K_TNT8, K_CYC, /* f0 */
    K_TNT8, K_BAD,  K_TNT8, K_CYC, K_TNT8, K_FUP, K_TNT8, K_CYC, /* f8 */
};

/* Payload bytes for each IPBytes value; -1 reserved. */
static const int8_t ipc_bytes[8] = {0, 2, 4, 6, 6, -1, 8, -1};

static const uint8_t ip_type[] = {
    [K_TIP] = HWT_PKT_TIP,
    [K_PGE] = HWT_PKT_TIP_PGE,
    [K_PGD] = HWT_PKT_TIP_PGD,
    [K_FUP] = HWT_PKT_FUP,
};

/* Little-endian load of n (0..8) bytes. */
static inline uint64_t rd_le(const uint8_t *p, unsigned n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t v = 0;
	memcpy(&v, p, n);
	return v;
#else
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
#endif
}

static inline int fail(struct hwt_pt_packet *pkt, int err)
{
	pkt->type = HWT_PKT_INVALID;
	pkt->size = 0;
	return err;
}

static inline int done(struct hwt_pt_packet *pkt, int type, int size)
{
	pkt->type = (uint8_t)type;
	pkt->size = (uint8_t)size;
	return size;
}

/* Index of the highest set bit of v (v != 0). */
static inline unsigned msb64(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

static int parse_cyc(const uint8_t *p, size_t avail, struct hwt_pt_packet *pkt)
{
	uint64_t value = p[0] >> 3;
	unsigned shl = 5;
	size_t i = 1;
	int more = p[0] & 0x04;

	while (more) {
		if (i >= avail)
			return fail(pkt, HWT_ERR_EOS);
		uint64_t bits = p[i] >> 1;
		more = p[i] & 1;
		i++;
		if (shl + 7 > 64)
			return fail(pkt, HWT_ERR_BAD_PACKET);
		value |= bits << shl;
		shl += 7;
	}
	pkt->u.cyc.value = value;
	return done(pkt, HWT_PKT_CYC, (int)i);
}

static int parse_ext(const uint8_t *p, size_t avail, struct hwt_pt_packet *pkt)
{
	if (avail < 2)
		return fail(pkt, HWT_ERR_EOS);
	uint8_t ext = p[1];

	switch (ext) {
	case 0x82: /* PSB */
		if (avail < 16)
			return fail(pkt, HWT_ERR_EOS);
		for (int i = 2; i < 16; i += 2)
			if (p[i] != 0x02 || p[i + 1] != 0x82)
				return fail(pkt, HWT_ERR_BAD_PACKET);
		return done(pkt, HWT_PKT_PSB, 16);
	case 0x23:
		return done(pkt, HWT_PKT_PSBEND, 2);
	case 0xf3:
		return done(pkt, HWT_PKT_OVF, 2);
	case 0x83:
		return done(pkt, HWT_PKT_TRACESTOP, 2);
	case 0xa3: { /* TNT-64 */
		if (avail < 8)
			return fail(pkt, HWT_ERR_EOS);
		uint64_t v = rd_le(p + 2, 6);
		if (v < 2)
			return fail(pkt, HWT_ERR_BAD_PACKET);
		unsigned bits = msb64(v);
		pkt->u.tnt.bits = (uint8_t)bits;
		pkt->u.tnt.payload = v & ~(1ull << bits);
		return done(pkt, HWT_PKT_TNT64, 8);
	}
	case 0x43: { /* PIP */
		if (avail < 8)
			return fail(pkt, HWT_ERR_EOS);
		uint64_t v = rd_le(p + 2, 6);
		pkt->u.pip.nr = v & 1;
		pkt->u.pip.cr3 = (v >> 1) << 5;
		return done(pkt, HWT_PKT_PIP, 8);
	}
	case 0x03: /* CBR */
		if (avail < 4)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.cbr.ratio = p[2];
		return done(pkt, HWT_PKT_CBR, 4);
	case 0x73: { /* TMA */
		if (avail < 7)
			return fail(pkt, HWT_ERR_EOS);
		uint16_t fc = (uint16_t)(p[5] | (p[6] << 8));
		if (p[4] != 0 || (fc & ~0x1ffu))
			return fail(pkt, HWT_ERR_BAD_PACKET);
		pkt->u.tma.ctc = (uint16_t)(p[2] | (p[3] << 8));
		pkt->u.tma.fc = fc;
		return done(pkt, HWT_PKT_TMA, 7);
	}
	case 0xc8: /* VMCS */
		if (avail < 7)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.vmcs.base = rd_le(p + 2, 5) << 12;
		return done(pkt, HWT_PKT_VMCS, 7);
	case 0xc3: /* EXT2 */
		if (avail < 3)
			return fail(pkt, HWT_ERR_EOS);
		if (p[2] != 0x88)
			return fail(pkt, HWT_ERR_BAD_OPC);
		if (avail < 11)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.mnt.payload = rd_le(p + 3, 8);
		return done(pkt, HWT_PKT_MNT, 11);
	case 0x62:
	case 0xe2:
		pkt->u.exstop.ip = ext >> 7;
		return done(pkt, HWT_PKT_EXSTOP, 2);
	case 0xc2: /* MWAIT */
		if (avail < 10)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.mwait.hints = (uint32_t)rd_le(p + 2, 4);
		pkt->u.mwait.ext = (uint32_t)rd_le(p + 6, 4);
		return done(pkt, HWT_PKT_MWAIT, 10);
	case 0x22: /* PWRE */
		if (avail < 4)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.pwre.hw = (p[2] >> 3) & 1;
		pkt->u.pwre.state = p[3] >> 4;
		pkt->u.pwre.sub_state = p[3] & 0xf;
		return done(pkt, HWT_PKT_PWRE, 4);
	case 0xa2: /* PWRX */
		if (avail < 7)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.pwrx.last = p[2] >> 4;
		pkt->u.pwrx.deepest = p[2] & 0xf;
		pkt->u.pwrx.interrupt = p[3] & 1;
		pkt->u.pwrx.store = (p[3] >> 2) & 1;
		pkt->u.pwrx.autonomous = (p[3] >> 3) & 1;
		return done(pkt, HWT_PKT_PWRX, 7);
	case 0x13: /* CFE */
		if (avail < 4)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.cfe.type = p[2] & 0x1f;
		pkt->u.cfe.ip = p[2] >> 7;
		pkt->u.cfe.vector = p[3];
		return done(pkt, HWT_PKT_CFE, 4);
	case 0x53: /* EVD */
		if (avail < 11)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.evd.type = p[2] & 0x1f;
		pkt->u.evd.payload = rd_le(p + 3, 8);
		return done(pkt, HWT_PKT_EVD, 11);
	case 0x63: /* BBP */
		if (avail < 3)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.bbp.sz = p[2] >> 7;
		pkt->u.bbp.type = p[2] & 0x1f;
		return done(pkt, HWT_PKT_BBP, 3);
	case 0x33:
	case 0xb3:
		pkt->u.bep.ip = ext >> 7;
		return done(pkt, HWT_PKT_BEP, 2);
	default:
		if ((ext & 0x1f) == 0x12) { /* PTW */
			unsigned plc = (ext >> 5) & 3;
			if (plc > 1)
				return fail(pkt, HWT_ERR_BAD_PACKET);
			unsigned n = plc ? 8 : 4;
			if (avail < 2 + n)
				return fail(pkt, HWT_ERR_EOS);
			pkt->u.ptw.plc = (uint8_t)plc;
			pkt->u.ptw.ip = ext >> 7;
			pkt->u.ptw.payload = rd_le(p + 2, n);
			return done(pkt, HWT_PKT_PTW, (int)(2 + n));
		}
		return fail(pkt, HWT_ERR_BAD_OPC);
	}
}

int hwt_pt_pkt_parse_ctx(const uint8_t *p, size_t avail, int ctx, struct hwt_pt_packet *pkt)
{
	if (!avail)
		return fail(pkt, HWT_ERR_EOS);
	uint8_t b = p[0];

	if (ctx != HWT_PKT_CTX_NONE && (b & 7) == 4) {
		unsigned n = ctx == HWT_PKT_CTX_BIP4 ? 4 : 8;
		if (avail < 1 + n)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.bip.id = b >> 3;
		pkt->u.bip.payload = rd_le(p + 1, n);
		return done(pkt, HWT_PKT_BIP, (int)(1 + n));
	}

	switch (first_class[b]) {
	case K_TNT8: {
		unsigned v = b >> 1, bits = 31u - (unsigned)__builtin_clz(v);
		pkt->u.tnt.bits = (uint8_t)bits;
		pkt->u.tnt.payload = v & ~(1u << bits);
		return done(pkt, HWT_PKT_TNT8, 1);
	}
	case K_TIP:
	case K_PGE:
	case K_PGD:
	case K_FUP: {
		unsigned ipc = b >> 5;
		int n = ipc_bytes[ipc];
		if (n < 0)
			return fail(pkt, HWT_ERR_BAD_PACKET);
		if (avail < (size_t)n + 1)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.ip.ipc = (uint8_t)ipc;
		pkt->u.ip.ip = rd_le(p + 1, (unsigned)n);
		return done(pkt, ip_type[first_class[b]], n + 1);
	}
	case K_PAD:
		return done(pkt, HWT_PKT_PAD, 1);
	case K_CYC:
		return parse_cyc(p, avail, pkt);
	case K_MTC:
		if (avail < 2)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.mtc.ctc = p[1];
		return done(pkt, HWT_PKT_MTC, 2);
	case K_TSC:
		if (avail < 8)
			return fail(pkt, HWT_ERR_EOS);
		pkt->u.tsc.tsc = rd_le(p + 1, 7);
		return done(pkt, HWT_PKT_TSC, 8);
	case K_MODE: {
		if (avail < 2)
			return fail(pkt, HWT_ERR_EOS);
		uint8_t m = p[1];
		switch (m & 0xe0) {
		case 0x00:
			pkt->u.mode_exec.csl = m & 1;
			pkt->u.mode_exec.csd = (m >> 1) & 1;
			pkt->u.mode_exec.iflag = (m >> 2) & 1;
			return done(pkt, HWT_PKT_MODE_EXEC, 2);
		case 0x20:
			pkt->u.mode_tsx.intx = m & 1;
			pkt->u.mode_tsx.abrt = (m >> 1) & 1;
			return done(pkt, HWT_PKT_MODE_TSX, 2);
		default:
			return fail(pkt, HWT_ERR_BAD_PACKET);
		}
	}
	case K_TRIG: {
		if (avail < 3)
			return fail(pkt, HWT_ERR_EOS);
		int size = 3;
		pkt->u.trig.icnt = 0;
		if (p[1] & 0x40) {
			if (avail < 5)
				return fail(pkt, HWT_ERR_EOS);
			pkt->u.trig.icnt = (uint16_t)(p[3] | (p[4] << 8));
			size = 5;
		}
		pkt->u.trig.ip = p[1] >> 7;
		pkt->u.trig.icntv = (p[1] >> 6) & 1;
		pkt->u.trig.mult = (p[1] >> 5) & 1;
		pkt->u.trig.trbv = p[2];
		return done(pkt, HWT_PKT_TRIG, size);
	}
	case K_EXT:
		return parse_ext(p, avail, pkt);
	default:
		return fail(pkt, HWT_ERR_BAD_OPC);
	}
}

int hwt_pt_pkt_parse(const uint8_t *p, size_t avail, struct hwt_pt_packet *pkt)
{
	return hwt_pt_pkt_parse_ctx(p, avail, HWT_PKT_CTX_NONE, pkt);
}

int hwt_pt_pkt_ctx_after(int ctx, const struct hwt_pt_packet *pkt)
{
	switch (pkt->type) {
	case HWT_PKT_BBP:
		return pkt->u.bbp.sz ? HWT_PKT_CTX_BIP4 : HWT_PKT_CTX_BIP8;
	case HWT_PKT_BIP:
	case HWT_PKT_PAD:
	case HWT_PKT_TSC:
	case HWT_PKT_MTC:
	case HWT_PKT_CYC:
	case HWT_PKT_TMA:
	case HWT_PKT_CBR:
		return ctx;
	default:
		return HWT_PKT_CTX_NONE;
	}
}
