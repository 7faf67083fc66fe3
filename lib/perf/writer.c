/* lib/perf/writer.c - streaming perf.data (PERFILE2) writer.
 *
 * Design: the writer owns a 64 KiB buffer and writes with pwrite at
 * offsets it tracks, so it works on any seekable fd and never depends on
 * the fd's file position.  File layout (as perf's own): the 104-byte
 * header, then each attr's id array, then the attrs section, then the
 * data section (records in the order written), then the feature section
 * table and feature contents.  The header, ids and attrs are laid down
 * when the first record is written (so all attrs must be added before
 * that); finish() writes the features and rewrites the header with the
 * final data size and feature bitmap.  Errors are sticky: after a failed
 * write every call returns the same error.  Feature defaults come from
 * this machine (uname, /proc/cpuinfo, /proc/meminfo, sysfs).
 *
 * Pipe mode (an fd that is not a regular file or block device, or the
 * path "-": standard output): perf's stream layout, written strictly in
 * order with write(): the 16-byte pipe header, then with the first record
 * one HEADER_ATTR record per attr (attr + ids) and one HEADER_FEATURE
 * record per feature (the same payloads as the file's sections), then the
 * records; finish() adds the build-ids as HEADER_BUILD_ID records.  There
 * is no AUXTRACE index (perf has none in pipe mode) and PMUs added after
 * the first record are not written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <dirent.h>

#include "hwt/perf_data.h"
#include "perf/internal.h"

#define WBUF_SIZE (64 * 1024)
#define DIRECT_MIN (16 * 1024) /* payload parts at least this big skip the buffer */
#define MAX_STR 4096

struct wattr {
	struct perf_event_attr attr;
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct wpmu {
	char *name;
	uint32_t type;
};

enum wstate { W_ALLOC, W_OPEN, W_DATA, W_DONE };

struct hwt_perf_writer {
	struct hwt_perf_writer_config cfg;
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	char **argv;
	int argc;
	int fd, own_fd;
	int pipe; /* pipe mode: sequential write(), no header rewrite */
	enum wstate state;
	int err;
	uint64_t pos; /* file offset of buf[0] */
	uint64_t data_offset;
	uint8_t *buf;
	size_t blen;
	struct wattr *attrs;
	size_t nr_attrs;
	struct wpmu *pmus;
	size_t nr_pmus;
	struct hwt_perf_file_section *auxidx; /* AUXTRACE records: offset, size */
	size_t nr_auxidx, cap_auxidx;
	uint8_t *bids; /* the BUILD_ID feature's records as written */
	size_t bids_len;
	struct {
		int feat;
		uint8_t *p;
		size_t n;
	} xfeat[HWT_FEAT_BITS - HWT_FEAT_HWT_FIRST]; /* hwt's own, by number */
	size_t nxfeat;
};

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

void hwt_perf_writer_config_init(struct hwt_perf_writer_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

struct hwt_perf_writer *hwt_perf_writer_alloc(const struct hwt_perf_writer_config *cfg)
{
	struct hwt_perf_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	hwt_perf_writer_config_init(&w->cfg);
	if (cfg) {
		size_t n = cfg->size < sizeof(w->cfg) ? cfg->size : sizeof(w->cfg);
		if (n < offsetof(struct hwt_perf_writer_config, mode)) {
			free(w);
			return NULL;
		}
		memcpy(&w->cfg, cfg, n);
		w->cfg.size = sizeof(w->cfg);
	}
	w->fd = -1;
	w->buf = malloc(WBUF_SIZE);
	w->hostname = xstrdup(w->cfg.hostname);
	w->osrelease = xstrdup(w->cfg.osrelease);
	w->version = xstrdup(w->cfg.version);
	w->arch = xstrdup(w->cfg.arch);
	w->cpudesc = xstrdup(w->cfg.cpudesc);
	w->cpuid = xstrdup(w->cfg.cpuid);
	if (w->cfg.argc > 0 && w->cfg.argv) {
		w->argv = calloc((size_t)w->cfg.argc, sizeof(char *));
		if (w->argv) {
			w->argc = w->cfg.argc;
			for (int i = 0; i < w->argc; i++)
				w->argv[i] = xstrdup(w->cfg.argv[i] ? w->cfg.argv[i] : "");
		}
	}
	/* The caller's pointers are not kept. */
	w->cfg.hostname = w->cfg.osrelease = w->cfg.version = NULL;
	w->cfg.arch = w->cfg.cpudesc = w->cfg.cpuid = NULL;
	w->cfg.argv = NULL;
	if (!w->buf) {
		hwt_perf_writer_free(w);
		return NULL;
	}
	return w;
}

void hwt_perf_writer_free(struct hwt_perf_writer *w)
{
	if (!w)
		return;
	if (w->own_fd && w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	for (size_t i = 0; i < w->nr_pmus; i++)
		free(w->pmus[i].name);
	free(w->pmus);
	free(w->auxidx);
	free(w->bids);
	for (size_t i = 0; i < w->nxfeat; i++)
		free(w->xfeat[i].p);
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	free(w->hostname);
	free(w->osrelease);
	free(w->version);
	free(w->arch);
	free(w->cpudesc);
	free(w->cpuid);
	free(w->buf);
	free(w);
}

int hwt_perf_writer_open_fd(struct hwt_perf_writer *w, int fd)
{
	if (!w || fd < 0 || w->state != W_ALLOC)
		return HWT_ERR_INVALID;
	struct stat st;
	if (fstat(fd, &st))
		return HWT_ERR_IO;
	w->pipe = !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
	w->fd = fd;
	w->own_fd = 0;
	w->state = W_OPEN;
	return 0;
}

int hwt_perf_writer_is_pipe(const struct hwt_perf_writer *w)
{
	return w ? w->pipe : 0;
}

int hwt_perf_writer_open(struct hwt_perf_writer *w, const char *path)
{
	if (!w || !path || w->state != W_ALLOC)
		return HWT_ERR_INVALID;
	if (!strcmp(path, "-"))
		return hwt_perf_writer_open_fd(w, STDOUT_FILENO);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      w->cfg.mode ? (mode_t)w->cfg.mode : 0600);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? HWT_ERR_PERM : HWT_ERR_IO;
	w->fd = fd;
	w->own_fd = 1;
	w->state = W_OPEN;
	return 0;
}

int hwt_perf_writer_add_attr(struct hwt_perf_writer *w, const struct perf_event_attr *attr,
			     const char *name, const uint64_t *ids, size_t nr_ids)
{
	if (!w || !attr || (nr_ids && !ids) || w->state > W_OPEN)
		return HWT_ERR_INVALID;
	if (w->nr_attrs >= 4096)
		return HWT_ERR_INVALID;
	struct wattr *a = realloc(w->attrs, (w->nr_attrs + 1) * sizeof(*a));
	if (!a)
		return HWT_ERR_NOMEM;
	w->attrs = a;
	a += w->nr_attrs;
	memset(a, 0, sizeof(*a));
	/* attr->size may be smaller than ours (older callers): copy that much. */
	size_t n = attr->size && attr->size < sizeof(a->attr) ? attr->size : sizeof(a->attr);
	memcpy(&a->attr, attr, n);
	a->attr.size = sizeof(a->attr);
	a->name = xstrdup(name ? name : "");
	if (nr_ids) {
		a->ids = malloc(nr_ids * sizeof(uint64_t));
		if (!a->ids || !a->name) {
			free(a->ids);
			free(a->name);
			return HWT_ERR_NOMEM;
		}
		memcpy(a->ids, ids, nr_ids * sizeof(uint64_t));
	}
	a->nr_ids = nr_ids;
	return (int)w->nr_attrs++;
}

int hwt_perf_writer_add_pmu(struct hwt_perf_writer *w, const char *name, uint32_t type)
{
	if (!w || !name || w->state == W_DONE)
		return HWT_ERR_INVALID;
	struct wpmu *p = realloc(w->pmus, (w->nr_pmus + 1) * sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	w->pmus = p;
	p[w->nr_pmus].name = strdup(name);
	if (!p[w->nr_pmus].name)
		return HWT_ERR_NOMEM;
	p[w->nr_pmus].type = type;
	w->nr_pmus++;
	return 0;
}

/* ---- low-level output ---- */

/* Write p[0, n) at off: pwrite on a file; on a pipe write() in order
 * (off is then always the stream's end). */
static int pwrite_all(const struct hwt_perf_writer *w, const void *p, size_t n, uint64_t off)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = w->pipe ? write(w->fd, b, n) : pwrite(w->fd, b, n, (off_t)off);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return HWT_ERR_IO;
		}
		if (k == 0)
			return HWT_ERR_IO;
		b += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

static int wflush(struct hwt_perf_writer *w)
{
	if (w->err)
		return w->err;
	if (!w->blen)
		return 0;
	int e = pwrite_all(w, w->buf, w->blen, w->pos);
	if (e)
		return w->err = e;
	w->pos += w->blen;
	w->blen = 0;
	return 0;
}

static int emit(struct hwt_perf_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (n > WBUF_SIZE - w->blen) {
		int e = wflush(w);
		if (e)
			return e;
		if (n >= DIRECT_MIN) {
			e = pwrite_all(w, p, n, w->pos);
			if (e)
				return w->err = e;
			w->pos += n;
			return 0;
		}
	}
	memcpy(w->buf + w->blen, p, n);
	w->blen += n;
	return 0;
}

static uint64_t wpos(const struct hwt_perf_writer *w)
{
	return w->pos + w->blen;
}

uint64_t hwt_perf_writer_offset(const struct hwt_perf_writer *w)
{
	return w ? wpos(w) : 0;
}

static int begin_pipe(struct hwt_perf_writer *w);

/* Lay down header placeholder, id arrays and attrs; the data follows. */
static int begin_data(struct hwt_perf_writer *w)
{
	if (w->state == W_DATA)
		return w->err;
	if (w->state != W_OPEN)
		return HWT_ERR_INVALID;
	w->state = W_DATA;
	if (w->pipe)
		return begin_pipe(w);
	struct hwt_perf_file_header h;
	memset(&h, 0, sizeof(h));
	int e = emit(w, &h, sizeof(h));
	uint64_t *id_off = calloc(w->nr_attrs + 1, sizeof(uint64_t));
	if (!id_off)
		return w->err = HWT_ERR_NOMEM;
	for (size_t i = 0; i < w->nr_attrs && !e; i++) {
		id_off[i] = wpos(w);
		if (w->attrs[i].nr_ids)
			e = emit(w, w->attrs[i].ids, w->attrs[i].nr_ids * sizeof(uint64_t));
	}
	for (size_t i = 0; i < w->nr_attrs && !e; i++) {
		struct hwt_perf_file_section s = {id_off[i], w->attrs[i].nr_ids * sizeof(uint64_t)};
		e = emit(w, &w->attrs[i].attr, sizeof(w->attrs[i].attr));
		if (!e)
			e = emit(w, &s, sizeof(s));
	}
	free(id_off);
	w->data_offset = wpos(w);
	return e;
}

static int ready(struct hwt_perf_writer *w)
{
	if (!w)
		return HWT_ERR_INVALID;
	if (w->err)
		return w->err;
	if (w->state == W_OPEN)
		return begin_data(w);
	return w->state == W_DATA ? 0 : HWT_ERR_INVALID;
}

/* ---- records ---- */

static const struct wattr *attr_for(const struct hwt_perf_writer *w,
				    const struct hwt_perf_sample_id *sid)
{
	if (!w->nr_attrs)
		return NULL;
	if (sid)
		for (size_t i = 0; i < w->nr_attrs; i++)
			for (size_t j = 0; j < w->attrs[i].nr_ids; j++)
				if (w->attrs[i].ids[j] == sid->id)
					return &w->attrs[i];
	return &w->attrs[0];
}

size_t hwt_perf_sample_id_encode(uint8_t *out, uint64_t sample_type,
				 const struct hwt_perf_sample_id *sid)
{
	struct hwt_perf_sample_id zero;
	size_t n = 0;
	if (!sid) {
		memset(&zero, 0, sizeof(zero));
		sid = &zero;
	}
	if (sample_type & PERF_SAMPLE_TID) {
		memcpy(out + n, &sid->pid, 4);
		memcpy(out + n + 4, &sid->tid, 4);
		n += 8;
	}
	if (sample_type & PERF_SAMPLE_TIME) {
		memcpy(out + n, &sid->time, 8);
		n += 8;
	}
	if (sample_type & PERF_SAMPLE_ID) {
		memcpy(out + n, &sid->id, 8);
		n += 8;
	}
	if (sample_type & PERF_SAMPLE_STREAM_ID) {
		memcpy(out + n, &sid->stream_id, 8);
		n += 8;
	}
	if (sample_type & PERF_SAMPLE_CPU) {
		memcpy(out + n, &sid->cpu, 4);
		memcpy(out + n + 4, &sid->res, 4);
		n += 8;
	}
	if (sample_type & PERF_SAMPLE_IDENTIFIER) {
		uint64_t id = sid->identifier ? sid->identifier : sid->id;
		memcpy(out + n, &id, 8);
		n += 8;
	}
	return n;
}

/* Emit fixed part (its header.type/misc set by the caller), an optional
 * NUL-terminated string padded to 8, and the sample_id trailer. */
static int put_record(struct hwt_perf_writer *w, void *fixed, size_t fixed_len, const char *str,
		      const struct hwt_perf_sample_id *sid)
{
	int e = ready(w);
	if (e)
		return e;
	uint8_t tail[MAX_STR + 8 + 64];
	size_t n = 0;
	if (str) {
		size_t sl = strnlen(str, MAX_STR - 1);
		memcpy(tail, str, sl);
		size_t padded = (sl + 1 + 7) & ~(size_t)7;
		memset(tail + sl, 0, padded - sl);
		n = padded;
	}
	const struct wattr *a = attr_for(w, sid);
	if (a && a->attr.sample_id_all)
		n += hwt_perf_sample_id_encode(tail + n, a->attr.sample_type, sid);
	struct perf_event_header *h = fixed;
	h->size = (uint16_t)(fixed_len + n);
	e = emit(w, fixed, fixed_len);
	return e ? e : emit(w, tail, n);
}

int hwt_perf_writer_write_raw(struct hwt_perf_writer *w, const void *p1, size_t n1, const void *p2,
			      size_t n2)
{
	int e = ready(w);
	if (e)
		return e;
	if ((!p1 && n1) || (!p2 && n2) || n1 + n2 < sizeof(struct perf_event_header) ||
	    n1 + n2 > 0xffff || (n1 + n2) % 8)
		return HWT_ERR_INVALID;
	e = emit(w, p1, n1);
	return e || !n2 ? e : emit(w, p2, n2);
}

int hwt_perf_writer_write_comm(struct hwt_perf_writer *w, uint32_t pid, uint32_t tid,
			       const char *comm, int exec, const struct hwt_perf_sample_id *sid)
{
	struct hwt_perf_rec_comm r = {
	    {PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0, 0}, pid, tid};
	return put_record(w, &r, sizeof(r), comm ? comm : "", sid);
}

int hwt_perf_writer_write_mmap2(struct hwt_perf_writer *w, uint32_t pid, uint32_t tid,
				uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t prot,
				uint32_t flags, const char *path, uint16_t misc,
				const struct hwt_perf_sample_id *sid)
{
	struct hwt_perf_rec_mmap2 r;
	memset(&r, 0, sizeof(r));
	r.header.type = PERF_RECORD_MMAP2;
	r.header.misc = misc ? misc : PERF_RECORD_MISC_USER;
	r.pid = pid;
	r.tid = tid;
	r.addr = addr;
	r.len = len;
	r.pgoff = pgoff;
	r.prot = prot;
	r.flags = flags;
	return put_record(w, &r, sizeof(r), path ? path : "", sid);
}

int hwt_perf_writer_write_task(struct hwt_perf_writer *w, uint32_t type, uint32_t pid,
			       uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time,
			       const struct hwt_perf_sample_id *sid)
{
	if (type != PERF_RECORD_FORK && type != PERF_RECORD_EXIT)
		return HWT_ERR_INVALID;
	struct hwt_perf_rec_fork r = {{type, 0, 0}, pid, ppid, tid, ptid, time};
	return put_record(w, &r, sizeof(r), NULL, sid);
}

int hwt_perf_writer_write_itrace_start(struct hwt_perf_writer *w, uint32_t pid, uint32_t tid,
				       const struct hwt_perf_sample_id *sid)
{
	struct hwt_perf_rec_itrace_start r = {{PERF_RECORD_ITRACE_START, 0, 0}, pid, tid};
	return put_record(w, &r, sizeof(r), NULL, sid);
}

int hwt_perf_writer_write_aux(struct hwt_perf_writer *w, uint64_t aux_offset, uint64_t aux_size,
			      uint64_t flags, const struct hwt_perf_sample_id *sid)
{
	struct hwt_perf_rec_aux r = {{PERF_RECORD_AUX, 0, 0}, aux_offset, aux_size, flags};
	return put_record(w, &r, sizeof(r), NULL, sid);
}

int hwt_perf_writer_write_lost(struct hwt_perf_writer *w, uint64_t id, uint64_t lost,
			       const struct hwt_perf_sample_id *sid)
{
	struct hwt_perf_rec_lost r = {{PERF_RECORD_LOST, 0, 0}, id, lost};
	return put_record(w, &r, sizeof(r), NULL, sid);
}

int hwt_perf_writer_write_switch(struct hwt_perf_writer *w, int cpu_wide, uint16_t misc,
				 uint32_t next_prev_pid, uint32_t next_prev_tid,
				 const struct hwt_perf_sample_id *sid)
{
	struct hwt_perf_rec_switch_cpu_wide r = {
	    {cpu_wide ? PERF_RECORD_SWITCH_CPU_WIDE : PERF_RECORD_SWITCH, misc, 0},
	    next_prev_pid,
	    next_prev_tid};
	return put_record(w, &r, cpu_wide ? sizeof(r) : sizeof(r.header), NULL, sid);
}

int hwt_perf_writer_write_auxtrace(struct hwt_perf_writer *w,
				   const struct hwt_perf_auxtrace_desc *d, const void *p1,
				   size_t n1, const void *p2, size_t n2)
{
	int e = ready(w);
	if (e)
		return e;
	if (!d || (!p1 && n1) || (!p2 && n2))
		return HWT_ERR_INVALID;
	static const uint8_t zeros[8];
	size_t pad = (8 - (n1 + n2) % 8) % 8;
	if (w->nr_auxidx == w->cap_auxidx) {
		size_t cap = w->cap_auxidx ? 2 * w->cap_auxidx : 256;
		struct hwt_perf_file_section *q = realloc(w->auxidx, cap * sizeof(*q));
		if (!q)
			return HWT_ERR_NOMEM;
		w->auxidx = q;
		w->cap_auxidx = cap;
	}
	w->auxidx[w->nr_auxidx].offset = wpos(w);
	/* perf's index holds the record header's size, without the payload */
	w->auxidx[w->nr_auxidx].size = sizeof(struct hwt_perf_rec_auxtrace);
	w->nr_auxidx++;
	struct hwt_perf_rec_auxtrace r;
	memset(&r, 0, sizeof(r));
	r.header.type = HWT_PERF_RECORD_AUXTRACE;
	r.header.size = sizeof(r);
	r.size = (uint64_t)n1 + n2 + pad;
	r.offset = d->offset;
	r.reference = d->reference;
	r.idx = d->idx;
	r.tid = d->tid;
	r.cpu = d->cpu;
	e = emit(w, &r, sizeof(r));
	if (!e && n1)
		e = emit(w, p1, n1);
	if (!e && n2)
		e = emit(w, p2, n2);
	if (!e && pad)
		e = emit(w, zeros, pad);
	return e;
}

int hwt_perf_writer_write_auxtrace_info(struct hwt_perf_writer *w, uint32_t type,
					const uint64_t *priv, size_t nr_priv)
{
	int e = ready(w);
	if (e)
		return e;
	if ((nr_priv && !priv) || sizeof(struct hwt_perf_rec_auxtrace_info) + nr_priv * 8 > 0xfff8)
		return HWT_ERR_INVALID;
	struct hwt_perf_rec_auxtrace_info r;
	memset(&r, 0, sizeof(r));
	r.header.type = HWT_PERF_RECORD_AUXTRACE_INFO;
	r.header.size = (uint16_t)(sizeof(r) + nr_priv * 8);
	r.type = type;
	e = emit(w, &r, sizeof(r));
	return e || !nr_priv ? e : emit(w, priv, nr_priv * 8);
}

void hwt_perf_intel_pt_info_init(struct hwt_perf_intel_pt_info *info)
{
	memset(info, 0, sizeof(*info));
	/* attr.config bits of Linux's intel_pt PMU (sysfs format/). */
	info->tsc_bit = 1ULL << 10;
	info->noretcomp_bit = 1ULL << 11;
	info->mtc_bit = 1ULL << 9;
	info->mtc_freq_bits = 0xfULL << 14;
	info->cyc_bit = 1ULL << 1;
	info->tsc_ctc_ratio_n = 1;
	info->tsc_ctc_ratio_d = 1;
	info->time_mult = 1;
}

int hwt_perf_writer_write_intel_pt_info(struct hwt_perf_writer *w,
					const struct hwt_perf_intel_pt_info *info)
{
	if (!info)
		return HWT_ERR_INVALID;
	size_t flen = info->filter ? strnlen(info->filter, MAX_STR - 1) : 0;
	size_t fwords = flen ? (flen + 1 + 7) / 8 : 0;
	uint64_t priv[HWT_IPT_PRIV_MAX + MAX_STR / 8];
	memset(priv, 0, sizeof(priv));
	priv[HWT_IPT_PMU_TYPE] = info->pmu_type;
	priv[HWT_IPT_TIME_SHIFT] = info->time_shift;
	priv[HWT_IPT_TIME_MULT] = info->time_mult;
	priv[HWT_IPT_TIME_ZERO] = info->time_zero;
	priv[HWT_IPT_CAP_USER_TIME_ZERO] = info->cap_user_time_zero;
	priv[HWT_IPT_TSC_BIT] = info->tsc_bit;
	priv[HWT_IPT_NORETCOMP_BIT] = info->noretcomp_bit;
	priv[HWT_IPT_HAVE_SCHED_SWITCH] = info->have_sched_switch;
	priv[HWT_IPT_SNAPSHOT_MODE] = info->snapshot_mode;
	priv[HWT_IPT_PER_CPU_MMAPS] = info->per_cpu_mmaps;
	priv[HWT_IPT_MTC_BIT] = info->mtc_bit;
	priv[HWT_IPT_MTC_FREQ_BITS] = info->mtc_freq_bits;
	priv[HWT_IPT_TSC_CTC_N] = info->tsc_ctc_ratio_n;
	priv[HWT_IPT_TSC_CTC_D] = info->tsc_ctc_ratio_d;
	priv[HWT_IPT_CYC_BIT] = info->cyc_bit;
	priv[HWT_IPT_MAX_NONTURBO_RATIO] = info->max_nonturbo_ratio;
	priv[HWT_IPT_FILTER_STR_LEN] = flen;
	if (flen)
		memcpy(&priv[HWT_IPT_PRIV_MAX], info->filter, flen);
	return hwt_perf_writer_write_auxtrace_info(w, HWT_PERF_AUXTRACE_INTEL_PT, priv,
						   HWT_IPT_PRIV_MAX + fwords);
}

int hwt_perf_intel_pt_info_parse(struct hwt_perf_intel_pt_info *info, const uint64_t *priv,
				 size_t nr)
{
	if (!info || (nr && !priv))
		return HWT_ERR_INVALID;
	memset(info, 0, sizeof(*info));
	if (nr < HWT_IPT_PER_CPU_MMAPS)
		return HWT_ERR_BAD_FORMAT;
	uint64_t v[HWT_IPT_PRIV_MAX];
	memset(v, 0, sizeof(v));
	memcpy(v, priv, (nr < HWT_IPT_PRIV_MAX ? nr : HWT_IPT_PRIV_MAX) * 8);
	info->pmu_type = (uint32_t)v[HWT_IPT_PMU_TYPE];
	info->time_shift = (uint16_t)v[HWT_IPT_TIME_SHIFT];
	info->time_mult = (uint32_t)v[HWT_IPT_TIME_MULT];
	info->time_zero = v[HWT_IPT_TIME_ZERO];
	info->cap_user_time_zero = v[HWT_IPT_CAP_USER_TIME_ZERO] != 0;
	info->tsc_bit = v[HWT_IPT_TSC_BIT];
	info->noretcomp_bit = v[HWT_IPT_NORETCOMP_BIT];
	info->have_sched_switch = (uint8_t)v[HWT_IPT_HAVE_SCHED_SWITCH];
	info->snapshot_mode = v[HWT_IPT_SNAPSHOT_MODE] != 0;
	info->per_cpu_mmaps = v[HWT_IPT_PER_CPU_MMAPS] != 0;
	info->mtc_bit = v[HWT_IPT_MTC_BIT];
	info->mtc_freq_bits = v[HWT_IPT_MTC_FREQ_BITS];
	info->tsc_ctc_ratio_n = (uint32_t)v[HWT_IPT_TSC_CTC_N];
	info->tsc_ctc_ratio_d = (uint32_t)v[HWT_IPT_TSC_CTC_D];
	info->cyc_bit = v[HWT_IPT_CYC_BIT];
	info->max_nonturbo_ratio = (uint32_t)v[HWT_IPT_MAX_NONTURBO_RATIO];
	/* The filter string stays in the caller's memory; not exposed here. */
	return 0;
}

int hwt_perf_writer_write_id_index(struct hwt_perf_writer *w,
				   const struct hwt_perf_id_index_entry *e, size_t nr)
{
	int err = ready(w);
	if (err)
		return err;
	if (nr && !e)
		return HWT_ERR_INVALID;
	const size_t per = (0xfff8 - sizeof(struct hwt_perf_rec_id_index)) /
			   sizeof(struct hwt_perf_id_index_entry);
	do {
		size_t k = nr < per ? nr : per;
		struct hwt_perf_rec_id_index r;
		memset(&r, 0, sizeof(r));
		r.header.type = HWT_PERF_RECORD_ID_INDEX;
		r.header.size = (uint16_t)(sizeof(r) + k * sizeof(*e));
		r.nr = k;
		err = emit(w, &r, sizeof(r));
		if (!err && k)
			err = emit(w, e, k * sizeof(*e));
		e += k;
		nr -= k;
	} while (!err && nr);
	return err;
}

int hwt_perf_writer_write_thread_map(struct hwt_perf_writer *w, const uint32_t *pids,
				     const char *const *comms, size_t nr)
{
	int err = ready(w);
	if (err)
		return err;
	if (!nr || !pids || nr > 2000)
		return HWT_ERR_INVALID;
	struct hwt_perf_rec_thread_map r;
	memset(&r, 0, sizeof(r));
	r.header.type = HWT_PERF_RECORD_THREAD_MAP;
	r.header.size = (uint16_t)(sizeof(r) + nr * sizeof(struct hwt_perf_thread_map_entry));
	r.nr = nr;
	err = emit(w, &r, sizeof(r));
	for (size_t i = 0; i < nr && !err; i++) {
		struct hwt_perf_thread_map_entry t;
		memset(&t, 0, sizeof(t));
		t.pid = pids[i];
		if (comms && comms[i])
			strncpy(t.comm, comms[i], sizeof(t.comm) - 1);
		err = emit(w, &t, sizeof(t));
	}
	return err;
}

int hwt_perf_writer_write_time_conv(struct hwt_perf_writer *w,
				    const struct hwt_perf_rec_time_conv *tc)
{
	int e = ready(w);
	if (e)
		return e;
	if (!tc)
		return HWT_ERR_INVALID;
	struct hwt_perf_rec_time_conv r = *tc;
	r.header.type = HWT_PERF_RECORD_TIME_CONV;
	r.header.misc = 0;
	r.header.size = sizeof(r);
	return emit(w, &r, sizeof(r));
}

int hwt_perf_writer_write_finished_round(struct hwt_perf_writer *w)
{
	int e = ready(w);
	if (e)
		return e;
	struct perf_event_header h = {HWT_PERF_RECORD_FINISHED_ROUND, 0, sizeof(h)};
	return emit(w, &h, sizeof(h));
}

/* ---- features ---- */

/* perf.data-file-format.txt, HEADER_BUILD_ID: one record per file, the
 * header (type 0, misc = cpumode | BUILD_ID_SIZE, size), pid, the build-id
 * in 20 bytes plus its length in the 21st (the record says so by the
 * BUILD_ID_SIZE misc bit), 3 bytes reserved, then the name NUL-padded to
 * a multiple of 64 bytes. */
#define BID_MISC_SIZE (1u << 15)
#define BID_NAME_ALIGN 64

int hwt_perf_writer_add_build_id(struct hwt_perf_writer *w, int32_t pid, uint16_t cpumode,
				 const uint8_t *id, size_t len, const char *name)
{
	if (!w || !id || !name || !len || len > 20)
		return HWT_ERR_INVALID;
	size_t nlen = strlen(name) + 1;
	size_t pad = (nlen + BID_NAME_ALIGN - 1) / BID_NAME_ALIGN * BID_NAME_ALIGN;
	size_t size = sizeof(struct perf_event_header) + 4 + 24 + pad;
	if (size > UINT16_MAX)
		return HWT_ERR_INVALID;
	uint8_t *nv = realloc(w->bids, w->bids_len + size);
	if (!nv)
		return HWT_ERR_NOMEM;
	w->bids = nv;
	uint8_t *r = nv + w->bids_len;
	memset(r, 0, size);
	struct perf_event_header h = {
	    .type = 0, .misc = (uint16_t)(cpumode | BID_MISC_SIZE), .size = (uint16_t)size};
	memcpy(r, &h, sizeof(h));
	memcpy(r + 8, &pid, 4);
	memcpy(r + 12, id, len);
	r[12 + 20] = (uint8_t)len;
	memcpy(r + 36, name, nlen);
	w->bids_len += size;
	return 0;
}

struct fbuf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void fb_put(struct fbuf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *q = realloc(b->p, cap);
		if (!q) {
			b->err = HWT_ERR_NOMEM;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void fb_u32(struct fbuf *b, uint32_t v)
{
	fb_put(b, &v, 4);
}

/* perf_header_string: u32 len (NUL included, padded to 64), bytes. */
static void fb_str(struct fbuf *b, const char *s)
{
	static const uint8_t zeros[64];
	size_t sl = strnlen(s ? s : "", MAX_STR - 1);
	uint32_t len = (uint32_t)((sl + 1 + 63) & ~(size_t)63);
	fb_u32(b, len);
	fb_put(b, s, sl);
	fb_put(b, zeros, len - sl);
}

static void cpuinfo_defaults(char *desc, size_t dn, char *id, size_t idn)
{
	char line[512], vendor[64] = "", model_name[256] = "";
	int family = -1, model = -1, stepping = -1;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *colon = strchr(line, ':');
			if (!colon)
				continue;
			char *val = colon + 1;
			while (*val == ' ' || *val == '\t')
				val++;
			val[strcspn(val, "\n")] = 0;
			if (!strncmp(line, "vendor_id", 9) && !vendor[0])
				snprintf(vendor, sizeof(vendor), "%s", val);
			else if (!strncmp(line, "cpu family", 10) && family < 0)
				family = atoi(val);
			else if (!strncmp(line, "model name", 10) && !model_name[0])
				snprintf(model_name, sizeof(model_name), "%s", val);
			else if (!strncmp(line, "model", 5) && model < 0 &&
				 (line[5] == '\t' || line[5] == ':' || line[5] == ' '))
				model = atoi(val);
			else if (!strncmp(line, "stepping", 8) && stepping < 0)
				stepping = atoi(val);
			if (!strcmp(line, "\n"))
				break;
		}
		fclose(f);
	}
	snprintf(desc, dn, "%s", model_name[0] ? model_name : "unknown");
	if (vendor[0] && family >= 0 && model >= 0)
		snprintf(id, idn, "%s,%d,%d,%d", vendor, family, model,
			 stepping < 0 ? 0 : stepping);
	else
		snprintf(id, idn, "unknown");
}

static uint64_t meminfo_total_kb(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void sysfs_pmus(struct fbuf *b, const struct hwt_perf_writer *w, uint32_t *nr)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		int dup = 0;
		for (size_t i = 0; i < w->nr_pmus; i++)
			dup |= !strcmp(w->pmus[i].name, de->d_name);
		if (dup)
			continue;
		char path[512], val[32];
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(val, sizeof(val), f)) {
			fb_u32(b, (uint32_t)strtoul(val, NULL, 10));
			fb_str(b, de->d_name);
			(*nr)++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
}

static void build_feature(struct hwt_perf_writer *w, int feat, struct fbuf *b)
{
	struct utsname u;
	char desc[256], id[128];
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	switch (feat) {
	case HWT_FEAT_BUILD_ID:
		fb_put(b, w->bids, w->bids_len);
		break;
	case HWT_FEAT_HOSTNAME:
		fb_str(b, w->hostname ? w->hostname : u.nodename);
		break;
	case HWT_FEAT_OSRELEASE:
		fb_str(b, w->osrelease ? w->osrelease : u.release);
		break;
	case HWT_FEAT_VERSION:
		fb_str(b, w->version ? w->version : "hwt-" HWT_VERSION);
		break;
	case HWT_FEAT_ARCH:
		fb_str(b, w->arch ? w->arch : u.machine);
		break;
	case HWT_FEAT_NRCPUS: {
		long conf = sysconf(_SC_NPROCESSORS_CONF), onln = sysconf(_SC_NPROCESSORS_ONLN);
		/* perf writes the available count first, then the online one. */
		fb_u32(b, w->cfg.nr_cpus_avail ? w->cfg.nr_cpus_avail
					       : (uint32_t)(conf > 0 ? conf : 1));
		fb_u32(b, w->cfg.nr_cpus_online ? w->cfg.nr_cpus_online
						: (uint32_t)(onln > 0 ? onln : 1));
		break;
	}
	case HWT_FEAT_CPUDESC:
		cpuinfo_defaults(desc, sizeof(desc), id, sizeof(id));
		fb_str(b, w->cpudesc ? w->cpudesc : desc);
		break;
	case HWT_FEAT_CPUID:
		cpuinfo_defaults(desc, sizeof(desc), id, sizeof(id));
		fb_str(b, w->cpuid ? w->cpuid : id);
		break;
	case HWT_FEAT_TOTAL_MEM: {
		uint64_t kb = w->cfg.total_mem_kb ? w->cfg.total_mem_kb : meminfo_total_kb();
		fb_put(b, &kb, 8);
		break;
	}
	case HWT_FEAT_CMDLINE:
		if (w->argc > 0) {
			fb_u32(b, (uint32_t)w->argc);
			for (int i = 0; i < w->argc; i++)
				fb_str(b, w->argv[i]);
		} else {
			fb_u32(b, 1);
			fb_str(b, "hwt");
		}
		break;
	case HWT_FEAT_EVENT_DESC:
		fb_u32(b, (uint32_t)w->nr_attrs);
		fb_u32(b, (uint32_t)sizeof(struct perf_event_attr));
		for (size_t i = 0; i < w->nr_attrs; i++) {
			fb_put(b, &w->attrs[i].attr, sizeof(w->attrs[i].attr));
			fb_u32(b, (uint32_t)w->attrs[i].nr_ids);
			fb_str(b, w->attrs[i].name);
			if (w->attrs[i].nr_ids)
				fb_put(b, w->attrs[i].ids, w->attrs[i].nr_ids * 8);
		}
		break;
	case HWT_FEAT_AUXTRACE: {
		/* perf's auxtrace index: u64 nr, then { u64 file_offset, sz }. */
		uint64_t nr = w->nr_auxidx;
		fb_put(b, &nr, 8);
		if (nr)
			fb_put(b, w->auxidx, nr * sizeof(*w->auxidx));
		break;
	}
	case HWT_FEAT_PMU_MAPPINGS: {
		size_t at = b->len;
		uint32_t nr = 0;
		fb_u32(b, 0);
		for (size_t i = 0; i < w->nr_pmus; i++, nr++) {
			fb_u32(b, w->pmus[i].type);
			fb_str(b, w->pmus[i].name);
		}
		sysfs_pmus(b, w, &nr);
		if (!b->err)
			memcpy(b->p + at, &nr, 4);
		break;
	}
	}
}

int hwt_perf_writer_add_feature(struct hwt_perf_writer *w, int feat, const void *data, size_t len)
{
	if (feat < HWT_FEAT_HWT_FIRST || feat >= HWT_FEAT_BITS || (len && !data))
		return HWT_ERR_INVALID;
	if (w->state == W_DONE)
		return HWT_ERR_INVALID;
	size_t at = 0;
	while (at < w->nxfeat && w->xfeat[at].feat < feat)
		at++;
	if (at < w->nxfeat && w->xfeat[at].feat == feat)
		return HWT_ERR_INVALID;
	uint8_t *p = malloc(len ? len : 1);
	if (!p)
		return HWT_ERR_NOMEM;
	if (len)
		memcpy(p, data, len);
	memmove(&w->xfeat[at + 1], &w->xfeat[at], (w->nxfeat - at) * sizeof(w->xfeat[0]));
	w->xfeat[at].feat = feat;
	w->xfeat[at].p = p;
	w->xfeat[at].n = len;
	w->nxfeat++;
	return 0;
}

/* In feature-number order (the order of the section table); hwt's own
 * (xfeat, all numbered above these) follow. */
static const int features[] = {
    HWT_FEAT_BUILD_ID,	HWT_FEAT_HOSTNAME, HWT_FEAT_OSRELEASE,	HWT_FEAT_VERSION,
    HWT_FEAT_ARCH,	HWT_FEAT_NRCPUS,   HWT_FEAT_CPUDESC,	HWT_FEAT_CPUID,
    HWT_FEAT_TOTAL_MEM, HWT_FEAT_CMDLINE,  HWT_FEAT_EVENT_DESC, HWT_FEAT_PMU_MAPPINGS,
    HWT_FEAT_AUXTRACE,
};
#define NFEAT (sizeof(features) / sizeof(features[0]))

/* Features written only when there is something to say. */
static int feat_skip(const struct hwt_perf_writer *w, int feat)
{
	return (feat == HWT_FEAT_AUXTRACE && !w->nr_auxidx) ||
	       (feat == HWT_FEAT_BUILD_ID && !w->bids_len);
}

/* Pipe mode's header: the pipe header, HEADER_ATTR and HEADER_FEATURE
 * records (a feature too big for one record is left out). */
static int begin_pipe(struct hwt_perf_writer *w)
{
	uint64_t ph[2] = {HWT_PERF_MAGIC2, 16};
	int e = emit(w, ph, sizeof(ph));
	for (size_t i = 0; i < w->nr_attrs && !e; i++) {
		size_t ids = w->attrs[i].nr_ids * sizeof(uint64_t);
		size_t size = sizeof(struct perf_event_header) + sizeof(w->attrs[i].attr) + ids;
		if (size > UINT16_MAX)
			return w->err = HWT_ERR_INVALID; /* too many ids for a record */
		struct perf_event_header h = {HWT_PERF_RECORD_HEADER_ATTR, 0, (uint16_t)size};
		e = emit(w, &h, sizeof(h));
		if (!e)
			e = emit(w, &w->attrs[i].attr, sizeof(w->attrs[i].attr));
		if (!e && ids)
			e = emit(w, w->attrs[i].ids, ids);
	}
	for (size_t i = 0; i < NFEAT && !e; i++) {
		int f = features[i];
		if (f == HWT_FEAT_BUILD_ID || f == HWT_FEAT_AUXTRACE)
			continue; /* build-ids at finish; no index in pipe mode */
		struct fbuf body = {0};
		build_feature(w, f, &body);
		if (body.err) {
			free(body.p);
			return w->err = body.err;
		}
		size_t size = sizeof(struct perf_event_header) + 8 + body.len;
		if (size <= UINT16_MAX) {
			struct perf_event_header h = {HWT_PERF_RECORD_HEADER_FEATURE, 0,
						      (uint16_t)size};
			uint64_t id = (uint64_t)f;
			e = emit(w, &h, sizeof(h));
			if (!e)
				e = emit(w, &id, 8);
			if (!e)
				e = emit(w, body.p, body.len);
		}
		free(body.p);
	}
	w->data_offset = wpos(w);
	return e;
}

static int finish_pipe(struct hwt_perf_writer *w)
{
	int e = 0;
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= w->bids_len && !e;) {
		struct perf_event_header h;
		memcpy(&h, w->bids + off, sizeof(h));
		h.type = HWT_PERF_RECORD_HEADER_BUILD_ID;
		e = emit(w, &h, sizeof(h));
		if (!e)
			e = emit(w, w->bids + off + sizeof(h), h.size - sizeof(h));
		off += h.size;
	}
	if (!e)
		e = wflush(w);
	if (!e && w->own_fd) {
		if (close(w->fd))
			e = HWT_ERR_IO;
		w->fd = -1;
	}
	if (e)
		return w->err = e;
	w->state = W_DONE;
	return 0;
}

int hwt_perf_writer_finish(struct hwt_perf_writer *w)
{
	int e = ready(w);
	if (e)
		return e;
	if (w->pipe)
		return finish_pipe(w);
	e = wflush(w);
	if (e)
		return e;
	uint64_t data_end = w->pos;
	struct hwt_perf_file_header h;
	memset(&h, 0, sizeof(h));
	h.magic = HWT_PERF_MAGIC2;
	h.size = sizeof(h);
	h.attr_size = sizeof(struct perf_event_attr) + sizeof(struct hwt_perf_file_section);
	h.attrs.offset = w->data_offset - w->nr_attrs * h.attr_size;
	h.attrs.size = w->nr_attrs * h.attr_size;
	h.data.offset = w->data_offset;
	h.data.size = data_end - w->data_offset;

	/* Section table, then contents. */
	struct fbuf body = {0};
	struct hwt_perf_file_section sec[NFEAT + HWT_FEAT_BITS - HWT_FEAT_HWT_FIRST];
	size_t nsec = w->nxfeat;
	for (size_t i = 0; i < NFEAT; i++)
		nsec += !feat_skip(w, features[i]);
	uint64_t at = data_end + nsec * sizeof(sec[0]);
	for (size_t i = 0, k = 0; i < NFEAT; i++) {
		if (feat_skip(w, features[i]))
			continue; /* e.g. perf writes its index only with AUX data */
		size_t before = body.len;
		build_feature(w, features[i], &body);
		sec[k].offset = at + before;
		sec[k].size = body.len - before;
		k++;
		h.features[features[i] / 64] |= 1ULL << (features[i] % 64);
	}
	for (size_t i = 0, k = nsec - w->nxfeat; i < w->nxfeat; i++, k++) {
		sec[k].offset = at + body.len;
		sec[k].size = w->xfeat[i].n;
		fb_put(&body, w->xfeat[i].p, w->xfeat[i].n);
		h.features[w->xfeat[i].feat / 64] |= 1ULL << (w->xfeat[i].feat % 64);
	}
	if (body.err) {
		free(body.p);
		return w->err = body.err;
	}
	e = pwrite_all(w, sec, nsec * sizeof(sec[0]), data_end);
	if (!e)
		e = pwrite_all(w, body.p, body.len, at);
	free(body.p);
	if (!e)
		e = pwrite_all(w, &h, sizeof(h), 0);
	if (!e && w->own_fd) {
		if (close(w->fd))
			e = HWT_ERR_IO;
		w->fd = -1;
	}
	if (e)
		return w->err = e;
	w->state = W_DONE;
	return 0;
}
