/* lib/decode/pt_par.c - per-thread queues' regions decoded on worker
 * threads (hwt_decoder_config.jobs > 1).
 *
 * Design: a pipeline of jobs in the order pt_chunk.c meets its regions.
 * Each region (pt_region: a PSB-to-PSB stretch of one queue, pt.c) is a
 * job; one of 2 * SEG_BYTES or more (SEG_BYTES_INSN for instruction
 * consumers) is cut at its inner PSBs into segments of about SEG_BYTES,
 * each a job of its own: its decoder starts from the PSB+ at its start
 * and stops at the next segment's PSB, whose FUP ip is its stop ip (pt.c:
 * what it decodes from there on is the next segment's), so no job depends
 * on another.  The main thread resolves the job's thread and image,
 * copies its bytes (chunk data lives during the chunk callback only) and
 * queues it.  The main thread decodes too (jobs - 1 worker threads,
 * started at the first job, stopped by pt_par_free): when the oldest job
 * has not been taken, it decodes it live, straight to the consumer as a
 * sequential decode would (no copy of its output); workers take the
 * newest queued job (never the oldest) and decode it with their own
 * decoder state (struct pt) and decode cache into the job's output
 * (struct pt_cap): the taken branches already in the consumer's form
 * (struct hwt_dec_branch), in pieces of PT_CBUF_N (struct pt_cbuf) from
 * a pool the threads share, plus instructions, events and gaps as items
 * (struct pt_item) that say how many branches came before them.  The
 * main thread delivers finished jobs in job order, handing each piece to
 * the consumer's branches callback as it is, and puts the pieces back
 * on top of the pool, where the next job to be decoded takes them while
 * they are still in a cache; while a worker still decodes the oldest
 * job, the main thread decodes a newer one into its output (or waits
 * when none is left).  So the output is the one of a sequential decode,
 * about half of it is never copied, and the main thread never idles
 * while there is work (a worker's output is written to memory and read
 * back: that copy is what -j N costs beyond -j 1, and what keeps
 * segments small: SEG_BYTES is about one PSB period of the bench's
 * recordings, with about 2.5 branches per byte of trace about 1.3 MB of
 * output per segment).  The seams are checked on delivery: a segment
 * that ends at a PSB must have reached that PSB's ip (else its flow did
 * not meet the next segment's start); mismatches are counted
 * (struct pt.seams_bad; they change nothing in the output, which
 * is what a sequential decode of the same regions gives as well).
 *
 * Text (a consumer with hwt_decode_consumer.branches_text, e.g. hwt
 * script --format tsv): a worker prints its branches into the job's text
 * (pt_cap.tx) whenever its one piece fills and before each item, with
 * its own formatter context, and the main thread hands the text to the
 * consumer's text callback in job order (one large write a job, mostly),
 * so the formatting, which costs about as much as the decode, is split
 * across the threads like the decode.
 *
 * HWT_PAR_STATS in the environment: pt_par_free prints the threads' CPU
 * time and what they did (jobs decoded live, into output, by workers;
 * waits), for tuning: the speedup is bounded by (CPU time at -j1) / (the
 * largest thread's CPU time at -jN).
 *
 * The engine (threads, processes, images) is touched only by the main
 * thread, and never while jobs are queued: the engine calls the format's
 * quiesce before it applies sideband (MMAP, COMM, FORK, ...) or delivers
 * anything else, and pt.c drains the pipeline there (pt_par_drain), as
 * before it decodes anything on the main thread and at the end.
 *
 * Limits: consumers that want times (HWT_DEC_WANT_TIME) and per-CPU
 * queues decode on the calling thread: a segment's first times would
 * need the CYC/MTC calibration of the trace before it.
 *
 * Memory: at most WINDOW(jobs) jobs are queued, decoded or held at once,
 * each with its bytes and its output (the pool holds the most pieces
 * they held at once), so memory grows with the region or segment size
 * times the jobs, not with the trace.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode/pt_int.h"
#include "hwt/error.h"

#define SEG_BYTES (16u << 10)
#define SEG_BYTES_INSN (4u << 10)
#define WINDOW(nw) (2u * (nw) + 1u)

/* ---------------- a worker's output ---------------- */
static int grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : first;
	while (nc < need)
		nc *= 2;
	void *nv = realloc(*v, nc * elem);
	if (!nv)
		return -1;
	*v = nv;
	*cap = nc;
	return 0;
}

/* Text mode: the branches of c's piece printed at the end of its text;
 * the piece empty again. */
static void cap_text(struct pt_cap *c)
{
	struct pt_cbuf *b = c->tail;
	if (!b || !b->n)
		return;
	if (grow((void **)&c->tx, &c->txcap, c->ntx + b->n * c->c->text_max, 1, 1u << 16))
		c->nomem = 1;
	else
		c->ntx += c->c->branches_text(c->fctx, c->th, b->e, b->n, c->img, c->tx + c->ntx);
	b->n = 0;
}

struct pt_item *pt_cap_item(struct pt *w, int what)
{
	struct pt_cap *c = w->cap;
	if (c->text)
		cap_text(c);
	if (grow((void **)&c->it, &c->cap, c->n + 1, sizeof(*c->it), 256)) {
		c->nomem = 1;
		return NULL;
	}
	struct pt_item *it = &c->it[c->n++];
	memset(it, 0, offsetof(struct pt_item, u));
	it->what = (uint8_t)what;
	it->nbr = c->text ? c->ntx : w->rmode ? c->nrg : c->nbr;
	return it;
}

struct hwt_dec_range *pt_cap_range(struct pt *w)
{
	struct pt_cap *c = w->cap;
	if (grow((void **)&c->rg, &c->rgcap, c->nrg + 1, sizeof(*c->rg), 1024)) {
		c->nomem = 1;
		return NULL;
	}
	return &c->rg[c->nrg++];
}

/* The pieces of branches no job holds, most recently used first. */
struct pt_pool {
	pthread_mutex_t mu;
	struct pt_cbuf *free;
};

static struct pt_cbuf *pool_get(struct pt_pool *pl)
{
	pthread_mutex_lock(&pl->mu);
	struct pt_cbuf *b = pl->free;
	if (b)
		pl->free = b->next;
	pthread_mutex_unlock(&pl->mu);
	if (!b) {
		if (!(b = malloc(sizeof(*b))))
			return NULL;
	}
	b->next = NULL;
	b->n = 0;
	return b;
}

/* c's pieces back to the pool (the first one, read last, on top). */
static void pool_put(struct pt_cap *c)
{
	if (!c->head)
		return;
	struct pt_pool *pl = c->pool;
	struct pt_cbuf *first = NULL, *b = c->head;
	while (b) { /* reversed */
		struct pt_cbuf *nx = b->next;
		b->next = first;
		first = b;
		b = nx;
	}
	pthread_mutex_lock(&pl->mu);
	c->head->next = pl->free;
	pl->free = first;
	pthread_mutex_unlock(&pl->mu);
	c->head = c->tail = NULL;
}

static void pool_free(struct pt_pool *pl)
{
	for (struct pt_cbuf *b = pl->free, *nx; b; b = nx) {
		nx = b->next;
		free(b);
	}
	pl->free = NULL;
}

size_t pt_cap_room(struct pt_cap *c, struct hwt_dec_branch **o)
{
	if (c->text && c->tail && c->tail->n == PT_CBUF_N)
		cap_text(c);
	if (!c->tail || c->tail->n == PT_CBUF_N) {
		struct pt_cbuf *b = pool_get(c->pool);
		if (!b) {
			c->nomem = 1;
			return 0;
		}
		if (c->tail)
			c->tail->next = b;
		else
			c->head = b;
		c->tail = b;
	}
	*o = c->tail->e + c->tail->n;
	return PT_CBUF_N - c->tail->n;
}

void pt_cap_event(struct pt *w, const struct hwt_pt_event *ev, int have_time, uint64_t t)
{
	struct pt_cap *c = w->cap;
	if (grow((void **)&c->ev, &c->evcap, c->nev + 1, sizeof(*c->ev), 64)) {
		c->nomem = 1;
		return;
	}
	struct pt_item *it = pt_cap_item(w, P_EVENT);
	if (!it)
		return;
	it->have_time = (uint8_t)have_time;
	it->time = t;
	it->u.ev = c->nev;
	c->ev[c->nev++] = *ev;
}

/* ---------------- jobs and workers ---------------- */
/* Where the threads' time goes (printed by pt_par_free when the
 * environment has HWT_PAR_STATS; for tuning): jobs, their bytes and the
 * CPU time of their decode by the main thread live (S_LIVE), by the main
 * thread into their output (S_MCAP) and by the workers (S_WRK); the
 * waits; the drains that found jobs; the threads' CPU time. */
enum { S_LIVE, S_MCAP, S_WRK };
struct par_stats {
	int on;
	size_t jobs[3], bytes[3], waits[2], drains;
	double cpu[3], wcpu;
};
struct pt_job {
	uint8_t *buf; /* the job's bytes (a copy) */
	size_t n, bcap, ext;
	uint64_t base;
	int holding;
	uint64_t stop_ip;
	/* the region's queue, thread and image (resolved by the main thread) */
	struct hwt_dec_queue *q;
	struct hwt_dec_thread *th;
	const struct hwt_image *img;
	struct hwt_process *rproc;
	uint64_t rgen, repoch;
	int seg;   /* a segment that ends at an inner PSB of its region */
	int state; /* J_FREE, J_QUEUED, J_RUN, J_DONE (under pt_par.mu) */
	int nomem;
	int reached; /* the flow reached stop_ip (the seam) */
	struct pt_cap out;
};
enum { J_FREE, J_QUEUED, J_RUN, J_DONE };

struct pt_par {
	unsigned nw; /* worker threads: jobs - 1 (the main thread decodes too) */
	pthread_t *thr;
	size_t nthr; /* started */
	struct pt **w;
	struct pt *mw; /* the main thread's decoder state */
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
	struct pt_job *jobs;
	size_t win;
	size_t submitted, done; /* sequence numbers (under mu) */
	int quit;
	int main_waits; /* the main thread waits on cv_done */
	struct pt_pool pool;
	struct par_stats st;
};

/* Decode job j with decoder state w: into the job's output (cap), or,
 * live, straight to the consumer (w is the main thread's). */
static double tcpu(const struct pt_par *p)
{
	if (!p->st.on)
		return 0;
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_job(struct pt *w, struct pt_job *j, int live)
{
	j->out.n = 0;
	j->out.nev = 0;
	j->out.nbr = 0;
	j->out.nrg = 0;
	j->out.nomem = 0;
	j->out.ntx = 0;
	j->out.fctx = w->fctx;
	j->out.th = j->th;
	j->out.img = j->img;
	w->cap = live ? NULL : &j->out;
	w->q = j->q;
	w->pq = j->q->fmt;
	w->th = j->th;
	w->img = j->img;
	w->rproc = j->rproc;
	w->rgen = j->rgen;
	w->repoch = j->repoch;
	w->nomem = 0;
	w->ext = j->ext;
	pt_decode_region(w, j->q, j->buf, j->n, j->base, j->holding, j->stop_ip);
	if (!live && j->out.text) { /* the rest printed, the piece back */
		cap_text(&j->out);
		pool_put(&j->out);
	}

	j->nomem = w->nomem || j->out.nomem;
	j->reached = w->reached_stop;
}

/* The newest queued job that is not the oldest one (which the main
 * thread decodes itself, live, when it comes to it), or NULL; under mu.
 * Newest first: the main thread works from the oldest job on, so the
 * two meet late and every thread decodes until the window runs dry. */
static struct pt_job *pick(struct pt_par *p)
{
	for (size_t s = p->submitted; s > p->done + 1; s--) {
		struct pt_job *j = &p->jobs[(s - 1) % p->win];
		if (j->state == J_QUEUED)
			return j;
	}
	return NULL;
}

struct wstart {
	struct pt_par *p;
	struct pt *w;
};

static void *worker(void *arg)
{
	struct pt_par *p = ((struct wstart *)arg)->p;
	struct pt *w = ((struct wstart *)arg)->w;
	free(arg);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct pt_job *j = NULL;
		while (!p->quit && !(j = pick(p))) {
			p->st.waits[1]++;
			pthread_cond_wait(&p->cv_work, &p->mu);
		}
		if (p->quit) {
			p->st.wcpu += tcpu(p);
			break;
		}
		j->state = J_RUN;
		p->st.jobs[S_WRK]++;
		p->st.bytes[S_WRK] += j->n;
		pthread_mutex_unlock(&p->mu);
		double t0 = tcpu(p);
		run_job(w, j, 0);
		t0 = tcpu(p) - t0;
		pthread_mutex_lock(&p->mu);
		p->st.cpu[S_WRK] += t0;
		j->state = J_DONE;
		if (p->main_waits)
			pthread_cond_signal(&p->cv_done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static struct pt *worker_state(const struct pt *e)
{
	struct pt *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->dec = e->dec; /* (the main thread's state calls the consumer) */
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
	w->par_state = 1;
	w->rmode = e->rmode;
	memcpy(w->kinds, e->kinds, sizeof(w->kinds));
	return w;
}

static void worker_free(struct pt *w)
{
	if (!w)
		return;
	if (w->fctx && w->c->text_ctx_free)
		w->c->text_ctx_free(w->c->arg, w->fctx);
	free(w->pend);
	free(w->pevs);
	free(w->bb);
	free(w->rb);
	free(w->prg);
	hwt_pt_cache_free(w->pc);
	free(w);
}

static void par_destroy(struct pt_par *p)
{
	if (p->w)
		for (unsigned i = 0; i < p->nw; i++)
			worker_free(p->w[i]);
	worker_free(p->mw);
	if (p->jobs)
		for (size_t i = 0; i < p->win; i++) {
			free(p->jobs[i].buf);
			free(p->jobs[i].out.it);
			free(p->jobs[i].out.ev);
			pool_put(&p->jobs[i].out);
			free(p->jobs[i].out.rg);
			free(p->jobs[i].out.tx);
		}
	pool_free(&p->pool);
	free(p->w);
	free(p->thr);
	free(p->jobs);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->pool.mu);
	pthread_cond_destroy(&p->cv_work);
	pthread_cond_destroy(&p->cv_done);
	free(p);
}

static struct pt_par *par_start(struct pt *e)
{
	struct pt_par *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->pool.mu, NULL);
	pthread_cond_init(&p->cv_work, NULL);
	pthread_cond_init(&p->cv_done, NULL);
	p->nw = e->jobs - 1;
	p->win = WINDOW(e->jobs);
	p->st.on = getenv("HWT_PAR_STATS") != NULL;
	p->thr = calloc(p->nw, sizeof(*p->thr));
	p->w = calloc(p->nw, sizeof(*p->w));
	p->jobs = calloc(p->win, sizeof(*p->jobs));
	p->mw = worker_state(e);
	if (!p->thr || !p->w || !p->jobs || !p->mw) {
		par_destroy(p);
		return NULL;
	}
	/* text: every decoding state has its formatter's context */
	const struct hwt_decode_consumer *c = e->c;
	int text =
	    c->branches_text && c->text && c->text_max && c->branches && !c->insn && !c->ranges;
	if (text && c->text_ctx && !(p->mw->fctx = c->text_ctx(c->arg)))
		text = 0;
	for (unsigned i = 0; i < p->nw; i++) {
		struct wstart *ws = malloc(sizeof(*ws));
		p->w[i] = worker_state(e);
		if (!ws || !p->w[i]) {
			free(ws);
			break;
		}
		if (text && c->text_ctx && !(p->w[i]->fctx = c->text_ctx(c->arg)))
			text = 0;
		ws->p = p;
		ws->w = p->w[i];
		if (pthread_create(&p->thr[i], NULL, worker, ws)) {
			free(ws);
			break;
		}
		p->nthr++;
	}
	for (size_t i = 0; i < p->win; i++) {
		p->jobs[i].out.pool = &p->pool;
		p->jobs[i].out.text = text;
		p->jobs[i].out.c = c;
	}
	if (p->nthr)
		return p;
	par_destroy(p);
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
	if (p->st.on) {
		const struct par_stats *t = &p->st;
		fprintf(stderr,
			"hwt: parallel decode: main thread %.3f s CPU, live %zu jobs %zu bytes "
			"%.3f s, into output %zu jobs %zu bytes %.3f s; %zu workers %.3f s CPU, "
			"%zu jobs %zu bytes %.3f s; waits: main %zu, workers %zu; drains %zu\n",
			tcpu(p), t->jobs[S_LIVE], t->bytes[S_LIVE], t->cpu[S_LIVE], t->jobs[S_MCAP],
			t->bytes[S_MCAP], t->cpu[S_MCAP], p->nthr, t->wcpu, t->jobs[S_WRK],
			t->bytes[S_WRK], t->cpu[S_WRK], t->waits[0], t->waits[1], t->drains);
	}
	par_destroy(p);
	e->par = NULL;
}

/* ---------------- the main thread ---------------- */
/* Where deliver stands in a job's branches. */
struct cur {
	const struct pt_cbuf *b;
	size_t i; /* in b */
};

/* The job's next n branches (from cu) to the consumer: the pieces as
 * they are (in arrays of at most PT_CBUF_N, at most PT_BB_CAP). */
static void give_branches(struct pt *e, struct cur *cu, size_t n)
{
	_Static_assert(PT_CBUF_N <= PT_BB_CAP, "a piece is one branches() call");
	if (n && e->c->branches)
		pt_out_flush(e);
	while (n) {
		if (cu->i == cu->b->n) {
			cu->b = cu->b->next;
			cu->i = 0;
		}
		const struct hwt_dec_branch *br = cu->b->e + cu->i;
		size_t m = cu->b->n - cu->i < n ? cu->b->n - cu->i : n;
		if (e->c->branches)
			e->c->branches(e->c->arg, e->th, br, m, e->img);
		else
			for (size_t k = 0; k < m; k++)
				pt_out_branch(e, br[k].from, br[k].to, br[k].kind, br[k].have_time,
					      br[k].time_ns);
		cu->i += m;
		n -= m;
	}
}

/* Ranges r[0, n) of a job to the consumer. */
static void give_ranges(struct pt *e, const struct hwt_dec_range *r, size_t n)
{
	if (!n)
		return;
	pt_out_flush(e);
	for (size_t k = 0; k < n; k += PT_RB_CAP)
		e->c->ranges(e->c->arg, e->th, r + k, n - k < PT_RB_CAP ? n - k : PT_RB_CAP,
			     e->img);
}

/* Text of a job (text mode) to the consumer. */
static void give_text(struct pt *e, const char *s, size_t n)
{
	if (!n)
		return;
	pt_out_flush(e);
	e->c->text(e->c->arg, s, n);
}

/* A finished job's output to the consumer, in order; its pieces back to
 * the pool. */
static void deliver(struct pt *e, struct pt_job *j)
{
	struct pt_cap *c = &j->out;
	/* (the region being queued keeps its own) */
	struct hwt_dec_thread *th0 = e->th;
	const struct hwt_image *img0 = e->img;
	e->th = j->th;
	e->img = j->img;
	struct cur cu = {c->head, 0};
	size_t b = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct pt_item *it = &c->it[i];
		if (c->text)
			give_text(e, c->tx + b, it->nbr - b);
		else if (e->rmode)
			give_ranges(e, c->rg + b, it->nbr - b);
		else
			give_branches(e, &cu, it->nbr - b);
		b = it->nbr;
		switch (it->what) {
		case P_INSN:
			pt_out_insn(e, &it->u.in, it->have_time, it->time);
			break;
		case P_EVENT:
			pt_out_event(e, &c->ev[it->u.ev], it->have_time, it->time);
			break;
		default:
			pt_out_gap(e, it->u.gap.off, it->u.gap.ip, it->err);
			break;
		}
	}
	if (c->text)
		give_text(e, c->tx + b, c->ntx - b);
	else if (e->rmode)
		give_ranges(e, c->rg + b, c->nrg - b);
	else
		give_branches(e, &cu, c->nbr - b);
	pt_out_flush(e);
	pool_put(c);
	e->th = th0;
	e->img = img0;
}

/* The oldest job to the consumer: delivered if a worker has decoded it,
 * else decoded here, live, if nobody has taken it yet; while a worker
 * decodes it, this thread decodes a newer job into its output (or waits
 * when there is none). */
static void next_job(struct pt *e)
{
	struct pt_par *p = e->par;
	struct pt_job *j = &p->jobs[p->done % p->win];
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (j->state == J_DONE || j->state == J_QUEUED)
			break;
		struct pt_job *n = pick(p);
		if (n) {
			n->state = J_RUN;
			p->st.jobs[S_MCAP]++;
			p->st.bytes[S_MCAP] += n->n;
			pthread_mutex_unlock(&p->mu);
			double t0 = tcpu(p);
			run_job(p->mw, n, 0);
			p->st.cpu[S_MCAP] += tcpu(p) - t0;
			pthread_mutex_lock(&p->mu);
			n->state = J_DONE;
			continue;
		}
		p->main_waits = 1;
		p->st.waits[0]++;
		pthread_cond_wait(&p->cv_done, &p->mu);
		p->main_waits = 0;
	}
	int live = j->state == J_QUEUED;
	j->state = J_RUN;
	pthread_mutex_unlock(&p->mu);
	if (live) {
		p->st.jobs[S_LIVE]++;
		p->st.bytes[S_LIVE] += j->n;
		double t0 = tcpu(p);
		run_job(p->mw, j, 1);
		p->st.cpu[S_LIVE] += tcpu(p) - t0;
		p->mw->cap = NULL;
	} else {
		deliver(e, j);
	}
	if (j->nomem)
		e->nomem = 1;
	if (j->seg && j->holding && !j->reached)
		e->seams_bad++;
	pthread_mutex_lock(&p->mu);
	j->state = J_FREE;
	p->done++;
	pthread_mutex_unlock(&p->mu);
}

void pt_par_drain(struct pt *e)
{
	struct pt_par *p = e->par;
	if (p && p->done < p->submitted)
		p->st.drains++;
	while (p && p->done < p->submitted)
		next_job(e);
}

/* Queue [data, data + n) with the region resolved in e.  0 or -1. */
static int submit(struct pt *e, const uint8_t *data, size_t n, size_t ext, uint64_t base,
		  int holding, uint64_t stop_ip, int seg)
{
	struct pt_par *p = e->par;
	/* a free slot: deliver what is done (in order) meanwhile; with the
	 * window full, decode or wait (next_job) */
	while (p->done < p->submitted) {
		pthread_mutex_lock(&p->mu);
		int ready = p->jobs[p->done % p->win].state == J_DONE;
		pthread_mutex_unlock(&p->mu);
		if (!ready && p->submitted - p->done < p->win)
			break;
		next_job(e);
	}
	struct pt_job *j = &p->jobs[p->submitted % p->win];
	if (grow((void **)&j->buf, &j->bcap, n, 1, 65536))
		return -1;
	memcpy(j->buf, data, n);
	j->n = n;
	j->ext = ext;
	j->base = base;
	j->holding = holding;
	j->stop_ip = stop_ip;
	j->q = e->q;
	j->th = e->th;
	j->img = e->img;
	j->rproc = e->rproc;
	j->rgen = e->rgen;
	j->repoch = e->repoch;
	j->seg = seg;
	pthread_mutex_lock(&p->mu);
	j->state = J_QUEUED;
	p->submitted++;
	pthread_cond_signal(&p->cv_work);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

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

int pt_par_region(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n,
		  uint64_t base, int holding, uint64_t stop_ip)
{
	/* Times: the decoder's timing state (the CYC and MTC calibration)
	 * comes from the trace before a PSB, which the PSB+ does not
	 * restate: a segment decoded on its own would time its first
	 * branches otherwise.  Consumers of times decode on one thread. */
	if (e->jobs <= 1 || q->per_cpu || !n || (e->c->flags & HWT_DEC_WANT_TIME))
		return -1;
	if (!e->par && !(e->par = par_start(e)))
		return -1;
	if (pt_region_resolve(e, q))
		return -1;
	size_t min = e->c->insn ? SEG_BYTES_INSN : SEG_BYTES;
	/* segments: cut at inner PSBs whose PSB+ has an FUP (or none to wait
	 * for) once a segment has min bytes; a segment also decodes the next
	 * one's PSB+ (ext), as the region's decoder would */
	size_t start = 0;
	if (n >= 2 * min)
		for (size_t c = sizeof(hwt_pt_psb_pat) + min; c + min <= n;) {
			const uint8_t *ps = pt_find_psb(data + c, n - c);
			if (!ps || (size_t)(ps - data) + min > n)
				break;
			c = (size_t)(ps - data);
			uint64_t ip = 0;
			int r = pt_psb_fup_ip(data + c, n - c, &ip);
			if (r < 0) {
				c += sizeof(hwt_pt_psb_pat);
				continue;
			}
			size_t ext = psbp_len(data + c, n - c);
			if (submit(e, data + start, c - start + ext, ext, base + start, r, ip, 1))
				goto here;
			start = c;
			c += min;
		}
	if (!submit(e, data + start, n - start, 0, base + start, holding, stop_ip, 0))
		return 0;
here: /* out of memory for a copy: the rest on this thread (from a PSB) */
	pt_par_drain(e);
	pt_decode_region(e, q, data + start, n - start, base + start, holding, stop_ip);
	return 0;
}

void pt_region(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n, uint64_t base,
	       int holding, uint64_t stop_ip)
{
	if (!pt_par_region(e, q, data, n, base, holding, stop_ip))
		return;
	pt_par_drain(e);
	pt_decode_region(e, q, data, n, base, holding, stop_ip);
}
