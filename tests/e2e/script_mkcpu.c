/* tests/e2e/script_mkcpu.c - test helper for tests/e2e/script_cpu.sh:
 * turn a per-thread intel_pt recording with timing (hwt record --emulate,
 * intel_pt/tsc,mtc/) into the layout of a per-CPU recording, as perf
 * record writes one for "perf record -e intel_pt//u -- CMD":
 *   - AUXTRACE records with idx = cpu = the CPU, tid = -1;
 *   - every record carries a sample_id with the CPU and a time;
 *   - ITRACE_START and PERF_RECORD_SWITCH_CPU_WIDE (out and in) records
 *     tell which thread runs on a CPU from when (perf time);
 *   - AUXTRACE_INFO says per-CPU mmaps and context-switch sideband.
 * Each thread's stream is cut where the thread re-enters user mode (a
 * TIP.PGE after a TIP.PGD: in the kernel, where a real switch happens),
 * pieces at least MINLEN bytes (default 4096); a piece but a thread's
 * first starts with a PSB+ made here (TSC, TMA, CBR, MODE.Exec, no FUP,
 * as the unit writes one while tracing is off) and its TIP.PGE with the
 * full IP.  The pieces are scheduled onto NCPU CPUs in order of their
 * TSC (each thread's pieces keep their order; a piece goes to the CPU
 * that is free first).  So that a CPU's time only goes forward, a piece
 * is moved in time by a multiple of Q = 40 * 2^16 TSC ticks (its TSC
 * packets are rewritten): MTC and TMA payloads (CTC = TSC / 40 on the
 * emulated unit, 16 bits in TMA) stay valid.  The TIME_CONV of the input
 * maps TSC to perf time.  ORDER "late" writes a piece's AUXTRACE record
 * before the switch records that lead to it (perf writes the AUX data
 * when it reads the ring: sideband about it may come later).
 *
 * usage: script_mkcpu IN.data OUT.data NCPU [MINLEN [early|late]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/perf_data.h"
#include "hwt/pt_packet.h"
#include "hwt/pt_time.h"

#define MAXT 64
#define MAXCPU 8
#define Q (40ull << 16)
#define TSC_MASK ((1ull << 56) - 1)

struct piece {
	size_t off, len;     /* bytes of the thread's stream */
	uint64_t start, end; /* TSC at its start; last time seen + margin */
	uint64_t pge_ip;     /* pieces but the first: they start at a TIP.PGE */
	uint8_t *out;	     /* what goes into the CPU's stream */
	size_t nout;
};

struct thr {
	uint32_t pid, tid, idx;
	uint8_t *d;
	size_t n;
	struct piece *p;
	size_t np, next;
	uint64_t now;  /* new time of its last scheduled piece's end */
	uint64_t born; /* time of its COMM or FORK record */
	int on_cpu[MAXCPU];
};

static struct thr thr[MAXT];
static size_t nthr;

static struct thr *thr_by_idx(uint32_t idx)
{
	for (size_t i = 0; i < nthr; i++)
		if (thr[i].idx == idx)
			return &thr[i];
	if (nthr == MAXT)
		return NULL;
	memset(&thr[nthr], 0, sizeof(thr[0]));
	thr[nthr].idx = idx;
	return &thr[nthr++];
}

static struct thr *thr_by_tid(uint32_t tid)
{
	for (size_t i = 0; i < nthr; i++)
		if (thr[i].tid == tid)
			return &thr[i];
	return NULL;
}

static size_t put(uint8_t *o, struct hwt_pt_packet *k)
{
	int n = hwt_pt_pkt_encode(o, 16, k);
	return n > 0 ? (size_t)n : 0;
}

/* Cut t's stream where its tracing is re-enabled (a TIP.PGE after a
 * TIP.PGD: the thread was in the kernel, where a switch can happen), at
 * least minlen bytes apart.  A piece after the first starts with a PSB+
 * made here (TSC, TMA, CBR, MODE.Exec as the unit writes them; no FUP:
 * tracing is off) and its TIP.PGE with the full IP, since the PSB resets
 * the last IP; the rest is the stream as recorded. */
static int cut(struct thr *t, const struct hwt_pt_config *cfg, size_t minlen, int mtc)
{
	t->p = calloc(t->n / 8 + 2, sizeof(*t->p));
	struct hwt_pt_time *tm = hwt_pt_time_alloc(cfg, NULL);
	if (!t->p || !tm)
		return -1;
	struct hwt_pt_last_ip lip;
	hwt_pt_last_ip_init(&lip);
	int en = 0, have_tsc = 0;
	uint8_t cbr = 10;
	uint64_t last = 0;
	t->np = 1;
	for (size_t o = 0; o < t->n;) {
		struct hwt_pt_packet k;
		int sz = hwt_pt_pkt_parse(t->d + o, t->n - o, &k);
		if (sz <= 0)
			break;
		struct piece *cur = &t->p[t->np - 1];
		if (k.type == HWT_PKT_TIP_PGE && !en && have_tsc && o - cur->off >= minlen) {
			cur->len = o - cur->off;
			cur->end = last + 4096;
			cur = &t->p[t->np++];
			cur->off = o;
			hwt_pt_time_query(tm, &cur->start, NULL, NULL);
		}
		hwt_pt_time_update(tm, &k, NULL);
		if (k.type == HWT_PKT_PSB)
			hwt_pt_last_ip_init(&lip);
		if (k.type == HWT_PKT_TSC && !have_tsc) {
			have_tsc = 1;
			t->p[0].start = k.u.tsc.tsc;
		}
		if (k.type == HWT_PKT_CBR)
			cbr = k.u.cbr.ratio;
		if (k.type == HWT_PKT_TIP || k.type == HWT_PKT_TIP_PGE ||
		    k.type == HWT_PKT_TIP_PGD || k.type == HWT_PKT_FUP)
			hwt_pt_last_ip_update(&lip, k.u.ip.ipc, k.u.ip.ip);
		if (k.type == HWT_PKT_TIP_PGE) {
			en = 1;
			if (cur->off == o)
				hwt_pt_last_ip_query(&lip, &cur->pge_ip);
		}
		if (k.type == HWT_PKT_TIP_PGD)
			en = 0;
		uint64_t now;
		if (have_tsc && !hwt_pt_time_query(tm, &now, NULL, NULL) && now > last)
			last = now;
		o += (size_t)sz;
	}
	hwt_pt_time_free(tm);
	if (!have_tsc) {
		fprintf(stderr, "script_mkcpu: tid %u: no TSC (record with tsc)\n", t->tid);
		return -1;
	}
	struct piece *lp = &t->p[t->np - 1];
	lp->len = t->n - lp->off;
	lp->end = last + 4096;
	for (size_t i = 0; i < t->np; i++) {
		struct piece *p = &t->p[i];
		p->out = malloc(p->len + 64);
		if (!p->out)
			return -1;
		size_t n = 0, skip = 0;
		if (i) {
			struct hwt_pt_packet k;
			memset(&k, 0, sizeof(k));
			k.type = HWT_PKT_PSB;
			n += put(p->out + n, &k);
			k.type = HWT_PKT_TSC;
			k.u.tsc.tsc = p->start;
			n += put(p->out + n, &k);
			if (mtc) {
				memset(&k, 0, sizeof(k));
				k.type = HWT_PKT_TMA;
				k.u.tma.ctc = (uint16_t)(p->start / 40);
				k.u.tma.fc = (uint16_t)(p->start % 40);
				n += put(p->out + n, &k);
			}
			memset(&k, 0, sizeof(k));
			k.type = HWT_PKT_CBR;
			k.u.cbr.ratio = cbr;
			n += put(p->out + n, &k);
			memset(&k, 0, sizeof(k));
			k.type = HWT_PKT_MODE_EXEC;
			k.u.mode_exec.csl = 1;
			k.u.mode_exec.iflag = 1;
			n += put(p->out + n, &k);
			memset(&k, 0, sizeof(k));
			k.type = HWT_PKT_PSBEND;
			n += put(p->out + n, &k);
			memset(&k, 0, sizeof(k));
			k.type = HWT_PKT_TIP_PGE;
			k.u.ip.ipc = HWT_IPC_FULL;
			k.u.ip.ip = p->pge_ip;
			n += put(p->out + n, &k);
			struct hwt_pt_packet pge;
			skip = (size_t)hwt_pt_pkt_parse(t->d + p->off, p->len, &pge);
		}
		memcpy(p->out + n, t->d + p->off + skip, p->len - skip);
		p->nout = n + p->len - skip;
	}
	return 0;
}

/* Add delta to every TSC packet of the piece (in place). */
static void shift(struct piece *p, uint64_t delta)
{
	for (size_t o = 0; o < p->nout;) {
		struct hwt_pt_packet k;
		uint8_t *b = p->out + o;
		int sz = hwt_pt_pkt_parse(b, p->nout - o, &k);
		if (sz <= 0)
			break;
		if (k.type == HWT_PKT_TSC) {
			uint64_t v = (k.u.tsc.tsc + delta) & TSC_MASK;
			for (int i = 0; i < 7; i++)
				b[1 + i] = (uint8_t)(v >> (8 * i));
		}
		o += (size_t)sz;
	}
}

static struct hwt_perf_sample_id sid_of(uint32_t pid, uint32_t tid, uint64_t time, uint64_t id,
					uint32_t cpu)
{
	struct hwt_perf_sample_id s;
	memset(&s, 0, sizeof(s));
	s.pid = pid;
	s.tid = tid;
	s.time = time;
	s.id = s.identifier = id;
	s.cpu = cpu;
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: script_mkcpu IN.data OUT.data NCPU [MINLEN]\n");
		return 2;
	}
	unsigned ncpu = (unsigned)strtoul(argv[3], NULL, 0);
	size_t minlen = argc > 4 ? strtoul(argv[4], NULL, 0) : 4096;
	int late = argc > 5 && !strcmp(argv[5], "late");
	if (!ncpu || ncpu > MAXCPU)
		return 2;
	char err[256] = "";
	struct hwt_perf_reader *r;
	if (hwt_perf_reader_open(&r, argv[1], err, sizeof(err))) {
		fprintf(stderr, "script_mkcpu: %s: %s\n", argv[1], err);
		return 1;
	}
	struct hwt_perf_intel_pt_info info;
	int have_info = 0;
	struct hwt_perf_rec_time_conv tc;
	int have_tc = 0;
	struct hwt_perf_record rec;
	while (hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type == HWT_PERF_RECORD_AUXTRACE_INFO) {
			const struct hwt_perf_rec_auxtrace_info *ai = (const void *)rec.hdr;
			have_info = !hwt_perf_intel_pt_info_parse(&info, (const uint64_t *)(ai + 1),
								  (rec.size - sizeof(*ai)) / 8);
		} else if (rec.type == HWT_PERF_RECORD_TIME_CONV && rec.size >= sizeof(tc)) {
			memcpy(&tc, rec.hdr, sizeof(tc));
			have_tc = 1;
		} else if (rec.type == HWT_PERF_RECORD_AUXTRACE) {
			struct thr *t = thr_by_idx(rec.aux_idx);
			if (!t)
				return 1;
			t->tid = rec.sid.tid;
			if (rec.aux_offset + rec.aux_size > t->n) {
				uint8_t *nd = realloc(t->d, rec.aux_offset + rec.aux_size);
				if (!nd)
					return 1;
				memset(nd + t->n, 0, rec.aux_offset + rec.aux_size - t->n);
				t->d = nd;
				t->n = rec.aux_offset + rec.aux_size;
			}
			memcpy(t->d + rec.aux_offset, rec.aux_data, rec.aux_size);
		}
	}
	if (!have_info || !nthr) {
		fprintf(stderr, "script_mkcpu: %s: no intel_pt AUXTRACE_INFO or no trace\n",
			argv[1]);
		return 1;
	}
	/* the trace event's attr (its config) */
	uint64_t config = 0;
	for (size_t i = 0; i < hwt_perf_reader_nr_attrs(r); i++)
		if (hwt_perf_reader_attr(r, i)->attr.type == info.pmu_type)
			config = hwt_perf_reader_attr(r, i)->attr.config;
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	cfg.cpuid_0x15_eax = info.tsc_ctc_ratio_d;
	cfg.cpuid_0x15_ebx = info.tsc_ctc_ratio_n;
	cfg.nom_freq = (uint8_t)info.max_nonturbo_ratio;
	if (info.mtc_freq_bits)
		cfg.mtc_freq =
		    (uint8_t)((config & info.mtc_freq_bits) >> __builtin_ctzll(info.mtc_freq_bits));
	/* pids and exit times from the sideband */
	hwt_perf_reader_rewind(r);
	while (hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_FORK || rec.type == PERF_RECORD_COMM ||
		    rec.type == PERF_RECORD_EXIT) {
			const uint32_t *pt = (const uint32_t *)(rec.hdr + 1);
			uint32_t pid = pt[0], tid = rec.type == PERF_RECORD_COMM ? pt[1] : pt[2];
			struct thr *t = thr_by_tid(tid);
			if (t && rec.type != PERF_RECORD_EXIT) {
				t->pid = pid;
				if (!t->born)
					t->born = rec.sid.time;
			}
		}
	}
	for (size_t i = 0; i < nthr; i++) {
		if (!thr[i].pid)
			thr[i].pid = thr[i].tid;
		if (cut(&thr[i], &cfg, minlen, !!(config & info.mtc_bit)))
			return 1;
	}

	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	if (!w || hwt_perf_writer_open(w, argv[2]))
		return 1;
	struct perf_event_attr a, sb;
	hwt_perf_attr_intel_pt(&a, info.pmu_type, config);
	a.inherit = 1;
	hwt_perf_attr_sideband(&sb, 1);
	uint64_t ida[MAXCPU], ids[MAXCPU];
	for (unsigned c = 0; c < ncpu; c++) {
		ida[c] = 100 + c;
		ids[c] = 200 + c;
	}
	hwt_perf_writer_add_attr(w, &a, "intel_pt//u", ida, ncpu);
	hwt_perf_writer_add_attr(w, &sb, "dummy:u", ids, ncpu);
	hwt_perf_writer_add_pmu(w, "intel_pt", info.pmu_type);
	info.per_cpu_mmaps = 1;
	info.have_sched_switch = 3; /* CPU-wide context-switch records */
	hwt_perf_writer_write_intel_pt_info(w, &info);
	struct hwt_perf_id_index_entry ix[2 * MAXCPU];
	for (unsigned c = 0; c < ncpu; c++) {
		ix[2 * c] = (struct hwt_perf_id_index_entry){ida[c], c, c, (uint64_t)-1};
		ix[2 * c + 1] = (struct hwt_perf_id_index_entry){ids[c], c, c, (uint64_t)-1};
	}
	hwt_perf_writer_write_id_index(w, ix, 2 * ncpu);
	if (have_tc)
		hwt_perf_writer_write_time_conv(w, &tc);

	/* sideband but EXIT, as recorded, on CPU 0 */
	hwt_perf_reader_rewind(r);
	while (hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type != PERF_RECORD_COMM && rec.type != PERF_RECORD_MMAP2 &&
		    rec.type != PERF_RECORD_FORK)
			continue;
		struct hwt_perf_sample_id s =
		    sid_of(rec.sid.pid, rec.sid.tid, rec.sid.time, ids[0], 0);
		if (rec.type == PERF_RECORD_COMM) {
			const struct hwt_perf_rec_comm *c = (const void *)rec.hdr;
			hwt_perf_writer_write_comm(w, c->pid, c->tid, (const char *)(c + 1),
						   !!(rec.misc & PERF_RECORD_MISC_COMM_EXEC), &s);
		} else if (rec.type == PERF_RECORD_MMAP2) {
			const struct hwt_perf_rec_mmap2 *m = (const void *)rec.hdr;
			hwt_perf_writer_write_mmap2(
			    w, m->pid, m->tid, m->addr, m->len, m->pgoff, m->prot, m->flags,
			    (const char *)rec.hdr + sizeof(*m), rec.misc, &s);
		} else {
			const struct hwt_perf_rec_fork *f = (const void *)rec.hdr;
			hwt_perf_writer_write_task(w, PERF_RECORD_FORK, f->pid, f->ppid, f->tid,
						   f->ptid, f->time, &s);
		}
	}

	/* schedule: the piece that starts first goes to the CPU free first */
	uint64_t cpu_now[MAXCPU] = {0};
	struct thr *cpu_cur[MAXCPU] = {NULL};
	uint64_t cpu_off[MAXCPU] = {0};
	size_t placed = 0;
	for (;;) {
		struct thr *t = NULL;
		for (size_t i = 0; i < nthr; i++)
			if (thr[i].next < thr[i].np &&
			    (!t || thr[i].p[thr[i].next].start < t->p[t->next].start))
				t = &thr[i];
		if (!t)
			break;
		unsigned c = 0;
		for (unsigned k = 1; k < ncpu; k++)
			if (cpu_now[k] < cpu_now[c])
				c = k;
		struct piece *p = &t->p[t->next++];
		uint64_t need = cpu_now[c] > t->now ? cpu_now[c] : t->now;
		if (need < t->born)
			need = t->born; /* perf needs to know the thread */
		need += 2000;
		uint64_t k = need > p->start ? (need - p->start + Q - 1) / Q : 0;
		uint64_t delta = k * Q, s0 = p->start + delta;
		shift(p, delta);
		/* the CPU's stream so far: its offset is the bytes placed on c;
		 * the reference is the TSC at its start (perf 6.1 needs one). */
		struct hwt_perf_auxtrace_desc d = {
		    .offset = cpu_off[c], .reference = s0, .idx = c, .tid = (uint32_t)-1, .cpu = c};
		if (late)
			hwt_perf_writer_write_auxtrace(w, &d, p->out, p->nout, NULL, 0);
		if (cpu_cur[c] != t) {
			struct thr *o = cpu_cur[c];
			if (o) { /* out: at the end of o's piece */
				struct hwt_perf_sample_id s =
				    sid_of(o->pid, o->tid, cpu_now[c] + 1, ids[c], c);
				hwt_perf_writer_write_switch(w, 1, PERF_RECORD_MISC_SWITCH_OUT,
							     t->pid, t->tid, &s);
			}
			if (!t->on_cpu[c]) {
				struct hwt_perf_sample_id s =
				    sid_of(t->pid, t->tid, s0 - 2, ida[c], c);
				hwt_perf_writer_write_itrace_start(w, t->pid, t->tid, &s);
				t->on_cpu[c] = 1;
			}
			struct hwt_perf_sample_id s = sid_of(t->pid, t->tid, s0 - 1, ids[c], c);
			hwt_perf_writer_write_switch(w, 1, 0, o ? o->pid : 0, o ? o->tid : 0, &s);
			cpu_cur[c] = t;
		}
		if (!late)
			hwt_perf_writer_write_auxtrace(w, &d, p->out, p->nout, NULL, 0);
		cpu_off[c] += (p->nout + 7) & ~(uint64_t)7;
		cpu_now[c] = p->end + delta;
		t->now = cpu_now[c];
		placed++;
	}
	for (unsigned c = 0; c < ncpu; c++)
		if (cpu_cur[c]) {
			struct thr *o = cpu_cur[c];
			struct hwt_perf_sample_id s =
			    sid_of(o->pid, o->tid, cpu_now[c] + 1, ids[c], c);
			hwt_perf_writer_write_switch(w, 1, PERF_RECORD_MISC_SWITCH_OUT, 0, 0, &s);
		}
	for (size_t i = 0; i < nthr; i++) {
		struct hwt_perf_sample_id s =
		    sid_of(thr[i].pid, thr[i].tid, thr[i].now + 10, ids[0], 0);
		hwt_perf_writer_write_task(w, PERF_RECORD_EXIT, thr[i].pid, thr[i].pid, thr[i].tid,
					   thr[i].tid, thr[i].now + 10, &s);
	}
	int rc = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	hwt_perf_reader_free(r);
	fprintf(stderr, "script_mkcpu: %zu threads, %zu pieces on %u CPUs\n", nthr, placed, ncpu);
	return rc ? 1 : 0;
}
