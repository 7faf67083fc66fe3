/* fuzz/fuzz_pt_flow.c - libFuzzer target for the instruction and block
 * decoders.
 *
 * Input layout: byte 0 selects the decoder (bit 0: block decoder) and the
 * errata, filter, tick, iflags, end-on-call options (bits 1-6); bytes 1-2
 * give the code length N (little endian, at most 512); the next N bytes
 * are code mapped at 0x1000 and again at 0x100000 (where the corpus
 * streams point); the rest is the trace.  Seeds are
 * made from corpus tests by fuzz/fuzz_pt_flow.seeds.sh.  Checked: no crash, no
 * sanitizer report, termination within a bounded number of steps (every
 * decoder call either consumes trace, yields an instruction bounded by the
 * trace's branch capacity, or fails and is followed by a resync/sync that
 * moves forward), and offsets that never run past the trace.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_flow.h"

#include "fuzz.h"

#define CODE_MAX 512
/* A loop of direct jumps is valid trace-free execution (no packets), so a
 * decoder may legitimately yield instructions forever; bound the total. */
#define MAX_STEPS 200000
#define MAX_INSNS 1000000

static int drain_events_insn(struct hwt_pt_insn_decoder *d, int st)
{
	struct hwt_pt_event ev;
	int n = 0;
	while (st >= 0 && (st & HWT_PTS_EVENT_PENDING) && n++ < 1000)
		st = hwt_pt_insn_event(d, &ev);
	return st;
}

static int drain_events_block(struct hwt_pt_block_decoder *d, int st)
{
	struct hwt_pt_event ev;
	int n = 0;
	while (st >= 0 && (st & HWT_PTS_EVENT_PENDING) && n++ < 1000)
		st = hwt_pt_block_event(d, &ev);
	return st;
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
	const uint8_t *code = data + 3;
	size_t ntrace = size - 3 - ncode;
	/* exact-size copies so ASan sees any overread */
	uint8_t *trace = malloc(ntrace ? ntrace : 1);
	uint8_t *codecopy = malloc(ncode ? ncode : 1);
	memcpy(trace, data + 3 + ncode, ntrace);
	memcpy(codecopy, code, ncode);

	struct hwt_image *img = hwt_image_alloc();
	if (img && ncode) {
		hwt_image_add_mem(img, codecopy, ncode, 0x1000);
		hwt_image_add_mem(img, codecopy, ncode, 0x100000);
	}
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	cfg.buf.begin = trace;
	cfg.buf.end = trace + ntrace;
	if (sel & 2) {
		cfg.cpu.vendor = HWT_CPU_INTEL;
		cfg.cpu.family = 6;
		cfg.cpu.model = (sel & 4) ? 61 : 78; /* bdm / skl errata */
		hwt_pt_cpu_errata(&cfg.errata, &cfg.cpu);
	}
	if (sel & 8) {
		cfg.addr_filter.cfg[0] = 1;
		cfg.addr_filter.a[0] = 0x1000;
		cfg.addr_filter.b[0] = 0x10ff;
	}
	struct hwt_pt_flow_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	opt.query.size = sizeof(opt.query);
	opt.query.enable_tick_events = !!(sel & 16);
	opt.query.enable_iflags_events = !!(sel & 32);
	opt.end_on_call = !!(sel & 64);

	long steps = 0;
	if (img && (sel & 1)) {
		struct hwt_pt_block_decoder *d = hwt_pt_block_alloc(&cfg, img, &opt);
		if (d) {
			int st = hwt_pt_block_sync_forward(d);
			long insns = 0;
			while (st != HWT_ERR_EOS && steps++ < MAX_STEPS && insns < MAX_INSNS) {
				if (st < 0) {
					st = hwt_pt_block_sync_forward(d);
					continue;
				}
				st = drain_events_block(d, st);
				if (st < 0 || (st & HWT_PTS_EOS)) {
					if (st >= 0)
						break;
					continue;
				}
				struct hwt_pt_block b;
				st = hwt_pt_block_next(d, &b);
				if (st >= 0) {
					ENSURE(b.ninsn <= HWT_PT_BLOCK_MAX_INSN);
					insns += b.ninsn;
					if (b.ninsn)
						ENSURE(b.ips[b.ninsn - 1] == b.end_ip);
				}
				uint64_t off = 0;
				if (hwt_pt_block_offset(d, &off) == 0)
					ENSURE(off <= ntrace);
			}
			hwt_pt_block_free(d);
		}
	} else if (img) {
		struct hwt_pt_insn_decoder *d = hwt_pt_insn_alloc(&cfg, img, &opt);
		if (d) {
			int st = hwt_pt_insn_sync_forward(d);
			while (st != HWT_ERR_EOS && steps++ < MAX_INSNS) {
				if (st < 0) {
					st = hwt_pt_insn_sync_forward(d);
					continue;
				}
				st = drain_events_insn(d, st);
				if (st < 0 || (st & HWT_PTS_EOS)) {
					if (st >= 0)
						break;
					continue;
				}
				struct hwt_pt_insn in;
				st = hwt_pt_insn_next(d, &in);
				if (st >= 0)
					ENSURE(in.size <=
					       15); /* 0: no instruction (an event came first) */
				uint64_t off = 0;
				if (hwt_pt_insn_offset(d, &off) == 0)
					ENSURE(off <= ntrace);
			}
			hwt_pt_insn_free(d);
		}
	}
	hwt_image_free(img);
	free(trace);
	free(codecopy);
	return 0;
}
