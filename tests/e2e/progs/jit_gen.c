/* tests/e2e/progs/jit_gen.c - a tiny JIT: generates a counting loop into
 * an anonymous RWX page, names it in /tmp/perf-PID.map (as JITs do for
 * perf), runs it, rewrites it in place (another count, another result, an
 * extra jump: QEMU retranslates the page) and runs it again.  Prints the
 * two results.  argv[1]: "keep" leaves the map file (for the decoders). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void gen(unsigned char *m, unsigned count, unsigned char result, int extra_jmp)
{
	unsigned char *p = m;
	*p++ = 0xb9; /* mov ecx, count */
	memcpy(p, &count, 4);
	p += 4;
	*p++ = 0xff; /* 1: dec ecx */
	*p++ = 0xc9;
	*p++ = 0x75; /* jnz 1b */
	*p++ = 0xfc;
	if (extra_jmp) {
		*p++ = 0xeb; /* jmp +1 (over an int3) */
		*p++ = 0x01;
		*p++ = 0xcc;
	}
	*p++ = 0xb8; /* mov eax, result */
	*p++ = result;
	*p++ = 0;
	*p++ = 0;
	*p++ = 0;
	*p++ = 0xc3; /* ret */
}

int main(int argc, char **argv)
{
	unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 2;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "%lx 20 gen_loop\n", (unsigned long)m);
		fclose(f);
	}
	gen(m, 5, 1, 0);
	int a = ((int (*)(void))m)();
	gen(m, 3, 2, 1);
	int b = ((int (*)(void))m)();
	printf("%d %d\n", a, b);
	(void)argc, (void)argv;
	return 0;
}
