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
	uint8_t simd; /* the 64-byte chunk scan (AVX-512 VBMI, VBMI2) is on */
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

/* Turn the batch loop's 64-byte chunk scan off (0) or back on (1, only
 * where the CPU has AVX-512 VBMI, VBMI2, BMI2); returns whether it is on.  On by
 * default where supported; tests turn it off to check the scalar loop. */
int pkt_set_simd(struct hwt_pt_pkt_decoder *dec, int on);

/* The first packet at or after off in the first part of the stream that
 * is not a timing packet (MTC, CYC, TSC, TMA), at most 4 of them read
 * past; only whole packets that hwt_pt_pkt_next would read as exactly
 * that packet there, outside a block context (not: one that does not
 * fit, TMA reserved bits (SKZ84), a 2-byte CYC under SKD007, a CYC of
 * more than 4 bytes), so the result is off or a packet's start (it may
 * be n1: the part's end).  (packet_decoder.c) */
uint64_t pkt_past_time(const struct hwt_pt_pkt_decoder *dec, uint64_t off);

/* pkt_next_tnt8 past timing packets: if timing packets (pkt_past_time)
 * and then a TNT-8 come next in the first part of the stream, read all of
 * them as hwt_pt_pkt_next would (the TNT-8 into *pkt and *off) and return
 * 1; otherwise return 0 and change nothing.  (packet_decoder.c) */
int pkt_next_tnt8_past_time(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkt,
			    uint64_t *off);

#endif
