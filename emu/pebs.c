/* emu/pebs.c - the emulated Intel PEBS memory-sampling unit (plugin
 * argument fmt=pebs): perf's mem-loads (with a load-latency threshold,
 * ldlat) and mem-stores events, written as PERF_RECORD_SAMPLE records the
 * way perf record writes PEBS samples.
 *
 *   pebs=loads|stores  the event (default loads)
 *   ldlat=N            loads: only loads whose latency exceeds N cycles
 *                      count (MEM_TRANS_RETIRED.LOAD_LATENCY_GT_N; default 30)
 *   period=N           one sample every N counted accesses (default 1000)
 *   l1_size= l1_ways= line_size= l1_lat= llc_size= llc_ways= llc_lat=
 *   mem_lat= tlb_entries= tlb_ways= page_size= tlb_walk=
 *                      the cache model (cache_model.h)
 *
 * Every guest memory access (QEMU memory callback, loads and stores
 * alike) goes through the thread's cache model (its own L1D, LLC and
 * DTLB: one model per thread, created at its first access; a fork()ed
 * child starts cold).  Counted accesses (the event's kind, above the
 * threshold) decrement the period; when it runs out the access is
 * sampled: IP of the instruction (precise: the one that accessed), TID,
 * TIME (the thread's instruction clock at that instruction), ADDR,
 * WEIGHT (the model's latency, cycles) and DATA_SRC (perf's union
 * perf_mem_data_src: op load/store, mem_lvl + mem_lvl_num L1 / L3 / local
 * RAM, snoop none / miss, dtlb L1 hit or miss + walk), and with --truth
 * one line "tid<TAB>ip<TAB>addr<TAB>weight<TAB>data_src" (hex but weight).
 * An instruction with several accesses (push, movs) has several.
 * Data mappings for perf's and hwt's data-object views: MMAP2 records for
 * every non-executable mmap (MAP_STACK ones named "[stack]"), the brk heap
 * as "[heap]" as it grows, and the main thread's stack as "[stack]" (the
 * host mapping holding its first access: x86-64 programs start with a
 * stack access).
 * State: the configuration is set once at install; each thread's model
 * and counter hang off its struct emu_thr (unit, unit_free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cache_model.h"
#include "emu.h"
#include "qemu_plugin_api.h"
#include "hwt/perf_records.h"

static struct {
	int stores;
	uint32_t ldlat;
	uint64_t period;
	struct cache_model_config cm;
	int cm_init;
	int stack_done;	    /* the main thread's [stack] record written */
	uint64_t brk_start; /* the heap: [brk_start, brk_end) announced */
	uint64_t brk_end;
} pb;

struct pebs_thr {
	struct cache_model *cm;
	uint64_t left; /* counted accesses until the next sample */
};

/* per instruction: its address and place in the block (for the time) */
struct pebs_insn {
	uint64_t ip;
	const struct emu_tb *tb;
	uint32_t idx;
};

int pebs_arg(const char *k, const char *v)
{
	if (!pb.cm_init) {
		cache_model_config_init(&pb.cm);
		pb.cm_init = 1;
		pb.ldlat = 30;
		pb.period = 1000;
	}
	char *end;
	if (!strcmp(k, "pebs")) {
		if (strcmp(v, "loads") && strcmp(v, "stores")) {
			fprintf(stderr, "hwt-pt-plugin: pebs=%s: want loads or stores\n", v);
			return -1;
		}
		pb.stores = !strcmp(v, "stores");
		return 1;
	}
	if (!strcmp(k, "ldlat") || !strcmp(k, "period")) {
		unsigned long long n = strtoull(v, &end, 0);
		if (!*v || *end || (!strcmp(k, "period") && !n)) {
			fprintf(stderr, "hwt-pt-plugin: bad %s '%s'\n", k, v);
			return -1;
		}
		if (k[0] == 'l')
			pb.ldlat = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		else
			pb.period = n;
		return 1;
	}
	int r = cache_model_config_set(&pb.cm, k, v);
	if (r < 0)
		fprintf(stderr, "hwt-pt-plugin: bad cache model value %s=%s\n", k, v);
	return r;
}

int pebs_setup(void)
{
	if (!pb.cm_init)
		pebs_arg("period", "1000");
	char why[256];
	struct cache_model *m = cache_model_alloc(&pb.cm, why, sizeof(why));
	if (!m) {
		fprintf(stderr, "hwt-pt-plugin: %s\n", why);
		return -1;
	}
	cache_model_free(m);
	return 0;
}

static void thr_unit_free(void *u)
{
	struct pebs_thr *p = u;
	cache_model_free(p->cm);
	free(p);
}

static struct pebs_thr *unit_of(struct emu_thr *t)
{
	if (t->unit)
		return t->unit;
	struct pebs_thr *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cm = cache_model_alloc(&pb.cm, NULL, 0);
	if (!p->cm) {
		free(p);
		return NULL;
	}
	p->left = pb.period;
	t->unit = p;
	t->unit_free = thr_unit_free;
	return p;
}

static uint64_t data_src(const struct cache_model_result *r, int store)
{
	uint64_t op = store ? PERF_MEM_OP_STORE : PERF_MEM_OP_LOAD;
	uint64_t lvl, num, snoop;
	switch (r->level) {
	case CACHE_MODEL_L1:
		lvl = PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT;
		num = PERF_MEM_LVLNUM_L1;
		snoop = PERF_MEM_SNOOP_NONE;
		break;
	case CACHE_MODEL_LLC:
		lvl = PERF_MEM_LVL_L3 | PERF_MEM_LVL_HIT;
		num = PERF_MEM_LVLNUM_L3;
		snoop = PERF_MEM_SNOOP_NONE;
		break;
	default:
		lvl = PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT;
		num = PERF_MEM_LVLNUM_RAM;
		snoop = PERF_MEM_SNOOP_MISS;
		break;
	}
	uint64_t tlb = r->tlb_hit ? PERF_MEM_TLB_L1 | PERF_MEM_TLB_HIT
				  : PERF_MEM_TLB_L1 | PERF_MEM_TLB_MISS | PERF_MEM_TLB_WK;
	return (op << PERF_MEM_OP_SHIFT) | (lvl << PERF_MEM_LVL_SHIFT) |
	       (snoop << PERF_MEM_SNOOP_SHIFT) |
	       ((uint64_t)PERF_MEM_LOCK_NA << PERF_MEM_LOCK_SHIFT) | (tlb << PERF_MEM_TLB_SHIFT) |
	       (num << PERF_MEM_LVLNUM_SHIFT);
}

static char *hexs(char *p, uint64_t v)
{
	return p + sprintf(p, "0x%llx", (unsigned long long)v);
}

static void truth(struct emu_thr *t, uint64_t ip, uint64_t addr, uint32_t lat, uint64_t ds)
{
	if (emu.truth_fd < 0)
		return;
	if (t->tlen > EMU_TRUTH_BUF - 128)
		emu_truth_flush(t);
	char *p = t->tbuf + t->tlen;
	p += sprintf(p, "%d\t", (int)t->tid);
	p = hexs(p, ip);
	*p++ = '\t';
	p = hexs(p, addr);
	p += sprintf(p, "\t%u\t", lat);
	p = hexs(p, ds);
	*p++ = '\n';
	t->tlen = (size_t)(p - t->tbuf);
	emu_box_sync(t);
}

/* The PERF_RECORD_SAMPLE: fields in the order of linux/perf_event.h for
 * the sample_type the recorder asked for (emu.sample_type). */
static void put_sample(struct emu_thr *t, uint64_t ip, uint64_t time, uint64_t addr, uint64_t lat,
		       uint64_t ds)
{
	uint64_t rec[32];
	size_t n = 1;
	uint64_t st = emu.sample_type, id = emu.sample_id;
	if (st & PERF_SAMPLE_IDENTIFIER)
		rec[n++] = id;
	if (st & PERF_SAMPLE_IP)
		rec[n++] = ip;
	if (st & PERF_SAMPLE_TID)
		rec[n++] = (uint64_t)(uint32_t)t->pid | (uint64_t)(uint32_t)t->tid << 32;
	if (st & PERF_SAMPLE_TIME)
		rec[n++] = time;
	if (st & PERF_SAMPLE_ADDR)
		rec[n++] = addr;
	if (st & PERF_SAMPLE_ID)
		rec[n++] = id;
	if (st & PERF_SAMPLE_STREAM_ID)
		rec[n++] = id;
	if (st & PERF_SAMPLE_CPU)
		rec[n++] = 0;
	if (st & PERF_SAMPLE_PERIOD)
		rec[n++] = pb.period;
	if (st & PERF_SAMPLE_WEIGHT)
		rec[n++] = lat;
	if (st & PERF_SAMPLE_DATA_SRC)
		rec[n++] = ds;
	struct perf_event_header h = {
	    .type = PERF_RECORD_SAMPLE,
	    .misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP,
	    .size = (uint16_t)(n * 8),
	};
	memcpy(rec, &h, sizeof(h));
	emu_put_sample(t, rec, n * 8);
}

/* The main thread's stack: the host mapping that holds guest address a. */
static void announce_stack(struct emu_thr *t, uint64_t a)
{
	pb.stack_done = 1;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[4600];
	uint64_t host = a + (uint64_t)emu.guest_base;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || host < lo || host >= hi)
			continue;
		uint64_t glo = lo - (uint64_t)emu.guest_base;
		emu_sb_mmap(t, glo, hi - lo, 0, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, "[stack]", -1);
		break;
	}
	fclose(f);
}

static void mem_cb(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct emu_thr *t = emu_thr_of(vcpu);
	if (!t)
		return;
	struct pebs_thr *p = unit_of(t);
	if (!p)
		return;
	if (__builtin_expect(!pb.stack_done, 0) && !t->ppid)
		announce_stack(t, vaddr);
	int store = qemu_plugin_mem_is_store(info);
	struct cache_model_result r;
	cache_model_access(p->cm, vaddr, store, &r);
	if (store != pb.stores || (!store && r.latency <= pb.ldlat))
		return;
	if (--p->left)
		return;
	p->left = pb.period;
	const struct pebs_insn *in = udata;
	uint64_t now = emu_now(t); /* the clock already counts the whole block */
	uint64_t time = now - in->tb->n + in->idx;
	uint64_t ds = data_src(&r, store);
	put_sample(t, in->ip, time, vaddr, r.latency, ds);
	truth(t, in->ip, vaddr, r.latency, ds);
	emu_box_sync(t);
}

void pebs_tb_trans(struct qemu_plugin_tb *tb, const struct emu_tb *e)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct pebs_insn *v = calloc(n, sizeof(*v)); /* lives as long as the block: never freed */
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		v[i].ip = qemu_plugin_insn_vaddr(insn);
		v[i].tb = e;
		v[i].idx = (uint32_t)i;
		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, &v[i]);
	}
}

void pebs_syscall_ret(struct emu_thr *t, int64_t num, int64_t ret)
{
	if (num == SYS_brk) {
		uint64_t b = (uint64_t)ret;
		if (!pb.brk_start) {
			pb.brk_start = pb.brk_end = b;
			return;
		}
		if (b > pb.brk_end) {
			pb.brk_end = b;
			emu_sb_mmap(t, pb.brk_start, b - pb.brk_start, 0, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, "[heap]", -1);
		}
		return;
	}
	if (num != SYS_mmap || ret <= 0 || (uint64_t)ret >= (uint64_t)-4096 ||
	    (t->sys_args[2] & PROT_EXEC))
		return; /* executable mappings: plugin.c */
	int fd = (int)t->sys_args[4];
	int flags = (int)t->sys_args[3];
	char path[4096] = "//anon";
	if (!(flags & MAP_ANONYMOUS) && fd >= 0) {
		char l[64];
		snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
		ssize_t k = readlink(l, path, sizeof(path) - 1);
		path[k > 0 ? k : 0] = 0;
	} else {
		fd = -1;
		if (flags & MAP_STACK)
			snprintf(path, sizeof(path), "[stack]");
	}
	emu_sb_mmap(t, (uint64_t)ret, t->sys_args[1], fd >= 0 ? t->sys_args[5] : 0,
		    (int)t->sys_args[2], flags, path, fd);
}
