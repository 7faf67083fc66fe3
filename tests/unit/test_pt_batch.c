/* tests/unit/test_pt_batch.c - the batch decoder (hwt_pt_block_batch)
 * against the block decoder and libipt.
 *
 * Oracle 1, the block decoder: its loop (sync_forward, event while
 * EVENT_PENDING, next; sync_forward after an error) reduced by the rules
 * of hwt/pt_flow.h to taken branches, events, errors and instruction
 * counts, with the time after each call.  The batch decoder must give
 * exactly that stream (every field, events included), with the path
 * cache on and off, with arrays of 2, 3 and 4096 entries and 1 or 64
 * events (so batches end anywhere), on: synthetic streams (t_syn.h),
 * every corpus trace, corpus traces with bytes flipped or zeroed (errors
 * at the same offsets), and, given perf.data files as arguments
 * (tests/e2e/batch_flow.sh), every trace queue of real recordings.
 *
 * Oracle 2, libipt 2.0.5's instruction decoder, on the synthetic streams
 * and the corpus traces it decodes cleanly: the taken branches (from, to)
 * derived from its instructions, and the instruction count, equal the
 * batch's (branches next to an event that is not a mere report -- tick,
 * cbr, mnt, exec mode, power, ptwrite -- left out on both sides, as
 * libipt's instruction stream does not say where such a branch went).
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/image.h"
#include "hwt/pt_flow.h"
#include "hwt/pt_packet.h"
#include "t.h"
#include "t_syn.h"
#include "../../bench/bench_rec.h"

struct vec {
	struct hwt_pt_entry *e;
	size_t n, cap;
	struct hwt_pt_event *ev;
	size_t nev, evcap;
};

static void vec_reset(struct vec *v)
{
	v->n = v->nev = 0;
}

static void vec_free(struct vec *v)
{
	free(v->e);
	free(v->ev);
	memset(v, 0, sizeof(*v));
}

static struct hwt_pt_entry *vec_add(struct vec *v)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 4096;
		v->e = realloc(v->e, v->cap * sizeof(*v->e));
		if (!v->e)
			abort();
	}
	struct hwt_pt_entry *e = &v->e[v->n++];
	memset(e, 0, sizeof(*e));
	return e;
}

static uint32_t vec_add_ev(struct vec *v, const struct hwt_pt_event *ev)
{
	if (v->nev == v->evcap) {
		v->evcap = v->evcap ? 2 * v->evcap : 256;
		v->ev = realloc(v->ev, v->evcap * sizeof(*v->ev));
		if (!v->ev)
			abort();
	}
	v->ev[v->nev] = *ev;
	return (uint32_t)v->nev++;
}

static int reported(int iclass, uint64_t to, uint64_t next)
{
	if (iclass == HWT_INSN_JCC || hwt_insn_is_far(iclass))
		return to != next;
	return 1;
}

/* ---- oracle 1: the block decoder's loop ---- */

/* Visits of a stop ip (HWT_PTE_STOP) and decoding past the end: both
 * oracle and batch, while set (check_all's last variant). */
static uint64_t g_stop;
static int g_have_stop, g_past_end, g_time_entries;
static int g_no_time; /* decoders without time tracking (no_time) */
/* check_untimed is left out (the synthetic streams have no timing
 * packets: without them no_time changes nothing but the times) */
static int g_untimed_off;

static void ref_stop(struct vec *v, const uint64_t *ips, uint32_t n)
{
	if (!g_have_stop)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (ips[i] == g_stop) {
			struct hwt_pt_entry *e = vec_add(v);
			e->type = HWT_PTE_STOP;
			e->from = g_stop;
			return;
		}
}

struct ref {
	struct hwt_pt_block_decoder *d;
	struct vec *v;
	int want_time;
	uint32_t acc;
};

static struct hwt_pt_entry *ref_put(struct ref *r, int type)
{
	struct hwt_pt_entry *e = vec_add(r->v);
	e->type = (uint8_t)type;
	e->ninsn = r->acc;
	r->acc = 0;
	if (r->want_time && hwt_pt_block_time(r->d, &e->tsc, NULL, NULL) >= 0)
		e->has_time = 1;
	return e;
}

static void ref_branch(struct ref *r, uint64_t from, uint64_t to, int iclass, int mode)
{
	struct hwt_pt_entry *e = ref_put(r, HWT_PTE_BRANCH);
	e->from = from;
	e->to = to;
	e->iclass = (uint8_t)iclass;
	e->mode = (uint8_t)mode;
}

/* Decoders that would have a private cache of their own get this one,
 * cleared first (as good as a new one): allocating and freeing the
 * multi-MiB cache for each of the many thousand decoders made the
 * sanitizer build spend minutes in its allocator. */
static struct hwt_pt_cache *fresh_cache;

static struct hwt_pt_flow_options flow_opt(struct hwt_pt_cache *cache, int no_paths)
{
	struct hwt_pt_flow_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	opt.query.size = sizeof(opt.query);
	if (!cache && fresh_cache) {
		hwt_pt_cache_clear(fresh_cache);
		cache = fresh_cache;
	}
	opt.cache = cache;
	opt.no_path_cache = (uint8_t)no_paths;
	opt.query.no_time = (uint8_t)g_no_time;
	return opt;
}

static int run_ref(const struct hwt_pt_config *cfg, const struct hwt_image *img,
		   struct hwt_pt_cache *cache, int want_time, struct vec *v)
{
	struct hwt_pt_flow_options opt = flow_opt(cache, 1);
	opt.end_on_call = opt.end_on_jump = 1;
	struct ref r = {hwt_pt_block_alloc(cfg, img, &opt), v, want_time, 0};
	if (!r.d)
		return -1;
	int pend = 0, pend_class = 0, pend_mode = 0, same = 0;
	uint64_t pend_from = 0, pend_next = 0, err_off = 0;
	int st = hwt_pt_block_sync_forward(r.d);
	for (;;) {
		if (st < 0) {
			if (st == HWT_ERR_EOS) {
				ref_put(&r, HWT_PTE_END);
				break;
			}
			uint64_t off = 0;
			hwt_pt_block_offset(r.d, &off);
			struct hwt_pt_entry *e = ref_put(&r, HWT_PTE_ERROR);
			e->err = st;
			e->from = hwt_pt_block_ip(r.d);
			e->to = off;
			pend = 0;
			if (off == err_off && ++same > 4) {
				ref_put(&r, HWT_PTE_END);
				break;
			}
			if (off != err_off)
				same = 0;
			err_off = off;
			st = hwt_pt_block_sync_forward(r.d);
			continue;
		}
		if (st & HWT_PTS_EVENT_PENDING) {
			struct hwt_pt_event ev;
			st = hwt_pt_block_event(r.d, &ev);
			if (st < 0)
				continue;
			ref_put(&r, HWT_PTE_EVENT)->index = vec_add_ev(v, &ev);
			uint64_t ip = hwt_pt_block_ip(r.d);
			if (pend && (ip != pend_from || (st & HWT_PTS_IP_SUPPRESSED))) {
				/* the held-back branch went on (or tracing stopped) */
				pend = 0;
				if (!(st & HWT_PTS_IP_SUPPRESSED) &&
				    reported(pend_class, ip, pend_next))
					ref_branch(&r, pend_from, ip, pend_class, pend_mode);
			}
			continue;
		}
		if ((st & HWT_PTS_EOS) && !g_past_end) {
			ref_put(&r, HWT_PTE_END);
			break;
		}
		struct hwt_pt_block b;
		st = hwt_pt_block_next(r.d, &b);
		if (st == HWT_ERR_EOS) {
			if (g_past_end) {
				r.acc += b.ninsn;
				ref_stop(v, b.ips, b.ninsn);
			}
			ref_put(&r, HWT_PTE_END);
			break;
		}
		if (st < 0) {
			r.acc += b.ninsn ? b.ninsn - 1 : 0;
			if (b.ninsn)
				ref_stop(v, b.ips, b.ninsn - 1);
			continue;
		}
		r.acc += b.ninsn;
		ref_stop(v, b.ips, b.ninsn);
		if (!b.ninsn || !hwt_insn_is_branch(b.iclass))
			continue;
		uint64_t ip = hwt_pt_block_ip(r.d), next = b.end_ip + b.sizes[b.ninsn - 1];
		if ((st & HWT_PTS_EVENT_PENDING) && ip == b.end_ip) {
			/* held back: an event binds to it */
			pend = 1;
			pend_from = b.end_ip;
			pend_next = next;
			pend_class = b.iclass;
			pend_mode = b.mode;
		} else if (!(st & HWT_PTS_IP_SUPPRESSED) && reported(b.iclass, ip, next)) {
			ref_branch(&r, b.end_ip, ip, b.iclass, b.mode);
		}
	}
	hwt_pt_block_free(r.d);
	return 0;
}

/* ---- the batch decoder ---- */

/* The caller's arrays of run_batch: the last n entries of a buffer kept
 * for the whole test (a new multi-KiB array per decoder cost minutes in
 * the sanitizer's allocator), so that a decoder writing past n still
 * runs off the end of an allocation. */
struct tail_buf {
	void *p;
	size_t n;
};
static struct tail_buf ent_buf, ev_buf;

static void *tail_of(struct tail_buf *t, size_t n, size_t size)
{
	if (n > t->n) {
		void *p = realloc(t->p, n * size);
		if (!p)
			return NULL;
		t->p = p;
		t->n = n;
	}
	return (char *)t->p + (t->n - n) * size;
}

static int run_batch(const struct hwt_pt_config *cfg, const struct hwt_image *img,
		     struct hwt_pt_cache *cache, int no_paths, int want_time, size_t cap,
		     size_t evcap, struct vec *v)
{
	struct hwt_pt_flow_options opt = flow_opt(cache, no_paths);
	struct hwt_pt_block_decoder *d = hwt_pt_block_alloc(cfg, img, &opt);
	if (!d)
		return -1;
	struct hwt_pt_entry *e = tail_of(&ent_buf, cap, sizeof(*e));
	struct hwt_pt_event *ev = tail_of(&ev_buf, evcap, sizeof(*ev));
	if (!e || !ev) {
		hwt_pt_block_free(d);
		return -1;
	}
	struct hwt_pt_batch b;
	hwt_pt_batch_init(&b, e, cap, ev, evcap);
	b.want_time = (uint8_t)want_time;
	b.have_stop = (uint8_t)g_have_stop;
	b.stop_ip = g_stop;
	b.past_end = (uint8_t)g_past_end;
	b.time_entries = (uint8_t)g_time_entries;
	if (g_have_stop && cap < 3u + !!g_time_entries)
		cap = b.cap = 3u + !!g_time_entries;
	int rc = 0, st, calls = 0;
	while ((st = hwt_pt_block_batch(d, &b)) >= 0) {
		for (size_t i = 0; i < b.n; i++) {
			struct hwt_pt_entry *x = vec_add(v);
			*x = e[i];
			if (x->type == HWT_PTE_EVENT) {
				if (x->index >= b.nev)
					rc = -2;
				else
					x->index = vec_add_ev(v, &ev[x->index]);
			}
		}
		if (!st)
			break;
		if (!b.n && ++calls > 3) { /* no progress */
			rc = -3;
			break;
		}
		if (b.n)
			calls = 0;
	}
	if (st < 0)
		rc = st;
	/* after the end: nothing more */
	if (!rc && (hwt_pt_block_batch(d, &b) != 0 || b.n))
		rc = -4;
	hwt_pt_block_free(d);
	return rc;
}

static int ev_same(const struct hwt_pt_event *a, const struct hwt_pt_event *b)
{
	return a->type == b->type && a->ip_suppressed == b->ip_suppressed &&
	       a->status_update == b->status_update && a->has_tsc == b->has_tsc &&
	       a->tsc == b->tsc && (a->ip_suppressed || a->ip == b->ip);
}

/* a (the batch; untimed: a decoder without time tracking, no_time and
 * no want_time) against b (the block decoder, with time): the same
 * entries and events, and the same times, or with untimed none in a. */
static int compare_as(const struct vec *a, const struct vec *b, int untimed, char *why, size_t wn)
{
	const char *what = untimed ? "untimed" : "batch";
	size_t n = a->n < b->n ? a->n : b->n;
	for (size_t i = 0; i < n; i++) {
		const struct hwt_pt_entry *x = &a->e[i], *y = &b->e[i];
		int same = x->type == y->type && x->iclass == y->iclass && x->mode == y->mode &&
			   x->err == y->err && x->ninsn == y->ninsn && x->from == y->from &&
			   x->to == y->to &&
			   (untimed ? !x->has_time && !x->tsc
				    : x->has_time == y->has_time && x->tsc == y->tsc);
		if (same && x->type == HWT_PTE_EVENT) {
			struct hwt_pt_event ea = a->ev[x->index], eb = b->ev[y->index];
			if (untimed) {
				same = !ea.has_tsc && !ea.tsc;
				eb.has_tsc = 0;
				eb.tsc = 0;
			}
			same = same && ev_same(&ea, &eb);
		}
		if (!same) {
			snprintf(why, wn,
				 "entry %zu: %s type %u cls %u err %d n %u %llx->%llx t %llu, "
				 "block decoder type %u cls %u err %d n %u %llx->%llx t %llu",
				 i, what, x->type, x->iclass, x->err, x->ninsn,
				 (unsigned long long)x->from, (unsigned long long)x->to,
				 (unsigned long long)x->tsc, y->type, y->iclass, y->err, y->ninsn,
				 (unsigned long long)y->from, (unsigned long long)y->to,
				 (unsigned long long)y->tsc);
			return -1;
		}
	}
	if (a->n != b->n) {
		snprintf(why, wn, "%s has %zu entries, block decoder %zu", what, a->n, b->n);
		return -1;
	}
	return 0;
}

static int compare(const struct vec *a, const struct vec *b, char *why, size_t wn)
{
	return compare_as(a, b, 0, why, wn);
}

static int compare_untimed(const struct vec *a, const struct vec *b, char *why, size_t wn)
{
	return compare_as(a, b, 1, why, wn);
}

/* Without time tracking (no_time): the batch (path cache on; with full,
 * off too, and the block decoder) gives ref but for the times.  0 or -1
 * (after t_fail).  (Few variants: the corpus is most of the suite's
 * time.) */
static int check_untimed(const char *what, const struct hwt_pt_config *cfg,
			 const struct hwt_image *img, const struct vec *ref, struct vec *got,
			 int full)
{
	char why[512];
	int rc = 0;
	if (g_untimed_off)
		return 0;
	g_no_time = 1;
	vec_reset(got);
	if (full &&
	    (run_ref(cfg, img, NULL, 0, got) || compare_untimed(got, ref, why, sizeof(why)))) {
		t_fail(__FILE__, __LINE__, "%s: block decoder without time tracking: %s", what,
		       got->n ? why : "failed");
		rc = -1;
	}
	for (int paths = 1; paths >= !full && !rc; paths--) {
		vec_reset(got);
		int r = run_batch(cfg, img, NULL, !paths, 0, 4096, 64, got);
		if (r || compare_untimed(got, ref, why, sizeof(why))) {
			t_fail(__FILE__, __LINE__, "%s%s: without time tracking, path cache %s: %s",
			       what, g_have_stop ? ", stop ip, past the end" : "",
			       paths ? "on" : "off", r ? "batch failed" : why);
			rc = -1;
		}
	}
	g_no_time = 0;
	return rc;
}

/* Time entries (time_entries): each says the time moved (it differs
 * from the entry before it); without them (their instruction counts
 * added to the next entry that is not a STOP) the stream is ref.  0 or
 * -1 with why. */
static int check_time_entries(const struct vec *got, const struct vec *ref, char *why, size_t wn)
{
	size_t j = 0, nt = 0;
	uint32_t carry = 0;
	int lh = 0;
	uint64_t lt = 0;
	for (size_t i = 0; i < got->n; i++) {
		struct hwt_pt_entry x = got->e[i];
		if (x.type == HWT_PTE_TIME) {
			if (x.has_time == lh && x.tsc == lt) {
				snprintf(why, wn, "time entry %zu: the time did not move", i);
				return -1;
			}
			carry += x.ninsn;
			lh = x.has_time;
			lt = x.tsc;
			nt++;
			continue;
		}
		if (x.type != HWT_PTE_STOP) {
			x.ninsn += carry;
			carry = 0;
			lh = x.has_time;
			lt = x.tsc;
		}
		if (j >= ref->n) {
			snprintf(why, wn, "more entries than without time entries");
			return -1;
		}
		const struct hwt_pt_entry *y = &ref->e[j++];
		if (x.type != y->type || x.ninsn != y->ninsn || x.from != y->from ||
		    x.to != y->to || x.tsc != y->tsc || x.has_time != y->has_time) {
			snprintf(why, wn,
				 "entry %zu (%zu without time entries, %zu of them): type %u n %u, "
				 "without: type %u n %u",
				 i, j - 1, nt, x.type, x.ninsn, y->type, y->ninsn);
			return -1;
		}
	}
	if (j != ref->n) {
		snprintf(why, wn, "%zu entries without time entries, %zu with", ref->n, j);
		return -1;
	}
	return 0;
}

/* The batch in every variant against the block decoder; 0 or -1 (after
 * t_fail).  *ref gets the reference stream. */
static int check_all(const char *what, const struct hwt_pt_config *cfg, const struct hwt_image *img,
		     struct hwt_pt_cache *shared, struct vec *ref, struct vec *got)
{
	static const size_t caps[3][2] = {{4096, 64}, {2, 1}, {3, 1}};
	char why[512];
	vec_reset(ref);
	if (run_ref(cfg, img, NULL, 1, ref)) {
		t_fail(__FILE__, __LINE__, "%s: cannot allocate the block decoder", what);
		return -1;
	}
	for (int paths = 0; paths < 2; paths++)
		for (int k = 0; k < 3; k++)
			for (int sh = 0; sh < 2; sh++) {
				if (sh && (k || !shared))
					continue;
				vec_reset(got);
				int rc = run_batch(cfg, img, sh ? shared : NULL, !paths, 1,
						   caps[k][0], caps[k][1], got);
				if (rc) {
					t_fail(__FILE__, __LINE__, "%s: batch failed (%d)", what,
					       rc);
					return -1;
				}
				if (compare(got, ref, why, sizeof(why))) {
					t_fail(__FILE__, __LINE__,
					       "%s, path cache %s, %zu entries a batch%s: %s", what,
					       paths ? "on" : "off", caps[k][0],
					       sh ? ", shared cache" : "", why);
					return -1;
				}
			}
	/* time entries, in small and large batches */
	for (int k = 0; k < 2; k++) {
		vec_reset(got);
		g_time_entries = 1;
		int rc = run_batch(cfg, img, NULL, 0, 1, k ? 2 : 4096, k ? 1 : 64, got);
		g_time_entries = 0;
		if (rc || check_time_entries(got, ref, why, sizeof(why))) {
			t_fail(__FILE__, __LINE__, "%s: time entries, %d entries a batch: %s", what,
			       k ? 2 : 4096, rc ? "batch failed" : why);
			return -1;
		}
	}
	/* without time: the same stream without it */
	vec_reset(got);
	if (run_batch(cfg, img, NULL, 0, 0, 512, 8, got) || got->n != ref->n) {
		t_fail(__FILE__, __LINE__, "%s: batch without time differs", what);
		return -1;
	}
	for (size_t i = 0; i < got->n; i++)
		if (got->e[i].has_time || got->e[i].from != ref->e[i].from ||
		    got->e[i].ninsn != ref->e[i].ninsn) {
			t_fail(__FILE__, __LINE__, "%s: batch without time differs at %zu", what,
			       i);
			return -1;
		}
	if (check_untimed(what, cfg, img, ref, got, 1))
		return -1;
	/* a stop ip (the target of a branch in the middle, and of the
	 * last) and past the end: the oracle's stops and counts */
	uint64_t stops[2] = {0, 0};
	for (size_t i = 0, nb = 0; i < ref->n; i++)
		if (ref->e[i].type == HWT_PTE_BRANCH && (++nb == 1 || i < ref->n / 2))
			stops[0] = ref->e[i].to;
	for (size_t i = ref->n; i-- > 0;)
		if (ref->e[i].type == HWT_PTE_BRANCH) {
			stops[1] = ref->e[i].to;
			break;
		}
	struct vec sref;
	memset(&sref, 0, sizeof(sref));
	int rc = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		g_have_stop = 1;
		g_past_end = 1;
		g_stop = stops[k];
		vec_reset(&sref);
		if (run_ref(cfg, img, NULL, 1, &sref)) {
			rc = -1;
			break;
		}
		for (int paths = 0; paths < 2 && !rc; paths++)
			for (int c = 0; c < 2 && !rc; c++) {
				vec_reset(got);
				if (run_batch(cfg, img, NULL, !paths, 1, c ? 3 : 4096, c ? 1 : 64,
					      got) ||
				    compare(got, &sref, why, sizeof(why))) {
					t_fail(__FILE__, __LINE__,
					       "%s, stop ip %llx, past the end, path cache %s, %d "
					       "entries a batch: %s",
					       what, (unsigned long long)g_stop,
					       paths ? "on" : "off", c ? 3 : 4096, why);
					rc = -1;
					break;
				}
				vec_reset(got);
				g_time_entries = 1;
				int r2 = run_batch(cfg, img, NULL, !paths, 1, c ? 4 : 4096,
						   c ? 1 : 64, got);
				g_time_entries = 0;
				if (r2 || check_time_entries(got, &sref, why, sizeof(why))) {
					t_fail(__FILE__, __LINE__,
					       "%s, stop ip %llx, past the end, time entries, path "
					       "cache %s, %d entries a batch: %s",
					       what, (unsigned long long)g_stop,
					       paths ? "on" : "off", c ? 4 : 4096,
					       r2 ? "batch failed" : why);
					rc = -1;
				}
			}
		if (!rc && !k)
			rc = check_untimed(what, cfg, img, &sref, got, 0);
	}
	g_have_stop = g_past_end = 0;
	vec_free(&sref);
	return rc;
}

/* ---- oracle 2: libipt ---- */

struct br {
	uint64_t from, to;
};
struct brs {
	struct br *b;
	size_t n, cap;
	uint64_t insns;
};

static void brs_add(struct brs *s, uint64_t from, uint64_t to)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->b = realloc(s->b, s->cap * sizeof(*s->b));
		if (!s->b)
			abort();
	}
	s->b[s->n++] = (struct br){from, to};
}

struct mem_image {
	const uint8_t *code;
	size_t size;
	uint64_t org;
};

static int ipt_read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
			void *ctx)
{
	const struct mem_image *m = ctx;
	(void)asid;
	if (ip < m->org || ip >= m->org + m->size)
		return -pte_nomap;
	size_t n = (size_t)(m->org + m->size - ip);
	if (n > size)
		n = size;
	memcpy(buf, m->code + (ip - m->org), n);
	return (int)n;
}

static int ipt_resets(int type)
{
	return type != ptev_tick && type != ptev_cbr && type != ptev_mnt &&
	       type != ptev_exec_mode && type != ptev_pwre && type != ptev_pwrx &&
	       type != ptev_ptwrite;
}

static int hwt_resets(int type)
{
	return type != HWT_EV_TICK && type != HWT_EV_CBR && type != HWT_EV_MNT &&
	       type != HWT_EV_EXEC_MODE && type != HWT_EV_PWRE && type != HWT_EV_PWRX &&
	       type != HWT_EV_PTWRITE;
}

/* libipt's taken branches; 0, or -1 if it met an error. */
static int ipt_branches(uint8_t *pt, size_t ptn, const char *bin, size_t binsize, uint64_t org,
			const struct mem_image *mem, struct brs *s)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = pt;
	cfg.end = pt + ptn;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d)
		return -1;
	int bad = 0;
	if (mem && pt_image_set_callback(pt_insn_get_image(d), ipt_read_mem, (void *)mem) < 0)
		bad = 1;
	if (!mem && pt_image_add_file(pt_insn_get_image(d), bin, 0, binsize, NULL, org) < 0)
		bad = 1;
	while (!bad) {
		int st = pt_insn_sync_forward(d);
		if (st < 0) {
			bad = st != -pte_eos;
			break;
		}
		int have_prev = 0;
		struct pt_insn prev;
		memset(&prev, 0, sizeof(prev));
		for (;;) {
			while (st >= 0 && (st & pts_event_pending)) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof(ev));
				if (st >= 0 && ipt_resets(ev.type))
					have_prev = 0;
			}
			if (st < 0 || (st & pts_eos))
				break;
			struct pt_insn in;
			memset(&in, 0, sizeof(in));
			st = pt_insn_next(d, &in, sizeof(in));
			if (in.iclass == ptic_error || !in.size)
				break;
			s->insns++; /* (also one that comes with the end of the trace) */
			if (have_prev && prev.iclass != ptic_other && prev.iclass != ptic_ptwrite) {
				int cf =
				    prev.iclass == ptic_cond_jump || prev.iclass == ptic_far_call ||
				    prev.iclass == ptic_far_return || prev.iclass == ptic_far_jump;
				if (!cf || in.ip != prev.ip + prev.size)
					brs_add(s, prev.ip, in.ip);
			}
			prev = in;
			have_prev = 1;
			if (st < 0)
				break;
		}
		if (st < 0 && st != -pte_eos)
			bad = 1;
	}
	pt_insn_free_decoder(d);
	return bad ? -1 : 0;
}

/* The batch's branches as libipt's instruction stream shows them. */
static void batch_branches(const struct vec *v, struct brs *s)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct hwt_pt_entry *e = &v->e[i];
		s->insns += e->ninsn;
		if (e->type != HWT_PTE_BRANCH)
			continue;
		/* held back behind an event, or followed by one at its target */
		if (!e->ninsn && i && v->e[i - 1].type == HWT_PTE_EVENT &&
		    hwt_resets(v->ev[v->e[i - 1].index].type))
			continue;
		if (i + 1 < v->n && v->e[i + 1].type == HWT_PTE_EVENT && !v->e[i + 1].ninsn &&
		    hwt_resets(v->ev[v->e[i + 1].index].type))
			continue;
		/* the last one: libipt decodes no instruction at its target */
		if (i + 1 < v->n && v->e[i + 1].type == HWT_PTE_END && !v->e[i + 1].ninsn)
			continue;
		brs_add(s, e->from, e->to);
	}
}

static void check_libipt(const struct vec *v, struct brs *ipt, char *why, size_t wn, int *bad)
{
	struct brs got = {0};
	batch_branches(v, &got);
	*bad = 0;
	size_t n = got.n < ipt->n ? got.n : ipt->n;
	for (size_t i = 0; i < n && !*bad; i++)
		if (got.b[i].from != ipt->b[i].from || got.b[i].to != ipt->b[i].to) {
			snprintf(why, wn, "branch %zu: batch %llx->%llx, libipt %llx->%llx", i,
				 (unsigned long long)got.b[i].from, (unsigned long long)got.b[i].to,
				 (unsigned long long)ipt->b[i].from,
				 (unsigned long long)ipt->b[i].to);
			*bad = 1;
		}
	if (!*bad && got.n != ipt->n) {
		snprintf(why, wn, "batch has %zu branches, libipt %zu", got.n, ipt->n);
		*bad = 1;
	}
	if (!*bad && got.insns != ipt->insns) {
		snprintf(why, wn, "batch has %llu instructions, libipt %llu",
			 (unsigned long long)got.insns, (unsigned long long)ipt->insns);
		*bad = 1;
	}
	free(got.b);
}

/* ---- inputs ---- */

static void t_synthetic(struct vec *ref, struct vec *got, struct hwt_pt_cache *shared)
{
	static const int maxbits[2] = {6, 47};
	struct syn e;
	char name[96], why[256];
	/* the code padded with int3 (so that the decode cache has runs,
	 * which need 15 bytes to spare, and the path cache has paths) */
	static uint8_t padded[sizeof(syn_code) + 64];
	memset(padded, 0xcc, sizeof(padded));
	memcpy(padded, syn_code, sizeof(syn_code));
	const struct mem_image mem = {padded, sizeof(padded), SYN_ORG};
	struct hwt_image *img = hwt_image_alloc();
	if (!img)
		abort();
	hwt_image_add_mem(img, padded, sizeof(padded), SYN_ORG);
	g_untimed_off = 1;
	for (int rc = 0; rc < 2; rc++)
		for (int tb = 0; tb < 2; tb++) {
			snprintf(name, sizeof(name), "batch-synthetic-tnt%d-%sretcomp", tb ? 64 : 8,
				 rc ? "" : "no");
			t_begin(name);
			int cases = 0;
			for (int nans = 1; nans <= 40 && !t_case_failed; nans++)
				for (int psb_at = -1; psb_at < nans && !t_case_failed; psb_at++) {
					if (psb_at == 0)
						continue;
					syn_build(&e, rc, maxbits[tb], nans, psb_at, 0x9a3c5e71u);
					CHECK(e.err == 0);
					struct hwt_pt_config cfg;
					hwt_pt_config_init(&cfg);
					cfg.buf.begin = e.buf;
					cfg.buf.end = e.buf + e.n;
					char what[64];
					snprintf(what, sizeof(what), "%d answers, psb after %d",
						 nans, psb_at);
					if (check_all(what, &cfg, img, shared, ref, got))
						break;
					struct brs ipt = {0};
					int bad;
					if (ipt_branches(e.buf, e.n, NULL, 0, 0, &mem, &ipt) < 0) {
						t_fail(__FILE__, __LINE__, "libipt: error (%s)",
						       what);
					} else {
						check_libipt(ref, &ipt, why, sizeof(why), &bad);
						if (bad)
							t_fail(__FILE__, __LINE__, "%s: libipt: %s",
							       what, why);
					}
					free(ipt.b);
					cases++;
				}
			CHECKF(t_case_failed || cases > 500, "only %d streams", cases);
			t_end();
		}
	g_untimed_off = 0;
	hwt_image_free(img);
}

static uint8_t *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *d = malloc(sz > 0 ? (size_t)sz : 1);
	if (d && sz > 0 && fread(d, 1, (size_t)sz, f) != (size_t)sz) {
		free(d);
		d = NULL;
	}
	fclose(f);
	*n = (size_t)(sz > 0 ? sz : 0);
	return d;
}

static int corpus(const char *dir, struct vec *ref, struct vec *got, struct hwt_pt_cache *shared)
{
	char path[512], line[4096];
	snprintf(path, sizeof(path), "%s/index.tsv", dir);
	FILE *idx = fopen(path, "r");
	if (!idx) {
		printf("SKIP batch-corpus: no corpus at %s\n", dir);
		return 0;
	}
	int compared = 0, vs_ipt = 0;
	while (fgets(line, sizeof(line), idx)) {
		char *f[8] = {0};
		char *p = line;
		for (int i = 0; i < 8 && p; i++) {
			f[i] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = 0;
		}
		if (!f[6] || !strcmp(f[0], "name"))
			continue;
		if (strstr(f[6], "filter") || strstr(f[6], "--raw") || strstr(f[4], "--raw") ||
		    (f[7] && *f[7] && *f[7] != '\n'))
			continue; /* special images */
		const char *name = f[0];
		uint64_t org = strtoull(f[1], NULL, 0);
		char ptp[600], binp[600], cname[300];
		size_t ptn, binn;
		snprintf(ptp, sizeof(ptp), "%s/%s/%s.pt", dir, name, name);
		snprintf(binp, sizeof(binp), "%s/%s/%s.bin", dir, name, name);
		snprintf(cname, sizeof(cname), "batch-corpus-%s", name);
		uint8_t *pt = read_all(ptp, &ptn);
		uint8_t *bin = read_all(binp, &binn);
		free(bin);
		if (!pt || !ptn) {
			free(pt);
			continue;
		}
		struct hwt_pt_config cfg;
		hwt_pt_config_init(&cfg);
		unsigned fam, mod;
		if (*f[2] && sscanf(f[2], "%u/%u", &fam, &mod) == 2) {
			cfg.cpu.vendor = HWT_CPU_INTEL;
			cfg.cpu.family = (uint16_t)fam;
			cfg.cpu.model = (uint8_t)mod;
			hwt_pt_cpu_errata(&cfg.errata, &cfg.cpu);
		}
		struct hwt_image *img = hwt_image_alloc();
		/* and the same code padded with zeros (runs need 15 bytes to
		 * spare: the paths are tried on it too) */
		struct hwt_image *pimg = hwt_image_alloc();
		uint8_t *pbin = calloc(1, binn + 64);
		if (!img || !pimg || !pbin)
			abort();
		hwt_image_add_file(img, binp, 0, HWT_IMAGE_TO_END, org);
		bin = read_all(binp, &binn);
		if (bin)
			memcpy(pbin, bin, binn);
		free(bin);
		hwt_image_add_mem(pimg, pbin, binn + 64, org);
		t_begin(cname);
		cfg.buf.begin = pt;
		cfg.buf.end = pt + ptn;
		if (!check_all("trace", &cfg, img, shared, ref, got)) {
			/* libipt, where it decodes the trace cleanly */
			struct brs ipt = {0};
			char why[256];
			int bad;
			if (!*f[2] && ipt_branches(pt, ptn, binp, binn, org, NULL, &ipt) == 0 &&
			    ipt.insns) {
				check_libipt(ref, &ipt, why, sizeof(why), &bad);
				if (bad)
					t_fail(__FILE__, __LINE__, "libipt: %s", why);
				vs_ipt++;
			}
			free(ipt.b);
		}
		check_all("trace, padded image", &cfg, pimg, shared, ref, got);
		/* corrupted: a byte flipped, a run zeroed, the end cut */
		uint8_t *cp = malloc(ptn);
		for (int k = 0; k < 6 && !t_case_failed && cp; k++) {
			memcpy(cp, pt, ptn);
			size_t at = ptn * (size_t)(k % 3 + 1) / 4, len = ptn;
			if (k < 3)
				cp[at] ^= 0x5a;
			else if (k < 5)
				memset(cp + at, 0, ptn - at < 5 ? ptn - at : 5);
			else
				len = at;
			cfg.buf.begin = cp;
			cfg.buf.end = cp + len;
			char what[64];
			snprintf(what, sizeof(what), "corrupted %d at %zu", k, at);
			check_all(what, &cfg, img, shared, ref, got);
			check_all(what, &cfg, pimg, shared, ref, got);
		}
		free(cp);
		t_end();
		compared++;
		hwt_image_free(img);
		hwt_image_free(pimg);
		free(pbin);
		free(pt);
	}
	fclose(idx);
	t_begin("batch-corpus-count");
	CHECKF(compared >= 100, "only %d corpus traces compared", compared);
	CHECKF(vs_ipt >= 50, "only %d corpus traces compared with libipt", vs_ipt);
	t_end();
	return 0;
}

static void map_file(void *arg, const char *path, uint64_t pgoff, uint64_t len, uint64_t addr)
{
	hwt_image_add_file(arg, path, pgoff, len, addr);
}

/* Every trace queue of a recording. */
static void recording(const char *path, struct vec *ref, struct vec *got,
		      struct hwt_pt_cache *shared)
{
	char name[600];
	snprintf(name, sizeof(name), "batch-recording-%s", path);
	t_begin(name);
	struct hwt_image *img = hwt_image_alloc();
	struct bench_rec br;
	if (!img || bench_rec_load(&br, "test_pt_batch", path, map_file, img)) {
		t_fail(__FILE__, __LINE__, "cannot load %s", path);
		hwt_image_free(img);
		t_end();
		return;
	}
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	if (br.intel) {
		cfg.cpu.vendor = HWT_CPU_INTEL;
		cfg.cpu.family = (uint16_t)br.cpu[0];
		cfg.cpu.model = (uint8_t)br.cpu[1];
		cfg.cpu.stepping = (uint8_t)br.cpu[2];
		hwt_pt_cpu_errata(&cfg.errata, &cfg.cpu);
	}
	size_t branches = 0;
	for (size_t i = 0; i < br.nq && !t_case_failed; i++) {
		cfg.buf.begin = br.qs[i].d;
		cfg.buf.end = br.qs[i].d + br.qs[i].n;
		char what[64];
		snprintf(what, sizeof(what), "queue %zu", i);
		if (check_all(what, &cfg, img, shared, ref, got))
			break;
		for (size_t k = 0; k < ref->n; k++)
			branches += ref->e[k].type == HWT_PTE_BRANCH;
		/* corrupted: bytes flipped, a run zeroed (errors at the same
		 * offsets, the same resumption) */
		size_t n = br.qs[i].n;
		uint8_t *cp = malloc(n ? n : 1);
		for (int k = 0; k < 4 && cp && n > 64 && !t_case_failed; k++) {
			memcpy(cp, br.qs[i].d, n);
			size_t at = n * (size_t)(k % 3 + 1) / 4;
			if (k < 3)
				for (size_t j = at; j < n; j += n / 7 + 1)
					cp[j] ^= (uint8_t)(0x21 << k);
			else
				memset(cp + at, 0, 16);
			cfg.buf.begin = cp;
			cfg.buf.end = cp + n;
			snprintf(what, sizeof(what), "queue %zu, corrupted %d", i, k);
			check_all(what, &cfg, img, shared, ref, got);
		}
		free(cp);
	}
	CHECKF(t_case_failed || branches > 1000, "only %zu branches", branches);
	bench_rec_free(&br);
	hwt_image_free(img);
	t_end();
}

int main(int argc, char **argv)
{
	struct vec ref = {0}, got = {0};
	/* a shared cache (kept across traces and images: must start over
	 * by itself) */
	struct hwt_pt_cache *shared = hwt_pt_cache_alloc();
	fresh_cache = hwt_pt_cache_alloc();
	if (!shared || !fresh_cache)
		abort();
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			recording(argv[i], &ref, &got, shared);
	} else {
		t_synthetic(&ref, &got, shared);
		const char *dir = getenv("CORPUS");
		corpus(dir ? dir : "../shared/corpus/libipt-ptt", &ref, &got, shared);
	}
	hwt_pt_cache_free(shared);
	hwt_pt_cache_free(fresh_cache);
	vec_free(&ref);
	vec_free(&got);
	free(ent_buf.p);
	free(ev_buf.p);
	return t_done();
}
