/* fuzz/fuzz_perf_reader.c - libFuzzer target for the perf.data reader.
 *
 * The input is a perf.data file.  The reader must accept or refuse it
 * without crashing; when it accepts, every attr, feature and record it
 * hands out must lie inside the input (ASan checks the reads: the input is
 * copied into an exact-size allocation), record iteration must terminate,
 * and offsets must strictly grow.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/perf_data.h"

#include "fuzz.h"

static void touch(const void *p, size_t n, volatile uint8_t *sink)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i += 64)
		*sink ^= b[i];
	if (n)
		*sink ^= b[n - 1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	volatile uint8_t sink = 0;
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct hwt_perf_reader *r = NULL;
	char err[256];
	if (hwt_perf_reader_open_mem(&r, copy, size, err, sizeof(err)) == 0) {
		ENSURE(r != NULL);
		for (size_t i = 0; i < hwt_perf_reader_nr_attrs(r); i++) {
			const struct hwt_perf_attr_info *a = hwt_perf_reader_attr(r, i);
			ENSURE(a != NULL);
			touch(a->ids, a->nr_ids * sizeof(uint64_t), &sink);
			if (a->name)
				touch(a->name, strlen(a->name), &sink);
		}
		for (int f = 0; f < 32; f++) {
			size_t fs = 0;
			const void *p = hwt_perf_reader_feature(r, f, &fs);
			if (p)
				touch(p, fs, &sink);
			const char *s = hwt_perf_reader_feature_string(r, f);
			if (s)
				touch(s, strlen(s), &sink);
		}
		const char *cmd = hwt_perf_reader_cmdline(r);
		if (cmd)
			touch(cmd, strlen(cmd), &sink);
		struct hwt_perf_record rec;
		uint64_t last = 0;
		size_t n = 0;
		int ret;
		while ((ret = hwt_perf_reader_next(r, &rec)) == 1) {
			ENSURE(n == 0 || rec.file_offset > last);
			ENSURE(rec.size >= sizeof(struct perf_event_header));
			touch(rec.hdr, rec.size, &sink);
			if (rec.aux_data)
				touch(rec.aux_data, rec.aux_size, &sink);
			last = rec.file_offset;
			ENSURE(++n <= size);
		}
		ENSURE(ret == 0 || ret < 0);
		hwt_perf_reader_free(r);
	} else {
		ENSURE(r == NULL);
	}
	free(copy);
	return 0;
}
