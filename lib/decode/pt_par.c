/* lib/decode/pt_par.c - parallel decode of a per-thread queue's regions
 * (hwt_decoder_config.jobs > 1).
 *
 * Design: a region that pt_chunk.c decodes in place (from a PSB to the
 * last complete PSB of a chunk) is cut at its inner PSBs into segments of
 * about SEG_BYTES (SEG_BYTES_INSN for instruction consumers).  Each
 * segment is a region of its own: its decoder starts from the PSB+ at its
 * start and stops at the next segment's PSB, whose FUP ip is its stop ip
 * (pt.c: what it decodes from there on is the next segment's), so the
 * segments do not depend on each other.  Worker threads (jobs of them,
 * started at the first parallel chunk, stopped by pt_par_free) decode them
 * with their own decoder state (struct pt) and decode cache, into records
 * (struct pt_cap: branches, instructions, events, gaps); the main thread
 * replays the records to the consumer in segment order, so the output is
 * the one of a sequential decode.  The seams are checked while replaying:
 * a segment that ends at a PSB must have reached that PSB's ip (else its
 * flow did not meet the next segment's start); mismatches are counted
 * (struct pt.seams_bad; they change nothing in the output, which is what
 * a sequential decode of the same regions gives as well).
 *
 * Limits: consumers that want times (HWT_DEC_WANT_TIME) and per-CPU
 * queues decode on the calling thread: a segment's first times would
 * need the CYC/MTC calibration of the trace before it.
 *
 * Memory: at most WINDOW(jobs) segments are decoded or held at once, so
 * memory grows with the segment size times the jobs, not with the trace.
 * The engine (threads, processes, images) is touched only by the main
 * thread: it resolves the region's thread and image before the workers
 * start and replays after they end, all within one chunk callback.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "decode/pt_int.h"
#include "hwt/error.h"

#define SEG_BYTES (16u << 10)
#define SEG_BYTES_INSN (4u << 10)
#define WINDOW(nw) (2u * (nw) + 2u)

enum { R_BRANCH, R_INSN, R_EVENT, R_GAP };

struct pt_rec {
	uint8_t what, kind, have_time;
	int32_t err;
	uint64_t time;
	union {
		struct hwt_dec_insn in;
		struct {
			uint64_t from, to;
		} br;
		struct {
			uint64_t off, ip;
		} gap;
		size_t ev;
	} u;
};

struct pt_cap {
	struct pt_rec *r;
	size_t n, cap;
	struct hwt_pt_event *ev;
	size_t nev, evcap;
	int nomem;
};

struct pt_job {
	const uint8_t *data;
	size_t n, ext;
	uint64_t base;
	int holding;
	uint64_t stop_ip;
	int state; /* J_FREE, J_QUEUED, J_DONE */
	int nomem;
	int reached; /* the flow reached stop_ip (the seam) */
	struct pt_cap out;
};
enum { J_FREE, J_QUEUED, J_DONE };

struct pt_par {
	unsigned nw;
	pthread_t *thr;
	size_t nthr; /* started */
	struct pt **w;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
	struct pt_job *jobs;
	size_t win;
	size_t take, submitted; /* sequence numbers */
	int quit;
	/* the region being decoded (set before jobs are submitted) */
	struct hwt_dec_queue *q;
	struct hwt_dec_thread *th;
	const struct hwt_image *img;
	struct hwt_process *rproc;
	uint64_t rgen, repoch;
};

static struct pt_rec *cap_new(struct pt *w)
{
	struct pt_cap *c = w->cap;
	if (c->n == c->cap) {
		size_t nc = c->cap ? 2 * c->cap : 4096;
		struct pt_rec *nv = realloc(c->r, nc * sizeof(*nv));
		if (!nv) {
			c->nomem = 1;
			return NULL;
		}
		c->r = nv;
		c->cap = nc;
	}
	return &c->r[c->n++];
}

void pt_cap_branch(struct pt *w, uint64_t from, uint64_t to, int kind, int have_time, uint64_t t)
{
	struct pt_rec *r = cap_new(w);
	if (!r)
		return;
	r->what = R_BRANCH;
	r->kind = (uint8_t)kind;
	r->have_time = (uint8_t)have_time;
	r->time = t;
	r->u.br.from = from;
	r->u.br.to = to;
}

void pt_cap_insn(struct pt *w, const struct hwt_dec_insn *in, int have_time, uint64_t t)
{
	struct pt_rec *r = cap_new(w);
	if (!r)
		return;
	r->what = R_INSN;
	r->have_time = (uint8_t)have_time;
	r->time = t;
	r->u.in = *in;
}

void pt_cap_event(struct pt *w, const struct hwt_pt_event *ev, int have_time, uint64_t t)
{
	struct pt_cap *c = w->cap;
	if (c->nev == c->evcap) {
		size_t nc = c->evcap ? 2 * c->evcap : 64;
		struct hwt_pt_event *nv = realloc(c->ev, nc * sizeof(*nv));
		if (!nv) {
			c->nomem = 1;
			return;
		}
		c->ev = nv;
		c->evcap = nc;
	}
	struct pt_rec *r = cap_new(w);
	if (!r)
		return;
	r->what = R_EVENT;
	r->have_time = (uint8_t)have_time;
	r->time = t;
	r->u.ev = c->nev;
	c->ev[c->nev++] = *ev;
}

void pt_cap_gap(struct pt *w, uint64_t off, uint64_t ip, int err)
{
	struct pt_rec *r = cap_new(w);
	if (!r)
		return;
	r->what = R_GAP;
	r->err = err;
	r->u.gap.off = off;
	r->u.gap.ip = ip;
}

/* ---------------- workers ---------------- */
struct wstart {
	struct pt_par *p;
	struct pt *w;
};

static void run_job(struct pt_par *p, struct pt *w, struct pt_job *j)
{
	j->out.n = 0;
	j->out.nev = 0;
	j->out.nomem = 0;
	w->cap = &j->out;
	w->q = p->q;
	w->pq = p->q->fmt;
	w->th = p->th;
	w->img = p->img;
	w->rproc = p->rproc;
	w->rgen = p->rgen;
	w->repoch = p->repoch;
	w->nomem = 0;
	w->ext = j->ext;
	pt_decode_region(w, p->q, j->data, j->n, j->base, j->holding, j->stop_ip);
	j->nomem = w->nomem || j->out.nomem;
	j->reached = w->reached_stop;
}

static void *worker(void *arg)
{
	struct pt_par *p = ((struct wstart *)arg)->p;
	struct pt *w = ((struct wstart *)arg)->w;
	free(arg);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && p->take == p->submitted)
			pthread_cond_wait(&p->cv_work, &p->mu);
		if (p->quit)
			break;
		struct pt_job *j = &p->jobs[p->take % p->win];
		p->take++;
		pthread_mutex_unlock(&p->mu);
		run_job(p, w, j);
		pthread_mutex_lock(&p->mu);
		j->state = J_DONE;
		pthread_cond_broadcast(&p->cv_done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static struct pt *worker_state(const struct pt *e)
{
	struct pt *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->dec = e->dec; /* (not called by workers: output is captured) */
	w->c = e->c;
	w->cfg = e->cfg;
	w->info = e->info;
	w->have_info = e->have_info;
	w->have_conv = e->have_conv;
	w->time_shift = e->time_shift;
	w->time_mult = e->time_mult;
	w->time_zero = e->time_zero;
	w->dflags = e->dflags;
	w->jobs = 1;
	return w;
}

static void worker_free(struct pt *w)
{
	if (!w)
		return;
	free(w->pend);
	free(w->pevs);
	free(w->bb);
	hwt_pt_cache_free(w->pc);
	free(w);
}

static struct pt_par *par_start(struct pt *e)
{
	struct pt_par *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->nw = e->jobs;
	p->win = WINDOW(p->nw);
	p->thr = calloc(p->nw, sizeof(*p->thr));
	p->w = calloc(p->nw, sizeof(*p->w));
	p->jobs = calloc(p->win, sizeof(*p->jobs));
	if (!p->thr || !p->w || !p->jobs)
		goto fail;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv_work, NULL);
	pthread_cond_init(&p->cv_done, NULL);
	for (unsigned i = 0; i < p->nw; i++) {
		struct wstart *ws = malloc(sizeof(*ws));
		p->w[i] = worker_state(e);
		if (!ws || !p->w[i]) {
			free(ws);
			break;
		}
		ws->p = p;
		ws->w = p->w[i];
		if (pthread_create(&p->thr[i], NULL, worker, ws)) {
			free(ws);
			break;
		}
		p->nthr++;
	}
	if (p->nthr)
		return p;
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv_work);
	pthread_cond_destroy(&p->cv_done);
fail:
	if (p->w)
		for (unsigned i = 0; i < p->nw; i++)
			worker_free(p->w[i]);
	free(p->w);
	free(p->thr);
	free(p->jobs);
	free(p);
	return NULL;
}

void pt_par_free(struct pt *e)
{
	struct pt_par *p = e->par;
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->cv_work);
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->nthr; i++)
		pthread_join(p->thr[i], NULL);
	for (unsigned i = 0; i < p->nw; i++)
		worker_free(p->w[i]);
	for (size_t i = 0; i < p->win; i++) {
		free(p->jobs[i].out.r);
		free(p->jobs[i].out.ev);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv_work);
	pthread_cond_destroy(&p->cv_done);
	free(p->w);
	free(p->thr);
	free(p->jobs);
	free(p);
	e->par = NULL;
}

/* ---------------- the main thread ---------------- */
/* Replay a finished job's records to the consumer. */
static void replay(struct pt *e, struct pt_job *j)
{
	const struct pt_cap *c = &j->out;
	for (size_t i = 0; i < c->n; i++) {
		const struct pt_rec *r = &c->r[i];
		switch (r->what) {
		case R_BRANCH:
			pt_out_branch(e, r->u.br.from, r->u.br.to, r->kind, r->have_time, r->time);
			break;
		case R_INSN:
			pt_out_insn(e, &r->u.in, r->have_time, r->time);
			break;
		case R_EVENT:
			pt_out_event(e, &c->ev[r->u.ev], r->have_time, r->time);
			break;
		default:
			pt_out_gap(e, r->u.gap.off, r->u.gap.ip, r->err);
			break;
		}
	}
	pt_out_flush(e);
	if (j->nomem)
		e->nomem = 1;
}

struct seg {
	size_t off, end, ext; /* ext: bytes of the next PSB+ also decoded */
	int holding;
	uint64_t stop_ip;
};

/* The bytes of the PSB+ at p, up to and including its PSBEND (0 if it has
 * none in the n bytes). */
static size_t psbp_len(const uint8_t *p, size_t n)
{
	size_t pos = 0;
	for (int k = 0; k < PSBP_MAX_PKTS; k++) {
		struct hwt_pt_packet pkt;
		int sz = hwt_pt_pkt_parse(p + pos, n - pos, &pkt);
		if (sz <= 0)
			return 0;
		pos += (size_t)sz;
		if (pkt.type == HWT_PKT_PSBEND)
			return pos;
	}
	return 0;
}

/* The segments of [0, n): cut at inner PSBs whose PSB+ has an FUP (or
 * none to wait for) once a segment has min bytes.  Returns their count
 * (at most max; the last one ends at n with the region's holding). */
static size_t segments(const uint8_t *d, size_t n, size_t min, int holding, uint64_t stop_ip,
		       struct seg *s, size_t max)
{
	size_t k = 0, start = 0;
	for (size_t c = sizeof(hwt_pt_psb_pat); k + 1 < max && c < n;) {
		const uint8_t *p = pt_find_psb(d + c, n - c);
		if (!p)
			break;
		c = (size_t)(p - d);
		if (c - start >= min) {
			uint64_t ip = 0;
			int r = pt_psb_fup_ip(d + c, n - c, &ip);
			if (r >= 0) {
				s[k].off = start;
				s[k].end = c;
				s[k].ext = psbp_len(d + c, n - c);
				s[k].holding = r;
				s[k].stop_ip = ip;
				k++;
				start = c;
			}
		}
		c += sizeof(hwt_pt_psb_pat);
	}
	s[k].off = start;
	s[k].end = n;
	s[k].ext = 0;
	s[k].holding = holding;
	s[k].stop_ip = stop_ip;
	return k + 1;
}

int pt_par_decode(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n,
		  uint64_t base, int holding, uint64_t stop_ip)
{
	size_t min = e->c->insn ? SEG_BYTES_INSN : SEG_BYTES;
	/* Times: the decoder's timing state (the CYC and MTC calibration)
	 * comes from the trace before a PSB, which the PSB+ does not
	 * restate: a segment decoded on its own would time its first
	 * branches otherwise.  Consumers of times decode on one thread. */
	if (e->jobs <= 1 || q->per_cpu || n < 2 * min || (e->c->flags & HWT_DEC_WANT_TIME))
		return -1;
	if (!e->par && !(e->par = par_start(e)))
		return -1;
	struct pt_par *p = e->par;
	if (pt_region_resolve(e, q))
		return -1;
	/* segments in slices, so that the list stays small */
	size_t maxs = 256;
	struct seg *sg = malloc(maxs * sizeof(*sg));
	if (!sg)
		return -1;
	p->q = q;
	p->th = e->th;
	p->img = e->img;
	p->rproc = e->rproc;
	p->rgen = e->rgen;
	p->repoch = e->repoch;
	size_t pos = 0;
	while (pos < n) {
		size_t ns = segments(data + pos, n - pos, min, holding, stop_ip, sg, maxs);
		if (ns == maxs) /* more follow: the last slice ends at its cut */
			ns--;
		size_t done = p->submitted, end = done + ns, next = 0;
		while (done < end) {
			pthread_mutex_lock(&p->mu);
			while (next < ns && p->submitted - done < p->win) {
				struct pt_job *j = &p->jobs[p->submitted % p->win];
				j->data = data + pos + sg[next].off;
				j->n = sg[next].end - sg[next].off + sg[next].ext;
				j->ext = sg[next].ext;
				j->base = base + pos + sg[next].off;
				j->holding = sg[next].holding;
				j->stop_ip = sg[next].stop_ip;
				j->state = J_QUEUED;
				p->submitted++;
				next++;
				pthread_cond_signal(&p->cv_work);
			}
			struct pt_job *j = &p->jobs[done % p->win];
			while (j->state != J_DONE)
				pthread_cond_wait(&p->cv_done, &p->mu);
			pthread_mutex_unlock(&p->mu);
			replay(e, j);
			if (j->holding && !j->reached)
				e->seams_bad++;
			j->state = J_FREE;
			done++;
		}
		pos += sg[ns - 1].end;
	}
	free(sg);
	return 0;
}
