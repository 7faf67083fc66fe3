/* tests/e2e/script_mkdata.c - test helper for tests/e2e/script_*.sh: pack
 * raw per-thread Intel PT streams of the emulated unit (its raw=P debug
 * output, P.<tid> plus P.maps) into a per-thread perf.data, splitting each
 * stream into AUXTRACE chunks of a given size, so that "hwt script" can be
 * tested on a recording even without "hwt record".
 *
 * usage: script_mkdata OUT.data MAPS CHUNK TID[/PID]:FILE[:SPLITS]...
 * MAPS lines: "tid addr len pgoff path" (hex or decimal numbers).
 * TID/PID: the stream of thread TID of process PID (a COMM record says so),
 * so that several streams can share one process's mappings.
 * SPLITS: comma-separated stream offsets where a chunk must begin, on top
 * of the CHUNK-sized pieces (each chunk holds at most CHUNK bytes).  Chunks
 * are written like hwt record's: zero-padded to 8 bytes, the next chunk's
 * offset just past the previous one's data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hwt/perf_data.h"

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *d = malloc(sz > 0 ? (size_t)sz : 1);
	*n = d ? fread(d, 1, (size_t)sz, f) : 0;
	fclose(f);
	return d;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: script_mkdata OUT.data MAPS CHUNK TID:FILE...\n");
		return 2;
	}
	size_t chunk = strtoull(argv[3], NULL, 0);
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	if (!w || hwt_perf_writer_open(w, argv[1]))
		return 1;
	struct perf_event_attr a, sb;
	hwt_perf_attr_intel_pt(&a, 8, HWT_IPT_CFG_TSC | HWT_IPT_CFG_BRANCH);
	hwt_perf_attr_sideband(&sb, 0);
	uint64_t id1 = 1, id2 = 2;
	hwt_perf_writer_add_attr(w, &a, "intel_pt//u", &id1, 1);
	hwt_perf_writer_add_attr(w, &sb, "dummy:u", &id2, 1);
	hwt_perf_writer_add_pmu(w, "intel_pt", 8);
	struct hwt_perf_intel_pt_info info;
	hwt_perf_intel_pt_info_init(&info);
	info.pmu_type = 8;
	hwt_perf_writer_write_intel_pt_info(w, &info);
	FILE *m = fopen(argv[2], "r");
	if (!m)
		return 1;
	unsigned long long tid, addr, len, pgoff;
	char path[4096];
	int comm_done = 0;
	while (fscanf(m, "%lli %lli %lli %lli %4095s", &tid, &addr, &len, &pgoff, path) == 5) {
		struct hwt_perf_sample_id sid = {
		    .pid = (uint32_t)tid, .tid = (uint32_t)tid, .id = 2, .cpu = (uint32_t)-1};
		if (!comm_done++) {
			const char *b = strrchr(path, '/');
			hwt_perf_writer_write_comm(w, (uint32_t)tid, (uint32_t)tid,
						   b ? b + 1 : path, 1, &sid);
		}
		hwt_perf_writer_write_mmap2(w, (uint32_t)tid, (uint32_t)tid, addr, len, pgoff,
					    PROT_READ | PROT_EXEC, MAP_PRIVATE, path, 0, &sid);
	}
	fclose(m);
	for (int i = 4; i < argc; i++) {
		char *c = strchr(argv[i], ':');
		if (!c)
			return 2;
		*c = 0;
		char *e;
		uint32_t t = (uint32_t)strtoul(argv[i], &e, 0);
		if (*e == '/') {
			uint32_t pid = (uint32_t)strtoul(e + 1, NULL, 0);
			struct hwt_perf_sample_id sid = {
			    .pid = pid, .tid = t, .id = 2, .cpu = (uint32_t)-1};
			hwt_perf_writer_write_comm(w, pid, t, "thread", 0, &sid);
		}
		char *splits = strchr(c + 1, ':');
		if (splits)
			*splits++ = 0;
		size_t n;
		unsigned char *d = slurp(c + 1, &n);
		if (!d)
			return 1;
		for (size_t off = 0, k; off < n; off += k) {
			k = n - off < chunk ? n - off : chunk;
			for (const char *s = splits; s && *s;) { /* the nearest split */
				size_t at = strtoull(s, &e, 0);
				if (at > off && at - off < k)
					k = at - off;
				s = *e == ',' ? e + 1 : "";
			}
			struct hwt_perf_auxtrace_desc desc = {
			    .offset = off, .idx = (uint32_t)(i - 4), .tid = t, .cpu = (uint32_t)-1};
			hwt_perf_writer_write_auxtrace(w, &desc, d + off, k, NULL, 0);
		}
		free(d);
	}
	int err = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	return err ? 1 : 0;
}
