/* fuzz/fuzz_etm_dump.c - the ETMv4 packet listing (hwt/etm.h, OpenCSD)
 * on arbitrary bytes: the first byte picks frames or raw and the trace ID,
 * the rest is trace.  Invariants: no crash, no sanitizer report, every
 * packet's offset lies inside the buffer and its text is non-empty. */
#include <string.h>

#include "fuzz.h"
#include "hwt/etm.h"

struct seen {
	size_t size;
	unsigned n;
};

static int on_packet(void *arg, uint64_t offset, uint8_t id, const char *text)
{
	struct seen *s = arg;
	ENSURE(offset <= s->size);
	ENSURE(text && text[0]);
	(void)id;
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct hwt_etm_source src[2];
	hwt_etm_source_default(&src[0], (uint8_t)(0x10 + ((data[0] >> 1) & 7) * 2));
	hwt_etm_source_default(&src[1], 0x12);
	struct hwt_etm_dump_config c = {
	    .size = sizeof(c), .formatted = data[0] & 1, .src = src, .nsrc = (data[0] & 1) ? 2 : 1};
	struct seen s = {.size = size - 1};
	ENSURE(hwt_etm_dump(&c, data + 1, size - 1, on_packet, &s) == 0);
	return 0;
}
