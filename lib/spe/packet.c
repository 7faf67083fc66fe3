/* lib/spe/packet.c - Arm SPE packets: decode one, print one (hwt/spe.h).
 *
 * Written from the packet formats of the Arm Architecture Reference
 * Manual (Statistical Profiling Extension).  Pure functions over memory;
 * a packet is never read past the n bytes given.
 */
#include <stdio.h>
#include <string.h>

#include "hwt/spe.h"

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int hwt_spe_pkt_decode(const uint8_t *p, size_t n, struct hwt_spe_packet *pkt)
{
	if (!n)
		return HWT_ERR_EOS;
	memset(pkt, 0, sizeof(*pkt));
	uint8_t h = p[0];
	unsigned hdr = 1, plen = 0, ext = 0;
	if ((h & 0xfc) == 0x20) { /* extended header: index bits [4:3] */
		if (n < 2)
			return HWT_ERR_BAD_PACKET;
		ext = h & 3;
		h = p[1];
		hdr = 2;
		if ((h & 0xf8) != 0xb0 && (h & 0xf8) != 0x98)
			return HWT_ERR_BAD_PACKET;
	}
	if (h == 0x00) {
		pkt->type = HWT_SPE_PAD;
	} else if (h == 0x01) {
		pkt->type = HWT_SPE_END;
	} else if (h == 0x71) {
		pkt->type = HWT_SPE_TIMESTAMP;
		plen = 8;
	} else if ((h & 0xcf) == 0x42) {
		pkt->type = HWT_SPE_EVENTS;
		plen = 1u << ((h >> 4) & 3);
	} else if ((h & 0xcf) == 0x43) {
		pkt->type = HWT_SPE_DATA_SOURCE;
		plen = 1u << ((h >> 4) & 3);
	} else if ((h & 0xcc) == 0x44) {
		pkt->type = HWT_SPE_CONTEXT;
		pkt->index = h & 3;
		plen = 1u << ((h >> 4) & 3);
	} else if ((h & 0xfc) == 0x48) {
		pkt->type = HWT_SPE_OP_TYPE;
		pkt->index = h & 3;
		plen = 1;
	} else if ((h & 0xf8) == 0xb0) {
		pkt->type = HWT_SPE_ADDRESS;
		pkt->index = (uint8_t)((ext << 3) | (h & 7));
		plen = 8;
	} else if ((h & 0xf8) == 0x98) {
		pkt->type = HWT_SPE_COUNTER;
		pkt->index = (uint8_t)((ext << 3) | (h & 7));
		plen = 2;
	} else {
		return HWT_ERR_BAD_PACKET;
	}
	if (hdr + plen > n)
		return HWT_ERR_BAD_PACKET;
	pkt->plen = (uint8_t)plen;
	pkt->size = (uint8_t)(hdr + plen);
	pkt->payload = le(p + hdr, plen);
	return (int)pkt->size;
}

uint64_t hwt_spe_insn_addr(uint64_t payload)
{
	uint64_t a = payload & 0x00ffffffffffffffull;
	if (a & (1ull << 55))
		a |= 0xff00000000000000ull;
	return a;
}

static const char *const ev_names[] = {
    "EXCEPTION-GEN", "RETIRED", "L1D-ACCESS", "L1D-REFILL", "TLB-ACCESS",    "TLB-REFILL",
    "NOT-TAKEN",     "MISPRED", "LLC-ACCESS", "LLC-REFILL", "REMOTE-ACCESS", "ALIGNMENT",
};

#define OUT(...)                                                                                   \
	do {                                                                                       \
		int k_ = snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, __VA_ARGS__);  \
		if (k_ > 0)                                                                        \
			len += (size_t)k_;                                                         \
	} while (0)

int hwt_spe_pkt_print(const struct hwt_spe_packet *pkt, char *buf, size_t n)
{
	size_t len = 0;
	uint64_t v = pkt->payload;
	if (n)
		buf[0] = 0;
	switch (pkt->type) {
	case HWT_SPE_PAD:
		OUT("PAD");
		break;
	case HWT_SPE_END:
		OUT("END");
		break;
	case HWT_SPE_TIMESTAMP:
		OUT("TS %llu", (unsigned long long)v);
		break;
	case HWT_SPE_EVENTS:
		OUT("EV");
		for (unsigned i = 0; i < pkt->plen * 8u && i < 64; i++)
			if (v >> i & 1) {
				if (i < sizeof(ev_names) / sizeof(ev_names[0]))
					OUT(" %s", ev_names[i]);
				else
					OUT(" EV%u", i);
			}
		break;
	case HWT_SPE_DATA_SOURCE:
		OUT("DATA-SOURCE %llu", (unsigned long long)v);
		break;
	case HWT_SPE_CONTEXT:
		OUT("CONTEXT 0x%llx el%d", (unsigned long long)v, pkt->index == 1 ? 2 : 1);
		break;
	case HWT_SPE_OP_TYPE:
		if (pkt->index == HWT_SPE_OP_OTHER) {
			OUT("OTHER%s", v & 1 ? " COND" : "");
		} else if (pkt->index == HWT_SPE_OP_LDST) {
			OUT("%s", v & 1 ? "ST" : "LD");
			if (v & 2) {
				if (v & 4)
					OUT(" AT");
				if (v & 8)
					OUT(" EXCL");
				if (v & 16)
					OUT(" AR");
			} else if ((v & 0xfe) == 0x04) {
				OUT(" SIMD-FP");
			} else if ((v & 0xfe) == 0) {
				OUT(" GP-REG");
			} else {
				OUT(" SUBCLASS 0x%llx", (unsigned long long)(v & 0xfe));
			}
		} else if (pkt->index == HWT_SPE_OP_BRANCH) {
			OUT("B%s%s", v & 1 ? " COND" : "", v & 2 ? " IND" : "");
		} else {
			OUT("OP-CLASS%d 0x%llx", pkt->index, (unsigned long long)v);
		}
		break;
	case HWT_SPE_ADDRESS: {
		int ns = (int)(v >> 63), el = (int)((v >> 61) & 3);
		switch (pkt->index) {
		case HWT_SPE_ADDR_PC:
			OUT("PC 0x%llx el%d ns=%d", (unsigned long long)hwt_spe_insn_addr(v), el,
			    ns);
			break;
		case HWT_SPE_ADDR_TARGET:
			OUT("TGT 0x%llx el%d ns=%d", (unsigned long long)hwt_spe_insn_addr(v), el,
			    ns);
			break;
		case HWT_SPE_ADDR_DATA_VA:
			OUT("VA 0x%llx", (unsigned long long)v);
			break;
		case HWT_SPE_ADDR_DATA_PA:
			OUT("PA 0x%llx ns=%d", (unsigned long long)(v & 0x00ffffffffffffffull), ns);
			break;
		case HWT_SPE_ADDR_PREV_TARGET:
			OUT("PBT 0x%llx el%d ns=%d", (unsigned long long)hwt_spe_insn_addr(v), el,
			    ns);
			break;
		default:
			OUT("ADDR%d 0x%llx", pkt->index, (unsigned long long)v);
			break;
		}
		break;
	}
	case HWT_SPE_COUNTER: {
		static const char *const cn[] = {"TOT", "ISSUE", "XLAT"};
		if (pkt->index < 3)
			OUT("LAT %llu %s", (unsigned long long)v, cn[pkt->index]);
		else
			OUT("LAT %llu CNT%d", (unsigned long long)v, pkt->index);
		break;
	}
	default:
		OUT("BAD");
		break;
	}
	return (int)len;
}
