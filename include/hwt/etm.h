/* hwt/etm.h - Arm CoreSight ETMv4 instruction trace (cs_etm): packet
 * listing through OpenCSD (Debian libopencsd).
 *
 * hwt_etm_dump walks a buffer of ETMv4 trace, CoreSight frame-formatted
 * (16-byte frames, memory aligned, one or all trace IDs) or raw (one
 * source, as ETE/TRBE write it), and hands every packet to a callback as
 * one line of text (OpenCSD's packet printer): its offset in the buffer,
 * its trace ID and the text.  Decoding restarts at the next A-sync after
 * damage; bad packets come out as lines too.  Takes memory and a callback,
 * never files; no global state of its own.
 */
#ifndef HWT_ETM_H
#define HWT_ETM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ID registers of one trace source (perf's cs_etm metadata per CPU). */
struct hwt_etm_source {
	uint8_t trace_id;
	uint32_t configr, idr0, idr1, idr2, idr8;
};

struct hwt_etm_dump_config {
	size_t size;			  /* sizeof(struct hwt_etm_dump_config) */
	int formatted;			  /* 1: CoreSight frames, 0: raw (one source) */
	const struct hwt_etm_source *src; /* the sources to list */
	size_t nsrc;
};

/* The ID registers of the emulated unit (a Cortex-A57's), trace ID id. */
void hwt_etm_source_default(struct hwt_etm_source *s, uint8_t id);

/* One packet: offset of its first byte in the buffer (for frames: of the
 * frame), trace ID, text.  Return nonzero to stop. */
typedef int (*hwt_etm_packet_cb)(void *arg, uint64_t offset, uint8_t trace_id, const char *text);

/* 0, or a negative hwt error (bad config, OpenCSD refused it). */
int hwt_etm_dump(const struct hwt_etm_dump_config *cfg, const uint8_t *data, size_t size,
		 hwt_etm_packet_cb cb, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* HWT_ETM_H */
