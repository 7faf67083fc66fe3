/* hwt/perf_data.h - perf.data (PERFILE2) files: a streaming writer and a
 * zero-copy reader.
 *
 * Layer: lib/perf.  Record layouts are in hwt/perf_records.h.
 *
 * Writer lifecycle:
 *   w = hwt_perf_writer_alloc(&cfg);          (cfg may be NULL: defaults)
 *   hwt_perf_writer_open(w, path)             (or _open_fd: caller's fd)
 *   hwt_perf_writer_add_attr(w, ...)          (all attrs before any record)
 *   hwt_perf_writer_write_*(w, ...)           (records, in file order)
 *   hwt_perf_writer_finish(w)                 (features + header; closes)
 *   hwt_perf_writer_free(w)
 * Records are buffered (64 KiB); AUXTRACE payloads larger than the buffer
 * go straight to the file with writev (no copy), given as up to two parts
 * (the two halves of a wrapped AUX ring).  A file is valid for perf only
 * after finish(); without it the header says "no data".
 * Feature sections written: HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS,
 * CPUDESC, CPUID, TOTAL_MEM, CMDLINE, EVENT_DESC, PMU_MAPPINGS (values
 * from the config, else from this machine), and AUXTRACE (perf's index
 * of the AUXTRACE records: file offset and header size of each) when the file
 * has AUXTRACE records, BUILD_ID when build-ids were added.
 *
 * Reader lifecycle: hwt_perf_reader_open(&r, path) maps the file
 * read-only (or _open_mem over caller memory that must outlive r, or
 * _open_fd on an open fd); attrs, features and records point into the
 * mapping and live until hwt_perf_reader_free(r).  Every offset and size
 * is checked against the file: a truncated or corrupt file gives
 * HWT_ERR_BAD_FORMAT plus a message (hwt_perf_reader_errmsg), never a
 * crash.
 *
 * Pipe mode (perf record -o -, perf inject -o -: a 16-byte header, then
 * records only) is read too, from memory, a regular file, or a pipe
 * (_open_fd on a non-seekable fd, the path "-" for standard input, a
 * FIFO).  There the attrs, their ids and the features are not in a header
 * but in HEADER_ATTR / HEADER_FEATURE / HEADER_BUILD_ID records, which
 * _next takes in as it reaches them (and also returns, like every record):
 * hwt_perf_reader_nr_attrs, _attr, _attr_by_id, _feature, _cmdline are
 * complete only once those records were read (perf writes them before any
 * kernel record, so they are by the first MMAP/COMM/AUXTRACE).  Their
 * pointers live until _free, except the BUILD_ID feature's, which grows
 * with each HEADER_BUILD_ID record (valid until the next _next).  From a
 * pipe the reader makes one forward pass with one buffer holding the
 * current record and the payload that follows it (AUXTRACE trace bytes,
 * HEADER_TRACING_DATA): a record's pointers (hdr, aux_data) are valid only
 * until the next _next, and _rewind fails (HWT_ERR_NOT_SUPPORTED).  A
 * file-mode perf.data arriving on a pipe is read whole into memory first
 * (it needs random access).  Code that must work on pipes therefore reads
 * records in one pass and copies what it keeps.
 */
#ifndef HWT_PERF_DATA_H
#define HWT_PERF_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/error.h"
#include "hwt/perf_records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================= writer ================= */

struct hwt_perf_writer_config {
	size_t size;   /* sizeof(struct hwt_perf_writer_config) */
	unsigned mode; /* permissions for a created file; 0: 0600 */
	/* Feature strings; NULL: this machine's (uname, /proc/cpuinfo). */
	const char *hostname, *osrelease, *version, *arch, *cpudesc;
	const char *cpuid; /* "GenuineIntel,6,142,10" (vendor,family,model,stepping) */
	int argc;	   /* CMDLINE; argc 0: "hwt" */
	char *const *argv;
	uint32_t nr_cpus_online, nr_cpus_avail; /* 0: this machine */
	uint64_t total_mem_kb;			/* 0: this machine */
};
void hwt_perf_writer_config_init(struct hwt_perf_writer_config *cfg);

struct hwt_perf_writer;

struct hwt_perf_writer *hwt_perf_writer_alloc(const struct hwt_perf_writer_config *cfg);
/* Finish is not implied: free without finish leaves an unusable file. */
void hwt_perf_writer_free(struct hwt_perf_writer *w);
/* Create/truncate path (the writer owns and closes the fd); "-" is
 * standard output (pipe mode if it is a pipe, see _open_fd; not closed). */
int hwt_perf_writer_open(struct hwt_perf_writer *w, const char *path);
/* Write to fd (not closed).  A regular file (or block device) gets file
 * mode from offset 0 on (pwrite).  Anything else (a pipe, a FIFO, a
 * socket) gets perf's pipe mode, written in order: the 16-byte header;
 * with the first record HEADER_ATTR and HEADER_FEATURE records (so PMUs
 * must be added before it too); build-ids as HEADER_BUILD_ID records at
 * finish; no AUXTRACE index. */
int hwt_perf_writer_open_fd(struct hwt_perf_writer *w, int fd);
/* 1 if the writer writes pipe mode. */
int hwt_perf_writer_is_pipe(const struct hwt_perf_writer *w);
/* Add an event: attr (attr->size is set to the writer's), its name (for
 * EVENT_DESC, e.g. "intel_pt//u", "dummy:u"), and the ids the kernel gave
 * its fds (PERF_EVENT_IOC_ID).  Returns the attr index (>= 0). */
int hwt_perf_writer_add_attr(struct hwt_perf_writer *w, const struct perf_event_attr *attr,
			     const char *name, const uint64_t *ids, size_t nr_ids);
/* Add a PMU_MAPPINGS entry (e.g. "intel_pt", its type). */
int hwt_perf_writer_add_pmu(struct hwt_perf_writer *w, const char *name, uint32_t type);

/* A complete record as is (header.size == size; e.g. copied from a
 * kernel ring); p2/n2 optional second part (ring wrap). */
int hwt_perf_writer_write_raw(struct hwt_perf_writer *w, const void *p1, size_t n1, const void *p2,
			      size_t n2);

/* Sideband records.  sid (may be NULL: zeros) fills the sample_id trailer
 * per the sample_type of the attr owning sid->id (else attr 0). */
int hwt_perf_writer_write_comm(struct hwt_perf_writer *w, uint32_t pid, uint32_t tid,
			       const char *comm, int exec, const struct hwt_perf_sample_id *sid);
int hwt_perf_writer_write_mmap2(struct hwt_perf_writer *w, uint32_t pid, uint32_t tid,
				uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t prot,
				uint32_t flags, const char *path, uint16_t misc,
				const struct hwt_perf_sample_id *sid);
/* type: PERF_RECORD_FORK or PERF_RECORD_EXIT. */
int hwt_perf_writer_write_task(struct hwt_perf_writer *w, uint32_t type, uint32_t pid,
			       uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time,
			       const struct hwt_perf_sample_id *sid);
int hwt_perf_writer_write_itrace_start(struct hwt_perf_writer *w, uint32_t pid, uint32_t tid,
				       const struct hwt_perf_sample_id *sid);
int hwt_perf_writer_write_aux(struct hwt_perf_writer *w, uint64_t aux_offset, uint64_t aux_size,
			      uint64_t flags, const struct hwt_perf_sample_id *sid);
int hwt_perf_writer_write_lost(struct hwt_perf_writer *w, uint64_t id, uint64_t lost,
			       const struct hwt_perf_sample_id *sid);
/* misc: PERF_RECORD_MISC_SWITCH_OUT(_PREEMPT) or 0 (in).  cpu_wide:
 * SWITCH_CPU_WIDE with the next/prev pid/tid, else SWITCH. */
int hwt_perf_writer_write_switch(struct hwt_perf_writer *w, int cpu_wide, uint16_t misc,
				 uint32_t next_prev_pid, uint32_t next_prev_tid,
				 const struct hwt_perf_sample_id *sid);

/* perf's synthesized records. */
struct hwt_perf_auxtrace_desc {
	uint64_t offset;    /* position of the data in the AUX stream */
	uint64_t reference; /* e.g. TSC at capture; 0 if none */
	uint32_t idx;	    /* mmap index (per-CPU: the CPU's slot) */
	uint32_t tid;	    /* per-thread: the traced tid; else -1 */
	uint32_t cpu;	    /* per-CPU: the CPU; else -1 */
};
/* The payload is n1 + n2 bytes, zero-padded to 8 (pad bytes are PT PAD
 * packets).  Large parts are written without copying. */
int hwt_perf_writer_write_auxtrace(struct hwt_perf_writer *w,
				   const struct hwt_perf_auxtrace_desc *d, const void *p1,
				   size_t n1, const void *p2, size_t n2);
int hwt_perf_writer_write_auxtrace_info(struct hwt_perf_writer *w, uint32_t type,
					const uint64_t *priv, size_t nr_priv);
int hwt_perf_writer_write_id_index(struct hwt_perf_writer *w,
				   const struct hwt_perf_id_index_entry *e, size_t nr);
int hwt_perf_writer_write_thread_map(struct hwt_perf_writer *w, const uint32_t *pids,
				     const char *const *comms, size_t nr);
int hwt_perf_writer_write_time_conv(struct hwt_perf_writer *w,
				    const struct hwt_perf_rec_time_conv *tc);
int hwt_perf_writer_write_finished_round(struct hwt_perf_writer *w);

/* Intel PT AUXTRACE_INFO.  The *_bit fields are attr.config masks of the
 * intel_pt PMU (sysfs format); init() sets Linux's values and 1/1 ratios. */
struct hwt_perf_intel_pt_info {
	uint32_t pmu_type;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	uint8_t cap_user_time_zero;
	uint64_t tsc_bit, noretcomp_bit, mtc_bit, mtc_freq_bits, cyc_bit;
	uint8_t have_sched_switch, snapshot_mode, per_cpu_mmaps;
	uint32_t tsc_ctc_ratio_n, tsc_ctc_ratio_d;
	uint32_t max_nonturbo_ratio;
	const char *filter; /* address filter string or NULL */
};
void hwt_perf_intel_pt_info_init(struct hwt_perf_intel_pt_info *info);
int hwt_perf_writer_write_intel_pt_info(struct hwt_perf_writer *w,
					const struct hwt_perf_intel_pt_info *info);
/* Decode an AUXTRACE_INFO's priv words (nr of them) back (missing words
 * stay 0).  HWT_ERR_BAD_FORMAT if fewer than perf's minimum (PER_CPU_MMAPS
 * words, i.e. 9). */
int hwt_perf_intel_pt_info_parse(struct hwt_perf_intel_pt_info *info, const uint64_t *priv,
				 size_t nr);

/* The attrs perf 6.1 itself records for "-e intel_pt/.../u" (per_cpu:
 * inherit, one fd per CPU): the trace event (type pmu_type, config as
 * given, sample_id_all with IP|TID|TIME|CPU|IDENTIFIER, disabled +
 * enable_on_exec, user only) and the dummy sideband event that carries
 * MMAP2/COMM/TASK (and, per-CPU, context_switch). */
void hwt_perf_attr_intel_pt(struct perf_event_attr *attr, uint32_t pmu_type, uint64_t config);
void hwt_perf_attr_sideband(struct perf_event_attr *attr, int per_cpu);
/* Linux intel_pt config bits (sysfs format/): */
#define HWT_IPT_CFG_PT (1ULL << 0)
#define HWT_IPT_CFG_CYC (1ULL << 1)
#define HWT_IPT_CFG_MTC (1ULL << 9)
#define HWT_IPT_CFG_TSC (1ULL << 10)
#define HWT_IPT_CFG_NORETCOMP (1ULL << 11)
#define HWT_IPT_CFG_BRANCH (1ULL << 13)

/* A HEADER_BUILD_ID feature entry (written by finish): the build-id (len
 * bytes, at most 20) of the file or object name (e.g. "[vdso]") as seen
 * by pid (-1: the host, as perf writes it); cpumode PERF_RECORD_MISC_USER
 * or _KERNEL.  Can be called until finish. */
int hwt_perf_writer_add_build_id(struct hwt_perf_writer *w, int32_t pid, uint16_t cpumode,
				 const uint8_t *id, size_t len, const char *name);

/* One of hwt's own features (feat >= HWT_FEAT_HWT_FIRST, each at most
 * once): its bytes, copied, are written by finish.  Can be called until
 * finish. */
int hwt_perf_writer_add_feature(struct hwt_perf_writer *w, int feat, const void *data, size_t len);

/* Bytes written so far (header + attrs + data). */
uint64_t hwt_perf_writer_offset(const struct hwt_perf_writer *w);
int hwt_perf_writer_finish(struct hwt_perf_writer *w);

/* ================= reader ================= */

struct hwt_perf_reader;

struct hwt_perf_attr_info {
	struct perf_event_attr attr; /* zero-extended copy */
	const char *name;	     /* EVENT_DESC name, or NULL */
	const uint64_t *ids;	     /* into the file (8-aligned copy if needed) */
	size_t nr_ids;
};

struct hwt_perf_record {
	uint64_t file_offset;		     /* byte offset in the file or stream */
	const struct perf_event_header *hdr; /* into the mapping */
	uint32_t type;			     /* hdr->type */
	uint16_t misc, size;
	int attr_index; /* attr the record belongs to, -1 if unknown */
	int have_sid;	/* sid valid (non-sample records with sample_id_all) */
	struct hwt_perf_sample_id sid;
	/* PERF_RECORD_SAMPLE: the leading fields per sample_type. */
	uint64_t sample_ip, sample_addr, sample_period;
	/* AUXTRACE: its payload in the mapping, and where it belongs
	 * (sid.tid / sid.cpu hold the record's tid / cpu).  Pipe mode's
	 * HEADER_TRACING_DATA: aux_data/aux_size are the tracing data that
	 * follows it. */
	const uint8_t *aux_data;
	uint64_t aux_size;
	uint64_t aux_offset;	/* position in the AUX stream */
	uint64_t aux_reference; /* e.g. TSC at capture */
	uint32_t aux_idx;	/* mmap index: the queue (per-CPU: CPU slot) */
};

/* On failure *out is NULL and, if errbuf is given, it holds why (e.g.
 * "file is truncated: the data section ends at 4096 but the file has
 * 1000 bytes").  HWT_ERR_IO (errno set) if the file cannot be opened or
 * mapped, HWT_ERR_BAD_FORMAT if it is not a valid perf.data. */
int hwt_perf_reader_open(struct hwt_perf_reader **out, const char *path, char *errbuf,
			 size_t errlen);
int hwt_perf_reader_open_mem(struct hwt_perf_reader **out, const void *data, size_t size,
			     char *errbuf, size_t errlen);
/* An open fd, not closed by the reader (close it after _free).  A regular
 * file is mapped whole (from offset 0); anything else (a pipe, a FIFO, a
 * socket) is a stream: its 16-byte header is read here (this blocks until
 * the writer sends it), pipe-mode records are then read by _next, a
 * file-mode file is read whole into memory.  hwt_perf_reader_open(path)
 * does the same for "-" (standard input, not closed) and for a path that
 * is not a regular file (closed by _free). */
int hwt_perf_reader_open_fd(struct hwt_perf_reader **out, int fd, char *errbuf, size_t errlen);
void hwt_perf_reader_free(struct hwt_perf_reader *r);
/* Why the last hwt_perf_reader_next failed (never NULL; "" if none). */
const char *hwt_perf_reader_errmsg(const struct hwt_perf_reader *r);

size_t hwt_perf_reader_nr_attrs(const struct hwt_perf_reader *r);
const struct hwt_perf_attr_info *hwt_perf_reader_attr(const struct hwt_perf_reader *r, size_t i);
/* Index of the attr having this id, -1 if none. */
int hwt_perf_reader_attr_by_id(const struct hwt_perf_reader *r, uint64_t id);
/* Bytes of records: file mode the data section; pipe mode everything after
 * the 16-byte header (from a pipe: what was read so far, the total at the
 * end). */
uint64_t hwt_perf_reader_data_size(const struct hwt_perf_reader *r);
/* 1 if the input is pipe-mode perf.data (wherever it comes from). */
int hwt_perf_reader_is_pipe(const struct hwt_perf_reader *r);
/* 1 if _rewind can work: memory, files; a pipe only before its first record. */
int hwt_perf_reader_can_rewind(const struct hwt_perf_reader *r);

/* Raw feature section: pointer into the mapping, NULL if absent. */
const void *hwt_perf_reader_feature(const struct hwt_perf_reader *r, int feat, size_t *size);
/* String features (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID):
 * NULL if absent or malformed. */
const char *hwt_perf_reader_feature_string(const struct hwt_perf_reader *r, int feat);
/* CMDLINE as one string, arguments joined by spaces (NULL if absent). */
const char *hwt_perf_reader_cmdline(const struct hwt_perf_reader *r);
int hwt_perf_reader_nrcpus(const struct hwt_perf_reader *r, uint32_t *online, uint32_t *avail);
int hwt_perf_reader_total_mem(const struct hwt_perf_reader *r, uint64_t *kb);

/* Iterate records in file order: 1 with *rec filled, 0 at the end,
 * HWT_ERR_BAD_FORMAT for a malformed or truncated record (iteration stops;
 * _errmsg says why); from a pipe also HWT_ERR_IO (read error) or
 * HWT_ERR_NOMEM (a record larger than memory).  In pipe mode *rec's
 * pointers are valid until the next call (from memory: until _free). */
int hwt_perf_reader_next(struct hwt_perf_reader *r, struct hwt_perf_record *rec);
/* Restart iteration at the first record: 0, or HWT_ERR_NOT_SUPPORTED on a
 * pipe that was already read from (_errmsg says so). */
int hwt_perf_reader_rewind(struct hwt_perf_reader *r);

/* Name of a record type ("MMAP2", "AUXTRACE", ...), "UNKNOWN" otherwise. */
const char *hwt_perf_record_name(uint32_t type);

#ifdef __cplusplus
}
#endif
#endif /* HWT_PERF_DATA_H */
