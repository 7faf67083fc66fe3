/* emu/aarch64/spegen.h - Arm SPE (Statistical Profiling Extension) records
 * as the emulated SPE unit writes them: the packet encoder.
 *
 * One record per sampled operation, appended to a caller-owned buffer (no
 * allocation, no I/O).  Packets (Arm ARM, "Statistical Profiling
 * Extension", packet formats; all payloads little-endian):
 *   Address   0b1011_0iii + 8 bytes   i: 0 PC, 1 branch target, 2 data VA
 *             instruction addresses: [55:0] VA, [62:61] EL, [63] NS
 *   Counter   0b1001_1iii + 2 bytes   i: 0 total, 1 issue, 2 translation
 *   Events    0b01ss_0010 + 1 << ss bytes
 *   Operation 0b0100_10cc + 1 byte    c: 0 other, 1 load/store, 2 branch
 *   Context   0b0110_0100 + 4 bytes   CONTEXTIDR_EL1
 *   Timestamp 0b0111_0001 + 8 bytes
 *   End       0b0000_0001             ends a record without a timestamp
 *   Padding   0b0000_0000
 * Record order as implementations write it: PC, [Context], Operation
 * type, [address: data VA or branch target], [translation latency],
 * Events, issue latency, total latency, Timestamp or End; then Padding up
 * to the record alignment (SPEG_ALIGN bytes, PMBIDR_EL1.Align = 6), so
 * that every record starts at a multiple of 64 bytes.
 */
#ifndef HWT_EMU_SPEGEN_H
#define HWT_EMU_SPEGEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SPEG_ALIGN 64u
#define SPEG_MAX_RECORD 64u

/* Events packet bits (Arm ARM) */
enum {
	SPEG_EV_EXCEPTION = 1u << 0,
	SPEG_EV_RETIRED = 1u << 1,
	SPEG_EV_L1D_ACCESS = 1u << 2,
	SPEG_EV_L1D_REFILL = 1u << 3,
	SPEG_EV_TLB_ACCESS = 1u << 4,
	SPEG_EV_TLB_WALK = 1u << 5,
	SPEG_EV_NOT_TAKEN = 1u << 6,
	SPEG_EV_MISPRED = 1u << 7,
	SPEG_EV_LLC_ACCESS = 1u << 8,
	SPEG_EV_LLC_MISS = 1u << 9,
	SPEG_EV_REMOTE = 1u << 10,
	SPEG_EV_MISALIGNED = 1u << 11,
};

/* Operation classes and their payload bits */
enum { SPEG_OP_OTHER = 0, SPEG_OP_LDST = 1, SPEG_OP_BRANCH = 2 };
enum {
	SPEG_LDST_ST = 1u << 0,
	SPEG_LDST_EXT = 1u << 1, /* atomic / exclusive / acquire-release form */
	SPEG_LDST_AT = 1u << 2,	 /* with EXT: atomic; without: SIMD&FP */
	SPEG_LDST_EXCL = 1u << 3,
	SPEG_LDST_AR = 1u << 4,
	SPEG_OTHER_COND = 1u << 0,
	SPEG_BR_COND = 1u << 0,
	SPEG_BR_INDIRECT = 1u << 1,
};

/* One sampled operation, as the unit saw it. */
struct speg_rec {
	uint64_t pc;
	uint8_t op_class; /* SPEG_OP_* */
	uint8_t op_bits;  /* the Operation packet's payload */
	uint8_t have_addr;
	uint8_t have_ctx;
	uint64_t addr; /* data VA (load/store) or branch target */
	uint32_t events;
	uint32_t lat_total, lat_issue, lat_xlat;
	uint32_t ctx;
	int have_ts;
	uint64_t ts;
};

static inline uint8_t *speg_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static inline uint16_t speg_sat16(uint32_t v)
{
	return v > 0xffff ? 0xffff : (uint16_t)v;
}

/* Write one record at p (room for SPEG_MAX_RECORD bytes), padded to
 * SPEG_ALIGN; returns the bytes written (SPEG_ALIGN). */
static inline size_t speg_record(uint8_t *p0, const struct speg_rec *r)
{
	uint8_t *p = p0;
	/* PC: EL0, non-secure */
	*p++ = 0xb0;
	p = speg_le(p, (r->pc & 0x00ffffffffffffffull) | (1ull << 63), 8);
	if (r->have_ctx) {
		*p++ = 0x64;
		p = speg_le(p, r->ctx, 4);
	}
	*p++ = (uint8_t)(0x48 | (r->op_class & 3));
	*p++ = r->op_bits;
	if (r->have_addr) {
		if (r->op_class == SPEG_OP_BRANCH) {
			*p++ = 0xb1;
			p = speg_le(p, (r->addr & 0x00ffffffffffffffull) | (1ull << 63), 8);
		} else {
			*p++ = 0xb2;
			p = speg_le(p, r->addr, 8);
		}
	}
	if (r->op_class == SPEG_OP_LDST) {
		*p++ = 0x9a;
		p = speg_le(p, speg_sat16(r->lat_xlat), 2);
	}
	if (r->events > 0xff) {
		*p++ = 0x52;
		p = speg_le(p, r->events, 2);
	} else {
		*p++ = 0x42;
		*p++ = (uint8_t)r->events;
	}
	*p++ = 0x99;
	p = speg_le(p, speg_sat16(r->lat_issue), 2);
	*p++ = 0x98;
	p = speg_le(p, speg_sat16(r->lat_total), 2);
	if (r->have_ts) {
		*p++ = 0x71;
		p = speg_le(p, r->ts, 8);
	} else {
		*p++ = 0x01;
	}
	size_t n = (size_t)(p - p0);
	memset(p, 0, SPEG_ALIGN - n);
	return SPEG_ALIGN;
}

#endif /* HWT_EMU_SPEGEN_H */
