/* Signal handlers: raise() from user code, a timer-free SIGSEGV-free set
 * of synchronous signals, and a handler that longjmps out. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile int hits;
static sigjmp_buf jb;

static void on_usr1(int s) { hits += s; }
static void on_usr2(int s)
{
	hits++;
	siglongjmp(jb, 1);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	for (int i = 0; i < 5; i++)
		raise(SIGUSR1);
	if (!sigsetjmp(jb, 1))
		raise(SIGUSR2);
	printf("sig: hits %d\n", hits);
	return 0;
}
