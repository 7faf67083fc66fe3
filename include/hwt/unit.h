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
	/* Session bookkeeping (backends leave these alone). */
	int sb_fd;		/* sideband dummy event redirected into fd's ring, -1 if none */
	uint64_t sb_id;		/* its sample id */
	uint64_t aux_done;	/* AUX stream position delivered so far */
	uint64_t lost_records;	/* PERF_RECORD_LOST: records the kernel dropped */
	uint64_t aux_partial, aux_collision;
	int hup;		/* POLLHUP seen: the traced thread is gone */
	int announced;		/* sink->stream called */
	void *map;		/* kernel streams: the data mapping (ctl + data) */
	size_t map_len;
	void *aux_map;
	size_t aux_map_len;
};

/* Sample ids the emulated unit uses in the sample_id trailers of the
 * records it writes (the recorder declares them for its two attrs). */
#define HWT_EMU_ID_TRACE 1
#define HWT_EMU_ID_SIDEBAND 2

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
	const char *plugin_path;  /* emulated: the QEMU plugin (NULL: searched, see hwt(1)) */
	const char *qemu_path;	  /* emulated: qemu-x86_64 (NULL: search PATH) */
	/* hardware: a sideband dummy event per stream (mmap2, comm, task,
	 * context switch) redirected into the stream's data ring */
	int sideband;
	int inherit; /* follow children (per-CPU streams of a command) */
	/* Use this unit instead of looking cfg->event's name up in the
	 * registry (tests, embedders); event terms still go to configure. */
	const struct hwt_unit_ops *unit;
	/* Emulated units: programs started by exec() are traced too (in the
	 * same stream) unless no_follow_exec; follow_exec: only those whose
	 * path matches one of these '\n'-separated fnmatch(3) globs (a glob
	 * without '/' matches the file name), the others run untraced. */
	int no_follow_exec;
	const char *follow_exec;
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
	/* Optional (snapshot mode): stop (1) / resume (0) the producer of st's
	 * AUX ring while the session copies it.  Kernel streams use
	 * PERF_EVENT_IOC_PAUSE_OUTPUT without this. */
	int (*pause)(struct hwt_session *s, struct hwt_stream *st, int pause);
	/* Optional: the trace is made of records of this many bytes (intel_bts:
	 * 24); snapshots are cut to whole records.  0: a byte stream. */
	unsigned aux_align;
	/* Optional: perf's AUXTRACE_INFO type (PERF_AUXTRACE_*); 0: Intel PT. */
	uint32_t auxtrace_type;
};

/* Contract for emulated units (launch/poll): launch starts the program
 * and returns its pid; poll adds streams (hwt_session_add_stream, ring
 * views set up with hwt_ring_init_producer/attach, fd = -1), waits up to
 * timeout_ms, and returns 1 once the launched program has exited (after
 * reaping it and calling hwt_session_set_exit_status), 0 otherwise, or a
 * negative error.  The session drains the rings; for fd == -1 streams it
 * also takes AUX bytes past the last PERF_RECORD_AUX with aux_peek. */

/* Registry. */
const struct hwt_unit_ops *hwt_unit_find(const char *name); /* hardware first */
const struct hwt_unit_ops *hwt_unit_find_emulated(const char *name);
/* The emulated Intel PT and Intel BTS units (lib/unit/emu_pt.c), with
 * .name = "intel_pt" / "intel_bts" and .emulated = 1; registry.c lists them. */
extern const struct hwt_unit_ops hwt_unit_emu_pt;
extern const struct hwt_unit_ops hwt_unit_emu_bts;
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
/* The sideband (dummy) attr the session opens next to each trace stream;
 * NULL when there is none (unit "dummy", or the emulated unit). */
const struct perf_event_attr *hwt_session_sb_attr(const struct hwt_session *s);
const struct hwt_session_config *hwt_session_config(const struct hwt_session *s);
struct hwt_stream *hwt_session_add_stream(struct hwt_session *s);
size_t hwt_session_streams(struct hwt_session *s, struct hwt_stream ***streams);
void *hwt_session_unit_priv(struct hwt_session *s);
void hwt_session_set_unit_priv(struct hwt_session *s, void *priv);
/* The wait status of the launched / started program (backends that reap
 * it report it here).  hwt_session_exit_status: -1 if not known yet. */
void hwt_session_set_exit_status(struct hwt_session *s, int wstatus);
int hwt_session_exit_status(const struct hwt_session *s);
/* The thread whose fatal signal ended a traced process (backends that
 * know it say so: the emulated unit learns it from QEMU).  Returns 1 and
 * fills pid, tid, sig when known, else 0. */
void hwt_session_set_fatal(struct hwt_session *s, pid_t pid, pid_t tid, int sig);
int hwt_session_fatal(const struct hwt_session *s, pid_t *pid, pid_t *tid, int *sig);
/* A one-line notice for the user (e.g. the fallback to the emulated
 * unit), "" if none. */
const char *hwt_session_notice(const struct hwt_session *s);
/* The unit in use. */
const struct hwt_unit_ops *hwt_session_unit(const struct hwt_session *s);
/* Totals over all streams (for the final report line). */
struct hwt_session_stats {
	size_t streams;
	uint64_t aux_bytes, records, lost_records, aux_truncated, aux_partial, aux_collision;
};
void hwt_session_get_stats(const struct hwt_session *s, struct hwt_session_stats *st);

/* ---- PMU descriptions from sysfs (lib/unit/sysfs.c) ---- */
#define HWT_SYSFS_DEFAULT "/sys/bus/event_source/devices"
/* $HWT_SYSFS_ROOT if set (tests: a fake tree), else HWT_SYSFS_DEFAULT. */
const char *hwt_sysfs_root(void);

#define HWT_PMU_MAX_FORMATS 64
#define HWT_PMU_MAX_CAPS 64
struct hwt_pmu_format {
	char name[32];
	unsigned word; /* 0: config, 1: config1, 2: config2 */
	uint64_t mask; /* the bits the term occupies, low bits first */
};
struct hwt_pmu_cap {
	char name[32];
	uint64_t value;
};
struct hwt_pmu {
	char name[32];
	uint32_t type;
	int nr_addr_filters; /* -1: no nr_addr_filters file */
	size_t nr_formats, nr_caps;
	struct hwt_pmu_format formats[HWT_PMU_MAX_FORMATS];
	struct hwt_pmu_cap caps[HWT_PMU_MAX_CAPS];
};
/* Read ROOT/NAME/{type,format/ *,caps/ *,nr_addr_filters}.  0, or
 * HWT_ERR_NOT_PRESENT / HWT_ERR_BAD_FORMAT with why filled. */
int hwt_pmu_read(const char *root, const char *name, struct hwt_pmu *pmu, char *why,
		 size_t whylen);
/* Parse a format file's text: "config:0-7,9" / "config1:3".  0 or
 * HWT_ERR_BAD_FORMAT. */
int hwt_pmu_format_parse(const char *text, unsigned *word, uint64_t *mask);
const struct hwt_pmu_format *hwt_pmu_find_format(const struct hwt_pmu *pmu, const char *name);
/* 0 and *value if the cap exists, HWT_ERR_NOT_PRESENT otherwise. */
int hwt_pmu_get_cap(const struct hwt_pmu *pmu, const char *name, uint64_t *value);
/* Place value into the term's bits of attr->config/config1/config2 (low
 * value bits into the lowest mask bits).  HWT_ERR_INVALID if the term is
 * unknown or the value does not fit. */
int hwt_pmu_set_term(const struct hwt_pmu *pmu, struct perf_event_attr *attr, const char *name,
		     uint64_t value);
/* Apply "tsc,mtc_period=3,noretcomp=0" (perf's term syntax). */
int hwt_pmu_apply_terms(const struct hwt_pmu *pmu, struct perf_event_attr *attr,
			const char *terms, char *err, size_t errlen);
/* Split "intel_pt/tsc,cyc/u" into name, terms ("tsc,cyc") and modifiers
 * ("u").  0 or HWT_ERR_INVALID. */
int hwt_event_split(const char *spec, char *name, size_t namelen, char *terms, size_t termslen,
		    char *mods, size_t modslen);

/* ---- perf --filter (lib/unit/filter.c) ---- */
/* Turn perf's filter syntax ("filter main @/bin/ls, stop 0x1234/8") into
 * the kernel's address filter string with file offsets, resolving symbols
 * from the ELF named by @FILE (default_file if absent).  0 or an error
 * with err filled. */
int hwt_filter_translate(const char *spec, const char *default_file, char *out, size_t outlen,
			 char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* HWT_UNIT_H */
