/* hwt/unit.h - trace units and recording sessions.
 *
 * Model (after FreeBSD's hwt): one ops table per trace unit backend
 * (intel_pt, intel_bts, arm_spe, cs_etm through perf_event_open AUX
 * buffers; the emulated Intel PT unit in QEMU; dummy = sideband only).  A
 * session traces either threads (a command it starts, -p PID, -t TID) or
 * CPUs (-a, -C LIST).  Each traced thread or CPU has one hwt_stream: a
 * control page + data ring (sideband records) + AUX ring (trace bytes) in
 * the perf mmap layout (hwt/ring.h).  From the ring on, hardware and
 * emulated units share every line: the session drains every stream's rings
 * into a sink (the recorder writes perf.data from it).
 *
 * Lifecycle: hwt_session_open (probe + configure) -> start (run a command,
 * attach to threads, or open CPUs) -> hwt_session_pump until done ->
 * hwt_session_stop -> hwt_session_close.  The session owns its streams and
 * their mappings; records and spans handed to the sink are valid only
 * during the callback.
 */
#ifndef HWT_UNIT_H
#define HWT_UNIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "hwt/ring.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hwt_session;

/* What probing a unit found (hwt list). */
struct hwt_unit_info {
	char name[32];		  /* event name: "intel_pt", "intel_bts", "arm_spe", "cs_etm", "dummy" */
	int emulated;		  /* 1 for the QEMU-based unit */
	int present;		  /* usable on this machine now */
	char why[256];		  /* if !present: why, and what to do */
	uint32_t pmu_type;	  /* perf_event_attr.type (sysfs "type") */
	unsigned nr_addr_filters; /* sysfs nr_addr_filters */
	char formats[512];	  /* "tsc=config:10 noretcomp=config:11 ..." */
	char caps[512];		  /* "psb_cyc=1 mtc=1 ..." */
};

/* One traced thread or CPU. */
struct hwt_stream {
	struct hwt_ring ring;
	pid_t pid, tid; /* thread mode; -1 in CPU mode */
	int cpu;	/* CPU mode; -1 in thread mode */
	int fd;		/* perf event fd, -1 for emulated streams */
	uint64_t id;	/* sample id of the trace event for this stream */
	uint64_t aux_bytes;	/* trace bytes delivered */
	uint64_t aux_truncated; /* PERF_RECORD_AUX with TRUNCATED seen */
	uint64_t aux_lost;	/* ... with PARTIAL / COLLISION, or LOST records */
	uint64_t wait_ns;	/* emulated full mode: time the CPU waited for room */
	void *unit_priv;
};

/* Where a session delivers data. */
struct hwt_sink {
	void *arg;
	/* a new stream appeared (before any of its data) */
	int (*stream)(void *arg, struct hwt_stream *st);
	/* one sideband record from a stream's data ring */
	int (*record)(void *arg, struct hwt_stream *st, const struct perf_event_header *rec);
	/* trace bytes of a stream; span->pos is the stream offset of p1[0] */
	int (*aux)(void *arg, struct hwt_stream *st, const struct hwt_ring_span *span);
};

struct hwt_session_config {
	size_t size;		  /* sizeof(struct hwt_session_config) */
	const char *event;	  /* "intel_pt", "intel_pt/tsc,noretcomp/u", "dummy", ... */
	int emulate;		  /* 0: hardware, else emulated (with a notice); 1: emulated; -1: hardware only */
	uint64_t aux_bytes;	  /* AUX ring size per stream (power of two) */
	uint64_t data_bytes;	  /* data ring size per stream (power of two) */
	int snapshot;		  /* overwrite mode, dumped on hwt_session_snapshot and at the end */
	uint64_t snapshot_bytes;  /* snapshot size (0: aux_bytes) */
	const char *filter;	  /* perf --filter syntax, NULL for none */
	const char *truth_path;	  /* emulated: write the branch ground truth here */
	const char *plugin_path;  /* emulated: the QEMU plugin (NULL: next to the hwt binary) */
	const char *qemu_path;	  /* emulated: qemu-x86_64 (NULL: search PATH) */
};

struct hwt_unit_ops {
	const char *name; /* event name it answers to */
	int emulated;
	/* Fill info; 0 if present, HWT_ERR_NOT_PRESENT with info->why otherwise. */
	int (*probe)(struct hwt_unit_info *info);
	/* Parse event terms into the session's attr (hwt_session_attr). */
	int (*configure)(struct hwt_session *s, const char *terms, char *err, size_t errlen);
	/* Hardware: open one stream (tid >= 0 thread mode, else cpu >= 0). */
	int (*open)(struct hwt_session *s, pid_t tid, int cpu);
	/* Emulated: start argv under the unit; streams appear via poll. */
	int (*launch)(struct hwt_session *s, char *const argv[], pid_t *pid);
	int (*enable)(struct hwt_session *s);
	int (*disable)(struct hwt_session *s);
	/* Optional: discover new streams / wait for data, up to timeout_ms. */
	int (*poll)(struct hwt_session *s, int timeout_ms);
	/* Optional: AUXTRACE_INFO private words for perf.data; returns count. */
	int (*auxtrace_info)(struct hwt_session *s, uint64_t *priv, size_t max);
	void (*close)(struct hwt_session *s);
};

/* Registry. */
const struct hwt_unit_ops *hwt_unit_find(const char *name);
const struct hwt_unit_ops *const *hwt_unit_all(size_t *count);

/* Sessions. err receives a one-line message on failure. */
int hwt_session_open(struct hwt_session **s, const struct hwt_session_config *cfg,
		     const struct hwt_sink *sink, char *err, size_t errlen);
int hwt_session_start_cmd(struct hwt_session *s, char *const argv[], pid_t *pid, char *err,
			  size_t errlen);
int hwt_session_attach(struct hwt_session *s, pid_t pid, pid_t tid, char *err, size_t errlen);
int hwt_session_open_cpus(struct hwt_session *s, const int *cpus, size_t ncpus, char *err,
			  size_t errlen);
/* Wait up to timeout_ms and deliver what is available to the sink.
 * Returns 0 while tracing goes on, 1 when every traced task has exited. */
int hwt_session_pump(struct hwt_session *s, int timeout_ms);
/* Snapshot mode: deliver each stream's newest AUX bytes now. */
int hwt_session_snapshot(struct hwt_session *s);
int hwt_session_stop(struct hwt_session *s);
void hwt_session_close(struct hwt_session *s);

/* For backends. */
struct perf_event_attr *hwt_session_attr(struct hwt_session *s);
const struct hwt_session_config *hwt_session_config(const struct hwt_session *s);
struct hwt_stream *hwt_session_add_stream(struct hwt_session *s);
size_t hwt_session_streams(struct hwt_session *s, struct hwt_stream ***streams);
void *hwt_session_unit_priv(struct hwt_session *s);
void hwt_session_set_unit_priv(struct hwt_session *s, void *priv);

#ifdef __cplusplus
}
#endif
#endif /* HWT_UNIT_H */
