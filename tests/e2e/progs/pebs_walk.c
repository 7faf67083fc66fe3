/* tests/e2e/progs/pebs_walk.c - memory access patterns of known cache
 * behaviour for the emulated PEBS unit's model checks (tests/e2e/
 * pebs_record.sh):
 *   pebs_walk random N STEPS  loads at pseudo-random 64-byte lines of an N MiB
 *                             buffer (walk_random)
 *   pebs_walk small N REPS    sums an N KiB buffer REPS times (walk_small)
 * Prints the sum (so that the loads stay). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static uint64_t walk_random(const uint64_t *buf, uint64_t lines,
						       uint64_t steps)
{
	uint64_t sum = 0, x = 12345;
	for (uint64_t i = 0; i < steps; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		sum += buf[((x >> 17) % lines) * 8];
	}
	return sum;
}

__attribute__((noinline)) static uint64_t walk_small(const uint64_t *buf, uint64_t n,
						      uint64_t reps)
{
	uint64_t sum = 0;
	for (uint64_t r = 0; r < reps; r++)
		for (uint64_t i = 0; i < n; i++)
			sum += buf[i];
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	uint64_t size = strtoull(argv[2], NULL, 0), count = strtoull(argv[3], NULL, 0);
	if (argv[1][0] == 'r') {
		uint64_t *buf = calloc(size << 20, 1);
		if (!buf)
			return 1;
		printf("%llu\n", (unsigned long long)walk_random(buf, (size << 20) / 64, count));
	} else {
		uint64_t n = (size << 10) / 8;
		uint64_t *buf = malloc(n * 8);
		if (!buf)
			return 1;
		for (uint64_t i = 0; i < n; i++)
			buf[i] = i;
		printf("%llu\n", (unsigned long long)walk_small(buf, n, count));
	}
	return 0;
}
