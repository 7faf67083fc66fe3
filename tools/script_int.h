/* tools/script_int.h - the decoding engine of "hwt script" and "hwt
 * report", shared by its files: script_perf.c (records, sideband, region
 * decoding, output), script_chunk.c (AUXTRACE chunks cut into PSB-to-PSB
 * regions) and script_cpu.c (per-CPU recordings).  Internal to tools/. */
#ifndef HWT_TOOLS_SCRIPT_INT_H
#define HWT_TOOLS_SCRIPT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/perf_data.h"
#include "hwt/pt_packet.h"
#include "hwt/process.h"
#include "hwt/pt_config.h"
#include "hwt/pt_flow.h"
#include "script_perf.h"

/* ---------------- engine state ---------------- */
struct proc_ent {
	uint32_t pid;
	struct hwt_process *p;
};

struct switch_ev {
	uint64_t time;
	uint32_t tid;
	uint32_t seq; /* file order, for a stable sort */
};

/* Per-CPU recordings: which thread a CPU runs from when (ITRACE_START and
 * switch-in records, sorted by time); the CPU's trace as contiguous
 * segments (AUXTRACE payloads joined); and the PSB-to-PSB regions of all
 * CPUs, decoded in order of their PSB's time. */
struct cpu_tl {
	uint32_t cpu;
	struct switch_ev *sw;
	size_t nsw, capsw;
};

struct cpu_seg {
	size_t qi;
	uint8_t *d;
	size_t n;
	uint64_t base;
};

struct cpu_region {
	uint64_t time;
	size_t seg, off, n;
	int have_next;
};

struct queue {
	uint32_t idx;
	uint32_t tid, cpu;
	int per_cpu;
	uint8_t *carry;
	size_t clen, ccap;
	uint64_t carry_off, next_off;
	size_t scan; /* no cut in the carry before this position */
	int have_next;
	/* per-CPU: switch-in timeline */
	struct switch_ev *sw;
	size_t nsw, capsw, cur;
};

/* Output held back after the stop ip: an instruction or a branch. */
struct pending {
	uint8_t is_branch;
	uint8_t kind;
	uint8_t have_time;
	uint64_t time;
	union {
		struct hwt_pt_insn in;
		struct {
			uint64_t from, to;
		} br;
	} u;
};

struct engine {
	const char *cmd;
	const struct sp_consumer *c;
	struct proc_ent *procs;
	size_t nprocs, capprocs;
	struct sp_thread **threads;
	size_t nthreads, capthreads;
	struct hwt_process *all; /* every mapping of every process (per-CPU) */
	struct queue *queues;
	size_t nqueues;
	struct cpu_tl *tls; /* per-CPU: switch timelines, until queues take them */
	size_t ntls;
	struct cpu_seg *segs;
	size_t nsegs;
	int have_rtime; /* per-CPU: the time of the region being decoded */
	uint64_t rtime;
	uint8_t *vdso; /* the recording's vdso (build-id cache), or NULL */
	size_t vdso_size;
	struct hwt_pt_config cfg;
	struct hwt_perf_intel_pt_info info;
	int have_info, have_conv;
	uint64_t mtc_freq_cfg;
	/* time conversion TSC -> perf time */
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	int gaps;
	/* region decode state */
	struct sp_thread *th;
	const struct hwt_image *img;
	struct hwt_pt_insn_decoder *d;
	struct hwt_pt_block_decoder *bd; /* instead of d when nobody wants
					  * instructions or time */
	int have_prev;
	uint64_t prev_ip, prev_end; /* previous instruction: ip, ip + size
				     * (prev_end 0: size unknown) */
	int prev_class, prev_mode;
	/* the decoders' decode cache, shared by the regions decoded one
	 * after the other; it holds the code of image pc_img of process
	 * pc_proc at generation pc_gen */
	struct hwt_pt_cache *pc;
	const struct hwt_image *pc_img;
	const struct hwt_process *pc_proc;
	uint64_t pc_gen;
	int holding;	  /* non-final region with a stop ip */
	uint64_t stop_ip; /* FUP IP of the PSB ending the region */
	struct pending *pend;
	size_t npend, cappend;
	int pend_overflow;
	int pend_active; /* output is being held back */
	struct queue *q;
};

/* script_perf.c */
extern const uint8_t sp_psb_pat[16]; /* a PSB: 02 82 eight times */
/* sp_psb_fup_ip() reads at most this many packets (of at most 16 bytes). */
#define PSBP_MAX_PKTS 64
#define PSBP_MAX_BYTES (PSBP_MAX_PKTS * HWT_PT_PKT_MAX_SIZE)
uint64_t sp_tsc_to_ns(const struct engine *e, uint64_t tsc);
/* The first PSB in [p, p + n), or NULL. */
const uint8_t *sp_find_psb(const uint8_t *p, size_t n);
/* The FUP of the PSB+ at p (n bytes readable): 1 and *ip where the flow
 * resumes; 0 when there is none to wait for (PSB+ without an FUP, or not
 * parseable); HWT_ERR_EOS when the PSB+ runs past the n bytes (the rest
 * is in the next chunk). */
int sp_psb_fup_ip(const uint8_t *p, size_t n, uint64_t *ip);
/* Decode one region [data, data + n) of queue q whose first byte is at
 * stream offset base; holding: the region ends at a PSB whose FUP ip is
 * stop_ip (output from there on is held back, for the next region). */
void sp_decode_region(struct engine *e, struct queue *q, const uint8_t *data, size_t n,
		      uint64_t base, int holding, uint64_t stop_ip);
/* A switch-in (or ITRACE_START) record: 1 and *tid, *pid; else 0. */
int sp_switch_in(const struct hwt_perf_record *rec, uint32_t *tid, uint32_t *pid);

/* script_chunk.c */
int sp_carry_append(struct queue *q, const uint8_t *p, size_t n);
void sp_flush_carry(struct engine *e, struct queue *q);
/* One AUXTRACE chunk of a per-thread queue at stream offset aux_off. */
void sp_on_chunk(struct engine *e, struct queue *q, const uint8_t *data, size_t n,
		 uint64_t aux_off);

/* script_cpu.c */
void sp_tl_add(struct engine *e, const struct hwt_perf_record *rec);
void sp_tl_attach(struct engine *e);
void sp_cpu_chunk(struct engine *e, struct queue *q, const uint8_t *data, size_t n,
		  uint64_t aux_off);
void sp_cpu_decode_all(struct engine *e);

#endif
