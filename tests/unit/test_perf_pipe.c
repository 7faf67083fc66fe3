/* tests/unit/test_perf_pipe.c - the perf.data reader on pipe-mode data.
 *
 * Pipe-mode streams are built here by hand from perf.data-file-format.txt
 * (HEADER_ATTR, HEADER_FEATURE, HEADER_TRACING_DATA and AUXTRACE with the
 * bytes that follow them, HEADER_BUILD_ID, kernel records with sample_id
 * trailers) and read from memory and through a real pipe that a writer
 * thread fills in odd-sized pieces: both must give the same records, and
 * the ones the stream was built from.  Every truncation and every bit flip
 * must give the same answer from memory and from the pipe, and an error
 * with a message, never a crash (ASan in the sanitizer build).  The oracle
 * for real data is Linux perf: `perf inject -i FILE -o -` turns a file into
 * pipe mode, and the records read from both must be the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_util.h"
#include "hwt/perf_data.h"

static char tmpdir[] = "/tmp/hwt-test-pipe-XXXXXX";

/* ---------------- building streams ---------------- */
struct sb {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct sb *b, const void *d, size_t n)
{
	if (!n)
		return;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put32(struct sb *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct sb *b, uint64_t v)
{
	put(b, &v, 8);
}

/* A record: header with size 8 + n, then body. */
static void put_rec(struct sb *b, uint32_t type, uint16_t misc, const void *body, size_t n)
{
	struct perf_event_header h = {type, misc, (uint16_t)(8 + n)};
	put(b, &h, 8);
	put(b, body, n);
}

/* A perf_header_string: u32 len (NUL included, padded to 8), string. */
static void hstr(struct sb *b, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 7) / 8 * 8);
	char pad[256] = {0};
	put32(b, len);
	memcpy(pad, s, strlen(s));
	put(b, pad, len);
}

static void feature(struct sb *b, uint64_t feat, const struct sb *payload)
{
	struct sb body = {0};
	put64(&body, feat);
	put(&body, payload->p, payload->n);
	put_rec(b, HWT_PERF_RECORD_HEADER_FEATURE, 0, body.p, body.n);
	free(body.p);
}

static void feature_string(struct sb *b, uint64_t feat, const char *s)
{
	struct sb pl = {0};
	hstr(&pl, s);
	feature(b, feat, &pl);
	free(pl.p);
}

#define ST                                                                                         \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |                   \
	 PERF_SAMPLE_IDENTIFIER)

static void attr_of(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = type;
	a->config = config;
	a->sample_type = ST;
	a->sample_id_all = 1;
}

/* The sample_id trailer for ST. */
static void trailer(struct sb *b, uint32_t pid, uint32_t tid, uint64_t time, uint64_t id,
		    uint32_t cpu)
{
	put32(b, pid);
	put32(b, tid);
	put64(b, time);
	put64(b, id);
	put32(b, cpu);
	put32(b, 0);
	put64(b, id);
}

static uint8_t payload[1 << 20];

/* The hand-built stream; aux_n bytes of AUXTRACE payload. */
static void build_stream(struct sb *b, size_t aux_n)
{
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 7);
	put64(b, HWT_PERF_MAGIC2);
	put64(b, 16);
	struct perf_event_attr a[2];
	attr_of(&a[0], 8, 0x2001);
	attr_of(&a[1], PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	static const uint64_t ids0[2] = {101, 102}, ids1[1] = {201};
	struct sb body = {0};
	put(&body, &a[0], sizeof(a[0]));
	put(&body, ids0, sizeof(ids0));
	put_rec(b, HWT_PERF_RECORD_HEADER_ATTR, 0, body.p, body.n);
	body.n = 0;
	put(&body, &a[1], sizeof(a[1]));
	put(&body, ids1, sizeof(ids1));
	put_rec(b, HWT_PERF_RECORD_HEADER_ATTR, 0, body.p, body.n);
	feature_string(b, HWT_FEAT_HOSTNAME, "pipehost");
	feature_string(b, HWT_FEAT_HOSTNAME, "second-one-is-ignored");
	feature_string(b, 300, "unknown feature id");
	body.n = 0;
	put32(&body, 3);
	hstr(&body, "perf");
	hstr(&body, "record");
	hstr(&body, "-o -");
	feature(b, HWT_FEAT_CMDLINE, &body);
	body.n = 0;
	put32(&body, 4);
	put32(&body, 3);
	feature(b, HWT_FEAT_NRCPUS, &body);
	body.n = 0;
	put32(&body, 2);
	put32(&body, sizeof(a[0]));
	put(&body, &a[0], sizeof(a[0]));
	put32(&body, 2);
	hstr(&body, "intel_pt//u");
	put(&body, ids0, sizeof(ids0));
	put(&body, &a[1], sizeof(a[1]));
	put32(&body, 1);
	hstr(&body, "dummy:u");
	put(&body, ids1, sizeof(ids1));
	feature(b, HWT_FEAT_EVENT_DESC, &body);
	/* tracing data: a 12-byte record, 16 bytes after it */
	body.n = 0;
	put32(&body, 16);
	put_rec(b, HWT_PERF_RECORD_HEADER_TRACING_DATA, 0, body.p, body.n);
	put(b, "tracing-data-16b", 16);
	for (int i = 0; i < 2; i++) {
		body.n = 0;
		put32(&body, (uint32_t)-1);
		uint8_t id[24] = {0};
		memset(id, 0xa0 + i, 20);
		put(&body, id, sizeof(id));
		char name[28] = {0};
		snprintf(name, sizeof(name), i ? "/bin/prog" : "[vdso]");
		put(&body, name, sizeof(name));
		put_rec(b, HWT_PERF_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER, body.p, body.n);
	}
	body.n = 0;
	put32(&body, 10);
	put32(&body, 11);
	put(&body, "prog\0\0\0\0", 8);
	trailer(&body, 10, 11, 5000, 201, 1);
	put_rec(b, PERF_RECORD_COMM, 0, body.p, body.n);
	body.n = 0;
	put64(&body, aux_n);
	put64(&body, 4096); /* offset */
	put64(&body, 0xabc);
	put32(&body, 1);	    /* idx */
	put32(&body, 11);	    /* tid */
	put32(&body, (uint32_t)-1); /* cpu */
	put32(&body, 0);
	put_rec(b, HWT_PERF_RECORD_AUXTRACE, 0, body.p, body.n);
	put(b, payload, aux_n);
	/* a sample: IDENTIFIER first, then TID, TIME, ID, CPU */
	body.n = 0;
	put64(&body, 102);
	put32(&body, 10);
	put32(&body, 12);
	put64(&body, 6000);
	put64(&body, 102);
	put32(&body, 0);
	put32(&body, 0);
	put_rec(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, body.p, body.n);
	put_rec(b, HWT_PERF_RECORD_FINISHED_ROUND, 0, NULL, 0);
	free(body.p);
}

/* ---------------- feeding a pipe ---------------- */
struct feeder {
	const uint8_t *p;
	size_t n;
	int fd;
	pthread_t th;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	static const size_t piece[] = {1, 2, 3, 5, 7, 11, 13, 4093, 17, 8191, 1};
	size_t off = 0;
	for (unsigned k = 0; off < f->n; k++) {
		size_t n = piece[k % (sizeof(piece) / sizeof(piece[0]))];
		if (n > f->n - off)
			n = f->n - off;
		ssize_t w = write(f->fd, f->p + off, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the reader gave up (EPIPE) */
		off += (size_t)w;
	}
	close(f->fd);
	return NULL;
}

/* A pipe whose writer thread sends p[0, n) in odd pieces; returns the
 * read end.  feeder_join after closing it. */
static int feeder_start(struct feeder *f, const uint8_t *p, size_t n)
{
	int fds[2];
	if (pipe(fds))
		return -1;
	f->p = p;
	f->n = n;
	f->fd = fds[1];
	if (pthread_create(&f->th, NULL, feed, f)) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	return fds[0];
}

static void feeder_join(struct feeder *f)
{
	pthread_join(f->th, NULL);
}

/* ---------------- what a reader hands out ---------------- */
struct seen {
	uint32_t type, size, misc;
	uint64_t off, aux_size, aux_sum, hdr_sum;
	int attr_index, have_sid;
	struct hwt_perf_sample_id sid;
	uint64_t aux_offset, aux_reference;
	uint32_t aux_idx;
};

struct run {
	struct seen *s;
	size_t n;
	int ret;      /* last _next result (0 or an error) */
	int has_msg;  /* an error came with a message */
	size_t attrs; /* at the end */
};

static uint64_t sum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/* Types only pipe mode has (the metadata perf puts in the header). */
static int pipe_only(uint32_t type)
{
	return type == HWT_PERF_RECORD_HEADER_ATTR || type == HWT_PERF_RECORD_HEADER_FEATURE ||
	       type == HWT_PERF_RECORD_HEADER_TRACING_DATA ||
	       type == HWT_PERF_RECORD_HEADER_BUILD_ID ||
	       type == HWT_PERF_RECORD_HEADER_EVENT_TYPE || type == HWT_PERF_RECORD_FINISHED_INIT;
}

static void collect(struct hwt_perf_reader *r, struct run *out, int skip_pipe_only)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 0;
	struct hwt_perf_record rec;
	int e;
	while ((e = hwt_perf_reader_next(r, &rec)) > 0) {
		if (skip_pipe_only && pipe_only(rec.type))
			continue;
		if (out->n == cap) {
			cap = cap ? cap * 2 : 64;
			out->s = realloc(out->s, cap * sizeof(*out->s));
		}
		struct seen *s = &out->s[out->n++];
		memset(s, 0, sizeof(*s));
		s->type = rec.type;
		s->size = rec.size;
		s->misc = rec.misc;
		s->off = rec.file_offset;
		s->aux_size = rec.aux_size;
		s->aux_sum = rec.aux_data ? sum(rec.aux_data, rec.aux_size) : 0;
		s->hdr_sum = sum(rec.hdr, rec.size);
		s->attr_index = rec.attr_index;
		s->have_sid = rec.have_sid;
		s->sid = rec.sid;
		s->aux_offset = rec.aux_offset;
		s->aux_reference = rec.aux_reference;
		s->aux_idx = rec.aux_idx;
	}
	out->ret = e;
	out->has_msg = e == 0 || hwt_perf_reader_errmsg(r)[0] != 0;
	out->attrs = hwt_perf_reader_nr_attrs(r);
}

/* Differences between two runs ("" if none); offsets compared if with_off. */
static const char *diff_runs(const struct run *a, const struct run *b, int with_off)
{
	static char why[256];
	if (a->n != b->n) {
		snprintf(why, sizeof(why), "%zu records vs %zu", a->n, b->n);
		return why;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct seen *x = &a->s[i], *y = &b->s[i];
		if (x->type != y->type || x->size != y->size || x->misc != y->misc ||
		    x->aux_size != y->aux_size || x->aux_sum != y->aux_sum ||
		    x->hdr_sum != y->hdr_sum || x->attr_index != y->attr_index ||
		    x->have_sid != y->have_sid || memcmp(&x->sid, &y->sid, sizeof(x->sid)) ||
		    x->aux_offset != y->aux_offset || x->aux_reference != y->aux_reference ||
		    x->aux_idx != y->aux_idx || (with_off && x->off != y->off)) {
			snprintf(
			    why, sizeof(why),
			    "record %zu differs: type %u/%u size %u/%u aux %llu/%llu attr %d/%d", i,
			    x->type, y->type, x->size, y->size, (unsigned long long)x->aux_size,
			    (unsigned long long)y->aux_size, x->attr_index, y->attr_index);
			return why;
		}
	}
	if (a->ret != b->ret) {
		snprintf(why, sizeof(why), "end %d vs %d", a->ret, b->ret);
		return why;
	}
	return "";
}

static void run_free(struct run *r)
{
	free(r->s);
	r->s = NULL;
}

/* Read p[0, n) from memory. */
static int run_mem(const uint8_t *p, size_t n, struct run *out, int *open_err)
{
	struct hwt_perf_reader *r;
	char why[256] = "";
	*open_err = hwt_perf_reader_open_mem(&r, p, n, why, sizeof(why));
	memset(out, 0, sizeof(*out));
	if (*open_err)
		return out->has_msg = why[0] != 0;
	collect(r, out, 0);
	hwt_perf_reader_free(r);
	return 1;
}

/* Read p[0, n) through a pipe, written in one go when it fits, else by
 * the feeder thread. */
static int run_pipe(const uint8_t *p, size_t n, struct run *out, int *open_err, int threaded)
{
	struct feeder f;
	int fd;
	memset(out, 0, sizeof(*out));
	if (threaded) {
		fd = feeder_start(&f, p, n);
	} else {
		int fds[2];
		if (n > 60000 || pipe(fds))
			return 0;
		if (write(fds[1], p, n) != (ssize_t)n)
			return 0;
		close(fds[1]);
		fd = fds[0];
	}
	if (fd < 0)
		return 0;
	struct hwt_perf_reader *r;
	char why[256] = "";
	*open_err = hwt_perf_reader_open_fd(&r, fd, why, sizeof(why));
	int ok = 1;
	if (*open_err) {
		ok = out->has_msg = why[0] != 0;
	} else {
		collect(r, out, 0);
		hwt_perf_reader_free(r);
	}
	close(fd);
	if (threaded)
		feeder_join(&f);
	return ok;
}

/* ---------------- cases ---------------- */

/* The hand-built stream from memory: attrs, features, payloads appear as
 * their records arrive, and every record is what was written. */
static void t_mem_stream(void)
{
	struct sb b = {0};
	build_stream(&b, 24);
	struct hwt_perf_reader *r;
	char why[256];
	int e = hwt_perf_reader_open_mem(&r, b.p, b.n, why, sizeof(why));
	CHECKF(e == 0, "%s", why);
	if (e) {
		free(b.p);
		return;
	}
	CHECK_EQ(hwt_perf_reader_is_pipe(r), 1);
	CHECK_EQ(hwt_perf_reader_can_rewind(r), 1);
	CHECK_EQ(hwt_perf_reader_nr_attrs(r), 0);
	CHECK(hwt_perf_reader_feature_string(r, HWT_FEAT_HOSTNAME) == NULL);
	CHECK_EQ(hwt_perf_reader_data_size(r), b.n - 16);
	struct hwt_perf_record rec;
	CHECK_EQ(hwt_perf_reader_next(r, &rec), 1);
	CHECK_EQ(rec.type, HWT_PERF_RECORD_HEADER_ATTR);
	CHECK_EQ(rec.file_offset, 16);
	CHECK_EQ(hwt_perf_reader_nr_attrs(r), 1);
	const struct hwt_perf_attr_info *a0 = hwt_perf_reader_attr(r, 0);
	CHECK(a0 && a0->attr.type == 8 && a0->attr.config == 0x2001 && a0->nr_ids == 2 &&
	      a0->ids[0] == 101 && a0->ids[1] == 102 && a0->name == NULL);
	CHECK_EQ(hwt_perf_reader_attr_by_id(r, 102), 0);
	CHECK_EQ(hwt_perf_reader_attr_by_id(r, 201), -1);
	int n = 1, comm = 0, aux = 0, sample = 0, tracing = 0, bid = 0;
	while ((e = hwt_perf_reader_next(r, &rec)) > 0) {
		n++;
		if (rec.type == HWT_PERF_RECORD_HEADER_BUILD_ID)
			bid++;
		if (rec.type == HWT_PERF_RECORD_HEADER_TRACING_DATA) {
			tracing++;
			CHECK(rec.size == 12 && rec.aux_size == 16 &&
			      !memcmp(rec.aux_data, "tracing-data-16b", 16));
		}
		if (rec.type == PERF_RECORD_COMM) {
			comm++;
			/* everything before it is known by now */
			CHECK_EQ(hwt_perf_reader_nr_attrs(r), 2);
			CHECK(!strcmp((const char *)rec.hdr + 16, "prog"));
			CHECK(rec.have_sid && rec.sid.pid == 10 && rec.sid.tid == 11 &&
			      rec.sid.time == 5000 && rec.sid.id == 201 && rec.sid.cpu == 1);
			CHECK_EQ(rec.attr_index, 1);
		}
		if (rec.type == HWT_PERF_RECORD_AUXTRACE) {
			aux++;
			CHECK(rec.aux_size == 24 && !memcmp(rec.aux_data, payload, 24));
			CHECK(rec.aux_offset == 4096 && rec.aux_reference == 0xabc &&
			      rec.aux_idx == 1 && rec.sid.tid == 11 && rec.sid.cpu == (uint32_t)-1);
		}
		if (rec.type == PERF_RECORD_SAMPLE) {
			sample++;
			CHECK(rec.have_sid && rec.sid.tid == 12 && rec.sid.time == 6000);
			CHECK_EQ(rec.attr_index, 0);
		}
	}
	CHECK_EQ(e, 0);
	/* 2 attrs, 6 features, tracing, 2 build-ids, comm, auxtrace, sample, round */
	CHECK_EQ(n, 15);
	CHECK(comm == 1 && aux == 1 && sample == 1 && tracing == 1 && bid == 2);
	const char *host = hwt_perf_reader_feature_string(r, HWT_FEAT_HOSTNAME);
	CHECK(host && !strcmp(host, "pipehost"));
	const char *cmd = hwt_perf_reader_cmdline(r);
	CHECK(cmd && !strcmp(cmd, "perf record -o -"));
	uint32_t on = 0, av = 0;
	CHECK_EQ(hwt_perf_reader_nrcpus(r, &on, &av), 0);
	CHECK(on == 3 && av == 4);
	CHECK(a0->name && !strcmp(a0->name, "intel_pt//u")); /* same pointer, now named */
	const struct hwt_perf_attr_info *a1 = hwt_perf_reader_attr(r, 1);
	CHECK(a1 && a1->name && !strcmp(a1->name, "dummy:u") && a1->nr_ids == 1);
	CHECK_EQ(hwt_perf_reader_attr_by_id(r, 201), 1);
	size_t bsz = 0;
	const uint8_t *bf = hwt_perf_reader_feature(r, HWT_FEAT_BUILD_ID, &bsz);
	CHECK(bf && bsz == 2 * 64 && !strcmp((const char *)bf + 36, "[vdso]") &&
	      !strcmp((const char *)bf + 64 + 36, "/bin/prog") && bf[12] == 0xa0);
	/* memory can be read again; the metadata is not taken twice */
	CHECK_EQ(hwt_perf_reader_rewind(r), 0);
	struct run again;
	collect(r, &again, 0);
	CHECK_EQ(again.n, 15);
	CHECK_EQ(again.ret, 0);
	CHECK_EQ(hwt_perf_reader_nr_attrs(r), 2);
	size_t bsz2 = 0;
	hwt_perf_reader_feature(r, HWT_FEAT_BUILD_ID, &bsz2);
	CHECK_EQ(bsz2, bsz);
	run_free(&again);
	hwt_perf_reader_free(r);
	free(b.p);
}

/* The same stream through a pipe in odd pieces (small payload and one of
 * 1 MiB): the same records as from memory, offsets included; pointers of
 * the last record are readable; rewind fails with a reason. */
static void t_pipe_stream(void)
{
	for (int big = 0; big < 2; big++) {
		struct sb b = {0};
		build_stream(&b, big ? sizeof(payload) : 24);
		struct run m, p;
		int oe_m, oe_p;
		CHECK(run_mem(b.p, b.n, &m, &oe_m));
		CHECK(run_pipe(b.p, b.n, &p, &oe_p, 1));
		CHECK(oe_m == 0 && oe_p == 0);
		const char *d = diff_runs(&m, &p, 1);
		CHECKF(!d[0], "memory vs pipe (payload %d): %s", big, d);
		CHECK_EQ(m.n, 15);
		CHECK_EQ(p.attrs, 2);
		int found = 0;
		for (size_t i = 0; i < p.n; i++)
			if (p.s[i].type == HWT_PERF_RECORD_AUXTRACE)
				found = p.s[i].aux_size == (big ? sizeof(payload) : 24) &&
					p.s[i].aux_sum == sum(payload, big ? sizeof(payload) : 24);
		CHECK(found);
		run_free(&m);
		run_free(&p);
		free(b.p);
	}
	/* rewind on a pipe */
	struct sb b = {0};
	build_stream(&b, 24);
	struct feeder f;
	int fd = feeder_start(&f, b.p, b.n);
	CHECK(fd >= 0);
	struct hwt_perf_reader *r;
	char why[256];
	int e = hwt_perf_reader_open_fd(&r, fd, why, sizeof(why));
	CHECKF(e == 0, "%s", why);
	if (!e) {
		CHECK_EQ(hwt_perf_reader_can_rewind(r), 1); /* nothing read yet */
		CHECK_EQ(hwt_perf_reader_rewind(r), 0);
		struct hwt_perf_record rec;
		CHECK_EQ(hwt_perf_reader_next(r, &rec), 1);
		CHECK_EQ(hwt_perf_reader_can_rewind(r), 0);
		CHECK_EQ(hwt_perf_reader_rewind(r), HWT_ERR_NOT_SUPPORTED);
		CHECK(strstr(hwt_perf_reader_errmsg(r), "pipe") != NULL);
		/* reading goes on where it was */
		CHECK_EQ(hwt_perf_reader_next(r, &rec), 1);
		CHECK_EQ(rec.type, HWT_PERF_RECORD_HEADER_ATTR);
		CHECK_EQ(rec.file_offset, 16 + 8 + sizeof(struct perf_event_attr) + 16);
		hwt_perf_reader_free(r);
	}
	close(fd);
	feeder_join(&f);
	free(b.p);
}

/* Every prefix and every bit flip: memory and pipe agree, errors come
 * with a message, a cut inside a record says "truncated". */
static void t_truncated_corrupt(void)
{
	struct sb b = {0};
	build_stream(&b, 24);
	int bad = 0, differ = 0, trunc_msgs = 0;
	char first[300] = "";
	for (size_t len = 0; len <= b.n; len++) {
		uint8_t *p = malloc(len ? len : 1);
		memcpy(p, b.p, len);
		struct run m, q;
		int oe_m, oe_p;
		bad += !run_mem(p, len, &m, &oe_m) || !m.has_msg;
		bad += !run_pipe(p, len, &q, &oe_p, 0) || !q.has_msg;
		const char *d = diff_runs(&m, &q, 1);
		if (d[0] || oe_m != oe_p) {
			if (!differ++)
				snprintf(first, sizeof(first), "length %zu: %s (open %d/%d)", len,
					 d, oe_m, oe_p);
		}
		if (len >= 16 && len < b.n && m.ret == HWT_ERR_BAD_FORMAT)
			trunc_msgs++;
		run_free(&m);
		run_free(&q);
		free(p);
	}
	CHECKF(bad == 0, "%d truncations gave an error without a message", bad);
	CHECKF(differ == 0, "%d truncations differ between memory and pipe; first: %s", differ,
	       first);
	/* a cut at a record boundary is a clean end; anywhere else an error */
	CHECK(trunc_msgs > (int)b.n - 16 - 20);
	/* a message for a cut inside the AUXTRACE payload */
	struct hwt_perf_reader *r;
	char why[256];
	size_t cut = b.n - 8 - 48; /* sample (48) and round (8) follow the payload */
	CHECK_EQ(hwt_perf_reader_open_mem(&r, b.p, cut - 3, why, sizeof(why)), 0);
	struct hwt_perf_record rec;
	int e;
	while ((e = hwt_perf_reader_next(r, &rec)) > 0)
		;
	CHECK_EQ(e, HWT_ERR_BAD_FORMAT);
	CHECKF(strstr(hwt_perf_reader_errmsg(r), "AUXTRACE") &&
		   strstr(hwt_perf_reader_errmsg(r), "truncated"),
	       "message: %s", hwt_perf_reader_errmsg(r));
	CHECK_EQ(hwt_perf_reader_next(r, &rec), 0); /* stays at the end */
	hwt_perf_reader_free(r);

	uint8_t *p = malloc(b.n);
	differ = 0;
	for (size_t i = 0; i < b.n; i++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(p, b.p, b.n);
			p[i] ^= (uint8_t)(1 << bit);
			struct run m, q;
			int oe_m, oe_p;
			bad += !run_mem(p, b.n, &m, &oe_m) || !m.has_msg;
			bad += !run_pipe(p, b.n, &q, &oe_p, 0) || !q.has_msg;
			const char *d = diff_runs(&m, &q, 1);
			if ((d[0] || oe_m != oe_p) && !differ++)
				snprintf(first, sizeof(first), "byte %zu bit %d: %s", i, bit, d);
			run_free(&m);
			run_free(&q);
		}
	}
	free(p);
	CHECKF(bad == 0, "%d flips gave an error without a message", bad);
	CHECKF(differ == 0, "%d flips differ between memory and pipe; first: %s", differ, first);
	free(b.p);
}

/* Hostile sizes: clear errors, and no allocation beyond what arrives. */
static void t_corrupt_cases(void)
{
	char why[256];
	struct hwt_perf_reader *r;
	struct hwt_perf_record rec;
	/* attr size 0 */
	struct sb b = {0};
	put64(&b, HWT_PERF_MAGIC2);
	put64(&b, 16);
	uint8_t z[72] = {0};
	put_rec(&b, HWT_PERF_RECORD_HEADER_ATTR, 0, z, sizeof(z));
	CHECK_EQ(hwt_perf_reader_open_mem(&r, b.p, b.n, why, sizeof(why)), 0);
	CHECK_EQ(hwt_perf_reader_next(r, &rec), HWT_ERR_BAD_FORMAT);
	CHECK(strstr(hwt_perf_reader_errmsg(r), "attr size") != NULL);
	hwt_perf_reader_free(r);
	/* a record of size 4 */
	b.n = 16;
	struct perf_event_header h = {PERF_RECORD_COMM, 0, 4};
	put(&b, &h, 8);
	CHECK_EQ(hwt_perf_reader_open_mem(&r, b.p, b.n, why, sizeof(why)), 0);
	CHECK_EQ(hwt_perf_reader_next(r, &rec), HWT_ERR_BAD_FORMAT);
	CHECK(strstr(hwt_perf_reader_errmsg(r), "bad size") != NULL);
	hwt_perf_reader_free(r);
	/* an AUXTRACE that announces 1 TiB through a pipe: truncated, not NOMEM */
	b.n = 16;
	uint8_t a[40] = {0};
	uint64_t huge = 1ULL << 40;
	memcpy(a, &huge, 8);
	put_rec(&b, HWT_PERF_RECORD_AUXTRACE, 0, a, sizeof(a));
	put(&b, payload, 100000);
	struct run q;
	int oe;
	CHECK(run_pipe(b.p, b.n, &q, &oe, 1));
	CHECK_EQ(oe, 0);
	CHECK_EQ(q.ret, HWT_ERR_BAD_FORMAT);
	run_free(&q);
	/* file mode on a pipe: too short */
	b.n = 0;
	put64(&b, HWT_PERF_MAGIC2);
	put64(&b, 104);
	CHECK(run_pipe(b.p, b.n, &q, &oe, 0));
	CHECK_EQ(oe, HWT_ERR_BAD_FORMAT);
	/* not perf.data at all; an empty pipe */
	CHECK(run_pipe((const uint8_t *)"hello world, not perf", 21, &q, &oe, 0));
	CHECK_EQ(oe, HWT_ERR_BAD_FORMAT);
	CHECK(run_pipe(b.p, 0, &q, &oe, 0));
	CHECK_EQ(oe, HWT_ERR_BAD_FORMAT);
	free(b.p);
}

/* ---------------- file mode vs pipe mode of the same recording ---------------- */

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tmpdir, name);
}

/* A file-mode recording made with hwt's writer: sideband, AUX, intel_pt
 * AUXTRACE_INFO, TIME_CONV, AUXTRACE payloads. */
static int write_content(struct hwt_perf_writer *w, int e);

static int write_file(const char *path)
{
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	if (!w)
		return -1;
	return write_content(w, hwt_perf_writer_open(w, path));
}

/* The content of write_file to an opened writer (e: the open's result);
 * finishes and frees w. */
static int write_content(struct hwt_perf_writer *w, int e)
{
	struct perf_event_attr a;
	uint64_t pt_ids[1] = {101}, sb_ids[1] = {201};
	hwt_perf_attr_intel_pt(&a, 8, HWT_IPT_CFG_TSC);
	if (!e)
		e = hwt_perf_writer_add_attr(w, &a, "intel_pt//u", pt_ids, 1) == 0 ? 0 : -1;
	hwt_perf_attr_sideband(&a, 0);
	if (!e)
		e = hwt_perf_writer_add_attr(w, &a, "dummy:u", sb_ids, 1) == 1 ? 0 : -1;
	if (!e)
		e = hwt_perf_writer_add_pmu(w, "intel_pt", 8);
	struct hwt_perf_rec_time_conv tc;
	memset(&tc, 0, sizeof(tc));
	tc.time_shift = 10;
	tc.time_mult = 1024;
	tc.cap_user_time_zero = 1;
	if (!e)
		e = hwt_perf_writer_write_time_conv(w, &tc);
	struct hwt_perf_intel_pt_info info;
	hwt_perf_intel_pt_info_init(&info);
	info.pmu_type = 8;
	info.time_shift = 10;
	info.time_mult = 1024;
	info.cap_user_time_zero = 1;
	if (!e)
		e = hwt_perf_writer_write_intel_pt_info(w, &info);
	struct hwt_perf_sample_id sid = {.pid = 10, .tid = 10, .time = 100, .id = 201, .cpu = 0};
	if (!e)
		e = hwt_perf_writer_write_comm(w, 10, 10, "prog", 1, &sid);
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_mmap2(w, 10, 10, 0x400000, 0x2000, 0, 5, 2, "/bin/prog",
						0, &sid);
	sid.id = 101;
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_itrace_start(w, 10, 10, &sid);
	for (int i = 0; i < 3 && !e; i++) {
		size_t n = i == 1 ? 70000 : 4000 + (size_t)i * 8;
		sid.time++;
		e = hwt_perf_writer_write_aux(w, (uint64_t)i * 100000, n, 0, &sid);
		struct hwt_perf_auxtrace_desc d = {.offset = (uint64_t)i * 100000,
						   .reference = 7,
						   .idx = 0,
						   .tid = 10,
						   .cpu = (uint32_t)-1};
		if (!e)
			e = hwt_perf_writer_write_auxtrace(w, &d, payload + i, n, NULL, 0);
	}
	sid.id = 201;
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_task(w, PERF_RECORD_EXIT, 10, 1, 10, 1, sid.time, &sid);
	if (!e)
		e = hwt_perf_writer_write_finished_round(w);
	uint8_t bid[20];
	memset(bid, 0x5a, sizeof(bid));
	if (!e)
		e = hwt_perf_writer_add_build_id(w, -1, PERF_RECORD_MISC_USER, bid, 20, "[vdso]");
	if (!e)
		e = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	return e;
}

struct wthread {
	int fd, ret, is_pipe;
	pthread_t th;
};

static void *write_thread(void *arg)
{
	struct wthread *t = arg;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	int e = w ? hwt_perf_writer_open_fd(w, t->fd) : HWT_ERR_NOMEM;
	t->is_pipe = hwt_perf_writer_is_pipe(w);
	t->ret = w ? write_content(w, e) : e;
	close(t->fd);
	return NULL;
}

/* The writer on a pipe writes pipe mode: read back, the same records,
 * attrs, features and build-ids as the file it writes for the same calls;
 * and perf reads it (its dump counts the same records as the file's). */
static void t_writer_pipe(void)
{
	char path[256], cmd[1200];
	path_of(path, sizeof(path), "wfile.data");
	CHECK_EQ(write_file(path), 0);
	int fds[2];
	CHECK(pipe(fds) == 0);
	struct wthread t = {.fd = fds[1]};
	CHECK(pthread_create(&t.th, NULL, write_thread, &t) == 0);
	struct hwt_perf_reader *rf, *rp;
	char why[256];
	int e = hwt_perf_reader_open_fd(&rp, fds[0], why, sizeof(why));
	CHECKF(e == 0, "%s", why);
	CHECK_EQ(hwt_perf_reader_open(&rf, path, why, sizeof(why)), 0);
	if (!e) {
		struct run a, b;
		collect(rf, &a, 1);
		collect(rp, &b, 1);
		CHECK_EQ(hwt_perf_reader_is_pipe(rp), 1);
		CHECK_EQ(a.ret, 0);
		CHECKF(b.ret == 0, "%s", hwt_perf_reader_errmsg(rp));
		const char *d = diff_runs(&a, &b, 0);
		CHECKF(!d[0], "file vs pipe: %s", d);
		CHECK_EQ(hwt_perf_reader_nr_attrs(rp), 2);
		for (size_t i = 0; i < 2 && i < hwt_perf_reader_nr_attrs(rp); i++) {
			const struct hwt_perf_attr_info *x = hwt_perf_reader_attr(rf, i),
							*y = hwt_perf_reader_attr(rp, i);
			CHECK(!memcmp(&x->attr, &y->attr, sizeof(x->attr)) &&
			      x->nr_ids == y->nr_ids && x->ids[0] == y->ids[0]);
			CHECK(x->name && y->name && !strcmp(x->name, y->name));
		}
		static const int feats[] = {
		    HWT_FEAT_HOSTNAME, HWT_FEAT_OSRELEASE,  HWT_FEAT_VERSION,
		    HWT_FEAT_ARCH,     HWT_FEAT_CPUID,	    HWT_FEAT_NRCPUS,
		    HWT_FEAT_CMDLINE,  HWT_FEAT_EVENT_DESC, HWT_FEAT_PMU_MAPPINGS};
		for (size_t i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
			size_t nx = 0, ny = 0;
			const void *x = hwt_perf_reader_feature(rf, feats[i], &nx);
			const void *y = hwt_perf_reader_feature(rp, feats[i], &ny);
			CHECKF(x && y && nx == ny && !memcmp(x, y, nx), "feature %d", feats[i]);
		}
		CHECK(hwt_perf_reader_feature(rp, HWT_FEAT_AUXTRACE, NULL) == NULL);
		/* build-ids: the same entries (the pipe's carry their record type) */
		size_t nx = 0, ny = 0;
		const uint8_t *x = hwt_perf_reader_feature(rf, HWT_FEAT_BUILD_ID, &nx);
		const uint8_t *y = hwt_perf_reader_feature(rp, HWT_FEAT_BUILD_ID, &ny);
		CHECK(x && y && nx == ny && nx > 8 && !memcmp(x + 4, y + 4, nx - 4));
		run_free(&a);
		run_free(&b);
		hwt_perf_reader_free(rp);
	}
	hwt_perf_reader_free(rf);
	close(fds[0]);
	pthread_join(t.th, NULL);
	CHECK_EQ(t.ret, 0);
	CHECK_EQ(t.is_pipe, 1);

	/* perf reads the pipe: its dump counts the same records as the file's */
	if (system("perf version >/dev/null 2>&1")) {
		printf("SKIP t_writer_pipe_perf: perf is not installed\n");
		return;
	}
	/* perf report -D -i INPUT, its record lines counted by type */
#define COUNT                                                                                      \
	"perf report -D -i '%s' 2>/dev/null | grep -oE '\\]: PERF_RECORD_[A-Z0-9_]+' | "           \
	"grep -vE 'PERF_RECORD_(ATTR|FEATURE|BUILD_ID|FINISHED_INIT)$' | sort | uniq -c "          \
	">'%s/%s.cnt'"
	snprintf(cmd, sizeof(cmd), COUNT, path, tmpdir, "file");
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), COUNT, "-", tmpdir, "pipe");
	FILE *f = popen(cmd, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	CHECK_EQ(write_content(w, hwt_perf_writer_open_fd(w, fileno(f))), 0);
	pclose(f);
	char p1[300], p2[300];
	snprintf(p1, sizeof(p1), "%s/file.cnt", tmpdir);
	snprintf(p2, sizeof(p2), "%s/pipe.cnt", tmpdir);
	size_t n1, n2;
	uint8_t *c1 = t_slurp(p1, &n1), *c2 = t_slurp(p2, &n2);
	CHECK(c1 && c2 && strstr((char *)c1, "PERF_RECORD_AUXTRACE") != NULL);
	CHECKF(c1 && c2 && n1 == n2 && !memcmp(c1, c2, n1),
	       "perf's dump of the file:\n%s\nof the pipe:\n%s", c1 ? (char *)c1 : "",
	       c2 ? (char *)c2 : "");
	free(c1);
	free(c2);
}

/* file (file mode, read from the file) vs `perf inject -i file -o -`
 * (pipe mode, read from perf's pipe): same records, attrs, features. */
static void compare_inject(const char *file)
{
	struct hwt_perf_reader *rf, *rp;
	char why[256], cmd[1024];
	int e = hwt_perf_reader_open(&rf, file, why, sizeof(why));
	CHECKF(e == 0, "%s: %s", file, why);
	if (e)
		return;
	snprintf(cmd, sizeof(cmd), "perf inject -i '%s' -o - 2>/dev/null", file);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f) {
		hwt_perf_reader_free(rf);
		return;
	}
	e = hwt_perf_reader_open_fd(&rp, fileno(f), why, sizeof(why));
	CHECKF(e == 0, "perf inject's output: %s", why);
	if (!e) {
		CHECK_EQ(hwt_perf_reader_is_pipe(rp), 1);
		struct run a, b;
		collect(rf, &a, 1);
		collect(rp, &b, 1);
		CHECK_EQ(a.ret, 0);
		CHECKF(b.ret == 0, "pipe: %s", hwt_perf_reader_errmsg(rp));
		CHECK(a.n > 5);
		const char *d = diff_runs(&a, &b, 0);
		CHECKF(!d[0], "file vs pipe: %s", d);
		CHECK_EQ(hwt_perf_reader_nr_attrs(rf), hwt_perf_reader_nr_attrs(rp));
		for (size_t i = 0; i < hwt_perf_reader_nr_attrs(rf); i++) {
			const struct hwt_perf_attr_info *x = hwt_perf_reader_attr(rf, i),
							*y = hwt_perf_reader_attr(rp, i);
			if (!y)
				break;
			CHECK(x->attr.type == y->attr.type && x->attr.config == y->attr.config &&
			      x->attr.sample_type == y->attr.sample_type && x->nr_ids == y->nr_ids);
			CHECK(x->nr_ids == y->nr_ids &&
			      !memcmp(x->ids, y->ids, x->nr_ids * sizeof(uint64_t)));
			CHECK(x->name && y->name && !strcmp(x->name, y->name));
		}
		static const int feats[] = {HWT_FEAT_HOSTNAME, HWT_FEAT_OSRELEASE, HWT_FEAT_ARCH,
					    HWT_FEAT_CPUID, HWT_FEAT_CPUDESC};
		for (size_t i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
			const char *x = hwt_perf_reader_feature_string(rf, feats[i]);
			const char *y = hwt_perf_reader_feature_string(rp, feats[i]);
			CHECKF(x && y && !strcmp(x, y), "feature %d: '%s' vs '%s'", feats[i],
			       x ? x : "(none)", y ? y : "(none)");
		}
		run_free(&a);
		run_free(&b);
		hwt_perf_reader_free(rp);
	}
	pclose(f);
	hwt_perf_reader_free(rf);
}

static void t_inject_hwt_file(void)
{
	char path[256];
	path_of(path, sizeof(path), "hwt.data");
	CHECK_EQ(write_file(path), 0);
	compare_inject(path);
}

static void t_inject_perf_file(void)
{
	char path[256];
	path_of(path, sizeof(path), "perf.data");
	compare_inject(path);
}

static int have_perf_inject(void)
{
	return system("perf inject --help >/dev/null 2>&1 </dev/null") == 0 ||
	       system("perf version >/dev/null 2>&1") == 0;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(tmpdir)) {
		printf("FAIL setup: mkdtemp\n");
		return 1;
	}
	RUN(t_mem_stream);
	RUN(t_pipe_stream);
	RUN(t_truncated_corrupt);
	RUN(t_corrupt_cases);
	RUN(t_writer_pipe);
	if (have_perf_inject())
		RUN(t_inject_hwt_file);
	else
		printf("SKIP t_inject_hwt_file: perf is not installed\n");
	char cmd[600];
	snprintf(cmd, sizeof(cmd),
		 "perf record -q -o %s/perf.data -e dummy -- /bin/true >/dev/null 2>&1", tmpdir);
	if (have_perf_inject() && system(cmd) == 0)
		RUN(t_inject_perf_file);
	else
		printf("SKIP t_inject_perf_file: perf record cannot run here\n");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		printf("FAIL cleanup: %s\n", cmd);
	return t_done();
}
