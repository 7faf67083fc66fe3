/* hwt/decode.h - decode a recording (perf.data, hwt's or Linux perf's)
 * into per-thread control flow: the recording decoder.
 *
 * Layer: lib/decode.  The engine reads the records of a perf.data once,
 * front to back (no rewind: a pipe can feed it), rebuilds the traced
 * processes from the sideband (MMAP/MMAP2, COMM exec, FORK; the vdso from
 * perf's build-id cache), and hands each AUXTRACE chunk to the decoder of
 * the recording's trace format (one ops table per format, chosen by the
 * AUXTRACE_INFO type, see "Trace formats" below).  What the format
 * decodes comes out through the consumer's callbacks, per thread (per-CPU
 * recordings: switched to the thread that ran, from the switch records):
 * instructions, taken branches with their kind, events, gaps (trace errors,
 * with their offset in the AUX stream) and samples, each with its time
 * (perf clock, ns) when the trace has one.
 *
 * Lifecycle:
 *   struct hwt_decoder_config cfg;
 *   hwt_decoder_config_init(&cfg);
 *   cfg.path = "perf.data";         (or cfg.reader = an open reader)
 *   cfg.consumer = &consumer;        (callbacks, see below)
 *   hwt_decoder_alloc(&dec, &cfg)    (HWT_ERR_IO / BAD_FORMAT: message in
 *                                     the errbuf of the config)
 *   hwt_decoder_run(dec)             (all records; or hwt_decoder_step)
 *   hwt_decoder_info(dec, &info)     (gaps, format, sideband facts)
 *   hwt_decoder_free(dec)
 * Threads (struct hwt_dec_thread) and images passed to callbacks live
 * until hwt_decoder_free; an image is valid only during the callback
 * (the process may change with the next record).
 *
 * Memory: per-thread recordings are decoded as their chunks come (memory
 * bounded by the PSB period for Intel PT, not by the trace); per-CPU
 * recordings keep each CPU's trace until the end (all CPUs' trace is
 * decoded in time order after the last record).
 *
 * The vdso: its code comes from perf's build-id cache, by the build-id
 * the recording names (file mode: the BUILD_ID feature, known at once;
 * pipe mode: HEADER_BUILD_ID records, which perf and hwt write at the
 * end).  Trace decoded before the build-id is known has no vdso code
 * (gaps there: "no memory mapped at this address"); per-CPU trace, decoded
 * at the end, always has it.
 */
#ifndef HWT_DECODE_H
#define HWT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/error.h"
#include "hwt/image.h"
#include "hwt/perf_data.h"
#include "hwt/process.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- what comes out ---------------- */

/* Kinds of taken branches (named as in "hwt script --format tsv"). */
enum hwt_branch_kind {
	HWT_BR_JCC,
	HWT_BR_JMP,
	HWT_BR_IJMP,
	HWT_BR_CALL,
	HWT_BR_ICALL,
	HWT_BR_RET,
	HWT_BR_FAR,
	HWT_BR_ASYNC, /* interrupt, exception, ... (not an instruction's) */
	HWT_BR_NKINDS
};
/* "jcc", "jmp", ...; "?" for an unknown kind. */
const char *hwt_branch_kind_name(int kind);
/* Kind of a taken branch by its instruction class (hwt/x86.h). */
int hwt_branch_kind_of(int iclass);

/* A traced thread (persistent across the recording). */
struct hwt_dec_thread {
	uint32_t pid, tid;
	void *user; /* the consumer's; see hwt_decode_consumer.thread_free */
};

/* An executed instruction. */
struct hwt_dec_insn {
	uint64_t ip;
	uint8_t size;
	uint8_t iclass; /* enum hwt_insn_class (hwt/x86.h); with
			 * HWT_DEC_WANT_RAW clear, only a block's last
			 * instruction has its class, others HWT_INSN_OTHER */
	uint8_t mode;	/* 16, 32, 64 (x86), or the format's ISA mode */
	uint8_t speculative;
	uint8_t truncated; /* crossed an image piece boundary */
	uint8_t raw[15];   /* the bytes (size of them), with HWT_DEC_WANT_RAW */
};

enum hwt_dec_event_type {
	HWT_DEV_ENABLED,	/* tracing (re)enabled at ip */
	HWT_DEV_DISABLED,	/* disabled (at a branch; ip: its target if known) */
	HWT_DEV_ASYNC_DISABLED, /* disabled asynchronously at ip */
	HWT_DEV_ASYNC,		/* asynchronous branch from -> ip (also given as a
				 * HWT_BR_ASYNC branch) */
	HWT_DEV_MODE,		/* execution mode change (mode) at ip */
	HWT_DEV_OVERFLOW,	/* the trace unit lost trace; resumes at ip */
	HWT_DEV_OTHER,		/* anything else the format reports (see raw) */
};

struct hwt_dec_event {
	uint32_t type;	       /* enum hwt_dec_event_type */
	uint8_t ip_suppressed; /* ip (and from) not known */
	uint8_t status_update; /* a state the trace restated, not a change */
	uint8_t have_time;
	uint8_t mode; /* HWT_DEV_MODE: 16, 32, 64 */
	uint64_t time_ns;
	uint64_t ip;
	uint64_t from;	 /* HWT_DEV_ASYNC */
	uint32_t format; /* PERF_AUXTRACE_* of the format (1: Intel PT) */
	const void *raw; /* the format's own event, valid during the
			  * callback (Intel PT: struct hwt_pt_event) */
};

/* A sample of a sampling format (Arm SPE from AUX data, Intel PEBS from
 * PERF_RECORD_SAMPLE).  Fields the format does not have are 0. */
enum hwt_dec_sample_flags {
	HWT_DSF_LOAD = 1 << 0,
	HWT_DSF_STORE = 1 << 1,
	HWT_DSF_BRANCH = 1 << 2,
	HWT_DSF_TAKEN = 1 << 3,	   /* branch: taken */
	HWT_DSF_MISPRED = 1 << 4,  /* branch: mispredicted */
	HWT_DSF_L1_MISS = 1 << 5,  /* data: missed L1 */
	HWT_DSF_LLC_MISS = 1 << 6, /* data: missed the last level cache */
	HWT_DSF_TLB_MISS = 1 << 7,
	HWT_DSF_REMOTE = 1 << 8,
	HWT_DSF_ATOMIC = 1 << 9,
	HWT_DSF_SIMD = 1 << 10,
	HWT_DSF_HAVE_TIME = 1 << 16,
	HWT_DSF_HAVE_ADDR = 1 << 17,
	HWT_DSF_HAVE_PHYS = 1 << 18,
};

struct hwt_dec_sample {
	uint32_t pid, tid, cpu;
	uint32_t flags;	  /* enum hwt_dec_sample_flags */
	uint64_t time_ns; /* with HWT_DSF_HAVE_TIME */
	uint64_t ip;	  /* the sampled instruction */
	uint64_t addr;	  /* data (or branch target) virtual address */
	uint64_t phys_addr;
	uint64_t weight;    /* total latency (cycles), PEBS weight */
	uint64_t lat_issue; /* issue latency (SPE), 0 if none */
	uint64_t lat_xlat;  /* translation latency (SPE), 0 if none */
	uint64_t data_src;  /* perf's union perf_mem_data_src encoding */
	uint32_t op;	    /* the format's operation type (SPE: op class) */
	uint32_t format;    /* PERF_AUXTRACE_* (or 0: PERF_RECORD_SAMPLE) */
	const void *raw;    /* the format's record, valid during the callback */
	size_t raw_size;
	/* Filled by the engine (a format leaves them 0), valid during the
	 * callback: the image of the thread's process (code and data
	 * symbols: hwt_image_symbol, hwt_image_data_symbol), and the
	 * sideband mapping addr falls in (its path or name: a file,
	 * "[heap]", "[stack]", "//anon"; NULL if none) with its start. */
	const struct hwt_image *img;
	const char *data_map;
	uint64_t data_map_start;
};
/* perf's name of an operation: "load", "store", "branch", "other". */
const char *hwt_dec_sample_op_name(const struct hwt_dec_sample *s);
/* Where the data came from, in words, from data_src (perf's encoding)
 * or else the flags: "L1 hit", "LLC hit", "LLC miss"/"memory", with
 * ", TLB walk" when the DTLB missed; "" if unknown.  buf: >= 64 bytes. */
const char *hwt_dec_sample_source(const struct hwt_dec_sample *s, char *buf, size_t len);

/* A taken branch (hwt_decode_consumer.branches). */
struct hwt_dec_branch {
	uint64_t from, to;
	uint8_t kind; /* enum hwt_branch_kind */
	uint8_t have_time;
	uint64_t time_ns;
};

/* A run of instructions executed one after the other
 * (hwt_decode_consumer.ranges), and the taken branch that follows it.
 * Its n instructions are at consecutive addresses from ip up to and
 * including last (end: the byte after last's instruction, last + its
 * size); the instructions between give no class (each is a non-branch,
 * or a conditional branch not taken); every one of them has the time
 * have_time/time_ns, the one the insn callback would give it (a run
 * whose instructions would get different times comes as several
 * ranges).  kind (enum hwt_branch_kind, or HWT_DEC_NO_BRANCH): the taken
 * branch from -> to that comes after the instructions, at br_time_ns
 * (with br_have_time), as the branch callback would give it (from is
 * last, except for a branch into an asynchronous event, HWT_BR_ASYNC);
 * a range of n == 0 is that branch alone.  A consumer processes a range
 * as the instructions (insn) then the branch (branch).  Where a range
 * crosses a symbol's end (code that falls through into the next
 * function), only the instructions' lengths tell where it crosses:
 * hwt_image_symbol_end says where a symbol's answer may change,
 * hwt_x86_decode gives the lengths (ranges of other formats than Intel
 * PT hold one instruction). */
#define HWT_DEC_NO_BRANCH 0xffu
struct hwt_dec_range {
	uint64_t ip;   /* the first instruction (n >= 1) */
	uint64_t last; /* the last instruction */
	uint64_t end;  /* last + the last instruction's size */
	uint64_t time_ns;
	uint64_t from, to; /* the taken branch after the range (kind) */
	uint64_t br_time_ns;
	uint32_t n;	   /* instructions (0: only the branch) */
	uint8_t have_time; /* time_ns is the instructions' time */
	uint8_t iclass;	   /* enum hwt_insn_class of the last instruction
			    * (a range ends after a far transfer, syscall) */
	uint8_t mode;	   /* 16, 32, 64 (x86), or the format's ISA mode */
	uint8_t kind;	   /* enum hwt_branch_kind, or HWT_DEC_NO_BRANCH */
	uint8_t br_have_time;
};

/* Consumer flags. */
enum hwt_dec_flags {
	HWT_DEC_WANT_TIME = 1 << 0, /* fill have_time/time_ns (costs some speed) */
	HWT_DEC_WANT_RAW = 1 << 1,  /* instructions with raw bytes and every
				     * instruction's class (else they may come
				     * from blocks, faster) */
};

/* The callbacks (any may be NULL; instructions are decoded only when insn
 * is set).  img: the image of the thread's process at that point (for
 * symbols, hwt/image.h), valid during the call.  have_time/time_ns: the
 * time (perf clock; raw TSC if the recording has no conversion) when
 * HWT_DEC_WANT_TIME is set and the trace has timing. */
struct hwt_decode_consumer {
	size_t size; /* sizeof(struct hwt_decode_consumer) */
	void *arg;
	unsigned flags; /* enum hwt_dec_flags */
	void (*insn)(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		     const struct hwt_image *img, int have_time, uint64_t time_ns);
	/* A taken branch (kind: enum hwt_branch_kind). */
	void (*branch)(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		       const struct hwt_image *img, int have_time, uint64_t time_ns);
	void (*event)(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_event *ev);
	/* A trace error: the flow is broken here (offset: in the AUX stream
	 * of the thread's / CPU's queue; ip: where it stood, 0 if unknown;
	 * err: enum hwt_error).  t may be NULL. */
	void (*gap)(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err);
	void (*sample)(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_sample *s);
	/* A thread goes away (at hwt_decoder_free): free t->user. */
	void (*thread_free)(void *arg, struct hwt_dec_thread *t);
	/* Taken branches in arrays (instead of branch, which is then not
	 * called): n >= 1 branches of thread t, in order, each as branch
	 * would give it; in order with the other callbacks.  Decoders that
	 * batch (Intel PT) call it once per many branches. */
	void (*branches)(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_branch *br,
			 size_t n, const struct hwt_image *img);
	/* Instructions and taken branches in arrays of ranges (instead of
	 * insn, branch and branches, which are then not called; raw bytes
	 * are not given): n >= 1 ranges of thread t, in order, in order with
	 * the other callbacks.  Decoders that batch (Intel PT) call it once
	 * per many ranges (one per taken branch, about); the others once per
	 * instruction or branch. */
	void (*ranges)(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_range *r, size_t n,
		       const struct hwt_image *img);
	/* Taken branches printed as text on the decoding threads (optional,
	 * with branches, without insn and ranges; used when
	 * hwt_decoder_config.jobs > 1): where a worker thread decodes a
	 * segment, branches_text writes the text of its n >= 1 branches of
	 * thread t to out (room for n * text_max bytes; it may write scratch
	 * up to there) and returns the text's length, and text later gets
	 * that text on the calling thread, in order with the other
	 * callbacks, instead of a branches call with those branches: the
	 * text must be what branches would print for them.  branches_text
	 * runs on any decoding thread, at the same time as the others and as
	 * the callbacks on the calling thread: it may read t->pid, t->tid,
	 * img (not change them) and write only fctx, its thread's: the
	 * result of text_ctx(arg) (called once per decoding thread on the
	 * calling thread, given back to text_ctx_free), or NULL without
	 * text_ctx.  NULL text_ctx returns: no parallel text (branches
	 * calls). */
	size_t (*branches_text)(void *fctx, const struct hwt_dec_thread *t,
				const struct hwt_dec_branch *br, size_t n,
				const struct hwt_image *img, char *out);
	size_t text_max; /* bytes per branch at most, scratch included */
	void (*text)(void *arg, const char *s, size_t n);
	void *(*text_ctx)(void *arg);
	void (*text_ctx_free)(void *arg, void *fctx);
};

/* ---------------- the recording decoder ---------------- */

struct hwt_decoder;

struct hwt_decoder_config {
	size_t size;				    /* sizeof(struct hwt_decoder_config) */
	const char *path;			    /* the perf.data to open, or NULL and: */
	struct hwt_perf_reader *reader;		    /* records from this reader (not
						     * freed; must outlive the decoder);
						     * read on from where it stands */
	const struct hwt_decode_consumer *consumer; /* copied */
	/* perf's build-id cache (for the vdso); NULL: $PERF_BUILDID_DIR,
	 * else $HOME/.debug */
	const char *buildid_dir;
	char *errbuf; /* why alloc failed (may be NULL) */
	size_t errlen;
	/* Parallel decoding: threads that decode a stream's PSB-to-PSB
	 * segments at once (joined in order: the output is the same for
	 * every value); 0 (the default): the number of online CPUs, 1: no
	 * threads.  Per-CPU (CPU-wide) recordings decode on one thread. */
	unsigned jobs;
	unsigned flags; /* enum hwt_decoder_flags */
	/* Folders searched for the separate debug files of the recording's
	 * stripped files (symbols, lines) before /usr/lib/debug,
	 * colon-separated (hwt_image_set_debug_dirs); NULL: none */
	const char *debug_dirs;
};
/* hwt_decoder_config.flags: ways to decode the same thing more slowly
 * (for tests: the output does not change). */
enum hwt_decoder_flags {
	HWT_DECODER_NO_PATH_CACHE = 1 << 0, /* Intel PT: no path cache */
	HWT_DECODER_NO_BATCH = 1 << 1,	    /* Intel PT: block by block, not in
					     * batches (consumers of taken
					     * branches alone get them in
					     * batches by default) */
};
void hwt_decoder_config_init(struct hwt_decoder_config *cfg);

/* 0 and *out; HWT_ERR_IO (errno set) if the file cannot be opened,
 * HWT_ERR_BAD_FORMAT if it is not a perf.data, HWT_ERR_INVALID. */
int hwt_decoder_alloc(struct hwt_decoder **out, const struct hwt_decoder_config *cfg);
void hwt_decoder_free(struct hwt_decoder *d);

/* Process one record: 1 if there may be more, 0 at the end (everything
 * decoded and delivered: per-CPU trace and what the formats held back),
 * or a negative error (then hwt_decoder_errmsg says what): a malformed
 * record (the reader stops; what came before is decoded and delivered),
 * HWT_ERR_NOT_SUPPORTED for a trace format without a decoder.  After 0 or
 * an error, step returns the same again. */
int hwt_decoder_step(struct hwt_decoder *d);
/* Step to the end: 0, or the first negative error (decoding goes on past
 * a malformed record only as far as the reader can). */
int hwt_decoder_run(struct hwt_decoder *d);
/* Why the last call failed, in one line ("" if it did not). */
const char *hwt_decoder_errmsg(const struct hwt_decoder *d);

/* What the recording says (valid until free; more is known as records
 * come: AUXTRACE_INFO first, queues at their first chunk). */
struct hwt_decoder_info {
	size_t size;		 /* sizeof(struct hwt_decoder_info) */
	uint32_t format;	 /* PERF_AUXTRACE_* type (0: none seen yet) */
	const char *format_name; /* "intel_pt", ... ("" if none) */
	size_t nr_aux;		 /* AUXTRACE chunks seen */
	size_t nr_queues;	 /* AUX queues (one per thread or CPU) */
	int per_cpu;		 /* some queue is per-CPU */
	uint64_t nr_gaps;	 /* gaps delivered so far */
	int have_time_conv;	 /* TSC -> perf time known */
	uint16_t time_shift;	 /* the conversion (perf_event_mmap_page) */
	uint32_t time_mult;
	uint64_t time_zero;
	int have_vdso; /* the vdso's code was found (build-id cache) */
	size_t nr_threads;
	size_t nr_processes;
	uint64_t nr_samples; /* samples delivered (PEBS, SPE) */
};
int hwt_decoder_info(const struct hwt_decoder *d, struct hwt_decoder_info *info);

/* The thread with this tid (NULL if the recording never named it). */
struct hwt_dec_thread *hwt_decoder_thread(struct hwt_decoder *d, uint32_t tid);
/* Threads in order of appearance (NULL past the end). */
struct hwt_dec_thread *hwt_decoder_thread_at(struct hwt_decoder *d, size_t i);
/* The process (address space) of a thread as the sideband has it now:
 * for symbol lookups outside the callbacks (hwt_process_image).  Per-CPU
 * recordings decode with one image of every process's mappings: that is
 * the process given for them. */
struct hwt_process *hwt_decoder_process(struct hwt_decoder *d, const struct hwt_dec_thread *t);
/* Convert a TSC value of the trace to perf time (ns); as is without a
 * conversion. */
uint64_t hwt_decoder_tsc_to_ns(const struct hwt_decoder *d, uint64_t tsc);

/* ---------------- trace formats (inside libhwt) ----------------
 *
 * One ops table per trace format, the decode-side twin of the trace-unit
 * ops (lib/unit).  The engine picks the table whose auxtrace_type is the
 * AUXTRACE_INFO's type (perf's auxtrace.h: 1 intel_pt, 2 intel_bts,
 * 3 cs_etm, 4 arm_spe); a recording without AUXTRACE_INFO is taken as
 * Intel PT with default parameters (as perf's older files).  A type
 * without a table stops decoding with HWT_ERR_NOT_SUPPORTED and a
 * message naming the type.
 *
 * Adding a format: write lib/<fmt>/decode.c (or lib/decode/<fmt>.c)
 * defining `const struct hwt_decoder_ops hwt_decoder_<fmt>`, and add its
 * extern and one line to the table in lib/decode/formats.c.  The
 * format uses the engine's services below (threads, processes, images,
 * per-CPU timelines, time conversion) and delivers through the
 * hwt_dec_emit_* functions.
 *
 * Calls, in record order:
 *   create(dec, priv, n, &state)       at AUXTRACE_INFO (priv: its private
 *                                      words, an aligned copy valid during
 *                                      the call; NULL/0 without one)
 *   chunk(state, q, data, size, off)   each AUXTRACE payload of queue q
 *                                      (q->tid/cpu/per_cpu set at its first
 *                                      chunk; data valid during the call only:
 *                                      copy what must be kept)
 *   record(state, rec)                 (optional) every record but AUXTRACE
 *                                      and AUXTRACE_INFO, after
 *                                      the engine applied its sideband
 *                                      (AUX records; PERF_RECORD_SAMPLEs of
 *                                      memory events, PEBS, are decoded by
 *                                      the engine itself: lib/decode/pebs.c)
 *   flush(state, q)                    end of the recording, per queue, in
 *                                      queue order (decode what is held)
 *   finish(state)                      (optional) after every flush (per-CPU
 *                                      trace decoded across CPUs in time order)
 *   quiesce(state)                     (optional) before a record that
 *                                      changes the engine's threads,
 *                                      processes, images, timelines or time
 *                                      conversion, or is a sample (and
 *                                      before every record if the ops have
 *                                      record)
 *   free(state)
 * Every callback may call hwt_dec_emit_*; errors in the trace are gaps,
 * not return values; a negative return stops decoding (out of memory).
 */
struct hwt_dec_queue {
	uint32_t idx; /* AUXTRACE idx (mmap index) */
	uint32_t tid; /* per-thread: the traced thread; else -1 */
	uint32_t cpu; /* per-CPU: the CPU; else -1 (or the CPU of a
		       * per-thread mmap) */
	int per_cpu;  /* CPU-wide: threads by the CPU's switch timeline */
	void *fmt;    /* the format's per-queue state (it frees it in
		       * flush or free) */
};

struct hwt_decoder_ops {
	const char *name;	/* "intel_pt", "intel_bts", "cs_etm", "arm_spe" */
	uint32_t auxtrace_type; /* PERF_AUXTRACE_* */
	int (*create)(struct hwt_decoder *dec, const uint64_t *priv, size_t npriv, void **state);
	int (*chunk)(void *state, struct hwt_dec_queue *q, const uint8_t *data, size_t size,
		     uint64_t offset);
	int (*record)(void *state, const struct hwt_perf_record *rec);
	int (*flush)(void *state, struct hwt_dec_queue *q);
	int (*finish)(void *state);
	void (*free)(void *state);
	/* (optional) before the engine changes its threads, processes,
	 * images or timelines (sideband) or delivers anything itself: a
	 * format that decodes on other threads delivers what it has queued */
	int (*quiesce)(void *state);
};

/* Engine services for formats. */
/* The reader (attrs, features: CPUID, PMU types). */
struct hwt_perf_reader *hwt_dec_reader(struct hwt_decoder *d);
const struct hwt_decode_consumer *hwt_dec_consumer(const struct hwt_decoder *d);
/* The config's jobs (0 resolved to the online CPUs) and flags. */
unsigned hwt_dec_jobs(const struct hwt_decoder *d);
unsigned hwt_dec_flags(const struct hwt_decoder *d);
/* The thread for tid (created if new; pid -1: unknown, keep). */
struct hwt_dec_thread *hwt_dec_thread_get(struct hwt_decoder *d, uint32_t tid, uint32_t pid);
/* The queues in order of their first chunk (NULL past the end). */
struct hwt_dec_queue *hwt_dec_queue_at(struct hwt_decoder *d, size_t i);
/* The process of pid (created empty if new), or the all-process one for
 * per-CPU queues: hwt_dec_all_processes. */
struct hwt_process *hwt_dec_process_get(struct hwt_decoder *d, uint32_t pid);
struct hwt_process *hwt_dec_all_processes(struct hwt_decoder *d);
/* Bumped whenever a process is replaced (fork over an existing pid): a
 * format that caches per process pointer must drop the cache then. */
uint64_t hwt_dec_process_epoch(const struct hwt_decoder *d);
/* Per-CPU: the thread that ran on cpu at time t (perf ns): the last one
 * switched in (ITRACE_START, switch-in) at or before t, the first one if
 * t precedes them all; -1 if the CPU has no switch records.  *cursor (0
 * at first) speeds up lookups at increasing times.  Complete only after
 * the last record (formats use it in flush/finish). */
uint32_t hwt_dec_cpu_tid_at(struct hwt_decoder *d, uint32_t cpu, uint64_t t, size_t *cursor);
/* Time conversion TSC -> perf time: 1 if known; a format sets it (Intel
 * PT: from its AUXTRACE_INFO). */
int hwt_dec_have_time_conv(const struct hwt_decoder *d);
void hwt_dec_set_time_conv(struct hwt_decoder *d, uint16_t shift, uint32_t mult, uint64_t zero);
/* Delivery to the consumer (and counting: gaps).  A format may call the
 * consumer's callbacks itself on hot paths (hwt_dec_consumer), except
 * gap (count it: hwt_dec_emit_gap). */
void hwt_dec_emit_insn(struct hwt_decoder *d, struct hwt_dec_thread *t,
		       const struct hwt_dec_insn *in, const struct hwt_image *img, int have_time,
		       uint64_t time_ns);
void hwt_dec_emit_branch(struct hwt_decoder *d, struct hwt_dec_thread *t, uint64_t from,
			 uint64_t to, int kind, const struct hwt_image *img, int have_time,
			 uint64_t time_ns);
void hwt_dec_emit_event(struct hwt_decoder *d, struct hwt_dec_thread *t,
			const struct hwt_dec_event *ev);
void hwt_dec_emit_gap(struct hwt_decoder *d, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip,
		      int err);
void hwt_dec_emit_sample(struct hwt_decoder *d, struct hwt_dec_thread *t,
			 const struct hwt_dec_sample *s);
/* A one-line error for hwt_decoder_errmsg (what failed, on what, what
 * to do); return the error code from the callback too. */
void hwt_dec_set_err(struct hwt_decoder *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif /* HWT_DECODE_H */
