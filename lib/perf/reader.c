/* lib/perf/reader.c - zero-copy perf.data (PERFILE2) reader.
 *
 * Design: open maps the whole file read-only (or takes caller memory),
 * validates the header, the attrs section, every attr's id array and the
 * feature table against the file size, and copies the attrs into
 * zero-extended struct perf_event_attr.  Records are then walked in file
 * order by hwt_perf_reader_next(): each header's size is checked against
 * the data section before anything else is read, AUXTRACE payloads are
 * returned as pointers into the mapping, and the sample_id trailer is
 * decoded with the layout of the record's attr (found by IDENTIFIER/ID
 * when there are several attrs).  All reads go through memcpy, so
 * unaligned or hostile input is safe.  Limits: host-endian PERFILE2 files
 * only (no pipe mode, no byte-swapped files, no PERF_RECORD_COMPRESSED).
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

struct hwt_perf_reader {
	const uint8_t *base;
	size_t size;
	int mapped;
	struct hwt_perf_file_header hdr;
	struct hwt_perf_attr_info *attrs;
	size_t nr_attrs;
	uint64_t **id_copies; /* per attr, when the file's array is unaligned */
	struct hwt_perf_file_section feat[HWT_FEAT_BITS];
	uint8_t have_feat[HWT_FEAT_BITS];
	char *names; /* storage of EVENT_DESC names */
	char *cmdline;
	uint64_t data_off, data_end, pos;
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
	if (r->id_copies)
		for (size_t i = 0; i < r->nr_attrs; i++)
			free(r->id_copies[i]);
	free(r->id_copies);
	free(r->attrs);
	free(r->names);
	free(r->cmdline);
	free(r);
}

/* Length of a perf_header_string at off (section end at end): the string
 * pointer or NULL; *next set past it. */
static const char *hstring(const struct hwt_perf_reader *r, uint64_t off, uint64_t end,
			   uint64_t *next)
{
	if (off > end || end - off < 4)
		return NULL;
	uint32_t len = rd32(r->base + off);
	if (len == 0 || len > end - off - 4)
		return NULL;
	const char *s = (const char *)r->base + off + 4;
	if (!memchr(s, 0, len))
		return NULL;
	if (next)
		*next = off + 4 + len;
	return s;
}

static int parse_event_desc(struct hwt_perf_reader *r, char *eb, size_t en)
{
	const struct hwt_perf_file_section *s = &r->feat[HWT_FEAT_EVENT_DESC];
	uint64_t off = s->offset, end = s->offset + s->size;
	if (s->size < 8)
		return 0;
	uint32_t nr = rd32(r->base + off), asz = rd32(r->base + off + 4);
	off += 8;
	if (nr != r->nr_attrs || asz < PERF_ATTR_SIZE_VER0 || asz > 4096)
		return 0; /* not matching the attrs: ignore names */
	size_t total = 0;
	const char *names[4096];
	if (nr > 4096)
		return 0;
	for (uint32_t i = 0; i < nr; i++) {
		if (end - off < (uint64_t)asz + 4) {
			seterr(eb, en, "EVENT_DESC feature is truncated at event %u", i);
			return HWT_ERR_BAD_FORMAT;
		}
		off += asz;
		uint32_t nids = rd32(r->base + off);
		off += 4;
		names[i] = hstring(r, off, end, &off);
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
		r->attrs[i].name = p;
		p += l;
	}
	return 0;
}

static int parse_cmdline(struct hwt_perf_reader *r)
{
	const struct hwt_perf_file_section *s = &r->feat[HWT_FEAT_CMDLINE];
	uint64_t off = s->offset, end = s->offset + s->size;
	if (s->size < 4)
		return 0;
	uint32_t nr = rd32(r->base + off);
	off += 4;
	uint64_t o = off;
	size_t total = 1;
	for (uint32_t i = 0; i < nr; i++) {
		const char *a = hstring(r, o, end, &o);
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
		const char *a = hstring(r, o, end, &o);
		if (i)
			strcat(r->cmdline, " ");
		strcat(r->cmdline, a);
	}
	return 0;
}

static int validate(struct hwt_perf_reader *r, char *eb, size_t en)
{
	if (r->size < 16) {
		seterr(eb, en, "file is too short for a perf.data header (%zu bytes)", r->size);
		return HWT_ERR_BAD_FORMAT;
	}
	uint64_t magic = rd64(r->base);
	if (magic == __builtin_bswap64(HWT_PERF_MAGIC2)) {
		seterr(eb, en,
		       "file has the other byte order (PERFILE2 byte-swapped), not supported");
		return HWT_ERR_NOT_SUPPORTED;
	}
	if (!memcmp(r->base, "PERFFILE", 8)) {
		seterr(eb, en, "old perf.data version 1 (PERFFILE) is not supported");
		return HWT_ERR_NOT_SUPPORTED;
	}
	if (magic != HWT_PERF_MAGIC2) {
		seterr(eb, en, "not a perf.data file (no PERFILE2 magic)");
		return HWT_ERR_BAD_FORMAT;
	}
	if (rd64(r->base + 8) == 16) {
		seterr(eb, en,
		       "pipe-mode perf.data (perf record -o -) is not supported; "
		       "record to a file instead");
		return HWT_ERR_NOT_SUPPORTED;
	}
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
	if (nattrs > 4096) {
		seterr(eb, en, "too many attrs (%zu)", nattrs);
		return HWT_ERR_BAD_FORMAT;
	}
	r->attrs = calloc(nattrs + 1, sizeof(*r->attrs));
	r->id_copies = calloc(nattrs + 1, sizeof(*r->id_copies));
	if (!r->attrs || !r->id_copies)
		return HWT_ERR_NOMEM;
	r->nr_attrs = nattrs;
	size_t asz = h->attr_size - sizeof(struct hwt_perf_file_section);
	for (size_t i = 0; i < nattrs; i++) {
		const uint8_t *p = r->base + h->attrs.offset + i * h->attr_size;
		struct hwt_perf_attr_info *a = &r->attrs[i];
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
	r->id_all_identifier = nattrs > 0;
	r->same_sample_type = 1;
	for (size_t i = 0; i < nattrs; i++) {
		if (!(r->attrs[i].attr.sample_type & PERF_SAMPLE_IDENTIFIER))
			r->id_all_identifier = 0;
		if (r->attrs[i].attr.sample_type != r->attrs[0].attr.sample_type ||
		    r->attrs[i].attr.sample_id_all != r->attrs[0].attr.sample_id_all)
			r->same_sample_type = 0;
	}

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
		r->feat[b] = s;
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

int hwt_perf_reader_open_mem(struct hwt_perf_reader **out, const void *data, size_t size,
			     char *errbuf, size_t errlen)
{
	if (!out || (!data && size))
		return HWT_ERR_INVALID;
	*out = NULL;
	seterr(errbuf, errlen, "%s", "");
	struct hwt_perf_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return HWT_ERR_NOMEM;
	r->base = data;
	r->size = size;
	int e = validate(r, errbuf, errlen);
	if (e) {
		hwt_perf_reader_free(r);
		return e;
	}
	*out = r;
	return 0;
}

int hwt_perf_reader_open(struct hwt_perf_reader **out, const char *path, char *errbuf,
			 size_t errlen)
{
	if (!out || !path)
		return HWT_ERR_INVALID;
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		seterr(errbuf, errlen, "%s", strerror(errno));
		return HWT_ERR_IO;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		int en = errno;
		close(fd);
		seterr(errbuf, errlen, "%s",
		       S_ISREG(st.st_mode) ? strerror(en) : "not a regular file");
		errno = en;
		return HWT_ERR_IO;
	}
	void *p = NULL;
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			int en = errno;
			close(fd);
			seterr(errbuf, errlen, "cannot map the file: %s", strerror(en));
			errno = en;
			return HWT_ERR_IO;
		}
	}
	close(fd);
	int e = hwt_perf_reader_open_mem(out, p, (size_t)st.st_size, errbuf, errlen);
	if (e) {
		if (p)
			munmap(p, (size_t)st.st_size);
		return e;
	}
	(*out)->mapped = p != NULL;
	return 0;
}

const char *hwt_perf_reader_errmsg(const struct hwt_perf_reader *r)
{
	return r ? r->errmsg : "";
}

size_t hwt_perf_reader_nr_attrs(const struct hwt_perf_reader *r)
{
	return r ? r->nr_attrs : 0;
}

const struct hwt_perf_attr_info *hwt_perf_reader_attr(const struct hwt_perf_reader *r, size_t i)
{
	return r && i < r->nr_attrs ? &r->attrs[i] : NULL;
}

int hwt_perf_reader_attr_by_id(const struct hwt_perf_reader *r, uint64_t id)
{
	for (size_t i = 0; r && i < r->nr_attrs; i++)
		for (size_t j = 0; j < r->attrs[i].nr_ids; j++)
			if (r->attrs[i].ids[j] == id)
				return (int)i;
	return -1;
}

uint64_t hwt_perf_reader_data_size(const struct hwt_perf_reader *r)
{
	return r ? r->hdr.data.size : 0;
}

const void *hwt_perf_reader_feature(const struct hwt_perf_reader *r, int feat, size_t *size)
{
	if (!r || feat <= 0 || feat >= HWT_FEAT_BITS || !r->have_feat[feat])
		return NULL;
	if (size)
		*size = r->feat[feat].size;
	return r->base + r->feat[feat].offset;
}

const char *hwt_perf_reader_feature_string(const struct hwt_perf_reader *r, int feat)
{
	if (!r || feat <= 0 || feat >= HWT_FEAT_BITS || !r->have_feat[feat])
		return NULL;
	return hstring(r, r->feat[feat].offset, r->feat[feat].offset + r->feat[feat].size, NULL);
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

void hwt_perf_reader_rewind(struct hwt_perf_reader *r)
{
	if (r) {
		r->pos = r->data_off;
		r->errmsg[0] = 0;
	}
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
	uint64_t st = r->attrs[ai].attr.sample_type;
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
	if (ai < 0 || !r->attrs[ai].attr.sample_id_all)
		return;
	uint64_t st = r->attrs[ai].attr.sample_type;
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

int hwt_perf_reader_next(struct hwt_perf_reader *r, struct hwt_perf_record *rec)
{
	if (!r || !rec)
		return HWT_ERR_INVALID;
	memset(rec, 0, sizeof(*rec));
	rec->attr_index = -1;
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
	rec->file_offset = r->pos;
	rec->hdr = (const struct perf_event_header *)(const void *)p;
	rec->type = h.type;
	rec->misc = h.misc;
	rec->size = h.size;
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
		rec->aux_data = p + h.size;
		rec->aux_size = a.size;
		rec->aux_offset = a.offset;
		rec->aux_reference = a.reference;
		rec->aux_idx = a.idx;
		rec->sid.pid = a.tid; /* perf has no pid here; tid doubles */
		rec->sid.tid = a.tid;
		rec->sid.cpu = a.cpu;
		advance += a.size;
	} else if (h.type == PERF_RECORD_SAMPLE) {
		parse_sample(r, p, h.size, rec);
	} else if (h.type < HWT_PERF_RECORD_HEADER_ATTR) {
		parse_trailer(r, p, h.size, rec);
	}
	r->pos += advance;
	return 1;
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
