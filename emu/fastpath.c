/* emu/fastpath.c - the block log and the encoder thread of the emulated PT
 * unit: the program's thread only appends block pointers, packets are
 * built elsewhere.
 *
 * Per guest thread, tb_log (plugin.c) appends the struct emu_tb of every
 * executed block to the thread's log: a ring of FP_NCHUNK chunks of
 * FP_CHUNK pointers.  A full chunk is published (pub) and the encoder
 * thread runs emu_steps() on it (plugin.c: the same per-block code as
 * encoder=sync, in the same order), so the packets, the truth and every AUX
 * piece are byte for byte what the program's thread would have written.
 * Whoever encodes a thread's blocks holds its lock (mu): the encoder
 * thread, or the program's thread itself when
 *  - the ring is full (the encoder is behind: no waiting, it helps),
 *  - at every system call and thread end (emu_fp_sync: all logged blocks,
 *    also the unpublished part of the current chunk, are encoded before
 *    the plugin adds PGD, sideband records or forks), so everything
 *    outside the block hot path sees the state it saw with encoder=sync,
 *  - on a host SIGSEGV/SIGBUS (a guest memory fault, possibly fatal:
 *    QEMU then ends the process without any plugin callback), so the
 *    box (unit/emu_abi.h) holds the trace up to the faulting block.
 * Lifecycle: emu_fp_attach on the thread's first block (the encoder
 * thread starts with the first attach of a process; it blocks every
 * signal, so process-directed signals reach QEMU's threads only);
 * emu_fp_detach at thread exit; emu_fp_stop at process exit; after
 * fork(), emu_fp_child forgets the parent's encoder (its thread does not
 * exist in the child) and emu_fp_drop frees the copied logs.
 * Kill safety: every box publication (emu_box_sync) is whole, whoever
 * encodes, so a process that dies with this thread anywhere inside
 * encode() leaves each stream's last published state: packets and truth
 * at the same block (unit/emu_abi.h).
 * Limits: a thread killed by a fatal signal that is not a host memory
 * fault (SIGKILL, a signal from outside, an illegal instruction) loses
 * the blocks logged since its last encoding (at most FP_NCHUNK *
 * FP_CHUNK): its stream ends there, consistently (packets and truth).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu.h"
#include "sigframe.h"

#define FP_CHUNK 4096u	      /* entries per chunk (encoder thread) */
#define FP_NCHUNK 32u	      /* chunks in the ring (encoder thread) */
#define FP_CHUNK_INLINE 1024u /* encoder=inline: one chunk, reused (stays in cache) */
#define FP_WAKE 8u	      /* wake a sleeping encoder when this many chunks wait */

struct emu_fp {
	const struct emu_tb **log; /* FP_NCHUNK * FP_CHUNK entries */
	unsigned chunk, nchunk;	   /* entries per chunk, chunks */
	uint64_t wchunk;	   /* chunk being written (absolute number) */
	_Atomic uint64_t pub;	   /* chunks [rchunk, pub) are full, to encode */
	_Atomic uint64_t rchunk;   /* chunks encoded (under mu) */
	pthread_mutex_t mu;
	struct emu_thr *t;
	struct emu_fp *next; /* registry */
};

static struct {
	pthread_mutex_t mu; /* registry and the encoder's sleep */
	pthread_cond_t cv;
	struct emu_fp *list;
	pthread_t th;
	int started, stop;
	_Atomic int idle;
	int sig_hooked;
	struct sigaction old_segv, old_bus;
} fp = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static __thread struct emu_thr *fp_self; /* this host thread's guest thread */
static __thread int fp_busy;		 /* this host thread is encoding */

static inline const struct emu_tb **chunk_at(struct emu_fp *f, uint64_t c)
{
	return f->log + (c % f->nchunk) * f->chunk;
}

/* n blocks of thread t in execution order: exactly what emu_step1 (the
 * encoder=sync path) does for each, with the common transitions done here with
 * the generator's hot state in registers: a Jcc's outcome or a compressed
 * RET (a TNT bit), a fall-through, a direct JMP or CALL.  Any other block
 * (MTC due, indirect branch, uncompressed RET, asynchronous transfer,
 * tracing off, filters, CYC) goes through emu_step1. */
static void encode(struct emu_thr *t, const struct emu_tb *const *v, size_t n)
{
	struct ptgen *g = &t->g;
	const int can = !emu.nfilt && !emu.bts && !g->cfg.cyc && g->cfg.branch;
	const int truth = emu.truth_fd >= 0;
	const int retcomp = !g->cfg.noretcomp;
	size_t i = 0;
	while (i < n) {
		if (!can || !g->en || !t->prev || t->stopped) {
			emu_step1(t, v[i++]);
			if (truth) /* its truth line and its packets, together */
				emu_box_sync(t);
			continue;
		}
		const struct emu_tb *p = t->prev;
		uint64_t now = t->tbase + t->icount, tsc = g->tsc;
		const uint64_t mtc_next = g->mtc_next;
		uint64_t tnt = g->tnt;
		unsigned ntnt = g->ntnt;
		size_t len = g->len;
		uint8_t *buf = g->buf;
		/* PSB+ due or flush needed once len reaches lim */
		size_t lim = emu.flush_at;
		if (g->psb_next - g->total < lim)
			lim = (size_t)(g->psb_next - g->total);
		int check = 0;
		for (; i < n; i++) {
			const struct emu_tb *c = v[i];
			uint64_t to = c->start;
			if (now >= mtc_next)
				break;
			/* branch-free for Jcc, fall-through, direct JMP/CALL */
			unsigned taken = to == p->fb;
			if (__builtin_expect(!(taken | (to == p->fa)), 0)) {
				/* a RET compressed into a TNT bit, else emu_step1 */
				if (p->cls != EMU_RET || !retcomp || !g->rs_n ||
				    g->rs[g->rs_top] != to)
					goto out;
				if (truth)
					emu_truth_line(t, p->last, to, 0);
				g->rs_top = (g->rs_top + PTG_RETSTACK - 1) % PTG_RETSTACK;
				g->rs_n--;
				tnt = (tnt << 1) | 1;
				ntnt++;
			} else {
				if (truth && taken)
					emu_truth_line(t, p->last, to, 0);
				if (p->fcall)
					ptg_call(g, p->next);
				tnt = (tnt << p->fbit) | (taken & p->fbit);
				ntnt += p->fbit;
			}
			if (ntnt == 6) {
				buf[len++] = hwt_emu_tnt_byte(tnt, 6);
				tnt = 0;
				ntnt = 0;
				if (len >= lim)
					check = 1;
			}
			tsc = now;
			now += c->n;
			p = c;
			/* the truth buffer is flushed between blocks, with the
			 * box published (a dying thread's truth = its trace) */
			if (truth && t->tlen > EMU_TRUTH_BUF - 1024)
				check = 1;
			if (check) {
				i++;
				break;
			}
		}
	out:
		t->prev = p;
		t->icount = now - t->tbase;
		g->tsc = tsc;
		g->tnt = tnt;
		g->ntnt = ntnt;
		g->len = len;
		if (check) { /* what step() does after a block */
			if (ptg_psb_due(g))
				ptg_psb(g, p->start);
			if (g->len >= emu.flush_at)
				emu_thr_flush(t, 0);
			if (truth && t->tlen > EMU_TRUTH_BUF - 1024)
				emu_truth_flush(t);
			emu_box_sync(t);
		} else if (i < n) {
			emu_step1(t, v[i++]);
			if (truth)
				emu_box_sync(t);
		}
	}
}

void emu_fp_tb(struct emu_tb *e)
{
	e->sigh = (uint16_t)emu_sig_hash(e->start);
	e->fa = e->fb = ~0ull;
	e->fbit = e->fcall = 0;
	switch (e->cls) {
	case EMU_JCC: /* a Jcc to its own fall-through is not taken (step()) */
		e->fa = e->next;
		e->fb = e->target != e->next ? e->target : ~0ull;
		e->fbit = 1;
		break;
	case EMU_OTHER:
		e->fa = e->next;
		break;
	case EMU_CALL:
		e->fcall = !e->zero_call;
		/* FALLTHROUGH */
	case EMU_JMP:
		e->fb = e->target;
		break;
	default:
		break;
	}
}

/* Encode the published chunks (caller holds f->mu). */
static void encode_published(struct emu_fp *f)
{
	uint64_t r = atomic_load_explicit(&f->rchunk, memory_order_relaxed);
	uint64_t p = atomic_load_explicit(&f->pub, memory_order_acquire);
	if (r == p)
		return;
	fp_busy++;
	for (; r < p; r++) {
		encode(f->t, chunk_at(f, r), f->chunk);
		atomic_store_explicit(&f->rchunk, r + 1, memory_order_release);
	}
	emu_box_sync(f->t);
	fp_busy--;
}

static struct emu_fp *pick(void)
{
	for (struct emu_fp *f = fp.list; f; f = f->next)
		if (atomic_load(&f->pub) != atomic_load(&f->rchunk))
			return f;
	return NULL;
}

static void *encoder_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fp.mu);
	for (;;) {
		struct emu_fp *f = pick();
		if (!f && !fp.stop) {
			atomic_store(&fp.idle, 1);
			f = pick();
			if (!f && !fp.stop) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 20 * 1000 * 1000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&fp.cv, &fp.mu, &ts);
			}
			atomic_store(&fp.idle, 0);
			continue;
		}
		if (fp.stop)
			break;
		pthread_mutex_lock(&f->mu);
		pthread_mutex_unlock(&fp.mu);
		encode_published(f);
		pthread_mutex_unlock(&f->mu);
		pthread_mutex_lock(&fp.mu);
	}
	pthread_mutex_unlock(&fp.mu);
	return NULL;
}

static void start_encoder(void)
{
	if (fp.started || emu.encoder_inline)
		return;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* the new thread inherits it */
	fp.stop = 0;
	if (pthread_create(&fp.th, NULL, encoder_main, NULL) == 0)
		fp.started = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Encode everything t logged (t's own thread, or its signal handler). */
static void drain(struct emu_thr *t)
{
	struct emu_fp *f = t->fp;
	pthread_mutex_lock(&f->mu);
	encode_published(f);
	const struct emu_tb **c = chunk_at(f, f->wchunk);
	size_t n = (size_t)(t->lpos - c);
	if (n) {
		fp_busy++;
		encode(t, c, n);
		emu_box_sync(t);
		fp_busy--;
		t->lpos = c;
	}
	pthread_mutex_unlock(&f->mu);
}

void emu_fp_sync(struct emu_thr *t)
{
	if (t->fp)
		drain(t);
}

void emu_fp_full(struct emu_thr *t)
{
	struct emu_fp *f = t->fp;
	f->wchunk++;
	atomic_store(&f->pub, f->wchunk);
	if (f->wchunk - atomic_load(&f->rchunk) >= f->nchunk || !fp.started) {
		/* the encoder is behind (or absent): encode here */
		pthread_mutex_lock(&f->mu);
		encode_published(f);
		pthread_mutex_unlock(&f->mu);
	} else if (f->wchunk - atomic_load(&f->rchunk) >= FP_WAKE && atomic_load(&fp.idle)) {
		pthread_mutex_lock(&fp.mu);
		pthread_cond_signal(&fp.cv);
		pthread_mutex_unlock(&fp.mu);
	}
	t->lpos = chunk_at(f, f->wchunk);
	t->lend = t->lpos + f->chunk;
}

/* A host memory fault on a guest thread: encode its blocks first (the
 * fault may end the process), then QEMU's handler. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	struct emu_thr *t = fp_self;
	if (t && t->fp && !fp_busy)
		drain(t);
	else if (t && !t->fp && !t->in_step && !emu.pebs) /* encoder=sync: publish */
		emu_box_sync(t);
	errno = e;
	const struct sigaction *o = sig == SIGBUS ? &fp.old_bus : &fp.old_segv;
	if (o->sa_flags & SA_SIGINFO) {
		o->sa_sigaction(sig, si, uc);
	} else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
		o->sa_handler(sig);
	} else { /* nobody else handles it: the default action on return */
		sigaction(sig, o, NULL);
	}
}

/* QEMU installs its host signal handlers before the first block runs and
 * never changes those of SIGSEGV and SIGBUS again: wrap them. */
static void hook_faults(void)
{
	struct sigaction sa;
	if (fp.sig_hooked)
		return;
	fp.sig_hooked = 1;
	if (sigaction(SIGSEGV, NULL, &fp.old_segv) < 0 || sigaction(SIGBUS, NULL, &fp.old_bus) < 0)
		return;
	sa = fp.old_segv;
	sa.sa_sigaction = on_fault;
	sa.sa_flags |= SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sa = fp.old_bus;
	sa.sa_sigaction = on_fault;
	sa.sa_flags |= SA_SIGINFO;
	sigaction(SIGBUS, &sa, NULL);
}

int emu_fp_attach(struct emu_thr *t)
{
	if (emu.sync) { /* no log; the fault hook publishes the box */
		fp_self = t;
		hook_faults();
		return 0;
	}
	struct emu_fp *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->chunk = emu.encoder_inline ? FP_CHUNK_INLINE : FP_CHUNK;
	f->nchunk = emu.encoder_inline ? 1 : FP_NCHUNK;
	f->log = malloc(sizeof(*f->log) * f->chunk * f->nchunk);
	if (!f->log) {
		free(f);
		return -1;
	}
	pthread_mutex_init(&f->mu, NULL);
	f->t = t;
	t->fp = f;
	t->lpos = f->log;
	t->lend = f->log + f->chunk;
	fp_self = t;
	hook_faults();
	pthread_mutex_lock(&fp.mu);
	f->next = fp.list;
	fp.list = f;
	start_encoder();
	pthread_mutex_unlock(&fp.mu);
	return 0;
}

void emu_fp_drop(struct emu_thr *t)
{
	if (fp_self == t)
		fp_self = NULL;
	if (!t->fp)
		return;
	free(t->fp->log);
	free(t->fp);
	t->fp = NULL;
	t->lpos = t->lend = NULL;
	if (fp_self == t)
		fp_self = NULL;
}

void emu_fp_detach(struct emu_thr *t)
{
	struct emu_fp *f = t->fp;
	if (!f) {
		if (fp_self == t)
			fp_self = NULL;
		return;
	}
	pthread_mutex_lock(&fp.mu);
	for (struct emu_fp **pp = &fp.list; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	pthread_mutex_unlock(&fp.mu);
	/* the encoder may still be inside f: wait for it, then finish */
	drain(t);
	pthread_mutex_destroy(&f->mu);
	emu_fp_drop(t);
}

void emu_fp_child(void)
{
	pthread_mutex_init(&fp.mu, NULL);
	pthread_cond_init(&fp.cv, NULL);
	fp.list = NULL;
	fp.started = 0;
	fp.stop = 0;
	atomic_store(&fp.idle, 0);
}

void emu_fp_stop(void)
{
	pthread_mutex_lock(&fp.mu);
	int started = fp.started;
	fp.stop = 1;
	pthread_cond_signal(&fp.cv);
	pthread_mutex_unlock(&fp.mu);
	if (started)
		pthread_join(fp.th, NULL);
	fp.started = 0;
}
