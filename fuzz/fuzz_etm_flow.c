/* fuzz/fuzz_etm_flow.c - libFuzzer target for the cs_etm recording
 * decoder (lib/etm on OpenCSD, through hwt/decode.h).
 *
 * Input layout: byte 0 selects the options (bit 0: raw ETMv4 bytes,
 * AUX flag 0x100, else CoreSight frames; bit 1: instructions wanted;
 * bit 2: with their bytes and classes; bit 3: the trace in two AUXTRACE
 * chunks); bytes 1-2 give the code length N (little endian, at most
 * 4096); the next N bytes are A64 code mapped at 0x400000 (a file in
 * memory); the rest is the trace.  The perf.data (one thread, the
 * emulated unit's cs_etm AUXTRACE_INFO) is written with hwt's writer into
 * a memory file.  Checked: no crash, no sanitizer report, termination,
 * instructions and branch sources inside the code, 4-byte instructions,
 * gap offsets inside the trace.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwt/decode.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"

#include "fuzz.h"

#define CODE_MAX 4096
#define ORG 0x400000ull

struct got {
	size_t ncode, ntrace;
	uint64_t insns, branches, gaps;
};

static void on_insn(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		    const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct got *g = arg;
	ENSURE(in->size == 4);
	ENSURE(in->ip >= ORG && in->ip + 4 <= ORG + g->ncode);
	g->insns++;
}

static void on_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		      const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct got *g = arg;
	ENSURE(kind >= 0 && kind < HWT_BR_NKINDS);
	if (kind != HWT_BR_ASYNC)
		ENSURE(from >= ORG && from + 4 <= ORG + g->ncode);
	g->branches++;
}

static void on_gap(void *arg, struct hwt_dec_thread *t, uint64_t off, uint64_t ip, int err)
{
	struct got *g = arg;
	ENSURE(err < 0);
	ENSURE(off <= g->ntrace + 16);
	g->gaps++;
}

static struct hwt_perf_writer *writer(int fd, int raw)
{
	struct hwt_perf_writer_config wc;
	hwt_perf_writer_config_init(&wc);
	wc.hostname = wc.osrelease = wc.version = wc.arch = wc.cpudesc = "fuzz";
	wc.cpuid = "0x00000000410fd070";
	wc.nr_cpus_online = wc.nr_cpus_avail = 1;
	wc.total_mem_kb = 1;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(&wc);
	if (!w || hwt_perf_writer_open_fd(w, fd)) {
		hwt_perf_writer_free(w);
		return NULL;
	}
	struct perf_event_attr a, sb;
	hwt_perf_attr_sideband(&a, 0);
	a.type = 9;
	hwt_perf_attr_sideband(&sb, 0);
	uint64_t id1 = 1, id2 = 2;
	hwt_perf_writer_add_attr(w, &a, raw ? "cs_etm/raw/u" : "cs_etm//u", &id1, 1);
	hwt_perf_writer_add_attr(w, &sb, "dummy:u", &id2, 1);
	hwt_perf_writer_add_pmu(w, "cs_etm", 9);
	/* metadata v1: header, one ETMv4 block (a Cortex-A57's registers) */
	uint64_t priv[13] = {1,	   (9ull << 32) | 1, 0,		  0x4040404040404040ull, 0, 7,	 0,
			     0x10, 0x28000ea1u,	     0x4100f403u, 0x00000488u,		 0, 0xcc};
	hwt_perf_writer_write_auxtrace_info(w, HWT_PERF_AUXTRACE_CS_ETM, priv, 13);
	return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	uint8_t sel = data[0];
	size_t ncode = (size_t)data[1] | (size_t)data[2] << 8;
	if (ncode > CODE_MAX)
		ncode = CODE_MAX;
	if (ncode > size - 3)
		ncode = size - 3;
	const uint8_t *trace = data + 3 + ncode;
	size_t ntrace = size - 3 - ncode;
	int cfd = memfd_create("code", MFD_CLOEXEC);
	int dfd = memfd_create("data", MFD_CLOEXEC);
	ENSURE(cfd >= 0 && dfd >= 0);
	ENSURE(write(cfd, data + 3, ncode) == (ssize_t)ncode);
	char cpath[64], dpath[64];
	snprintf(cpath, sizeof(cpath), "/proc/self/fd/%d", cfd);
	snprintf(dpath, sizeof(dpath), "/proc/self/fd/%d", dfd);
	struct hwt_perf_writer *w = writer(dfd, sel & 1);
	ENSURE(w);
	struct hwt_perf_sample_id s;
	memset(&s, 0, sizeof(s));
	s.pid = s.tid = 100;
	s.id = 2;
	hwt_perf_writer_write_comm(w, 100, 100, "prog", 1, &s);
	if (ncode)
		hwt_perf_writer_write_mmap2(w, 100, 100, ORG, (ncode + 4095) & ~4095ull, 0,
					    PROT_READ | PROT_EXEC, MAP_PRIVATE, cpath, 0, &s);
	size_t cut = sel & 8 ? ntrace / 2 : ntrace;
	struct hwt_perf_auxtrace_desc d = {.offset = 0, .idx = 0, .tid = 100, .cpu = 0};
	if (cut)
		hwt_perf_writer_write_auxtrace(w, &d, trace, cut, NULL, 0);
	hwt_perf_writer_write_aux(w, 0, cut, sel & 1 ? 0x100 : 0, &s);
	if (ntrace > cut) {
		d.offset = cut;
		hwt_perf_writer_write_auxtrace(w, &d, trace + cut, ntrace - cut, NULL, 0);
		hwt_perf_writer_write_aux(w, cut, ntrace - cut, sel & 1 ? 0x100 : 0, &s);
	}
	ENSURE(hwt_perf_writer_finish(w) == 0);
	hwt_perf_writer_free(w);

	struct got g = {.ncode = ncode, .ntrace = ntrace};
	struct hwt_decode_consumer c;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.arg = &g;
	c.flags = sel & 4 ? HWT_DEC_WANT_RAW : 0;
	c.insn = sel & 2 ? on_insn : NULL;
	c.branch = on_branch;
	c.gap = on_gap;
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.path = dpath;
	cfg.consumer = &c;
	cfg.buildid_dir = "/nonexistent";
	struct hwt_decoder *dec = NULL;
	if (hwt_decoder_alloc(&dec, &cfg) == 0) {
		int rc = hwt_decoder_run(dec);
		ENSURE(rc <= 0);
		ENSURE(hwt_decoder_step(dec) == rc);
		hwt_decoder_free(dec);
	}
	close(cfd);
	close(dfd);
	return 0;
}
