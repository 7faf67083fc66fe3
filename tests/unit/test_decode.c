/* tests/unit/test_decode.c - the recording decoder (hwt/decode.h) without
 * the CLI.
 *
 * Each case writes a small perf.data with the writer API: sideband (COMM,
 * MMAP2 of a raw code file, FORK, switches) and AUXTRACE chunks of Intel
 * PT made with the packet encoder over hand-assembled code.  The oracle
 * is the encoded flow itself: the branches (from, to, kind), events and
 * gaps the decoder delivers must be the ones the packets describe.  Cases:
 * per-thread (whole, and cut into two chunks at every byte), read from a
 * reader over memory; fork then exec (the child runs the parent's code,
 * then its own); per-CPU (two CPUs, switch records after the trace, time
 * order across CPUs); a corrupt byte (a gap at its offset, decoding goes
 * on); pipe mode through a real pipe; a format without ops (a clear
 * error); a PSB preceded by bytes that continue its 02 82 pattern (a CYC
 * ending in 02 and a TNT 82: the region ends at the real PSB, cut into
 * two chunks at every byte); signals (asynchronous transfers, user-only
 * and with the kernel traced) right after an indirect jump, a taken and
 * a not-taken jcc and a direct jump: the branch into the interrupted
 * instruction, then the async row, the same in batches (the default for
 * a consumer of taken branches alone), block by block and for a consumer
 * of events.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwt/decode.h"
#include "hwt/perf_data.h"
#include "hwt/pt_packet.h"
#include "hwt/x86.h"
#include "t.h"

#define ORG 0x400000ull

/* Code A: call, ret (compressed), je taken, jmp rax, jmp rax. */
static const uint8_t code_a[0x30] = {
    0xe8, 0x0b, 0x00, 0x00, 0x00, /* +00: call +10 */
    0x74, 0x02,			  /* +05: je +09 */
    0x90, 0x90,			  /* +07: nop; nop */
    0xff, 0xe0,			  /* +09: jmp rax */
    0x90, 0x90, 0x90, 0x90, 0x90, /* +0b */
    0xc3,			  /* +10: ret */
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, /* +11 */
    0xff, 0xe0,				      /* +20: jmp rax */
};
/* Code B (after exec): jmp +20, jmp rax there. */
static const uint8_t code_b[0x30] = {
    0xe9,	   0x1b, 0x00, 0x00, 0x00, /* +00: jmp +20 */
    [0x20] = 0xff, 0xe0,		   /* +20: jmp rax */
};

struct br {
	uint32_t tid;
	uint64_t from, to;
	int kind;
	uint64_t time;
	int have_time;
};

struct got {
	struct br br[256];
	size_t nbr;
	int nen, ndis, nev;
	int ngap;
	uint64_t gap_off[16];
	int gap_err[16];
	size_t ninsn;
};

static void c_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		     const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct got *g = arg;
	if (g->nbr < 256)
		g->br[g->nbr++] = (struct br){t->tid, from, to, kind, time_ns, have_time};
}

static void c_event(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_event *ev)
{
	struct got *g = arg;
	g->nev++;
	if (ev->type == HWT_DEV_ENABLED && ev->ip == ORG)
		g->nen++;
	if (ev->type == HWT_DEV_DISABLED)
		g->ndis++;
}

static void c_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	struct got *g = arg;
	if (g->ngap < 16) {
		g->gap_off[g->ngap] = offset;
		g->gap_err[g->ngap] = err;
	}
	g->ngap++;
}

static void c_insn(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		   const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	((struct got *)arg)->ninsn++;
}

/* ---- PT encoding ---- */
struct enc {
	uint8_t buf[1024];
	size_t n;
};

static void put(struct enc *e, const struct hwt_pt_packet *p)
{
	int r = hwt_pt_pkt_encode(e->buf + e->n, sizeof(e->buf) - e->n, p);
	if (r > 0)
		e->n += (size_t)r;
}

static void pkt(struct enc *e, int type)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	put(e, &p);
}

static void ip_pkt(struct enc *e, int type, int ipc, uint64_t ip)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	p.u.ip.ipc = (uint8_t)ipc;
	p.u.ip.ip = ip;
	put(e, &p);
}

/* PSB+ (TSC if tsc), no FUP: tracing starts with TIP.PGE. */
static void psb(struct enc *e, uint64_t tsc)
{
	pkt(e, HWT_PKT_PSB);
	if (tsc) {
		struct hwt_pt_packet p;
		memset(&p, 0, sizeof(p));
		p.type = HWT_PKT_TSC;
		p.u.tsc.tsc = tsc;
		put(e, &p);
	}
	pkt(e, HWT_PKT_PSBEND);
}

static void mode64(struct enc *e)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_MODE_EXEC;
	p.u.mode_exec.csl = 1;
	put(e, &p);
}

/* Code A's flow: enable at ORG, call, ret (TNT 1), je taken (TNT 1),
 * jmp rax -> +20 (TIP), jmp rax there: disable (TIP.PGD, no ip). */
static void flow_a(struct enc *e)
{
	mode64(e);
	ip_pkt(e, HWT_PKT_TIP_PGE, HWT_IPC_FULL, ORG);
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_TNT8;
	p.u.tnt.bits = 2;
	p.u.tnt.payload = 3;
	put(e, &p);
	ip_pkt(e, HWT_PKT_TIP, HWT_IPC_FULL, ORG + 0x20);
	ip_pkt(e, HWT_PKT_TIP_PGD, HWT_IPC_SUPPRESSED, 0);
}

static void flow_b(struct enc *e)
{
	mode64(e);
	ip_pkt(e, HWT_PKT_TIP_PGE, HWT_IPC_FULL, ORG);
	ip_pkt(e, HWT_PKT_TIP_PGD, HWT_IPC_SUPPRESSED, 0);
}

static const struct br want_a[] = {
    {0, ORG, ORG + 0x10, HWT_BR_CALL, 0, 0},
    {0, ORG + 0x10, ORG + 5, HWT_BR_RET, 0, 0},
    {0, ORG + 5, ORG + 9, HWT_BR_JCC, 0, 0},
    {0, ORG + 9, ORG + 0x20, HWT_BR_IJMP, 0, 0},
};
#define NA (sizeof(want_a) / sizeof(want_a[0]))

/* The branches of thread tid in g from index *at on are want[0, n). */
static int match(const struct got *g, uint32_t tid, size_t *at, const struct br *want, size_t n)
{
	size_t k = 0;
	for (size_t i = *at; i < g->nbr && k < n; i++) {
		if (g->br[i].tid != tid)
			continue;
		if (g->br[i].from != want[k].from || g->br[i].to != want[k].to ||
		    g->br[i].kind != want[k].kind) {
			printf("# tid %u branch %zu: %#llx -> %#llx %s, want %#llx -> %#llx %s\n",
			       tid, k, (unsigned long long)g->br[i].from,
			       (unsigned long long)g->br[i].to, hwt_branch_kind_name(g->br[i].kind),
			       (unsigned long long)want[k].from, (unsigned long long)want[k].to,
			       hwt_branch_kind_name(want[k].kind));
			return 0;
		}
		k++;
		*at = i + 1;
	}
	return k == n;
}

static size_t count_tid(const struct got *g, uint32_t tid)
{
	size_t n = 0;
	for (size_t i = 0; i < g->nbr; i++)
		n += g->br[i].tid == tid;
	return n;
}

/* ---- files ---- */
static char dir[64];

static void code_file(const char *name, const uint8_t *code, size_t n, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(code, 1, n, f);
		fclose(f);
	}
}

static struct hwt_perf_writer *writer_fd(const char *path, int fd, int per_cpu, uint32_t aux_type)
{
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	if (!w || (fd >= 0 ? hwt_perf_writer_open_fd(w, fd) : hwt_perf_writer_open(w, path))) {
		hwt_perf_writer_free(w);
		return NULL;
	}
	struct perf_event_attr a, sb;
	hwt_perf_attr_intel_pt(&a, 8, HWT_IPT_CFG_TSC | HWT_IPT_CFG_BRANCH);
	hwt_perf_attr_sideband(&sb, per_cpu);
	uint64_t id1 = 1, id2 = 2;
	hwt_perf_writer_add_attr(w, &a, "intel_pt//u", &id1, 1);
	hwt_perf_writer_add_attr(w, &sb, "dummy:u", &id2, 1);
	hwt_perf_writer_add_pmu(w, "intel_pt", 8);
	if (aux_type == HWT_PERF_AUXTRACE_INTEL_PT) {
		struct hwt_perf_intel_pt_info info;
		hwt_perf_intel_pt_info_init(&info);
		info.pmu_type = 8;
		hwt_perf_writer_write_intel_pt_info(w, &info);
	} else {
		uint64_t priv[4] = {0};
		hwt_perf_writer_write_auxtrace_info(w, aux_type, priv, 4);
	}
	return w;
}

static struct hwt_perf_writer *writer(const char *path, int per_cpu, uint32_t aux_type)
{
	return writer_fd(path, -1, per_cpu, aux_type);
}

static struct hwt_perf_sample_id sid_of(uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t time)
{
	struct hwt_perf_sample_id s;
	memset(&s, 0, sizeof(s));
	s.pid = pid;
	s.tid = tid;
	s.cpu = cpu;
	s.time = time;
	s.id = 2;
	return s;
}

static void proc_start(struct hwt_perf_writer *w, uint32_t pid, const char *code, uint32_t cpu)
{
	struct hwt_perf_sample_id s = sid_of(pid, pid, cpu, 1);
	hwt_perf_writer_write_comm(w, pid, pid, "prog", 1, &s);
	hwt_perf_writer_write_mmap2(w, pid, pid, ORG, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
				    code, 0, &s);
}

static void aux(struct hwt_perf_writer *w, uint32_t idx, uint32_t tid, uint32_t cpu, uint64_t off,
		const uint8_t *d, size_t n)
{
	struct hwt_perf_auxtrace_desc desc = {.offset = off, .idx = idx, .tid = tid, .cpu = cpu};
	hwt_perf_writer_write_auxtrace(w, &desc, d, n, NULL, 0);
}

/* Decode path (or, with mem, a reader over the file in memory). */
static int decode(const char *path, int mem, unsigned flags, struct got *g,
		  struct hwt_decoder_info *info, char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	struct hwt_decode_consumer c = {
	    .size = sizeof(c),
	    .arg = g,
	    .flags = flags,
	    .branch = c_branch,
	    .event = c_event,
	    .gap = c_gap,
	    .insn = flags & HWT_DEC_WANT_RAW ? c_insn : NULL,
	};
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.consumer = &c;
	cfg.errbuf = err;
	cfg.errlen = errlen;
	struct hwt_perf_reader *r = NULL;
	void *buf = NULL;
	if (mem) {
		FILE *f = fopen(path, "rb");
		if (!f)
			return -100;
		buf = malloc(1 << 20);
		size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
		fclose(f);
		if (hwt_perf_reader_open_mem(&r, buf, n, err, errlen)) {
			free(buf);
			return -101;
		}
		cfg.reader = r;
	} else {
		cfg.path = path;
	}
	struct hwt_decoder *d = NULL;
	int rc = hwt_decoder_alloc(&d, &cfg);
	if (!rc) {
		rc = hwt_decoder_run(d);
		snprintf(err, errlen, "%s", hwt_decoder_errmsg(d));
		memset(info, 0, sizeof(*info));
		info->size = sizeof(*info);
		hwt_decoder_info(d, info);
		struct hwt_dec_thread *t = hwt_decoder_thread(d, 100);
		if (t && !hwt_decoder_process(d, t))
			rc = -102;
		hwt_decoder_free(d);
	}
	hwt_perf_reader_free(r);
	free(buf);
	return rc;
}

/* A per-thread recording of thread 100 running code whose trace is e,
 * in one AUXTRACE chunk (split 0) or two cut at split. */
static int write_split(const char *data, const char *code, const struct enc *e, size_t split)
{
	struct hwt_perf_writer *w = writer(data, 0, HWT_PERF_AUXTRACE_INTEL_PT);
	CHECK(w != NULL);
	if (!w)
		return 0;
	proc_start(w, 100, code, (uint32_t)-1);
	if (!split) {
		aux(w, 0, 100, (uint32_t)-1, 0, e->buf, e->n);
	} else {
		aux(w, 0, 100, (uint32_t)-1, 0, e->buf, split);
		aux(w, 0, 100, (uint32_t)-1, split, e->buf + split, e->n - split);
	}
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	hwt_perf_writer_free(w);
	return 1;
}

/* ---- cases ---- */
static void t_per_thread(void)
{
	char code[256], data[256], err[256];
	code_file("a.bin", code_a, sizeof(code_a), code, sizeof(code));
	snprintf(data, sizeof(data), "%s/pt.data", dir);
	struct enc e = {.n = 0};
	psb(&e, 0);
	flow_a(&e);
	struct got g;
	struct hwt_decoder_info info;
	/* split 0: one chunk; else two chunks cut at split */
	for (size_t split = 0; split < e.n && !t_case_failed; split++) {
		if (!write_split(data, code, &e, split))
			return;
		for (int mem = 0; mem < 2; mem++)
			for (int raw = 0; raw < 2; raw++) {
				int rc = decode(data, mem, raw ? HWT_DEC_WANT_RAW : 0, &g, &info,
						err, sizeof(err));
				CHECKF(rc == 0, "split %zu: rc %d: %s", split, rc, err);
				size_t at = 0;
				CHECKF(match(&g, 100, &at, want_a, NA) && g.nbr == NA,
				       "split %zu mem %d raw %d: %zu branches", split, mem, raw,
				       g.nbr);
				CHECK_EQ(g.ngap, 0);
				CHECK_EQ(g.nen, 1);
				CHECK_EQ(g.ndis, 1);
				if (raw) /* call, ret, je, jmp rax, jmp rax */
					CHECK_EQ(g.ninsn, 5);
				CHECK_EQ(info.format, HWT_PERF_AUXTRACE_INTEL_PT);
				CHECK(!strcmp(info.format_name, "intel_pt"));
				CHECK_EQ(info.nr_queues, 1);
				CHECK_EQ(info.per_cpu, 0);
				CHECK_EQ(info.nr_aux, split ? 2 : 1);
			}
	}
}

static void t_fork_exec(void)
{
	char ca[256], cb[256], data[256], err[256];
	code_file("a.bin", code_a, sizeof(code_a), ca, sizeof(ca));
	code_file("b.bin", code_b, sizeof(code_b), cb, sizeof(cb));
	snprintf(data, sizeof(data), "%s/fork.data", dir);
	struct hwt_perf_writer *w = writer(data, 0, HWT_PERF_AUXTRACE_INTEL_PT);
	CHECK(w != NULL);
	if (!w)
		return;
	uint32_t m1 = (uint32_t)-1;
	proc_start(w, 100, ca, m1);
	struct hwt_perf_sample_id s = sid_of(200, 200, m1, 2);
	hwt_perf_writer_write_task(w, PERF_RECORD_FORK, 200, 100, 200, 100, 2, &s);
	/* the child runs A (inherited); a PSB+ ends the region so that it
	 * is decoded before the exec */
	struct enc e1 = {.n = 0};
	psb(&e1, 0);
	flow_a(&e1);
	psb(&e1, 0);
	aux(w, 1, 200, m1, 0, e1.buf, e1.n);
	/* exec: B at the same address */
	hwt_perf_writer_write_comm(w, 200, 200, "progb", 1, &s);
	hwt_perf_writer_write_mmap2(w, 200, 200, ORG, 0x1000, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
				    cb, 0, &s);
	struct enc e2 = {.n = 0};
	flow_b(&e2);
	aux(w, 1, 200, m1, e1.n, e2.buf, e2.n);
	/* the parent still runs A */
	struct enc e3 = {.n = 0};
	psb(&e3, 0);
	flow_a(&e3);
	aux(w, 0, 100, m1, 0, e3.buf, e3.n);
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	hwt_perf_writer_free(w);
	struct got g;
	struct hwt_decoder_info info;
	int rc = decode(data, 0, 0, &g, &info, err, sizeof(err));
	CHECKF(rc == 0, "rc %d: %s", rc, err);
	static const struct br want_b[] = {{0, ORG, ORG + 0x20, HWT_BR_JMP, 0, 0}};
	size_t at = 0;
	CHECKF(match(&g, 200, &at, want_a, NA), "child before exec");
	CHECKF(match(&g, 200, &at, want_b, 1), "child after exec");
	CHECK_EQ(count_tid(&g, 200), NA + 1);
	at = 0;
	CHECKF(match(&g, 100, &at, want_a, NA), "parent");
	CHECK_EQ(count_tid(&g, 100), NA);
	CHECK_EQ(g.ngap, 0);
	CHECK_EQ(info.nr_threads, 2);
	CHECK_EQ(info.nr_processes, 2);
}

static void t_per_cpu(void)
{
	char ca[256], data[256], err[256];
	code_file("a.bin", code_a, sizeof(code_a), ca, sizeof(ca));
	snprintf(data, sizeof(data), "%s/cpu.data", dir);
	struct hwt_perf_writer *w = writer(data, 1, HWT_PERF_AUXTRACE_INTEL_PT);
	CHECK(w != NULL);
	if (!w)
		return;
	uint32_t m1 = (uint32_t)-1;
	proc_start(w, 100, ca, 0);
	proc_start(w, 300, ca, 1);
	/* CPU 1's trace (later) first in the file, then CPU 0's */
	struct enc e1 = {.n = 0}, e0 = {.n = 0};
	psb(&e1, 2000);
	flow_a(&e1);
	psb(&e0, 1000);
	flow_a(&e0);
	aux(w, 1, m1, 1, 0, e1.buf, e1.n);
	aux(w, 0, m1, 0, 0, e0.buf, e0.n);
	/* who runs where: only known after the trace (one pass: gathered
	 * on the way, used at the end) */
	struct hwt_perf_sample_id s0 = sid_of(100, 100, 0, 500);
	struct hwt_perf_sample_id s1 = sid_of(300, 300, 1, 1500);
	struct hwt_perf_sample_id s1b = sid_of(100, 100, 1, 5000);
	hwt_perf_writer_write_switch(w, 1, 0, 0, 0, &s0);
	hwt_perf_writer_write_switch(w, 1, 0, 0, 0, &s1);
	hwt_perf_writer_write_switch(w, 1, 0, 0, 0, &s1b); /* after CPU 1's trace */
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	hwt_perf_writer_free(w);
	struct got g;
	struct hwt_decoder_info info;
	int rc = decode(data, 0, HWT_DEC_WANT_TIME, &g, &info, err, sizeof(err));
	CHECKF(rc == 0, "rc %d: %s", rc, err);
	CHECK_EQ(info.per_cpu, 1);
	CHECK_EQ(info.nr_queues, 2);
	CHECK_EQ(g.nbr, 2 * NA);
	size_t at = 0;
	CHECKF(match(&g, 100, &at, want_a, NA), "thread 100 on CPU 0");
	CHECKF(match(&g, 300, &at, want_a, NA), "thread 300 on CPU 1, after");
	for (size_t i = 0; i < g.nbr; i++)
		CHECKF(g.br[i].have_time && g.br[i].time == (i < NA ? 1000u : 2000u),
		       "branch %zu time %llu", i, (unsigned long long)g.br[i].time);
	CHECK_EQ(g.ngap, 0);
}

static void t_gap(void)
{
	char ca[256], data[256], err[256];
	code_file("a.bin", code_a, sizeof(code_a), ca, sizeof(ca));
	snprintf(data, sizeof(data), "%s/gap.data", dir);
	struct enc e = {.n = 0};
	psb(&e, 0);
	mode64(&e);
	ip_pkt(&e, HWT_PKT_TIP_PGE, HWT_IPC_FULL, ORG);
	size_t bad = e.n;
	e.buf[e.n++] = 0x02; /* an extended opcode no packet has */
	e.buf[e.n++] = 0xff;
	size_t resync = e.n;
	psb(&e, 0);
	flow_a(&e);
	struct hwt_perf_writer *w = writer(data, 0, HWT_PERF_AUXTRACE_INTEL_PT);
	CHECK(w != NULL);
	if (!w)
		return;
	proc_start(w, 100, ca, (uint32_t)-1);
	aux(w, 0, 100, (uint32_t)-1, 4096, e.buf, e.n);
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	hwt_perf_writer_free(w);
	struct got g;
	struct hwt_decoder_info info;
	int rc = decode(data, 0, 0, &g, &info, err, sizeof(err));
	CHECKF(rc == 0, "rc %d: %s", rc, err);
	CHECK(g.ngap >= 1);
	CHECKF(g.ngap >= 1 && g.gap_off[0] >= 4096 + bad && g.gap_off[0] < 4096 + resync,
	       "gap at %llu, bad bytes at %zu", (unsigned long long)g.gap_off[0], 4096 + bad);
	CHECK_EQ(info.nr_gaps, (uint64_t)g.ngap);
	size_t at = 0;
	CHECKF(match(&g, 100, &at, want_a, NA), "after the gap");
}

/* Pipe mode (perf record -o -): a child writes the recording into a
 * pipe while the decoder reads it in one pass, chunk by chunk. */
static void t_pipe(void)
{
	char ca[256], err[256];
	code_file("a.bin", code_a, sizeof(code_a), ca, sizeof(ca));
	int fds[2];
	if (pipe(fds)) {
		CHECK(!"pipe");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		struct hwt_perf_writer *w = writer_fd(NULL, fds[1], 0, HWT_PERF_AUXTRACE_INTEL_PT);
		if (!w || !hwt_perf_writer_is_pipe(w))
			_exit(1);
		proc_start(w, 100, ca, (uint32_t)-1);
		struct enc e = {.n = 0};
		psb(&e, 0);
		flow_a(&e);
		size_t half = e.n / 2;
		aux(w, 0, 100, (uint32_t)-1, 0, e.buf, half);
		aux(w, 0, 100, (uint32_t)-1, half, e.buf + half, e.n - half);
		int rc = hwt_perf_writer_finish(w);
		hwt_perf_writer_free(w);
		close(fds[1]);
		_exit(rc ? 1 : 0);
	}
	close(fds[1]);
	CHECK(pid > 0);
	struct hwt_perf_reader *r = NULL;
	int rc = pid > 0 ? hwt_perf_reader_open_fd(&r, fds[0], err, sizeof(err)) : -1;
	CHECKF(rc == 0, "reader: %d %s", rc, err);
	struct got g;
	memset(&g, 0, sizeof(g));
	struct hwt_decode_consumer c = {
	    .size = sizeof(c), .arg = &g, .branch = c_branch, .event = c_event, .gap = c_gap};
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.consumer = &c;
	cfg.reader = r;
	struct hwt_decoder *d = NULL;
	if (!rc && !(rc = hwt_decoder_alloc(&d, &cfg))) {
		rc = hwt_decoder_run(d);
		CHECKF(rc == 0, "decode: %d %s", rc, hwt_decoder_errmsg(d));
		hwt_decoder_free(d);
	}
	hwt_perf_reader_free(r);
	close(fds[0]);
	int status = 1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECKF(status == 0, "writer child: status %d", status);
	size_t at = 0;
	CHECKF(match(&g, 100, &at, want_a, NA) && g.nbr == NA, "%zu branches", g.nbr);
	CHECK_EQ(g.ngap, 0);
	CHECK_EQ(g.nen, 1);
}

static void t_no_ops(void)
{
	char data[256], err[256];
	snprintf(data, sizeof(data), "%s/s390.data", dir);
	struct hwt_perf_writer *w = writer(data, 0, 5 /* s390_cpumsf: no decoder */);
	CHECK(w != NULL);
	if (!w)
		return;
	uint8_t junk[64] = {0};
	aux(w, 0, 100, (uint32_t)-1, 0, junk, sizeof(junk));
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	hwt_perf_writer_free(w);
	struct got g;
	struct hwt_decoder_info info;
	int rc = decode(data, 0, 0, &g, &info, err, sizeof(err));
	CHECK_EQ(rc, HWT_ERR_NOT_SUPPORTED);
	CHECKF(strstr(err, "type 5") && strstr(err, "intel_pt") && strstr(err, "arm_spe"),
	       "message: %s", err);
	CHECK_EQ(g.nbr, 0);
	/* and the config is checked */
	struct hwt_decoder *d = NULL;
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	CHECK_EQ(hwt_decoder_alloc(&d, &cfg), HWT_ERR_INVALID);
	CHECK(d == NULL);
	cfg.path = "/nonexistent/perf.data";
	CHECK_EQ(hwt_decoder_alloc(&d, &cfg), HWT_ERR_IO);
}

/* Code C: five jcc not taken, then one taken back to ORG; the sixth
 * jcc not taken falls into jmp rax (the end). */
static const uint8_t code_c[0x20] = {
    0x74, 0x02, 0x90, 0x90, /* +00: je +04 */
    0x74, 0x02, 0x90, 0x90, /* +04: je +08 */
    0x74, 0x02, 0x90, 0x90, /* +08: je +0c */
    0x74, 0x02, 0x90, 0x90, /* +0c: je +10 */
    0x74, 0x02, 0x90, 0x90, /* +10: je +14 */
    0x74, 0xea,		    /* +14: je +00 */
    0xff, 0xe0,		    /* +16: jmp rax */
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
};

static void tnt8(struct enc *e, unsigned bits, uint64_t payload)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_TNT8;
	p.u.tnt.bits = (uint8_t)bits;
	p.u.tnt.payload = payload;
	put(e, &p);
}

static void t_psb_run(void)
{
	char code[256], data[256], err[256];
	code_file("c.bin", code_c, sizeof(code_c), code, sizeof(code));
	snprintf(data, sizeof(data), "%s/run.data", dir);
	struct enc e = {.n = 0};
	psb(&e, 0);
	mode64(&e);
	ip_pkt(&e, HWT_PKT_TIP_PGE, HWT_IPC_FULL, ORG);
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_CYC;
	p.u.cyc.value = 32; /* 07 02 */
	put(&e, &p);
	tnt8(&e, 6, 1); /* N N N N N T: the byte 82 */
	CHECK_EQ(e.buf[e.n - 2], 0x02);
	CHECK_EQ(e.buf[e.n - 1], 0x82);
	size_t psb2 = e.n;
	pkt(&e, HWT_PKT_PSB);
	mode64(&e);
	ip_pkt(&e, HWT_PKT_FUP, HWT_IPC_FULL, ORG); /* the flow is back at ORG */
	pkt(&e, HWT_PKT_PSBEND);
	tnt8(&e, 6, 0); /* six not taken: into jmp rax */
	ip_pkt(&e, HWT_PKT_TIP_PGD, HWT_IPC_SUPPRESSED, 0);
	const struct br want[] = {{0, ORG + 0x14, ORG, HWT_BR_JCC, 0, 0}};
	struct got g;
	struct hwt_decoder_info info;
	for (size_t split = 0; split < e.n && !t_case_failed; split++) {
		if (!write_split(data, code, &e, split))
			return;
		for (int raw = 0; raw < 2; raw++) {
			int rc = decode(data, 1, raw ? HWT_DEC_WANT_RAW : 0, &g, &info, err,
					sizeof(err));
			CHECKF(rc == 0, "split %zu: rc %d: %s", split, rc, err);
			size_t at = 0;
			CHECKF(match(&g, 100, &at, want, 1) && g.nbr == 1,
			       "split %zu (PSB at %zu) raw %d: %zu branches, want 1", split, psb2,
			       raw, g.nbr);
			CHECK_EQ(g.ngap, 0);
			if (raw) /* twice 5 x (jcc, nop, nop) + jcc, then jmp rax */
				CHECK_EQ(g.ninsn, 33);
		}
	}
}

/* ---- asynchronous transfers (signals) after each kind of branch ----
 * Code D: the handler at +30 jumps back (jmp rax) to where the flow was
 * interrupted. */
static const uint8_t code_d[0x40] = {
    0xff,	   0xe0,			 /* +00: jmp rax */
    [0x10] = 0x74, 0x06,			 /* +10: je +18 */
    [0x12] = 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, /* +12 */
    [0x18] = 0x74, 0x02,			 /* +18: je +1c */
    [0x1a] = 0xeb, 0x04,			 /* +1a: jmp +20 */
    [0x1c] = 0x90, 0x90, 0x90, 0x90,		 /* +1c */
    [0x20] = 0x90,				 /* +20: nop */
    [0x21] = 0xff, 0xe0,			 /* +21: jmp rax */
    [0x30] = 0xff, 0xe0,			 /* +30: jmp rax (the handler) */
};

/* An interrupt at ip: user-only tracing (FUP, TIP.PGD; TIP.PGE at the
 * handler), or with the kernel traced too (FUP, TIP to the handler). */
static void interrupt(struct enc *e, uint64_t ip, int user_only)
{
	ip_pkt(e, HWT_PKT_FUP, HWT_IPC_FULL, ip);
	if (user_only) {
		ip_pkt(e, HWT_PKT_TIP_PGD, HWT_IPC_SUPPRESSED, 0);
		ip_pkt(e, HWT_PKT_TIP_PGE, HWT_IPC_FULL, ORG + 0x30);
	} else {
		ip_pkt(e, HWT_PKT_TIP, HWT_IPC_FULL, ORG + 0x30);
	}
	ip_pkt(e, HWT_PKT_TIP, HWT_IPC_FULL, ip); /* the handler's jmp rax */
}

/* Interrupted right after an indirect jump, a taken jcc, a not-taken
 * jcc and a direct jump (each time before the instruction there ran);
 * with a PSB+ (FUP: where the flow stands) at psb_at (0: none). */
static void flow_d(struct enc *e, int user_only, int psb_at)
{
	psb(e, 0);
	mode64(e);
	ip_pkt(e, HWT_PKT_TIP_PGE, HWT_IPC_FULL, ORG);
	ip_pkt(e, HWT_PKT_TIP, HWT_IPC_FULL, ORG + 0x10); /* +00: jmp rax */
	interrupt(e, ORG + 0x10, user_only);
	tnt8(e, 1, 1); /* +10: je taken */
	interrupt(e, ORG + 0x18, user_only);
	if (psb_at == 1) {
		pkt(e, HWT_PKT_PSB);
		mode64(e);
		ip_pkt(e, HWT_PKT_FUP, HWT_IPC_FULL, ORG + 0x18);
		pkt(e, HWT_PKT_PSBEND);
	}
	tnt8(e, 1, 0); /* +18: je not taken */
	interrupt(e, ORG + 0x1a, user_only);
	interrupt(e, ORG + 0x20, user_only); /* after +1a: jmp +20 */
	if (psb_at == 2) {
		pkt(e, HWT_PKT_PSB);
		mode64(e);
		ip_pkt(e, HWT_PKT_FUP, HWT_IPC_FULL, ORG + 0x20);
		pkt(e, HWT_PKT_PSBEND);
	}
	ip_pkt(e, HWT_PKT_TIP_PGD, HWT_IPC_SUPPRESSED, 0); /* +21: jmp rax */
}

static void c_branches(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_branch *br,
		       size_t n, const struct hwt_image *img)
{
	for (size_t i = 0; i < n; i++)
		c_branch(arg, t, br[i].from, br[i].to, br[i].kind, img, br[i].have_time,
			 br[i].time_ns);
}

/* Decode path for a consumer of taken branches alone (the recording
 * decoder's batches, unless dflags has HWT_DECODER_NO_BATCH). */
static int decode_branches(const char *path, unsigned dflags, unsigned jobs, struct got *g,
			   char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	struct hwt_decode_consumer c = {
	    .size = sizeof(c), .arg = g, .branch = c_branch, .branches = c_branches, .gap = c_gap};
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.consumer = &c;
	cfg.path = path;
	cfg.flags = dflags;
	cfg.jobs = jobs;
	cfg.errbuf = err;
	cfg.errlen = errlen;
	struct hwt_decoder *d = NULL;
	int rc = hwt_decoder_alloc(&d, &cfg);
	if (!rc) {
		rc = hwt_decoder_run(d);
		snprintf(err, errlen, "%s", hwt_decoder_errmsg(d));
		hwt_decoder_free(d);
	}
	return rc;
}

/* The branch into an interrupted instruction comes before the async row,
 * in batches (the default) as block by block and for a consumer of
 * events; the not-taken jcc gives none.  In one chunk and cut into
 * two. */
static void t_async(void)
{
	char code[256], data[256], err[256];
	code_file("d.bin", code_d, sizeof(code_d), code, sizeof(code));
	snprintf(data, sizeof(data), "%s/async.data", dir);
	const uint64_t H = ORG + 0x30;
	const struct br want[] = {
	    {0, ORG, ORG + 0x10, HWT_BR_IJMP, 0, 0},
	    {0, ORG + 0x10, H, HWT_BR_ASYNC, 0, 0},
	    {0, H, ORG + 0x10, HWT_BR_IJMP, 0, 0},
	    {0, ORG + 0x10, ORG + 0x18, HWT_BR_JCC, 0, 0},
	    {0, ORG + 0x18, H, HWT_BR_ASYNC, 0, 0},
	    {0, H, ORG + 0x18, HWT_BR_IJMP, 0, 0},
	    {0, ORG + 0x1a, H, HWT_BR_ASYNC, 0, 0},
	    {0, H, ORG + 0x1a, HWT_BR_IJMP, 0, 0},
	    {0, ORG + 0x1a, ORG + 0x20, HWT_BR_JMP, 0, 0},
	    {0, ORG + 0x20, H, HWT_BR_ASYNC, 0, 0},
	    {0, H, ORG + 0x20, HWT_BR_IJMP, 0, 0},
	};
	const size_t nw = sizeof(want) / sizeof(want[0]);
	struct got g;
	struct hwt_decoder_info info;
	for (int user_only = 1; user_only >= 0; user_only--)
		for (int psb_at = 0; psb_at < 3; psb_at++) {
			struct enc e = {.n = 0};
			flow_d(&e, user_only, psb_at);
			/* one chunk, or two cut at every 4th byte (user-only,
			 * a PSB+ in the middle), at the middle (the others) */
			size_t step = user_only && psb_at == 1 ? 4 : e.n / 2;
			for (size_t split = 0; split < e.n && !t_case_failed; split += step) {
				if (!write_split(data, code, &e, split))
					return;
				for (int how = 0; how < 4; how++) {
					/* batches (-j 1, -j 2), block by block, events */
					static const char *const name[] = {"batch", "batch -j2",
									   "no-batch", "events"};
					int rc =
					    how == 3
						? decode(data, 0, 0, &g, &info, err, sizeof(err))
						: decode_branches(
						      data, how == 2 ? HWT_DECODER_NO_BATCH : 0,
						      how == 1 ? 2 : 1, &g, err, sizeof(err));
					CHECKF(rc == 0, "%s: rc %d: %s", name[how], rc, err);
					size_t at = 0;
					CHECKF(match(&g, 100, &at, want, nw) && g.nbr == nw,
					       "%s, %s, PSB %d, split %zu: %zu branches, want %zu",
					       name[how], user_only ? "user-only" : "FUP+TIP",
					       psb_at, split, g.nbr, nw);
					CHECKF(g.ngap == 0, "%s: %d gaps", name[how], g.ngap);
				}
			}
		}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/hwt-test-decode-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("FAIL test_decode: cannot make a scratch folder\n");
		return 1;
	}
	RUN(t_per_thread);
	RUN(t_fork_exec);
	RUN(t_per_cpu);
	RUN(t_gap);
	RUN(t_pipe);
	RUN(t_no_ops);
	RUN(t_psb_run);
	RUN(t_async);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# cannot remove %s\n", dir);
	return t_done();
}
