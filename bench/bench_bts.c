/* bench/bench_bts.c - Intel BTS decoding speed of libhwt on a recording.
 *
 * usage: bench_bts FILE   (a perf.data of one process, -e intel_bts)
 *
 * Rebuilds the process image from the MMAP2 records, gathers each
 * thread's AUX data, then times decoding every stream with hwt/bts.h (the
 * branch view: kind of each branch) and printing each branch as
 * "tid<TAB>from<TAB>to<TAB>kind" into /dev/null, as `hwt script --branches
 * --format tsv` does.  Prints one line: "hwt-bts <MB/s> <trace bytes>
 * <branches>" (bench/bench_bts.sh puts it next to perf script).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwt/bts.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"
#include "hwt/process.h"
#include "out/out.h"

struct stream {
	uint32_t idx, tid;
	uint8_t *data;
	size_t size, cap;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_bts PERF.DATA\n");
		return 2;
	}
	char err[256];
	struct hwt_perf_reader *r;
	if (hwt_perf_reader_open(&r, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_bts: cannot read %s: %s\n", argv[1], err);
		return 1;
	}
	struct hwt_process *p = hwt_process_alloc(0);
	struct stream *v = NULL;
	size_t nv = 0;
	struct hwt_perf_record rec;
	while (hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_MMAP2) {
			const struct hwt_perf_rec_mmap2 *m = (const void *)rec.hdr;
			hwt_process_mmap(p, m->addr, m->len, m->pgoff, m->prot,
					 (const char *)(m + 1));
		} else if (rec.type == HWT_PERF_RECORD_AUXTRACE && rec.aux_data) {
			size_t i = 0;
			while (i < nv && v[i].idx != rec.aux_idx)
				i++;
			if (i == nv) {
				v = realloc(v, (nv + 1) * sizeof(*v));
				memset(&v[nv], 0, sizeof(v[nv]));
				v[nv].idx = rec.aux_idx;
				v[nv].tid = rec.sid.tid;
				nv++;
			}
			struct stream *s = &v[i];
			if (s->size + rec.aux_size > s->cap) {
				s->cap = 2 * (s->size + rec.aux_size);
				s->data = realloc(s->data, s->cap);
			}
			memcpy(s->data + s->size, rec.aux_data, rec.aux_size);
			s->size += rec.aux_size;
		}
	}
	const struct hwt_image *img = hwt_process_image(p, NULL);
	int fd = open("/dev/null", O_WRONLY);
	struct hwt_outbuf o;
	if (!img || fd < 0 || hwt_outbuf_init(&o, fd, 1 << 20)) {
		fprintf(stderr, "bench_bts: setup failed\n");
		return 1;
	}
	size_t bytes = 0, branches = 0;
	double t0 = now();
	for (size_t i = 0; i < nv; i++) {
		struct hwt_bts_config cfg;
		hwt_bts_config_init(&cfg);
		cfg.begin = v[i].data;
		cfg.end = v[i].data + v[i].size;
		struct hwt_bts_decoder *d = hwt_bts_alloc(&cfg, img);
		struct hwt_bts_branch br;
		int st;
		while ((st = hwt_bts_next(d, &br)) != HWT_ERR_EOS) {
			if (st < 0)
				continue;
			hwt_out_branch_tsv(&o, v[i].tid, br.from, br.to, br.kind);
			branches++;
		}
		hwt_bts_free(d);
		bytes += v[i].size;
	}
	hwt_outbuf_flush(&o);
	double t = now() - t0;
	hwt_outbuf_fini(&o);
	close(fd);
	printf("hwt-bts %.1f %zu %zu\n", (double)bytes / 1e6 / (t > 0 ? t : 1e-9), bytes, branches);
	for (size_t i = 0; i < nv; i++)
		free(v[i].data);
	free(v);
	hwt_process_free(p);
	hwt_perf_reader_free(r);
	return 0;
}
