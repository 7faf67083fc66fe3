/* tests/e2e/progs/lone_jcc.c - branches whose target is a block of one
 * instruction that reads the trace: a jump to a lone conditional branch
 * (taken or not, by the loop counter's bits), a call of a lone return,
 * and a jump to a lone indirect jump.  With timing packets (CYC in front
 * of every TNT/TIP), the time moves while such a one-instruction block
 * executes, which is where the block decoder's loop gives the branch into
 * it the time after the block, not before (tests/e2e/decode_jobs.sh:
 * batches must give the same).  Exit 0. */
#include <stdio.h>
#include <stdlib.h>

extern void lj_ret(void);
__asm__(".text\n"
	".globl lj_ret\n"
	"lj_ret: ret\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000, sum = 0;
	for (long i = 0; i < n; i++) {
		long a = i & 1, b = (i >> 1) & 1, c = (i % 7) == 3;
		void *t;
		/* (each lone jcc's bit is the last before a TIP: the timing
		 * packets in front of the TIP are read right after it) */
		__asm__ volatile("test %[a], %[a]\n\t"
				 "lea 2f(%%rip), %[t]\n\t"
				 "jmp 1f\n\t"
				 "nop\n"
				 "1: jne 9f\n\t"
				 "inc %[s]\n"
				 "9: jmp *%[t]\n"
				 "2: test %[b], %[b]\n\t"
				 "lea 4f(%%rip), %[t]\n\t"
				 "jmp 3f\n"
				 "3: je 8f\n"
				 "8: jmp *%[t]\n"
				 "4: call lj_ret\n\t"
				 "lea 5f(%%rip), %[t]\n\t"
				 "test %[c], %[c]\n\t"
				 "jmp 6f\n"
				 "6: jmp *%[t]\n"
				 "5: add %[a], %[s]\n\t"
				 : [s] "+r"(sum), [t] "=&r"(t)
				 : [a] "r"(a), [b] "r"(b), [c] "r"(c)
				 : "cc", "memory");
	}
	printf("%ld\n", sum);
	return 0;
}
