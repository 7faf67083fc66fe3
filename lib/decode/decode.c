/* lib/decode/decode.c - the recording decoder (hwt/decode.h): perf.data
 * records in, per-thread flow out, through one decoder ops table per
 * trace format (formats.c lists them; Intel PT: pt.c).
 *
 * Design: ONE forward pass over the records (a pipe can feed it; no
 * rewind).  AUXTRACE_INFO comes before the trace and picks the format's
 * ops (none: Intel PT with defaults, as older perf files; a type without
 * ops stops with HWT_ERR_NOT_SUPPORTED).  A queue's kind (per-thread or
 * per-CPU) is known at its first AUXTRACE record.  The engine applies the
 * sideband itself, in file order, before the format sees what follows:
 * COMM exec, MMAP/MMAP2, FORK update a table of processes (hwt/process.h)
 * and threads, plus one process holding every mapping of every process
 * (per-CPU decoding, where the thread is only known by time); switch-ins
 * and ITRACE_START go to their CPU's timeline (sorted at first use; the
 * formats use it at the end, when it is complete).  The vdso's code comes
 * from perf's build-id cache: by the BUILD_ID feature (file mode) or a
 * HEADER_BUILD_ID record (pipe mode), loaded at the first of them; [vdso]
 * mappings met before are remembered and mapped when it comes.  The
 * format decodes per-thread chunks as they come (memory bounded by what
 * it holds per queue) and holds per-CPU trace until the end (flush,
 * finish).
 *
 * Ownership: the decoder owns its reader when it opened the file, the
 * processes, threads (their user pointers go back through the consumer's
 * thread_free), queues and the format state.  No global state.
 */
#include <errno.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "decode/vdso.h"
#include "hwt/decode.h"

struct proc_ent {
	uint32_t pid;
	struct hwt_process *p;
};

struct switch_ev {
	uint64_t time;
	uint32_t tid;
	uint32_t seq; /* arrival order, for a stable sort */
};

struct cpu_tl {
	uint32_t cpu;
	struct switch_ev *sw;
	size_t nsw, capsw;
	int sorted;
};

struct vdso_map { /* a [vdso] mapping met before the vdso's code */
	uint32_t pid;
	uint64_t addr, len;
};

struct hwt_decoder {
	struct hwt_perf_reader *r;
	int own_reader;
	struct hwt_decode_consumer c;
	char bdir[4096];
	int have_bdir;
	char *debug_dirs; /* hwt_decoder_config.debug_dirs (NULL: none) */
	struct proc_ent *procs;
	size_t nprocs, capprocs;
	struct hwt_dec_thread **threads;
	size_t nthreads, capthreads;
	struct hwt_process *all;
	uint64_t epoch;
	struct hwt_dec_queue **queues;
	size_t nqueues;
	struct cpu_tl *tls;
	size_t ntls;
	const struct hwt_decoder_ops *ops;
	void *fst;
	int have_fmt;
	uint32_t format;
	uint8_t *vdso;
	size_t vdso_size;
	int vdso_feat_tried;
	struct vdso_map *vmaps;
	size_t nvmaps;
	int have_conv;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	uint64_t gaps;
	uint64_t nr_samples;
	size_t nr_aux;
	unsigned jobs;	/* hwt_decoder_config.jobs (0: online CPUs) */
	unsigned flags; /* hwt_decoder_config.flags */
	int done;	/* 1: ended (rc below) */
	int done_rc;
	char err[512];
};

/* ---------------- errors ---------------- */
void hwt_dec_set_err(struct hwt_decoder *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

const char *hwt_decoder_errmsg(const struct hwt_decoder *d)
{
	return d ? d->err : "";
}

/* ---------------- processes, threads, queues ---------------- */
static struct hwt_process *proc_find(struct hwt_decoder *d, uint32_t pid)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			return d->procs[i].p;
	return NULL;
}

static int proc_add(struct hwt_decoder *d, uint32_t pid, struct hwt_process *p)
{
	if (d->nprocs == d->capprocs) {
		size_t nc = d->capprocs ? 2 * d->capprocs : 16;
		struct proc_ent *nv = realloc(d->procs, nc * sizeof(*nv));
		if (!nv)
			return HWT_ERR_NOMEM;
		d->procs = nv;
		d->capprocs = nc;
	}
	d->procs[d->nprocs].pid = pid;
	d->procs[d->nprocs++].p = p;
	return 0;
}

/* A new empty process that searches the decoder's debug folders. */
static struct hwt_process *proc_new(struct hwt_decoder *d, uint32_t pid)
{
	struct hwt_process *p = hwt_process_alloc(pid);
	if (p && hwt_process_set_debug_dirs(p, d->debug_dirs)) {
		hwt_process_free(p);
		p = NULL;
	}
	return p;
}

struct hwt_process *hwt_dec_process_get(struct hwt_decoder *d, uint32_t pid)
{
	struct hwt_process *p = proc_find(d, pid);
	if (p)
		return p;
	p = proc_new(d, pid);
	if (p && proc_add(d, pid, p)) {
		hwt_process_free(p);
		p = NULL;
	}
	return p;
}

struct hwt_process *hwt_dec_all_processes(struct hwt_decoder *d)
{
	return d->all;
}

uint64_t hwt_dec_process_epoch(const struct hwt_decoder *d)
{
	return d->epoch;
}

static void proc_replace(struct hwt_decoder *d, uint32_t pid, struct hwt_process *np)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid) {
			d->epoch++; /* caches keyed by the old pointer are stale */
			hwt_process_free(d->procs[i].p);
			d->procs[i].p = np;
			return;
		}
	if (proc_add(d, pid, np))
		hwt_process_free(np);
}

struct hwt_dec_thread *hwt_dec_thread_get(struct hwt_decoder *d, uint32_t tid, uint32_t pid)
{
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i]->tid == tid) {
			if (pid != (uint32_t)-1 && d->threads[i]->pid != pid)
				d->threads[i]->pid = pid;
			return d->threads[i];
		}
	if (d->nthreads == d->capthreads) {
		size_t nc = d->capthreads ? 2 * d->capthreads : 16;
		struct hwt_dec_thread **nv = realloc(d->threads, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		d->threads = nv;
		d->capthreads = nc;
	}
	struct hwt_dec_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid == (uint32_t)-1 ? tid : pid;
	d->threads[d->nthreads++] = t;
	return t;
}

struct hwt_dec_thread *hwt_decoder_thread(struct hwt_decoder *d, uint32_t tid)
{
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i]->tid == tid)
			return d->threads[i];
	return NULL;
}

struct hwt_dec_thread *hwt_decoder_thread_at(struct hwt_decoder *d, size_t i)
{
	return i < d->nthreads ? d->threads[i] : NULL;
}

struct hwt_process *hwt_decoder_process(struct hwt_decoder *d, const struct hwt_dec_thread *t)
{
	for (size_t i = 0; i < d->nqueues; i++)
		if (d->queues[i]->per_cpu)
			return d->all;
	return t ? proc_find(d, t->pid) : NULL;
}

struct hwt_dec_queue *hwt_dec_queue_at(struct hwt_decoder *d, size_t i)
{
	return i < d->nqueues ? d->queues[i] : NULL;
}

static struct hwt_dec_queue *queue_get(struct hwt_decoder *d, uint32_t idx, int *is_new)
{
	*is_new = 0;
	for (size_t i = 0; i < d->nqueues; i++)
		if (d->queues[i]->idx == idx)
			return d->queues[i];
	struct hwt_dec_queue **nv = realloc(d->queues, (d->nqueues + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	d->queues = nv;
	struct hwt_dec_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->idx = idx;
	d->queues[d->nqueues++] = q;
	*is_new = 1;
	return q;
}

/* ---------------- per-CPU timelines ---------------- */
/* A record that says which thread runs on its CPU from its time on
 * (ITRACE_START, a switch-in): 1 and *tid, *pid; else 0. */
static int switch_in(const struct hwt_perf_record *rec, uint32_t *tid, uint32_t *pid)
{
	if (!rec->have_sid ||
	    (rec->type != PERF_RECORD_ITRACE_START && rec->type != PERF_RECORD_SWITCH &&
	     rec->type != PERF_RECORD_SWITCH_CPU_WIDE))
		return 0;
	if (rec->type != PERF_RECORD_ITRACE_START && (rec->misc & PERF_RECORD_MISC_SWITCH_OUT))
		return 0;
	*tid = rec->sid.tid;
	*pid = rec->sid.pid;
	if (rec->type == PERF_RECORD_ITRACE_START &&
	    rec->size >= sizeof(struct hwt_perf_rec_itrace_start)) {
		struct hwt_perf_rec_itrace_start it; /* (a pipe's records may be unaligned) */
		memcpy(&it, rec->hdr, sizeof(it));
		*tid = it.tid;
		*pid = it.pid;
	}
	return 1;
}

static void tl_add(struct hwt_decoder *d, uint32_t cpu, uint64_t time, uint32_t tid)
{
	struct cpu_tl *tl = NULL;
	for (size_t i = 0; i < d->ntls; i++)
		if (d->tls[i].cpu == cpu)
			tl = &d->tls[i];
	if (!tl) {
		struct cpu_tl *nv = realloc(d->tls, (d->ntls + 1) * sizeof(*nv));
		if (!nv)
			return;
		d->tls = nv;
		tl = &d->tls[d->ntls++];
		memset(tl, 0, sizeof(*tl));
		tl->cpu = cpu;
	}
	if (tl->nsw == tl->capsw) {
		size_t nc = tl->capsw ? 2 * tl->capsw : 64;
		struct switch_ev *nv = realloc(tl->sw, nc * sizeof(*nv));
		if (!nv)
			return;
		tl->sw = nv;
		tl->capsw = nc;
	}
	tl->sw[tl->nsw].time = time;
	tl->sw[tl->nsw].tid = tid;
	tl->sw[tl->nsw].seq = (uint32_t)tl->nsw;
	tl->nsw++;
	tl->sorted = 0;
}

static int sw_cmp(const void *a, const void *b)
{
	const struct switch_ev *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

uint32_t hwt_dec_cpu_tid_at(struct hwt_decoder *d, uint32_t cpu, uint64_t t, size_t *cursor)
{
	struct cpu_tl *tl = NULL;
	for (size_t k = 0; k < d->ntls; k++)
		if (d->tls[k].cpu == cpu)
			tl = &d->tls[k];
	if (!tl || !tl->nsw)
		return (uint32_t)-1;
	if (!tl->sorted) {
		qsort(tl->sw, tl->nsw, sizeof(*tl->sw), sw_cmp);
		tl->sorted = 1;
	}
	size_t i = *cursor < tl->nsw ? *cursor : 0;
	if (tl->sw[i].time > t || (i + 1 < tl->nsw && tl->sw[i + 1].time <= t)) {
		size_t lo = 0, hi = tl->nsw;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (tl->sw[mid].time <= t)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo ? lo - 1 : 0;
	}
	*cursor = i;
	return tl->sw[i].tid;
}

/* ---------------- time ---------------- */
int hwt_dec_have_time_conv(const struct hwt_decoder *d)
{
	return d->have_conv;
}

void hwt_dec_set_time_conv(struct hwt_decoder *d, uint16_t shift, uint32_t mult, uint64_t zero)
{
	d->have_conv = 1;
	d->time_shift = shift;
	d->time_mult = mult;
	d->time_zero = zero;
}

uint64_t hwt_decoder_tsc_to_ns(const struct hwt_decoder *d, uint64_t tsc)
{
	return hwt_dec_tsc_conv(d->have_conv, d->time_shift, d->time_mult, d->time_zero, tsc);
}

/* ---------------- delivery ---------------- */
struct hwt_perf_reader *hwt_dec_reader(struct hwt_decoder *d)
{
	return d->r;
}

const struct hwt_decode_consumer *hwt_dec_consumer(const struct hwt_decoder *d)
{
	return &d->c;
}

unsigned hwt_dec_jobs(const struct hwt_decoder *d)
{
	if (d->jobs)
		return d->jobs;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)(n < 256 ? n : 256) : 1;
}

unsigned hwt_dec_flags(const struct hwt_decoder *d)
{
	return d->flags;
}

void hwt_dec_emit_insn(struct hwt_decoder *d, struct hwt_dec_thread *t,
		       const struct hwt_dec_insn *in, const struct hwt_image *img, int have_time,
		       uint64_t time_ns)
{
	if (d->c.ranges) {
		struct hwt_dec_range r;
		memset(&r, 0, sizeof(r));
		r.ip = r.last = in->ip;
		r.end = in->ip + in->size;
		r.n = 1;
		r.have_time = (uint8_t) !!have_time;
		r.time_ns = have_time ? time_ns : 0;
		r.iclass = in->iclass;
		r.mode = in->mode;
		r.kind = HWT_DEC_NO_BRANCH;
		d->c.ranges(d->c.arg, t, &r, 1, img);
	} else if (d->c.insn) {
		d->c.insn(d->c.arg, t, in, img, have_time, time_ns);
	}
}

void hwt_dec_emit_branch(struct hwt_decoder *d, struct hwt_dec_thread *t, uint64_t from,
			 uint64_t to, int kind, const struct hwt_image *img, int have_time,
			 uint64_t time_ns)
{
	if (d->c.ranges) {
		struct hwt_dec_range r;
		memset(&r, 0, sizeof(r));
		r.from = from;
		r.to = to;
		r.kind = (uint8_t)kind;
		r.br_have_time = (uint8_t) !!have_time;
		r.br_time_ns = have_time ? time_ns : 0;
		d->c.ranges(d->c.arg, t, &r, 1, img);
	} else if (d->c.branches) {
		struct hwt_dec_branch b = {.from = from,
					   .to = to,
					   .kind = (uint8_t)kind,
					   .have_time = (uint8_t) !!have_time,
					   .time_ns = time_ns};
		d->c.branches(d->c.arg, t, &b, 1, img);
	} else if (d->c.branch) {
		d->c.branch(d->c.arg, t, from, to, kind, img, have_time, time_ns);
	}
}

void hwt_dec_emit_event(struct hwt_decoder *d, struct hwt_dec_thread *t,
			const struct hwt_dec_event *ev)
{
	if (d->c.event)
		d->c.event(d->c.arg, t, ev);
}

void hwt_dec_emit_gap(struct hwt_decoder *d, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip,
		      int err)
{
	d->gaps++;
	if (d->c.gap)
		d->c.gap(d->c.arg, t, offset, ip, err);
}

void hwt_dec_emit_sample(struct hwt_decoder *d, struct hwt_dec_thread *t,
			 const struct hwt_dec_sample *s)
{
	d->nr_samples++;
	if (!d->c.sample)
		return;
	struct hwt_dec_sample c = *s;
	struct hwt_process *p = t ? proc_find(d, t->pid) : NULL;
	if (!p)
		p = d->all;
	if (!c.img)
		c.img = hwt_process_image(p, NULL);
	if (!c.data_map && (c.flags & HWT_DSF_HAVE_ADDR)) {
		const struct hwt_process_map *m = hwt_process_find(p, c.addr);
		if (m) {
			c.data_map = m->path;
			c.data_map_start = m->start;
		}
	}
	d->c.sample(d->c.arg, t, &c);
}

/* ---------------- the vdso ---------------- */
static void vdso_map_into(struct hwt_decoder *d, uint32_t pid, uint64_t addr, uint64_t len)
{
	size_t n = d->vdso_size < len ? d->vdso_size : (size_t)len;
	struct hwt_process *p = proc_find(d, pid);
	if (p)
		hwt_process_map_mem(p, addr, d->vdso, n, "[vdso]");
	hwt_process_map_mem(d->all, addr, d->vdso, n, "[vdso]");
}

/* Build-id entries (perf.data-file-format.txt: header, pid, 24 bytes of
 * build-id whose 21st byte is the length when misc has bit 15, name
 * padded): the BUILD_ID feature is a run of them, a HEADER_BUILD_ID
 * record is one.  The [vdso] one's code is read from the build-id cache. */
static void vdso_from_buildids(struct hwt_decoder *d, const uint8_t *f, size_t size)
{
	if (d->vdso || !d->have_bdir)
		return;
	for (size_t off = 0; off + 36 < size;) {
		struct perf_event_header h;
		memcpy(&h, f + off, sizeof(h));
		if (h.size <= 36 || h.size > size - off)
			break;
		const uint8_t *rec = f + off;
		size_t len = h.misc & (1u << 15) ? rec[32] : 20;
		const char *name = (const char *)rec + 36;
		if (len && len <= 20 && memchr(name, 0, h.size - 36) && !strcmp(name, "[vdso]") &&
		    !hwt_vdso_cache_load(d->bdir, rec + 12, len, &d->vdso, &d->vdso_size))
			break;
		off += h.size;
	}
	if (!d->vdso)
		return;
	for (size_t i = 0; i < d->nvmaps; i++)
		vdso_map_into(d, d->vmaps[i].pid, d->vmaps[i].addr, d->vmaps[i].len);
	free(d->vmaps);
	d->vmaps = NULL;
	d->nvmaps = 0;
}

static void vdso_from_feature(struct hwt_decoder *d)
{
	if (d->vdso || d->vdso_feat_tried)
		return;
	size_t size = 0;
	const uint8_t *f = hwt_perf_reader_feature(d->r, HWT_FEAT_BUILD_ID, &size);
	if (!f)
		return; /* (a pipe may still bring it) */
	d->vdso_feat_tried = 1;
	vdso_from_buildids(d, f, size);
}

/* ---------------- sideband ---------------- */
static const char *rec_str(const struct hwt_perf_record *rec, size_t off)
{
	const char *s = (const char *)rec->hdr + off;
	size_t max = rec->size > off ? rec->size - off : 0;
	return memchr(s, 0, max) ? s : NULL;
}

static void on_mmap(struct hwt_decoder *d, const struct hwt_perf_record *rec)
{
	int v2 = rec->type == PERF_RECORD_MMAP2;
	size_t fix = v2 ? sizeof(struct hwt_perf_rec_mmap2) : sizeof(struct hwt_perf_rec_mmap);
	if (rec->size < fix)
		return;
	/* copies: a pipe's records may be unaligned */
	struct hwt_perf_rec_mmap mm;
	memcpy(&mm, rec->hdr, sizeof(mm));
	const struct hwt_perf_rec_mmap *m = &mm;
	uint32_t prot = 0;
	if (v2) {
		struct hwt_perf_rec_mmap2 m2;
		memcpy(&m2, rec->hdr, sizeof(m2));
		prot = m2.prot;
	}
	const char *path = rec_str(rec, fix);
	if (!path || m->pid == (uint32_t)-1 || !m->len)
		return;
	struct hwt_process *p = hwt_dec_process_get(d, m->pid);
	if (!strcmp(path, "[vdso]")) {
		vdso_from_feature(d);
		if (d->vdso) {
			vdso_map_into(d, m->pid, m->addr, m->len);
			return;
		}
		struct vdso_map *nv = realloc(d->vmaps, (d->nvmaps + 1) * sizeof(*nv));
		if (nv) {
			d->vmaps = nv;
			nv[d->nvmaps].pid = m->pid;
			nv[d->nvmaps].addr = m->addr;
			nv[d->nvmaps++].len = m->len;
		}
	}
	if (p)
		hwt_process_mmap(p, m->addr, m->len, m->pgoff, prot, path);
	hwt_process_mmap(d->all, m->addr, m->len, m->pgoff, prot, path);
}

static void on_sideband(struct hwt_decoder *d, const struct hwt_perf_record *rec)
{
	switch (rec->type) {
	case PERF_RECORD_COMM: {
		if (rec->size < sizeof(struct hwt_perf_rec_comm))
			break;
		struct hwt_perf_rec_comm cc;
		memcpy(&cc, rec->hdr, sizeof(cc));
		const struct hwt_perf_rec_comm *c = &cc;
		hwt_dec_thread_get(d, c->tid, c->pid);
		if (rec->misc & PERF_RECORD_MISC_COMM_EXEC) {
			struct hwt_process *p = hwt_dec_process_get(d, c->pid);
			if (p)
				hwt_process_exec(p);
		}
		break;
	}
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_MMAP:
		on_mmap(d, rec);
		break;
	case PERF_RECORD_FORK: {
		if (rec->size < sizeof(struct hwt_perf_rec_fork))
			break;
		struct hwt_perf_rec_fork ff;
		memcpy(&ff, rec->hdr, sizeof(ff));
		const struct hwt_perf_rec_fork *f = &ff;
		hwt_dec_thread_get(d, f->tid, f->pid);
		if (f->pid != f->ppid) {
			struct hwt_process *pp = proc_find(d, f->ppid);
			struct hwt_process *np =
			    pp ? hwt_process_fork(pp, f->pid) : proc_new(d, f->pid);
			if (np)
				proc_replace(d, f->pid, np);
		}
		break;
	}
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		uint32_t tid, pid;
		if (switch_in(rec, &tid, &pid)) {
			hwt_dec_thread_get(d, tid, pid);
			tl_add(d, rec->sid.cpu, rec->sid.time, tid);
		}
		break;
	}
	case HWT_PERF_RECORD_HEADER_BUILD_ID:
		vdso_from_buildids(d, (const uint8_t *)rec->hdr, rec->size);
		break;
	case HWT_PERF_RECORD_TIME_CONV: /* formats without their own (arm_spe) */
		if (!d->have_conv && rec->size >= 32) {
			struct hwt_perf_rec_time_conv tc;
			memset(&tc, 0, sizeof(tc));
			memcpy(&tc, rec->hdr, rec->size < sizeof(tc) ? rec->size : sizeof(tc));
			if (tc.time_mult)
				hwt_dec_set_time_conv(d, (uint16_t)tc.time_shift,
						      (uint32_t)tc.time_mult, tc.time_zero);
		}
		break;
	default:
		break;
	}
}

/* ---------------- formats ---------------- */
static int format_start(struct hwt_decoder *d, uint32_t type, const uint64_t *priv, size_t n)
{
	d->have_fmt = 1;
	d->format = type;
	d->ops = hwt_decoder_ops_find(type);
	if (!d->ops) {
		char known[256] = "";
		hwt_decoder_ops_names(known, sizeof(known));
		hwt_dec_set_err(d,
				"the recording's trace format %s (AUXTRACE_INFO type %u) has no "
				"decoder in this hwt (it decodes: %s)",
				hwt_decoder_format_name(type), type, known);
		return HWT_ERR_NOT_SUPPORTED;
	}
	int err = d->ops->create(d, priv, n, &d->fst);
	if (err) {
		d->ops = NULL;
		if (!d->err[0])
			hwt_dec_set_err(d, "cannot set up the %s decoder: %s",
					hwt_decoder_format_name(type), hwt_errstr(err));
	}
	return err;
}

static int on_auxtrace(struct hwt_decoder *d, const struct hwt_perf_record *rec)
{
	d->nr_aux++;
	if (!d->have_fmt) {
		int err = format_start(d, HWT_PERF_AUXTRACE_INTEL_PT, NULL, 0);
		if (err)
			return err;
	}
	if (!d->ops)
		return 0;
	int is_new;
	struct hwt_dec_queue *q = queue_get(d, rec->aux_idx, &is_new);
	if (!q)
		return HWT_ERR_NOMEM;
	if (is_new) {
		q->tid = rec->sid.tid;
		q->cpu = rec->sid.cpu;
		/* per-thread with a cpu is still per-thread */
		q->per_cpu = rec->sid.tid == (uint32_t)-1;
	}
	if (!rec->aux_data || !rec->aux_size)
		return 0;
	return d->ops->chunk(d->fst, q, rec->aux_data, (size_t)rec->aux_size, rec->aux_offset);
}

/* Does a record of this type change the engine's state (on_sideband) or
 * deliver something (samples)?  Then the format quiesces first; records
 * such as AUX, FINISHED_ROUND or LOST come often and change nothing. */
static int changes_engine(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_SAMPLE:
	case HWT_PERF_RECORD_HEADER_BUILD_ID:
	case HWT_PERF_RECORD_TIME_CONV:
		return 1;
	default:
		return 0;
	}
}

static int on_record(struct hwt_decoder *d, const struct hwt_perf_record *rec)
{
	if (rec->type == HWT_PERF_RECORD_AUXTRACE)
		return on_auxtrace(d, rec);
	if (rec->type == HWT_PERF_RECORD_AUXTRACE_INFO) {
		if (d->have_fmt || rec->size < sizeof(struct hwt_perf_rec_auxtrace_info))
			return 0; /* the first one counts */
		struct hwt_perf_rec_auxtrace_info ai;
		memcpy(&ai, rec->hdr, sizeof(ai));
		size_t nr = (rec->size - sizeof(ai)) / 8;
		/* the private words, aligned (a pipe's records may not be) */
		uint64_t *priv = nr ? malloc(nr * 8) : NULL;
		if (nr && !priv)
			return HWT_ERR_NOMEM;
		if (nr)
			memcpy(priv, (const uint8_t *)rec->hdr + sizeof(ai), nr * 8);
		int err = format_start(d, ai.type, priv, nr);
		free(priv);
		return err;
	}
	if (d->ops && d->ops->quiesce && (d->ops->record || changes_engine(rec->type))) {
		int err = d->ops->quiesce(d->fst);
		if (err)
			return err;
	}
	on_sideband(d, rec);
	if (rec->type == PERF_RECORD_SAMPLE) {
		int err = hwt_dec_pebs_sample(d, rec);
		if (err)
			return err;
	}
	if (d->ops && d->ops->record)
		return d->ops->record(d->fst, rec);
	return 0;
}

/* The end: every queue flushed, then finish (per-CPU trace). */
static int at_end(struct hwt_decoder *d)
{
	if (!d->ops)
		return 0;
	int err = 0;
	for (size_t i = 0; i < d->nqueues && !err; i++)
		if (d->ops->flush)
			err = d->ops->flush(d->fst, d->queues[i]);
	if (!err && d->ops->finish)
		err = d->ops->finish(d->fst);
	return err;
}

/* ---------------- lifecycle ---------------- */
void hwt_decoder_config_init(struct hwt_decoder_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

int hwt_decoder_alloc(struct hwt_decoder **out, const struct hwt_decoder_config *cfg)
{
	if (!out)
		return HWT_ERR_INVALID;
	*out = NULL;
	if (!cfg || cfg->size < offsetof(struct hwt_decoder_config, errbuf) ||
	    (!cfg->path == !cfg->reader)) {
		if (cfg && cfg->errbuf && cfg->errlen)
			snprintf(cfg->errbuf, cfg->errlen,
				 "bad decoder config: initialize it with hwt_decoder_config_init "
				 "and set exactly one of path and reader");
		return HWT_ERR_INVALID;
	}
	char *errbuf = cfg->size >= offsetof(struct hwt_decoder_config, errlen) + sizeof(size_t)
			   ? cfg->errbuf
			   : NULL;
	size_t errlen = errbuf ? cfg->errlen : 0;
	if (cfg->consumer && cfg->consumer->size < offsetof(struct hwt_decode_consumer, insn)) {
		if (errlen)
			snprintf(errbuf, errlen,
				 "the consumer's size is not set (set it to sizeof(struct "
				 "hwt_decode_consumer))");
		return HWT_ERR_INVALID;
	}
	struct hwt_decoder *d = calloc(1, sizeof(*d));
	if (!d)
		return HWT_ERR_NOMEM;
	if (cfg->consumer) {
		size_t n = cfg->consumer->size < sizeof(d->c) ? cfg->consumer->size : sizeof(d->c);
		memcpy(&d->c, cfg->consumer, n);
	}
	if (cfg->size >= offsetof(struct hwt_decoder_config, flags) + sizeof(cfg->flags)) {
		d->jobs = cfg->jobs;
		d->flags = cfg->flags;
	} else {
		d->jobs = 1; /* older callers: as before */
	}
	if (cfg->size >=
		offsetof(struct hwt_decoder_config, debug_dirs) + sizeof(cfg->debug_dirs) &&
	    cfg->debug_dirs && *cfg->debug_dirs && !(d->debug_dirs = strdup(cfg->debug_dirs))) {
		free(d);
		return HWT_ERR_NOMEM;
	}
	d->all = proc_new(d, 0);
	if (!d->all) {
		free(d->debug_dirs);
		free(d);
		return HWT_ERR_NOMEM;
	}
	if (cfg->buildid_dir) {
		snprintf(d->bdir, sizeof(d->bdir), "%s", cfg->buildid_dir);
		d->have_bdir = 1;
	} else {
		d->have_bdir = !hwt_buildid_dir(d->bdir, sizeof(d->bdir));
	}
	if (cfg->reader) {
		d->r = cfg->reader;
	} else {
		int err = hwt_perf_reader_open(&d->r, cfg->path, errbuf, errlen);
		if (err) {
			int e = errno;
			hwt_process_free(d->all);
			free(d->debug_dirs);
			free(d);
			errno = e;
			return err;
		}
		d->own_reader = 1;
	}
	vdso_from_feature(d);
	*out = d;
	return 0;
}

void hwt_decoder_free(struct hwt_decoder *d)
{
	if (!d)
		return;
	if (d->ops && d->ops->free)
		d->ops->free(d->fst);
	for (size_t i = 0; i < d->nqueues; i++)
		free(d->queues[i]);
	free(d->queues);
	for (size_t i = 0; i < d->nprocs; i++)
		hwt_process_free(d->procs[i].p);
	free(d->procs);
	for (size_t i = 0; i < d->nthreads; i++) {
		if (d->c.thread_free)
			d->c.thread_free(d->c.arg, d->threads[i]);
		free(d->threads[i]);
	}
	free(d->threads);
	for (size_t i = 0; i < d->ntls; i++)
		free(d->tls[i].sw);
	free(d->tls);
	free(d->vdso);
	free(d->vmaps);
	hwt_process_free(d->all);
	if (d->own_reader)
		hwt_perf_reader_free(d->r);
	free(d->debug_dirs);
	free(d);
}

int hwt_decoder_step(struct hwt_decoder *d)
{
	if (!d)
		return HWT_ERR_INVALID;
	if (d->done)
		return d->done_rc;
	struct hwt_perf_record rec;
	int rc = hwt_perf_reader_next(d->r, &rec);
	if (rc == 1) {
		int err = on_record(d, &rec);
		if (!err)
			return 1;
		d->done = 1;
		d->done_rc = err;
		if (err != HWT_ERR_NOT_SUPPORTED)
			at_end(d); /* deliver what there is */
		return err;
	}
	if (rc < 0)
		hwt_dec_set_err(d, "%s", hwt_perf_reader_errmsg(d->r));
	int err = at_end(d);
	d->done = 1;
	d->done_rc = rc < 0 ? rc : err;
	return d->done_rc;
}

int hwt_decoder_run(struct hwt_decoder *d)
{
	int rc;
	while ((rc = hwt_decoder_step(d)) == 1)
		;
	return rc;
}

int hwt_decoder_info(const struct hwt_decoder *d, struct hwt_decoder_info *info)
{
	if (!d || !info || info->size < sizeof(size_t))
		return HWT_ERR_INVALID;
	struct hwt_decoder_info i;
	memset(&i, 0, sizeof(i));
	i.size = info->size;
	i.format = d->have_fmt ? d->format : 0;
	i.format_name = d->have_fmt ? hwt_decoder_format_name(d->format) : "";
	i.nr_aux = d->nr_aux;
	i.nr_queues = d->nqueues;
	for (size_t k = 0; k < d->nqueues; k++)
		if (d->queues[k]->per_cpu)
			i.per_cpu = 1;
	i.nr_gaps = d->gaps;
	i.have_time_conv = d->have_conv;
	i.time_shift = d->time_shift;
	i.time_mult = d->time_mult;
	i.time_zero = d->time_zero;
	i.have_vdso = d->vdso != NULL;
	i.nr_threads = d->nthreads;
	i.nr_processes = d->nprocs;
	i.nr_samples = d->nr_samples;
	size_t n = info->size < sizeof(i) ? info->size : sizeof(i);
	memcpy(info, &i, n);
	return 0;
}
