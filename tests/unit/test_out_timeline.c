/* tests/unit/test_out_timeline.c - the timeline writer (lib/out/timeline.c):
 * Chrome JSON events for a known call sequence (begins/ends per call, in
 * time order per track), the filters (--min-duration writes a long call's
 * begin late but with its real start and drops short ones; max_depth;
 * the time window cuts slices), open calls closed at the end, and the
 * Perfetto protobuf bytes of a descriptor and a slice, decoded here with
 * a minimal wire-format reader (field numbers from Perfetto's schema). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out/timeline.h"
#include "t.h"

struct sink {
	int fd;
	struct hwt_outbuf o;
};

static void sink_open(struct sink *s)
{
	char path[] = "/tmp/hwt-tl-XXXXXX";
	s->fd = mkstemp(path);
	unlink(path);
	hwt_outbuf_init(&s->o, s->fd, 8192);
}

static char *sink_close(struct sink *s, size_t *len)
{
	hwt_outbuf_fini(&s->o);
	off_t n = lseek(s->fd, 0, SEEK_END);
	char *b = malloc((size_t)n + 1);
	if (b && pread(s->fd, b, (size_t)n, 0) != n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = 0;
	close(s->fd);
	*len = (size_t)n;
	return b;
}

/* The events as "B name ts|E ts|i name ts" lines (JSON order). */
static void events(const char *json, char *out, size_t max)
{
	size_t n = 0;
	out[0] = 0;
	for (const char *p = strstr(json, "{\"ph\":\""); p; p = strstr(p + 1, "{\"ph\":\"")) {
		char ph = p[7];
		if (ph == 'M')
			continue;
		const char *ts = strstr(p, "\"ts\":");
		const char *nm = strstr(p, "\"name\":\"");
		const char *end = strchr(p, '}');
		char name[64] = "";
		if (nm && nm < end)
			sscanf(nm + 8, "%63[^\"]", name);
		double v = ts ? atof(ts + 5) * 1000 : -1;
		if (name[0])
			n += (size_t)snprintf(out + n, max - n, "%c %s %.0f;", ph, name, v);
		else
			n += (size_t)snprintf(out + n, max - n, "%c %.0f;", ph, v);
	}
}

static char *run_chrome(const struct hwt_timeline_config *cfg_in, int script)
{
	struct hwt_timeline_config cfg = *cfg_in;
	cfg.format = HWT_TL_CHROME;
	struct sink s;
	sink_open(&s);
	struct hwt_timeline *tl = hwt_timeline_alloc(&cfg, &s.o);
	hwt_timeline_thread(tl, 1, 1, "proc", "main-thread");
	/* main 100..1000 { a 200..210, b 300..900 { c 400..420 } }, d 950.. (open) */
	hwt_timeline_call(tl, 1, 1, 100, "main");
	hwt_timeline_call(tl, 1, 1, 200, "a");
	hwt_timeline_return(tl, 1, 1, 210);
	hwt_timeline_call(tl, 1, 1, 300, "b");
	hwt_timeline_call(tl, 1, 1, 400, "c");
	if (script)
		hwt_timeline_instant(tl, 1, 1, 410, "trace gap", "why");
	hwt_timeline_return(tl, 1, 1, 420);
	hwt_timeline_return(tl, 1, 1, 900);
	hwt_timeline_call(tl, 1, 1, 950, "d");
	hwt_timeline_return(tl, 1, 1, 960);
	hwt_timeline_return(tl, 1, 1, 1000);
	hwt_timeline_return(tl, 1, 1, 1001); /* no open call: ignored */
	hwt_timeline_call(tl, 1, 1, 1100, "open");
	hwt_timeline_instant(tl, 1, 1, 1200, "x", NULL);
	CHECK_EQ(hwt_timeline_finish(tl), 0);
	hwt_timeline_free(tl);
	size_t len;
	char *j = sink_close(&s, &len);
	char *ev = malloc(4096);
	events(j, ev, 4096);
	CHECK(strstr(j, "\"name\":\"main-thread\"") != NULL);
	CHECK(strstr(j, "\"name\":\"proc\"") != NULL);
	CHECK(!strcmp(j + len - 4, "\n]}\n"));
	free(j);
	return ev;
}

static void t_chrome_all(void)
{
	struct hwt_timeline_config cfg;
	hwt_timeline_config_init(&cfg);
	char *ev = run_chrome(&cfg, 1);
	CHECKF(!strcmp(ev, "B main 100;B a 200;E 210;B b 300;B c 400;i trace gap 410;E 420;E 900;"
			   "B d 950;E 960;E 1000;B open 1100;i x 1200;E 1200;"),
	       "%s", ev);
	free(ev);
}

static void t_chrome_min_duration(void)
{
	struct hwt_timeline_config cfg;
	hwt_timeline_config_init(&cfg);
	cfg.min_duration_ns = 50; /* a, c, d drop out; b's begin written late */
	char *ev = run_chrome(&cfg, 0);
	CHECKF(!strcmp(ev, "B main 100;B b 300;E 900;E 1000;B open 1100;i x 1200;E 1200;"), "%s",
	       ev);
	free(ev);
}

static void t_chrome_depth_window(void)
{
	struct hwt_timeline_config cfg;
	hwt_timeline_config_init(&cfg);
	cfg.max_depth = 2;
	char *ev = run_chrome(&cfg, 0);
	CHECKF(!strcmp(ev, "B main 100;B a 200;E 210;B b 300;E 900;B d 950;E 960;E 1000;"
			   "B open 1100;i x 1200;E 1200;"),
	       "%s", ev);
	free(ev);
	hwt_timeline_config_init(&cfg);
	cfg.start_ns = 350;
	cfg.end_ns = 500;
	ev = run_chrome(&cfg, 0);
	CHECKF(!strcmp(ev, "B main 350;B b 350;B c 400;E 420;E 500;E 500;"), "%s", ev);
	free(ev);
}

/* minimal protobuf reading */
static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	for (int s = 0; *p < end && s < 64; s += 7) {
		uint8_t c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			break;
	}
	return v;
}

/* Find field f in msg: length-delimited into sub and sublen, varint into val. */
static int field(const uint8_t *m, size_t n, unsigned f, const uint8_t **sub, size_t *sublen,
		 uint64_t *val)
{
	const uint8_t *p = m, *end = m + n;
	while (p < end) {
		uint64_t key = varint(&p, end);
		unsigned wt = key & 7;
		uint64_t v = 0;
		const uint8_t *s = NULL;
		if (wt == 0) {
			v = varint(&p, end);
		} else if (wt == 2) {
			v = varint(&p, end);
			s = p;
			p += v;
		} else {
			return 0;
		}
		if ((key >> 3) == f) {
			if (sub) {
				*sub = s;
				*sublen = (size_t)v;
			}
			if (val)
				*val = v;
			return 1;
		}
	}
	return 0;
}

static void t_perfetto(void)
{
	struct hwt_timeline_config cfg;
	hwt_timeline_config_init(&cfg);
	cfg.format = HWT_TL_PERFETTO;
	struct sink s;
	sink_open(&s);
	struct hwt_timeline *tl = hwt_timeline_alloc(&cfg, &s.o);
	hwt_timeline_thread(tl, 7, 9, "proc", "thr");
	hwt_timeline_call(tl, 7, 9, 123456789012ull, "f\xff");
	hwt_timeline_return(tl, 7, 9, 123456789999ull);
	CHECK_EQ(hwt_timeline_finish(tl), 0);
	CHECK_EQ(hwt_timeline_slices(tl), 1);
	hwt_timeline_free(tl);
	size_t len;
	uint8_t *b = (uint8_t *)sink_close(&s, &len);
	/* packets: process descriptor, thread descriptor, begin, end */
	const uint8_t *p = b, *end = b + len;
	int np = 0, nbegin = 0, nend = 0, have_thread = 0;
	while (p < end) {
		uint64_t key = varint(&p, end);
		CHECK_EQ(key, 1u << 3 | 2);
		uint64_t n = varint(&p, end);
		const uint8_t *pkt = p;
		p += n;
		np++;
		const uint8_t *sub, *s2;
		size_t sl, sl2;
		uint64_t v;
		CHECK(field(pkt, n, 10, NULL, NULL, &v) && v == 1); /* sequence id */
		if (field(pkt, n, 60, &sub, &sl, NULL) && field(sub, sl, 4, &s2, &sl2, NULL)) {
			const uint8_t *nm;
			size_t nl;
			CHECK(field(s2, sl2, 1, NULL, NULL, &v) && v == 7);
			CHECK(field(s2, sl2, 2, NULL, NULL, &v) && v == 9);
			CHECK(field(s2, sl2, 5, &nm, &nl, NULL) && nl == 3 &&
			      !memcmp(nm, "thr", 3));
			have_thread = 1;
		}
		if (field(pkt, n, 11, &sub, &sl, NULL)) {
			uint64_t type, ts, uuid;
			CHECK(field(sub, sl, 9, NULL, NULL, &type));
			CHECK(field(sub, sl, 11, NULL, NULL, &uuid) && uuid == (2ull << 56 | 9));
			CHECK(field(pkt, n, 8, NULL, NULL, &ts));
			if (type == 1) {
				const uint8_t *nm;
				size_t nl;
				nbegin++;
				CHECK_EQ(ts, 123456789012ull);
				CHECK(field(sub, sl, 23, &nm, &nl, NULL) && nl == 2 &&
				      !memcmp(nm, "f?", 2));
			} else if (type == 2) {
				nend++;
				CHECK_EQ(ts, 123456789999ull);
			}
		}
	}
	CHECK_EQ(np, 4);
	CHECK_EQ(nbegin, 1);
	CHECK_EQ(nend, 1);
	CHECK(have_thread);
	free(b);
}

int main(void)
{
	RUN(t_chrome_all);
	RUN(t_chrome_min_duration);
	RUN(t_chrome_depth_window);
	RUN(t_perfetto);
	return t_done();
}
