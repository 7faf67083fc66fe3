/* lib/decode/pt_int.h - the Intel PT format of the recording decoder,
 * shared by its files: pt.c (ops, region decoding, delivery), pt_chunk.c
 * (a per-thread queue's AUXTRACE chunks cut into PSB-to-PSB regions) and
 * pt_cpu.c (per-CPU queues: held to the end, decoded in time order).
 * Not installed. */
#ifndef HWT_LIB_DECODE_PT_INT_H
#define HWT_LIB_DECODE_PT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/decode.h"
#include "hwt/perf_data.h"
#include "hwt/process.h"
#include "hwt/pt_config.h"
#include "hwt/pt_flow.h"
#include "hwt/pt_packet.h"

/* A queue's state (hwt_dec_queue.fmt). */
struct ptq {
	uint8_t *carry; /* per-thread: the region not decoded yet; per-CPU:
			 * the current segment */
	size_t clen, ccap;
	uint64_t carry_off, next_off;
	size_t scan; /* no cut in the carry before this position */
	int have_next;
	size_t cur; /* per-CPU: timeline cursor */
};

/* Per-CPU: the CPU's trace as contiguous segments (AUXTRACE payloads
 * joined), and the PSB-to-PSB regions of all CPUs, decoded in order of
 * their PSB's time. */
struct cpu_seg {
	struct hwt_dec_queue *q;
	uint8_t *d;
	size_t n;
	uint64_t base;
};

struct cpu_region {
	uint64_t time;
	size_t seg, off, n;
	int have_next;
};

/* One piece of output kept for later: held back after the stop ip (the
 * pending list, pt.c: instructions, branches, events), or made by a
 * worker of the parallel decode for the main thread to deliver (struct
 * pt_cap, pt_par.c: instructions, events, gaps; its branches go to an
 * array of their own, nbr says how many came before the item).  An
 * event itself is in an array beside the items, at index u.ev. */
struct pt_item {
	uint8_t what; /* P_INSN, P_BRANCH, P_EVENT, P_GAP */
	uint8_t kind;
	uint8_t have_time;
	int32_t err;
	uint64_t time;
	size_t nbr;
	union {
		struct hwt_dec_insn in;
		struct {
			uint64_t from, to;
		} br;
		struct {
			uint64_t off, ip;
		} gap;
		size_t ev;
	} u;
};
enum {
	P_INSN,
	P_BRANCH,
	P_EVENT,
	P_GAP,
	P_RANGE
}; /* P_RANGE: pending
    * only (u.ev: index
    * in pt.prg) */

/* A piece of a job's branches: the pieces come from a pool shared by the
 * threads (pt_par.c), most recently used first, so they are in a cache. */
#define PT_CBUF_N 1024
struct pt_cbuf {
	struct pt_cbuf *next;
	size_t n;
	struct hwt_dec_branch e[PT_CBUF_N];
};
struct pt_pool;

/* A worker's output for one job (pt_par.c): items, their events, and
 * the taken branches (in pieces). */
struct pt_cap {
	struct pt_item *it;
	size_t n, cap;
	struct hwt_pt_event *ev;
	size_t nev, evcap;
	struct pt_cbuf *head, *tail;
	size_t nbr; /* branches in the pieces */
	struct pt_pool *pool;
	/* ranges (consumers of ranges: then items' nbr counts these) */
	struct hwt_dec_range *rg;
	size_t nrg, rgcap;
	int nomem;
	/* text (hwt_decode_consumer.branches_text): the branches printed
	 * into tx whenever the one piece fills (and before each item, whose
	 * nbr then counts the bytes of tx before it) */
	int text;
	char *tx;
	size_t ntx, txcap;
	const struct hwt_decode_consumer *c;
	void *fctx;
	const struct hwt_dec_thread *th;
	const struct hwt_image *img;
};

struct pt {
	struct hwt_decoder *dec;
	const struct hwt_decode_consumer *c;
	struct hwt_pt_config cfg;
	struct hwt_perf_intel_pt_info info;
	int have_info;
	int have_conv;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
	struct cpu_seg *segs;
	size_t nsegs;
	int have_rtime; /* per-CPU: the time of the region being decoded */
	uint64_t rtime;
	/* region decode state */
	struct hwt_dec_thread *th;
	const struct hwt_image *img;
	struct hwt_pt_insn_decoder *d;
	struct hwt_pt_block_decoder *bd; /* instead of d when nobody wants
					  * instructions' bytes or time */
	int have_prev;
	int have_async_at; /* the last event was an async disable at async_at */
	uint64_t async_at;
	uint64_t prev_ip, prev_end; /* previous instruction: ip, ip + size
				     * (prev_end 0: size unknown) */
	int prev_class, prev_mode;
	/* the decoders' decode cache, shared by the regions decoded one
	 * after the other; it holds the code of image pc_img of process
	 * pc_proc at generation pc_gen (process epoch pc_epoch) */
	struct hwt_pt_cache *pc;
	const struct hwt_image *pc_img;
	const struct hwt_process *pc_proc;
	uint64_t pc_gen, pc_epoch;
	int holding;	  /* non-final region with a stop ip */
	size_t ext;	  /* the region's bytes after its end PSB (pt_par.c) */
	uint64_t stop_ip; /* FUP IP of the PSB ending the region */
	struct pt_item *pend;
	size_t npend, cappend;
	struct hwt_pt_event *pevs;
	size_t npevs, cappevs;
	int pend_overflow;
	int pend_active; /* output is being held back */
	struct hwt_dec_queue *q;
	struct ptq *pq;
	int nomem;
	unsigned dflags;    /* hwt_decoder_config.flags */
	unsigned jobs;	    /* hwt_decoder_config.jobs (resolved) */
	uint8_t kinds[256]; /* hwt_branch_kind_of by instruction class (any uint8_t) */
	/* the region's process, its generation and the process epoch */
	struct hwt_process *rproc;
	uint64_t rgen, repoch;
	/* taken branches gathered for the consumer's branches callback */
	struct hwt_dec_branch *bb;
	size_t nbb;
	/* consumers of ranges (rmode): the range being built (have_rcur),
	 * the ones gathered for the ranges callback, the pending ones */
	int rmode;
	int have_rcur;
	struct hwt_dec_range rcur;
	struct hwt_dec_range *rb;
	size_t nrb;
	struct hwt_dec_range *prg;
	size_t nprg, capprg;
	/* a worker of the parallel decode: output goes here (pt_par.c) */
	struct pt_cap *cap;
	struct pt_par *par; /* the main decoder's workers (pt_par.c) */
	void *fctx;	    /* a decoder state of pt_par.c: its
			     * hwt_decode_consumer.text_ctx */
	int par_state;	    /* a decoder state of pt_par.c: its regions come
			     * resolved (th, img, rproc, ... set) */
	int reached_stop;   /* the last region reached its stop ip */
	uint64_t seams_bad; /* parallel segments that did not reach it */
};

#define PT_BB_CAP 1024	   /* branches per branches() call */
#define PT_RB_CAP 512	   /* ranges per ranges() call */
#define PT_BATCH 512	   /* entries per hwt_pt_block_batch call */
#define PT_BATCH_EVENTS 32 /* events per hwt_pt_block_batch call */

/* pt.c */
extern const uint8_t hwt_pt_psb_pat[16]; /* a PSB: 02 82 eight times */
/* pt_psb_fup_ip() reads at most this many packets (of at most 16 bytes). */
#define PSBP_MAX_PKTS 64
#define PSBP_MAX_BYTES (PSBP_MAX_PKTS * HWT_PT_PKT_MAX_SIZE)
static inline uint64_t pt_tsc_to_ns(const struct pt *e, uint64_t tsc)
{
	if (!e->have_conv)
		return tsc;
	uint64_t quot = tsc >> e->time_shift;
	uint64_t rem = tsc & ((1ull << e->time_shift) - 1);
	return e->time_zero + quot * e->time_mult + ((rem * e->time_mult) >> e->time_shift);
}
/* The first PSB in [p, p + n), or NULL. */
const uint8_t *pt_find_psb(const uint8_t *p, size_t n);
/* The FUP of the PSB+ at p (n bytes readable): 1 and *ip where the flow
 * resumes; 0 when there is none to wait for (PSB+ without an FUP, or not
 * parseable); HWT_ERR_EOS when the PSB+ runs past the n bytes (the rest
 * is in the next chunk). */
int pt_psb_fup_ip(const uint8_t *p, size_t n, uint64_t *ip);
/* Where the packets that move the flow (TNT, TIP, TIP.PGE, TIP.PGD) end
 * before the PSB at data + cut, parsed from the last PSB before it: once
 * the decoder has taken them, the flow visits the PSB's ip for the last
 * time (a region's decoder needs to watch that ip only from there on).
 * 0 when not known (no PSB within PT_STOP_SCAN bytes, bytes that do not
 * parse up to the cut): then every visit counts. */
#define PT_STOP_SCAN (256u << 10)
size_t pt_stop_from(const uint8_t *data, size_t cut);
/* Decode one region [data, data + n) of queue q whose first byte is at
 * stream offset base; holding: the region ends at a PSB whose FUP ip is
 * stop_ip (output from there on is held back, for the next region). */
void pt_decode_region(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n,
		      uint64_t base, int holding, uint64_t stop_ip);

/* The region's thread, process and image (main thread).  0 or -1. */
int pt_region_resolve(struct pt *e, struct hwt_dec_queue *q);
/* Output (to the consumer, or captured in a worker). */
void pt_out_flush(struct pt *e);
void pt_out_branch(struct pt *e, uint64_t from, uint64_t to, int kind, int have_time, uint64_t t);
void pt_out_insn(struct pt *e, const struct hwt_dec_insn *in, int have_time, uint64_t t);
void pt_out_event(struct pt *e, const struct hwt_pt_event *ev, int have_time, uint64_t t);
void pt_out_gap(struct pt *e, uint64_t off, uint64_t ip, int err);

/* pt_par.c: regions decoded on worker threads */
/* A worker's output (e->cap set): one more item, or NULL (out of
 * memory). */
struct pt_item *pt_cap_item(struct pt *w, int what);
/* Room for branches at the end of c's last piece (a new piece when it is
 * full): the free slots at *o, or 0 (out of memory: c->nomem). */
size_t pt_cap_room(struct pt_cap *c, struct hwt_dec_branch **o);
struct hwt_dec_range *pt_cap_range(struct pt *w);
void pt_cap_event(struct pt *w, const struct hwt_pt_event *ev, int have_time, uint64_t t);
/* Decode the region [data, data + n) of queue q (as pt_decode_region)
 * on the workers, its output delivered in order: 0, or -1 when it cannot
 * (decode it on this thread, after pt_par_drain). */
int pt_par_region(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n,
		  uint64_t base, int holding, uint64_t stop_ip);
/* Deliver the output of every region given to the workers (waits). */
void pt_par_drain(struct pt *e);
void pt_par_free(struct pt *e);
/* A region of a per-thread queue: on the workers when they can take it,
 * else here (pt_chunk.c's regions go through this). */
void pt_region(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n, uint64_t base,
	       int holding, uint64_t stop_ip);

/* pt_chunk.c */
int pt_carry_append(struct ptq *q, const uint8_t *p, size_t n);
void pt_flush_carry(struct pt *e, struct hwt_dec_queue *q);
/* One AUXTRACE chunk of a per-thread queue at stream offset aux_off. */
void pt_on_chunk(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n,
		 uint64_t aux_off);

/* pt_cpu.c */
void pt_cpu_chunk(struct pt *e, struct hwt_dec_queue *q, const uint8_t *data, size_t n,
		  uint64_t aux_off);
void pt_cpu_seg_end(struct pt *e, struct hwt_dec_queue *q);
void pt_cpu_decode_all(struct pt *e);

#endif
