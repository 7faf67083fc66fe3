/* fuzz/fuzz_perf_pipe.c - libFuzzer target for the pipe-mode perf.data reader.
 *
 * The input is a pipe-mode stream's records (a 16-byte pipe header is put
 * in front unless the input already starts with PERFILE2, so a file-mode
 * file exercises the whole-read path of a pipe).  It is read twice: from
 * memory (an exact-size copy, so ASan sees any read past the end) and
 * through a real pipe with _open_fd (the incremental, buffered path).
 * Both must accept or refuse it alike and hand out the same records
 * (type, size, offset, payload size and bytes, sample id) and end alike;
 * every pointer handed out must be readable, offsets must strictly grow,
 * iteration must terminate, and an error must come with a message.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/perf_data.h"

#include "fuzz.h"

#define MAX_RECS 4096

struct rec_sum {
	uint32_t type, size;
	uint64_t off, aux_size, sum;
	int attr_index;
	struct hwt_perf_sample_id sid;
};

static uint64_t touch(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0;
	for (size_t i = 0; i < n; i++)
		h = h * 31 + b[i];
	return h;
}

/* Read everything; returns the number of records (at most MAX_RECS kept). */
static size_t drain(struct hwt_perf_reader *r, struct rec_sum *out, int *end, size_t limit)
{
	struct hwt_perf_record rec;
	size_t n = 0;
	uint64_t last = 0;
	int e;
	volatile uint64_t sink = 0;
	for (size_t i = 0; i < hwt_perf_reader_nr_attrs(r); i++)
		ENSURE(hwt_perf_reader_attr(r, i) != NULL);
	while ((e = hwt_perf_reader_next(r, &rec)) == 1) {
		ENSURE(n == 0 || rec.file_offset > last);
		ENSURE(rec.size >= sizeof(struct perf_event_header));
		last = rec.file_offset;
		uint64_t s = touch(rec.hdr, rec.size);
		if (rec.aux_data)
			s ^= touch(rec.aux_data, rec.aux_size);
		if (n < MAX_RECS) {
			struct rec_sum *o = &out[n];
			memset(o, 0, sizeof(*o));
			o->type = rec.type;
			o->size = rec.size;
			o->off = rec.file_offset;
			o->aux_size = rec.aux_size;
			o->sum = s;
			o->attr_index = rec.attr_index;
			o->sid = rec.sid;
		}
		ENSURE(++n <= limit);
		/* what the records defined so far is readable */
		for (size_t i = 0; i < hwt_perf_reader_nr_attrs(r); i++) {
			const struct hwt_perf_attr_info *a = hwt_perf_reader_attr(r, i);
			ENSURE(a != NULL);
			sink ^= touch(a->ids, a->nr_ids * sizeof(uint64_t));
			if (a->name)
				sink ^= touch(a->name, strlen(a->name));
		}
	}
	ENSURE(e <= 0);
	ENSURE(e == 0 || hwt_perf_reader_errmsg(r)[0]);
	for (int f = 0; f < 32; f++) {
		size_t fs = 0;
		const void *p = hwt_perf_reader_feature(r, f, &fs);
		if (p)
			sink ^= touch(p, fs);
		const char *s = hwt_perf_reader_feature_string(r, f);
		if (s)
			sink ^= touch(s, strlen(s));
	}
	const char *cmd = hwt_perf_reader_cmdline(r);
	if (cmd)
		sink ^= touch(cmd, strlen(cmd));
	*end = e;
	return n;
}

static struct rec_sum mem_recs[MAX_RECS], pipe_recs[MAX_RECS];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		signal(SIGPIPE, SIG_IGN);
		init = 1;
	}
	if (size > 60000)
		return 0; /* the pipe is filled before it is read */
	int raw = size >= 8 && !memcmp(data, "PERFILE2", 8);
	size_t n = size + (raw ? 0 : 16);
	uint8_t *in = malloc(n ? n : 1);
	if (!in)
		return 0;
	if (!raw) {
		uint64_t h[2] = {HWT_PERF_MAGIC2, 16};
		memcpy(in, h, 16);
	}
	memcpy(in + (raw ? 0 : 16), data, size);

	struct hwt_perf_reader *r = NULL;
	char err[256] = "";
	int end_m = 0, end_p = 0;
	size_t nm = 0, np = 0;
	int oe_m = hwt_perf_reader_open_mem(&r, in, n, err, sizeof(err));
	if (!oe_m) {
		nm = drain(r, mem_recs, &end_m, n);
		hwt_perf_reader_free(r);
	} else {
		ENSURE(r == NULL && err[0]);
	}

	int fds[2];
	if (pipe(fds)) {
		free(in);
		return 0;
	}
	ENSURE(write(fds[1], in, n) == (ssize_t)n);
	close(fds[1]);
	r = NULL;
	err[0] = 0;
	int oe_p = hwt_perf_reader_open_fd(&r, fds[0], err, sizeof(err));
	if (!oe_p) {
		np = drain(r, pipe_recs, &end_p, n);
		hwt_perf_reader_free(r);
	} else {
		ENSURE(r == NULL && err[0]);
	}
	close(fds[0]);

	ENSURE(oe_m == oe_p);
	ENSURE(nm == np);
	ENSURE(end_m == end_p);
	for (size_t i = 0; i < nm && i < MAX_RECS; i++)
		ENSURE(!memcmp(&mem_recs[i], &pipe_recs[i], sizeof(mem_recs[i])));
	free(in);
	return 0;
}
