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
 * bytes remain in the current part, packets are parsed in place without
 * bounds checks (most by a table-driven, branch-free fast path, see
 * fast_entry); only near the end does the checked parser run, and within
 * 16 bytes of the end of the first part the (at most 16) next bytes are
 * copied into a small scratch buffer.  hwt_pt_pkt_next_batch() runs a
 * chained loop (fast_run: the next opcode is shifted out of the bytes
 * already loaded) and writes PAD runs in bulk; on x86-64 CPUs with
 * AVX-512 VBMI and VBMI2 (checked at hwt_pt_pkt_alloc) it first finds the
 * packet starts of 64 bytes at once (simd_run) and writes those packets
 * with no chain between them (a chunk of small packets only, the common
 * case, 64 bytes of packets per store).  The fast paths must agree
 * byte for byte with hwt_pt_pkt_parse_ctx (tests/unit/test_pt_pkt_fast.c,
 * fuzz/fuzz_pt_pkt.c).
 *
 * Sync: a PSB is the 16-byte pattern 02 82 x 8.  Where payload bytes just
 * before a PSB also look like 02 82 pairs, the PSB is the last 16 bytes
 * of the run (as libipt does).  sync_forward goes to the first PSB that
 * starts at most 15 bytes before the current position (a PSB partly eaten
 * by a preceding bad packet is found again), or after the current sync
 * point when the position is still there; sync_backward goes to the last
 * PSB before the current sync point (before the end when not synced).
 * The search tests one 8-byte word in every 8 bytes (fscan, rscan).
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

/* Fast path.  Every packet whose size and fields follow from its opcode
 * (one byte, or 02/99 and the next byte) and whose payload fits the 8
 * bytes after the opcode is described by an entry: with x = those 8 bytes
 * (little-endian) the two words of the payload union are
 *   word0 = (x & a_mask) * a_mul | a_or,   word1 = x & b_mask | b_or
 * (TNT-64: word0 = the stop bit's index, word1 = x without it).  No branch
 * on the packet type.  size 0 in hdr: not here (the full parser decides);
 * x & chk set: a CYC that goes on past its second byte; chk != 0: a
 * 2-byte CYC, which the full path checks for SKD007 when that erratum is
 * on.  Every field is a full word (the hot loop takes each straight from
 * memory into an and/imul/or/add, no zero-extend) and an entry is one
 * 64-byte line: 22 instructions a packet in the chained loop, was 33.
 * The tables are generated below from the opcode definitions (SDM):
 *   00 PAD; xxxxxxx0 TNT-8 (but 00, 02); xxxxxx11 CYC (bit 2: one more
 *   byte); low five bits 01/0d/11/1d TIP.PGD/TIP/TIP.PGE/FUP with IPBytes
 *   in bits 7:5; 19 TSC; 59 MTC; 99 MODE (leaf in the next byte's bits
 *   7:5); 02 the extended opcodes. */
struct fast_entry {
	uint64_t hdr; /* type | size << 8: the packet's first word */
	uint64_t a_mask, a_mul, a_or, b_mask, b_or, chk;
	uint64_t size; /* hdr >> 8 */
} __attribute__((aligned(64)));

#define M_BITS(n) ((n) <= 0 ? 0 : (n) >= 8 ? ~0ull : (1ull << (8 * ((n)&7))) - 1)
#define HDR(t, s) ((uint16_t)((t) | (s) << 8))

/* One-byte opcodes. */
#define IPB(c) ((c) == 0 ? 0 : (c) == 1 ? 2 : (c) == 2 ? 4 : (c) <= 4 ? 6 : (c) == 6 ? 8 : -1)
#define IPT(b)                                                                                     \
	(((b)&0x1f) == 0x01   ? HWT_PKT_TIP_PGD                                                    \
	 : ((b)&0x1f) == 0x0d ? HWT_PKT_TIP                                                        \
	 : ((b)&0x1f) == 0x11 ? HWT_PKT_TIP_PGE                                                    \
	 : ((b)&0x1f) == 0x1d ? HWT_PKT_FUP                                                        \
			      : 0)
#define IS_IP(b) (IPT(b) && IPB((b) >> 5) >= 0)
#define IS_TNT(b) (!((b)&1) && (b) >= 4)
#define IS_CYC(b) (((b)&3) == 3)
#define TNT_BITS(b)                                                                                \
	((b) >= 0x80   ? 6                                                                         \
	 : (b) >= 0x40 ? 5                                                                         \
	 : (b) >= 0x20 ? 4                                                                         \
	 : (b) >= 0x10 ? 3                                                                         \
	 : (b) >= 0x08 ? 2                                                                         \
		       : 1)
#define M_SIZE(b)                                                                                  \
	((b) == 0 || IS_TNT(b) ? 1                                                                 \
	 : IS_CYC(b)	       ? 1 + (((b) >> 2) & 1)                                              \
	 : IS_IP(b)	       ? 1 + IPB((b) >> 5)                                                 \
	 : (b) == 0x19	       ? 8                                                                 \
	 : (b) == 0x59	       ? 2                                                                 \
			       : 0)
#define M_TYPE(b)                                                                                  \
	((b) == 0      ? HWT_PKT_PAD                                                               \
	 : IS_TNT(b)   ? HWT_PKT_TNT8                                                              \
	 : IS_CYC(b)   ? HWT_PKT_CYC                                                               \
	 : IS_IP(b)    ? IPT(b)                                                                    \
	 : (b) == 0x19 ? HWT_PKT_TSC                                                               \
	 : (b) == 0x59 ? HWT_PKT_MTC                                                               \
		       : 0)
#define CYC2(b) (IS_CYC(b) && ((b)&4))
#define M_AMASK(b) (CYC2(b) ? 0xfe : (b) == 0x19 ? M_BITS(7) : (b) == 0x59 ? 0xff : 0)
#define M_BMASK(b) (IS_IP(b) ? M_BITS(IPB((b) >> 5)) : 0)
#define M_AOR(b) (IS_TNT(b) ? TNT_BITS(b) : IS_CYC(b) ? (b) >> 3 : IS_IP(b) ? (b) >> 5 : 0)
#define M_HDR(b) HDR(M_TYPE(b), M_SIZE(b))
#define M_BOR(b) (IS_TNT(b) ? ((b) >> 1) & ((1 << TNT_BITS(b)) - 1) : 0)
#define M_AMUL(b) (CYC2(b) ? 16 : 1)
#define M_CHK(b) (CYC2(b) ? 1 : 0)
#define M_SZ(b) M_SIZE(b)
/* An entry from the field macros of one kind (M, X, D). */
#define ENTRY(K, v)                                                                                \
	{                                                                                          \
		.hdr = K##_HDR(v), .a_mask = K##_AMASK(v), .a_mul = K##_AMUL(v),                   \
		.a_or = K##_AOR(v), .b_mask = K##_BMASK(v), .b_or = K##_BOR(v), .chk = K##_CHK(v), \
		.size = K##_SZ(v)                                                                  \
	}
#define M_ENTRY(b) ENTRY(M, b)

/* The byte after 02. */
#define X_TYPE(x)                                                                                  \
	((x) == 0x23	      ? HWT_PKT_PSBEND                                                     \
	 : (x) == 0xf3	      ? HWT_PKT_OVF                                                        \
	 : (x) == 0x83	      ? HWT_PKT_TRACESTOP                                                  \
	 : (x) == 0xa3	      ? HWT_PKT_TNT64                                                      \
	 : (x) == 0x43	      ? HWT_PKT_PIP                                                        \
	 : (x) == 0x03	      ? HWT_PKT_CBR                                                        \
	 : (x) == 0xc8	      ? HWT_PKT_VMCS                                                       \
	 : ((x)&0x7f) == 0x62 ? HWT_PKT_EXSTOP                                                     \
	 : ((x)&0x7f) == 0x33 ? HWT_PKT_BEP                                                        \
			      : 0)
#define X_SIZE(x)                                                                                  \
	((x) == 0xa3 || (x) == 0x43 ? 8 : (x) == 0xc8 ? 7 : (x) == 0x03 ? 4 : X_TYPE(x) ? 2 : 0)
#define X_AMASK(x)                                                                                 \
	((x) == 0x43 ? 0xfffffffffffeull : (x) == 0x03 ? 0xff : (x) == 0xc8 ? M_BITS(5) : 0)
#define X_BMASK(x) ((x) == 0xa3 ? M_BITS(6) : (x) == 0x43 ? 1 : 0)
#define X_AOR(x) (((x)&0x7f) == 0x62 || ((x)&0x7f) == 0x33 ? (x) >> 7 : 0)
#define X_HDR(x) HDR(X_TYPE(x), X_SIZE(x))
#define X_BOR(x) 0
#define X_AMUL(x) ((x) == 0x43 ? 16 : (x) == 0xc8 ? 4096 : 1)
#define X_CHK(x) 0
#define X_SZ(x) X_SIZE(x)
#define X_ENTRY(x) ENTRY(X, x)

/* The byte after 99 (MODE): leaf 0 MODE.Exec, 1 MODE.TSX. */
#define D_AMASK(m) 0
#define D_BMASK(m) 0
#define D_AOR(m)                                                                                   \
	(((m)&0xe0) == 0      ? ((m)&1) | ((m)&2) << 7 | ((m)&4) << 14                             \
	 : ((m)&0xe0) == 0x20 ? ((m)&1) | ((m)&2) << 7                                             \
			      : 0)
#define D_HDR(m)                                                                                   \
	(((m)&0xe0) == 0      ? HDR(HWT_PKT_MODE_EXEC, 2)                                          \
	 : ((m)&0xe0) == 0x20 ? HDR(HWT_PKT_MODE_TSX, 2)                                           \
			      : 0)
#define D_BOR(m) 0
#define D_AMUL(m) 1
#define D_CHK(m) 0
#define D_SZ(m) (((m)&0xe0) <= 0x20 ? 2 : 0)
#define D_ENTRY(m) ENTRY(D, m)

#define R4(F, i) F(i), F(i + 1), F(i + 2), F(i + 3)
#define R16(F, i) R4(F, i), R4(F, i + 4), R4(F, i + 8), R4(F, i + 12)
#define R64(F, i) R16(F, i), R16(F, i + 16), R16(F, i + 32), R16(F, i + 48)
#define R256(F) R64(F, 0), R64(F, 64), R64(F, 128), R64(F, 192)

static const struct fast_entry fast_main[256] = {R256(M_ENTRY)};
static const struct fast_entry fast_ext[256] = {R256(X_ENTRY)};
static const struct fast_entry fast_mode[256] = {R256(D_ENTRY)};

/* The chained loop's step for a one-byte opcode b: sh | size << 8, where
 * sh = 8 * (size - 1) is where the next packet starts in the 8 bytes
 * after the opcode; 0: leave the chain (not a fast packet of up to 8
 * bytes, or PAD, whose runs are decoded in bulk).  The skd007 variant
 * also leaves it at 2-byte CYCs. */
#define N_STEP(b)                                                                                  \
	((b) != 0 && M_SIZE(b) >= 1 && M_SIZE(b) <= 8 ? 8 * (M_SIZE(b) - 1) | M_SIZE(b) << 8 : 0)
#define N_STEP_SKD(b) (CYC2(b) ? 0 : N_STEP(b))
static const uint16_t chain_step[256] = {R256(N_STEP)};
static const uint16_t chain_step_skd007[256] = {R256(N_STEP_SKD)};

#if defined(__x86_64__) && defined(__GNUC__)
/* The 64-byte chunk scan (x86-64 CPUs with AVX-512 VBMI and VBMI2, BMI2,
 * chosen at run time).  The chained loop above is bound by its loop-carried chain (a
 * table load, a shift and a zero-extend per packet: about 8 cycles), and
 * an exit from it (02 and 99 opcodes) costs a mispredicted branch and a
 * restarted chain.  The scan finds where the packets start in 64 bytes
 * at once, so the packets are then written with no chain between them:
 *   L[i] = the size of a packet starting at byte i (from its opcode, and
 *          for 02, 99 and 2-byte CYC from the next byte), L_SLOW for one
 *          that the fast path does not decode (PSB, TMA, longer CYC, a bad
 *          opcode, ...);
 *   N[i] = i + L[i] (64 .. 79: the next packet starts in the next chunk),
 *          i for a slow packet (a fixed point: the scan stops there);
 *   N^2, N^4, ..., N^64 by squaring (one vpermi2b each; 64 .. 127 map to
 *          themselves), so N^64[s] is where the walk from s leaves the
 *          chunk or stops: the only value carried to the next chunk;
 *   P[j] = N^j[s] for the chunk's entry s (six masked vpermi2b): the
 *          starts in order, up to the first slow one or the chunk's end.
 * The packets are then written from the entries as in the chained loop;
 * a TNT-64 without payload bits stops the scan too.  The table sizes
 * come from the same macros as the entries.
 * A chunk of small packets only (PAD, TNT-8, one-byte CYC, MTC: 99% of a
 * TNT-dense trace) skips the walk: its starts follow from where the MTC
 * opcodes are (simd_chunk), vpcompressb puts the opcodes and next bytes
 * in packet order, and since each of a small packet's three words is one
 * byte wide, one vpermi2b per 64 bytes of packets places them from four
 * byte vectors of fields (simd_write_small, wr_idx).  On the bench's gzip
 * trace (1.09 bytes a packet) that took the decoder from 1.7 to 0.5 ns a
 * packet. */
#define PKT_SIMD 1
#include <immintrin.h>

#define L_SLOW 0x80
#define L_MAIN(b) (M_SIZE(b) ? M_SIZE(b) : (b) == 0x02 || (b) == 0x99 ? 2 : L_SLOW)
#define L_MAIN_SKD(b) (CYC2(b) ? L_SLOW : L_MAIN(b))
#define L_EXT(x) (X_SIZE(x) ? X_SIZE(x) : L_SLOW)
static const uint8_t len_main[256] __attribute__((aligned(64))) = {R256(L_MAIN)};
static const uint8_t len_main_skd007[256] __attribute__((aligned(64))) = {R256(L_MAIN_SKD)};
static const uint8_t len_ext[256] __attribute__((aligned(64))) = {R256(L_EXT)};

/* The scan writes packets from one table, indexed by a code byte: the
 * opcode for one-byte opcodes; for 02 xx and 99 xx, the slot of an
 * opcode that is not a packet (so never a code: the scan stops there).
 * 02 xx: the slots 05 25 .. e5, 39 79 b9; 99 xx: 09 29 .. e9 (MODE.Exec,
 * xx bits 2:0 in the slot's bits 7:5) and 15 35 .. f5 (MODE.TSX). */
/* the 02 xx slots and their second bytes xx, one pair each */
#define S_XPAIRS(P, v)                                                                             \
	P(v, 0x05, 0x03)                                                                           \
	P(v, 0x25, 0x23)                                                                           \
	P(v, 0x45, 0x33)                                                                           \
	P(v, 0x65, 0x43)                                                                           \
	P(v, 0x85, 0x62)                                                                           \
	P(v, 0xa5, 0x83)                                                                           \
	P(v, 0xc5, 0xa3)                                                                           \
	P(v, 0xe5, 0xb3)                                                                           \
	P(v, 0x39, 0xc8)                                                                           \
	P(v, 0x79, 0xe2)                                                                           \
	P(v, 0xb9, 0xf3)
#define S_XREP1(s, slot, x) (s) == (slot) ? (x):
#define S_XSLOT1(x, slot, xx) (x) == (xx) ? (slot):
#define S_XREP(s) (S_XPAIRS(S_XREP1, s) 0)
#define S_XSLOT(x) (S_XPAIRS(S_XSLOT1, x) 0x02)
#define S_ISD(s) (((s)&0x1f) == 0x09 || ((s)&0x1f) == 0x15)
#define S_DREP(s) ((((s)&0x1f) == 0x09 ? 0 : 0x20) | (s) >> 5)
#define S_DSLOT(m) (((m) >> 5 ? 0x15 : 0x09) | ((m)&7) << 5)
#define A_F(F, s) (S_XREP(s) ? X_##F(S_XREP(s)) : S_ISD(s) ? D_##F(S_DREP(s)) : M_##F(s))
#define A_HDR(s) A_F(HDR, s)
#define A_AMASK(s) A_F(AMASK, s)
#define A_AMUL(s) A_F(AMUL, s)
#define A_AOR(s) A_F(AOR, s)
#define A_BMASK(s) A_F(BMASK, s)
#define A_BOR(s) A_F(BOR, s)
#define A_CHK(s) A_F(CHK, s)
#define A_SZ(s) A_F(SZ, s)
#define A_ENTRY(s) ENTRY(A, s)
static const struct fast_entry fast_code[256] = {R256(A_ENTRY)};
static const uint8_t code_ext[256] __attribute__((aligned(64))) = {R256(S_XSLOT)};
static const uint8_t code_mode[64] __attribute__((aligned(64))) = {R64(S_DSLOT, 0)};

/* The small packets, whose three words are each one byte wide and follow
 * from the opcode (and for MTC the next byte): PAD, TNT-8, one-byte CYC,
 * MTC; codes of other packets are never small.  sm_aor: bit 7 small,
 * bits 6:0 the first payload word (TNT-8's bit count, CYC's value);
 * sm_type, sm_size: the header's two bytes; sm_bor: the second payload
 * word (TNT-8's bits).  A chunk of small packets only is written 64
 * bytes at a time (simd_write_small). */
#define SM_IS(c) ((c) == 0 || IS_TNT(c) || (IS_CYC(c) && !CYC2(c)) || (c) == 0x59)
#define SM_AOR(c) (SM_IS(c) ? 0x80 | M_AOR(c) : 0)
#define SM_TYPE(c) (SM_IS(c) ? M_TYPE(c) : 0)
#define SM_SIZE(c) (SM_IS(c) ? M_SIZE(c) : 0)
#define SM_BOR(c) (SM_IS(c) ? M_BOR(c) : 0)
static const uint8_t sm_aor[256] __attribute__((aligned(64))) = {R256(SM_AOR)};
static const uint8_t sm_type[256] __attribute__((aligned(64))) = {R256(SM_TYPE)};
static const uint8_t sm_size[256] __attribute__((aligned(64))) = {R256(SM_SIZE)};
static const uint8_t sm_bor[256] __attribute__((aligned(64))) = {R256(SM_BOR)};
/* Where byte g of 32 small packets (768 bytes) comes from in the two
 * vectors [type | a] and [size | b] (32 packets each): byte 0 of packet
 * j the type (j), byte 1 the size (64 + j), bytes 8 and 16 the payload
 * words a (32 + j) and b (96 + j); 0x80 for the zero bytes. */
#define WR_IDX(g)                                                                                  \
	((g) % 24 == 0	  ? (g) / 24                                                               \
	 : (g) % 24 == 1  ? 64 + (g) / 24                                                          \
	 : (g) % 24 == 8  ? 32 + (g) / 24                                                          \
	 : (g) % 24 == 16 ? 96 + (g) / 24                                                          \
			  : 0x80)
static const uint8_t wr_idx[768] __attribute__((aligned(64))) = {
    R64(WR_IDX, 0),   R64(WR_IDX, 64),	R64(WR_IDX, 128), R64(WR_IDX, 192),
    R64(WR_IDX, 256), R64(WR_IDX, 320), R64(WR_IDX, 384), R64(WR_IDX, 448),
    R64(WR_IDX, 512), R64(WR_IDX, 576), R64(WR_IDX, 640), R64(WR_IDX, 704)};
#endif

#undef R4
#undef R16
#undef R64
#undef R256

/* The layout the fast path writes into: a header word (type, size, zeroed
 * padding) and the two words of the payload union. */
_Static_assert(sizeof(struct hwt_pt_packet) == 24 && sizeof(((struct hwt_pt_packet *)0)->u) == 16,
	       "packet size");
_Static_assert(offsetof(struct hwt_pt_packet, type) == 0 &&
		   offsetof(struct hwt_pt_packet, size) == 1 &&
		   offsetof(struct hwt_pt_packet, u) == 8,
	       "type and size lead");
_Static_assert(
    offsetof(struct hwt_pt_packet, u.tnt.payload) == offsetof(struct hwt_pt_packet, u) + 8 &&
	offsetof(struct hwt_pt_packet, u.ip.ip) == offsetof(struct hwt_pt_packet, u) + 8 &&
	offsetof(struct hwt_pt_packet, u.pip.nr) == offsetof(struct hwt_pt_packet, u) + 8 &&
	offsetof(struct hwt_pt_packet, u.mode_exec.iflag) ==
	    offsetof(struct hwt_pt_packet, u) + 2 &&
	offsetof(struct hwt_pt_packet, u.mode_tsx.abrt) == offsetof(struct hwt_pt_packet, u) + 1,
    "payload layout");

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64toh(v);
}

/* Three 8-byte stores (one 24-byte memcpy from a stack copy would cost a
 * store-forwarding stall). */
static inline void put3(struct hwt_pt_packet *pkt, uint64_t w0, uint64_t w1, uint64_t w2)
{
	unsigned char *d = (unsigned char *)pkt;
	memcpy(d, &w0, 8);
	memcpy(d + 8, &w1, 8);
	memcpy(d + 16, &w2, 8);
}

static inline void emit(const struct fast_entry *e, uint64_t x, struct hwt_pt_packet *pkt)
{
	put3(pkt, e->hdr, ((x & e->a_mask) * e->a_mul) | e->a_or, (x & e->b_mask) | e->b_or);
}

/* Decode a fast-path packet at p (16 bytes readable); 0 if it is not one.
 * no_cyc2: leave 2-byte CYCs to the full path (SKD007 checks them). */
static inline int fast_one(const uint8_t *p, struct hwt_pt_packet *pkt, int no_cyc2)
{
	const struct fast_entry *e = &fast_main[p[0]];
	uint64_t x = ld64(p + 1);

	if (p[0] == 0x02 || p[0] == 0x99) {
		e = p[0] == 0x02 ? &fast_ext[p[1]] : &fast_mode[p[1]];
		x = ld64(p + 2);
	}
	if (!e->hdr || (x & e->chk) || (e->chk && no_cyc2))
		return 0;
	if ((e->hdr & 0xff) == HWT_PKT_TNT64) { /* payload bits up to a stop bit */
		uint64_t t = x & e->b_mask;
		if (t < 2)
			return 0;
		unsigned bits = 63u - (unsigned)__builtin_clzll(t);
		put3(pkt, e->hdr, bits, t ^ (1ull << bits));
	} else {
		emit(e, x, pkt);
	}
	return e->hdr >> 8;
}

#ifdef PKT_SIMD
#define SIMD_TARGET                                                                                \
	__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,popcnt,bmi,bmi2")))
/* GCC's SLP vectorizer would merge put3's first two stores (see
 * hwt_pt_pkt_next_batch). */
#if defined(__clang__)
#define SIMD_RUN_ATTR SIMD_TARGET
#else
#define SIMD_RUN_ATTR SIMD_TARGET __attribute__((optimize("no-tree-slp-vectorize")))
#endif

static int simd_supported(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2") &&
	       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("popcnt") &&
	       __builtin_cpu_supports("bmi2");
}

/* t[v] for a 256-byte table in four registers. */
SIMD_TARGET static inline __m512i lut256(__m512i t0, __m512i t1, __m512i t2, __m512i t3, __m512i v)
{
	__m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
	return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

static const uint8_t lane_iota[64] __attribute__((aligned(64))) = {
    0,	1,  2,	3,  4,	5,  6,	7,  8,	9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
    44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

/* Eight PAD packets (type and size in each first word). */
#define PAD_W HDR(HWT_PKT_PAD, 1)
static const uint64_t pad8[24]
    __attribute__((aligned(64))) = {PAD_W, 0, 0, PAD_W, 0, 0, PAD_W, 0, 0, PAD_W, 0, 0,
				    PAD_W, 0, 0, PAD_W, 0, 0, PAD_W, 0, 0, PAD_W, 0, 0};

/* A table's i-th 64 bytes (the loops take them straight from memory). */
#define TB(tab, i) _mm512_load_si512((const void *)((tab) + 64 * (i)))
/* tab[v] for a 256-byte table in memory */
#define LUT(tab, v) lut256(TB(tab, 0), TB(tab, 1), TB(tab, 2), TB(tab, 3), v)

/* The per-call state: the length table (with SKD007 or not) and the
 * masks of the bytes each of three stores of small packets fills. */
struct simd_tabs {
	const uint8_t *lm;
	__mmask64 wk[3];
};

/* A chunk's small packets (n of them) from their fields w (see wr_idx):
 * eight packets (192 bytes, three stores) at a time, the last eight
 * whole where room (the packets o has room for, >= n) allows, else cut
 * by masked stores. */
SIMD_TARGET static inline void simd_write_small(struct hwt_pt_packet *o, unsigned n, unsigned room,
						const __m512i *w, const struct simd_tabs *t)
{
	const __m512i *ix = (const __m512i *)(const void *)wr_idx;
	char *d = (char *)o;
	for (unsigned g = 0; 8 * g < n; g++, d += 192) {
		const __m512i *wp = w + 2 * (g >> 2), *ip = ix + 3 * (g & 3);
		__m512i v0 = _mm512_maskz_permutex2var_epi8(t->wk[0], wp[0], ip[0], wp[1]);
		__m512i v1 = _mm512_maskz_permutex2var_epi8(t->wk[1], wp[0], ip[1], wp[1]);
		__m512i v2 = _mm512_maskz_permutex2var_epi8(t->wk[2], wp[0], ip[2], wp[1]);
		if (__builtin_expect(8 * g + 8 <= room, 1)) {
			_mm512_storeu_si512((void *)d, v0);
			_mm512_storeu_si512((void *)(d + 64), v1);
			_mm512_storeu_si512((void *)(d + 128), v2);
		} else { /* the caller's array ends: room - 8 * g packets */
			unsigned left = 24 * (room - 8 * g);
			_mm512_mask_storeu_epi8((void *)d, _bzhi_u64(~0ull, left), v0);
			if (left > 64)
				_mm512_mask_storeu_epi8((void *)(d + 64),
							_bzhi_u64(~0ull, left - 64), v1);
			if (left > 128)
				_mm512_mask_storeu_epi8((void *)(d + 128),
							_bzhi_u64(~0ull, left - 128), v2);
		}
	}
}

/* One chunk of the scan: the starts from entry s in pa[0, *cnt) (after
 * them the walk leaves the chunk or is stuck on a slow packet), for each
 * start its entry's offset in fast_code (ca) and its payload's offset
 * (xa); returns where the walk leaves (64 + the next chunk's entry) or the
 * slow packet's position (< 64). */
SIMD_TARGET static inline unsigned simd_chunk(const uint8_t *c, unsigned s, uint8_t *pa,
					      uint8_t *xa, uint16_t *ca, unsigned *cnt, int *zero,
					      __m512i *w, uint64_t *small,
					      const struct simd_tabs *t)
{
	const __m512i iota = _mm512_load_si512((const void *)lane_iota);
	const __m512i id_hi = _mm512_add_epi8(iota, _mm512_set1_epi8(64));
	const __m512i one = _mm512_set1_epi8(1);
	__m512i vb = _mm512_loadu_si512((const void *)c);
	__m512i vy = _mm512_loadu_si512((const void *)(c + 1));
	*zero = !_mm512_test_epi8_mask(vb, vb); /* PADs only */
	/* Small packets only (all one byte but MTC): the starts from the MTC
	 * opcodes alone.  In a run of 59 bytes from a to b (a >= s, so a
	 * packet starts at a: the byte before it is no MTC opcode) a, a + 2,
	 * ... are MTCs, a + 1, a + 3, ... their payloads, and b + 1 is a
	 * payload when b - a is even.  m + (the runs' first bits) clears the
	 * runs and sets each run's b + 1; once for the runs that start at an
	 * even position, once for the odd ones.  Exact while every start
	 * before is small, so the first start that is not small is found:
	 * then the walk below decides. */
	const uint64_t even = 0x5555555555555555ull, from = ~0ull << s;
	uint64_t m = _mm512_cmpeq_epi8_mask(vb, _mm512_set1_epi8(0x59)) & from;
	uint64_t first = m & ~(m << 1), se = m + (first & even), so = m + (first & ~even);
	uint64_t re = m & ~se, ro = m & ~so; /* the runs, by their first bit */
	uint64_t pay = ((re | (se & ~m)) & ~even) | ((ro | (so & ~m)) & even);
	uint64_t st = from & ~pay;
	__m512i av = LUT(sm_aor, vb);
	if (!(st & ~_mm512_movepi8_mask(av))) {
		__m512i cp = _mm512_maskz_compress_epi8(st, vb);
		__m512i ty = LUT(sm_type, cp), sz = LUT(sm_size, cp), b = LUT(sm_bor, cp);
		__m512i a =
		    _mm512_maskz_compress_epi8(st, _mm512_and_si512(av, _mm512_set1_epi8(0x7f)));
		a = _mm512_mask_mov_epi8(a, _mm512_cmpeq_epi8_mask(cp, _mm512_set1_epi8(0x59)),
					 _mm512_maskz_compress_epi8(st, vy));
		w[0] = _mm512_inserti64x4(ty, _mm512_castsi512_si256(a), 1);
		w[1] = _mm512_inserti64x4(sz, _mm512_castsi512_si256(b), 1);
		w[2] = _mm512_shuffle_i64x2(ty, a, 0xee);
		w[3] = _mm512_shuffle_i64x2(sz, b, 0xee);
		*small = st;
		*cnt = (unsigned)__builtin_popcountll(st);
		return 64 + (unsigned)((st & m) >> 63); /* an MTC at 63: its payload */
	}
	*small = 0;
	__mmask64 m02 = _mm512_cmpeq_epi8_mask(vb, _mm512_set1_epi8(2));
	__mmask64 m99 = _mm512_cmpeq_epi8_mask(vb, _mm512_set1_epi8((char)0x99));
	__m512i len = LUT(t->lm, vb);
	len = _mm512_mask_mov_epi8(len, m02, LUT(len_ext, vy));
	__mmask64 slow = _mm512_movepi8_mask(len);
	/* MODE: leaves other than exec and tsx; CYC: a third byte */
	slow |= m99 & _mm512_cmpgt_epu8_mask(vy, _mm512_set1_epi8(0x3f));
	slow |=
	    _mm512_cmpeq_epi8_mask(_mm512_and_si512(vb, _mm512_set1_epi8(7)), _mm512_set1_epi8(7)) &
	    _mm512_test_epi8_mask(vy, one);
	__m512i code = _mm512_mask_mov_epi8(vb, m02, LUT(code_ext, vy));
	code = _mm512_mask_permutexvar_epi8(code, m99, vy, TB(code_mode, 0));
	__m512i xoff = _mm512_add_epi8(iota, one);
	xoff = _mm512_mask_add_epi8(xoff, m02 | m99, xoff, one);
	__m512i n1 = _mm512_mask_mov_epi8(_mm512_add_epi8(iota, len), slow, iota);
	__m512i n2 = _mm512_permutex2var_epi8(n1, n1, id_hi);
	__m512i n4 = _mm512_permutex2var_epi8(n2, n2, id_hi);
	__m512i n8 = _mm512_permutex2var_epi8(n4, n4, id_hi);
	__m512i n16 = _mm512_permutex2var_epi8(n8, n8, id_hi);
	__m512i n32 = _mm512_permutex2var_epi8(n16, n16, id_hi);
	__m512i vs = _mm512_set1_epi8((char)s);
	__m512i ex = _mm512_permutexvar_epi8(vs, _mm512_permutex2var_epi8(n32, n32, id_hi));
	__m512i p = vs;
	p = _mm512_mask2_permutex2var_epi8(n1, p, 0xaaaaaaaaaaaaaaaaull, id_hi);
	p = _mm512_mask2_permutex2var_epi8(n2, p, 0xccccccccccccccccull, id_hi);
	p = _mm512_mask2_permutex2var_epi8(n4, p, 0xf0f0f0f0f0f0f0f0ull, id_hi);
	p = _mm512_mask2_permutex2var_epi8(n8, p, 0xff00ff00ff00ff00ull, id_hi);
	p = _mm512_mask2_permutex2var_epi8(n16, p, 0xffff0000ffff0000ull, id_hi);
	p = _mm512_mask2_permutex2var_epi8(n32, p, 0xffffffff00000000ull, id_hi);
	_mm512_store_si512((void *)pa, p);
	_mm512_store_si512((void *)xa, _mm512_permutexvar_epi8(p, xoff));
	__m512i cp = _mm512_permutexvar_epi8(p, code);
	_mm512_store_si512((void *)ca,
			   _mm512_slli_epi16(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(cp)), 6));
	_mm512_store_si512(
	    (void *)(ca + 32),
	    _mm512_slli_epi16(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(cp, 1)), 6));
	/* lanes past the last start: out of the chunk, or stuck */
	__mmask64 stop = _mm512_cmpeq_epi8_mask(_mm512_permutex2var_epi8(n1, p, id_hi), p) |
			 _mm512_cmpgt_epu8_mask(p, _mm512_set1_epi8(63));
	*cnt = stop ? (unsigned)__builtin_ctzll(stop) : 64;
	return (unsigned)_mm_cvtsi128_si32(_mm512_castsi512_si128(ex)) & 0xff;
}

/* Decode packets from *qp on, a chunk of 64 bytes at a time while the
 * chunk starts at or before clim (80 bytes before the end: the scan reads
 * 65 bytes, a packet's entry 10 bytes from its start), into out[0, room).
 * Stops before a packet the scan leaves to the other paths; returns the
 * packets written and leaves in *qp where the next one starts.  The
 * next chunk is scanned before the current one's packets are written,
 * so that their starts are read long after they were stored. */
SIMD_RUN_ATTR static int simd_run(const uint8_t **qp, const uint8_t *clim,
				  struct hwt_pt_packet *out, int room, const uint8_t *lmain)
{
	uint8_t pa[2][64] __attribute__((aligned(64))), xa[2][64] __attribute__((aligned(64)));
	uint16_t ca[2][64] __attribute__((aligned(64)));
	const uint8_t *c = *qp;
	const char *tab = (const char *)fast_code;
	__m512i w[2][4];
	unsigned cur = 0, cnt, ncnt = 0, ex, nex = 0;
	int k = 0, zero, nzero = 0;
	uint64_t small, nsmall = 0; /* a chunk of small packets: their starts */
	struct simd_tabs t;

	if (c > clim || room <= 0)
		return 0;
	t.lm = lmain;
	for (int i = 0; i < 3; i++)
		t.wk[i] = ~_mm512_movepi8_mask(TB(wr_idx, i));
	ex = simd_chunk(c, 0, pa[0], xa[0], ca[0], &cnt, &zero, w[0], &small, &t);
	for (;;) {
		int more = ex >= 64 && c + 64 <= clim && (unsigned)(room - k) > cnt;
		if (more)
			nex = simd_chunk(c + 64, ex - 64, pa[cur ^ 1], xa[cur ^ 1], ca[cur ^ 1],
					 &ncnt, &nzero, w[cur ^ 1], &nsmall, &t);
		unsigned n = cnt < (unsigned)(room - k) ? cnt : (unsigned)(room - k);
		struct hwt_pt_packet *o = out + k;
		const uint8_t *xc = xa[cur];
		const uint16_t *cc = ca[cur];
		if (zero) { /* a run of PADs: eight packets in three stores */
			unsigned j = 0;
			for (; j + 8 <= n; j += 8) {
				_mm512_storeu_si512((void *)(o + j), TB((const uint8_t *)pad8, 0));
				_mm512_storeu_si512((char *)(o + j) + 64,
						    TB((const uint8_t *)pad8, 1));
				_mm512_storeu_si512((char *)(o + j) + 128,
						    TB((const uint8_t *)pad8, 2));
			}
			for (; j < n; j++)
				put3(o + j, HDR(HWT_PKT_PAD, 1), 0, 0);
		} else if (small)
			simd_write_small(o, n, (unsigned)(room - k), w[cur], &t);
		else
			for (unsigned j = 0; j < n; j++) {
				const struct fast_entry *e = (const void *)(tab + cc[j]);
				uint64_t x = ld64(c + xc[j]);
				if (__builtin_expect((uint8_t)e->hdr == HWT_PKT_TNT64, 0)) {
					uint64_t tb = x & e->b_mask;
					if (tb < 2) {
						*qp = c + pa[cur][j];
						return k + (int)j;
					}
					unsigned bits = 63u - (unsigned)__builtin_clzll(tb);
					put3(o + j, e->hdr, bits, tb ^ (1ull << bits));
					continue;
				}
				emit(e, x, o + j);
			}
		k += (int)n;
		if (n < cnt) {
			*qp = c + (small ? (unsigned)__builtin_ctzll(_pdep_u64(1ull << n, small))
					 : pa[cur][n]);
			return k;
		}
		if (!more || k == room) {
			*qp = c + ex; /* a slow packet, or the next chunk's entry */
			return k;
		}
		c += 64;
		cur ^= 1;
		cnt = ncnt;
		ex = nex;
		zero = nzero;
		small = nsmall;
	}
}
#endif

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
	pkt_set_simd(dec, 1);
	return dec;
}

int pkt_set_simd(struct hwt_pt_pkt_decoder *dec, int on)
{
#ifdef PKT_SIMD
	dec->simd = on && simd_supported();
#else
	(void)on;
	dec->simd = 0;
#endif
	return dec->simd;
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

/* PSB search, word at a time: a PSB at o holds the 8-byte word PSB_W0
 * (02 82 02 82 ...) or PSB_W1 (82 02 ...) at each of o .. o + 8, so
 * testing every 8th word finds every PSB, and a hit at a is checked as a
 * PSB at a - 7 .. a.  Four words per step (a branch per 32 bytes). */
#define PSB_W0 0x8202820282028202ull
#define PSB_W1 0x0282028202820282ull

static inline int psb_word(uint64_t w)
{
	return (w == PSB_W0) | (w == PSB_W1);
}

/* Smallest i in [lo, hi] with a PSB at base + i, or -1 (base[lo, hi + 16)
 * readable). */
static int64_t fscan(const uint8_t *base, int64_t lo, int64_t hi)
{
	int64_t a = lo;
	for (;;) {
		while (a + 24 <= hi + 8 &&
		       !(psb_word(ld64(base + a)) | psb_word(ld64(base + a + 8)) |
			 psb_word(ld64(base + a + 16)) | psb_word(ld64(base + a + 24))))
			a += 32;
		if (a > hi + 8)
			return -1;
		if (psb_word(ld64(base + a)))
			for (int64_t i = a - 7 < lo ? lo : a - 7; i <= a && i <= hi; i++)
				if (base[i] == 0x02 && !memcmp(base + i, psb_bytes, 16))
					return i;
		a += 8;
	}
}

/* Smallest offset >= from where the 16 PSB bytes start, or -1. */
static int64_t psb_first_raw(const struct hwt_pt_pkt_decoder *dec, uint64_t from)
{
	int64_t r;
	uint64_t n2 = dec->total - dec->n1;

	if (from + 16 <= dec->n1) {
		r = fscan(dec->b1, (int64_t)from, (int64_t)dec->n1 - 16);
		if (r >= 0)
			return r;
	}
	if (n2) {
		uint64_t lo = dec->n1 >= 15 ? dec->n1 - 15 : 0;
		uint64_t hi = dec->n1 + 15 < dec->total ? dec->n1 + 15 : dec->total;
		uint8_t win[32];
		if (lo < from)
			lo = from;
		if (lo + 16 <= hi) {
			copy_out(dec, lo, win, hi - lo);
			r = fscan(win, 0, (int64_t)(hi - lo) - 16);
			if (r >= 0)
				return (int64_t)lo + r;
		}
		uint64_t start = from > dec->n1 ? from : dec->n1;
		if (start + 16 <= dec->total) {
			r = fscan(dec->b2, (int64_t)(start - dec->n1), (int64_t)n2 - 16);
			if (r >= 0)
				return (int64_t)dec->n1 + r;
		}
	}
	return -1;
}

/* Largest i in [lo, hi] with a PSB at base + i, or -1 (base[lo, hi + 16)
 * readable). */
static int64_t rscan(const uint8_t *base, int64_t lo, int64_t hi)
{
	int64_t a = hi;
	for (;;) {
		while (a - 24 >= lo &&
		       !(psb_word(ld64(base + a)) | psb_word(ld64(base + a - 8)) |
			 psb_word(ld64(base + a - 16)) | psb_word(ld64(base + a - 24))))
			a -= 32;
		if (a < lo)
			return -1;
		if (psb_word(ld64(base + a)))
			for (int64_t i = a; i >= a - 7 && i >= lo; i--)
				if (base[i] == 0x02 && !memcmp(base + i, psb_bytes, 16))
					return i;
		a -= 8;
	}
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
 * from offset start) while 16 bytes remain in it; stops (without
 * consuming) at errors, errata candidates and BBP, which the general path
 * handles.  The inner loop is the hot one: the next packet's first byte
 * comes out of the 8 bytes already loaded after the current opcode (a
 * shift by chain_step[b]) instead of a reload, so the loop-carried chain
 * per packet is one table load and a shift.  Two-byte opcodes (02 xx, 99
 * xx) of up to 8 bytes stay in the chain through a (rarely taken) branch;
 * anything else: fast_one, else the full parser in place. */
static inline __attribute__((always_inline)) int fast_run(struct hwt_pt_pkt_decoder *dec,
							  const uint8_t *base, uint64_t start,
							  uint64_t len, struct hwt_pt_packet *pkts,
							  int k, int n, const int no_cyc2)
{
	const uint8_t *q = base + (dec->pos - start), *end = base + len;
	const uint8_t *qlim = end - HWT_PT_PKT_MAX_SIZE;
	const uint16_t *chain = no_cyc2 ? chain_step_skd007 : chain_step;
	struct hwt_pt_packet *out = pkts + k, *oend = pkts + n;

#ifdef PKT_SIMD
	const int simd = dec->simd && len >= 80;
	const uint8_t *clim = simd ? end - 80 : base;
	const uint8_t *lmain = no_cyc2 ? len_main_skd007 : len_main;
#endif

	while (out < oend && q <= qlim) {
#ifdef PKT_SIMD
		if (simd && q <= clim) {
			out += simd_run(&q, clim, out, (int)(oend - out), lmain);
			if (out == oend || q > clim)
				continue;
			goto one; /* a packet the scan leaves to the paths below */
		}
#endif
		{
			unsigned b = q[0];
			uint64_t x = ld64(q + 1);
			/* packets of at most 8 bytes each: the first lim - out of them
			 * all start at or before qlim (one check per packet) */
			size_t room = (size_t)(qlim - q) / 8 + 1;
			struct hwt_pt_packet *lim = (size_t)(oend - out) < room ? oend : out + room;
			for (;;) {
				unsigned v = chain[b];
				const struct fast_entry *e = &fast_main[b];
				if (__builtin_expect(!v || (x & e->chk), 0)) {
					if (!b) { /* a run of PADs: count and write them in bulk */
						size_t z = 0, zmax = (size_t)(qlim - q) + 1;
						if (zmax > (size_t)(oend - out))
							zmax = (size_t)(oend - out);
						uint64_t w = 0;
						while (z + 8 <= zmax && !(w = ld64(q + z)))
							z += 8;
						if (z + 8 <= zmax)
							z += (size_t)__builtin_ctzll(w) / 8;
						else
							while (z < zmax && !q[z])
								z++;
						for (size_t i = 0; i < z; i++)
							put3(out + i, HDR(HWT_PKT_PAD, 1), 0, 0);
						q += z;
						out += z;
						goto reload;
					}
					if (b != 0x02 && b != 0x99)
						break;
					e = b == 0x02 ? &fast_ext[x & 0xff] : &fast_mode[x & 0xff];
					uint64_t y = x >> 8, t = y & e->b_mask;
					int tnt = (e->hdr & 0xff) == HWT_PKT_TNT64;
					if ((e->hdr == 0) | (tnt & (t < 2)))
						break;
					/* TNT-64 (most of these) or not: selected, not
					 * branched on (one mispredicted branch per exit
					 * from the chain is enough) */
					uint64_t bits = 63u - (unsigned)__builtin_clzll(t | 1);
					uint64_t w1 = ((y & e->a_mask) * e->a_mul) | e->a_or;
					uint64_t w2 = (y & e->b_mask) | e->b_or;
					uint64_t m = -(uint64_t)tnt;
					put3(out, e->hdr, (bits & m) | (w1 & ~m),
					     ((t ^ (1ull << bits)) & m) | (w2 & ~m));
					v = (unsigned)e->size << 8 | (8u * (unsigned)e->size - 8u);
				} else {
					emit(e, x, out);
				}
				out++;
				q += v >> 8; /* not e->size: one load less on the chain */
				b = (uint8_t)(x >> (v & 0xff));
				if (out == lim)
					goto reload;
				x = ld64(q + 1);
			}
		}
#ifdef PKT_SIMD
	one:;
#endif
		int size = fast_one(q, out, no_cyc2);
		if (!size) {
			size = hwt_pt_pkt_parse_ctx(q, (size_t)(end - q), HWT_PKT_CTX_NONE, out);
			if (size <= 0 || out->type == HWT_PKT_BBP ||
			    (no_cyc2 && size == 2 && out->type == HWT_PKT_CYC))
				break;
		}
		q += size;
		out++;
	reload:;
	}
	dec->pos = start + (uint64_t)(q - base);
	return (int)(out - pkts);
}

/* GCC's SLP vectorizer would merge the first two of put3's stores into a
 * vector built from two registers (3 more instructions a packet). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-slp-vectorize")))
#endif
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

/* ---- timing packets read past (packet_int.h) ---- */

/* The size of the timing packet (MTC, CYC, TSC, TMA) at p, of which avail
 * bytes are readable, when hwt_pt_pkt_next would read exactly that packet
 * there outside a block context; 0 for anything else, and for what the
 * packet decoder must decide (a packet that does not fit, TMA reserved
 * bits (SKZ84), a 2-byte CYC under SKD007, a CYC of more than 4 bytes). */
static unsigned pkt_time_size(const uint8_t *p, uint64_t avail, int skd007)
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

/* (packet_int.h) */
uint64_t pkt_past_time(const struct hwt_pt_pkt_decoder *dec, uint64_t off)
{
	for (int k = 0; k < 4 && off < dec->n1; k++) {
		unsigned n = pkt_time_size(dec->b1 + off, dec->n1 - off, dec->skd007);
		if (!n)
			break;
		off += n;
	}
	return off;
}

/* (packet_int.h) */
int pkt_next_tnt8_past_time(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkt,
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
