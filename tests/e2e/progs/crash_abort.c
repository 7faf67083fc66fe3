/* tests/e2e/progs/crash_abort.c - a program that dies of SIGABRT:
 * main -> ab_a -> ab_b -> abort() (libc raises the signal with tgkill),
 * for tests/e2e/flight.sh. */
#include <stdio.h>
#include <stdlib.h>

static volatile int seen;

__attribute__((noinline)) static int ab_b(int n)
{
	for (int i = 0; i < n; i++)
		seen += i & 1;
	if (seen >= 0)
		abort();
	return seen;
}

__attribute__((noinline)) static int ab_a(int n)
{
	return ab_b(n + 5) + 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	int r = ab_a(argc + 10);
	printf("not reached: %d\n", r);
	return 0;
}
