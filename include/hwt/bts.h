/* hwt/bts.h - Intel BTS (Branch Trace Store) decoding.
 *
 * Layer: lib/bts.  A BTS trace is a sequence of 24-byte records, one per
 * taken branch: u64 from (the branch instruction), u64 to (where it
 * went), u64 flags (bit 4: the branch was predicted), as the hardware
 * writes them and perf's intel_bts AUX data holds them.  All-zero records
 * are padding (perf skips them; hwt's emulated unit ends every AUX piece
 * with one) and are skipped.
 *
 * The decoder takes the records (memory) and an image (hwt/image.h) and
 * gives one branch per hwt_bts_next: its kind, from classifying the
 * instruction at `from` (hwt/x86.h), and, when walking is on, the
 * instructions executed since the previous branch: from the previous
 * record's target up to and including this record's branch instruction.
 * That walk is exact because BTS records every taken branch: conditional
 * branches on the way fell through, and any other branch on the way, or
 * running off the image, means the trace does not match the code.
 *
 * Errors (negative returns of next) are gaps, reported with the offset
 * of the record (hwt_bts_offset) and an ip (hwt_bts_ip):
 *  - HWT_ERR_BAD_PACKET: a partial record at the end of the buffer;
 *  - HWT_ERR_NOMAP / HWT_ERR_BAD_INSN: from is not mapped or not an
 *    instruction, or to is not mapped (the record is dropped);
 *  - HWT_ERR_BAD_QUERY: the walk from the previous target did not reach
 *    from (the record is kept: the next call returns it, unwalked).
 * After an error, hwt_bts_sync_forward (or simply next) goes on at the
 * next record with no previous target.  Nothing is allocated per record;
 * the instruction list is bounded (HWT_BTS_MAX_WALK).
 *
 * Lifecycle: hwt_bts_config_init -> set begin/end -> hwt_bts_alloc(cfg,
 * img) -> sync_forward -> next ... -> hwt_bts_free.  The records and the
 * image must outlive the decoder; the decoder never touches files.
 */
#ifndef HWT_BTS_H
#define HWT_BTS_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/error.h"
#include "hwt/image.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HWT_BTS_RECORD_SIZE 24
#define HWT_BTS_FLAG_PREDICTED 0x10ull
/* At most this many instructions are walked between two branches. */
#define HWT_BTS_MAX_WALK 65536

/* One BTS record as stored (little endian). */
struct hwt_bts_record {
	uint64_t from, to, flags;
};

/* Branch kinds; the values are those of hwt script's kinds (jcc, jmp, ijmp,
 * call, icall, ret, far, async). */
enum hwt_bts_kind {
	HWT_BTS_JCC,
	HWT_BTS_JMP,
	HWT_BTS_IJMP,
	HWT_BTS_CALL,
	HWT_BTS_ICALL,
	HWT_BTS_RET,
	HWT_BTS_FAR,  /* syscall, int n, far call/jmp/ret */
	HWT_BTS_ASYNC /* from is not a branch, or a user branch into the kernel */
};

struct hwt_bts_config {
	size_t size;		    /* sizeof(struct hwt_bts_config) */
	const uint8_t *begin, *end; /* the records */
	uint64_t offset;	    /* stream offset of begin (reported offsets add it) */
	uint8_t walk;		    /* give the instructions between branches */
	/* The records continue an earlier buffer whose last branch went to
	 * prev_to: the first walk starts there (have_prev 1). */
	uint8_t have_prev;
	uint64_t prev_to;
};
void hwt_bts_config_init(struct hwt_bts_config *cfg);

struct hwt_bts_branch {
	uint64_t from, to, flags;
	uint64_t offset;     /* stream offset of the record */
	uint8_t kind;	     /* enum hwt_bts_kind */
	uint8_t iclass;	     /* class of the instruction at from (enum hwt_insn_class) */
	uint8_t size;	     /* its size */
	uint8_t predicted;   /* flags & HWT_BTS_FLAG_PREDICTED */
	uint8_t walked;	     /* ips/sizes start at the previous branch's target */
	uint32_t ninsn;	     /* walk: instructions ending with the branch at from */
	const uint64_t *ips; /* valid until the next call */
	const uint8_t *sizes;
};

struct hwt_bts_decoder;

/* NULL on bad arguments or no memory. */
struct hwt_bts_decoder *hwt_bts_alloc(const struct hwt_bts_config *cfg,
				      const struct hwt_image *img);
void hwt_bts_free(struct hwt_bts_decoder *d);
/* The previous branch's target (for the next buffer's have_prev/prev_to):
 * 1 and *to if known, else 0. */
int hwt_bts_prev(const struct hwt_bts_decoder *d, uint64_t *to);
/* Forget the previous target (not on the first call: the config's
 * have_prev/prev_to stay) and skip padding: 0 if a record follows,
 * HWT_ERR_EOS if none does. */
int hwt_bts_sync_forward(struct hwt_bts_decoder *d);
/* The next branch: 0, HWT_ERR_EOS at the end, or a gap (see above). */
int hwt_bts_next(struct hwt_bts_decoder *d, struct hwt_bts_branch *br);
/* Stream offset of the record last returned or in error. */
int hwt_bts_offset(const struct hwt_bts_decoder *d, uint64_t *offset);
/* The ip of the last error (where a walk stopped, or the bad address),
 * else the last branch's target. */
uint64_t hwt_bts_ip(const struct hwt_bts_decoder *d);

/* Read record i of a buffer (no checks beyond the length): 0, or
 * HWT_ERR_EOS past the last whole record. */
int hwt_bts_record_at(const uint8_t *begin, const uint8_t *end, size_t i, struct hwt_bts_record *r);

#ifdef __cplusplus
}
#endif
#endif /* HWT_BTS_H */
