/* fuzz/fuzz_spe.c - libFuzzer target for the Arm SPE decoders (hwt/spe.h).
 *
 * The input is the trace.  Checked: no crash, no sanitizer report,
 * termination (every call consumes at least one byte, so at most 2 * size
 * + 2 calls), offsets inside the trace, records inside the trace, and the
 * packet decoder and printer on every offset (packet sizes within the
 * bytes given, printed text NUL-terminated within the buffer).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/spe.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *trace = malloc(size ? size : 1); /* exact size: ASan sees overreads */
	memcpy(trace, data, size);
	for (size_t i = 0; i < size; i++) {
		struct hwt_spe_packet p;
		int k = hwt_spe_pkt_decode(trace + i, size - i, &p);
		if (k < 0)
			continue;
		ENSURE(k == p.size && (size_t)k <= size - i && k >= 1 && k <= 10);
		char buf[64];
		int n = hwt_spe_pkt_print(&p, buf, sizeof(buf));
		ENSURE(n >= 0 && strlen(buf) < sizeof(buf));
	}
	struct hwt_spe_config cfg;
	hwt_spe_config_init(&cfg);
	cfg.begin = trace;
	cfg.end = trace + size;
	cfg.offset = 4096;
	struct hwt_spe_decoder *d = hwt_spe_alloc(&cfg);
	ENSURE(d);
	size_t steps = 0;
	int r = size && (data[0] & 1) ? hwt_spe_sync_forward(d) : 0;
	while (r != HWT_ERR_EOS) {
		struct hwt_spe_record rec;
		r = hwt_spe_next(d, &rec);
		ENSURE(++steps <= 2 * size + 2);
		uint64_t off;
		ENSURE(hwt_spe_offset(d, &off) == 0);
		ENSURE(off >= 4096 && off <= 4096 + size);
		if (r < 0) {
			ENSURE(r == HWT_ERR_EOS || r == HWT_ERR_BAD_PACKET);
			continue;
		}
		ENSURE(rec.offset >= 4096 && rec.offset + rec.size <= 4096 + size && rec.size >= 1);
		ENSURE(hwt_spe_op_name(&rec)[0]);
		(void)hwt_spe_data_src(&rec);
	}
	hwt_spe_free(d);
	free(trace);
	return 0;
}
