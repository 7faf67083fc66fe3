/* tests/e2e/progs/crash_chain.c - a program that dies of SIGSEGV below a
 * known call chain, for tests/e2e/flight.sh: main -> fr_a -> fr_b -> fr_c,
 * and fr_c writes through a null pointer after some work with branches
 * (so the last branches are the program's own).  None of the calls is a
 * tail call: each caller still has work to do after its callee returns. */
#include <stdio.h>
#include <stdlib.h>

static int *volatile sink;

__attribute__((noinline)) static int fr_c(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += (i & 3) ? i : -i;
	*sink = s; /* sink is NULL: SIGSEGV */
	return s;
}

__attribute__((noinline)) static int fr_b(int n)
{
	return fr_c(n + 1) + 2;
}

__attribute__((noinline)) static int fr_a(int n)
{
	return fr_b(n * 2) + 3;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("before the crash\n");
	fflush(stdout);
	int r = fr_a(argc + 20);
	printf("not reached: %d\n", r);
	return 0;
}
