/* fuzz/fuzz_bts.c - libFuzzer target for the Intel BTS decoder.
 *
 * Input layout: byte 0 selects the options (bit 0: walk instructions,
 * bit 1: continue a previous buffer at the code's start); bytes 1-2 give
 * the code length N (little endian, at most 512); the next N bytes are
 * code mapped at 0x1000; the rest is the trace (24-byte records, or
 * anything).  Checked: no crash, no sanitizer report, termination (each
 * call consumes a record, or fails a walk and returns that record next),
 * walks that are straight-line code ending at the branch, offsets inside
 * the trace.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/bts.h"

#include "fuzz.h"

#define CODE_MAX 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	uint8_t sel = data[0];
	size_t ncode = (size_t)data[1] | (size_t)data[2] << 8;
	if (ncode > CODE_MAX)
		ncode = CODE_MAX;
	if (ncode > size - 3)
		ncode = size - 3;
	size_t ntrace = size - 3 - ncode;
	/* exact-size copies so ASan sees any overread */
	uint8_t *trace = malloc(ntrace ? ntrace : 1);
	uint8_t *code = malloc(ncode ? ncode : 1);
	memcpy(trace, data + 3 + ncode, ntrace);
	memcpy(code, data + 3, ncode);
	struct hwt_image *img = hwt_image_alloc();
	if (img && ncode)
		hwt_image_add_mem(img, code, ncode, 0x1000);
	struct hwt_bts_config cfg;
	hwt_bts_config_init(&cfg);
	cfg.begin = trace;
	cfg.end = trace + ntrace;
	cfg.offset = 4096;
	cfg.walk = sel & 1;
	cfg.have_prev = (sel & 2) != 0;
	cfg.prev_to = 0x1000;
	struct hwt_bts_decoder *d = img ? hwt_bts_alloc(&cfg, img) : NULL;
	if (d) {
		size_t nrec = ntrace / HWT_BTS_RECORD_SIZE + 1, steps = 0;
		int r = hwt_bts_sync_forward(d);
		while (r != HWT_ERR_EOS) {
			struct hwt_bts_branch br;
			r = hwt_bts_next(d, &br);
			ENSURE(++steps <= 2 * nrec + 1);
			uint64_t off;
			ENSURE(hwt_bts_offset(d, &off) == 0);
			ENSURE(off == 0 || (off >= 4096 && off < 4096 + ntrace));
			if (r < 0)
				continue;
			ENSURE(br.offset + HWT_BTS_RECORD_SIZE <= 4096 + ntrace);
			if (!cfg.walk) {
				ENSURE(br.ninsn == 0);
				continue;
			}
			ENSURE(br.ninsn >= 1 && br.ninsn <= HWT_BTS_MAX_WALK + 1);
			ENSURE(br.ips[br.ninsn - 1] == br.from);
			for (uint32_t k = 1; k < br.ninsn; k++)
				ENSURE(br.ips[k] == br.ips[k - 1] + br.sizes[k - 1]);
		}
		hwt_bts_free(d);
	}
	hwt_image_free(img);
	free(trace);
	free(code);
	return 0;
}
