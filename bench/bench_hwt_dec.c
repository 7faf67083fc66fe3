/* bench/bench_hwt_dec.c - the recording decoder (hwt/decode.h) on a
 * perf.data with a consumer that only counts taken branches (through the
 * branches callback): the decode itself, on -j N threads.
 *
 * usage: bench_hwt_dec FILE [JOBS [no-batch]]
 * prints "dec JOBS BRANCHES WALL_SECONDS CPU_SECONDS MAIN_THREAD_CPU_SECONDS"; no-batch: block by
 * block (HWT_DECODER_NO_BATCH), not in batches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "hwt/decode.h"

static void count(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_branch *br, size_t n,
		  const struct hwt_image *img)
{
	(void)t;
	(void)br;
	(void)img;
	*(uint64_t *)arg += n;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_hwt_dec FILE [JOBS [no-batch]]\n");
		return 2;
	}
	unsigned jobs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1;
	uint64_t n = 0;
	struct hwt_decode_consumer c = {.size = sizeof(c), .arg = &n, .branches = count};
	char err[256] = "";
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.path = argv[1];
	cfg.consumer = &c;
	cfg.jobs = jobs;
	if (argc > 3 && !strcmp(argv[3], "no-batch"))
		cfg.flags |= HWT_DECODER_NO_BATCH;
	cfg.errbuf = err;
	cfg.errlen = sizeof(err);
	struct hwt_decoder *d;
	double t0 = now();
	if (hwt_decoder_alloc(&d, &cfg)) {
		fprintf(stderr, "bench_hwt_dec: cannot decode %s: %s\n", argv[1], err);
		return 1;
	}
	int rc = hwt_decoder_run(d);
	hwt_decoder_free(d);
	double wall = now() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	getrusage(RUSAGE_THREAD, &ru);
	double main_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("dec %u %llu %.3f %.3f %.3f\n", jobs, (unsigned long long)n, wall, cpu, main_cpu);
	return rc < 0 ? 1 : 0;
}
