/* lib/out/timeline.h - call timelines for trace viewers (timeline.c):
 * Chrome's JSON trace format (chrome://tracing, speedscope, ui.perfetto.dev)
 * and Perfetto's protobuf trace format (ui.perfetto.dev, trace_processor).
 *
 * Input, per thread (pid, tid): calls (a function name at a time), returns,
 * instant events (gaps, errors, signals, syscalls, exec: a name and a
 * detail text), all in time order per thread (threads may interleave).
 * Output: one track per thread, grouped by process; one slice per call
 * from its call to its return (calls still open at the end close at the
 * thread's last time).  Returns with no open call are ignored.
 *
 * Streaming: events are written as they come; memory is one frame per
 * open call per thread (bounded by call depth).  Filters that keep big
 * traces viewable: min_duration_ns (a call is written only once it has
 * lasted that long: its begin is written then, with its real start, which
 * keeps each track's events in time order), a time window [start_ns,
 * end_ns] (slices are cut to it), max_depth (calls deeper than that are
 * tracked but not written).
 *
 * Lifecycle: hwt_timeline_alloc(cfg, outbuf), hwt_timeline_thread for each
 * thread before its events, events, hwt_timeline_finish (closes open
 * slices, writes the trailer), hwt_timeline_free.  The output buffer is
 * the caller's.
 */
#ifndef HWT_LIB_OUT_TIMELINE_H
#define HWT_LIB_OUT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "out/out.h"

enum hwt_timeline_format { HWT_TL_CHROME, HWT_TL_PERFETTO };

struct hwt_timeline_config {
	size_t size; /* sizeof(struct hwt_timeline_config) */
	int format;  /* enum hwt_timeline_format */
	uint64_t min_duration_ns;
	uint64_t start_ns, end_ns; /* window; end_ns 0: no end */
	unsigned max_depth;	   /* 0: no limit; else calls at depth >= it are left out */
};
void hwt_timeline_config_init(struct hwt_timeline_config *cfg);

struct hwt_timeline;
struct hwt_timeline *hwt_timeline_alloc(const struct hwt_timeline_config *cfg,
					struct hwt_outbuf *o);
void hwt_timeline_free(struct hwt_timeline *tl);

/* Name a thread and its process (NULL names: "pid N" / "tid N").  Called
 * again for the same tid, it renames.  0 or HWT_ERR_NOMEM. */
int hwt_timeline_thread(struct hwt_timeline *tl, uint32_t pid, uint32_t tid,
			const char *process_name, const char *thread_name);
int hwt_timeline_call(struct hwt_timeline *tl, uint32_t pid, uint32_t tid, uint64_t time_ns,
		      const char *name);
int hwt_timeline_return(struct hwt_timeline *tl, uint32_t pid, uint32_t tid, uint64_t time_ns);
int hwt_timeline_instant(struct hwt_timeline *tl, uint32_t pid, uint32_t tid, uint64_t time_ns,
			 const char *name, const char *detail);
/* Close every open slice and write the trailer.  0 or HWT_ERR_IO. */
int hwt_timeline_finish(struct hwt_timeline *tl);

/* Slices written so far. */
uint64_t hwt_timeline_slices(const struct hwt_timeline *tl);

/* Append s as the inside of a JSON string (escaped; bytes that are not
 * valid UTF-8 as '?'). */
void hwt_out_json(struct hwt_outbuf *o, const char *s);

#endif
