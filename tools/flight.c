/* tools/flight.c - the flight recorder's report: the last N taken branches
 * of each thread and its call stack as reconstructed from the trace.
 *
 * Design: per thread a ring of the newest N branches (symbolized when fed:
 * the images may be gone when the report is printed) and a shadow stack
 * of the calls not yet returned: a call pushes its call site; a return
 * pops the frame whose return address it goes to (the call site plus at
 * most 15 bytes, the longest x86 instruction; frames above it were left
 * by longjmp or exceptions), or the top frame when none matches.  A
 * return with no frame left goes to a caller older than the trace window:
 * the report then says that outer frames are missing.  Calls to the next
 * instruction (the "call; pop" idiom) are not calls.  Asynchronous
 * branches (signals) leave the stack alone.  Limits: FL_STACK_MAX frames
 * (the oldest dropped); a gap leaves the stack as it was (the report
 * counts the gaps).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"

#define FL_STACK_MAX 4096
#define FL_RET_SLACK 15

struct fl_branch {
	struct hwt_out_loc from, to;
	int kind;
};

struct fl_thread {
	uint32_t pid, tid;
	struct fl_branch *ring; /* last_n entries */
	uint64_t nbr;		/* branches fed (ring position) */
	struct hwt_out_loc *stack;
	size_t depth, cap;
	int underflow;	  /* returned past the window's oldest frame */
	uint64_t dropped; /* frames dropped at FL_STACK_MAX */
	uint64_t gaps;
};

struct flight {
	unsigned last_n;
	flight_locate_fn locate;
	void *arg;
	struct fl_thread **th;
	size_t nth, capth;
	struct fl_thread *cur; /* the last thread fed (a one-entry cache) */
};

struct flight *flight_alloc(unsigned last_n, flight_locate_fn locate, void *arg)
{
	struct flight *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->last_n = last_n ? last_n : 1;
	f->locate = locate;
	f->arg = arg;
	return f;
}

void flight_free(struct flight *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nth; i++) {
		free(f->th[i]->ring);
		free(f->th[i]->stack);
		free(f->th[i]);
	}
	free(f->th);
	free(f);
}

static struct fl_thread *thread_of(struct flight *f, uint32_t tid)
{
	if (f->cur && f->cur->tid == tid)
		return f->cur;
	for (size_t i = 0; i < f->nth; i++)
		if (f->th[i]->tid == tid)
			return f->cur = f->th[i];
	if (f->nth == f->capth) {
		size_t nc = f->capth ? 2 * f->capth : 16;
		struct fl_thread **v = realloc(f->th, nc * sizeof(*v));
		if (!v)
			return NULL;
		f->th = v;
		f->capth = nc;
	}
	struct fl_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ring = calloc(f->last_n, sizeof(*t->ring));
	if (!t->ring) {
		free(t);
		return NULL;
	}
	t->tid = tid;
	f->th[f->nth++] = t;
	return f->cur = t;
}

static void push(struct fl_thread *t, const struct hwt_out_loc *site)
{
	if (t->depth == FL_STACK_MAX) {
		memmove(t->stack, t->stack + 1, (FL_STACK_MAX - 1) * sizeof(*t->stack));
		t->depth--;
		t->dropped++;
	}
	if (t->depth == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		struct hwt_out_loc *v = realloc(t->stack, nc * sizeof(*v));
		if (!v)
			return;
		t->stack = v;
		t->cap = nc;
	}
	t->stack[t->depth++] = *site;
}

static void pop_to(struct fl_thread *t, uint64_t to)
{
	if (!t->depth) {
		t->underflow = 1;
		return;
	}
	for (size_t i = t->depth; i-- > 0;) {
		uint64_t site = t->stack[i].ip;
		if (to > site && to - site <= FL_RET_SLACK) {
			t->depth = i;
			return;
		}
		if (t->depth - i >= 64)
			break;
	}
	t->depth--;
}

void flight_branch(struct flight *f, uint32_t pid, uint32_t tid, uint64_t from, uint64_t to,
		   int kind, const void *img)
{
	struct fl_thread *t = thread_of(f, tid);
	if (!t)
		return;
	t->pid = pid;
	struct fl_branch *b = &t->ring[t->nbr++ % f->last_n];
	f->locate(f->arg, img, from, &b->from);
	f->locate(f->arg, img, to, &b->to);
	b->kind = kind;
	if ((kind == HWT_BR_CALL || kind == HWT_BR_ICALL) && !(to > from && to - from <= 5))
		push(t, &b->from);
	else if (kind == HWT_BR_RET)
		pop_to(t, to);
}

void flight_gap(struct flight *f, uint32_t tid, uint64_t offset, uint64_t ip, int err)
{
	(void)offset, (void)ip, (void)err;
	struct fl_thread *t = thread_of(f, tid);
	if (t)
		t->gaps++;
}

const char *flight_signame(int sig, char *buf, unsigned len)
{
	const char *abbr = sigabbrev_np(sig);
	const char *desc = sigdescr_np(sig);
	if (abbr)
		snprintf(buf, len, "SIG%s (%s)", abbr, desc ? desc : "?");
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

/* "  #N IP sym+off[ src]" */
static void frame(struct hwt_outbuf *o, unsigned n, const struct hwt_out_loc *l, const char *note)
{
	char line[96];
	snprintf(line, sizeof(line), "  #%-2u 0x%llx ", n, (unsigned long long)l->ip);
	hwt_out_str(o, line);
	if (l->sym) {
		hwt_out_str(o, l->sym);
		snprintf(line, sizeof(line), "+0x%llx", (unsigned long long)l->off);
		hwt_out_str(o, line);
	} else {
		hwt_out_str(o, "[unknown]");
	}
	if (l->src) {
		hwt_out_char(o, ' ');
		hwt_out_str(o, l->src);
	}
	if (note)
		hwt_out_str(o, note);
	hwt_out_char(o, '\n');
}

static void report_thread(struct flight *f, struct hwt_outbuf *o, const struct fl_thread *t,
			  const struct flight_fatal *fatal)
{
	char line[256], sn[96];
	if (fatal && fatal->sig && fatal->tid == (int32_t)t->tid) {
		snprintf(line, sizeof(line), "thread %u (pid %u) died of %s\n", t->tid, t->pid,
			 flight_signame(fatal->sig, sn, sizeof(sn)));
		hwt_out_str(o, line);
	}
	uint64_t n = t->nbr < f->last_n ? t->nbr : f->last_n;
	snprintf(line, sizeof(line),
		 "last %llu taken branch%s of thread %u, oldest first (of %llu decoded%s):\n",
		 (unsigned long long)n, n == 1 ? "" : "es", t->tid, (unsigned long long)t->nbr,
		 t->gaps ? ", with gaps" : "");
	hwt_out_str(o, line);
	for (uint64_t i = t->nbr - n; i < t->nbr; i++) {
		const struct fl_branch *b = &t->ring[i % f->last_n];
		hwt_out_branch_text(o, t->tid, 0, 0, b->kind, &b->from, &b->to);
	}
	snprintf(line, sizeof(line),
		 "call stack of thread %u from the trace, innermost first (calls not yet "
		 "returned):\n",
		 t->tid);
	hwt_out_str(o, line);
	unsigned k = 0;
	if (n) {
		const struct fl_branch *last = &t->ring[(t->nbr - 1) % f->last_n];
		frame(o, k++, &last->to, "  (last branch target)");
	}
	for (size_t i = t->depth; i-- > 0;)
		frame(o, k++, &t->stack[i], NULL);
	if (t->underflow || t->dropped)
		hwt_out_str(o, "  ... (outer frames: called before the trace window)\n");
	if (t->gaps) {
		snprintf(line, sizeof(line),
			 "  (%llu gap%s in the trace: frames may be missing or stale)\n",
			 (unsigned long long)t->gaps, t->gaps == 1 ? "" : "s");
		hwt_out_str(o, line);
	}
}

int flight_report(struct flight *f, struct hwt_outbuf *o, long tid,
		  const struct flight_fatal *fatal)
{
	int done = 0;
	const struct fl_thread *last = NULL;
	for (size_t i = 0; i < f->nth; i++) {
		const struct fl_thread *t = f->th[i];
		if (tid >= 0 && (long)t->tid != tid)
			continue;
		if (tid < 0 && fatal && fatal->sig && fatal->tid == (int32_t)t->tid) {
			last = t; /* the fatal thread comes last, nearest the prompt */
			continue;
		}
		if (done++)
			hwt_out_char(o, '\n');
		report_thread(f, o, t, fatal);
	}
	if (last) {
		if (done++)
			hwt_out_char(o, '\n');
		report_thread(f, o, last, fatal);
	}
	return done;
}

int flight_read_fatal(const char *path, struct flight_fatal *v, int max)
{
	struct hwt_perf_reader *r = NULL;
	char eb[128];
	if (hwt_perf_reader_open(&r, path, eb, sizeof(eb)))
		return 0;
	size_t size = 0;
	const char *p = hwt_perf_reader_feature(r, HWT_FEAT_HWT_FATAL, &size);
	int n = 0;
	char line[128];
	for (size_t at = 0; p && at < size && n < max;) {
		size_t l = 0;
		while (at + l < size && p[at + l] != '\n')
			l++;
		snprintf(line, sizeof(line), "%.*s", (int)(l < 127 ? l : 127), p + at);
		int pid, tid, sig;
		if (sscanf(line, "fatal pid=%d tid=%d signal=%d", &pid, &tid, &sig) == 3 &&
		    sig > 0) {
			v[n].pid = pid;
			v[n].tid = tid;
			v[n].sig = sig;
			n++;
		}
		at += l + 1;
	}
	hwt_perf_reader_free(r);
	return n;
}
