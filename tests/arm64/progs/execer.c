/* execer DIR NAME PROG ARGS...: exec() through the system calls
 * themselves (svc, no libc wrapper): a forked child runs NAME in DIR with
 * execveat (a directory file descriptor and a relative name; execve of
 * DIR/NAME where execveat is missing, as in qemu 7.2, with a line on
 * stderr), the parent waits for it, prints its status, then becomes PROG
 * ARGS with execve. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static long svc5(long nr, long a, long b, long c, long d, long e)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: execer DIR NAME PROG ARGS...\n");
		return 2;
	}
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		int dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
		char *cargv[] = {argv[2], "from-execveat", NULL};
		long r =
		    svc5(281 /* execveat */, dfd, (long)argv[2], (long)cargv, (long)environ, 0);
		/* qemu 7.2 has no execveat (ENOSYS): the same file by path */
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], argv[2]);
		fprintf(stderr, "execer: execveat %s: %ld, execve instead\n", path, r);
		r = svc5(221 /* execve */, (long)path, (long)cargv, (long)environ, 0, 0);
		fprintf(stderr, "execer: execve %s: %ld\n", path, r);
		_exit(127);
	}
	int st = 0;
	waitpid(p, &st, 0);
	printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	fflush(stdout);
	long r = svc5(221 /* execve */, (long)argv[3], (long)(argv + 3), (long)environ, 0, 0);
	fprintf(stderr, "execer: execve %s: %ld\n", argv[3], r);
	return 127;
}
