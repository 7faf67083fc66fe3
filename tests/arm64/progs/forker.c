/* fork: parent and child both run traced code; the child exits with a
 * status the parent checks. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int spin(int n)
{
	int v = 0;
	for (int i = 0; i < n; i++)
		v += (i % 3) ? i : -i;
	return v;
}

int main(void)
{
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		printf("child %d\n", spin(5000) & 0xff);
		fflush(stdout);
		_exit(3);
	}
	int st = 0;
	waitpid(p, &st, 0);
	printf("parent %d, child exit %d\n", spin(7000) & 0xff, WEXITSTATUS(st));
	return 0;
}
