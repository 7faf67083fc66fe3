/* hwt/pt_time.h - Intel PT time tracking: TSC estimates from timing packets.
 *
 * Layer: lib/pt (timing).  Facts come from the Intel SDM vol. 3, chapter
 * "Intel Processor Trace", sections on TSC, TMA, MTC, CYC and CBR packets
 * and on "Tracing and timing" (CTC, the TSC:crystal ratio in CPUID leaf
 * 0x15, the nominal core:bus ratio in MSR_PLATFORM_INFO).
 *
 * Lifecycle: hwt_pt_time_alloc() with the decoder config (cpuid 0x15,
 * nom_freq, mtc_freq, errata) and switches; feed every packet, in stream
 * order, to hwt_pt_time_update() (it also acts on PSB, PSBEND and OVF);
 * query at any point; hwt_pt_time_reset() after a resync; _free().
 * The tracker copies what it needs from the config; it owns no memory
 * besides itself and never prints.
 *
 * Two parts, as in the SDM's description of timing:
 *   - time: the last TSC (or, without one, 0) advanced by MTC (via the TMA
 *     that follows TSC) and by CYC (core cycles scaled by the calibration);
 *   - calibration: the "fast-counter:cycles ratio" fcr, TSC ticks per core
 *     cycle as a fixed-point number with HWT_PT_FCR_SHIFT fraction bits,
 *     from CBR (nom_freq / ratio), from CYCs counted between two MTCs, or
 *     (lacking MTCs) between two TSCs in PSB+.
 * The arithmetic (integer truncation, wrap handling, which packets are
 * ignored when) follows what libipt's ptdump prints for the same trace, so
 * that hwt's dumps compare equal.
 */
#ifndef HWT_PT_TIME_H
#define HWT_PT_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/pt_config.h"
#include "hwt/pt_packet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* fcr is TSC ticks per core cycle << HWT_PT_FCR_SHIFT. */
#define HWT_PT_FCR_SHIFT 8

/* Switches (ptdump's option names in brackets).  Size-versioned: set
 * .size = sizeof(struct hwt_pt_time_opts), or pass NULL for all off. */
struct hwt_pt_time_opts {
	size_t size;
	uint8_t no_tcal;	  /* [--no-tcal] no calibration: CYCs are lost */
	uint8_t no_cyc;		  /* [--no-cyc] ignore CYC packets entirely */
	uint8_t no_wall_clock;	  /* [--no-wall-clock] time without a TSC is fine */
	uint8_t keep_tcal_on_ovf; /* [--keep-tcal-on-ovf] OVF keeps the fcr */
};

/* What one update did, for callers that report problems (hwt dump prints
 * each non-zero field as a diagnostic).  All zero when nothing happened. */
struct hwt_pt_time_report {
	int fcr_err;	  /* CYC: no calibration was available (HWT_ERR_NO_TIME) */
	int tcal_err;	  /* the calibration update failed */
	int time_err;	  /* the time update failed; HWT_ERR_NO_CALIBRATION for
			   * a CYC that could not be used (counted as lost) */
	uint8_t timing;	  /* the packet was a timing packet the tracker used */
	uint8_t new_time; /* ... and it may have changed the time (not CBR) */
	uint8_t new_tcal; /* ... and it may have changed the calibration
			   * (TSC, CBR, MTC; not TMA or CYC) */
};

struct hwt_pt_time;

/* cfg: cpuid_0x15_eax/ebx, nom_freq, mtc_freq and errata.skl168 are used.
 * Returns NULL when out of memory. */
struct hwt_pt_time *hwt_pt_time_alloc(const struct hwt_pt_config *cfg,
				      const struct hwt_pt_time_opts *opts);
void hwt_pt_time_free(struct hwt_pt_time *t);
/* Forget all time and calibration (e.g. after resynchronizing). */
void hwt_pt_time_reset(struct hwt_pt_time *t);

/* Feed one packet.  Timing packets (TSC, TMA, MTC, CYC, CBR) update time
 * and calibration; PSB/PSBEND delimit PSB+ (TSC and CBR inside PSB+ are
 * used for calibration differently); OVF calls hwt_pt_time_ovf(); other
 * packets are ignored.  report may be NULL.  Returns 0 or the first
 * negative error of the report (the tracker stays usable either way). */
int hwt_pt_time_update(struct hwt_pt_time *t, const struct hwt_pt_packet *pkt,
		       struct hwt_pt_time_report *report);

/* Hooks for decoders that consume PSB/PSBEND/OVF themselves (update()
 * calls these for those packets; all three are idempotent, so calling a
 * hook and update() for the same packet is harmless).  Between psb() and
 * psbend(), TSC and CBR count as PSB+ packets. */
void hwt_pt_time_psb(struct hwt_pt_time *t);
void hwt_pt_time_psbend(struct hwt_pt_time *t);
/* An overflow: the calibration is restarted (keep_tcal_on_ovf keeps the
 * fcr itself and restarts only the measurement); the time is kept. */
void hwt_pt_time_ovf(struct hwt_pt_time *t);

/* The current TSC estimate and the number of MTC and CYC packets that
 * could not be used since the last TSC (each pointer may be NULL).
 * Returns 0, or HWT_ERR_NO_TIME when no TSC has been seen yet: *tsc is
 * still set (relative time from 0), and no_wall_clock turns this into 0. */
int hwt_pt_time_query(const struct hwt_pt_time *t, uint64_t *tsc, uint32_t *lost_mtc,
		      uint32_t *lost_cyc);
/* The last core:bus ratio (CBR), or HWT_ERR_NO_CBR. */
int hwt_pt_time_cbr(const struct hwt_pt_time *t, uint32_t *cbr);
/* The calibration (fixed point, HWT_PT_FCR_SHIFT), or HWT_ERR_NO_TIME when
 * none is available yet (also with no_tcal). */
int hwt_pt_time_fcr(const struct hwt_pt_time *t, uint64_t *fcr);

#ifdef __cplusplus
}
#endif
#endif /* HWT_PT_TIME_H */
