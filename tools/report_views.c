/* tools/report_views.c - the file outputs of "hwt report": --flamegraph
 * and --flame-chart (SVG, lib/out/flame.c), --lcov and --drcov (coverage,
 * lib/out/lcov.c, drcov.c).  Each is a consumer of the decoding engine;
 * the writers are fed as the flow comes and keep memory per distinct code
 * (per stack prefix for the flame graph; per call run in time for the
 * flame chart), never per instruction.
 *
 * Stacks are followed as in "hwt report --folded": a call pushes the
 * callee, a return pops (at the top of what the trace saw it re-roots at
 * the return target's function); every instruction counts 1 for the
 * function on top, and the time from the thread's previous timed
 * instruction to it (when the trace has timing).  The flame chart puts
 * each thread under a root frame of its own ("tid N").
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "out/cover.h"
#include "out/flame.h"
#include "out/out.h"
#include "progress.h"
#include "report_views.h"
#include "hwt/decode.h"
#include "script_perf.h"

struct views {
	int kind;
	struct sp_symcache *sc;
	struct hwt_flame *fl;
	struct hwt_lcov *lc;
	struct hwt_drcov *dc;
	int nomem;
	/* per-thread state, here (not in hwt_dec_thread.user, which goes
	 * with the decoder's threads) so the last block of each thread can
	 * be written at the end; hwt_dec_thread.user holds the index + 1 */
	struct vthread *vt;
	size_t nvt;
};

struct vthread {
	uint32_t root, node; /* flame: the thread's root (chart), current frame */
	int have_last;
	uint64_t last_time;
	uint64_t bstart, bend; /* drcov: the block being executed (bstart 0: none) */
	int bmod;	       /* its module */
};

static struct vthread *vt(struct views *v, struct hwt_dec_thread *t)
{
	if (!t->user) {
		size_t *idx = malloc(sizeof(*idx));
		struct vthread *nv = realloc(v->vt, (v->nvt + 1) * sizeof(*nv));
		if (!idx || !nv) {
			free(idx);
			v->nomem = 1;
			return NULL;
		}
		v->vt = nv;
		struct vthread *th = &v->vt[v->nvt];
		memset(th, 0, sizeof(*th));
		*idx = ++v->nvt;
		t->user = idx;
		if (v->kind == RV_CHART) {
			char name[48];
			snprintf(name, sizeof(name), "tid %u", t->tid);
			th->root = hwt_flame_child(v->fl, 0, name);
			if (!th->root)
				v->nomem = 1;
		}
	}
	return &v->vt[*(size_t *)t->user - 1];
}

static const char *fname(struct views *v, const struct hwt_image *img, uint64_t ip)
{
	uint64_t off;
	const char *n = sp_symbol(v->sc, img, ip, &off);
	return n ? n : "[unknown]";
}

static void flame_enter(struct views *v, struct vthread *th, uint32_t parent, const char *name)
{
	uint32_t n = hwt_flame_child(v->fl, parent, name);
	if (n)
		th->node = n;
	else
		v->nomem = 1;
}

/* n instructions in sequence from ip to end, all at one time (flame
 * graph and chart, drcov): the frame on top takes them, with the time
 * from the thread's last one; a drcov block runs on to end. */
static void v_run(struct views *v, struct vthread *th, const struct hwt_image *img, uint64_t ip,
		  uint64_t end, uint32_t n, int have_time, uint64_t time_ns)
{
	if (v->kind == RV_DRCOV) {
		if (!th->bstart) {
			th->bstart = ip;
			th->bmod = hwt_drcov_module(v->dc, img, ip);
			if (th->bmod < -1)
				v->nomem = 1;
		}
		th->bend = end;
		return;
	}
	if (!th->node)
		flame_enter(v, th, th->root, fname(v, img, ip));
	uint64_t dt = 0;
	if (have_time) {
		if (th->have_last && time_ns >= th->last_time)
			dt = time_ns - th->last_time;
		th->last_time = time_ns;
		th->have_last = 1;
	}
	hwt_flame_count(v->fl, th->node, n, dt);
}

static void v_insn(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		   const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct views *v = arg;
	struct vthread *th = vt(v, t);
	if (!th)
		return;
	if (v->kind == RV_LCOV) {
		if (hwt_lcov_insn(v->lc, img, in->ip, 1))
			v->nomem = 1;
		return;
	}
	v_run(v, th, img, in->ip, in->ip + in->size, 1, have_time, time_ns);
}

static void end_block(struct views *v, struct vthread *th)
{
	if (th->bstart && th->bend > th->bstart &&
	    hwt_drcov_add(v->dc, th->bmod, th->bstart, th->bend - th->bstart) < 0)
		v->nomem = 1;
	th->bstart = 0;
}

static void branch_do(struct views *v, struct vthread *th, uint64_t from, uint64_t to, int kind,
		      const struct hwt_image *img)
{
	if (v->kind == RV_LCOV) {
		if (kind == HWT_BR_JCC && hwt_lcov_taken(v->lc, img, from, 1))
			v->nomem = 1;
		return;
	}
	if (v->kind == RV_DRCOV) {
		end_block(v, th);
		return;
	}
	if (kind == HWT_BR_CALL || kind == HWT_BR_ICALL) {
		flame_enter(v, th, th->node ? th->node : th->root, fname(v, img, to));
	} else if (kind == HWT_BR_RET) {
		uint32_t p = th->node ? hwt_flame_parent(v->fl, th->node) : th->root;
		if (th->node && p != th->root)
			th->node = p;
		else /* returned above where the trace began: re-root */
			flame_enter(v, th, th->root, fname(v, img, to));
	}
}

static void v_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		     const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct views *v = arg;
	struct vthread *th = vt(v, t);
	if (th)
		branch_do(v, th, from, to, kind, img);
}

/* Ranges (flame graph and chart, drcov), as v_insn and v_branch take
 * their instructions and branch: the frame on top does not change within
 * a range, and its instructions have one time (the time from the
 * thread's last one goes with the first); a drcov block runs on to the
 * end of the range's last instruction. */
static void v_ranges(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_range *rg, size_t n,
		     const struct hwt_image *img)
{
	struct views *v = arg;
	struct vthread *th = vt(v, t);
	if (!th)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct hwt_dec_range *x = &rg[i];
		if (x->n)
			v_run(v, th, img, x->ip, x->end, x->n, x->have_time, x->time_ns);
		if (x->kind != HWT_DEC_NO_BRANCH)
			branch_do(v, th, x->from, x->to, x->kind, img);
	}
}

static void v_thread_free(void *arg, struct hwt_dec_thread *t)
{
	free(t->user); /* the index; the state stays in views.vt */
	t->user = NULL;
}

static void v_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	struct views *v = arg;
	if (!t || !t->user)
		return;
	struct vthread *th = vt(v, t);
	th->have_last = 0;
	if (v->kind == RV_DRCOV)
		end_block(v, th);
}

int report_views(const char *input, int kind, const char *output, int progress)
{
	static const char *const what[] = {"--flamegraph", "--flame-chart", "--lcov", "--drcov"};
	struct views v;
	memset(&v, 0, sizeof(v));
	v.kind = kind;
	v.sc = sp_symcache_alloc();
	if (kind == RV_FLAME || kind == RV_CHART) {
		struct hwt_flame_config fc;
		hwt_flame_config_init(&fc);
		fc.chart = kind == RV_CHART;
		v.fl = hwt_flame_alloc(&fc);
	} else if (kind == RV_LCOV) {
		v.lc = hwt_lcov_alloc();
	} else {
		v.dc = hwt_drcov_alloc();
	}
	if (!v.sc || !(v.fl || v.lc || v.dc)) {
		cli_err("report", "out of memory");
		sp_symcache_free(v.sc);
		return 2;
	}
	int fd = 1;
	if (output && strcmp(output, "-")) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			cli_err("report",
				"cannot write '%s': %m (check the folder exists and is "
				"writable)",
				output);
			sp_symcache_free(v.sc);
			hwt_flame_free(v.fl);
			hwt_lcov_free(v.lc);
			hwt_drcov_free(v.dc);
			return 2;
		}
	}
	struct hwt_decode_consumer c = {
	    .size = sizeof(c),
	    .arg = &v,
	    .flags = kind == RV_FLAME || kind == RV_CHART ? HWT_DEC_WANT_TIME : 0u,
	    .insn = v_insn,
	    .thread_free = v_thread_free,
	    .branch = v_branch,
	    .gap = v_gap,
	};
	/* lcov counts each instruction's address: per instruction; the
	 * others in ranges (per instruction with --no-batch: the reference) */
	if (kind != RV_LCOV && !sp_no_batch()) {
		c.insn = NULL;
		c.branch = NULL;
		c.ranges = v_ranges;
	}
	struct progress *pg = progress_start("report", input, progress);
	int rc = sp_run_progress(input, "report", &c, pg);
	progress_stop(pg);
	for (size_t i = 0; v.dc && i < v.nvt; i++)
		end_block(&v, &v.vt[i]);
	if (rc != 2) {
		struct hwt_outbuf o;
		int err = hwt_outbuf_init(&o, fd, 1u << 20);
		if (!err) {
			if (v.fl)
				err = hwt_flame_write(v.fl, &o);
			else if (v.lc)
				err = hwt_lcov_write(v.lc, &o, NULL);
			else
				err = hwt_drcov_write(v.dc, &o);
			if (hwt_outbuf_fini(&o) && !err)
				err = -1;
		}
		if (err) {
			cli_err("report", "cannot write the %s output to '%s': %s", what[kind],
				output ? output : "stdout",
				o.err ? strerror(o.err) : "out of memory");
			rc = 2;
		}
		if (v.nomem)
			cli_err("report", "out of memory: the %s output is incomplete", what[kind]);
	}
	if (fd != 1 && close(fd) && rc != 2) {
		cli_err("report", "cannot write '%s': %m", output);
		rc = 2;
	}
	sp_symcache_free(v.sc);
	hwt_flame_free(v.fl);
	hwt_lcov_free(v.lc);
	hwt_drcov_free(v.dc);
	free(v.vt);
	return rc;
}
