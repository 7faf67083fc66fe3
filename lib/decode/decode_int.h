/* lib/decode/decode_int.h - internals of the recording decoder shared by
 * the engine (decode.c), the format table (formats.c) and the formats'
 * ops (Intel PT: pt.c).  Not installed. */
#ifndef HWT_LIB_DECODE_INT_H
#define HWT_LIB_DECODE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/decode.h"

/* The ops of an AUXTRACE_INFO type, NULL if none. */
const struct hwt_decoder_ops *hwt_decoder_ops_find(uint32_t type);
/* "intel_pt, ..." : the formats that have ops. */
void hwt_decoder_ops_names(char *buf, size_t n);
/* perf's name of an AUXTRACE_INFO type ("intel_pt", "arm_spe", ...;
 * "unknown" if it has none). */
const char *hwt_decoder_format_name(uint32_t type);

/* TSC -> perf time as perf_event_mmap_page describes it (as is when
 * there is no conversion). */
static inline uint64_t hwt_dec_tsc_conv(int have, uint16_t shift, uint32_t mult, uint64_t zero,
					uint64_t tsc)
{
	if (!have)
		return tsc;
	uint64_t quot = tsc >> shift;
	uint64_t rem = tsc & ((1ull << shift) - 1);
	return zero + quot * mult + ((rem * mult) >> shift);
}

/* A PERF_RECORD_SAMPLE of a memory-sampling event (Intel PEBS mem-loads /
 * mem-stores: ADDR with WEIGHT or DATA_SRC in its sample_type) becomes a
 * struct hwt_dec_sample for the consumer (pebs.c); other samples are
 * ignored.  0, or a negative error that stops decoding. */
struct hwt_perf_record;
int hwt_dec_pebs_sample(struct hwt_decoder *d, const struct hwt_perf_record *rec);

#endif
