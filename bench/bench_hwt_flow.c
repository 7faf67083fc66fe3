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
#include "hwt/pt_config.h"
#include "hwt/pt_flow.h"

#include "bench_rec.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void map_file(void *arg, const char *path, uint64_t pgoff, uint64_t len, uint64_t addr)
{
	hwt_image_add_file(arg, path, pgoff, len, addr);
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
	struct bench_rec br;
	if (!img || !cache || bench_rec_load(&br, "bench_hwt_flow", argv[1], map_file, img))
		return 1;
	if (br.intel) {
		cfg.cpu.vendor = HWT_CPU_INTEL;
		cfg.cpu.family = (uint16_t)br.cpu[0];
		cfg.cpu.model = (uint8_t)br.cpu[1];
		cfg.cpu.stepping = (uint8_t)br.cpu[2];
		hwt_pt_cpu_errata(&cfg.errata, &cfg.cpu);
	}
	struct hwt_pt_flow_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	opt.query.size = sizeof(opt.query);
	opt.cache = cache;
	uint64_t bytes = 0, blocks = 0, insns = 0;
	double t0 = now();
	for (size_t i = 0; i < br.nq; i++) {
		cfg.buf.begin = br.qs[i].d;
		cfg.buf.end = br.qs[i].d + br.qs[i].n;
		bytes += br.qs[i].n;
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
	bench_rec_free(&br);
	hwt_pt_cache_free(cache);
	hwt_image_free(img);
	return 0;
}
