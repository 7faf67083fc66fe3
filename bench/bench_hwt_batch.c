/* bench/bench_hwt_batch.c - hwt's batch decoder (hwt_pt_block_batch) on
 * a recording: the flow-decode benchmark's hwt side, and an oracle
 * printer for tests.
 *
 *   bench_hwt_batch time FILE.data      decode every AUXTRACE queue with
 *                                       batches of 4096 entries; prints
 *                                       "hwt-batch BYTES SECONDS BRANCHES INSNS"
 *   bench_hwt_batch branches FILE.data  the taken branches, as bench_flow
 *                                       branches prints libipt's:
 *                                       "tid<TAB>from<TAB>to", asynchronous
 *                                       ones with "<TAB>async"
 *   bench_hwt_batch load FILE.data      only load (the baseline for counting
 *                                       the decode's instructions with
 *                                       valgrind --tool=callgrind)
 *   bench_hwt_batch hash FILE.data      "hwt-hash ENTRIES BRANCHES INSNS HASH":
 *                                       a 64-bit hash (FNV-1a's step by word) of every entry (all
 *                                       fields but the time; an event entry
 *                                       with its event, times zeroed), to
 *                                       compare two builds of the library on
 *                                       a large recording
 * Options (before the mode): --no-path-cache, --time (ask for the time
 * of each entry; without it the decoder tracks no time:
 * hwt_pt_query_options.no_time).
 *
 * Loading is bench_rec.h's, as for bench_hwt_flow and bench_flow: each
 * queue's chunks concatenated in memory, one image for every mapping,
 * one decode cache for all queues.  SECONDS is process CPU time of the
 * decode loop only.  INSNS counts the instructions of every entry but
 * errors (the block decoder's count in bench_hwt_flow; libipt's in
 * bench_flow time).
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

/* FNV-1a's step a 64-bit word at a time (n bytes, a multiple of 8). */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, (const char *)p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

/* An entry and its event, without times, into h. */
static uint64_t hash_entry(uint64_t h, const struct hwt_pt_entry *e, const struct hwt_pt_event *evs)
{
	uint64_t w[6] = {e->type | (uint64_t)e->iclass << 8 | (uint64_t)e->mode << 16,
			 (uint64_t)(uint32_t)e->err,
			 e->ninsn,
			 e->from,
			 e->to,
			 0};
	if (e->type == HWT_PTE_EVENT) {
		const struct hwt_pt_event *ev = &evs[e->index];
		uint64_t x[2] = {ev->type | (uint64_t)ev->ip_suppressed << 8 |
				     (uint64_t)ev->status_update << 16 |
				     (uint64_t)ev->ip_hidden << 24,
				 ev->ip};
		w[5] = fnv(fnv(0xcbf29ce484222325ull, x, sizeof(x)), &ev->u, sizeof(ev->u));
	}
	return fnv(h, w, sizeof(w));
}

/* A batch's n entries into h (and their count into *nent); out of the
 * timed loop. */
static __attribute__((noinline)) uint64_t hash_batch(uint64_t h, const struct hwt_pt_entry *ent,
						     size_t n, const struct hwt_pt_event *evs,
						     uint64_t *nent)
{
	for (size_t k = 0; k < n; k++)
		h = hash_entry(h, &ent[k], evs);
	*nent += n;
	return h;
}

static void map_file(void *arg, const char *path, uint64_t pgoff, uint64_t len, uint64_t addr)
{
	hwt_image_add_file(arg, path, pgoff, len, addr);
}

#define CAP 4096
#define EVCAP 256

int main(int argc, char **argv)
{
	int no_paths = 0, want_time = 0, a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--no-path-cache"))
			no_paths = 1;
		else if (!strcmp(argv[a], "--time"))
			want_time = 1;
		else
			break;
	}
	if (argc - a != 2 || (strcmp(argv[a], "time") && strcmp(argv[a], "branches") &&
			      strcmp(argv[a], "load") && strcmp(argv[a], "hash"))) {
		fprintf(stderr,
			"usage: bench_hwt_batch [--no-path-cache] [--time] time|branches|load|hash "
			"FILE.data\n");
		return 2;
	}
	int print = !strcmp(argv[a], "branches"), hash = !strcmp(argv[a], "hash");
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	struct hwt_image *img = hwt_image_alloc();
	struct hwt_pt_cache *cache = hwt_pt_cache_alloc();
	struct hwt_pt_entry *ent = malloc(CAP * sizeof(*ent));
	struct hwt_pt_event *evs = malloc(EVCAP * sizeof(*evs));
	struct bench_rec br;
	if (!img || !cache || !ent || !evs ||
	    bench_rec_load(&br, "bench_hwt_batch", argv[a + 1], map_file, img))
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
	opt.no_path_cache = (uint8_t)no_paths;
#ifndef BENCH_NO_NO_TIME			 /* (for a library without the option) */
	opt.query.no_time = (uint8_t)!want_time; /* no time tracking */
#endif
	struct hwt_pt_batch b;
	hwt_pt_batch_init(&b, ent, CAP, evs, EVCAP);
	b.want_time = (uint8_t)want_time;
	uint64_t bytes = 0, branches = 0, insns = 0, nent = 0, h = 0xcbf29ce484222325ull;
	int ret = 0;
	double t0 = now();
	for (size_t i = 0; i < br.nq && strcmp(argv[a], "load"); i++) {
		cfg.buf.begin = br.qs[i].d;
		cfg.buf.end = br.qs[i].d + br.qs[i].n;
		bytes += br.qs[i].n;
		struct hwt_pt_block_decoder *d = hwt_pt_block_alloc(&cfg, img, &opt);
		if (!d)
			return 1;
		int st;
		do {
			st = hwt_pt_block_batch(d, &b);
			for (size_t k = 0; k < b.n; k++) {
				const struct hwt_pt_entry *e = &ent[k];
				if (e->type != HWT_PTE_ERROR)
					insns += e->ninsn;
				if (e->type == HWT_PTE_BRANCH) {
					branches++;
					if (print)
						printf("%u\t0x%llx\t0x%llx\n", br.qs[i].tid,
						       (unsigned long long)e->from,
						       (unsigned long long)e->to);
				} else if (print && e->type == HWT_PTE_EVENT) {
					const struct hwt_pt_event *ev = &evs[e->index];
					if (ev->type == HWT_EV_ASYNC_BRANCH && !ev->ip_suppressed)
						printf("%u\t0x%llx\t0x%llx\tasync\n", br.qs[i].tid,
						       (unsigned long long)ev->u.async_branch.from,
						       (unsigned long long)ev->ip);
				}
			}
			if (hash)
				h = hash_batch(h, ent, b.n, evs, &nent);
		} while (st > 0);
		if (st < 0) {
			fprintf(stderr, "bench_hwt_batch: %s\n", hwt_errstr(st));
			ret = 1;
		}
		hwt_pt_block_free(d);
	}
	double t = now() - t0;
	if (hash)
		printf("hwt-hash %llu %llu %llu %016llx\n", (unsigned long long)nent,
		       (unsigned long long)branches, (unsigned long long)insns,
		       (unsigned long long)h);
	else if (!print)
		printf("hwt-batch %llu %.6f %llu %llu\n", (unsigned long long)bytes, t,
		       (unsigned long long)branches, (unsigned long long)insns);
	bench_rec_free(&br);
	hwt_pt_cache_free(cache);
	hwt_image_free(img);
	free(ent);
	free(evs);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "bench_hwt_batch: cannot write the output\n");
		ret = 1;
	}
	return ret;
}
