/* tests/unit/test_out_flame.c - the flame-graph SVG writer (lib/out/flame.c):
 * stacks merged into frames with the right counts, siblings by name (graph)
 * or by time (chart), the data-self/data-pruned sums equal to the total,
 * names escaped into well-formed XML, narrow frames pruned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/error.h"
#include "out/flame.h"
#include "t.h"

/* Write f into memory (via a temporary file). */
static char *render(struct hwt_flame *f)
{
	char path[] = "/tmp/hwt-flame-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	struct hwt_outbuf o;
	if (hwt_outbuf_init(&o, fd, 8192) || hwt_flame_write(f, &o)) {
		close(fd);
		return NULL;
	}
	hwt_outbuf_fini(&o);
	off_t n = lseek(fd, 0, SEEK_END);
	char *s = malloc((size_t)n + 1);
	if (s && pread(fd, s, (size_t)n, 0) != n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = 0;
	close(fd);
	return s;
}

/* The value of attribute attr of the <g> whose data-name is name (the
 * k-th such frame), -1 if none. */
static long long frame_attr(const char *svg, const char *name, int k, const char *attr)
{
	char pat[256];
	snprintf(pat, sizeof(pat), "data-name=\"%s\"", name);
	const char *p = svg;
	for (int i = 0; i <= k; i++) {
		p = strstr(p, pat);
		if (!p)
			return -1;
		p += strlen(pat);
	}
	const char *g = p;
	while (g > svg && strncmp(g, "<g ", 3))
		g--;
	char ap[64];
	snprintf(ap, sizeof(ap), " %s=\"", attr);
	const char *a = strstr(g, ap);
	if (!a || a > p)
		return -1;
	return atoll(a + strlen(ap));
}

static long long sum_attr(const char *svg, const char *attr)
{
	char ap[64];
	snprintf(ap, sizeof(ap), " %s=\"", attr);
	long long s = 0;
	for (const char *p = strstr(svg, ap); p; p = strstr(p + 1, ap))
		s += atoll(p + strlen(ap));
	return s;
}

static void t_graph(void)
{
	struct hwt_flame *f = hwt_flame_alloc(NULL);
	CHECK(f != NULL);
	const char *a[] = {"main", "f", "g"}, *b[] = {"main", "f"}, *c[] = {"main", "b<&>\"'"};
	CHECK_EQ(hwt_flame_add(f, a, 3, 5, 50), 0);
	CHECK_EQ(hwt_flame_add(f, b, 2, 2, 0), 0);
	CHECK_EQ(hwt_flame_add(f, a, 3, 1, 10), 0);
	CHECK_EQ(hwt_flame_add(f, c, 2, 4, 0), 0);
	CHECK_EQ(hwt_flame_add(f, a, 0, 1, 0), HWT_ERR_INVALID);
	CHECK_EQ(hwt_flame_total(f), 12);
	char *s = render(f);
	CHECK(s != NULL);
	if (s) {
		CHECK(!strncmp(s, "<?xml", 5));
		CHECK(strstr(s, "</svg>\n") != NULL);
		CHECK_EQ(frame_attr(s, "all", 0, "data-n"), 12);
		CHECK_EQ(frame_attr(s, "main", 0, "data-n"), 12);
		CHECK_EQ(frame_attr(s, "main", 0, "data-self"), 0);
		CHECK_EQ(frame_attr(s, "f", 0, "data-n"), 8);
		CHECK_EQ(frame_attr(s, "f", 0, "data-self"), 2);
		CHECK_EQ(frame_attr(s, "g", 0, "data-n"), 6);
		CHECK_EQ(frame_attr(s, "g", 0, "data-t"), 60);
		CHECK_EQ(frame_attr(s, "g", 1, "data-n"), -1); /* merged */
		/* escaped name; sorted before "f" ('b' < 'f'): x 0 */
		CHECK_EQ(frame_attr(s, "b&lt;&amp;&gt;&quot;&apos;", 0, "data-n"), 4);
		CHECK_EQ(frame_attr(s, "b&lt;&amp;&gt;&quot;&apos;", 0, "data-x"), 0);
		CHECK_EQ(frame_attr(s, "f", 0, "data-x"), 4);
		CHECK_EQ(sum_attr(s, "data-self") + sum_attr(s, "data-pruned"), 12);
		CHECK(strstr(s, "b<&") == NULL);
	}
	free(s);
	hwt_flame_free(f);
}

static void t_chart(void)
{
	struct hwt_flame_config cfg;
	hwt_flame_config_init(&cfg);
	cfg.chart = 1;
	struct hwt_flame *f = hwt_flame_alloc(&cfg);
	CHECK(f != NULL);
	uint32_t m = hwt_flame_child(f, 0, "main");
	uint32_t x = hwt_flame_child(f, m, "x");
	hwt_flame_count(f, x, 3, 0);
	CHECK_EQ(hwt_flame_child(f, m, "x"), x); /* the last child: reused */
	uint32_t y = hwt_flame_child(f, m, "y");
	hwt_flame_count(f, y, 2, 0);
	uint32_t x2 = hwt_flame_child(f, m, "x"); /* after y: a new frame */
	CHECK(x2 != x);
	hwt_flame_count(f, x2, 1, 0);
	CHECK_EQ(hwt_flame_parent(f, x2), m);
	char *s = render(f);
	CHECK(s != NULL);
	if (s) {
		CHECK_EQ(frame_attr(s, "x", 0, "data-x"), 0);
		CHECK_EQ(frame_attr(s, "y", 0, "data-x"), 3);
		CHECK_EQ(frame_attr(s, "x", 1, "data-x"), 5);
		CHECK_EQ(sum_attr(s, "data-self") + sum_attr(s, "data-pruned"), 6);
	}
	free(s);
	hwt_flame_free(f);
}

static void t_prune_utf8(void)
{
	struct hwt_flame *f = hwt_flame_alloc(NULL);
	const char *big[] = {"big"}, *tiny[] = {"big", "tiny"}, *u[] = {"caf\xc3\xa9\xff"};
	hwt_flame_add(f, big, 1, 10000000, 0);
	hwt_flame_add(f, tiny, 2, 1, 0); /* far below 0.1 pixel */
	hwt_flame_add(f, u, 1, 5000000, 0);
	char *s = render(f);
	CHECK(s != NULL);
	if (s) {
		CHECK_EQ(frame_attr(s, "tiny", 0, "data-n"), -1);
		CHECK_EQ(frame_attr(s, "big", 0, "data-pruned"), 1);
		CHECK_EQ(sum_attr(s, "data-self") + sum_attr(s, "data-pruned"), 15000001);
		CHECK_EQ(frame_attr(s, "caf\xc3\xa9?", 0, "data-n"), 5000000);
	}
	free(s);
	hwt_flame_free(f);
}

int main(void)
{
	RUN(t_graph);
	RUN(t_chart);
	RUN(t_prune_utf8);
	return t_done();
}
