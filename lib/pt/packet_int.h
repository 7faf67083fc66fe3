/* lib/pt/packet_int.h - what the packet decoder offers the rest of lib/pt
 * beyond the public API: a shortcut for the query decoder's hot path. */
#ifndef HWT_LIB_PT_PACKET_INT_H
#define HWT_LIB_PT_PACKET_INT_H

#include <stdint.h>

#include "hwt/pt_packet.h"

/* The packet decoder (packet_decoder.c), here for the inline shortcut. */
struct hwt_pt_pkt_decoder {
	const uint8_t *b1, *b2;
	uint64_t n1, total; /* part 1 length, stream length */
	uint64_t pos, sync;
	int synced;
	int ctx; /* enum hwt_pt_pkt_ctx */
	uint8_t skd007, skz84;
	uint8_t scratch[2 * HWT_PT_PKT_MAX_SIZE];
};

/* If the next packet is a TNT-8 (one byte: bit 0 clear, not PAD or the
 * 0x02 extended-opcode byte) outside a block context, read it as
 * hwt_pt_pkt_next would: fill *pkt and *off (its offset) and return 1.
 * Otherwise return 0 and change nothing. */
static inline int pkt_next_tnt8(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkt,
				uint64_t *off)
{
	uint8_t b;
	if (dec->ctx != HWT_PKT_CTX_NONE || !dec->synced)
		return 0;
	if (dec->pos < dec->n1)
		b = dec->b1[dec->pos];
	else if (dec->pos < dec->total)
		b = dec->b2[dec->pos - dec->n1];
	else
		return 0;
	if ((b & 1) || b <= 2)
		return 0;
	unsigned v = b >> 1u, n = 31u - (unsigned)__builtin_clz(v); /* v >= 2 */
	pkt->type = HWT_PKT_TNT8;
	pkt->size = 1;
	pkt->u.tnt.bits = (uint8_t)n;
	pkt->u.tnt.payload = v & ((1u << n) - 1u);
	*off = dec->pos++;
	return 1;
}

/* The size of the timing packet (MTC, CYC, TSC, TMA) at p, of which avail
 * bytes are readable, when hwt_pt_pkt_next would read exactly that packet
 * there outside a block context; 0 for anything else, and for what the
 * packet decoder must decide (a packet that does not fit, TMA reserved
 * bits (SKZ84), a 2-byte CYC under SKD007, a CYC of more than 4 bytes). */
static inline unsigned pkt_time_size(const uint8_t *p, uint64_t avail, int skd007)
{
	unsigned b = p[0], n;
	if (b == 0x59) { /* MTC */
		n = 2;
	} else if (b == 0x19) { /* TSC */
		n = 8;
	} else if ((b & 3) == 3) { /* CYC: bit 2, then bit 0 of each byte: more */
		if (!(b & 4))
			return 1;
		for (n = 2; n <= 4 && n <= avail && (p[n - 1] & 1); n++)
			;
		if (n > 4 || (n == 2 && skd007))
			return 0;
	} else if (b == 0x02 && avail >= 7 && p[1] == 0x73) { /* TMA */
		return p[4] == 0 && !(p[6] & 0xfe) ? 7 : 0;
	} else {
		return 0;
	}
	return n <= avail ? n : 0;
}

/* The first packet at or after off in the first part of the stream that
 * is not a timing packet (pkt_time_size), at most 4 of them read past;
 * only whole packets are passed, so the result is off or a packet's
 * start (it may be n1: the part's end). */
static inline uint64_t pkt_past_time(const struct hwt_pt_pkt_decoder *dec, uint64_t off)
{
	for (int k = 0; k < 4 && off < dec->n1; k++) {
		unsigned n = pkt_time_size(dec->b1 + off, dec->n1 - off, dec->skd007);
		if (!n)
			break;
		off += n;
	}
	return off;
}

/* pkt_next_tnt8 past timing packets: if timing packets (pkt_past_time)
 * and then a TNT-8 come next in the first part of the stream, read all of
 * them as hwt_pt_pkt_next would (the TNT-8 into *pkt and *off) and return
 * 1; otherwise return 0 and change nothing. */
static inline int pkt_next_tnt8_past_time(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkt,
					  uint64_t *off)
{
	if (dec->ctx != HWT_PKT_CTX_NONE || !dec->synced || dec->pos >= dec->n1)
		return 0;
	uint64_t at = pkt_past_time(dec, dec->pos), save = dec->pos;
	if (at == save || at >= dec->n1)
		return 0;
	dec->pos = at;
	if (pkt_next_tnt8(dec, pkt, off))
		return 1;
	dec->pos = save;
	return 0;
}

#endif
