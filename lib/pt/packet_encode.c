/* lib/pt/packet_encode.c - one Intel PT packet -> bytes.
 *
 * Design: the exact inverse of packet_parse.c for every packet type (SDM
 * vol. 3 packet layouts, CFE/EVD/TRIG as in the libipt-ptt corpus).  Pure
 * function, no state: the caller keeps a struct hwt_pt_last_ip and picks
 * the IP compression with hwt_pt_ipc_for().  Fields that do not fit their
 * packet field give HWT_ERR_INVALID (nothing is silently truncated, except
 * that an IP packet carries only the low payload bytes of u.ip.ip, as the
 * hardware does); a too-small room gives HWT_ERR_NOMEM.
 */
#include <string.h>

#include "hwt/pt_packet.h"

static void wr_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int fits(uint64_t v, unsigned bits)
{
	return bits >= 64 || (v >> bits) == 0;
}

int hwt_pt_pkt_encode(uint8_t *out, size_t room, const struct hwt_pt_packet *pkt)
{
	uint8_t b[HWT_PT_PKT_MAX_SIZE];
	int n;

	if (!out || !pkt)
		return HWT_ERR_INVALID;

	switch (pkt->type) {
	case HWT_PKT_PAD:
		b[0] = 0x00;
		n = 1;
		break;
	case HWT_PKT_PSB:
		for (int i = 0; i < 16; i += 2) {
			b[i] = 0x02;
			b[i + 1] = 0x82;
		}
		n = 16;
		break;
	case HWT_PKT_PSBEND:
		b[0] = 0x02;
		b[1] = 0x23;
		n = 2;
		break;
	case HWT_PKT_OVF:
		b[0] = 0x02;
		b[1] = 0xf3;
		n = 2;
		break;
	case HWT_PKT_TRACESTOP:
		b[0] = 0x02;
		b[1] = 0x83;
		n = 2;
		break;
	case HWT_PKT_TNT8: {
		unsigned bits = pkt->u.tnt.bits;
		if (bits < 1 || bits > 6 || !fits(pkt->u.tnt.payload, bits))
			return HWT_ERR_INVALID;
		b[0] = (uint8_t)((pkt->u.tnt.payload | (1u << bits)) << 1);
		n = 1;
		break;
	}
	case HWT_PKT_TNT64: {
		unsigned bits = pkt->u.tnt.bits;
		if (bits < 1 || bits > 47 || !fits(pkt->u.tnt.payload, bits))
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0xa3;
		wr_le(b + 2, pkt->u.tnt.payload | (1ull << bits), 6);
		n = 8;
		break;
	}
	case HWT_PKT_TIP:
	case HWT_PKT_TIP_PGE:
	case HWT_PKT_TIP_PGD:
	case HWT_PKT_FUP: {
		static const uint8_t opc[] = {
		    [HWT_PKT_TIP] = 0x0d,
		    [HWT_PKT_TIP_PGE] = 0x11,
		    [HWT_PKT_TIP_PGD] = 0x01,
		    [HWT_PKT_FUP] = 0x1d,
		};
		static const int8_t bytes[8] = {0, 2, 4, 6, 6, -1, 8, -1};
		unsigned ipc = pkt->u.ip.ipc;
		if (ipc > 7 || bytes[ipc] < 0)
			return HWT_ERR_INVALID;
		b[0] = (uint8_t)(opc[pkt->type] | (ipc << 5));
		wr_le(b + 1, pkt->u.ip.ip, (unsigned)bytes[ipc]);
		n = 1 + bytes[ipc];
		break;
	}
	case HWT_PKT_PIP: {
		uint64_t cr3 = pkt->u.pip.cr3;
		if ((cr3 & 0x1f) || !fits(cr3, 52) || pkt->u.pip.nr > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0x43;
		wr_le(b + 2, ((cr3 >> 5) << 1) | pkt->u.pip.nr, 6);
		n = 8;
		break;
	}
	case HWT_PKT_MODE_EXEC:
		if (pkt->u.mode_exec.csl > 1 || pkt->u.mode_exec.csd > 1 ||
		    pkt->u.mode_exec.iflag > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x99;
		b[1] = (uint8_t)(pkt->u.mode_exec.csl | (pkt->u.mode_exec.csd << 1) |
				 (pkt->u.mode_exec.iflag << 2));
		n = 2;
		break;
	case HWT_PKT_MODE_TSX:
		if (pkt->u.mode_tsx.intx > 1 || pkt->u.mode_tsx.abrt > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x99;
		b[1] = (uint8_t)(0x20 | pkt->u.mode_tsx.intx | (pkt->u.mode_tsx.abrt << 1));
		n = 2;
		break;
	case HWT_PKT_CBR:
		b[0] = 0x02;
		b[1] = 0x03;
		b[2] = pkt->u.cbr.ratio;
		b[3] = 0;
		n = 4;
		break;
	case HWT_PKT_TSC:
		if (!fits(pkt->u.tsc.tsc, 56))
			return HWT_ERR_INVALID;
		b[0] = 0x19;
		wr_le(b + 1, pkt->u.tsc.tsc, 7);
		n = 8;
		break;
	case HWT_PKT_MTC:
		b[0] = 0x59;
		b[1] = pkt->u.mtc.ctc;
		n = 2;
		break;
	case HWT_PKT_TMA:
		if (!fits(pkt->u.tma.fc, 9))
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0x73;
		wr_le(b + 2, pkt->u.tma.ctc, 2);
		b[4] = 0;
		wr_le(b + 5, pkt->u.tma.fc, 2);
		n = 7;
		break;
	case HWT_PKT_CYC: {
		uint64_t v = pkt->u.cyc.value;
		if (!fits(v, 61))
			return HWT_ERR_INVALID;
		b[0] = (uint8_t)(0x03 | ((v & 0x1f) << 3));
		v >>= 5;
		n = 1;
		while (v) {
			b[n - 1] |= (n == 1) ? 0x04 : 0x01;
			b[n++] = (uint8_t)((v & 0x7f) << 1);
			v >>= 7;
		}
		break;
	}
	case HWT_PKT_VMCS: {
		uint64_t base = pkt->u.vmcs.base;
		if ((base & 0xfff) || !fits(base, 52))
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0xc8;
		wr_le(b + 2, base >> 12, 5);
		n = 7;
		break;
	}
	case HWT_PKT_MNT:
		b[0] = 0x02;
		b[1] = 0xc3;
		b[2] = 0x88;
		wr_le(b + 3, pkt->u.mnt.payload, 8);
		n = 11;
		break;
	case HWT_PKT_EXSTOP:
		if (pkt->u.exstop.ip > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = pkt->u.exstop.ip ? 0xe2 : 0x62;
		n = 2;
		break;
	case HWT_PKT_MWAIT:
		b[0] = 0x02;
		b[1] = 0xc2;
		wr_le(b + 2, pkt->u.mwait.hints, 4);
		wr_le(b + 6, pkt->u.mwait.ext, 4);
		n = 10;
		break;
	case HWT_PKT_PWRE:
		if (pkt->u.pwre.state > 15 || pkt->u.pwre.sub_state > 15 || pkt->u.pwre.hw > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0x22;
		b[2] = (uint8_t)(pkt->u.pwre.hw << 3);
		b[3] = (uint8_t)((pkt->u.pwre.state << 4) | pkt->u.pwre.sub_state);
		n = 4;
		break;
	case HWT_PKT_PWRX:
		if (pkt->u.pwrx.last > 15 || pkt->u.pwrx.deepest > 15 ||
		    pkt->u.pwrx.interrupt > 1 || pkt->u.pwrx.store > 1 ||
		    pkt->u.pwrx.autonomous > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0xa2;
		b[2] = (uint8_t)((pkt->u.pwrx.last << 4) | pkt->u.pwrx.deepest);
		b[3] = (uint8_t)(pkt->u.pwrx.interrupt | (pkt->u.pwrx.store << 2) |
				 (pkt->u.pwrx.autonomous << 3));
		b[4] = b[5] = b[6] = 0;
		n = 7;
		break;
	case HWT_PKT_PTW: {
		unsigned plc = pkt->u.ptw.plc, sz = plc ? 8 : 4;
		if (plc > 1 || pkt->u.ptw.ip > 1 || !fits(pkt->u.ptw.payload, sz * 8))
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = (uint8_t)(0x12 | (plc << 5) | (pkt->u.ptw.ip << 7));
		wr_le(b + 2, pkt->u.ptw.payload, sz);
		n = 2 + (int)sz;
		break;
	}
	case HWT_PKT_BBP:
		if (pkt->u.bbp.sz > 1 || pkt->u.bbp.type > 0x1f)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0x63;
		b[2] = (uint8_t)((pkt->u.bbp.sz << 7) | pkt->u.bbp.type);
		n = 3;
		break;
	case HWT_PKT_BIP: {
		unsigned sz = pkt->size == 5 ? 4 : pkt->size == 9 ? 8 : 0;
		if (!sz || pkt->u.bip.id > 0x1f || !fits(pkt->u.bip.payload, sz * 8))
			return HWT_ERR_INVALID;
		b[0] = (uint8_t)((pkt->u.bip.id << 3) | 4);
		wr_le(b + 1, pkt->u.bip.payload, sz);
		n = 1 + (int)sz;
		break;
	}
	case HWT_PKT_BEP:
		if (pkt->u.bep.ip > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = pkt->u.bep.ip ? 0xb3 : 0x33;
		n = 2;
		break;
	case HWT_PKT_CFE:
		if (pkt->u.cfe.type > 0x1f || pkt->u.cfe.ip > 1)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0x13;
		b[2] = (uint8_t)(pkt->u.cfe.type | (pkt->u.cfe.ip << 7));
		b[3] = pkt->u.cfe.vector;
		n = 4;
		break;
	case HWT_PKT_EVD:
		if (pkt->u.evd.type > 0x1f)
			return HWT_ERR_INVALID;
		b[0] = 0x02;
		b[1] = 0x53;
		b[2] = pkt->u.evd.type;
		wr_le(b + 3, pkt->u.evd.payload, 8);
		n = 11;
		break;
	case HWT_PKT_TRIG:
		if (pkt->u.trig.ip > 1 || pkt->u.trig.mult > 1 || pkt->u.trig.icntv > 1)
			return HWT_ERR_INVALID;
		b[0] = 0xd9;
		b[1] = (uint8_t)((pkt->u.trig.ip << 7) | (pkt->u.trig.icntv << 6) |
				 (pkt->u.trig.mult << 5));
		b[2] = pkt->u.trig.trbv;
		n = 3;
		if (pkt->u.trig.icntv) {
			wr_le(b + 3, pkt->u.trig.icnt, 2);
			n = 5;
		}
		break;
	default:
		return HWT_ERR_INVALID;
	}
	if ((size_t)n > room)
		return HWT_ERR_NOMEM;
	memcpy(out, b, (size_t)n);
	return n;
}
