/* lib/out/ptxed.h - ptxed-compatible instruction flow output.
 *
 * hwt_ptxed_run() decodes a trace with the instruction or the block
 * decoder and prints what libipt's "ptxed --no-inst" prints: one line per
 * instruction address ("? " before speculative ones), events in brackets,
 * errors as "[offset, ip: kind: message]", and counters with --stat.
 */
#ifndef HWT_LIB_OUT_PTXED_H
#define HWT_LIB_OUT_PTXED_H

#include <stdio.h>

#include "hwt/image.h"
#include "hwt/pt_config.h"
#include "hwt/pt_flow.h"

struct hwt_ptxed_options {
	size_t size; /* sizeof(struct hwt_ptxed_options) */
	uint8_t block_decoder;
	uint8_t resync_on_error;
	uint8_t event_ip, event_time, event_tick, event_iflags;
	uint8_t show_blocks, end_on_call, end_on_jump;
	uint8_t quiet;
	uint8_t stat, stat_insn, stat_blocks;
	uint8_t keep_tcal_on_ovf;
};

struct hwt_ptxed_stats {
	uint64_t insn, blocks;
};

/* Decode cfg->buf against img and print to out.  Returns 0, or a negative
 * error for setup problems (the decode errors themselves are printed). */
int hwt_ptxed_run(FILE *out, const struct hwt_pt_config *cfg, const struct hwt_image *img,
		  const struct hwt_ptxed_options *opt, struct hwt_ptxed_stats *stats);

#endif
