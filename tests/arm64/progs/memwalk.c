/* Memory access patterns with known cache behaviour (the emulated SPE's
 * tests): "walk N" follows a random cyclic permutation over 64 MiB (every
 * load misses any cache), "loop N" sums a 16 KiB buffer N times (every load
 * hits L1D after the first pass), "threads" runs a walk and a loop in two
 * threads each.  The data range goes to stderr as "range LO HI". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (64u << 20)
#define SMALL (16u << 10)

static unsigned long walk(unsigned long *v, size_t n, long steps)
{
	size_t i = 0;
	unsigned long sum = 0;
	while (steps-- > 0) {
		i = v[i];
		sum += i;
	}
	return sum;
}

static unsigned long *make_cycle(size_t n)
{
	unsigned long *v = malloc(n * sizeof(*v));
	size_t *perm = malloc(n * sizeof(*perm));
	if (!v || !perm)
		exit(1);
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	unsigned long r = 88172645463325252ul;
	for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates with xorshift */
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		size_t j = r % (i + 1), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		v[perm[i]] = perm[(i + 1) % n];
	free(perm);
	return v;
}

static unsigned long loop(const unsigned long *v, size_t n, long reps)
{
	unsigned long sum = 0;
	while (reps-- > 0)
		for (size_t i = 0; i < n; i++)
			sum += v[i] ^ (unsigned long)reps;
	return sum;
}

static void *thr_walk(void *a)
{
	size_t n = (16u << 20) / sizeof(unsigned long);
	unsigned long *v = make_cycle(n);
	unsigned long s = walk(v, n, (long)a);
	free(v);
	return (void *)s;
}

static void *thr_loop(void *a)
{
	unsigned long *v = calloc(SMALL / sizeof(unsigned long), sizeof(unsigned long));
	unsigned long s = loop(v, SMALL / sizeof(unsigned long), (long)a);
	free(v);
	return (void *)s;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "walk";
	long n = argc > 2 ? atol(argv[2]) : 200000;
	if (!strcmp(mode, "walk")) {
		size_t cnt = BIG / sizeof(unsigned long);
		unsigned long *v = make_cycle(cnt);
		fprintf(stderr, "range %p %p\n", (void *)v, (void *)(v + cnt));
		printf("walk: %lu\n", walk(v, cnt, n));
	} else if (!strcmp(mode, "loop")) {
		size_t cnt = SMALL / sizeof(unsigned long);
		unsigned long *v = calloc(cnt, sizeof(*v));
		for (size_t i = 0; i < cnt; i++)
			v[i] = i * 7;
		fprintf(stderr, "range %p %p\n", (void *)v, (void *)(v + cnt));
		printf("loop: %lu\n", loop(v, cnt, n));
	} else {
		pthread_t t[4];
		unsigned long sum = 0;
		for (long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, i & 1 ? thr_loop : thr_walk,
				       (void *)(i & 1 ? n / 2000 : n));
		for (int i = 0; i < 4; i++) {
			void *r;
			pthread_join(t[i], &r);
			sum += (unsigned long)r;
		}
		printf("threads: %lu\n", sum);
	}
	return 0;
}
