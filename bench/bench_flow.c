/* bench/bench_flow.c - the libipt side of the flow-decode benchmark, and
 * a libipt oracle for tests.
 *
 *   bench_flow time FILE.data   decode every AUXTRACE queue of FILE with
 *                               libipt's block decoder (pt_blk_*), over an
 *                               image built with its section cache from the
 *                               recording's MMAP/MMAP2 records; prints
 *                               "libipt-blk BYTES SECONDS BLOCKS INSNS"
 *   bench_flow branches FILE    libipt's instruction decoder: taken
 *                               branches as "tid<TAB>from<TAB>to" (what
 *                               hwt script --branches --format tsv gives)
 *
 * Time is process CPU time (steady on a busy machine).  Each queue's
 * chunks are concatenated in memory (a bench may), one image
 * holds the mappings of every process (single-process recordings).  The
 * time covers decoding only (not reading the file).
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwt/perf_data.h"

struct q {
	uint32_t idx, tid;
	uint8_t *d;
	size_t n, cap;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int load(const char *path, struct pt_image *img, struct pt_image_section_cache *isc,
		struct q **qs, size_t *nq, struct pt_config *cfg)
{
	char eb[256];
	struct hwt_perf_reader *r;
	if (hwt_perf_reader_open(&r, path, eb, sizeof(eb))) {
		fprintf(stderr, "bench_flow: %s: %s\n", path, eb);
		return -1;
	}
	const char *cpuid = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID);
	unsigned fam, model, step = 0;
	if (cpuid && !strncmp(cpuid, "GenuineIntel,", 13) &&
	    sscanf(cpuid + 13, "%u,%u,%u", &fam, &model, &step) >= 2) {
		cfg->cpu.vendor = pcv_intel;
		cfg->cpu.family = (uint16_t)fam;
		cfg->cpu.model = (uint8_t)model;
		cfg->cpu.stepping = (uint8_t)step;
		pt_cpu_errata(&cfg->errata, &cfg->cpu);
	}
	struct hwt_perf_record rec;
	while (hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_MMAP2 || rec.type == PERF_RECORD_MMAP) {
			int v2 = rec.type == PERF_RECORD_MMAP2;
			size_t fix = v2 ? sizeof(struct hwt_perf_rec_mmap2)
					: sizeof(struct hwt_perf_rec_mmap);
			const struct hwt_perf_rec_mmap *m = (const void *)rec.hdr;
			const char *p = (const char *)rec.hdr + fix;
			if (rec.size <= fix || !memchr(p, 0, rec.size - fix) || p[0] != '/')
				continue;
			int isid = pt_iscache_add_file(isc, p, m->pgoff, m->len, m->addr);
			if (isid >= 0)
				pt_image_add_cached(img, isc, isid, NULL);
		} else if (rec.type == HWT_PERF_RECORD_AUXTRACE && rec.aux_data) {
			struct q *q = NULL;
			for (size_t i = 0; i < *nq; i++)
				if ((*qs)[i].idx == rec.aux_idx)
					q = &(*qs)[i];
			if (!q) {
				*qs = realloc(*qs, (*nq + 1) * sizeof(**qs));
				q = &(*qs)[(*nq)++];
				memset(q, 0, sizeof(*q));
				q->idx = rec.aux_idx;
				q->tid = rec.sid.tid;
			}
			if (q->n + rec.aux_size > q->cap) {
				q->cap = (q->n + rec.aux_size) * 2;
				q->d = realloc(q->d, q->cap);
			}
			memcpy(q->d + q->n, rec.aux_data, rec.aux_size);
			q->n += rec.aux_size;
		}
	}
	hwt_perf_reader_free(r);
	return 0;
}

static void branches(struct q *q, struct pt_config *cfg, struct pt_image *img)
{
	cfg->begin = q->d;
	cfg->end = q->d + q->n;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(cfg);
	pt_insn_set_image(d, img);
	int have_prev = 0;
	struct pt_insn prev;
	memset(&prev, 0, sizeof(prev));
	for (;;) {
		int st = pt_insn_sync_forward(d);
		if (st < 0)
			break;
		have_prev = 0;
		for (;;) {
			while (st & pts_event_pending) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof(ev));
				if (st < 0)
					break;
				if (ev.type == ptev_async_branch && !ev.ip_suppressed)
					printf("%u\t0x%llx\t0x%llx\tasync\n", q->tid,
					       (unsigned long long)ev.variant.async_branch.from,
					       (unsigned long long)ev.variant.async_branch.to);
				if (ev.type != ptev_tick && ev.type != ptev_cbr &&
				    ev.type != ptev_mnt && ev.type != ptev_exec_mode &&
				    ev.type != ptev_pwre && ev.type != ptev_pwrx &&
				    ev.type != ptev_ptwrite)
					have_prev = 0;
			}
			if (st < 0 || (st & pts_eos))
				break;
			struct pt_insn in;
			st = pt_insn_next(d, &in, sizeof(in));
			if (st < 0)
				break;
			if (have_prev && prev.iclass != ptic_other && prev.iclass != ptic_ptwrite) {
				int taken =
				    prev.iclass != ptic_cond_jump || in.ip != prev.ip + prev.size;
				if (taken)
					printf("%u\t0x%llx\t0x%llx\n", q->tid,
					       (unsigned long long)prev.ip,
					       (unsigned long long)in.ip);
			}
			prev = in;
			have_prev = 1;
		}
	}
	pt_insn_free_decoder(d);
}

/* Every queue with libipt's block decoder: "libipt-blk BYTES SECONDS
 * BLOCKS INSNS". */
static void time_blocks(struct q *qs, size_t nq, struct pt_config *cfg, struct pt_image *img)
{
	uint64_t bytes = 0, blocks = 0, insns = 0;
	double t0 = now();
	for (size_t i = 0; i < nq; i++) {
		cfg->begin = qs[i].d;
		cfg->end = qs[i].d + qs[i].n;
		bytes += qs[i].n;
		struct pt_block_decoder *d = pt_blk_alloc_decoder(cfg);
		pt_blk_set_image(d, img);
		for (;;) {
			int st = pt_blk_sync_forward(d);
			if (st < 0)
				break;
			for (;;) {
				while (st & pts_event_pending) {
					struct pt_event ev;
					st = pt_blk_event(d, &ev, sizeof(ev));
					if (st < 0)
						break;
				}
				if (st < 0 || (st & pts_eos))
					break;
				struct pt_block b;
				st = pt_blk_next(d, &b, sizeof(b));
				if (st < 0)
					break;
				blocks++;
				insns += b.ninsn;
			}
		}
		pt_blk_free_decoder(d);
	}
	double t = now() - t0;
	printf("libipt-blk %llu %.6f %llu %llu\n", (unsigned long long)bytes, t,
	       (unsigned long long)blocks, (unsigned long long)insns);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench_flow time|branches FILE.data\n");
		return 2;
	}
	struct pt_config cfg;
	pt_config_init(&cfg);
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct pt_image *img = pt_image_alloc(NULL);
	struct q *qs = NULL;
	size_t nq = 0;
	int ret = 0;
	if (load(argv[2], img, isc, &qs, &nq, &cfg)) {
		ret = 1;
	} else if (!strcmp(argv[1], "branches")) {
		for (size_t i = 0; i < nq; i++)
			branches(&qs[i], &cfg, img);
	} else {
		time_blocks(qs, nq, &cfg, img);
	}
	for (size_t i = 0; i < nq; i++)
		free(qs[i].d);
	free(qs);
	pt_image_free(img);
	pt_iscache_free(isc);
	/* Flush before returning: in a sanitizer build, a leak report ends
	 * the process from an exit handler, before stdio would flush (a
	 * reader of a pipe got a truncated oracle that way). */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bench_flow: cannot write the output\n");
		ret = 1;
	}
	return ret;
}
