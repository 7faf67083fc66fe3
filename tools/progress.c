/* tools/progress.c - the progress line (progress.h).
 *
 * "hwt CMD: 12.3 MB of 50.0 MB (24%), 8.1 MB/s, 5 s left" on stderr,
 * rewritten with a carriage return and erase-to-end-of-line; the rate is
 * measured from the start.  Nothing is written unless stderr is a
 * terminal, so pipes and files get byte-identical output with or without
 * it.  Needs no thread: the decoder calls progress_update as it goes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

struct progress {
	char cmd[32];
	uint64_t total;
	double t0, last;
	int drawn; /* drawn once at least (the first update draws at once) */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct progress *progress_start(const char *cmd, const char *path, int on)
{
	struct stat st;
	if (!on || !isatty(2) || !path || stat(path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	struct progress *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	snprintf(p->cmd, sizeof(p->cmd), "%s", cmd);
	p->total = (uint64_t)st.st_size;
	p->t0 = p->last = now();
	return p;
}

static void size_text(char *buf, size_t len, double v)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2f GB", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1f MB", v / 1e6);
	else
		snprintf(buf, len, "%.0f kB", v / 1e3);
}

void progress_update(struct progress *p, uint64_t done)
{
	if (!p)
		return;
	double t = now();
	if (p->drawn && t - p->last < 0.2)
		return;
	p->last = t;
	if (done > p->total)
		done = p->total;
	double el = t - p->t0, rate = el > 0 ? (double)done / el : 0;
	char d[32], tot[32], r[32], left[48] = "";
	size_text(d, sizeof(d), (double)done);
	size_text(tot, sizeof(tot), (double)p->total);
	size_text(r, sizeof(r), rate);
	if (rate > 0 && done < p->total)
		snprintf(left, sizeof(left), ", %.0f s left", (double)(p->total - done) / rate);
	fprintf(stderr, "\rhwt %s: %s of %s (%.0f%%), %s/s%s\033[K", p->cmd, d, tot,
		p->total ? 100.0 * (double)done / (double)p->total : 100.0, r, left);
	fflush(stderr);
	p->drawn = 1;
}

void progress_stop(struct progress *p)
{
	if (!p)
		return;
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	free(p);
}

void progress_cb(void *arg, uint64_t done, uint64_t total)
{
	(void)total;
	progress_update(arg, done);
}
