/* lib/out/ptdump.h - render Intel PT packets the way libipt's ptdump does.
 *
 * One struct hwt_ptdump per dumped stream: it holds the options and the
 * state behind the optional columns (last IP, time and calibration, the
 * previous values for deltas).  For each decoded packet,
 * hwt_ptdump_packet() writes into a caller buffer the diagnostic lines the
 * packet raised ("[<offset>: <what>: <error>]"), then the packet line.
 * Nothing is printed here; the caller writes the text where it wants.
 *
 * Line: [offset] [raw bytes] mnemonic [payload] [tracking-id tracking-value]
 * with ptdump's column widths (the corpus compares whitespace-insensitively
 * anyway).  Tracking columns: pip -> cr3, vmcs -> vmcs, cfe/evd -> type,
 * --lastip -> ip, --exec-mode -> em, --time -> tsc, --tcal -> fcr.
 */
#ifndef HWT_OUT_PTDUMP_H
#define HWT_OUT_PTDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/pt_config.h"
#include "hwt/pt_packet.h"
#include "hwt/pt_time.h"

/* Room hwt_ptdump_packet() may need for one packet (line + diagnostics). */
#define HWT_PTDUMP_MAX_TEXT 1024

struct hwt_ptdump_opts {
	size_t size;			   /* sizeof(struct hwt_ptdump_opts) */
	uint8_t no_offset;		   /* --no-offset */
	uint8_t raw;			   /* --raw: packet bytes column */
	uint8_t lastip;			   /* --lastip */
	uint8_t exec_mode;		   /* --exec-mode */
	uint8_t time;			   /* --time: estimated TSC on timing packets */
	uint8_t tcal;			   /* --tcal: calibration on timing packets */
	uint8_t time_delta;		   /* --time-delta: show both as deltas */
	uint8_t quiet;			   /* --quiet: diagnostics only */
	uint8_t no_pad;			   /* --no-pad: hide PAD */
	uint8_t no_timing;		   /* --no-timing: hide timing packets */
	struct hwt_pt_time_opts time_opts; /* no_tcal, no_cyc, no_wall_clock,
					    * keep_tcal_on_ovf (no_cyc also hides CYC) */
};

struct hwt_ptdump;

/* cfg: timing values and errata (copied).  NULL on out of memory. */
struct hwt_ptdump *hwt_ptdump_alloc(const struct hwt_pt_config *cfg,
				    const struct hwt_ptdump_opts *opts);
void hwt_ptdump_free(struct hwt_ptdump *d);
/* Forget all tracking state (ptdump does this after resynchronizing). */
void hwt_ptdump_reset(struct hwt_ptdump *d);

/* Render the packet pkt found at offset; raw points at its pkt->size bytes
 * (needed only with opts.raw; may be NULL otherwise).  out must have
 * HWT_PTDUMP_MAX_TEXT bytes of room.  Returns the number of bytes written
 * (no NUL terminator). */
size_t hwt_ptdump_packet(struct hwt_ptdump *d, uint64_t offset, const struct hwt_pt_packet *pkt,
			 const uint8_t *raw, char *out);

/* Render one diagnostic line "[<offset>: <what>: <errstr(err)>]\n" (or
 * "[<offset>: <what>]\n" when err is 0) into out (room: 128 + strlen(what)).
 * Returns the bytes written. */
size_t hwt_ptdump_diag(char *out, uint64_t offset, const char *what, int err);

#endif /* HWT_OUT_PTDUMP_H */
