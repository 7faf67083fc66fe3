/* tests/e2e/progs/sig_branch.c - a busy loop that a timer signal
 * (setitimer) interrupts until it has landed, each at least N times, right
 * after a taken conditional branch, a not-taken one and an indirect jump.
 * The handler reads the interrupted RIP from its ucontext (where sigreturn
 * resumes: the oracle) and the program prints every one, in order, as
 * "0x...".  Exit 0 when each landing place was hit N times (argv[1],
 * default 3), 1 after 20000 signals without.  argv[2]: the timer's period
 * in microseconds (default 3000); the trace grows with it (the loop runs
 * the whole period between two signals), so tests keep it short. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <ucontext.h>

#define MAXSIG 20000

extern char sb_after_taken[], sb_after_not_taken[], sb_after_ijmp[];
static volatile unsigned long rips[MAXSIG];
static volatile int nsig, hits[3];

static void on_alarm(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)si;
	unsigned long rip = (unsigned long)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
	if (nsig < MAXSIG)
		rips[nsig++] = rip;
	if (rip == (unsigned long)sb_after_taken)
		hits[0]++;
	else if (rip == (unsigned long)sb_after_not_taken)
		hits[1]++;
	else if (rip == (unsigned long)sb_after_ijmp)
		hits[2]++;
}

int main(int argc, char **argv)
{
	int want = argc > 1 ? atoi(argv[1]) : 3;
	struct sigaction sa = {.sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	long us = argc > 2 ? atol(argv[2]) : 3000;
	if (us < 1 || us > 999999)
		us = 3000;
	struct itimerval it = {{0, us}, {0, us}};
	setitimer(ITIMER_REAL, &it, NULL);
	while ((hits[0] < want || hits[1] < want || hits[2] < want) && nsig < MAXSIG) {
		/* each branch ends a translated block: the signal lands right
		 * after one of them */
		__asm__ volatile("xor %%eax, %%eax\n\t"
				 "test %%eax, %%eax\n\t"
				 "jz sb_after_taken\n\t" /* taken */
				 "nop\n"
				 "sb_after_taken:\n\t"
				 "nop\n\t"
				 "cmp $1, %%eax\n\t"
				 "je 1f\n" /* not taken */
				 "sb_after_not_taken:\n\t"
				 "nop\n"
				 "1:\n\t"
				 "lea sb_after_ijmp(%%rip), %%rcx\n\t"
				 "jmp *%%rcx\n\t"
				 "nop\n"
				 "sb_after_ijmp:\n\t"
				 "nop\n\t"
				 :
				 :
				 : "rax", "rcx", "cc", "memory");
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	for (int i = 0; i < nsig; i++)
		printf("%#lx\n", rips[i]);
	fprintf(stderr, "signals %d: after taken %d, not taken %d, ijmp %d\n", nsig, hits[0],
		hits[1], hits[2]);
	return hits[0] >= want && hits[1] >= want && hits[2] >= want ? 0 : 1;
}
