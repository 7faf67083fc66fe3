/* Several threads, each with its own control flow, joined at the end. */
#include <pthread.h>
#include <stdio.h>

static long work(long seed, int n)
{
	long v = seed;
	for (int i = 0; i < n; i++)
		v = (v & 1) ? 3 * v + 1 : v / 2 + i;
	return v;
}

static void *run(void *arg)
{
	long id = (long)arg;
	return (void *)work(id * 7 + 1, 20000 + (int)id * 1000);
}

int main(void)
{
	pthread_t th[4];
	long sum = 0;
	for (long i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		sum += (long)r;
	}
	printf("threads: %ld\n", sum);
	return 0;
}
