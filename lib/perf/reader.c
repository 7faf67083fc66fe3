/* lib/perf/reader.c - perf.data (PERFILE2) reader: file mode and pipe mode.
 *
 * File mode (the 104-byte header: attrs, data and feature sections at
 * offsets): open maps the whole file read-only (or takes caller memory),
 * validates the header, the attrs section, every attr's id array and the
 * feature table against the file size, and copies the attrs into
 * zero-extended struct perf_event_attr.  Records are then walked in file
 * order by hwt_perf_reader_next(), zero-copy: records, AUXTRACE payloads
 * and features point into the mapping and live until _free.
 *
 * Pipe mode (perf record -o -, perf inject -o -: a 16-byte header, then
 * only records): the attrs come as HEADER_ATTR records (attr + ids), the
 * features as HEADER_FEATURE records (u64 feature id + the same payload as
 * the file-mode section), build-ids as HEADER_BUILD_ID records; AUXTRACE
 * and HEADER_TRACING_DATA records are followed by payload bytes that their
 * header.size does not count.  The reader takes these in as _next reaches
 * them (copies that live until _free; HEADER_BUILD_ID records are appended
 * to the BUILD_ID feature, whose pointer therefore lives only until the
 * next _next) and hands every record, these included, to the caller.
 * Attrs, ids and features are complete only once their records were read;
 * perf writes them before the kernel records.  Pipe-mode data in memory
 * (_open_mem, or a regular file) is walked zero-copy and can be rewound.
 * From a pipe (_open_fd on a non-seekable fd, the path "-", a FIFO) it is
 * read in one forward pass into one buffer that holds the current record
 * and its payload (plus read-ahead) and grows to the largest of them: the
 * record's pointers live until the next _next; rewind then fails.  A
 * file-mode file arriving on a pipe needs random access: it is read whole
 * into memory first.
 *
 * Every size is checked before use (against the data section, or the
 * bytes the stream really delivers: buffers grow only as data arrives, so
 * a hostile size cannot make a huge allocation); all reads go through
 * memcpy, so unaligned or hostile input is safe.  Limits: host-endian
 * files only (no byte-swapped files, no PERF_RECORD_COMPRESSED).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwt/perf_data.h"
#include "perf/internal.h"

#define MAX_ATTRS 4096
#define PIPE_HDR_SIZE 16
#define STREAM_CHUNK 65536

struct hwt_perf_reader {
	const uint8_t *base; /* memory input: the whole file or stream */
	size_t size;
	int mapped;	/* base is our mmap */
	uint8_t *owned; /* base is our malloc (file mode read from a pipe) */
	int pipe;	/* pipe-mode data */
	/* pipe mode read from an fd (fd >= 0): bytes [start, len) of buf are
	 * the stream from pos on */
	int fd, own_fd, eof;
	int done; /* pipe mode: the end, or an error, was reached */
	uint8_t *buf;
	size_t cap, len, start;
	struct hwt_perf_file_header hdr;
	struct hwt_perf_attr_info **attrs; /* one allocation each: stable */
	size_t nr_attrs, cap_attrs;
	uint64_t **id_copies; /* per attr: ids we own (or NULL) */
	const uint8_t *feat[HWT_FEAT_BITS];
	size_t feat_size[HWT_FEAT_BITS];
	uint8_t have_feat[HWT_FEAT_BITS];
	uint8_t *feat_own[HWT_FEAT_BITS]; /* pipe mode: copies */
	size_t bid_cap;			  /* pipe mode: BUILD_ID accumulation */
	char *names;			  /* storage of EVENT_DESC names */
	char *cmdline;
	uint64_t data_off, data_end, pos;
	uint64_t dropped; /* a mapped file: pages before this offset were given back */
	uint64_t meta_pos;     /* pipe mode: metadata taken in up to here */
	int id_all_identifier; /* every attr has PERF_SAMPLE_IDENTIFIER */
	int same_sample_type;  /* every attr has the same sample_type */
	char errmsg[256];
};

static void seterr(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	if (!buf || !n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int in_file(const struct hwt_perf_reader *r, uint64_t off, uint64_t len)
{
	return off <= r->size && len <= r->size - off;
}

size_t hwt_perf_sample_id_size(uint64_t st)
{
	size_t n = 0;
	n += (st & PERF_SAMPLE_TID) ? 8 : 0;
	n += (st & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (st & PERF_SAMPLE_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (st & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

void hwt_perf_sample_id_decode(const uint8_t *in, uint64_t st, struct hwt_perf_sample_id *sid)
{
	memset(sid, 0, sizeof(*sid));
	if (st & PERF_SAMPLE_TID) {
		sid->pid = rd32(in);
		sid->tid = rd32(in + 4);
		in += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		sid->time = rd64(in);
		in += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		sid->id = rd64(in);
		in += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = rd64(in);
		in += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		sid->cpu = rd32(in);
		sid->res = rd32(in + 4);
		in += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		sid->identifier = rd64(in);
		if (!(st & PERF_SAMPLE_ID))
			sid->id = sid->identifier;
	}
}

void hwt_perf_reader_free(struct hwt_perf_reader *r)
{
	if (!r)
		return;
	if (r->mapped && r->base)
		munmap((void *)r->base, r->size);
	free(r->owned);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->buf);
	for (size_t i = 0; i < r->nr_attrs; i++) {
		free(r->id_copies[i]);
		free(r->attrs[i]);
	}
	free(r->id_copies);
	free(r->attrs);
	for (int f = 0; f < HWT_FEAT_BITS; f++)
		free(r->feat_own[f]);
	free(r->names);
	free(r->cmdline);
	free(r);
}

/* A perf_header_string at off of p[0, end): the string or NULL; *next is
 * set past it. */
static const char *hstring(const uint8_t *p, uint64_t off, uint64_t end, uint64_t *next)
{
	if (off > end || end - off < 4)
		return NULL;
	uint32_t len = rd32(p + off);
	if (len == 0 || len > end - off - 4)
		return NULL;
	const char *s = (const char *)p + off + 4;
	if (!memchr(s, 0, len))
		return NULL;
	if (next)
		*next = off + 4 + len;
	return s;
}

/* Room for one more attr (pointer arrays grow; entries never move). */
static struct hwt_perf_attr_info *attr_new(struct hwt_perf_reader *r)
{
	if (r->nr_attrs == r->cap_attrs) {
		size_t c = r->cap_attrs ? r->cap_attrs * 2 : 8;
		struct hwt_perf_attr_info **a = realloc(r->attrs, c * sizeof(*a));
		if (!a)
			return NULL;
		r->attrs = a;
		uint64_t **ids = realloc(r->id_copies, c * sizeof(*ids));
		if (!ids)
			return NULL;
		r->id_copies = ids;
		r->cap_attrs = c;
	}
	struct hwt_perf_attr_info *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	r->id_copies[r->nr_attrs] = NULL;
	r->attrs[r->nr_attrs++] = a;
	return a;
}

static void attrs_summary(struct hwt_perf_reader *r)
{
	r->id_all_identifier = r->nr_attrs > 0;
	r->same_sample_type = 1;
	for (size_t i = 0; i < r->nr_attrs; i++) {
		const struct perf_event_attr *a = &r->attrs[i]->attr, *a0 = &r->attrs[0]->attr;
		if (!(a->sample_type & PERF_SAMPLE_IDENTIFIER))
			r->id_all_identifier = 0;
		if (a->sample_type != a0->sample_type || a->sample_id_all != a0->sample_id_all)
			r->same_sample_type = 0;
	}
}

/* EVENT_DESC names, applied once the feature's event count matches the
 * attrs (a mismatching feature is ignored: names stay NULL). */
static int parse_event_desc(struct hwt_perf_reader *r, char *eb, size_t en)
{
	const uint8_t *b = r->feat[HWT_FEAT_EVENT_DESC];
	uint64_t off = 0, end = r->feat_size[HWT_FEAT_EVENT_DESC];
	if (end < 8 || r->names)
		return 0;
	uint32_t nr = rd32(b), asz = rd32(b + 4);
	off += 8;
	if (nr != r->nr_attrs || asz < PERF_ATTR_SIZE_VER0 || asz > 4096 || nr > MAX_ATTRS)
		return 0; /* not matching the attrs: ignore names */
	size_t total = 0;
	const char *names[MAX_ATTRS];
	for (uint32_t i = 0; i < nr; i++) {
		if (end - off < (uint64_t)asz + 4) {
			seterr(eb, en, "EVENT_DESC feature is truncated at event %u", i);
			return HWT_ERR_BAD_FORMAT;
		}
		off += asz;
		uint32_t nids = rd32(b + off);
		off += 4;
		names[i] = hstring(b, off, end, &off);
		if (!names[i] || (end - off) / 8 < nids) {
			seterr(eb, en, "EVENT_DESC feature is malformed at event %u", i);
			return HWT_ERR_BAD_FORMAT;
		}
		off += (uint64_t)nids * 8;
		total += strlen(names[i]) + 1;
	}
	r->names = malloc(total + 1);
	if (!r->names)
		return HWT_ERR_NOMEM;
	char *p = r->names;
	for (uint32_t i = 0; i < nr; i++) {
		size_t l = strlen(names[i]) + 1;
		memcpy(p, names[i], l);
		r->attrs[i]->name = p;
		p += l;
	}
	return 0;
}

static int parse_cmdline(struct hwt_perf_reader *r)
{
	const uint8_t *b = r->feat[HWT_FEAT_CMDLINE];
	uint64_t off = 0, end = r->feat_size[HWT_FEAT_CMDLINE];
	if (end < 4 || r->cmdline)
		return 0;
	uint32_t nr = rd32(b);
	off += 4;
	uint64_t o = off;
	size_t total = 1;
	for (uint32_t i = 0; i < nr; i++) {
		const char *a = hstring(b, o, end, &o);
		if (!a)
			return 0; /* malformed: treat as absent */
		total += strlen(a) + 1;
	}
	r->cmdline = malloc(total);
	if (!r->cmdline)
		return HWT_ERR_NOMEM;
	r->cmdline[0] = 0;
	o = off;
	for (uint32_t i = 0; i < nr; i++) {
		const char *a = hstring(b, o, end, &o);
		if (i)
			strcat(r->cmdline, " ");
		strcat(r->cmdline, a);
	}
	return 0;
}

/* The first 16 bytes: 1 pipe mode, 0 file mode, < 0 not perf.data. */
static int check_magic(const uint8_t *p, size_t n, char *eb, size_t en)
{
	if (n < 16) {
		seterr(eb, en, "file is too short for a perf.data header (%zu bytes)", n);
		return HWT_ERR_BAD_FORMAT;
	}
	uint64_t magic = rd64(p);
	if (magic == __builtin_bswap64(HWT_PERF_MAGIC2)) {
		seterr(eb, en,
		       "file has the other byte order (PERFILE2 byte-swapped), not supported");
		return HWT_ERR_NOT_SUPPORTED;
	}
	if (!memcmp(p, "PERFFILE", 8)) {
		seterr(eb, en, "old perf.data version 1 (PERFFILE) is not supported");
		return HWT_ERR_NOT_SUPPORTED;
	}
	if (magic != HWT_PERF_MAGIC2) {
		seterr(eb, en, "not a perf.data file (no PERFILE2 magic)");
		return HWT_ERR_BAD_FORMAT;
	}
	return rd64(p + 8) == PIPE_HDR_SIZE;
}

static int validate(struct hwt_perf_reader *r, char *eb, size_t en)
{
	if (r->size < sizeof(r->hdr)) {
		seterr(eb, en, "file is truncated inside the header (%zu of %zu bytes)", r->size,
		       sizeof(r->hdr));
		return HWT_ERR_BAD_FORMAT;
	}
	memcpy(&r->hdr, r->base, sizeof(r->hdr));
	const struct hwt_perf_file_header *h = &r->hdr;
	if (h->size < sizeof(*h) || h->size > r->size) {
		seterr(eb, en, "bad header size %llu", (unsigned long long)h->size);
		return HWT_ERR_BAD_FORMAT;
	}
	if (h->attr_size < PERF_ATTR_SIZE_VER0 + sizeof(struct hwt_perf_file_section) ||
	    h->attr_size > 4096 || h->attrs.size % h->attr_size) {
		seterr(eb, en, "bad attr size %llu (attrs section %llu bytes)",
		       (unsigned long long)h->attr_size, (unsigned long long)h->attrs.size);
		return HWT_ERR_BAD_FORMAT;
	}
	if (!in_file(r, h->attrs.offset, h->attrs.size)) {
		seterr(eb, en,
		       "file is truncated: the attrs section ends at %llu but the file has "
		       "%zu bytes",
		       (unsigned long long)(h->attrs.offset + h->attrs.size), r->size);
		return HWT_ERR_BAD_FORMAT;
	}
	if (!in_file(r, h->data.offset, h->data.size)) {
		seterr(eb, en,
		       "file is truncated: the data section ends at %llu but the file has "
		       "%zu bytes",
		       (unsigned long long)(h->data.offset + h->data.size), r->size);
		return HWT_ERR_BAD_FORMAT;
	}
	if (h->data.offset < sizeof(*h)) {
		seterr(eb, en, "bad data section offset %llu", (unsigned long long)h->data.offset);
		return HWT_ERR_BAD_FORMAT;
	}
	size_t nattrs = h->attrs.size / h->attr_size;
	if (nattrs > MAX_ATTRS) {
		seterr(eb, en, "too many attrs (%zu)", nattrs);
		return HWT_ERR_BAD_FORMAT;
	}
	size_t asz = h->attr_size - sizeof(struct hwt_perf_file_section);
	for (size_t i = 0; i < nattrs; i++) {
		const uint8_t *p = r->base + h->attrs.offset + i * h->attr_size;
		struct hwt_perf_attr_info *a = attr_new(r);
		if (!a)
			return HWT_ERR_NOMEM;
		memcpy(&a->attr, p, asz < sizeof(a->attr) ? asz : sizeof(a->attr));
		struct hwt_perf_file_section ids;
		memcpy(&ids, p + asz, sizeof(ids));
		if (ids.size % 8 || !in_file(r, ids.offset, ids.size)) {
			seterr(eb, en,
			       "attr %zu: its id array (offset %llu, %llu bytes) lies outside "
			       "the file",
			       i, (unsigned long long)ids.offset, (unsigned long long)ids.size);
			return HWT_ERR_BAD_FORMAT;
		}
		a->nr_ids = ids.size / 8;
		if (a->nr_ids && ((uintptr_t)(r->base + ids.offset) % 8)) {
			r->id_copies[i] = malloc(ids.size);
			if (!r->id_copies[i])
				return HWT_ERR_NOMEM;
			memcpy(r->id_copies[i], r->base + ids.offset, ids.size);
			a->ids = r->id_copies[i];
		} else if (a->nr_ids) {
			a->ids = (const uint64_t *)(const void *)(r->base + ids.offset);
		}
	}
	attrs_summary(r);

	/* Feature table right after the data section. */
	uint64_t ft = h->data.offset + h->data.size, nfeat = 0;
	for (int b = 1; b < HWT_FEAT_BITS; b++)
		if (h->features[b / 64] & (1ULL << (b % 64)))
			nfeat++;
	if (nfeat && !in_file(r, ft, nfeat * 16)) {
		seterr(eb, en,
		       "file is truncated: the feature table (%llu entries at %llu) ends "
		       "past the file end (%zu)",
		       (unsigned long long)nfeat, (unsigned long long)ft, r->size);
		return HWT_ERR_BAD_FORMAT;
	}
	for (int b = 1; b < HWT_FEAT_BITS; b++) {
		if (!(h->features[b / 64] & (1ULL << (b % 64))))
			continue;
		struct hwt_perf_file_section s;
		memcpy(&s, r->base + ft, sizeof(s));
		ft += 16;
		if (!in_file(r, s.offset, s.size)) {
			seterr(eb, en,
			       "feature %d section (offset %llu, %llu bytes) lies outside "
			       "the file (%zu bytes): truncated or corrupt",
			       b, (unsigned long long)s.offset, (unsigned long long)s.size,
			       r->size);
			return HWT_ERR_BAD_FORMAT;
		}
		r->feat[b] = r->base + s.offset;
		r->feat_size[b] = (size_t)s.size;
		r->have_feat[b] = 1;
	}
	int e = 0;
	if (r->have_feat[HWT_FEAT_EVENT_DESC])
		e = parse_event_desc(r, eb, en);
	if (!e && r->have_feat[HWT_FEAT_CMDLINE])
		e = parse_cmdline(r);
	r->data_off = r->pos = h->data.offset;
	r->data_end = h->data.offset + h->data.size;
	return e;
}

static struct hwt_perf_reader *reader_alloc(void)
{
	struct hwt_perf_reader *r = calloc(1, sizeof(*r));
	if (r)
		r->fd = -1;
	return r;
}

/* Memory input (file or pipe mode); r->base/size set. */
static int open_mem(struct hwt_perf_reader *r, char *eb, size_t en)
{
	int m = check_magic(r->base, r->size, eb, en);
	if (m < 0)
		return m;
	if (m == 0)
		return validate(r, eb, en);
	r->pipe = 1;
	r->data_off = r->pos = r->meta_pos = PIPE_HDR_SIZE;
	r->data_end = r->size;
	return 0;
}

int hwt_perf_reader_open_mem(struct hwt_perf_reader **out, const void *data, size_t size,
			     char *errbuf, size_t errlen)
{
	if (!out || (!data && size))
		return HWT_ERR_INVALID;
	*out = NULL;
	seterr(errbuf, errlen, "%s", "");
	struct hwt_perf_reader *r = reader_alloc();
	if (!r)
		return HWT_ERR_NOMEM;
	r->base = data;
	r->size = size;
	int e = open_mem(r, errbuf, errlen);
	if (e) {
		hwt_perf_reader_free(r);
		return e;
	}
	*out = r;
	return 0;
}

/* read() all of n bytes unless the stream ends: bytes read, or -1. */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, p + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Map a regular file whole (from offset 0) and open it as memory. */
static int open_regular(struct hwt_perf_reader **out, int fd, size_t size, char *eb, size_t en)
{
	void *p = NULL;
	if (size > 0) {
		p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			int er = errno;
			seterr(eb, en, "cannot map the file: %s", strerror(er));
			errno = er;
			return HWT_ERR_IO;
		}
	}
	int e = hwt_perf_reader_open_mem(out, p, size, eb, en);
	if (e) {
		if (p)
			munmap(p, size);
		return e;
	}
	(*out)->mapped = p != NULL;
	return 0;
}

/* A non-seekable fd: pipe mode is read as it comes; file mode is read
 * whole into memory (it needs random access). */
static int open_stream(struct hwt_perf_reader **out, int fd, int own_fd, char *eb, size_t en)
{
	uint8_t h[PIPE_HDR_SIZE];
	ssize_t n = read_full(fd, h, sizeof(h));
	if (n < 0) {
		int er = errno;
		seterr(eb, en, "cannot read the input: %s", strerror(er));
		errno = er;
		return HWT_ERR_IO;
	}
	int m = check_magic(h, (size_t)n, eb, en);
	if (m < 0)
		return m;
	struct hwt_perf_reader *r = reader_alloc();
	if (!r)
		return HWT_ERR_NOMEM;
	if (m == 1) {
		r->pipe = 1;
		r->fd = fd;
		r->own_fd = own_fd;
		r->data_off = r->pos = r->meta_pos = PIPE_HDR_SIZE;
		r->data_end = UINT64_MAX;
		*out = r;
		return 0;
	}
	/* File mode on a pipe: slurp. */
	size_t cap = STREAM_CHUNK, len = sizeof(h);
	uint8_t *buf = malloc(cap);
	int e = 0;
	if (buf)
		memcpy(buf, h, sizeof(h));
	while (buf) {
		if (len == cap) {
			uint8_t *nb = cap * 2 > cap ? realloc(buf, cap * 2) : NULL;
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int er = errno;
			seterr(eb, en, "cannot read the input after %zu bytes: %s", len,
			       strerror(er));
			free(buf);
			free(r);
			errno = er;
			return HWT_ERR_IO;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	if (!buf) {
		seterr(eb, en,
		       "file-mode perf.data on a pipe must be read whole into memory, and %zu "
		       "bytes did not fit: write it to a file and name the file instead",
		       len);
		free(r);
		return HWT_ERR_NOMEM;
	}
	r->owned = buf;
	r->base = buf;
	r->size = len;
	e = open_mem(r, eb, en);
	if (e) {
		hwt_perf_reader_free(r);
		return e;
	}
	if (own_fd)
		close(fd);
	*out = r;
	return 0;
}

static int open_fd(struct hwt_perf_reader **out, int fd, int own_fd, char *eb, size_t en)
{
	struct stat st;
	if (fstat(fd, &st)) {
		int er = errno;
		seterr(eb, en, "%s", strerror(er));
		errno = er;
		return HWT_ERR_IO;
	}
	if (S_ISDIR(st.st_mode)) {
		seterr(eb, en, "is a directory");
		errno = EISDIR;
		return HWT_ERR_IO;
	}
	if (S_ISREG(st.st_mode)) {
		int e = open_regular(out, fd, (size_t)st.st_size, eb, en);
		if (!e && own_fd)
			close(fd);
		return e;
	}
	return open_stream(out, fd, own_fd, eb, en);
}

int hwt_perf_reader_open_fd(struct hwt_perf_reader **out, int fd, char *errbuf, size_t errlen)
{
	if (!out || fd < 0)
		return HWT_ERR_INVALID;
	*out = NULL;
	seterr(errbuf, errlen, "%s", "");
	return open_fd(out, fd, 0, errbuf, errlen);
}

int hwt_perf_reader_open(struct hwt_perf_reader **out, const char *path, char *errbuf,
			 size_t errlen)
{
	if (!out || !path)
		return HWT_ERR_INVALID;
	*out = NULL;
	seterr(errbuf, errlen, "%s", "");
	if (!strcmp(path, "-"))
		return open_fd(out, STDIN_FILENO, 0, errbuf, errlen);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int er = errno;
		seterr(errbuf, errlen, "%s", strerror(er));
		errno = er;
		return HWT_ERR_IO;
	}
	int e = open_fd(out, fd, 1, errbuf, errlen);
	if (e) {
		int er = errno;
		close(fd);
		errno = er;
	}
	return e;
}

const char *hwt_perf_reader_errmsg(const struct hwt_perf_reader *r)
{
	return r ? r->errmsg : "";
}

int hwt_perf_reader_is_pipe(const struct hwt_perf_reader *r)
{
	return r ? r->pipe : 0;
}

int hwt_perf_reader_can_rewind(const struct hwt_perf_reader *r)
{
	return r && (r->fd < 0 || r->pos == r->data_off);
}

size_t hwt_perf_reader_nr_attrs(const struct hwt_perf_reader *r)
{
	return r ? r->nr_attrs : 0;
}

const struct hwt_perf_attr_info *hwt_perf_reader_attr(const struct hwt_perf_reader *r, size_t i)
{
	return r && i < r->nr_attrs ? r->attrs[i] : NULL;
}

int hwt_perf_reader_attr_by_id(const struct hwt_perf_reader *r, uint64_t id)
{
	for (size_t i = 0; r && i < r->nr_attrs; i++)
		for (size_t j = 0; j < r->attrs[i]->nr_ids; j++)
			if (r->attrs[i]->ids[j] == id)
				return (int)i;
	return -1;
}

uint64_t hwt_perf_reader_data_size(const struct hwt_perf_reader *r)
{
	if (!r)
		return 0;
	if (!r->pipe)
		return r->hdr.data.size;
	return r->fd >= 0 ? r->pos - r->data_off : r->size - r->data_off;
}

const void *hwt_perf_reader_feature(const struct hwt_perf_reader *r, int feat, size_t *size)
{
	if (!r || feat <= 0 || feat >= HWT_FEAT_BITS || !r->have_feat[feat])
		return NULL;
	if (size)
		*size = r->feat_size[feat];
	return r->feat[feat];
}

const char *hwt_perf_reader_feature_string(const struct hwt_perf_reader *r, int feat)
{
	if (!r || feat <= 0 || feat >= HWT_FEAT_BITS || !r->have_feat[feat])
		return NULL;
	return hstring(r->feat[feat], 0, r->feat_size[feat], NULL);
}

const char *hwt_perf_reader_cmdline(const struct hwt_perf_reader *r)
{
	return r ? r->cmdline : NULL;
}

int hwt_perf_reader_nrcpus(const struct hwt_perf_reader *r, uint32_t *online, uint32_t *avail)
{
	size_t n;
	const uint8_t *p = hwt_perf_reader_feature(r, HWT_FEAT_NRCPUS, &n);
	if (!p || n < 8)
		return HWT_ERR_NOT_PRESENT;
	if (avail)
		*avail = rd32(p);
	if (online)
		*online = rd32(p + 4);
	return 0;
}

int hwt_perf_reader_total_mem(const struct hwt_perf_reader *r, uint64_t *kb)
{
	size_t n;
	const uint8_t *p = hwt_perf_reader_feature(r, HWT_FEAT_TOTAL_MEM, &n);
	if (!p || n < 8)
		return HWT_ERR_NOT_PRESENT;
	*kb = rd64(p);
	return 0;
}

int hwt_perf_reader_rewind(struct hwt_perf_reader *r)
{
	if (!r)
		return HWT_ERR_INVALID;
	if (!hwt_perf_reader_can_rewind(r)) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "cannot rewind: the input is a pipe, read once in one forward pass "
			 "(%llu bytes read); save the stream to a file to read it again",
			 (unsigned long long)r->pos);
		return HWT_ERR_NOT_SUPPORTED;
	}
	r->pos = r->data_off;
	r->dropped = 0; /* the next pass gives its pages back as the first did */
	r->done = 0;
	r->errmsg[0] = 0;
	return 0;
}

/* Fixed size of a kernel record before its variable part / trailer. */
static size_t fixed_size(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
		return sizeof(struct hwt_perf_rec_mmap);
	case PERF_RECORD_MMAP2:
		return sizeof(struct hwt_perf_rec_mmap2);
	case PERF_RECORD_COMM:
		return sizeof(struct hwt_perf_rec_comm);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return sizeof(struct hwt_perf_rec_fork);
	case PERF_RECORD_ITRACE_START:
		return sizeof(struct hwt_perf_rec_itrace_start);
	case PERF_RECORD_AUX:
		return sizeof(struct hwt_perf_rec_aux);
	case PERF_RECORD_LOST:
		return sizeof(struct hwt_perf_rec_lost);
	case PERF_RECORD_LOST_SAMPLES:
		return sizeof(struct hwt_perf_rec_lost_samples);
	case PERF_RECORD_SWITCH:
		return sizeof(struct perf_event_header);
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return sizeof(struct hwt_perf_rec_switch_cpu_wide);
	default:
		return sizeof(struct perf_event_header);
	}
}

static int attr_for_id(const struct hwt_perf_reader *r, uint64_t id)
{
	int i = hwt_perf_reader_attr_by_id(r, id);
	return i;
}

static void parse_sample(struct hwt_perf_reader *r, const uint8_t *p, size_t size,
			 struct hwt_perf_record *rec)
{
	int ai = -1;
	if (r->nr_attrs == 1)
		ai = 0;
	else if (r->id_all_identifier && size >= 16)
		ai = attr_for_id(r, rd64(p + 8));
	if (ai < 0 && r->same_sample_type && r->nr_attrs)
		ai = 0; /* layout known; find the attr by ID below */
	if (ai < 0)
		return;
	uint64_t st = r->attrs[ai]->attr.sample_type;
	const uint8_t *q = p + 8, *end = p + size;
	uint64_t v[9];
	static const uint64_t order[9] = {
	    PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,   PERF_SAMPLE_TID,
	    PERF_SAMPLE_TIME,	    PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
	    PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,  PERF_SAMPLE_PERIOD};
	memset(v, 0, sizeof(v));
	for (int i = 0; i < 9; i++) {
		if (!(st & order[i]))
			continue;
		if (end - q < 8)
			return;
		v[i] = rd64(q);
		q += 8;
	}
	rec->sid.identifier = v[0];
	rec->sample_ip = v[1];
	rec->sid.pid = (uint32_t)v[2];
	rec->sid.tid = (uint32_t)(v[2] >> 32);
	rec->sid.time = v[3];
	rec->sample_addr = v[4];
	rec->sid.id = (st & PERF_SAMPLE_ID) ? v[5] : v[0];
	rec->sid.stream_id = v[6];
	rec->sid.cpu = (uint32_t)v[7];
	rec->sid.res = (uint32_t)(v[7] >> 32);
	rec->sample_period = v[8];
	if (r->nr_attrs > 1 && (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))) {
		int k = attr_for_id(r, rec->sid.id);
		if (k >= 0)
			ai = k;
	}
	rec->attr_index = ai;
	rec->have_sid = 1;
}

static void parse_trailer(struct hwt_perf_reader *r, const uint8_t *p, size_t size,
			  struct hwt_perf_record *rec)
{
	int ai = -1;
	if (r->nr_attrs == 1)
		ai = 0;
	else if (r->id_all_identifier && size >= 16)
		ai = attr_for_id(r, rd64(p + size - 8));
	else if (r->same_sample_type && r->nr_attrs)
		ai = 0;
	if (ai < 0 || !r->attrs[ai]->attr.sample_id_all)
		return;
	uint64_t st = r->attrs[ai]->attr.sample_type;
	size_t n = hwt_perf_sample_id_size(st);
	if (size < fixed_size(rec->type) + n)
		return;
	hwt_perf_sample_id_decode(p + size - n, st, &rec->sid);
	if (r->nr_attrs > 1 && (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))) {
		int k = attr_for_id(r, rec->sid.id);
		if (k >= 0)
			ai = k;
	}
	rec->attr_index = ai;
	rec->have_sid = 1;
}

/* The record at p (header h, its payload right after it, already checked
 * to be there) into rec. */
static void fill(struct hwt_perf_reader *r, const uint8_t *p, const struct perf_event_header *h,
		 uint64_t extra, struct hwt_perf_record *rec)
{
	rec->hdr = (const struct perf_event_header *)(const void *)p;
	rec->type = h->type;
	rec->misc = h->misc;
	rec->size = h->size;
	if (h->type == HWT_PERF_RECORD_AUXTRACE) {
		struct hwt_perf_rec_auxtrace a;
		memcpy(&a, p, sizeof(a));
		rec->aux_data = p + h->size;
		rec->aux_size = a.size;
		rec->aux_offset = a.offset;
		rec->aux_reference = a.reference;
		rec->aux_idx = a.idx;
		rec->sid.pid = a.tid; /* perf has no pid here; tid doubles */
		rec->sid.tid = a.tid;
		rec->sid.cpu = a.cpu;
	} else if (h->type == HWT_PERF_RECORD_HEADER_TRACING_DATA) {
		rec->aux_data = p + h->size;
		rec->aux_size = extra;
	} else if (h->type == PERF_RECORD_SAMPLE) {
		parse_sample(r, p, h->size, rec);
	} else if (h->type < HWT_PERF_RECORD_HEADER_ATTR) {
		parse_trailer(r, p, h->size, rec);
	}
}

/* The pages of a mapped file more than DROP_LAG bytes behind the reading
 * position are given back (MADV_DONTNEED) every DROP_STEP bytes, so the
 * memory a pass over the file uses does not grow with the file.  The
 * mapping is private and read-only: a later access (a consumer still
 * holding a record, a rewind) faults the same bytes in again from the
 * page cache. */
#define DROP_LAG (8u << 20)
#define DROP_STEP (8u << 20)

static void drop_behind(struct hwt_perf_reader *r)
{
	if (!r->mapped || r->pos < r->dropped + DROP_LAG + DROP_STEP)
		return;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t mask = pg > 0 ? (uint64_t)pg - 1 : 4095;
	uint64_t from = r->dropped & ~mask, to = (r->pos - DROP_LAG) & ~mask;
	if (to > from)
		(void)madvise((void *)(uintptr_t)(r->base + from), to - from, MADV_DONTNEED);
	r->dropped = to;
}

static int file_next(struct hwt_perf_reader *r, struct hwt_perf_record *rec)
{
	if (r->pos >= r->data_end)
		return 0;
	if (r->data_end - r->pos < sizeof(struct perf_event_header)) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "record at offset %#llx: truncated header (data section ends at %#llx)",
			 (unsigned long long)r->pos, (unsigned long long)r->data_end);
		r->pos = r->data_end;
		return HWT_ERR_BAD_FORMAT;
	}
	const uint8_t *p = r->base + r->pos;
	struct perf_event_header h;
	memcpy(&h, p, sizeof(h));
	if (h.size < sizeof(h) || h.size > r->data_end - r->pos) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "record at offset %#llx (type %u): bad size %u (data section ends at "
			 "%#llx); the file is truncated or corrupt",
			 (unsigned long long)r->pos, h.type, h.size,
			 (unsigned long long)r->data_end);
		r->pos = r->data_end;
		return HWT_ERR_BAD_FORMAT;
	}
	uint64_t advance = h.size;
	if (h.type == HWT_PERF_RECORD_AUXTRACE) {
		struct hwt_perf_rec_auxtrace a;
		if (h.size < sizeof(a)) {
			snprintf(r->errmsg, sizeof(r->errmsg),
				 "AUXTRACE record at offset %#llx is too short (%u bytes)",
				 (unsigned long long)r->pos, h.size);
			r->pos = r->data_end;
			return HWT_ERR_BAD_FORMAT;
		}
		memcpy(&a, p, sizeof(a));
		if (a.size > r->data_end - r->pos - h.size) {
			snprintf(r->errmsg, sizeof(r->errmsg),
				 "AUXTRACE record at offset %#llx: its %llu-byte payload runs past "
				 "the data section end (%#llx); the file is truncated",
				 (unsigned long long)r->pos, (unsigned long long)a.size,
				 (unsigned long long)r->data_end);
			r->pos = r->data_end;
			return HWT_ERR_BAD_FORMAT;
		}
		advance += a.size;
	}
	rec->file_offset = r->pos;
	fill(r, p, &h, 0, rec);
	r->pos += advance;
	drop_behind(r);
	return 1;
}

/* ---- pipe mode ---- */

/* Make n bytes from pos readable at *p: 0 ok, 1 the input ends before
 * (*have: the bytes there), < 0 a read error or no memory (errmsg set).
 * From an fd the buffer grows only when full, to at most n rounded up. */
static int src_get(struct hwt_perf_reader *r, uint64_t n, const uint8_t **p, uint64_t *have)
{
	if (r->fd < 0) {
		*p = r->base + r->pos;
		*have = r->data_end - r->pos;
		return *have < n;
	}
	while (r->len - r->start < n && !r->eof) {
		if (r->start) {
			memmove(r->buf, r->buf + r->start, r->len - r->start);
			r->len -= r->start;
			r->start = 0;
		}
		if (r->len == r->cap) {
			size_t want =
			    n > SIZE_MAX - STREAM_CHUNK
				? SIZE_MAX
				: (size_t)((n + STREAM_CHUNK - 1) / STREAM_CHUNK * STREAM_CHUNK);
			size_t c = r->cap ? r->cap * 2 : STREAM_CHUNK;
			if (c > want || c < r->cap)
				c = want;
			uint8_t *b = realloc(r->buf, c);
			if (!b) {
				snprintf(
				    r->errmsg, sizeof(r->errmsg),
				    "record at offset %#llx: no memory for %zu bytes of buffer",
				    (unsigned long long)r->pos, c);
				return HWT_ERR_NOMEM;
			}
			r->buf = b;
			r->cap = c;
		}
		ssize_t k = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			snprintf(
			    r->errmsg, sizeof(r->errmsg), "reading the stream at offset %#llx: %s",
			    (unsigned long long)(r->pos + (r->len - r->start)), strerror(errno));
			return HWT_ERR_IO;
		}
		if (k == 0)
			r->eof = 1;
		r->len += (size_t)k;
	}
	*p = r->buf + r->start;
	*have = r->len - r->start;
	return *have < n;
}

static void src_skip(struct hwt_perf_reader *r, uint64_t n)
{
	r->pos += n;
	if (r->fd >= 0)
		r->start += (size_t)n;
}

/* HEADER_ATTR, HEADER_FEATURE, HEADER_BUILD_ID: take what they define. */
static int take_meta(struct hwt_perf_reader *r, const uint8_t *p, const struct perf_event_header *h)
{
	char *eb = r->errmsg;
	size_t en = sizeof(r->errmsg);
	unsigned long long at = (unsigned long long)r->pos;
	if (h->type == HWT_PERF_RECORD_HEADER_ATTR) {
		uint32_t asz = h->size >= 16 ? rd32(p + 12) : 0;
		if (asz < PERF_ATTR_SIZE_VER0 || asz > h->size - 8u) {
			seterr(eb, en,
			       "HEADER_ATTR record at offset %#llx: bad attr size %u (record %u "
			       "bytes); the stream is corrupt",
			       at, asz, h->size);
			return HWT_ERR_BAD_FORMAT;
		}
		if (r->nr_attrs >= MAX_ATTRS) {
			seterr(eb, en, "HEADER_ATTR record at offset %#llx: too many attrs (%zu)",
			       at, r->nr_attrs + 1);
			return HWT_ERR_BAD_FORMAT;
		}
		struct hwt_perf_attr_info *a = attr_new(r);
		if (!a)
			return HWT_ERR_NOMEM;
		memcpy(&a->attr, p + 8, asz < sizeof(a->attr) ? asz : sizeof(a->attr));
		size_t nids = (h->size - 8u - asz) / 8;
		if (nids) {
			uint64_t *ids = malloc(nids * 8);
			if (!ids)
				return HWT_ERR_NOMEM;
			memcpy(ids, p + 8 + asz, nids * 8);
			r->id_copies[r->nr_attrs - 1] = ids;
			a->ids = ids;
			a->nr_ids = nids;
		}
		attrs_summary(r);
		return r->have_feat[HWT_FEAT_EVENT_DESC] ? parse_event_desc(r, eb, en) : 0;
	}
	if (h->type == HWT_PERF_RECORD_HEADER_FEATURE) {
		if (h->size < 16) {
			seterr(eb, en,
			       "HEADER_FEATURE record at offset %#llx is too short (%u bytes)", at,
			       h->size);
			return HWT_ERR_BAD_FORMAT;
		}
		uint64_t f = rd64(p + 8);
		if (f == 0 || f >= HWT_FEAT_BITS || r->have_feat[f])
			return 0; /* unknown, or again: the first one stays */
		size_t n = h->size - 16u;
		uint8_t *c = malloc(n ? n : 1);
		if (!c)
			return HWT_ERR_NOMEM;
		memcpy(c, p + 16, n);
		r->feat_own[f] = c;
		r->feat[f] = c;
		r->feat_size[f] = n;
		r->have_feat[f] = 1;
		if (f == HWT_FEAT_EVENT_DESC)
			return parse_event_desc(r, eb, en);
		if (f == HWT_FEAT_CMDLINE)
			return parse_cmdline(r);
		return 0;
	}
	if (h->type == HWT_PERF_RECORD_HEADER_BUILD_ID) {
		const int b = HWT_FEAT_BUILD_ID;
		if (r->have_feat[b] && !r->bid_cap)
			return 0; /* a HEADER_FEATURE gave the whole list */
		size_t need = r->feat_size[b] + h->size;
		if (need > r->bid_cap) {
			size_t c = r->bid_cap ? r->bid_cap * 2 : 4096;
			while (c < need)
				c *= 2;
			uint8_t *nb = realloc(r->feat_own[b], c);
			if (!nb)
				return HWT_ERR_NOMEM;
			r->feat_own[b] = nb;
			r->bid_cap = c;
		}
		memcpy(r->feat_own[b] + r->feat_size[b], p, h->size);
		r->feat_size[b] = need;
		r->feat[b] = r->feat_own[b];
		r->have_feat[b] = 1;
	}
	return 0;
}

/* The stream ended (or could not be read) inside the record at pos. */
static int pipe_short(struct hwt_perf_reader *r, int e, const struct perf_event_header *h,
		      uint64_t need, uint64_t have)
{
	if (e < 0)
		return e;
	if (!h)
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "record at offset %#llx: the stream ends inside its header (%llu of 8 "
			 "bytes); it is truncated",
			 (unsigned long long)r->pos, (unsigned long long)have);
	else
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "%s record at offset %#llx: the stream ends after %llu of its %llu bytes "
			 "(header and payload); it is truncated",
			 hwt_perf_record_name(h->type), (unsigned long long)r->pos,
			 (unsigned long long)have, (unsigned long long)need);
	return HWT_ERR_BAD_FORMAT;
}

static int pipe_fail(struct hwt_perf_reader *r, int e)
{
	r->done = 1;
	return e;
}

static int pipe_next(struct hwt_perf_reader *r, struct hwt_perf_record *rec)
{
	const uint8_t *p;
	uint64_t have, extra = 0;
	if (r->done)
		return 0;
	int e = src_get(r, sizeof(struct perf_event_header), &p, &have);
	if (e == 1 && have == 0) {
		r->done = 1;
		return 0;
	}
	if (e)
		return pipe_fail(r, pipe_short(r, e, NULL, 8, have));
	struct perf_event_header h;
	memcpy(&h, p, sizeof(h));
	if (h.size < sizeof(h)) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "record at offset %#llx (type %u): bad size %u; the stream is corrupt",
			 (unsigned long long)r->pos, h.type, h.size);
		return pipe_fail(r, HWT_ERR_BAD_FORMAT);
	}
	if (h.type == HWT_PERF_RECORD_AUXTRACE || h.type == HWT_PERF_RECORD_HEADER_TRACING_DATA) {
		unsigned min =
		    h.type == HWT_PERF_RECORD_AUXTRACE ? sizeof(struct hwt_perf_rec_auxtrace) : 12;
		if (h.size < min) {
			snprintf(r->errmsg, sizeof(r->errmsg),
				 "%s record at offset %#llx is too short (%u bytes)",
				 hwt_perf_record_name(h.type), (unsigned long long)r->pos, h.size);
			return pipe_fail(r, HWT_ERR_BAD_FORMAT);
		}
		e = src_get(r, h.size, &p, &have);
		if (e)
			return pipe_fail(r, pipe_short(r, e, &h, h.size, have));
		extra = h.type == HWT_PERF_RECORD_AUXTRACE ? rd64(p + 8) : rd32(p + 8);
		if (extra > UINT64_MAX / 2) {
			snprintf(r->errmsg, sizeof(r->errmsg),
				 "%s record at offset %#llx: payload size %#llx is impossible; the "
				 "stream is corrupt",
				 hwt_perf_record_name(h.type), (unsigned long long)r->pos,
				 (unsigned long long)extra);
			return pipe_fail(r, HWT_ERR_BAD_FORMAT);
		}
	}
	uint64_t total = h.size + extra;
	e = src_get(r, total, &p, &have);
	if (e)
		return pipe_fail(r, pipe_short(r, e, &h, total, have));
	if (r->pos >= r->meta_pos) {
		e = take_meta(r, p, &h);
		if (e) {
			if (e == HWT_ERR_NOMEM)
				snprintf(r->errmsg, sizeof(r->errmsg),
					 "%s record at offset %#llx: out of memory",
					 hwt_perf_record_name(h.type), (unsigned long long)r->pos);
			return pipe_fail(r, e);
		}
		r->meta_pos = r->pos + total;
	}
	rec->file_offset = r->pos;
	fill(r, p, &h, extra, rec);
	src_skip(r, total);
	return 1;
}

int hwt_perf_reader_next(struct hwt_perf_reader *r, struct hwt_perf_record *rec)
{
	if (!r || !rec)
		return HWT_ERR_INVALID;
	memset(rec, 0, sizeof(*rec));
	rec->attr_index = -1;
	return r->pipe ? pipe_next(r, rec) : file_next(r, rec);
}

const char *hwt_perf_record_name(uint32_t type)
{
	static const char *const kernel[] = {
	    [PERF_RECORD_MMAP] = "MMAP",
	    [PERF_RECORD_LOST] = "LOST",
	    [PERF_RECORD_COMM] = "COMM",
	    [PERF_RECORD_EXIT] = "EXIT",
	    [PERF_RECORD_THROTTLE] = "THROTTLE",
	    [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	    [PERF_RECORD_FORK] = "FORK",
	    [PERF_RECORD_READ] = "READ",
	    [PERF_RECORD_SAMPLE] = "SAMPLE",
	    [PERF_RECORD_MMAP2] = "MMAP2",
	    [PERF_RECORD_AUX] = "AUX",
	    [PERF_RECORD_ITRACE_START] = "ITRACE_START",
	    [PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	    [PERF_RECORD_SWITCH] = "SWITCH",
	    [PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	    [PERF_RECORD_NAMESPACES] = "NAMESPACES",
	    [PERF_RECORD_KSYMBOL] = "KSYMBOL",
	    [PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	    [PERF_RECORD_CGROUP] = "CGROUP",
	    [PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	    [PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	};
	static const char *const user[] = {
	    "HEADER_ATTR",
	    "HEADER_EVENT_TYPE",
	    "HEADER_TRACING_DATA",
	    "HEADER_BUILD_ID",
	    "FINISHED_ROUND",
	    "ID_INDEX",
	    "AUXTRACE_INFO",
	    "AUXTRACE",
	    "AUXTRACE_ERROR",
	    "THREAD_MAP",
	    "CPU_MAP",
	    "STAT_CONFIG",
	    "STAT",
	    "STAT_ROUND",
	    "EVENT_UPDATE",
	    "TIME_CONV",
	    "HEADER_FEATURE",
	    "COMPRESSED",
	    "FINISHED_INIT",
	};
	if (type < sizeof(kernel) / sizeof(kernel[0]) && kernel[type])
		return kernel[type];
	if (type >= 64 && type - 64 < sizeof(user) / sizeof(user[0]))
		return user[type - 64];
	return "UNKNOWN";
}
