/* lib/out/timeline.c - the call-timeline writer (timeline.h): Chrome JSON
 * and Perfetto protobuf.
 *
 * Per thread: a stack of open calls (start time, interned name) of which
 * the bottom `committed` ones have had their begin written.  Before each
 * event at time t the thread "advances": open calls that have lasted
 * min_duration_ns by t (and are inside the window and the depth limit)
 * get their begin written, bottom up, so a track's events stay in time
 * order although a begin may be written late.  A return pops the top
 * call and writes its end if its begin was written.
 *
 * Perfetto: the trace is a sequence of TracePacket messages (field 1 of
 * the Trace message), all on packet sequence 1 (the first one clears the
 * incremental state); a TrackDescriptor per process (uuid 1<<56 | pid)
 * and per thread (uuid 2<<56 | tid, with a ThreadDescriptor), then
 * TrackEvents of type SLICE_BEGIN / SLICE_END / INSTANT with the
 * packet's timestamp in ns.  Field numbers are those of Perfetto's
 * protos/perfetto/trace/ (trace_packet.proto, track_event/ protos).
 * Chrome JSON: {"traceEvents":[...]} with "M" (process/thread names),
 * "B"/"E" and "i" events, ts in microseconds with ns precision.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "out/addrmap.h"
#include "out/timeline.h"

#define NAME_MAX_BYTES 1024

struct frame {
	uint64_t start;
	const char *name;
};

struct tthread {
	uint32_t pid, tid;
	int described, done;
	struct frame *f;
	size_t n, cap, committed;
	uint64_t last;
};

struct hwt_timeline {
	struct hwt_timeline_config cfg;
	struct hwt_outbuf *o;
	struct tthread *t;
	size_t nt, capt;
	struct hwt_amap tmap; /* tid -> thread + 1 */
	struct hwt_amap pmap; /* pid -> 1: process described */
	struct hwt_strtab str;
	uint64_t slices;
	int first; /* nothing written yet */
	int nomem;
};

void hwt_timeline_config_init(struct hwt_timeline_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

/* ---------------- text helpers ---------------- */

/* Length of the valid UTF-8 sequence at p (1..4), 0 if not valid. */
static int utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	int len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	for (int i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
		return 0;
	if (len == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90)))
		return 0;
	return len;
}

/* s as valid UTF-8 without control characters, at most max bytes. */
static size_t clean(char *out, size_t max, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (*p) {
		int l = utf8_len(p);
		if (!l || *p < 0x20 || *p == 0x7f) {
			if (n + 1 > max)
				break;
			out[n++] = '?';
			p++;
			continue;
		}
		if (n + (size_t)l > max)
			break;
		memcpy(out + n, p, (size_t)l);
		n += (size_t)l;
		p += l;
	}
	return n;
}

void hwt_out_json(struct hwt_outbuf *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			hwt_out_char(o, '\\');
			hwt_out_char(o, (char)c);
		} else if (c < 0x20) {
			char u[8];
			snprintf(u, sizeof(u), "\\u%04x", c);
			hwt_out_mem(o, u, 6);
		} else if (c < 0x80) {
			hwt_out_char(o, (char)c);
		} else {
			int l = utf8_len(p);
			if (!l) {
				hwt_out_char(o, '?');
			} else {
				hwt_out_mem(o, (const char *)p, (size_t)l);
				p += l;
				continue;
			}
		}
		p++;
	}
}

/* ---------------- protobuf wire format ---------------- */

struct pb {
	uint8_t b[NAME_MAX_BYTES * 2 + 256];
	size_t n;
};

static void pb_varint(struct pb *m, uint64_t v)
{
	while (v >= 0x80 && m->n < sizeof(m->b)) {
		m->b[m->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	if (m->n < sizeof(m->b))
		m->b[m->n++] = (uint8_t)v;
}
static void pb_uint(struct pb *m, unsigned field, uint64_t v)
{
	pb_varint(m, (uint64_t)field << 3);
	pb_varint(m, v);
}
static void pb_bytes(struct pb *m, unsigned field, const void *d, size_t len)
{
	pb_varint(m, (uint64_t)field << 3 | 2);
	pb_varint(m, len);
	if (m->n + len <= sizeof(m->b)) {
		memcpy(m->b + m->n, d, len);
		m->n += len;
	}
}
static void pb_str(struct pb *m, unsigned field, const char *s)
{
	char buf[NAME_MAX_BYTES];
	pb_bytes(m, field, buf, clean(buf, sizeof(buf), s));
}

/* TracePacket fields */
enum {
	TP_TIMESTAMP = 8,
	TP_SEQ_ID = 10,
	TP_TRACK_EVENT = 11,
	TP_SEQ_FLAGS = 13,
	TP_TRACK_DESCRIPTOR = 60
};
/* TrackEvent */
enum {
	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_TRACK_UUID = 11,
	TE_CATEGORIES = 22,
	TE_NAME = 23
};
enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3 };
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, DebugAnnotation */
enum { TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4 };
enum { PD_PID = 1, PD_NAME = 6 };
enum { THD_PID = 1, THD_TID = 2, THD_NAME = 5 };
enum { DA_STRING = 6, DA_NAME = 10 };

static uint64_t proc_uuid(uint32_t pid)
{
	return 1ull << 56 | pid;
}
static uint64_t thread_uuid(uint32_t tid)
{
	return 2ull << 56 | tid;
}

/* Write one TracePacket holding the sub-message sub as field. */
static void pb_packet(struct hwt_timeline *tl, int have_ts, uint64_t ts, unsigned field,
		      const struct pb *sub)
{
	struct pb *p = malloc(sizeof(*p));
	if (!p) {
		tl->nomem = 1;
		return;
	}
	p->n = 0;
	if (have_ts)
		pb_uint(p, TP_TIMESTAMP, ts);
	pb_uint(p, TP_SEQ_ID, 1);
	if (tl->first) {
		pb_uint(p, TP_SEQ_FLAGS, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
		tl->first = 0;
	}
	pb_bytes(p, field, sub->b, sub->n);
	struct pb head;
	head.n = 0;
	pb_varint(&head, 1u << 3 | 2); /* Trace.packet */
	pb_varint(&head, p->n);
	hwt_out_mem(tl->o, (const char *)head.b, head.n);
	hwt_out_mem(tl->o, (const char *)p->b, p->n);
	free(p);
}

/* ---------------- events ---------------- */

static void write_ts(struct hwt_outbuf *o, uint64_t ns)
{
	char buf[48];
	int n = snprintf(buf, sizeof(buf), "%llu.%03llu", (unsigned long long)(ns / 1000),
			 (unsigned long long)(ns % 1000));
	hwt_out_mem(o, buf, (size_t)n);
}

static void json_head(struct hwt_timeline *tl, const char *ph, uint32_t pid, uint32_t tid)
{
	char buf[96];
	int n = snprintf(buf, sizeof(buf), "%s{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u",
			 tl->first ? "" : ",\n", ph, pid, tid);
	tl->first = 0;
	hwt_out_mem(tl->o, buf, (size_t)n);
}

static void describe(struct hwt_timeline *tl, struct tthread *th, const char *pname,
		     const char *tname)
{
	char pn[32], tn[32];
	snprintf(pn, sizeof(pn), "pid %u", th->pid);
	snprintf(tn, sizeof(tn), "tid %u", th->tid);
	if (!pname)
		pname = pn;
	if (!tname)
		tname = tn;
	int proc_new = !hwt_amap_get(&tl->pmap, th->pid);
	if (proc_new) {
		uint32_t *s = hwt_amap_slot(&tl->pmap, th->pid);
		if (!s) {
			tl->nomem = 1;
			return;
		}
		*s = 1;
		hwt_amap_added(&tl->pmap);
	}
	if (tl->cfg.format == HWT_TL_PERFETTO) {
		struct pb *td = malloc(sizeof(*td)), *d = malloc(sizeof(*d));
		if (!td || !d) {
			free(td);
			free(d);
			tl->nomem = 1;
			return;
		}
		if (proc_new) {
			d->n = 0;
			pb_uint(d, PD_PID, th->pid);
			pb_str(d, PD_NAME, pname);
			td->n = 0;
			pb_uint(td, TD_UUID, proc_uuid(th->pid));
			pb_bytes(td, TD_PROCESS, d->b, d->n);
			pb_packet(tl, 0, 0, TP_TRACK_DESCRIPTOR, td);
		}
		d->n = 0;
		pb_uint(d, THD_PID, th->pid);
		pb_uint(d, THD_TID, th->tid);
		pb_str(d, THD_NAME, tname);
		td->n = 0;
		pb_uint(td, TD_UUID, thread_uuid(th->tid));
		pb_bytes(td, TD_THREAD, d->b, d->n);
		pb_packet(tl, 0, 0, TP_TRACK_DESCRIPTOR, td);
		free(td);
		free(d);
	} else {
		if (proc_new) {
			json_head(tl, "M", th->pid, th->tid);
			hwt_out_str(tl->o, ",\"name\":\"process_name\",\"args\":{\"name\":\"");
			hwt_out_json(tl->o, pname);
			hwt_out_str(tl->o, "\"}}");
		}
		json_head(tl, "M", th->pid, th->tid);
		hwt_out_str(tl->o, ",\"name\":\"thread_name\",\"args\":{\"name\":\"");
		hwt_out_json(tl->o, tname);
		hwt_out_str(tl->o, "\"}}");
	}
	th->described = 1;
}

/* A slice begin/end or an instant on th's track. */
static void event(struct hwt_timeline *tl, struct tthread *th, int type, uint64_t t,
		  const char *name, const char *detail)
{
	if (tl->cfg.format == HWT_TL_PERFETTO) {
		struct pb *te = malloc(sizeof(*te));
		if (!te) {
			tl->nomem = 1;
			return;
		}
		te->n = 0;
		pb_uint(te, TE_TYPE, (uint64_t)type);
		pb_uint(te, TE_TRACK_UUID, thread_uuid(th->tid));
		if (name)
			pb_str(te, TE_NAME, name);
		if (detail) {
			struct pb *da = malloc(sizeof(*da));
			if (da) {
				da->n = 0;
				pb_str(da, DA_NAME, "detail");
				pb_str(da, DA_STRING, detail);
				pb_bytes(te, TE_DEBUG_ANNOTATIONS, da->b, da->n);
				free(da);
			}
		}
		pb_packet(tl, 1, t, TP_TRACK_EVENT, te);
		free(te);
		return;
	}
	json_head(tl,
		  type == TE_SLICE_BEGIN ? "B"
		  : type == TE_SLICE_END ? "E"
					 : "i",
		  th->pid, th->tid);
	hwt_out_str(tl->o, ",\"ts\":");
	write_ts(tl->o, t);
	if (type == TE_INSTANT)
		hwt_out_str(tl->o, ",\"s\":\"t\"");
	if (name) {
		char buf[NAME_MAX_BYTES + 1];
		buf[clean(buf, NAME_MAX_BYTES, name)] = 0;
		hwt_out_str(tl->o, ",\"name\":\"");
		hwt_out_json(tl->o, buf);
		hwt_out_char(tl->o, '"');
	}
	if (detail) {
		hwt_out_str(tl->o, ",\"args\":{\"detail\":\"");
		hwt_out_json(tl->o, detail);
		hwt_out_str(tl->o, "\"}");
	}
	hwt_out_char(tl->o, '}');
}

struct hwt_timeline *hwt_timeline_alloc(const struct hwt_timeline_config *cfg, struct hwt_outbuf *o)
{
	struct hwt_timeline *tl = calloc(1, sizeof(*tl));
	if (!tl)
		return NULL;
	hwt_timeline_config_init(&tl->cfg);
	if (cfg)
		memcpy(&tl->cfg, cfg, cfg->size < sizeof(tl->cfg) ? cfg->size : sizeof(tl->cfg));
	tl->cfg.size = sizeof(tl->cfg);
	tl->o = o;
	tl->first = 1;
	if (tl->cfg.format == HWT_TL_CHROME)
		hwt_out_str(o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	return tl;
}

void hwt_timeline_free(struct hwt_timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nt; i++)
		free(tl->t[i].f);
	free(tl->t);
	hwt_amap_fini(&tl->tmap);
	hwt_amap_fini(&tl->pmap);
	hwt_strtab_fini(&tl->str);
	free(tl);
}

static struct tthread *thread_of(struct hwt_timeline *tl, uint32_t pid, uint32_t tid)
{
	uint32_t *slot = hwt_amap_slot(&tl->tmap, tid);
	if (!slot) {
		tl->nomem = 1;
		return NULL;
	}
	if (*slot)
		return &tl->t[*slot - 1];
	if (tl->nt == tl->capt) {
		size_t nc = tl->capt ? 2 * tl->capt : 16;
		struct tthread *nv = realloc(tl->t, nc * sizeof(*nv));
		if (!nv) {
			tl->nomem = 1;
			return NULL;
		}
		tl->t = nv;
		tl->capt = nc;
	}
	struct tthread *th = &tl->t[tl->nt];
	memset(th, 0, sizeof(*th));
	th->pid = pid;
	th->tid = tid;
	*slot = (uint32_t)++tl->nt;
	hwt_amap_added(&tl->tmap);
	return th;
}

int hwt_timeline_thread(struct hwt_timeline *tl, uint32_t pid, uint32_t tid,
			const char *process_name, const char *thread_name)
{
	struct tthread *th = thread_of(tl, pid, tid);
	if (!th)
		return HWT_ERR_NOMEM;
	describe(tl, th, process_name, thread_name);
	return tl->nomem ? HWT_ERR_NOMEM : 0;
}

static void close_all(struct hwt_timeline *tl, struct tthread *th, uint64_t t)
{
	while (th->committed) {
		event(tl, th, TE_SLICE_END, t, NULL, NULL);
		th->committed--;
	}
}

/* Write the begins that are due at time t; 0 if th takes no more events. */
static int advance(struct hwt_timeline *tl, struct tthread *th, uint64_t t)
{
	if (th->done)
		return 0;
	if (!th->described)
		describe(tl, th, NULL, NULL);
	if (t < th->last)
		t = th->last; /* never go back in time on a track */
	th->last = t;
	if (tl->cfg.end_ns && t > tl->cfg.end_ns) {
		close_all(tl, th, tl->cfg.end_ns);
		th->done = 1;
		return 0;
	}
	if (t < tl->cfg.start_ns)
		return 1;
	while (th->committed < th->n && (!tl->cfg.max_depth || th->committed < tl->cfg.max_depth)) {
		struct frame *f = &th->f[th->committed];
		uint64_t s = f->start > tl->cfg.start_ns ? f->start : tl->cfg.start_ns;
		if (t - s < tl->cfg.min_duration_ns)
			break;
		event(tl, th, TE_SLICE_BEGIN, s, f->name, NULL);
		th->committed++;
		tl->slices++;
	}
	return 1;
}

int hwt_timeline_call(struct hwt_timeline *tl, uint32_t pid, uint32_t tid, uint64_t time_ns,
		      const char *name)
{
	struct tthread *th = thread_of(tl, pid, tid);
	if (!th || !advance(tl, th, time_ns))
		return th ? 0 : HWT_ERR_NOMEM;
	if (th->n == th->cap) {
		size_t nc = th->cap ? 2 * th->cap : 64;
		struct frame *nv = realloc(th->f, nc * sizeof(*nv));
		if (!nv)
			return HWT_ERR_NOMEM;
		th->f = nv;
		th->cap = nc;
	}
	const char *in = hwt_strtab_intern(&tl->str, name ? name : "[unknown]");
	if (!in)
		return HWT_ERR_NOMEM;
	th->f[th->n].start = th->last;
	th->f[th->n].name = in;
	th->n++;
	/* due now (no minimum duration): written at once */
	return advance(tl, th, th->last), 0;
}

int hwt_timeline_return(struct hwt_timeline *tl, uint32_t pid, uint32_t tid, uint64_t time_ns)
{
	struct tthread *th = thread_of(tl, pid, tid);
	if (!th)
		return HWT_ERR_NOMEM;
	if (!advance(tl, th, time_ns) || !th->n)
		return 0;
	th->n--;
	if (th->committed > th->n) {
		event(tl, th, TE_SLICE_END, th->last, NULL, NULL);
		th->committed--;
	}
	return 0;
}

int hwt_timeline_instant(struct hwt_timeline *tl, uint32_t pid, uint32_t tid, uint64_t time_ns,
			 const char *name, const char *detail)
{
	struct tthread *th = thread_of(tl, pid, tid);
	if (!th)
		return HWT_ERR_NOMEM;
	if (advance(tl, th, time_ns) && th->last >= tl->cfg.start_ns)
		event(tl, th, TE_INSTANT, th->last, name, detail);
	return 0;
}

int hwt_timeline_finish(struct hwt_timeline *tl)
{
	for (size_t i = 0; i < tl->nt; i++) {
		struct tthread *th = &tl->t[i];
		if (th->done)
			continue;
		advance(tl, th, th->last);
		close_all(tl, th, th->last);
		th->n = 0;
		th->done = 1;
	}
	if (tl->cfg.format == HWT_TL_CHROME)
		hwt_out_str(tl->o, "\n]}\n");
	hwt_outbuf_flush(tl->o);
	if (tl->nomem)
		return HWT_ERR_NOMEM;
	return tl->o->err ? HWT_ERR_IO : 0;
}

uint64_t hwt_timeline_slices(const struct hwt_timeline *tl)
{
	return tl ? tl->slices : 0;
}
