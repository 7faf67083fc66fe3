/* emu/aarch64/spe.c - hwt's emulated Arm SPE (Statistical Profiling
 * Extension): the SPE mode of the qemu-aarch64 plugin (hwt-etm-plugin.so
 * with the argument spe=1; plugin.c hands its callbacks over to this file).
 *
 * Usage: qemu-aarch64 -plugin hwt-etm-plugin.so,spe=1,ARG=VAL,... PROG
 *   dir= fd= raw= truth= aux= data= snapshot= st= trid= sbid= sysroot=
 *                        as the ETM mode (plugin.c)
 *   spe_period=N         sampling interval in operations (default 1024)
 *   spe_jitter=0|1       add a pseudo-random 0..255 to each interval
 *   spe_ld= spe_st= spe_br=  type filters (perf's load_filter,
 *                        store_filter, branch_filter): when any is set, only
 *                        operations of a set type are recorded
 *   spe_minlat=N         record only operations of total latency >= N
 *   spe_evfilt=MASK      record only operations with all these event bits
 *   spe_ts=0|1           Timestamp packets (perf's ts_enable; default 1)
 *   l1_size= llc_size= mem_lat= ...  the cache model's options
 *                        (emu/cache_model.h)
 *
 * Sampling: every guest instruction is one operation.  A per-thread
 * counter counts operations down; the operation where it reaches zero is
 * sampled and the counter reloads with the interval (plus jitter).  At
 * most one operation per translated block is in flight (a sample due while
 * one is in flight is a collision and is dropped, as hardware does).  The
 * sampled operation completes when the thread's next block starts (its
 * branch outcome is known then), at a system call or at the thread's end;
 * its record (spegen.h) goes into the thread's AUX buffer if it passes the
 * filters.  Data addresses come from QEMU's memory callbacks, registered
 * on every instruction; every access also goes through the thread's cache
 * and TLB model (emu/cache_model.h, one per thread) so that the model sees
 * the whole access stream, and every branch through a predictor model
 * (2-bit counters, 4096 entries; last-target table for indirect branches;
 * 16-entry return stack) so that mispredictions come from the real branch
 * history.  Latencies in cycles: issue 1; translation 1, or 1 + the
 * model's page walk on a TLB miss; total = issue + the model's latency (its
 * level's, plus the walk); a branch 1, or 12 when mispredicted.  Events:
 * L1D access always, refill and LLC access on an L1 miss, LLC miss when
 * memory had the line, TLB access always, walk on a TLB miss.  Time: the
 * thread's instruction count (1 instruction = 1 tick), as the ETM mode.
 *
 * Truth (truth=F): one line per sampled operation,
 *   tid time pc op addr total issue xlat events [filtered]
 * (tab-separated; numbers hex with 0x except tid; op: ld, st, b, bcond,
 * bind, other; events: the Events packet's bits; "filtered": not recorded).
 *
 * exec(): followed as in the ETM mode (../exec.c): the new program's
 * samples go on in the thread's stream after its COMM and MMAP2 records.
 *
 * Ownership: per-thread state (struct spe_thr) is owned by its thread; at
 * fork the child frees the other threads'.  Translated-block descriptors
 * are never freed (threads keep pointers, as in the ETM mode).
 */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../cache_model.h"
#include "../emu.h"
#include "../qemu_plugin_api.h"
#include "spe.h"
#include "spegen.h"

enum {
	A64_CLONE = 220,
	A64_CLONE3 = 435,
	A64_EXECVE = 221,
	A64_EXECVEAT = 281,
	A64_EXIT = 93,
	A64_MMAP = 222,
	A64_MPROTECT = 226,
	A64_BRK = 214,
};

/* instruction kinds */
enum {
	K_OTHER,
	K_LD,	 /* load (GP) */
	K_ST,	 /* store (GP) */
	K_BCOND, /* conditional direct branch */
	K_B,	 /* unconditional direct branch */
	K_BL,	 /* direct call */
	K_BR,	 /* indirect branch */
	K_BLR,	 /* indirect call */
	K_RET,
	K_EXC, /* SVC, BRK, ... */
};

struct spe_insn {
	uint64_t pc, target; /* target: direct branches */
	uint8_t kind;	     /* K_* */
	uint8_t ldst;	     /* Operation payload bits of a load/store */
};

struct spe_tb {
	uint64_t start, next; /* next: after the last instruction */
	uint32_t n;
	struct spe_insn in[];
};

struct spe_cfg {
	uint64_t period;
	int jitter, ld, st, br, ts;
	uint32_t minlat, evfilt;
};
static struct spe_cfg scfg = {.period = 1024, .ts = 1};
static int spe_on;
static struct cache_model_config mcfg;
static int mcfg_init;

#define BIM_ENTRIES 4096 /* 2-bit counters */
#define BTB_ENTRIES 1024
#define RAS_DEPTH 16

struct spe_thr {
	uint64_t countdown;
	uint64_t rng;
	const struct spe_insn *pend; /* sampled, in flight */
	int have_addr;
	uint64_t addr;
	uint32_t mem_events, mem_lat, mem_xlat;
	uint64_t collisions;
	struct cache_model *cm; /* the thread's cache / TLB model */
	/* predictor */
	uint8_t bim[BIM_ENTRIES];
	uint64_t btb[BTB_ENTRIES];
	uint64_t ras[RAS_DEPTH];
	unsigned ras_top;
};

static struct emu_thr *thr_by_vcpu[EMU_MAX_VCPUS];
static struct spe_thr *spe_by_vcpu[EMU_MAX_VCPUS];
static const struct spe_tb *prev_by_vcpu[EMU_MAX_VCPUS];
static uint64_t brk_start, brk_end; /* the heap, for data mappings */
static volatile pid_t clone_ptid;
static volatile uint64_t clone_tsc;
static int first_thread_done;
static csh scs;

int spe_arg(const char *k, const char *v)
{
	unsigned long long n = strtoull(v, NULL, 0);
	if (!mcfg_init) {
		cache_model_config_init(&mcfg);
		mcfg_init = 1;
	}
	int m = cache_model_config_set(&mcfg, k, v);
	if (m < 0)
		fprintf(stderr, "hwt-etm-plugin: bad cache model value %s=%s (ignored)\n", k, v);
	if (m)
		return 1;
	if (!strcmp(k, "spe"))
		spe_on = !!n;
	else if (!strcmp(k, "spe_period"))
		scfg.period = n ? n : 1;
	else if (!strcmp(k, "spe_jitter"))
		scfg.jitter = !!n;
	else if (!strcmp(k, "spe_ld"))
		scfg.ld = !!n;
	else if (!strcmp(k, "spe_st"))
		scfg.st = !!n;
	else if (!strcmp(k, "spe_br"))
		scfg.br = !!n;
	else if (!strcmp(k, "spe_ts"))
		scfg.ts = !!n;
	else if (!strcmp(k, "spe_minlat"))
		scfg.minlat = (uint32_t)n;
	else if (!strcmp(k, "spe_evfilt"))
		scfg.evfilt = (uint32_t)n;
	else
		return 0;
	return 1;
}

int spe_enabled(void)
{
	return spe_on;
}

static uint64_t next_rand(struct spe_thr *x)
{
	x->rng ^= x->rng << 13;
	x->rng ^= x->rng >> 7;
	x->rng ^= x->rng << 17;
	return x->rng;
}

static uint64_t reload(struct spe_thr *x)
{
	return scfg.period + (scfg.jitter ? (next_rand(x) & 0xff) : 0);
}

static struct spe_thr *spe_new(unsigned vcpu)
{
	struct spe_thr *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	if (!mcfg_init) {
		cache_model_config_init(&mcfg);
		mcfg_init = 1;
	}
	x->cm = cache_model_alloc(&mcfg, NULL, 0);
	if (!x->cm) {
		free(x);
		return NULL;
	}
	x->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)vcpu << 32);
	x->countdown = reload(x);
	memset(x->bim, 1, sizeof(x->bim)); /* weakly not taken */
	return x;
}

static void spe_thr_free(struct spe_thr *x)
{
	if (x)
		cache_model_free(x->cm);
	free(x);
}

/* ---- one access through the cache / TLB model ---- */
static void mem_model(struct spe_thr *x, uint64_t va, int store, uint32_t *events, uint32_t *lat,
		      uint32_t *xlat)
{
	struct cache_model_result r;
	cache_model_access(x->cm, va, store, &r);
	uint32_t ev = SPEG_EV_L1D_ACCESS | SPEG_EV_TLB_ACCESS;
	*xlat = 1;
	if (!r.tlb_hit) {
		ev |= SPEG_EV_TLB_WALK;
		*xlat += cache_model_get_config(x->cm)->tlb_walk_latency;
	}
	if (r.level != CACHE_MODEL_L1)
		ev |= SPEG_EV_L1D_REFILL | SPEG_EV_LLC_ACCESS;
	if (r.level == CACHE_MODEL_MEM)
		ev |= SPEG_EV_LLC_MISS;
	*lat = r.latency;
	*events = ev;
}

/* ---- predictor: outcome of the branch ending TB p, control now at to ---- */
struct br_out {
	int taken, mispred;
};

static struct br_out branch_outcome(struct spe_thr *x, const struct spe_tb *p, uint64_t to)
{
	struct br_out o = {1, 0};
	const struct spe_insn *b = &p->in[p->n - 1];
	switch (b->kind) {
	case K_BCOND: {
		uint8_t *c = &x->bim[(b->pc >> 2) % BIM_ENTRIES];
		o.taken = to == b->target && to != p->next;
		o.mispred = (*c >= 2) != o.taken;
		if (o.taken && *c < 3)
			(*c)++;
		else if (!o.taken && *c > 0)
			(*c)--;
		break;
	}
	case K_BL:
		x->ras[x->ras_top++ % RAS_DEPTH] = p->next;
		break;
	case K_BLR:
		x->ras[x->ras_top++ % RAS_DEPTH] = p->next;
		/* fall through */
	case K_BR: {
		uint64_t *e = &x->btb[(b->pc >> 2) % BTB_ENTRIES];
		o.mispred = *e != to;
		*e = to;
		break;
	}
	case K_RET: {
		uint64_t pred = x->ras_top ? x->ras[--x->ras_top % RAS_DEPTH] : 0;
		o.mispred = pred != to;
		break;
	}
	default:
		break;
	}
	return o;
}

/* ---- records ---- */
static const char *op_name(const struct spe_insn *in, int have_addr)
{
	switch (in->kind) {
	case K_LD:
	case K_ST:
		if (have_addr)
			return in->ldst & SPEG_LDST_ST ? "st" : "ld";
		return "other";
	case K_BCOND:
		return "bcond";
	case K_B:
	case K_BL:
		return "b";
	case K_BR:
	case K_BLR:
	case K_RET:
		return "bind";
	default:
		return "other";
	}
}

static void truth_line(struct emu_thr *t, const struct speg_rec *r, const char *op, uint64_t now,
		       int filtered)
{
	if (emu.truth_fd < 0)
		return;
	if (t->tlen > EMU_TRUTH_BUF - 256)
		emu_truth_flush(t);
	int n =
	    snprintf(t->tbuf + t->tlen, 256, "%d\t%#llx\t%#llx\t%s\t%#llx\t%#x\t%#x\t%#x\t%#x%s\n",
		     (int)t->tid, (unsigned long long)now, (unsigned long long)r->pc, op,
		     (unsigned long long)(r->have_addr ? r->addr : 0), r->lat_total, r->lat_issue,
		     r->lat_xlat, r->events, filtered ? "\tfiltered" : "");
	if (n > 0 && n < 256)
		t->tlen += (size_t)n;
	emu_box_sync(t);
}

/* The in-flight sample completes; control is now at `to` (0: unknown, at
 * a system call or the thread's end); o: the outcome of its branch. */
static void complete(struct emu_thr *t, struct spe_thr *x, uint64_t to, const struct br_out *o)
{
	const struct spe_insn *in = x->pend;
	x->pend = NULL;
	struct speg_rec r;
	memset(&r, 0, sizeof(r));
	r.pc = in->pc;
	r.lat_issue = 1;
	r.events = SPEG_EV_RETIRED;
	int type_ok = !(scfg.ld || scfg.st || scfg.br);
	switch (in->kind) {
	case K_LD:
	case K_ST:
		if (!x->have_addr) { /* no access (e.g. a faulting or elided one) */
			r.op_class = SPEG_OP_OTHER;
			r.lat_total = 1;
			break;
		}
		r.op_class = SPEG_OP_LDST;
		r.op_bits = in->ldst;
		r.have_addr = 1;
		r.addr = x->addr;
		r.events |= x->mem_events;
		r.lat_xlat = x->mem_xlat;
		r.lat_total = r.lat_issue + x->mem_lat; /* the model's latency has the walk */
		if (in->ldst & SPEG_LDST_ST ? scfg.st : scfg.ld)
			type_ok = 1;
		break;
	case K_BCOND:
	case K_B:
	case K_BL:
	case K_BR:
	case K_BLR:
	case K_RET:
		r.op_class = SPEG_OP_BRANCH;
		r.op_bits = in->kind == K_BCOND ? SPEG_BR_COND : 0;
		if (in->kind == K_BR || in->kind == K_BLR || in->kind == K_RET)
			r.op_bits |= SPEG_BR_INDIRECT;
		r.have_addr = 1;
		if (in->kind == K_BCOND || in->kind == K_B || in->kind == K_BL)
			r.addr = in->target;
		else
			r.addr = to;
		if (o && !o->taken)
			r.events |= SPEG_EV_NOT_TAKEN;
		if (o && o->mispred)
			r.events |= SPEG_EV_MISPRED;
		r.lat_total = r.lat_issue + (o && o->mispred ? 11 : 0);
		if (scfg.br)
			type_ok = 1;
		if (!o && in->kind != K_BCOND && in->kind != K_B && in->kind != K_BL)
			r.have_addr = 0; /* target unknown */
		break;
	case K_EXC:
		r.events |= SPEG_EV_EXCEPTION;
		r.lat_total = 1;
		break;
	default:
		r.lat_total = 1;
		break;
	}
	x->have_addr = 0;
	uint64_t now = emu_now(t);
	r.have_ts = scfg.ts;
	r.ts = now;
	int keep = type_ok && r.lat_total >= scfg.minlat && (r.events & scfg.evfilt) == scfg.evfilt;
	truth_line(t, &r, op_name(in, r.op_class == SPEG_OP_LDST), now, !keep);
	if (!keep)
		return;
	if (t->g.cap - t->g.len < SPEG_MAX_RECORD)
		emu_thr_flush(t, 2);
	if (t->g.cap - t->g.len < SPEG_MAX_RECORD)
		return;
	t->g.len += speg_record(t->g.buf + t->g.len, &r);
	emu_thr_flush(t, 0);
	emu_box_sync(t);
}

/* ---- threads ---- */
static struct emu_thr *thr_get(unsigned vcpu)
{
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	if (t || vcpu >= EMU_MAX_VCPUS)
		return t;
	int main_thread = !first_thread_done;
	pid_t pid = getpid();
	struct spe_thr *x = spe_new(vcpu);
	if (!x)
		return NULL;
	t = emu_thr_new((int)vcpu, main_thread ? 0 : pid, main_thread ? 0 : clone_ptid, 0);
	if (!t) {
		spe_thr_free(x);
		return NULL;
	}
	t->tbase = main_thread ? emu.tsc0 : clone_tsc;
	ptg_init(&t->g, &emu.ptg, t->buf, EMU_BUF_SIZE, t->tbase);
	emu_thr_announce(t, main_thread);
	first_thread_done = 1;
	spe_by_vcpu[vcpu] = x;
	prev_by_vcpu[vcpu] = NULL;
	thr_by_vcpu[vcpu] = t;
	return t;
}

static void tb_exec(unsigned vcpu, void *udata)
{
	const struct spe_tb *cur = udata;
	struct emu_thr *t = vcpu < EMU_MAX_VCPUS ? thr_by_vcpu[vcpu] : NULL;
	if (__builtin_expect(!t, 0)) {
		t = thr_get(vcpu);
		if (!t)
			return;
	}
	struct spe_thr *x = spe_by_vcpu[vcpu];
	const struct spe_tb *p = prev_by_vcpu[vcpu];
	prev_by_vcpu[vcpu] = cur;
	if (p) {
		struct br_out o = branch_outcome(x, p, cur->start);
		if (x->pend)
			complete(t, x, cur->start, x->pend == &p->in[p->n - 1] ? &o : NULL);
	} else if (x->pend) {
		complete(t, x, cur->start, NULL);
	}
	t->icount += cur->n;
	if (__builtin_expect(x->countdown <= cur->n, 0)) {
		uint64_t k = x->countdown - 1;
		x->pend = &cur->in[k];
		x->have_addr = 0;
		uint64_t rest = cur->n - 1 - k, next = reload(x);
		while (next <= rest) { /* due again before this one completes */
			x->collisions++;
			rest -= next;
			next = reload(x);
		}
		x->countdown = next - rest;
	} else {
		x->countdown -= cur->n;
	}
}

static void mem_cb(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct spe_thr *x = vcpu < EMU_MAX_VCPUS ? spe_by_vcpu[vcpu] : NULL;
	if (!x)
		return;
	uint32_t ev, lat, xlat;
	mem_model(x, vaddr, qemu_plugin_mem_is_store(info), &ev, &lat, &xlat);
	if (x->pend == udata && !x->have_addr) {
		unsigned sz = 1u << qemu_plugin_mem_size_shift(info);
		x->have_addr = 1;
		x->addr = vaddr;
		x->mem_events = ev | (vaddr & (sz - 1) ? SPEG_EV_MISALIGNED : 0);
		x->mem_lat = lat;
		x->mem_xlat = xlat;
	}
}

/* ---- translation: classify every instruction once ---- */
static int has_prefix(const char *m, const char *const *v)
{
	for (; *v; v++)
		if (!strncmp(m, *v, strlen(*v)))
			return 1;
	return 0;
}

static void classify(const cs_insn *ci, struct spe_insn *in)
{
	const cs_arm64 *a = &ci->detail->arm64;
	const char *m = ci->mnemonic;
	in->kind = K_OTHER;
	in->ldst = 0;
	switch (ci->id) {
	case ARM64_INS_B:
		if (a->op_count && a->operands[a->op_count - 1].type == ARM64_OP_IMM)
			in->target = (uint64_t)a->operands[a->op_count - 1].imm;
		in->kind = a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL && a->cc != ARM64_CC_NV
			       ? K_BCOND
			       : K_B;
		return;
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		if (a->op_count && a->operands[a->op_count - 1].type == ARM64_OP_IMM)
			in->target = (uint64_t)a->operands[a->op_count - 1].imm;
		in->kind = K_BCOND;
		return;
	case ARM64_INS_BL:
		if (a->op_count && a->operands[0].type == ARM64_OP_IMM)
			in->target = (uint64_t)a->operands[0].imm;
		in->kind = K_BL;
		return;
	case ARM64_INS_BR:
		in->kind = K_BR;
		return;
	case ARM64_INS_BLR:
		in->kind = K_BLR;
		return;
	case ARM64_INS_RET:
		in->kind = K_RET;
		return;
	case ARM64_INS_SVC:
	case ARM64_INS_HVC:
	case ARM64_INS_SMC:
	case ARM64_INS_BRK:
	case ARM64_INS_HLT:
		in->kind = K_EXC;
		return;
	default:
		break;
	}
	static const char *const atomics[] = {"cas",	"swp",	  "ldadd",  "ldclr",  "ldeor",
					      "ldset",	"ldsmax", "ldsmin", "ldumax", "ldumin",
					      "stadd",	"stclr",  "steor",  "stset",  "stsmax",
					      "stsmin", "stumax", "stumin", NULL};
	static const char *const excl[] = {"ldxr",  "ldaxr", "ldxp",  "ldaxp", "stxr",
					   "stlxr", "stxp",  "stlxp", NULL};
	static const char *const acqrel[] = {"ldar", "ldapr", "stlr", "stllr", "ldlar", NULL};
	int ld = m[0] == 'l' && m[1] == 'd';
	int st = m[0] == 's' && m[1] == 't';
	int at = has_prefix(m, atomics);
	if (!ld && !st && !at)
		return;
	if (at) {
		in->ldst = SPEG_LDST_EXT | SPEG_LDST_AT | SPEG_LDST_ST;
	} else if (has_prefix(m, excl)) {
		in->ldst = SPEG_LDST_EXT | SPEG_LDST_EXCL | (st ? SPEG_LDST_ST : 0);
		if (m[2] == 'a' || m[2] == 'l')
			in->ldst |= SPEG_LDST_AR;
	} else if (has_prefix(m, acqrel)) {
		in->ldst = SPEG_LDST_EXT | SPEG_LDST_AR | (st ? SPEG_LDST_ST : 0);
	} else {
		int simd = 0;
		if (a->op_count && a->operands[0].type == ARM64_OP_REG) {
			const char *rn = cs_reg_name(scs, a->operands[0].reg);
			simd = rn &&
			       (rn[0] == 'q' || rn[0] == 'd' || rn[0] == 's' || rn[0] == 'h' ||
				rn[0] == 'b' || rn[0] == 'v') &&
			       strcmp(rn, "sp");
		} else if (a->op_count && a->operands[0].type == ARM64_OP_FP) {
			simd = 1;
		}
		if (!strncmp(m, "ld1", 3) || !strncmp(m, "ld2", 3) || !strncmp(m, "ld3", 3) ||
		    !strncmp(m, "ld4", 3) || !strncmp(m, "st1", 3) || !strncmp(m, "st2", 3) ||
		    !strncmp(m, "st3", 3) || !strncmp(m, "st4", 3))
			simd = 1;
		in->ldst = (simd ? SPEG_LDST_AT : 0) | (st ? SPEG_LDST_ST : 0);
	}
	in->kind = in->ldst & SPEG_LDST_ST ? K_ST : K_LD;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (!n)
		return;
	struct spe_tb *e = calloc(1, sizeof(*e) + n * sizeof(e->in[0]));
	if (!e)
		return;
	e->start = qemu_plugin_tb_vaddr(tb);
	e->n = (uint32_t)n;
	if (!emu.guest_base) {
		struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
		void *h = qemu_plugin_insn_haddr(first);
		if (h)
			emu.guest_base = (int64_t)((uintptr_t)h - qemu_plugin_insn_vaddr(first));
	}
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
		struct spe_insn *in = &e->in[i];
		in->pc = qemu_plugin_insn_vaddr(qi);
		size_t sz = qemu_plugin_insn_size(qi);
		if (i + 1 == n)
			e->next = in->pc + sz;
		cs_insn *ci = NULL;
		if (cs_disasm(scs, qemu_plugin_insn_data(qi), sz, in->pc, 1, &ci) == 1)
			classify(ci, in);
		if (ci)
			cs_free(ci, 1);
		qemu_plugin_register_vcpu_mem_cb(qi, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, in);
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, e);
}

/* ---- system calls, fork, exit ---- */
static void finish_pending(struct emu_thr *t, struct spe_thr *x)
{
	if (x->pend)
		complete(t, x, 0, NULL);
}

static void child_after_fork(struct emu_thr *parent)
{
	for (unsigned i = 0; i < EMU_MAX_VCPUS; i++) {
		struct emu_thr *o = thr_by_vcpu[i];
		if (o && o != parent) {
			emu_thr_free(o);
			spe_thr_free(spe_by_vcpu[i]);
			thr_by_vcpu[i] = NULL;
			spe_by_vcpu[i] = NULL;
		}
	}
	pid_t ppid = parent->pid, ptid = parent->tid;
	uint64_t now = emu_now(parent);
	unsigned vcpu = (unsigned)parent->vcpu;
	struct spe_thr *x = spe_by_vcpu[vcpu]; /* the model and predictor carry over */
	if (parent->have_ring)
		munmap(parent->map, parent->map_len);
	if (parent->raw_fd >= 0)
		close(parent->raw_fd);
	emu_thr_free(parent);
	thr_by_vcpu[vcpu] = NULL;
	emu.pid = getpid();
	struct emu_thr *t = emu_thr_new((int)vcpu, ppid, ptid, 1);
	if (!t) {
		spe_thr_free(x);
		spe_by_vcpu[vcpu] = NULL;
		return;
	}
	t->tbase = now;
	ptg_init(&t->g, &emu.ptg, t->buf, EMU_BUF_SIZE, now);
	emu_thr_start_records(t, 1);
	thr_by_vcpu[vcpu] = t;
}

static void on_syscall(qemu_plugin_id_t id, unsigned vcpu, int64_t num, uint64_t a1, uint64_t a2,
		       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8)
{
	(void)id, (void)a7, (void)a8;
	struct emu_thr *t = thr_get(vcpu);
	if (!t)
		return;
	struct spe_thr *x = spe_by_vcpu[vcpu];
	t->sys_num = num;
	t->sys_args[0] = a1, t->sys_args[1] = a2, t->sys_args[2] = a3;
	t->sys_args[3] = a4, t->sys_args[4] = a5, t->sys_args[5] = a6;
	finish_pending(t, x);
	/* records before any sideband the call may write (mmap, fork, exit) */
	emu_thr_flush(t, 2);
	emu_truth_flush(t);
	switch (num) {
	case A64_CLONE:
	case A64_CLONE3:
		clone_ptid = t->tid;
		clone_tsc = emu_now(t);
		break;
	case A64_EXECVE:
	case A64_EXECVEAT:
		emu_exec_syscall(t, num, a1, a2, a3, a4, a5); /* follows it (../exec.c) */
		break;
	case A64_EXIT:
		emu_thr_end(t, 1);
		spe_thr_free(x);
		spe_by_vcpu[vcpu] = NULL;
		thr_by_vcpu[vcpu] = NULL;
		break;
	default:
		break;
	}
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned vcpu, int64_t num, int64_t ret)
{
	(void)id;
	struct emu_thr *t = thr_get(vcpu);
	if (!t || num != t->sys_num)
		return;
	switch (num) {
	case A64_CLONE:
	case A64_CLONE3:
		if (ret == 0 && emu_sys_forked(t, num == A64_CLONE3))
			child_after_fork(t);
		break;
	case A64_BRK: /* the heap grows: a data mapping "[heap]" (data objects) */
		if (!brk_start) {
			brk_start = brk_end = (uint64_t)ret;
		} else if ((uint64_t)ret > brk_end) {
			brk_end = (uint64_t)ret;
			emu_sb_mmap(t, brk_start, brk_end - brk_start, 0, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, "[heap]", -1);
		}
		break;
	case A64_MMAP: /* code and data mappings (data: for the samples' objects) */
		if (ret > 0 && (uint64_t)ret < (uint64_t)-4096) {
			char path[4096];
			emu_sys_mmapped(t, (uint64_t)ret, path, sizeof(path), 1);
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
	(void)id, (void)p;
	for (unsigned i = 0; i < EMU_MAX_VCPUS; i++) {
		struct emu_thr *t = thr_by_vcpu[i];
		if (t) {
			if (spe_by_vcpu[i])
				finish_pending(t, spe_by_vcpu[i]);
			emu_thr_end(t, 1);
			thr_by_vcpu[i] = NULL;
		}
	}
	if (emu.truth_fd >= 0)
		close(emu.truth_fd);
	emu.truth_fd = -1;
}

int spe_install(qemu_plugin_id_t id)
{
	if (!mcfg_init) {
		cache_model_config_init(&mcfg);
		mcfg_init = 1;
	}
	char why[256];
	struct cache_model *m = cache_model_alloc(&mcfg, why, sizeof(why));
	if (!m) {
		fprintf(stderr, "hwt-etm-plugin: cache model: %s\n", why);
		return -1;
	}
	cache_model_free(m);
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &scs) != CS_ERR_OK) {
		fprintf(stderr, "hwt-etm-plugin: Capstone cannot open its A64 decoder\n");
		return -1;
	}
	cs_option(scs, CS_OPT_DETAIL, CS_OPT_ON);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
