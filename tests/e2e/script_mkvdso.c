/* tests/e2e/script_mkvdso.c - test helper for tests/e2e/script_vdso.sh:
 * a per-thread intel_pt recording of a thread that runs vdso code.  The
 * file has a [vdso] MMAP2 at ADDR (0x2000 bytes), the vdso's BUILD_ID
 * feature entry (BUILDID in hex) and a trace made with hwt's packet
 * encoder: PSB, PSBEND, MODE.Exec (64-bit), TIP.PGE(ADDR + ENTRY), and
 * the end of the trace: the thread runs from ENTRY up to the first
 * instruction that needs trace (a conditional or indirect branch).
 * Decoding it needs the vdso's bytes.
 *
 * usage: script_mkvdso OUT ADDR ENTRY BUILDID */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hwt/perf_data.h"
#include "hwt/pt_packet.h"

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: script_mkvdso OUT ADDR ENTRY BUILDID\n");
		return 2;
	}
	uint64_t addr = strtoull(argv[2], NULL, 0), entry = strtoull(argv[3], NULL, 0);
	uint8_t id[20];
	size_t len = strlen(argv[4]) / 2;
	if (len < 1 || len > 20)
		return 2;
	for (size_t i = 0; i < len; i++) {
		unsigned v;
		if (sscanf(argv[4] + 2 * i, "%2x", &v) != 1)
			return 2;
		id[i] = (uint8_t)v;
	}
	const uint32_t pid = 4242, pmu = 8;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	if (!w || hwt_perf_writer_open(w, argv[1]))
		return 1;
	struct perf_event_attr a, sb;
	hwt_perf_attr_intel_pt(&a, pmu, HWT_IPT_CFG_PT | HWT_IPT_CFG_BRANCH);
	hwt_perf_attr_sideband(&sb, 0);
	uint64_t id1 = 1, id2 = 2;
	hwt_perf_writer_add_attr(w, &a, "intel_pt//u", &id1, 1);
	hwt_perf_writer_add_attr(w, &sb, "dummy:u", &id2, 1);
	hwt_perf_writer_add_pmu(w, "intel_pt", pmu);
	struct hwt_perf_intel_pt_info info;
	hwt_perf_intel_pt_info_init(&info);
	info.pmu_type = pmu;
	hwt_perf_writer_write_intel_pt_info(w, &info);
	struct hwt_perf_sample_id sid = {.pid = pid, .tid = pid, .time = 1000, .id = 2};
	hwt_perf_writer_write_comm(w, pid, pid, "vdso_user", 1, &sid);
	sid.time = 1100;
	hwt_perf_writer_write_mmap2(w, pid, pid, addr, 0x2000, 0, PROT_READ | PROT_EXEC,
				    MAP_PRIVATE, "[vdso]", PERF_RECORD_MISC_USER, &sid);
	hwt_perf_writer_add_build_id(w, -1, PERF_RECORD_MISC_USER, id, len, "[vdso]");

	uint8_t tr[64];
	size_t n = 0;
	struct hwt_pt_packet k;
	memset(&k, 0, sizeof(k));
	k.type = HWT_PKT_PSB;
	n += (size_t)hwt_pt_pkt_encode(tr + n, sizeof(tr) - n, &k);
	k.type = HWT_PKT_PSBEND;
	n += (size_t)hwt_pt_pkt_encode(tr + n, sizeof(tr) - n, &k);
	memset(&k, 0, sizeof(k));
	k.type = HWT_PKT_MODE_EXEC;
	k.u.mode_exec.csl = 1;
	n += (size_t)hwt_pt_pkt_encode(tr + n, sizeof(tr) - n, &k);
	memset(&k, 0, sizeof(k));
	k.type = HWT_PKT_TIP_PGE;
	k.u.ip.ipc = HWT_IPC_FULL;
	k.u.ip.ip = addr + entry;
	n += (size_t)hwt_pt_pkt_encode(tr + n, sizeof(tr) - n, &k);
	struct hwt_perf_auxtrace_desc d = {.offset = 0, .idx = 0, .tid = pid, .cpu = (uint32_t)-1};
	hwt_perf_writer_write_auxtrace(w, &d, tr, n, NULL, 0);
	sid.time = 2000;
	hwt_perf_writer_write_task(w, PERF_RECORD_EXIT, pid, pid, pid, pid, 2000, &sid);
	int e = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	return e ? 1 : 0;
}
