/* hwt/spe.h - Arm SPE (Statistical Profiling Extension) decoding.
 *
 * Layer: lib/spe.  An SPE trace is a sequence of records, one per sampled
 * operation, each a run of packets (Arm Architecture Reference Manual,
 * "Statistical Profiling Extension", packet formats) ended by an End or a
 * Timestamp packet; Padding packets may fill the space between records.
 * Packet headers (one byte, or an extended header 0b0010_00ee before an
 * Address or Counter header, giving the index's upper two bits):
 *   0b0000_0000 Padding        0b0000_0001 End
 *   0b0111_0001 Timestamp (8)  0b01ss_0010 Events (1 << ss)
 *   0b01ss_0011 Data Source    0b01ss_01cc Context (cc: 0 EL1, 1 EL2)
 *   0b0100_10cc Operation type (1; cc: 0 other, 1 load/store/atomic,
 *               2 branch/exception)
 *   0b1011_0iii Address (8; i: 0 PC, 1 branch target, 2 data virtual,
 *               3 data physical, 4 previous branch target)
 *   0b1001_1iii Counter (2; i: 0 total, 1 issue, 2 translation latency)
 * Payloads are little endian.  Instruction addresses (PC, branch targets)
 * hold the address in bits [55:0], the exception level in [62:61] and NS in
 * [63]; their top byte is rebuilt by sign extension from bit 55.  Data
 * virtual addresses carry a tag in [63:56] (kept as is).
 *
 * Two decoders, both over memory only (never files):
 *  - the packet decoder: hwt_spe_pkt_decode (one packet) and
 *    hwt_spe_pkt_print (perf's packet listing style);
 *  - the record decoder: hwt_spe_alloc(cfg) -> hwt_spe_sync_forward ->
 *    hwt_spe_next ... -> hwt_spe_free: one struct hwt_spe_record per
 *    record.  A bad packet or a record cut by the buffer's end is an error
 *    (HWT_ERR_BAD_PACKET, with the offset of the record), after which next
 *    resynchronizes by itself at the next position where a whole record
 *    decodes (a PC Address packet that starts a record ending in End or
 *    Timestamp); decoding never reads outside the buffer.
 */
#ifndef HWT_SPE_H
#define HWT_SPE_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum hwt_spe_pkt_type {
	HWT_SPE_PAD,
	HWT_SPE_END,
	HWT_SPE_TIMESTAMP,
	HWT_SPE_EVENTS,
	HWT_SPE_DATA_SOURCE,
	HWT_SPE_CONTEXT,
	HWT_SPE_OP_TYPE,
	HWT_SPE_ADDRESS,
	HWT_SPE_COUNTER,
};

/* Address packet indexes */
enum {
	HWT_SPE_ADDR_PC = 0,
	HWT_SPE_ADDR_TARGET = 1,
	HWT_SPE_ADDR_DATA_VA = 2,
	HWT_SPE_ADDR_DATA_PA = 3,
	HWT_SPE_ADDR_PREV_TARGET = 4,
};
/* Counter packet indexes */
enum { HWT_SPE_CNT_TOTAL = 0, HWT_SPE_CNT_ISSUE = 1, HWT_SPE_CNT_XLAT = 2 };
/* Operation type classes */
enum { HWT_SPE_OP_OTHER = 0, HWT_SPE_OP_LDST = 1, HWT_SPE_OP_BRANCH = 2 };

/* Events packet bits */
enum {
	HWT_SPE_EV_EXCEPTION = 1u << 0,
	HWT_SPE_EV_RETIRED = 1u << 1,
	HWT_SPE_EV_L1D_ACCESS = 1u << 2,
	HWT_SPE_EV_L1D_REFILL = 1u << 3,
	HWT_SPE_EV_TLB_ACCESS = 1u << 4,
	HWT_SPE_EV_TLB_WALK = 1u << 5,
	HWT_SPE_EV_NOT_TAKEN = 1u << 6,
	HWT_SPE_EV_MISPRED = 1u << 7,
	HWT_SPE_EV_LLC_ACCESS = 1u << 8,
	HWT_SPE_EV_LLC_MISS = 1u << 9,
	HWT_SPE_EV_REMOTE = 1u << 10,
	HWT_SPE_EV_MISALIGNED = 1u << 11,
};

struct hwt_spe_packet {
	uint8_t type;  /* enum hwt_spe_pkt_type */
	uint8_t index; /* Address/Counter index, Context cc, Operation class */
	uint8_t size;  /* bytes of the whole packet (headers + payload) */
	uint8_t plen;  /* payload bytes */
	uint64_t payload;
};

/* Decode the packet at p (n bytes there): its size (> 0), HWT_ERR_EOS if
 * n is 0, HWT_ERR_BAD_PACKET for an unknown header or a payload past n. */
int hwt_spe_pkt_decode(const uint8_t *p, size_t n, struct hwt_spe_packet *pkt);
/* One line of text for pkt (no newline), as "PC 0x... el0 ns=1",
 * "LAT 5 TOT", "EV RETIRED L1D-ACCESS", ...; returns the length written
 * (snprintf style). */
int hwt_spe_pkt_print(const struct hwt_spe_packet *pkt, char *buf, size_t n);
/* The instruction address of an Address packet payload (bits [55:0], top
 * byte by sign extension from bit 55) and the data virtual address (bits
 * [55:0], the tag byte kept). */
uint64_t hwt_spe_insn_addr(uint64_t payload);

/* One record. */
enum hwt_spe_rec_flags {
	HWT_SPE_HAVE_PC = 1 << 0,
	HWT_SPE_HAVE_TARGET = 1 << 1,
	HWT_SPE_HAVE_VA = 1 << 2,
	HWT_SPE_HAVE_PA = 1 << 3,
	HWT_SPE_HAVE_TS = 1 << 4,
	HWT_SPE_HAVE_CONTEXT = 1 << 5,
	HWT_SPE_HAVE_OP = 1 << 6,
	HWT_SPE_HAVE_EVENTS = 1 << 7,
	HWT_SPE_HAVE_DATA_SOURCE = 1 << 8,
	HWT_SPE_HAVE_TOTAL = 1 << 9,
	HWT_SPE_HAVE_ISSUE = 1 << 10,
	HWT_SPE_HAVE_XLAT = 1 << 11,
};

struct hwt_spe_record {
	uint32_t flags; /* enum hwt_spe_rec_flags */
	uint8_t el;	/* of the PC */
	uint8_t ns;
	uint8_t op_class; /* HWT_SPE_OP_* */
	uint8_t op_bits;  /* the Operation packet's payload */
	uint64_t pc, target, prev_target, va, pa;
	uint64_t ts;
	uint32_t context;
	uint32_t events; /* HWT_SPE_EV_* */
	uint16_t data_source;
	uint16_t lat_total, lat_issue, lat_xlat;
	uint64_t offset; /* of the record's first packet (config.offset based) */
	uint32_t size;	 /* bytes from its first packet to its End/Timestamp */
};

struct hwt_spe_config {
	size_t size; /* sizeof(struct hwt_spe_config) */
	const uint8_t *begin, *end;
	uint64_t offset; /* stream offset of begin (for offsets reported) */
};
void hwt_spe_config_init(struct hwt_spe_config *cfg);

struct hwt_spe_decoder;
/* NULL on bad config or no memory. */
struct hwt_spe_decoder *hwt_spe_alloc(const struct hwt_spe_config *cfg);
void hwt_spe_free(struct hwt_spe_decoder *d);
/* Move to the next position where a whole record decodes: 0, or
 * HWT_ERR_EOS. */
int hwt_spe_sync_forward(struct hwt_spe_decoder *d);
/* The next record: 0; HWT_ERR_EOS at the end; HWT_ERR_BAD_PACKET for
 * damaged data (then *offset from hwt_spe_offset is where; the next call
 * resynchronizes). */
int hwt_spe_next(struct hwt_spe_decoder *d, struct hwt_spe_record *rec);
/* Stream offset of the decoder's position (of the bad data after an
 * error). */
int hwt_spe_offset(const struct hwt_spe_decoder *d, uint64_t *offset);

/* "ld", "st", "b", "bcond", "bind", "other": the operation of a record
 * (a load/store without a data address is "other"). */
const char *hwt_spe_op_name(const struct hwt_spe_record *r);
/* perf's union perf_mem_data_src of a record, as perf maps SPE events on
 * CPUs without a data source packet: op load/store, level L1 (L1D events)
 * or L3 (LLC events) hit/miss, TLB walker hit/miss; 0 for non-memory ops. */
uint64_t hwt_spe_data_src(const struct hwt_spe_record *r);

#ifdef __cplusplus
}
#endif
#endif /* HWT_SPE_H */
