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

#include "bench_rec.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* libipt's image: a section per file mapping, through its section cache */
struct ipt_img {
	struct pt_image *img;
	struct pt_image_section_cache *isc;
};

static void map_file(void *arg, const char *path, uint64_t pgoff, uint64_t len, uint64_t addr)
{
	struct ipt_img *ii = arg;
	int isid = pt_iscache_add_file(ii->isc, path, pgoff, len, addr);
	if (isid >= 0)
		pt_image_add_cached(ii->img, ii->isc, isid, NULL);
}

static void branches(struct bench_q *q, struct pt_config *cfg, struct pt_image *img)
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
static void time_blocks(struct bench_q *qs, size_t nq, struct pt_config *cfg, struct pt_image *img)
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
	struct ipt_img ii = {pt_image_alloc(NULL), pt_iscache_alloc(NULL)};
	struct bench_rec br;
	int ret = 0;
	if (bench_rec_load(&br, "bench_flow", argv[2], map_file, &ii)) {
		ret = 1;
	} else {
		if (br.intel) {
			cfg.cpu.vendor = pcv_intel;
			cfg.cpu.family = (uint16_t)br.cpu[0];
			cfg.cpu.model = (uint8_t)br.cpu[1];
			cfg.cpu.stepping = (uint8_t)br.cpu[2];
			pt_cpu_errata(&cfg.errata, &cfg.cpu);
		}
		if (!strcmp(argv[1], "branches")) {
			for (size_t i = 0; i < br.nq; i++)
				branches(&br.qs[i], &cfg, ii.img);
		} else {
			time_blocks(br.qs, br.nq, &cfg, ii.img);
		}
	}
	bench_rec_free(&br);
	pt_image_free(ii.img);
	pt_iscache_free(ii.isc);
	/* Flush before returning: in a sanitizer build, a leak report ends
	 * the process from an exit handler, before stdio would flush (a
	 * reader of a pipe got a truncated oracle that way). */
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bench_flow: cannot write the output\n");
		ret = 1;
	}
	return ret;
}
