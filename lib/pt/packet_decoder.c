/* lib/pt/packet_decoder.c - walk the packets of a trace held in memory.
 *
 * Lifecycle: hwt_pt_pkt_alloc(buf) -> sync_forward / sync_set -> next ...
 * -> hwt_pt_pkt_free().  The decoder keeps pointers into the caller's
 * buffer (which must outlive it) and never copies the trace.
 *
 * Stream model: a struct hwt_pt_buf is one logical byte stream, the first
 * part [begin, end) followed by the optional second part [begin2, end2)
 * (a wrapped ring).  Offsets are logical.  A packet, even a PSB, may
 * straddle the two parts.  Hot path: while at least HWT_PT_PKT_MAX_SIZE
 * bytes remain in the current part, packets are parsed in place (most by a
 * table-driven, branch-free fast path); only within 16 bytes of the end of
 * the first part are the (at most 16) next bytes copied into a small
 * scratch buffer.  hwt_pt_pkt_next_batch() runs the same in a tight loop.
 *
 * Sync: a PSB is the 16-byte pattern 02 82 x 8.  Where payload bytes just
 * before a PSB also look like 02 82 pairs, the PSB is the last 16 bytes
 * of the run (as libipt does).  sync_forward goes to the first PSB that
 * starts at most 15 bytes before the current position (a PSB partly eaten
 * by a preceding bad packet is found again), or after the current sync
 * point when the position is still there; sync_backward goes to the last
 * PSB before the current sync point (before the end when not synced).
 *
 * Errata (hwt_pt_pkt_set_errata, declared in hwt/pt_config.h): SKD007 (a
 * 2-byte CYC whose second byte with the next byte looks like OVF: report
 * the OVF, consuming 3 bytes), SKZ84 (a TMA with reserved bits set plus
 * one bogus byte: report an HWT_PKT_INVALID packet of 8 bytes).  Block
 * context for BIP is tracked here.  Errors leave the position unchanged.
 * Limits: none beyond memory; the decoder allocates only itself.
 */
#include <endian.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_config.h"
#include "hwt/pt_packet.h"
#include "packet_int.h"

/* Fast path: packets whose size and fields follow from the first byte
 * and, at most, a check of the second (PAD, TNT-8, CYC of 1 or 2 bytes,
 * TIP/TIP.PGE/TIP.PGD/FUP with a valid IPBytes, TSC, MTC: nearly all of a
 * real trace).  With v = the next 8 bytes (little-endian), the two words
 * of the payload union are word0 = a_or | (v & a_mask) * a_mul and
 * word1 = b_or | (v & b_mask): no branch on the packet type.  A packet
 * leaves the fast path if slow is set (take the full parser) or v & chk
 * is set (a CYC that goes on past its second byte).  Generated from the
 * opcode definitions. */
struct fast_entry {
	uint64_t a_mask, b_mask;
	uint16_t type_size; /* type | size << 8: the first two packet bytes */
	uint8_t a_or, b_or;
	uint8_t a_mul; /* 1, or 16 for the second CYC byte */
	uint8_t chk, slow, cyc2;
};

#define F(t, s, ao, bo, am, bm, sh, ck)                                                            \
	{                                                                                          \
		am, bm, (uint16_t)((t) | (s) << 8), ao, bo, 1u << (sh), ck, (s) == 0,              \
		    (s) == 2 && (ck)                                                               \
	}
static const struct fast_entry fast[256] = {
    F(HWT_PKT_PAD, 1, 0, 0, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGD, 1, 0, 0, 0, 0, 0, 0), /* 00 */
    F(0, 0, 0, 0, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 0, 0, 0, 0, 0, 0), /* 02 */
    F(HWT_PKT_TNT8, 1, 1, 0, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 04 */
    F(HWT_PKT_TNT8, 1, 1, 1, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 0, 0, 0xfe, 0, 4, 1), /* 06 */
    F(HWT_PKT_TNT8, 1, 2, 0, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 08 */
    F(HWT_PKT_TNT8, 1, 2, 1, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 1, 0, 0, 0, 0, 0), /* 0a */
    F(HWT_PKT_TNT8, 1, 2, 2, 0, 0, 0, 0),
    F(HWT_PKT_TIP, 1, 0, 0, 0, 0, 0, 0), /* 0c */
    F(HWT_PKT_TNT8, 1, 2, 3, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 1, 0, 0xfe, 0, 4, 1), /* 0e */
    F(HWT_PKT_TNT8, 1, 3, 0, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGE, 1, 0, 0, 0, 0, 0, 0), /* 10 */
    F(HWT_PKT_TNT8, 1, 3, 1, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 2, 0, 0, 0, 0, 0), /* 12 */
    F(HWT_PKT_TNT8, 1, 3, 2, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 14 */
    F(HWT_PKT_TNT8, 1, 3, 3, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 2, 0, 0xfe, 0, 4, 1), /* 16 */
    F(HWT_PKT_TNT8, 1, 3, 4, 0, 0, 0, 0),
    F(HWT_PKT_TSC, 8, 0, 0, 0xffffffffffffffull, 0, 0, 0), /* 18 */
    F(HWT_PKT_TNT8, 1, 3, 5, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 3, 0, 0, 0, 0, 0), /* 1a */
    F(HWT_PKT_TNT8, 1, 3, 6, 0, 0, 0, 0),
    F(HWT_PKT_FUP, 1, 0, 0, 0, 0, 0, 0), /* 1c */
    F(HWT_PKT_TNT8, 1, 3, 7, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 3, 0, 0xfe, 0, 4, 1), /* 1e */
    F(HWT_PKT_TNT8, 1, 4, 0, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGD, 3, 1, 0, 0, 0xffffull, 0, 0), /* 20 */
    F(HWT_PKT_TNT8, 1, 4, 1, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 4, 0, 0, 0, 0, 0), /* 22 */
    F(HWT_PKT_TNT8, 1, 4, 2, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 24 */
    F(HWT_PKT_TNT8, 1, 4, 3, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 4, 0, 0xfe, 0, 4, 1), /* 26 */
    F(HWT_PKT_TNT8, 1, 4, 4, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 28 */
    F(HWT_PKT_TNT8, 1, 4, 5, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 5, 0, 0, 0, 0, 0), /* 2a */
    F(HWT_PKT_TNT8, 1, 4, 6, 0, 0, 0, 0),
    F(HWT_PKT_TIP, 3, 1, 0, 0, 0xffffull, 0, 0), /* 2c */
    F(HWT_PKT_TNT8, 1, 4, 7, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 5, 0, 0xfe, 0, 4, 1), /* 2e */
    F(HWT_PKT_TNT8, 1, 4, 8, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGE, 3, 1, 0, 0, 0xffffull, 0, 0), /* 30 */
    F(HWT_PKT_TNT8, 1, 4, 9, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 6, 0, 0, 0, 0, 0), /* 32 */
    F(HWT_PKT_TNT8, 1, 4, 10, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 34 */
    F(HWT_PKT_TNT8, 1, 4, 11, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 6, 0, 0xfe, 0, 4, 1), /* 36 */
    F(HWT_PKT_TNT8, 1, 4, 12, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 38 */
    F(HWT_PKT_TNT8, 1, 4, 13, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 7, 0, 0, 0, 0, 0), /* 3a */
    F(HWT_PKT_TNT8, 1, 4, 14, 0, 0, 0, 0),
    F(HWT_PKT_FUP, 3, 1, 0, 0, 0xffffull, 0, 0), /* 3c */
    F(HWT_PKT_TNT8, 1, 4, 15, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 7, 0, 0xfe, 0, 4, 1), /* 3e */
    F(HWT_PKT_TNT8, 1, 5, 0, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGD, 5, 2, 0, 0, 0xffffffffull, 0, 0), /* 40 */
    F(HWT_PKT_TNT8, 1, 5, 1, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 8, 0, 0, 0, 0, 0), /* 42 */
    F(HWT_PKT_TNT8, 1, 5, 2, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 44 */
    F(HWT_PKT_TNT8, 1, 5, 3, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 8, 0, 0xfe, 0, 4, 1), /* 46 */
    F(HWT_PKT_TNT8, 1, 5, 4, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 48 */
    F(HWT_PKT_TNT8, 1, 5, 5, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 9, 0, 0, 0, 0, 0), /* 4a */
    F(HWT_PKT_TNT8, 1, 5, 6, 0, 0, 0, 0),
    F(HWT_PKT_TIP, 5, 2, 0, 0, 0xffffffffull, 0, 0), /* 4c */
    F(HWT_PKT_TNT8, 1, 5, 7, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 9, 0, 0xfe, 0, 4, 1), /* 4e */
    F(HWT_PKT_TNT8, 1, 5, 8, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGE, 5, 2, 0, 0, 0xffffffffull, 0, 0), /* 50 */
    F(HWT_PKT_TNT8, 1, 5, 9, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 10, 0, 0, 0, 0, 0), /* 52 */
    F(HWT_PKT_TNT8, 1, 5, 10, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 54 */
    F(HWT_PKT_TNT8, 1, 5, 11, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 10, 0, 0xfe, 0, 4, 1), /* 56 */
    F(HWT_PKT_TNT8, 1, 5, 12, 0, 0, 0, 0),
    F(HWT_PKT_MTC, 2, 0, 0, 0xffull, 0, 0, 0), /* 58 */
    F(HWT_PKT_TNT8, 1, 5, 13, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 11, 0, 0, 0, 0, 0), /* 5a */
    F(HWT_PKT_TNT8, 1, 5, 14, 0, 0, 0, 0),
    F(HWT_PKT_FUP, 5, 2, 0, 0, 0xffffffffull, 0, 0), /* 5c */
    F(HWT_PKT_TNT8, 1, 5, 15, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 11, 0, 0xfe, 0, 4, 1), /* 5e */
    F(HWT_PKT_TNT8, 1, 5, 16, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGD, 7, 3, 0, 0, 0xffffffffffffull, 0, 0), /* 60 */
    F(HWT_PKT_TNT8, 1, 5, 17, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 12, 0, 0, 0, 0, 0), /* 62 */
    F(HWT_PKT_TNT8, 1, 5, 18, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 64 */
    F(HWT_PKT_TNT8, 1, 5, 19, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 12, 0, 0xfe, 0, 4, 1), /* 66 */
    F(HWT_PKT_TNT8, 1, 5, 20, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 68 */
    F(HWT_PKT_TNT8, 1, 5, 21, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 13, 0, 0, 0, 0, 0), /* 6a */
    F(HWT_PKT_TNT8, 1, 5, 22, 0, 0, 0, 0),
    F(HWT_PKT_TIP, 7, 3, 0, 0, 0xffffffffffffull, 0, 0), /* 6c */
    F(HWT_PKT_TNT8, 1, 5, 23, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 13, 0, 0xfe, 0, 4, 1), /* 6e */
    F(HWT_PKT_TNT8, 1, 5, 24, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGE, 7, 3, 0, 0, 0xffffffffffffull, 0, 0), /* 70 */
    F(HWT_PKT_TNT8, 1, 5, 25, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 14, 0, 0, 0, 0, 0), /* 72 */
    F(HWT_PKT_TNT8, 1, 5, 26, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 74 */
    F(HWT_PKT_TNT8, 1, 5, 27, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 14, 0, 0xfe, 0, 4, 1), /* 76 */
    F(HWT_PKT_TNT8, 1, 5, 28, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 78 */
    F(HWT_PKT_TNT8, 1, 5, 29, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 15, 0, 0, 0, 0, 0), /* 7a */
    F(HWT_PKT_TNT8, 1, 5, 30, 0, 0, 0, 0),
    F(HWT_PKT_FUP, 7, 3, 0, 0, 0xffffffffffffull, 0, 0), /* 7c */
    F(HWT_PKT_TNT8, 1, 5, 31, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 15, 0, 0xfe, 0, 4, 1), /* 7e */
    F(HWT_PKT_TNT8, 1, 6, 0, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGD, 7, 4, 0, 0, 0xffffffffffffull, 0, 0), /* 80 */
    F(HWT_PKT_TNT8, 1, 6, 1, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 16, 0, 0, 0, 0, 0), /* 82 */
    F(HWT_PKT_TNT8, 1, 6, 2, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 84 */
    F(HWT_PKT_TNT8, 1, 6, 3, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 16, 0, 0xfe, 0, 4, 1), /* 86 */
    F(HWT_PKT_TNT8, 1, 6, 4, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 88 */
    F(HWT_PKT_TNT8, 1, 6, 5, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 17, 0, 0, 0, 0, 0), /* 8a */
    F(HWT_PKT_TNT8, 1, 6, 6, 0, 0, 0, 0),
    F(HWT_PKT_TIP, 7, 4, 0, 0, 0xffffffffffffull, 0, 0), /* 8c */
    F(HWT_PKT_TNT8, 1, 6, 7, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 17, 0, 0xfe, 0, 4, 1), /* 8e */
    F(HWT_PKT_TNT8, 1, 6, 8, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGE, 7, 4, 0, 0, 0xffffffffffffull, 0, 0), /* 90 */
    F(HWT_PKT_TNT8, 1, 6, 9, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 18, 0, 0, 0, 0, 0), /* 92 */
    F(HWT_PKT_TNT8, 1, 6, 10, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 94 */
    F(HWT_PKT_TNT8, 1, 6, 11, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 18, 0, 0xfe, 0, 4, 1), /* 96 */
    F(HWT_PKT_TNT8, 1, 6, 12, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* 98 */
    F(HWT_PKT_TNT8, 1, 6, 13, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 19, 0, 0, 0, 0, 0), /* 9a */
    F(HWT_PKT_TNT8, 1, 6, 14, 0, 0, 0, 0),
    F(HWT_PKT_FUP, 7, 4, 0, 0, 0xffffffffffffull, 0, 0), /* 9c */
    F(HWT_PKT_TNT8, 1, 6, 15, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 19, 0, 0xfe, 0, 4, 1), /* 9e */
    F(HWT_PKT_TNT8, 1, 6, 16, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* a0 */
    F(HWT_PKT_TNT8, 1, 6, 17, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 20, 0, 0, 0, 0, 0), /* a2 */
    F(HWT_PKT_TNT8, 1, 6, 18, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* a4 */
    F(HWT_PKT_TNT8, 1, 6, 19, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 20, 0, 0xfe, 0, 4, 1), /* a6 */
    F(HWT_PKT_TNT8, 1, 6, 20, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* a8 */
    F(HWT_PKT_TNT8, 1, 6, 21, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 21, 0, 0, 0, 0, 0), /* aa */
    F(HWT_PKT_TNT8, 1, 6, 22, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* ac */
    F(HWT_PKT_TNT8, 1, 6, 23, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 21, 0, 0xfe, 0, 4, 1), /* ae */
    F(HWT_PKT_TNT8, 1, 6, 24, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* b0 */
    F(HWT_PKT_TNT8, 1, 6, 25, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 22, 0, 0, 0, 0, 0), /* b2 */
    F(HWT_PKT_TNT8, 1, 6, 26, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* b4 */
    F(HWT_PKT_TNT8, 1, 6, 27, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 22, 0, 0xfe, 0, 4, 1), /* b6 */
    F(HWT_PKT_TNT8, 1, 6, 28, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* b8 */
    F(HWT_PKT_TNT8, 1, 6, 29, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 23, 0, 0, 0, 0, 0), /* ba */
    F(HWT_PKT_TNT8, 1, 6, 30, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* bc */
    F(HWT_PKT_TNT8, 1, 6, 31, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 23, 0, 0xfe, 0, 4, 1), /* be */
    F(HWT_PKT_TNT8, 1, 6, 32, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGD, 9, 6, 0, 0, ~0ull, 0, 0), /* c0 */
    F(HWT_PKT_TNT8, 1, 6, 33, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 24, 0, 0, 0, 0, 0), /* c2 */
    F(HWT_PKT_TNT8, 1, 6, 34, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* c4 */
    F(HWT_PKT_TNT8, 1, 6, 35, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 24, 0, 0xfe, 0, 4, 1), /* c6 */
    F(HWT_PKT_TNT8, 1, 6, 36, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* c8 */
    F(HWT_PKT_TNT8, 1, 6, 37, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 25, 0, 0, 0, 0, 0), /* ca */
    F(HWT_PKT_TNT8, 1, 6, 38, 0, 0, 0, 0),
    F(HWT_PKT_TIP, 9, 6, 0, 0, ~0ull, 0, 0), /* cc */
    F(HWT_PKT_TNT8, 1, 6, 39, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 25, 0, 0xfe, 0, 4, 1), /* ce */
    F(HWT_PKT_TNT8, 1, 6, 40, 0, 0, 0, 0),
    F(HWT_PKT_TIP_PGE, 9, 6, 0, 0, ~0ull, 0, 0), /* d0 */
    F(HWT_PKT_TNT8, 1, 6, 41, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 26, 0, 0, 0, 0, 0), /* d2 */
    F(HWT_PKT_TNT8, 1, 6, 42, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* d4 */
    F(HWT_PKT_TNT8, 1, 6, 43, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 26, 0, 0xfe, 0, 4, 1), /* d6 */
    F(HWT_PKT_TNT8, 1, 6, 44, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* d8 */
    F(HWT_PKT_TNT8, 1, 6, 45, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 27, 0, 0, 0, 0, 0), /* da */
    F(HWT_PKT_TNT8, 1, 6, 46, 0, 0, 0, 0),
    F(HWT_PKT_FUP, 9, 6, 0, 0, ~0ull, 0, 0), /* dc */
    F(HWT_PKT_TNT8, 1, 6, 47, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 27, 0, 0xfe, 0, 4, 1), /* de */
    F(HWT_PKT_TNT8, 1, 6, 48, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* e0 */
    F(HWT_PKT_TNT8, 1, 6, 49, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 28, 0, 0, 0, 0, 0), /* e2 */
    F(HWT_PKT_TNT8, 1, 6, 50, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* e4 */
    F(HWT_PKT_TNT8, 1, 6, 51, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 28, 0, 0xfe, 0, 4, 1), /* e6 */
    F(HWT_PKT_TNT8, 1, 6, 52, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* e8 */
    F(HWT_PKT_TNT8, 1, 6, 53, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 29, 0, 0, 0, 0, 0), /* ea */
    F(HWT_PKT_TNT8, 1, 6, 54, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* ec */
    F(HWT_PKT_TNT8, 1, 6, 55, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 29, 0, 0xfe, 0, 4, 1), /* ee */
    F(HWT_PKT_TNT8, 1, 6, 56, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* f0 */
    F(HWT_PKT_TNT8, 1, 6, 57, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 30, 0, 0, 0, 0, 0), /* f2 */
    F(HWT_PKT_TNT8, 1, 6, 58, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* f4 */
    F(HWT_PKT_TNT8, 1, 6, 59, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 30, 0, 0xfe, 0, 4, 1), /* f6 */
    F(HWT_PKT_TNT8, 1, 6, 60, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* f8 */
    F(HWT_PKT_TNT8, 1, 6, 61, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 1, 31, 0, 0, 0, 0, 0), /* fa */
    F(HWT_PKT_TNT8, 1, 6, 62, 0, 0, 0, 0),
    F(0, 0, 0, 0, 0, 0, 0, 0), /* fc */
    F(HWT_PKT_TNT8, 1, 6, 63, 0, 0, 0, 0),
    F(HWT_PKT_CYC, 2, 31, 0, 0xfe, 0, 4, 1), /* fe */
};
#undef F

/* The layout the fast path writes into. */
_Static_assert(sizeof(((struct hwt_pt_packet *)0)->u) == 16, "payload union size");
_Static_assert(offsetof(struct hwt_pt_packet, type) == 0 &&
		   offsetof(struct hwt_pt_packet, size) == 1,
	       "type and size lead");
_Static_assert(offsetof(struct hwt_pt_packet, u.tnt.bits) == offsetof(struct hwt_pt_packet, u) &&
		   offsetof(struct hwt_pt_packet, u.tnt.payload) ==
		       offsetof(struct hwt_pt_packet, u) + 8 &&
		   offsetof(struct hwt_pt_packet, u.ip.ipc) == offsetof(struct hwt_pt_packet, u) &&
		   offsetof(struct hwt_pt_packet, u.ip.ip) ==
		       offsetof(struct hwt_pt_packet, u) + 8 &&
		   offsetof(struct hwt_pt_packet, u.mtc.ctc) == offsetof(struct hwt_pt_packet, u) &&
		   offsetof(struct hwt_pt_packet, u.tsc.tsc) == offsetof(struct hwt_pt_packet, u) &&
		   offsetof(struct hwt_pt_packet, u.cyc.value) == offsetof(struct hwt_pt_packet, u),
	       "payload layout");

/* Decode a fast-path packet at p (16 bytes readable); 0 if it is not one.
 * no_cyc2: leave 2-byte CYCs to the full path (SKD007 checks them). */
static inline int fast_one(const uint8_t *p, struct hwt_pt_packet *pkt, int no_cyc2)
{
	const struct fast_entry *e = &fast[p[0]];
	uint64_t v, w[2];

	memcpy(&v, p + 1, 8);
	v = le64toh(v);
	if ((v & e->chk) | e->slow | (e->cyc2 & no_cyc2))
		return 0;
	w[0] = e->a_or | (v & e->a_mask) * e->a_mul;
	w[1] = e->b_or | (v & e->b_mask);
	memcpy(pkt, &e->type_size, 2);
	memcpy(&pkt->u, w, sizeof(w));
	return e->type_size >> 8;
}

static const uint8_t psb_bytes[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				      0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};

struct hwt_pt_pkt_decoder *hwt_pt_pkt_alloc(const struct hwt_pt_buf *buf)
{
	struct hwt_pt_pkt_decoder *dec;

	if (!buf || (!buf->begin && buf->end) || buf->end < buf->begin)
		return NULL;
	if (buf->begin2 && (!buf->end2 || buf->end2 < buf->begin2))
		return NULL;
	dec = calloc(1, sizeof(*dec));
	if (!dec)
		return NULL;
	dec->b1 = buf->begin;
	dec->n1 = (uint64_t)(buf->end - buf->begin);
	dec->b2 = buf->begin2;
	dec->total = dec->n1 + (buf->begin2 ? (uint64_t)(buf->end2 - buf->begin2) : 0);
	return dec;
}

void hwt_pt_pkt_free(struct hwt_pt_pkt_decoder *dec)
{
	free(dec);
}

void hwt_pt_pkt_set_errata(struct hwt_pt_pkt_decoder *dec, const struct hwt_pt_errata *errata)
{
	if (!dec || !errata)
		return;
	dec->skd007 = errata->skd007;
	dec->skz84 = errata->skz84;
}

uint64_t hwt_pt_pkt_size(const struct hwt_pt_pkt_decoder *dec)
{
	return dec ? dec->total : 0;
}

static inline int byte_at(const struct hwt_pt_pkt_decoder *dec, uint64_t off)
{
	return off < dec->n1 ? dec->b1[off] : dec->b2[off - dec->n1];
}

/* Copy [off, off + n) of the stream (must be in range) into out. */
static void copy_out(const struct hwt_pt_pkt_decoder *dec, uint64_t off, uint8_t *out, size_t n)
{
	if (off < dec->n1) {
		size_t k = dec->n1 - off < n ? (size_t)(dec->n1 - off) : n;
		memcpy(out, dec->b1 + off, k);
		out += k;
		n -= k;
		off += k;
	}
	if (n)
		memcpy(out, dec->b2 + (off - dec->n1), n);
}

/* The PSB that ends the run of 02 82 pairs containing the PSB at o. */
static uint64_t psb_run_end(const struct hwt_pt_pkt_decoder *dec, uint64_t o)
{
	while (o + 18 <= dec->total && byte_at(dec, o + 16) == 0x02 && byte_at(dec, o + 17) == 0x82)
		o += 2;
	return o;
}

/* Smallest offset >= from where the 16 PSB bytes start, or -1. */
static int64_t psb_first_raw(const struct hwt_pt_pkt_decoder *dec, uint64_t from)
{
	const uint8_t *hit;
	uint64_t n2 = dec->total - dec->n1;

	if (from + 16 <= dec->n1) {
		hit = memmem(dec->b1 + from, dec->n1 - from, psb_bytes, 16);
		if (hit)
			return hit - dec->b1;
	}
	if (n2) {
		uint64_t lo = dec->n1 >= 15 ? dec->n1 - 15 : 0;
		uint64_t hi = dec->n1 + 15 < dec->total ? dec->n1 + 15 : dec->total;
		uint8_t win[32];
		if (lo < from)
			lo = from;
		if (lo + 16 <= hi) {
			copy_out(dec, lo, win, hi - lo);
			hit = memmem(win, hi - lo, psb_bytes, 16);
			if (hit)
				return (int64_t)(lo + (uint64_t)(hit - win));
		}
		uint64_t start = from > dec->n1 ? from : dec->n1;
		if (start + 16 <= dec->total) {
			const uint8_t *p = dec->b2 + (start - dec->n1);
			hit = memmem(p, dec->total - start, psb_bytes, 16);
			if (hit)
				return (int64_t)(start + (uint64_t)(hit - p));
		}
	}
	return -1;
}

/* Largest i in [lo, hi] with a PSB at base + i, or -1. */
static int64_t rscan(const uint8_t *base, int64_t lo, int64_t hi)
{
	for (int64_t i = hi; i >= lo; i--)
		if (base[i + 15] == 0x82 && base[i] == 0x02 && !memcmp(base + i, psb_bytes, 16))
			return i;
	return -1;
}

/* Largest offset < limit where the 16 PSB bytes start, or -1. */
static int64_t psb_last_raw(const struct hwt_pt_pkt_decoder *dec, uint64_t limit)
{
	int64_t hi, r;
	int64_t n1 = (int64_t)dec->n1, total = (int64_t)dec->total;

	if (limit > dec->total)
		limit = dec->total;
	hi = (int64_t)limit - 1; /* largest candidate */
	if (hi > total - 16)
		hi = total - 16;
	if (hi < 0)
		return -1;
	if (total > n1) {
		if (hi >= n1) { /* fully in part 2 */
			r = rscan(dec->b2, 0, hi - n1);
			if (r >= 0)
				return r + n1;
			hi = n1 - 1;
		}
		int64_t lo = n1 >= 15 ? n1 - 15 : 0;
		if (hi >= lo) { /* straddling the parts */
			uint8_t win[32];
			int64_t end = hi + 16;
			copy_out(dec, (uint64_t)lo, win, (size_t)(end - lo));
			r = rscan(win, 0, hi - lo);
			if (r >= 0)
				return r + lo;
			hi = lo - 1;
		}
	}
	if (hi > n1 - 16)
		hi = n1 - 16;
	if (hi < 0)
		return -1;
	return rscan(dec->b1, 0, hi);
}

static int64_t psb_forward(const struct hwt_pt_pkt_decoder *dec, uint64_t from)
{
	int64_t o = psb_first_raw(dec, from);
	return o < 0 ? -1 : (int64_t)psb_run_end(dec, (uint64_t)o);
}

static int64_t psb_backward(const struct hwt_pt_pkt_decoder *dec, uint64_t limit)
{
	for (;;) {
		int64_t o = psb_last_raw(dec, limit);
		if (o < 0)
			return -1;
		uint64_t e = psb_run_end(dec, (uint64_t)o);
		if (e < limit)
			return (int64_t)e;
		/* The PSB of this run lies at or after limit: skip the run. */
		uint64_t s = (uint64_t)o;
		while (s >= 2 && byte_at(dec, s - 2) == 0x02 && byte_at(dec, s - 1) == 0x82)
			s -= 2;
		limit = s;
	}
}

static void set_sync(struct hwt_pt_pkt_decoder *dec, uint64_t off)
{
	dec->pos = dec->sync = off;
	dec->synced = 1;
	dec->ctx = HWT_PKT_CTX_NONE;
}

int hwt_pt_pkt_sync_forward(struct hwt_pt_pkt_decoder *dec)
{
	uint64_t from;
	int64_t o;

	if (!dec)
		return HWT_ERR_INVALID;
	from = dec->synced ? dec->pos : 0;
	if (dec->synced && dec->pos == dec->sync)
		from += HWT_PT_PKT_MAX_SIZE;
	/* A PSB may have been partly eaten by a preceding (bad) packet. */
	from = from >= HWT_PT_PKT_MAX_SIZE - 1 ? from - (HWT_PT_PKT_MAX_SIZE - 1) : 0;
	if (from >= dec->total)
		return HWT_ERR_EOS;
	o = psb_forward(dec, from);
	if (o < 0)
		return HWT_ERR_EOS;
	set_sync(dec, (uint64_t)o);
	return 0;
}

int hwt_pt_pkt_sync_backward(struct hwt_pt_pkt_decoder *dec)
{
	int64_t o;

	if (!dec)
		return HWT_ERR_INVALID;
	o = psb_backward(dec, dec->synced ? dec->sync : dec->total);
	if (o < 0)
		return HWT_ERR_EOS;
	set_sync(dec, (uint64_t)o);
	return 0;
}

int hwt_pt_pkt_sync_set(struct hwt_pt_pkt_decoder *dec, uint64_t offset)
{
	if (!dec)
		return HWT_ERR_INVALID;
	if (offset > dec->total)
		return HWT_ERR_EOS;
	set_sync(dec, offset);
	return 0;
}

int hwt_pt_pkt_offset(const struct hwt_pt_pkt_decoder *dec, uint64_t *offset)
{
	if (!dec || !offset)
		return HWT_ERR_INVALID;
	if (!dec->synced)
		return HWT_ERR_NOSYNC;
	*offset = dec->pos;
	return 0;
}

int hwt_pt_pkt_sync_offset(const struct hwt_pt_pkt_decoder *dec, uint64_t *offset)
{
	if (!dec || !offset)
		return HWT_ERR_INVALID;
	if (!dec->synced)
		return HWT_ERR_NOSYNC;
	*offset = dec->sync;
	return 0;
}

/* The errata fix-ups; rare, kept out of the hot path. */
static int errata_fixup(struct hwt_pt_pkt_decoder *dec, const uint8_t *p, size_t avail, int size,
			struct hwt_pt_packet *pkt)
{
	if (size == HWT_ERR_BAD_PACKET && dec->skz84 && avail >= 2 && p[0] == 0x02 &&
	    p[1] == 0x73 && dec->total - dec->pos >= 8) {
		/* SKZ84: corrupted TMA followed by a bogus byte. */
		pkt->type = HWT_PKT_INVALID;
		pkt->size = 8;
		dec->pos += 8;
		dec->ctx = HWT_PKT_CTX_NONE;
		return 8;
	}
	if (size == 2 && dec->skd007 && pkt->type == HWT_PKT_CYC &&
	    ((uint16_t)pkt->u.cyc.value & ~0x1fu) == 0x20 && dec->pos + 2 < dec->total &&
	    byte_at(dec, dec->pos + 2) == 0xf3) {
		/* SKD007: the CYC's second byte starts an OVF; report that. */
		pkt->type = HWT_PKT_OVF;
		pkt->size = 2;
		dec->pos += 3;
		dec->ctx = HWT_PKT_CTX_NONE;
		return 2;
	}
	return 0;
}

int hwt_pt_pkt_next(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkt)
{
	const uint8_t *p;
	size_t avail;
	int size;

	if (!dec || !pkt)
		return HWT_ERR_INVALID;
	if (!dec->synced)
		return HWT_ERR_NOSYNC;
	if (dec->ctx == HWT_PKT_CTX_NONE) {
		const uint8_t *q = NULL;
		if (dec->pos + HWT_PT_PKT_MAX_SIZE <= dec->n1)
			q = dec->b1 + dec->pos;
		else if (dec->pos >= dec->n1 && dec->pos + HWT_PT_PKT_MAX_SIZE <= dec->total)
			q = dec->b2 + (dec->pos - dec->n1);
		size = q ? fast_one(q, pkt, dec->skd007) : 0;
		if (size) {
			dec->pos += (uint64_t)size;
			return size;
		}
	}
	if (dec->pos < dec->n1) {
		p = dec->b1 + dec->pos;
		avail = (size_t)(dec->n1 - dec->pos);
		if (avail < HWT_PT_PKT_MAX_SIZE && dec->total > dec->n1) {
			uint64_t left = dec->total - dec->pos;
			avail = left < HWT_PT_PKT_MAX_SIZE ? (size_t)left : HWT_PT_PKT_MAX_SIZE;
			copy_out(dec, dec->pos, dec->scratch, avail);
			p = dec->scratch;
		}
	} else if (dec->pos < dec->total) {
		p = dec->b2 + (dec->pos - dec->n1);
		avail = (size_t)(dec->total - dec->pos);
	} else {
		pkt->type = HWT_PKT_INVALID;
		pkt->size = 0;
		return HWT_ERR_EOS;
	}

	size = hwt_pt_pkt_parse_ctx(p, avail, dec->ctx, pkt);
	if ((size < 0 && dec->skz84) || (size == 2 && dec->skd007)) {
		int fixed = errata_fixup(dec, p, avail, size, pkt);
		if (fixed)
			return fixed;
	}
	if (size < 0)
		return size;
	if (dec->ctx != HWT_PKT_CTX_NONE || pkt->type == HWT_PKT_BBP)
		dec->ctx = hwt_pt_pkt_ctx_after(dec->ctx, pkt);
	dec->pos += (uint64_t)size;
	return size;
}

/* The bulk loop over one part ([base, base + len) holding the stream
 * from offset start) while 16 bytes remain in it: fast path, else the full
 * parser in place; stops (without consuming) at errors, errata candidates
 * and BBP, which the general path handles. */
static inline int fast_run(struct hwt_pt_pkt_decoder *dec, const uint8_t *base, uint64_t start,
			   uint64_t len, struct hwt_pt_packet *pkts, int k, int n,
			   const int no_cyc2)
{
	const uint8_t *q = base + (dec->pos - start), *end = base + len;
	const uint8_t *qlim = end - HWT_PT_PKT_MAX_SIZE;
	struct hwt_pt_packet *out = pkts + k, *oend = pkts + n;

	while (out < oend && q <= qlim) {
		int size = fast_one(q, out, no_cyc2);
		if (!size) {
			size = hwt_pt_pkt_parse_ctx(q, (size_t)(end - q), HWT_PKT_CTX_NONE, out);
			if (size <= 0 || out->type == HWT_PKT_BBP ||
			    (no_cyc2 && size == 2 && out->type == HWT_PKT_CYC))
				break;
		}
		q += size;
		out++;
	}
	dec->pos = start + (uint64_t)(q - base);
	return (int)(out - pkts);
}

int hwt_pt_pkt_next_batch(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkts, int n)
{
	int k = 0;

	if (!dec || !pkts || n <= 0)
		return HWT_ERR_INVALID;
	if (!dec->synced)
		return HWT_ERR_NOSYNC;
	while (k < n) {
		if (dec->ctx == HWT_PKT_CTX_NONE) {
			const uint8_t *base = NULL;
			uint64_t start = 0, len = 0;
			if (dec->pos + HWT_PT_PKT_MAX_SIZE <= dec->n1)
				base = dec->b1, len = dec->n1;
			else if (dec->pos >= dec->n1 &&
				 dec->pos + HWT_PT_PKT_MAX_SIZE <= dec->total)
				base = dec->b2, start = dec->n1, len = dec->total - dec->n1;
			if (base) {
				k = dec->skd007 ? fast_run(dec, base, start, len, pkts, k, n, 1)
						: fast_run(dec, base, start, len, pkts, k, n, 0);
				if (k == n)
					break;
			}
		}
		uint64_t before = dec->pos;
		int r = hwt_pt_pkt_next(dec, &pkts[k]);
		if (r < 0)
			return k ? k : r;
		k++;
		if (dec->pos - before != (uint64_t)r)
			break; /* an errata fix-up consumed more than the packet */
	}
	return k;
}
