/* tests/e2e/progs/mt_switch.c - a small multi-threaded program for
 * tests/e2e/script_cpu.sh: three workers and the main thread compute a
 * hash with data-dependent branches and make a system call every 500
 * steps (the points where a recording can switch threads). */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long work(unsigned long seed, int n)
{
	unsigned long h = seed;
	for (int i = 0; i < n; i++) {
		h = h * 6364136223846793005ul + 1442695040888963407ul;
		if (h & 0x10)
			h ^= h >> 7;
		else
			h += (unsigned long)i;
		if (i % 500 == 0)
			h += (unsigned long)syscall(SYS_getppid) & 1;
	}
	return h;
}

static void *thr(void *arg)
{
	unsigned long *v = arg;
	*v = work(*v, 20000);
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	unsigned long v[3] = {1, 2, 3};
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, thr, &v[i]);
	unsigned long m = work(7, 15000);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%lu\n", m ^ v[0] ^ v[1] ^ v[2]);
	return 0;
}
