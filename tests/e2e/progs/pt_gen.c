/* tests/e2e/progs/pt_gen.c - writes perf.data files with libhwt's writer
 * for tests/e2e/perf_data.sh, which checks them with perf 6.1.
 *
 *   pt_gen sideband OUT < SPEC
 *     SPEC lines: "comm PID TID NAME EXEC TIME", "mmap2 PID TID ADDR LEN
 *     PGOFF PROT PATH TIME", "exit PID PPID TID PTID TIME" (numbers in C
 *     syntax); each becomes one record of a dummy:u event.
 *   pt_gen pt OUT BINARY MAP_ADDR MAP_LEN MAP_PGOFF START TAIL PMU_TYPE
 *     A per-thread intel_pt recording of tests/e2e/progs/pt_target.S:
 *     MMAP2 of BINARY, and an Intel PT stream encoded with hwt's packet
 *     encoder: PSB, PSBEND, MODE.Exec(64), TIP.PGE(START), TNT 111110,
 *     TIP(TAIL), TIP.PGD(suppressed), split over two AUXTRACE parts.
 *   pt_gen ptcpu ...same...
 *     The same as a per-CPU recording on CPU 1 with timestamps: TSC and
 *     CBR in the PSB+, tsc in the config, TIME_CONV (perf time == TSC),
 *     ITRACE_START giving the CPU's thread, ids per CPU in ID_INDEX.
 * Exit 0 on success, 1 with a message on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/perf_data.h"
#include "hwt/pt_packet.h"

static int fail(const char *what, int err)
{
	fprintf(stderr, "pt_gen: %s: %s\n", what, hwt_errstr(err));
	return 1;
}

static unsigned long long num(const char *s)
{
	return strtoull(s, NULL, 0);
}

static struct hwt_perf_writer *open_writer(const char *out)
{
	struct hwt_perf_writer_config cfg;
	hwt_perf_writer_config_init(&cfg);
	static char *argv[] = {"pt_gen", "test"};
	cfg.argc = 2;
	cfg.argv = argv;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(&cfg);
	if (!w || hwt_perf_writer_open(w, out)) {
		fprintf(stderr, "pt_gen: cannot create %s\n", out);
		hwt_perf_writer_free(w);
		return NULL;
	}
	return w;
}

static void sideband_attr(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_IDENTIFIER;
	a->read_format = PERF_FORMAT_ID;
	a->exclude_kernel = a->exclude_hv = 1;
	a->mmap = a->comm = a->task = a->mmap2 = a->comm_exec = 1;
	a->sample_id_all = 1;
}

static int sideband(const char *out)
{
	struct hwt_perf_writer *w = open_writer(out);
	if (!w)
		return 1;
	struct perf_event_attr a;
	sideband_attr(&a);
	uint64_t id = 7;
	int e = hwt_perf_writer_add_attr(w, &a, "dummy:u", &id, 1);
	if (e < 0)
		return fail("add_attr", e);
	char line[1024], kind[32], s[512];
	unsigned long long v[8];
	while (fgets(line, sizeof(line), stdin)) {
		struct hwt_perf_sample_id sid = {0};
		sid.id = id;
		if (sscanf(line, "comm %lli %lli %511s %lli %lli", &v[0], &v[1], s, &v[2], &v[3]) ==
		    5) {
			sid.pid = (uint32_t)v[0], sid.tid = (uint32_t)v[1], sid.time = v[3];
			e = hwt_perf_writer_write_comm(w, sid.pid, sid.tid, s, (int)v[2], &sid);
		} else if (sscanf(line, "mmap2 %lli %lli %lli %lli %lli %lli %511s %lli", &v[0],
				  &v[1], &v[2], &v[3], &v[4], &v[5], s, &v[6]) == 8) {
			sid.pid = (uint32_t)v[0], sid.tid = (uint32_t)v[1], sid.time = v[6];
			e = hwt_perf_writer_write_mmap2(w, sid.pid, sid.tid, v[2], v[3], v[4],
							(uint32_t)v[5], 2 /* MAP_PRIVATE */, s, 0,
							&sid);
		} else if (sscanf(line, "exit %lli %lli %lli %lli %lli", &v[0], &v[1], &v[2], &v[3],
				  &v[4]) == 5) {
			sid.pid = (uint32_t)v[0], sid.tid = (uint32_t)v[2], sid.time = v[4];
			e = hwt_perf_writer_write_task(w, PERF_RECORD_EXIT, (uint32_t)v[0],
						       (uint32_t)v[1], (uint32_t)v[2],
						       (uint32_t)v[3], v[4], &sid);
		} else if (sscanf(line, "%31s", kind) == 1) {
			fprintf(stderr, "pt_gen: bad spec line: %s", line);
			return 1;
		} else {
			continue;
		}
		if (e)
			return fail("write", e);
	}
	e = hwt_perf_writer_write_finished_round(w);
	if (!e)
		e = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	return e ? fail("finish", e) : 0;
}

static int put(uint8_t *buf, size_t *len, size_t cap, struct hwt_pt_packet *p)
{
	int n = hwt_pt_pkt_encode(buf + *len, cap - *len, p);
	if (n < 0)
		return n;
	*len += (size_t)n;
	return 0;
}

static int pt(char **argv, int per_cpu)
{
	const char *out = argv[0], *bin = argv[1];
	uint64_t maddr = num(argv[2]), mlen = num(argv[3]), mpgoff = num(argv[4]);
	uint64_t start = num(argv[5]), tail = num(argv[6]);
	uint32_t pmu_type = (uint32_t)num(argv[7]);
	const uint32_t pid = 4242, cpu = 1;
	/* per-CPU: TSC on, perf time == TSC (mult 1, shift 0, zero 0). */
	const uint64_t tsc = 5000;

	/* The trace. */
	uint8_t tr[256];
	size_t n = 0;
	struct hwt_pt_packet p;
	int e = 0;
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_PSB;
	e |= put(tr, &n, sizeof(tr), &p);
	if (per_cpu) {
		memset(&p, 0, sizeof(p));
		p.type = HWT_PKT_TSC;
		p.u.tsc.tsc = tsc;
		e |= put(tr, &n, sizeof(tr), &p);
		memset(&p, 0, sizeof(p));
		p.type = HWT_PKT_CBR;
		p.u.cbr.ratio = 20;
		e |= put(tr, &n, sizeof(tr), &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_PSBEND;
	e |= put(tr, &n, sizeof(tr), &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_MODE_EXEC;
	p.u.mode_exec.csl = 1;
	e |= put(tr, &n, sizeof(tr), &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_TIP_PGE;
	p.u.ip.ipc = HWT_IPC_SEXT_48;
	p.u.ip.ip = start;
	e |= put(tr, &n, sizeof(tr), &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_TNT8;
	p.u.tnt.bits = 6;
	p.u.tnt.payload = 0x3e; /* oldest first: 1 1 1 1 1 0 */
	e |= put(tr, &n, sizeof(tr), &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_TIP;
	p.u.ip.ipc = HWT_IPC_UPDATE_16;
	p.u.ip.ip = tail & 0xffff;
	e |= put(tr, &n, sizeof(tr), &p);
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_TIP_PGD;
	p.u.ip.ipc = HWT_IPC_SUPPRESSED;
	e |= put(tr, &n, sizeof(tr), &p);
	if (e)
		return fail("encode", e);

	struct hwt_perf_writer *w = open_writer(out);
	if (!w)
		return 1;
	struct perf_event_attr a;
	/* Linux intel_pt format bits: pt, branch, tsc (per-CPU only; without
	 * it perf decodes "timeless"). */
	hwt_perf_attr_intel_pt(
	    &a, pmu_type, HWT_IPT_CFG_PT | HWT_IPT_CFG_BRANCH | (per_cpu ? HWT_IPT_CFG_TSC : 0));
	a.inherit = (unsigned)per_cpu;
	/* per-CPU: one id per CPU (0, 1); per-thread: one id. */
	uint64_t pt_ids[2] = {11, 13}, sb_ids[2] = {12, 14};
	size_t nids = per_cpu ? 2 : 1;
	uint64_t pt_id = pt_ids[per_cpu ? cpu : 0], sb_id = sb_ids[per_cpu ? cpu : 0];
	e = hwt_perf_writer_add_attr(w, &a, "intel_pt//u", pt_ids, nids);
	hwt_perf_attr_sideband(&a, per_cpu);
	if (e >= 0)
		e = hwt_perf_writer_add_attr(w, &a, "dummy:u", sb_ids, nids);
	if (e >= 0)
		e = hwt_perf_writer_add_pmu(w, "intel_pt", pmu_type);
	if (e < 0)
		return fail("attrs", e);

	struct hwt_perf_intel_pt_info info;
	hwt_perf_intel_pt_info_init(&info);
	info.pmu_type = pmu_type;
	info.per_cpu_mmaps = (uint8_t)per_cpu;
	info.cap_user_time_zero = (uint8_t)per_cpu;
	info.time_mult = 1;
	info.time_shift = 0;
	info.time_zero = 0;
	e = hwt_perf_writer_write_intel_pt_info(w, &info);
	struct hwt_perf_id_index_entry idx[4];
	for (size_t i = 0; i < nids; i++) {
		uint64_t c = per_cpu ? i : (uint64_t)-1, t = per_cpu ? (uint64_t)-1 : pid;
		idx[2 * i] = (struct hwt_perf_id_index_entry){pt_ids[i], i, c, t};
		idx[2 * i + 1] = (struct hwt_perf_id_index_entry){sb_ids[i], i, c, t};
	}
	if (!e)
		e = hwt_perf_writer_write_id_index(w, idx, 2 * nids);
	if (!e && per_cpu) {
		struct hwt_perf_rec_time_conv tc;
		memset(&tc, 0, sizeof(tc));
		tc.time_mult = 1;
		tc.cap_user_time_zero = 1;
		e = hwt_perf_writer_write_time_conv(w, &tc);
	}
	struct hwt_perf_sample_id sid = {
	    .pid = pid, .tid = pid, .time = 1000, .id = sb_id, .cpu = per_cpu ? cpu : 0};
	if (!e)
		e = hwt_perf_writer_write_comm(w, pid, pid, "pt_target", 1, &sid);
	sid.time = 1100;
	if (!e)
		e = hwt_perf_writer_write_mmap2(w, pid, pid, maddr, mlen, mpgoff, 5, 2, bin, 0,
						&sid);
	sid.id = pt_id;
	sid.time = 1200;
	if (!e)
		e = hwt_perf_writer_write_itrace_start(w, pid, pid, &sid);
	sid.time = tsc + 1000;
	if (!e)
		e = hwt_perf_writer_write_aux(w, 0, n, 0, &sid);
	struct hwt_perf_auxtrace_desc d = {.offset = 0,
					   .reference = per_cpu ? tsc + 1000 : 0,
					   .idx = per_cpu ? cpu : 0,
					   .tid = per_cpu ? (uint32_t)-1 : pid,
					   .cpu = per_cpu ? cpu : (uint32_t)-1};
	/* Split like a wrapped ring read: two parts, one record. */
	if (!e)
		e = hwt_perf_writer_write_auxtrace(w, &d, tr, 20, tr + 20, n - 20);
	sid.id = sb_id;
	sid.time = tsc + 2000;
	if (!e)
		e = hwt_perf_writer_write_task(w, PERF_RECORD_EXIT, pid, pid, pid, pid, sid.time,
					       &sid);
	if (!e)
		e = hwt_perf_writer_write_finished_round(w);
	if (!e)
		e = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	return e ? fail("write", e) : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "sideband"))
		return sideband(argv[2]);
	if (argc == 10 && !strcmp(argv[1], "pt"))
		return pt(argv + 2, 0);
	if (argc == 10 && !strcmp(argv[1], "ptcpu"))
		return pt(argv + 2, 1);
	fprintf(stderr, "usage: pt_gen sideband OUT < SPEC | pt|ptcpu OUT BINARY MAP_ADDR MAP_LEN "
			"MAP_PGOFF START TAIL PMU_TYPE\n");
	return 1;
}
