/* tests/e2e/progs/crash_thread.c - a second thread dies of SIGSEGV while
 * the main thread runs, for tests/e2e/flight.sh: the worker runs
 * worker -> th_a -> th_b and th_b writes through a null pointer; main spins
 * (a loop with branches and no system calls) until the signal ends the
 * process.  The worker waits until main is spinning, so the crash always
 * happens while main runs. */
#include <pthread.h>
#include <stdio.h>

static int *volatile sink;
static volatile int main_spinning;

__attribute__((noinline)) static int th_b(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += (i % 3) ? 1 : 2;
	*sink = s; /* sink is NULL: SIGSEGV */
	return s;
}

__attribute__((noinline)) static int th_a(int n)
{
	return th_b(n + 7) + 1;
}

static void *worker(void *arg)
{
	(void)arg;
	while (!main_spinning)
		;
	int r = th_a(40);
	printf("not reached: %d\n", r);
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	unsigned long h = 1;
	for (unsigned long i = 0;; i++) {
		h = h * 6364136223846793005ul + 1442695040888963407ul;
		if (h & 0x100)
			h ^= h >> 9;
		if (i == 1000)
			main_spinning = 1;
	}
	return (int)h;
}
