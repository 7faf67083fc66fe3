/* tests/e2e/progs/views_prog.c - a small program for the views tests
 * (tests/e2e/views_*.sh): two threads with their own names, a few
 * functions (a recursive one, a loop with data-dependent branches), and a
 * system call, so timelines, flame graphs and coverage have something to
 * show; one function never runs. */
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static unsigned long leaf_mix(unsigned long h, int i)
{
	h = h * 6364136223846793005ul + 1442695040888963407ul;
	if (h & 0x10)
		h ^= h >> 7;
	else
		h += (unsigned long)i;
	return h;
}

static unsigned long crunch(unsigned long seed, int n)
{
	unsigned long h = seed;
	for (int i = 0; i < n; i++)
		h = leaf_mix(h, i);
	return h;
}

static unsigned long fib_rec(int n)
{
	return n < 2 ? (unsigned long)n : fib_rec(n - 1) + fib_rec(n - 2);
}

static void never_called(void)
{
	puts("not reached"); /* a line that never runs, for coverage */
}

static void *worker_main(void *arg)
{
	unsigned long *v = arg;
	prctl(PR_SET_NAME, "views_worker");
	*v = crunch(*v, 300) + fib_rec(9);
	return NULL;
}

int main(void)
{
	pthread_t t;
	unsigned long v = 3;
	pthread_create(&t, NULL, worker_main, &v);
	unsigned long m = crunch(7, 200);
	m += (unsigned long)getppid() & 1;
	pthread_join(t, NULL);
	if (m == 42)
		never_called();
	printf("%lu\n", m ^ v);
	return 0;
}
