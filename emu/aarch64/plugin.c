/* emu/aarch64/plugin.c - hwt's emulated Arm CoreSight ETM (ETMv4
 * instruction trace of EL0 code): a qemu-aarch64 (user mode) TCG plugin,
 * built as hwt-etm-plugin.so with the x86 plugin's stream code
 * (emu/stream.c: rings, sideband, truth).
 *
 * Usage: qemu-aarch64 -L ROOT -plugin hwt-etm-plugin.so,ARG=VAL,... PROG
 *   dir=D fd=N raw=P truth=F aux= data= snapshot= st= trid= sbid=
 *                     as the PT plugin (emu/plugin.c)
 *   sysroot=ROOT      qemu's -L prefix (the interpreter's file)
 *   formatted=0|1     CoreSight frames (default) or raw ETMv4 bytes
 *   traceid=ID        trace ID of CPU 0 (CPU i: ID + 2 i), ncpu=N CPUs
 *   timestamp=0|1     Timestamp packets (at each synchronisation)
 *   sync=BYTES        periodic A-sync + Trace Info (default 4096)
 *   spe=1 spe_*=      the emulated Arm SPE instead of the ETM (spe.c)
 *
 * How control flow is seen: as in the PT plugin, every translated block
 * (TB) ends at its first branch, classified once at translation (lib-free:
 * Capstone's A64 decoder); a TB's start tells the previous TB's outcome.
 * Per branch one atom: E (taken, or any unconditional branch) or N; after
 * an indirect branch (BR, BLR, RET) the target address.  A syscall (SVC)
 * is an Exception packet (type Call, return address = SVC + 4); EL1 is not
 * traced, so user mode resumes with Trace On + Address with Context (a
 * signal handler's address when the kernel delivers one).  A transfer no
 * instruction explains is an IRQ-type exception at the next unexecuted
 * instruction.  Each AUX piece starts at an A-sync (decoders reset between
 * perf's buffers) and ends right after an N atom (blocks without a branch
 * since then change nothing; any other packet since then makes it wait),
 * so that no taken branch straddles two pieces: its branch sample needs
 * the range after it, which the decoder only emits at the next atom, and
 * decoders resolve exceptions and Trace On only at what follows them.  Time: one instruction = 1
 * tick.  exec()ed programs are followed in the same stream (../exec.c:
 * qemu-aarch64 re-executes itself, with its -L sysroot, on the new
 * program; plugin arguments nofollow=1 follow=GLOB xtsc= xstream= xcomm=).
 * Limits: no address filters, no cycle counts, no data trace.
 */
#include <capstone/capstone.h>
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

#include "../emu.h"
#include "../qemu_plugin_api.h"
#include "etmgen.h"
#include "spe.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct emu_global emu;

/* aarch64 Linux syscall numbers (the generic table) */
enum {
	A64_CLONE = 220,
	A64_CLONE3 = 435,
	A64_EXECVE = 221,
	A64_EXECVEAT = 281,
	A64_EXIT = 93,
	A64_RT_SIGACTION = 134,
	A64_MMAP = 222,
	A64_MPROTECT = 226,
};

/* Raw bytes per thread before a flush must happen even right after a
 * taken branch (which then has no branch sample in perf: its decoder
 * restarts at each buffer); pieces normally end after an N atom once
 * emu.flush_at bytes are there. */
#define ETM_RAW_CAP (1u << 20)
#define ETM_HARD_FLUSH (ETM_RAW_CAP - 8192)
#define ETM_OUT_CAP (ETM_RAW_CAP + ETM_RAW_CAP / 8)

struct etm_cfg {
	int formatted;
	unsigned traceid, ncpu;
	int timestamp;
	uint64_t sync_period;
};
static struct etm_cfg ecfg;

struct etm_thr {
	struct etmgen g;
	uint8_t raw[ETM_RAW_CAP];
	uint8_t out[ETM_OUT_CAP]; /* frames (or padded raw) for the AUX ring */
	unsigned id;
	int in_kernel; /* after an SVC: trace resumes with Trace On */
	int cut_ok;    /* the last P0 element was not a taken branch */
};

static struct emu_thr *thr_by_vcpu[EMU_MAX_VCPUS];
static struct etm_thr *etm_by_vcpu[EMU_MAX_VCPUS];
static volatile pid_t clone_ptid;
static volatile uint64_t clone_tsc;
static int first_thread_done;
static csh cs;

void emu_filter_mapped(const char *path, uint64_t addr, uint64_t len, uint64_t pgoff)
{
	(void)path, (void)addr, (void)len, (void)pgoff;
}

static int is_handler(uint64_t ip)
{
	for (int i = 1; i < 65; i++)
		if (emu.handlers[i] == ip)
			return 1;
	return 0;
}

/* Raw ETM bytes -> the thread's output buffer (frames or raw + padding)
 * -> the AUX ring. */
static void etm_out(struct emu_thr *t, struct etm_thr *x, int force)
{
	struct etmgen *g = &x->g;
	etg_flush_atoms(g);
	if (!g->len)
		return;
	size_t n;
	if (ecfg.formatted) {
		n = etg_frames(g->raw, g->len, x->id, t->g.buf, t->g.cap);
	} else {
		n = g->len;
		memcpy(t->g.buf, g->raw, n);
		while (n & 7)
			t->g.buf[n++] = 0x80; /* Context, no payload: unchanged */
	}
	t->g.len = n;
	g->len = 0;
	emu_thr_flush(t, force ? 2 : 1);
}

static struct etm_thr *etm_new(unsigned vcpu)
{
	struct etm_thr *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->g.raw = x->raw;
	x->g.cap = sizeof(x->raw);
	x->g.ts = ecfg.timestamp;
	x->id = ecfg.traceid + 2 * (vcpu % (ecfg.ncpu ? ecfg.ncpu : 1));
	return x;
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
	struct etm_thr *x = etm_new(vcpu);
	if (!x)
		return NULL;
	t = emu_thr_new((int)vcpu, main_thread ? 0 : pid, main_thread ? 0 : clone_ptid, 0);
	if (!t) {
		free(x);
		return NULL;
	}
	t->tbase = main_thread ? emu.tsc0 : clone_tsc;
	ptg_init(&t->g, &emu.ptg, x->out, ETM_OUT_CAP, t->tbase);
	emu_thr_announce(t, main_thread);
	first_thread_done = 1;
	etm_by_vcpu[vcpu] = x;
	thr_by_vcpu[vcpu] = t;
	return t;
}

/* Trace (re)starts at `to` after a gap. */
static void resume(struct emu_thr *t, struct etm_thr *x, uint64_t to)
{
	etg_trace_on(&x->g);
	etg_addr_ctxt(&x->g, to);
	x->in_kernel = 0;
	x->cut_ok = 0; /* decoders hold Trace On until the next atom */
	(void)t;
}

/* Control reached `to` without a branch explaining it: an asynchronous
 * exception at `from` (the next unexecuted instruction). */
static void async_to(struct emu_thr *t, struct etm_thr *x, uint64_t from, uint64_t to)
{
	emu_truth(t, from, to, 1);
	etg_exception(&x->g, ETG_EXC_IRQ, from);
	resume(t, x, to);
}

/* The branch at the end of p executed and control is now at `to`. */
static void transition(struct emu_thr *t, struct etm_thr *x, const struct emu_tb *p, uint64_t to)
{
	struct etmgen *g = &x->g;
	switch (p->cls) {
	case EMU_JCC:
		if (to == p->target && to != p->next) {
			emu_truth(t, p->last, to, 0);
			etg_atom(g, 1);
			x->cut_ok = 0;
		} else if (to == p->next) {
			etg_atom(g, 0);
			x->cut_ok = 1;
		} else {
			etg_atom(g, 0);
			async_to(t, x, p->next, to);
		}
		break;
	case EMU_JMP:
	case EMU_CALL:
		etg_atom(g, 1);
		if (to == p->target) {
			emu_truth(t, p->last, to, 0);
			x->cut_ok = 0;
		} else {
			emu_truth(t, p->last, p->target, 0);
			async_to(t, x, p->target, to);
		}
		break;
	case EMU_JMP_IND:
	case EMU_CALL_IND:
	case EMU_RET:
		emu_truth(t, p->last, to, 0);
		etg_atom(g, 1);
		etg_addr(g, to);
		x->cut_ok = 0;
		break;
	case EMU_KERNEL: /* an exception instruction without a syscall */
		async_to(t, x, p->next, to);
		break;
	default:
		/* a block without a branch: the range since the last atom is
		 * still open in the decoder, the cut state stays as it is */
		if (to != p->next && !(to >= p->start && to <= p->last))
			async_to(t, x, p->next, to);
		break;
	}
}

static void tb_exec(unsigned vcpu, void *udata)
{
	const struct emu_tb *cur = udata;
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	if (__builtin_expect(!t, 0)) {
		t = thr_get(vcpu);
		if (!t)
			return;
	}
	struct etm_thr *x = etm_by_vcpu[vcpu];
	const struct emu_tb *p = t->prev;
	t->prev = cur;
	uint64_t now = t->tbase + t->icount;
	t->icount += cur->n;
	uint64_t to = cur->start;
	if (!p) {
		etg_sync(&x->g, now);
		resume(t, x, to);
	} else if (x->in_kernel) {
		if (to != p->next && is_handler(to))
			emu_truth(t, p->next, to, 1);
		resume(t, x, to);
	} else {
		transition(t, x, p, to);
	}
	if (__builtin_expect(x->cut_ok && (x->g.len >= emu.flush_at || x->g.len >= ETM_HARD_FLUSH),
			     0)) {
		etm_out(t, x, 0);
		etg_sync(&x->g, now);
		etg_addr_ctxt(&x->g, to);
	} else if (__builtin_expect(x->g.since_sync >= ecfg.sync_period, 0)) {
		etg_sync(&x->g, now);
		etg_addr_ctxt(&x->g, to);
		x->cut_ok = 0;
	}
	if (__builtin_expect(x->g.len >= ETM_HARD_FLUSH + 4096, 0)) { /* no N for long */
		etm_out(t, x, 0);
		etg_sync(&x->g, now);
		etg_addr_ctxt(&x->g, to);
	}
}

static uint8_t classify(const cs_insn *in, uint64_t *target)
{
	const cs_arm64 *a = &in->detail->arm64;
	*target = 0;
	switch (in->id) {
	case ARM64_INS_B:
		if (a->op_count && a->operands[a->op_count - 1].type == ARM64_OP_IMM)
			*target = (uint64_t)a->operands[a->op_count - 1].imm;
		return a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL && a->cc != ARM64_CC_NV
			   ? EMU_JCC
			   : EMU_JMP;
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		if (a->op_count && a->operands[a->op_count - 1].type == ARM64_OP_IMM)
			*target = (uint64_t)a->operands[a->op_count - 1].imm;
		return EMU_JCC;
	case ARM64_INS_BL:
		if (a->op_count && a->operands[0].type == ARM64_OP_IMM)
			*target = (uint64_t)a->operands[0].imm;
		return EMU_CALL;
	case ARM64_INS_BR:
		return EMU_JMP_IND;
	case ARM64_INS_BLR:
		return EMU_CALL_IND;
	case ARM64_INS_RET:
		return EMU_RET;
	case ARM64_INS_SVC:
	case ARM64_INS_HVC:
	case ARM64_INS_SMC:
	case ARM64_INS_BRK:
	case ARM64_INS_HLT:
	case ARM64_INS_ERET:
		return EMU_KERNEL;
	default:
		return EMU_OTHER;
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (!n)
		return;
	struct emu_tb *e = calloc(1, sizeof(*e));
	if (!e)
		return;
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
	e->cls = EMU_OTHER;
	cs_insn *in = NULL;
	if (cs_disasm(cs, qemu_plugin_insn_data(last), sz, e->last, 1, &in) == 1) {
		uint64_t target;
		e->cls = classify(in, &target);
		e->target = target;
	}
	if (in)
		cs_free(in, 1);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, e);
}

static void child_after_fork(struct emu_thr *parent)
{
	for (unsigned i = 0; i < EMU_MAX_VCPUS; i++) {
		struct emu_thr *o = thr_by_vcpu[i];
		if (o && o != parent) {
			emu_thr_free(o); /* buf/tbuf may live in the stream's box */
			free(etm_by_vcpu[i]);
			thr_by_vcpu[i] = NULL;
			etm_by_vcpu[i] = NULL;
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
	emu_thr_free(parent);
	free(etm_by_vcpu[vcpu]);
	etm_by_vcpu[vcpu] = NULL;
	thr_by_vcpu[vcpu] = NULL;
	emu.pid = getpid();
	struct etm_thr *x = etm_new(vcpu);
	struct emu_thr *t = x ? emu_thr_new((int)vcpu, ppid, ptid, 1) : NULL;
	if (!t) {
		free(x);
		return;
	}
	t->tbase = now;
	ptg_init(&t->g, &emu.ptg, x->out, ETM_OUT_CAP, now);
	emu_thr_start_records(t, 1);
	/* like the parent: inside the syscall, user mode comes back next */
	etg_sync(&x->g, now);
	x->in_kernel = 1;
	t->prev = prev;
	etm_by_vcpu[vcpu] = x;
	thr_by_vcpu[vcpu] = t;
}

static void thr_end(unsigned vcpu, struct emu_thr *t)
{
	struct etm_thr *x = etm_by_vcpu[vcpu];
	if (x)
		etm_out(t, x, 1);
	emu_thr_end(t, 1);
}

static void on_syscall(qemu_plugin_id_t id, unsigned vcpu, int64_t num, uint64_t a1, uint64_t a2,
		       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
	struct emu_thr *t = thr_get(vcpu);
	if (!t)
		return;
	struct etm_thr *x = etm_by_vcpu[vcpu];
	t->sys_num = num;
	t->sys_args[0] = a1, t->sys_args[1] = a2, t->sys_args[2] = a3;
	t->sys_args[3] = a4, t->sys_args[4] = a5, t->sys_args[5] = a6;
	/* the SVC ends the previous block: the exception, then EL1 (not traced) */
	if (t->prev && !x->in_kernel) {
		etg_exception(&x->g, ETG_EXC_CALL, t->prev->next);
		x->in_kernel = 1;
		x->cut_ok = 0;
	}
	switch (num) {
	case A64_CLONE:
	case A64_CLONE3:
		clone_ptid = t->tid;
		clone_tsc = emu_now(t);
		etm_out(t, x, 1);
		etg_sync(&x->g, emu_now(t));
		emu_truth_flush(t);
		break;
	case A64_EXECVE:
	case A64_EXECVEAT:
		etm_out(t, x, 1);
		etg_sync(&x->g, emu_now(t));
		emu_truth_flush(t);
		emu_exec_syscall(t, num, a1, a2, a3, a4, a5); /* follows it (../exec.c) */
		break;
	case A64_EXIT:
		thr_end(vcpu, t);
		free(x);
		etm_by_vcpu[vcpu] = NULL;
		thr_by_vcpu[vcpu] = NULL;
		break;
	case A64_RT_SIGACTION:
		if (a2 && a1 < 65) {
			const uint64_t *act =
			    (const uint64_t *)(uintptr_t)(a2 + (uint64_t)emu.guest_base);
			uint64_t h = act[0];
			emu.handlers[a1] = h > 1 ? h : 0; /* SIG_DFL 0, SIG_IGN 1 */
		}
		break;
	default:
		break;
	}
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu, int64_t num, int64_t ret)
{
	struct emu_thr *t = thr_get(vcpu);
	if (!t || num != t->sys_num)
		return;
	switch (num) {
	case A64_CLONE:
	case A64_CLONE3:
		if (ret == 0 && emu_sys_forked(t, num == A64_CLONE3))
			child_after_fork(t);
		break;
	case A64_MMAP:
		if (ret > 0 && (uint64_t)ret < (uint64_t)-4096 && (t->sys_args[2] & PROT_EXEC)) {
			char path[4096];
			emu_sys_mmapped(t, (uint64_t)ret, path, sizeof(path), 0);
		}
		break;
	case A64_MPROTECT:
		if (ret == 0 && (t->sys_args[2] & PROT_EXEC))
			emu_sys_mprotected(t);
		break;
	default:
		break;
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	for (unsigned i = 0; i < EMU_MAX_VCPUS; i++) {
		struct emu_thr *t = thr_by_vcpu[i];
		if (t) {
			thr_end(i, t);
			thr_by_vcpu[i] = NULL;
		}
	}
	if (emu.truth_fd >= 0)
		close(emu.truth_fd);
	emu.truth_fd = -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	if (info->system_emulation || strcmp(info->target_name, "aarch64")) {
		fprintf(stderr, "hwt-etm-plugin: needs qemu-aarch64 (user mode), not %s\n",
			info->target_name);
		return -1;
	}
	memset(&emu, 0, sizeof(emu));
	emu.announce_fd = -1;
	emu.truth_fd = -1;
	emu.aux_size = 4 << 20;
	emu.data_size = 512 << 10;
	emu.flush_at = 64 << 10;
	emu.tsc0 = 1000000;
	emu.pid = getpid();
	ecfg.formatted = 1;
	ecfg.traceid = 0x10;
	ecfg.ncpu = 1;
	ecfg.sync_period = 4096;
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "hwt-etm-plugin: bad argument '%s' (want name=value)\n",
				argv[i]);
			return -1;
		}
		*eq = 0;
		const char *k = argv[i], *v = eq + 1;
		unsigned long long n = strtoull(v, NULL, 0);
		if (emu_stream_arg(k, v))
			;
		else if (!strcmp(k, "sysroot"))
			snprintf(emu.sysroot, sizeof(emu.sysroot), "%s", v);
		else if (!strcmp(k, "formatted"))
			ecfg.formatted = !!n;
		else if (!strcmp(k, "traceid"))
			ecfg.traceid = (unsigned)n & 0x7f;
		else if (!strcmp(k, "ncpu"))
			ecfg.ncpu = n ? (unsigned)n : 1;
		else if (!strcmp(k, "timestamp"))
			ecfg.timestamp = !!n;
		else if (!strcmp(k, "sync"))
			ecfg.sync_period = n < 256 ? 256 : n;
		else if (spe_arg(k, v))
			;
		else {
			int x = emu_exec_arg(k, v); /* ../exec.c: following exec() */
			if (x <= 0) {
				fprintf(stderr, "hwt-etm-plugin: %s argument '%s'\n",
					x ? "bad value of" : "unknown", k);
				return -1;
			}
		}
	}
	if (emu_stream_check("hwt-etm-plugin") < 0)
		return -1;
	/* frames take 16/15 of the raw bytes: keep a flushed piece within a
	 * quarter of the ring */
	if (emu.flush_at > emu.aux_size / 5)
		emu.flush_at = emu.aux_size / 5;
	if (emu.snapshot && emu.flush_at > 4096)
		emu.flush_at = 4096;
	if (!ecfg.formatted)
		emu.aux_flags = 0x100; /* PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW */
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &cs) != CS_ERR_OK) {
		fprintf(stderr, "hwt-etm-plugin: Capstone cannot open its A64 decoder\n");
		return -1;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (emu_open_outputs("hwt-etm-plugin") < 0)
		return -1;
	emu_exec_install(EM_AARCH64);
	if (spe_enabled()) /* the emulated SPE (spe.c) */
		return spe_install(id);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
