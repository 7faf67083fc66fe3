/* emu/plugin.c - hwt's emulated Intel PT unit: a qemu-x86_64 (user mode)
 * TCG plugin.
 *
 * Usage: qemu-x86_64 -plugin hwt-pt-plugin.so,ARG=VAL,... -- PROG ARGS
 *   dir=D fd=N        stream files in D, announced on pipe fd N (recorder)
 *   fmt=pt|bts        trace format: Intel PT packets (default) or Intel BTS
 *                     records (btsgen.h; user mode only, no filters)
 *   raw=P             debug: raw PT of each thread to P.<pid>.<tid>
 *   encoder=sync|ref|thread|inline   who builds the packets: the
 *                     program's thread at every block (sync, the default:
 *                     tb_fast for the common blocks, step() for the rest),
 *                     step() for every block (ref: the reference the others
 *                     are tested against), fastpath.c's encoder thread from
 *                     the program's block log (thread), or the program's
 *                     thread every thousand blocks (inline), or nothing
 *                     (none: an empty callback per block, no trace; the
 *                     cost floor of a per-block callback, make bench); the
 *                     default from $HWT_EMU_ENCODER
 *   truth=F           ground truth: "tid<TAB>from<TAB>to[<TAB>async]" lines
 *   truthbox=1        (with dir=) each stream's truth in <stream>.truth, for
 *                     the recorder to join into F (kill-safe, stream.c)
 *   tsc= mtc= mtc_period= cyc= cyc_thresh= psb_period= noretcomp= branch=
 *                     perf intel_pt terms (0/1 or values; perf's defaults)
 *   aux=BYTES data=BYTES snapshot=0|1   ring sizes (powers of two), mode
 *   st=SAMPLE_TYPE trid=ID sbid=ID  sample_id trailer of the records (trid: the
 *                     trace event's AUX/ITRACE_START, sbid: sideband's)
 *   filter=SPEC       kernel address filters, ';'-separated:
 *                     "filter|stop OFF/SIZE[@PATH]" (see parse_filters)
 *   nofollow=1 follow=GLOB xtsc= xstream= xcomm=   following exec() (exec.c)
 *
 * How control flow is seen: every translated block (TB) ends at its first
 * control transfer, so only the last instruction of a TB can branch.  At
 * translation we classify that instruction once (lib/x86, Zydis) and
 * register one exec callback per TB; when a TB starts on a thread, the
 * previous TB of that thread tells which branch just executed and the new
 * TB's address is its outcome (taken/not taken, indirect target).  Time is
 * the thread's guest instruction count (1 instruction = 1 cycle = 1 ns).
 * Syscalls leave user mode: TIP.PGD (IP suppressed) at the syscall,
 * TIP.PGE where user mode resumes.  Signals delivered by the kernel part
 * appear as a TIP.PGE to the handler; a transfer no instruction explains
 * is treated as an asynchronous event (FUP, TIP.PGD, TIP.PGE).
 * A signal delivered between blocks is reported at the instruction its
 * frame names (sigframe.h), also after a conditional or indirect branch.
 * Limits: a Jcc whose target is its fall-through is recorded as
 * not taken.  exec()ed programs are followed in the same stream (exec.c:
 * qemu re-executes itself with the new program).
 * Code generated at run time: jit.c.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu.h"
#include "qemu_plugin_api.h"
#include "jit.h"
#include "sigframe.h"
#include "hwt/x86.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct emu_global emu;

static struct emu_thr *thr_by_vcpu[EMU_MAX_VCPUS];
static volatile pid_t clone_ptid;
static volatile uint64_t clone_tsc;
static int first_thread_done;

static int in_filter(uint64_t ip)
{
	if (!emu.have_filter_ranges)
		return 1;
	for (int i = 0; i < emu.nfilt; i++)
		if (emu.filt[i].cfg == 1 && emu.filt[i].active && ip >= emu.filt[i].a &&
		    ip <= emu.filt[i].b)
			return 1;
	return 0;
}

static int in_stop(uint64_t ip)
{
	for (int i = 0; i < emu.nfilt; i++)
		if (emu.filt[i].cfg == 2 && emu.filt[i].active && ip >= emu.filt[i].a &&
		    ip <= emu.filt[i].b)
			return 1;
	return 0;
}

static int is_handler(uint64_t ip)
{
	for (int i = 1; i < 65; i++)
		if (emu.handlers[i] == ip)
			return 1;
	return 0;
}

static struct emu_thr *thr_get(unsigned vcpu);
struct emu_thr *emu_thr_of(unsigned vcpu)
{
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	return __builtin_expect(t != NULL, 1) ? t : thr_get(vcpu);
}

static struct emu_thr *thr_get(unsigned vcpu)
{
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	if (t)
		return t;
	if (vcpu >= EMU_MAX_VCPUS)
		return NULL;
	int main_thread = !first_thread_done;
	pid_t pid = getpid();
	t = emu_thr_new((int)vcpu, main_thread ? 0 : pid, main_thread ? 0 : clone_ptid, 0);
	if (!t)
		return NULL;
	t->tbase = main_thread ? emu.tsc0 : clone_tsc;
	ptg_init(&t->g, &emu.ptg, t->buf, EMU_BUF_SIZE, t->tbase);
	btg_init(&t->b);
	if (main_thread) {
		const char *exe = qemu_plugin_path_to_binary();
		const char *base = exe ? strrchr(exe, '/') : NULL;
		const char *comm = emu_exec_comm(); /* a program exec() started */
		emu_sb_comm(t, comm ? comm : base ? base + 1 : (exe ? exe : "?"), 1);
		emu_sb_initial_maps(t);
		if (!emu_exec_continued())
			emu_thr_start_records(t, 0);
	} else {
		emu_thr_start_records(t, 1);
	}
	first_thread_done = 1;
	if (emu_fp_attach(t) < 0) {
		emu_thr_end(t, 1);
		emu_thr_free(t);
		return NULL;
	}
	thr_by_vcpu[vcpu] = t;
	return t;
}

/* The branch at the end of p executed and control is now at `to`. */
static void transition(struct emu_thr *t, const struct emu_tb *p, uint64_t to)
{
	struct ptgen *g = &t->g;
	enum { LINEAR, NOT_TAKEN, TAKEN, DIRECT, INDIRECT, RET, FROM_KERNEL, ASYNC } k;
	uint64_t async_from = p->next;

	switch (p->cls) {
	case EMU_JCC:
		if (to == p->target && to != p->next)
			k = TAKEN;
		else if (to == p->next)
			k = NOT_TAKEN;
		else
			k = ASYNC;
		break;
	case EMU_JMP:
	case EMU_CALL:
		if (to == p->target)
			k = DIRECT;
		else
			k = ASYNC, async_from = p->target;
		break;
	case EMU_JMP_IND:
	case EMU_CALL_IND:
		k = INDIRECT;
		break;
	case EMU_RET:
		k = RET;
		break;
	case EMU_KERNEL:
		k = FROM_KERNEL;
		break;
	default:
		if (to == p->next || (to >= p->start && to <= p->last))
			k = LINEAR;
		else
			k = ASYNC;
		break;
	}

	if (k == TAKEN || k == DIRECT || k == INDIRECT || k == RET)
		emu_truth(t, p->last, to, 0);
	else if (k == ASYNC || (k == FROM_KERNEL && to != p->next && is_handler(to)))
		emu_truth(t, async_from, to, 1);

	if (emu.bts) { /* one record per taken branch; the kernel's are filtered */
		static const int8_t bkind[] = {
		    [EMU_JCC] = BTG_JCC,      [EMU_JMP] = BTG_JMP,	  [EMU_CALL] = BTG_CALL,
		    [EMU_JMP_IND] = BTG_IJMP, [EMU_CALL_IND] = BTG_ICALL, [EMU_RET] = BTG_RET};
		if (k == NOT_TAKEN)
			btg_not_taken(&t->b, p->last);
		else if (k == TAKEN || k == DIRECT || k == INDIRECT || k == RET)
			btg_branch(g, &t->b, bkind[p->cls], p->last, to, p->next);
		return;
	}

	if (t->stopped)
		return;
	int want = in_filter(to);
	if (emu.nfilt && in_stop(to)) {
		if (g->en)
			ptg_pgd(g, 1, to);
		struct hwt_pt_packet ts = {.type = HWT_PKT_TRACESTOP};
		int n = hwt_pt_pkt_encode(g->buf + g->len, g->cap - g->len, &ts);
		if (n > 0)
			g->len += (size_t)n;
		t->stopped = 1;
		return;
	}
	if (g->en && want) {
		switch (k) {
		case TAKEN:
			ptg_tnt(g, 1);
			break;
		case NOT_TAKEN:
			ptg_tnt(g, 0);
			break;
		case DIRECT:
			if (p->cls == EMU_CALL && !p->zero_call)
				ptg_call(g, p->next);
			break;
		case INDIRECT:
			if (p->cls == EMU_CALL_IND)
				ptg_call(g, p->next);
			ptg_tip(g, to);
			break;
		case RET:
			ptg_ret(g, to);
			break;
		case FROM_KERNEL: /* int n etc. without a syscall callback */
			ptg_pgd(g, 0, 0);
			ptg_pge(g, to);
			break;
		case ASYNC:
			ptg_fup(g, async_from);
			ptg_pgd(g, 0, 0);
			ptg_pge(g, to);
			break;
		default:
			break;
		}
	} else if (g->en && !want) {
		switch (k) {
		case DIRECT:
		case INDIRECT:
			ptg_pgd(g, 1, to);
			break;
		case RET: {
			int match = g->rs_n && g->rs[g->rs_top] == to && !g->cfg.noretcomp;
			if (g->rs_n) {
				g->rs_top = (g->rs_top + PTG_RETSTACK - 1) % PTG_RETSTACK;
				g->rs_n--;
			}
			ptg_pgd(g, !match, to);
			break;
		}
		case ASYNC:
			ptg_fup(g, async_from);
			ptg_pgd(g, 0, 0);
			break;
		default: /* taken Jcc, linear exit, kernel */
			ptg_pgd(g, 0, 0);
			break;
		}
	} else if (!g->en && want) {
		ptg_pge(g, to);
	}
}

/* A signal handler starts at `to` right after block p and its frame says
 * the signal interrupted the instruction at `at` (sigframe.h): p's branch
 * went to `at` (unless p itself was cut short, `at` inside it), then the
 * asynchronous transfer at -> to.  1 if handled. */
static int signal_entry(struct emu_thr *t, const struct emu_tb *p, uint64_t to, uint64_t at)
{
	int inside = at >= p->start && at <= p->last;
	int ok;
	switch (p->cls) {
	case EMU_JCC:
		ok = at == p->target || at == p->next;
		break;
	case EMU_JMP:
	case EMU_CALL:
		ok = at == p->target;
		break;
	case EMU_JMP_IND:
	case EMU_CALL_IND:
	case EMU_RET:
		ok = 1;
		break;
	case EMU_OTHER:
		ok = at == p->next;
		break;
	default: { /* at a system call: user mode resumes at `at` (after it, at
		    * it when restarted, where rt_sigreturn goes) */
		struct emu_tb q = *p;
		q.next = at;
		transition(t, &q, to);
		return 1;
	}
	}
	if (!ok && !inside)
		return 0;
	if (!inside)
		transition(t, p, at);
	struct emu_tb a = {.start = at, .last = at, .next = at, .cls = EMU_OTHER};
	transition(t, &a, to); /* not linear: the asynchronous transfer from at */
	return 1;
}

/* One executed block: the branch that ended the previous block of the
 * thread is explained by cur's address.  The common cases (tracing on, no
 * filters, no CYC, the branch explained by the previous block) are handled
 * inline; everything else goes through transition().  Called in order for
 * each thread, on the thread itself (encoder=sync; sig: a signal handler
 * may start here, its frame is read now) or from the block log
 * (fastpath.c; sig 0: tb_log keeps such blocks out of the log); the caller
 * publishes the box afterwards. */
static inline __attribute__((always_inline)) void step(struct emu_thr *t, const struct emu_tb *cur,
						       int sig)
{
	struct ptgen *g = &t->g;
	const struct emu_tb *p = t->prev;
	t->prev = cur;
	uint64_t now = t->tbase + t->icount;
	t->icount += cur->n;
	g->tsc = now;
	if (now >= g->mtc_next)
		ptg_time(g, now);
	uint64_t to = cur->start;
	uint64_t at;
	if (sig && __builtin_expect(emu_sig_maybe_h(cur->sigh), 0) && p && emu_sig_frame(to, &at) &&
	    signal_entry(t, p, to, at))
		goto done;
	if (__builtin_expect(p && g->en && !emu.nfilt && !g->cfg.cyc && g->cfg.branch, 1)) {
		switch (p->cls) {
		case EMU_JCC:
			if (to == p->next) {
				g->tnt <<= 1;
				if (++g->ntnt == 6)
					ptg_flush_tnt(g);
				goto done;
			}
			if (to == p->target) {
				emu_truth(t, p->last, to, 0);
				g->tnt = (g->tnt << 1) | 1;
				if (++g->ntnt == 6)
					ptg_flush_tnt(g);
				goto done;
			}
			break;
		case EMU_OTHER:
			if (to == p->next)
				goto done;
			break;
		case EMU_JMP:
			if (to == p->target) {
				emu_truth(t, p->last, to, 0);
				goto done;
			}
			break;
		case EMU_CALL:
			if (to == p->target) {
				emu_truth(t, p->last, to, 0);
				if (!p->zero_call)
					ptg_call(g, p->next);
				goto done;
			}
			break;
		case EMU_RET:
			emu_truth(t, p->last, to, 0);
			ptg_ret(g, to);
			goto done;
		case EMU_JMP_IND:
			emu_truth(t, p->last, to, 0);
			ptg_tip(g, to);
			goto done;
		case EMU_CALL_IND:
			emu_truth(t, p->last, to, 0);
			ptg_call(g, p->next);
			ptg_tip(g, to);
			goto done;
		default:
			break;
		}
	}
	if (!p) {
		if (!emu.bts) {
			ptg_begin(g);
			if (in_filter(to) && !(emu.nfilt && in_stop(to)))
				ptg_pge(g, to);
		}
	} else {
		transition(t, p, to);
	}
done:
	if (__builtin_expect(ptg_psb_due(g) && !emu.bts, 0))
		ptg_psb(g, to);
	if (__builtin_expect(g->len >= emu.flush_at, 0)) {
		emu_thr_flush(t, 0);
		emu_box_sync(t); /* the ring has the packets: the box says so */
	}
}

/* One block of thread t (fastpath.c's encoder: the cases it does not
 * handle itself). */
void emu_step1(struct emu_thr *t, const struct emu_tb *cur)
{
	step(t, cur, 0);
}

/* encoder=sync: the whole block's work on the program's thread (the
 * blocks tb_fast does not take). */
static __attribute__((noinline)) void tb_exec(unsigned vcpu, void *udata)
{
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	if (__builtin_expect(!t, 0)) {
		t = thr_get(vcpu);
		if (!t)
			return;
	}
	if (emu.pebs) { /* sampling: only the clock (the samples: pebs.c) */
		const struct emu_tb *cur = udata;
		t->prev = cur;
		t->icount += cur->n;
		return;
	}
	t->in_step = 1;
	step(t, udata, 1);
	emu_box_sync(t);
	t->in_step = 0;
}

/* encoder=sync's hot path, a leaf: the common transitions of step() (a
 * Jcc's outcome, a fall-through, a direct JMP or CALL, a RET compressed
 * into a TNT bit) with everything that step() would do beyond them ruled
 * out first: no MTC due, no signal handler entry, no PSB+ or flush due
 * after a TNT byte, tracing on without filters, CYC or BTS.  Any other
 * block goes to tb_exec whole, before anything changed (a tail call), so
 * the packets and the truth are those of step() byte for byte.  The box is
 * published by tb_exec only: a thread killed between two publications
 * ends at the last one, packets and truth together (unit/emu_abi.h). */
static inline __attribute__((always_inline)) void fast_step(unsigned vcpu, void *udata,
							    const int truth)
{
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	const struct emu_tb *c = udata;
	if (__builtin_expect(!t || !t->prev || !t->g.en || t->stopped, 0))
		return tb_exec(vcpu, udata);
	struct ptgen *g = &t->g;
	const struct emu_tb *p = t->prev;
	const uint64_t to = c->start, now = t->tbase + t->icount;
	if (__builtin_expect(now >= g->mtc_next || emu_sig_maybe_h(c->sigh), 0))
		return tb_exec(vcpu, udata);
	unsigned taken = to == p->fb, bit = p->fbit, ret = 0;
	if (__builtin_expect(!(taken | (to == p->fa)), 0)) {
		if (p->cls != EMU_RET || g->cfg.noretcomp || !g->rs_n || g->rs[g->rs_top] != to)
			return tb_exec(vcpu, udata);
		taken = bit = ret = 1;
	}
	if (__builtin_expect(bit && g->ntnt == 5, 0)) { /* a TNT byte: room before PSB/flush? */
		uint64_t lim = g->psb_next - g->total;
		if (lim > emu.flush_at)
			lim = emu.flush_at;
		if (g->len + 1 >= lim)
			return tb_exec(vcpu, udata);
	}
	if (truth && taken && t->tlen > EMU_TRUTH_BUF - 1024)
		return tb_exec(vcpu, udata);
	t->prev = c;
	t->icount += c->n;
	g->tsc = now;
	if (ret) {
		g->rs_top = (g->rs_top + PTG_RETSTACK - 1) % PTG_RETSTACK;
		g->rs_n--;
	} else if (p->fcall) {
		g->rs_top = (g->rs_top + 1) % PTG_RETSTACK;
		g->rs[g->rs_top] = p->next;
		if (g->rs_n < PTG_RETSTACK)
			g->rs_n++;
	}
	if (bit) {
		g->tnt = (g->tnt << 1) | taken;
		if (++g->ntnt == 6) {
			g->buf[g->len++] = hwt_emu_tnt_byte(g->tnt, 6);
			g->tnt = 0;
			g->ntnt = 0;
		}
	}
	if (truth && taken)
		emu_truth_line(t, p->last, to, 0);
}

/* encoder=none: the cost of the callback alone */
static void tb_none(unsigned vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
}

/* the callbacks of plain branch tracing (emu.fast), without and with the
 * truth */
static void tb_fast(unsigned vcpu, void *udata)
{
	fast_step(vcpu, udata, 0);
}

static void tb_fast_truth(unsigned vcpu, void *udata)
{
	fast_step(vcpu, udata, 1);
}

/* A block in generated code (jit.c): its version of the code is announced
 * before its trace (the log's blocks are encoded first). */
static void tb_exec_jit(unsigned vcpu, void *udata)
{
	struct emu_thr *t = thr_get(vcpu);
	if (t) {
		emu_fp_sync(t);
		emu_jit_exec(t, udata);
	}
	tb_exec(vcpu, udata);
}

/* The default hot path: append the block to the thread's log; the
 * encoder (fastpath.c) runs step() on it later, off this thread.  A block
 * where a signal handler may start is done here and now, after the log
 * (its signal frame is on the guest stack only at this moment). */
static void tb_log(unsigned vcpu, void *udata)
{
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	if (__builtin_expect(!t, 0)) {
		t = thr_get(vcpu);
		if (!t)
			return;
	}
	if (__builtin_expect(emu_sig_maybe_h(((const struct emu_tb *)udata)->sigh), 0)) {
		emu_fp_sync(t);
		step(t, udata, 1);
		emu_box_sync(t);
		return;
	}
	*t->lpos++ = udata;
	if (__builtin_expect(t->lpos == t->lend, 0))
		emu_fp_full(t);
}

static uint8_t classify(const struct hwt_x86_insn *in)
{
	switch (in->iclass) {
	case HWT_INSN_JCC:
		return EMU_JCC;
	case HWT_INSN_JMP:
		return EMU_JMP;
	case HWT_INSN_CALL:
		return EMU_CALL;
	case HWT_INSN_JMP_IND:
		return EMU_JMP_IND;
	case HWT_INSN_CALL_IND:
		return EMU_CALL_IND;
	case HWT_INSN_RET:
		return EMU_RET;
	case HWT_INSN_OTHER:
	case HWT_INSN_PTWRITE:
		return EMU_OTHER;
	default:
		return EMU_KERNEL;
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (!n)
		return;
	struct emu_jit_tb *jt = emu_jit_capture(tb, qemu_plugin_tb_vaddr(tb)); /* jit.c */
	struct emu_tb *e = jt ? &jt->tb : aligned_alloc(64, (sizeof(*e) + 63) & ~(size_t)63);
	if (!e)
		return;
	if (!jt)
		memset(e, 0, sizeof(*e));
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
	struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
	if (!emu.guest_base) {
		void *h = qemu_plugin_insn_haddr(first);
		if (h)
			emu.guest_base = (int64_t)((uintptr_t)h - qemu_plugin_insn_vaddr(first));
	}
	e->start = qemu_plugin_tb_vaddr(tb);
	e->n = (uint32_t)n;
	e->last = qemu_plugin_insn_vaddr(last);
	size_t sz = qemu_plugin_insn_size(last);
	e->next = e->last + sz;
	struct hwt_x86_insn in;
	if (hwt_x86_decode(qemu_plugin_insn_data(last), sz, e->last, 64, &in) == 0) {
		e->cls = classify(&in);
		if (in.flags & HWT_INSN_F_DIRECT)
			e->target = in.target;
		if (e->cls == EMU_CALL && e->target == e->next)
			e->zero_call = 1;
	} else {
		e->cls = EMU_OTHER;
	}
	emu_fp_tb(e);
	if (emu.none) {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_none, QEMU_PLUGIN_CB_NO_REGS, e);
		return;
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb,
					     jt		? tb_exec_jit
					     : emu.sync ? (!emu.fast	       ? tb_exec
							   : emu.truth_fd >= 0 ? tb_fast_truth
									       : tb_fast)
							: tb_log,
					     QEMU_PLUGIN_CB_NO_REGS, e);
	if (emu.pebs)
		pebs_tb_trans(tb, e);
}

static void child_after_fork(struct emu_thr *parent)
{
	/* Only this thread survives in the child; drop the others (their data
	 * belongs to the parent's streams). */
	emu_fp_child();
	for (unsigned i = 0; i < EMU_MAX_VCPUS; i++) {
		struct emu_thr *o = thr_by_vcpu[i];
		if (o && o != parent) {
			emu_fp_drop(o);
			emu_thr_free(o);
			thr_by_vcpu[i] = NULL;
		}
	}
	pid_t ppid = parent->pid, ptid = parent->tid;
	uint64_t now = emu_now(parent);
	const struct emu_tb *prev = parent->prev;
	unsigned vcpu = (unsigned)parent->vcpu;
	if (parent->have_ring)
		munmap(parent->map, parent->map_len);
	if (parent->raw_fd >= 0)
		close(parent->raw_fd);
	emu_fp_drop(parent);
	emu_thr_free(parent);
	thr_by_vcpu[vcpu] = NULL;
	emu.pid = getpid();
	struct emu_thr *t = emu_thr_new((int)vcpu, ppid, ptid, 1);
	if (!t)
		return;
	t->tbase = now;
	ptg_init(&t->g, &emu.ptg, t->buf, EMU_BUF_SIZE, now);
	btg_init(&t->b);
	emu_thr_start_records(t, 1);
	/* Resume like the parent: after the syscall, user mode comes back. */
	if (!emu.bts && !emu.pebs)
		ptg_begin(&t->g);
	t->prev = prev;
	if (emu_fp_attach(t) < 0) {
		emu_thr_free(t);
		return;
	}
	thr_by_vcpu[vcpu] = t;
	emu_box_sync(t);
}

static void on_syscall(qemu_plugin_id_t id, unsigned vcpu, int64_t num, uint64_t a1, uint64_t a2,
		       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
	struct emu_thr *t = thr_get(vcpu);
	if (!t)
		return;
	emu_fp_sync(t);
	t->sys_num = num;
	t->sys_args[0] = a1, t->sys_args[1] = a2, t->sys_args[2] = a3;
	t->sys_args[3] = a4, t->sys_args[4] = a5, t->sys_args[5] = a6;
	emu_sig_syscall(num, t->sys_args);
	if (!t->stopped)
		ptg_pgd(&t->g, 0, 0);
	switch (num) {
	case SYS_clone:
	case SYS_fork:
	case SYS_vfork:
	case 435: /* clone3 */
		clone_ptid = t->tid;
		clone_tsc = emu_now(t);
		emu_thr_flush(t, 1);
		emu_truth_flush(t);
		break;
	case SYS_execve:
	case SYS_execveat:
		/* a PSB+ ends the program's last region here: a decoder that
		 * decodes PSB to PSB finishes it before the exec's COMM */
		if (!emu.bts && !t->stopped)
			ptg_psb(&t->g, 0);
		emu_thr_flush(t, 2);
		emu_truth_flush(t);
		emu_exec_syscall(t, num, a1, a2, a3, a4, a5); /* follows it (exec.c) */
		break;
	case SYS_exit:
		emu_fp_detach(t);
		emu_thr_end(t, 1);
		thr_by_vcpu[vcpu] = NULL;
		break;
	case SYS_rt_sigaction:
		if (a2 && a1 < 65) {
			const uint64_t *act =
			    (const uint64_t *)(uintptr_t)(a2 + (uint64_t)emu.guest_base);
			uint64_t h = act[0];
			emu.handlers[a1] = h > 1 ? h : 0; /* SIG_DFL 0, SIG_IGN 1 */
			emu_sig_action((int)a1, act);
		}
		break;
	default:
		if (t->g.len >= 4096)
			emu_thr_flush(t, 1);
		break;
	}
	if (num != SYS_exit)
		emu_box_sync(t);
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu, int64_t num, int64_t ret)
{
	struct emu_thr *t = thr_get(vcpu);
	if (!t || num != t->sys_num)
		return;
	emu_fp_sync(t);
	switch (num) {
	case SYS_fork:
	case SYS_vfork:
		if (ret == 0)
			child_after_fork(t);
		break;
	case SYS_clone:
	case 435: /* clone3 */
		if (ret == 0 && emu_sys_forked(t, num == 435))
			child_after_fork(t);
		break;
	case SYS_mmap:
		if (ret > 0 && (uint64_t)ret < (uint64_t)-4096 && (t->sys_args[2] & PROT_EXEC)) {
			char path[4096];
			emu_sys_mmapped(t, (uint64_t)ret, path, sizeof(path), 0);
			emu_jit_map((uint64_t)ret, t->sys_args[1], path);
		}
		break;
	case SYS_mprotect:
		if (ret == 0 && (t->sys_args[2] & PROT_EXEC) &&
		    !emu_jit_protect(t->sys_args[0], t->sys_args[1]))
			emu_sys_mprotected(t);
		break;
	default:
		break;
	}
	t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL; /* a fork replaced it */
	if (t && emu.pebs)
		pebs_syscall_ret(t, num, ret);
	if (t)
		emu_box_sync(t);
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	emu_jit_finish();
	emu_fp_stop();
	for (unsigned i = 0; i < EMU_MAX_VCPUS; i++) {
		struct emu_thr *t = thr_by_vcpu[i];
		if (t) {
			emu_fp_detach(t);
			emu_thr_end(t, 1);
			thr_by_vcpu[i] = NULL;
		}
	}
	if (emu.truth_fd >= 0)
		close(emu.truth_fd);
	emu.truth_fd = -1;
}

/* The kernel's address filter syntax, ';'-separated (QEMU splits plugin
 * arguments at ','): "filter|stop|tracestop OFF/SIZE[@PATH]".  With a
 * PATH, OFF is a file offset and the range becomes active when that file
 * is mapped executable; without, OFF is a guest address. */
static int parse_filters(const char *spec)
{
	char *copy = strdup(spec), *save = NULL;
	if (!copy)
		return -1;
	int r = 0;
	for (char *it = strtok_r(copy, ";", &save); it; it = strtok_r(NULL, ";", &save)) {
		while (*it == ' ')
			it++;
		if (!*it)
			continue;
		if (emu.nfilt == EMU_MAX_FILTERS) {
			r = -1;
			break;
		}
		struct emu_filter *f = &emu.filt[emu.nfilt];
		char kind[16];
		int used = 0;
		if (sscanf(it, "%15s %n", kind, &used) != 1) {
			r = -1;
			break;
		}
		if (!strcmp(kind, "filter"))
			f->cfg = 1;
		else if (!strcmp(kind, "stop") || !strcmp(kind, "tracestop"))
			f->cfg = 2;
		else {
			r = -1;
			break;
		}
		char *end;
		f->off = strtoull(it + used, &end, 0);
		if (*end != '/') {
			r = -1;
			break;
		}
		f->size = strtoull(end + 1, &end, 0);
		if (!f->size) {
			r = -1;
			break;
		}
		if (*end == '@') {
			snprintf(f->path, sizeof(f->path), "%s", end + 1);
		} else if (*end) {
			r = -1;
			break;
		} else {
			f->a = f->off;
			f->b = f->off + f->size - 1;
			f->active = 1;
		}
		if (f->cfg == 1)
			emu.have_filter_ranges = 1;
		emu.nfilt++;
	}
	free(copy);
	return r;
}

void emu_filter_mapped(const char *path, uint64_t addr, uint64_t len, uint64_t pgoff)
{
	for (int i = 0; i < emu.nfilt; i++) {
		struct emu_filter *f = &emu.filt[i];
		if (!f->path[0] || strcmp(f->path, path))
			continue;
		if (f->off < pgoff || f->off >= pgoff + len)
			continue;
		f->a = addr + (f->off - pgoff);
		f->b = f->a + f->size - 1;
		f->active = 1;
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	if (info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "hwt-pt-plugin: needs qemu-x86_64 (user mode), not %s\n",
			info->target_name);
		return -1;
	}
	memset(&emu, 0, sizeof(emu));
	emu.announce_fd = -1;
	emu.truth_fd = -1;
	emu.ptg.tsc = 1;
	emu.ptg.mtc = 1;
	emu.ptg.mtc_period = 3;
	emu.ptg.psb_period = 3;
	emu.ptg.branch = 1;
	emu.aux_size = 4 << 20;
	emu.data_size = 512 << 10;
	emu.flush_at = 64 << 10;
	emu.tsc0 = 1000000;
	emu.pid = getpid();
	/* HWT_EMU_ENCODER=sync|ref|thread|inline|none: the encoder=... default */
	const char *enc = getenv("HWT_EMU_ENCODER");
	if (!enc || !*enc)
		enc = "sync";
	emu.none = !strcmp(enc, "none");
	emu.sync = !strcmp(enc, "sync") || !strcmp(enc, "ref") || emu.none;
	emu.ref = !strcmp(enc, "ref");
	emu.encoder_inline = !strcmp(enc, "inline");
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "hwt-pt-plugin: bad argument '%s' (want name=value)\n",
				argv[i]);
			return -1;
		}
		*eq = 0;
		const char *k = argv[i], *v = eq + 1;
		int pa;
		unsigned long long n = strtoull(v, NULL, 0);
		if (emu_stream_arg(k, v))
			;
		else if (!strcmp(k, "fmt") &&
			 (!strcmp(v, "pt") || !strcmp(v, "bts") || !strcmp(v, "pebs"))) {
			emu.bts = !strcmp(v, "bts");
			emu.pebs = !strcmp(v, "pebs");
		} else if ((pa = pebs_arg(k, v)) != 0) {
			if (pa < 0) /* pebs.c said what */
				return -1;
		} else if (!strcmp(k, "encoder") &&
			   (!strcmp(v, "thread") || !strcmp(v, "inline") || !strcmp(v, "sync") ||
			    !strcmp(v, "ref") || !strcmp(v, "none"))) {
			emu.none = !strcmp(v, "none");
			emu.sync = !strcmp(v, "sync") || !strcmp(v, "ref") || emu.none;
			emu.ref = !strcmp(v, "ref");
			emu.encoder_inline = !strcmp(v, "inline");
		} else if (!strcmp(k, "tsc"))
			emu.ptg.tsc = !!n;
		else if (!strcmp(k, "mtc"))
			emu.ptg.mtc = !!n;
		else if (!strcmp(k, "mtc_period"))
			emu.ptg.mtc_period = (unsigned)n & 15;
		else if (!strcmp(k, "cyc"))
			emu.ptg.cyc = !!n;
		else if (!strcmp(k, "cyc_thresh"))
			emu.ptg.cyc_thresh = (unsigned)n & 15;
		else if (!strcmp(k, "psb_period"))
			emu.ptg.psb_period = (unsigned)n & 15;
		else if (!strcmp(k, "noretcomp"))
			emu.ptg.noretcomp = !!n;
		else if (!strcmp(k, "branch"))
			emu.ptg.branch = !!n;
		else if (!strcmp(k, "filter")) {
			if (parse_filters(v) < 0) {
				fprintf(stderr, "hwt-pt-plugin: bad filter '%s'\n", v);
				return -1;
			}
		} else {
			int x = emu_exec_arg(k, v); /* exec.c: following exec() */
			if (x <= 0) {
				fprintf(stderr, "hwt-pt-plugin: %s argument '%s'\n",
					x ? "bad value of" : "unknown", k);
				return -1;
			}
		}
	}
	if (emu_stream_check("hwt-pt-plugin") < 0)
		return -1;
	if (emu.flush_at > emu.aux_size / 4)
		emu.flush_at = emu.aux_size / 4;
	if (emu.snapshot && emu.flush_at > 4096)
		emu.flush_at = 4096;
	if (!emu.ptg.mtc && !emu.ptg.tsc)
		emu.ptg.mtc = 0;
	if (emu.bts) {
		if (emu.nfilt) {
			fprintf(stderr, "hwt-pt-plugin: fmt=bts has no address filters\n");
			return -1;
		}
		emu.ptg.mtc = 0; /* the PT generator writes nothing */
		emu.ptg.tsc = 0;
	}
	if (emu.pebs) {
		if (emu.nfilt) {
			fprintf(stderr, "hwt-pt-plugin: fmt=pebs has no address filters\n");
			return -1;
		}
		emu.ptg.mtc = 0;
		emu.ptg.tsc = 0;
		emu.sync = 1; /* no block log: the clock only, on the thread */
		if (pebs_setup() < 0)
			return -1;
	}
	/* tb_fast's transitions exist only in plain branch tracing */
	emu.fast =
	    !emu.ref && !emu.nfilt && !emu.bts && !emu.pebs && !emu.ptg.cyc && emu.ptg.branch;
	if (emu_open_outputs("hwt-pt-plugin") < 0)
		return -1;
	emu_exec_install(EM_X86_64);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
