/* lib/perf/internal.h - helpers shared by the perf.data writer and reader. */
#ifndef HWT_LIB_PERF_INTERNAL_H
#define HWT_LIB_PERF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/perf_records.h"

/* Bytes of the sample_id trailer for a sample_type (at most 48). */
size_t hwt_perf_sample_id_size(uint64_t sample_type);
/* Encode sid (NULL: zeros) per sample_type into out (48 bytes room);
 * returns bytes written.  IDENTIFIER takes sid->identifier, or sid->id
 * when that is 0. */
size_t hwt_perf_sample_id_encode(uint8_t *out, uint64_t sample_type,
				 const struct hwt_perf_sample_id *sid);
/* Decode a trailer of hwt_perf_sample_id_size(sample_type) bytes. */
void hwt_perf_sample_id_decode(const uint8_t *in, uint64_t sample_type,
			       struct hwt_perf_sample_id *sid);

#endif
