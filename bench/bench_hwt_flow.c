/* bench/bench_hwt_flow.c - the hwt side of the flow-decode benchmark.
 *
 *   bench_hwt_flow FILE.data   decode every AUXTRACE queue of FILE with
 *                              hwt's block decoder over an image built
 *                              from the recording's MMAP/MMAP2 records;
 *                              prints "hwt-blk BYTES SECONDS BLOCKS INSNS"
 *
 * The same work as bench_flow's libipt side, in the same way: each
 * queue's chunks concatenated in memory, one image for every mapping, a
 * decode loop that takes events and counts blocks and instructions, and
 * syncs forward after an error.  Time is process CPU time of the decode
 * loop only.  BLOCKS differ from libipt's (hwt's blocks are not cut at
 * the same places); INSNS must agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwt/image.h"
#include "hwt/perf_data.h"
#include "hwt/pt_config.h"
#include "hwt/pt_flow.h"

struct q {
	uint32_t idx;
	uint8_t *d;
	size_t n, cap;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int add_queue_data(struct q **qs, size_t *nq, uint32_t idx, const void *data, size_t n)
{
	struct q *q = NULL;
	for (size_t i = 0; i < *nq; i++)
		if ((*qs)[i].idx == idx)
			q = &(*qs)[i];
	if (!q) {
		struct q *nv = realloc(*qs, (*nq + 1) * sizeof(**qs));
		if (!nv)
			return -1;
		*qs = nv;
		q = &(*qs)[(*nq)++];
		memset(q, 0, sizeof(*q));
		q->idx = idx;
	}
	if (q->n + n > q->cap) {
		size_t cap = (q->n + n) * 2;
		uint8_t *nd = realloc(q->d, cap);
		if (!nd)
			return -1;
		q->d = nd;
		q->cap = cap;
	}
	memcpy(q->d + q->n, data, n);
	q->n += n;
	return 0;
}

static int load(const char *path, struct hwt_image *img, struct q **qs, size_t *nq,
		struct hwt_pt_config *cfg)
{
	char eb[256];
	struct hwt_perf_reader *r;
	if (hwt_perf_reader_open(&r, path, eb, sizeof(eb))) {
		fprintf(stderr, "bench_hwt_flow: %s: %s\n", path, eb);
		return -1;
	}
	const char *cpuid = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID);
	unsigned fam, model, step = 0;
	if (cpuid && !strncmp(cpuid, "GenuineIntel,", 13) &&
	    sscanf(cpuid + 13, "%u,%u,%u", &fam, &model, &step) >= 2) {
		cfg->cpu.vendor = HWT_CPU_INTEL;
		cfg->cpu.family = (uint16_t)fam;
		cfg->cpu.model = (uint8_t)model;
		cfg->cpu.stepping = (uint8_t)step;
		hwt_pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	struct hwt_perf_record rec;
	int err = 0;
	while (!err && hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_MMAP2 || rec.type == PERF_RECORD_MMAP) {
			size_t fix = rec.type == PERF_RECORD_MMAP2
					 ? sizeof(struct hwt_perf_rec_mmap2)
					 : sizeof(struct hwt_perf_rec_mmap);
			const struct hwt_perf_rec_mmap *m = (const void *)rec.hdr;
			const char *p = (const char *)rec.hdr + fix;
			if (rec.size <= fix || !memchr(p, 0, rec.size - fix) || p[0] != '/')
				continue;
			hwt_image_add_file(img, p, m->pgoff, m->len, m->addr);
		} else if (rec.type == HWT_PERF_RECORD_AUXTRACE && rec.aux_data) {
			err = add_queue_data(qs, nq, rec.aux_idx, rec.aux_data, rec.aux_size);
		}
	}
	hwt_perf_reader_free(r);
	return err;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_hwt_flow FILE.data\n");
		return 2;
	}
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	struct hwt_image *img = hwt_image_alloc();
	struct hwt_pt_cache *cache = hwt_pt_cache_alloc();
	struct q *qs = NULL;
	size_t nq = 0;
	if (!img || !cache || load(argv[1], img, &qs, &nq, &cfg))
		return 1;
	struct hwt_pt_flow_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	opt.query.size = sizeof(opt.query);
	opt.cache = cache;
	uint64_t bytes = 0, blocks = 0, insns = 0;
	double t0 = now();
	for (size_t i = 0; i < nq; i++) {
		cfg.buf.begin = qs[i].d;
		cfg.buf.end = qs[i].d + qs[i].n;
		bytes += qs[i].n;
		struct hwt_pt_block_decoder *d = hwt_pt_block_alloc(&cfg, img, &opt);
		if (!d)
			return 1;
		for (;;) {
			int st = hwt_pt_block_sync_forward(d);
			if (st < 0)
				break;
			for (;;) {
				while (st >= 0 && (st & HWT_PTS_EVENT_PENDING)) {
					struct hwt_pt_event ev;
					st = hwt_pt_block_event(d, &ev);
				}
				if (st < 0 || (st & HWT_PTS_EOS))
					break;
				struct hwt_pt_block b;
				st = hwt_pt_block_next(d, &b);
				if (st < 0)
					break;
				blocks++;
				insns += b.ninsn;
			}
		}
		hwt_pt_block_free(d);
	}
	double t = now() - t0;
	printf("hwt-blk %llu %.6f %llu %llu\n", (unsigned long long)bytes, t,
	       (unsigned long long)blocks, (unsigned long long)insns);
	for (size_t i = 0; i < nq; i++)
		free(qs[i].d);
	free(qs);
	hwt_pt_cache_free(cache);
	hwt_image_free(img);
	return 0;
}
