/* tests/e2e/progs/srcline_prog.c - a small program for the --srcline
 * test (script_srcline.sh): loops, calls, a function inlined from a
 * header, a switch; built with -g at several optimization levels. */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static int classify(unsigned v)
{
	switch (v % 4) {
	case 0:
		return 10;
	case 1:
		return v > 1000 ? 20 : 21;
	case 2:
		return 30;
	default:
		return (int)(v & 7);
	}
}

/* Included here, not first: at -O0 the header's function would start the
 * program's line table with the table's default file (1), which binutils
 * 2.40 addr2line names wrongly for DWARF 5 (gdb and objdump agree with
 * hwt); the test's oracle is addr2line. */
#include "srcline_util.h"

__attribute__((noinline)) static unsigned hash(const char *s)
{
	unsigned h = 2166136261u;
	while (*s)
		h = mix_step(h, (unsigned char)*s++);
	return h;
}

int main(int argc, char **argv)
{
	static const char *const words[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
	long sum = 0;
	for (int r = 0; r < 3 + argc; r++)
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			unsigned h = hash(words[i]) + (unsigned)r;
			sum += classify(h);
			if (strlen(words[i]) > 4)
				sum++;
		}
	printf("%ld\n", sum);
	return 0;
}
