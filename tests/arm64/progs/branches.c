/* Control flow a real program hits rarely in a short run: every A64
 * branch kind (B.cond, CBZ/CBNZ, TBZ/TBNZ, B, BL, BR, BLR, RET), jump
 * tables, recursion, tail calls, long loops. */
#include <stdio.h>
#include <stdlib.h>

typedef int (*op_fn)(int, int);
static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int xor_(int a, int b) { return a ^ b; }
static op_fn ops[] = {add, sub, mul, xor_};

__attribute__((noinline)) static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) static int classify(int v)
{
	switch (v % 9) {
	case 0: return 3;
	case 1: return v * 7;
	case 2: return v - 11;
	case 3: return v >> 2;
	case 4: return v | 5;
	case 5: return -v;
	case 6: return v & 0xff;
	case 7: return v + 100;
	default: return 1;
	}
}

__attribute__((noinline)) static int bits(unsigned v)
{
	int n = 0;
	while (v) {
		if (v & 8)
			n += 2;
		if (v & 1)
			n++;
		v >>= 1;
	}
	return n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	long acc = 0;
	for (int i = 0; i < n; i++) {
		acc += ops[i & 3](i, (int)acc & 0xffff);
		acc += classify(i);
		acc += bits((unsigned)i * 2654435761u);
	}
	acc += fib(18);
	printf("branches: %ld\n", acc);
	return (int)(acc & 7);
}
