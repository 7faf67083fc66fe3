/* hwt/pt_flow.h - Intel PT control-flow reconstruction.
 *
 * Layer: lib/pt (flow).  Three decoders, each built on the one before:
 *
 *  - the query decoder (hwt_pt_query_*) turns packets into the questions a
 *    flow decoder asks: was this conditional branch taken, where did this
 *    indirect branch go, and which events (enable, disable, interrupt,
 *    overflow, mode change, TSX, power, ptwrite, ...) happened in between.
 *  - the instruction decoder (hwt_pt_insn_*) walks the code in an image
 *    (hwt/image.h) and yields one executed instruction per call.
 *  - the block decoder (hwt_pt_block_*) yields one basic block per call:
 *    a run of sequential instructions ending at a branch or an event
 *    (with end_on_call/end_on_jump clear, direct calls and jumps do not
 *    end a block: its instructions are then not all in sequence).
 *
 * Speed: decoded code is cached (struct hwt_pt_cache below) and, while
 * no event is pending, straight-line code is crossed one cached run at
 * a time; share one cache across decoders that decode one trace piece
 * after the other.  hwt_pt_block_batch (below) delivers taken branches
 * by the array, most of them with one path-cache lookup per TNT packet.
 *
 * Every decoder has the verbs sync_forward, next, event, offset,
 * sync_offset and time.  next() and event() return a status: a negative
 * enum hwt_error, or a non-negative set of HWT_PTS_* flags.  When
 * HWT_PTS_EVENT_PENDING is set the caller must call event() until it is
 * clear before calling next() again.
 *
 * HWT_PTS_EOS comes as soon as the trace is used up (no packets, no TNT
 * bits, no events left), like libipt's pts_eos.  A caller that wants the
 * whole flow up to the end of the trace (e.g. to join regions decoded
 * separately) may call next() on: it returns the instructions that need
 * no trace (sequential code, direct jumps and calls) and then the first
 * one that does (a conditional or indirect branch, a return, a far
 * transfer), filled in, with HWT_ERR_EOS; after a disable, HWT_ERR_EOS
 * at once.  At most 65536 instructions come after the end.  In the middle
 * of the trace, a cycle of such instructions that the trace never leads
 * out of (an event whose ip the cycle does not reach, branch answers no
 * instruction asks for: the trace does not match the code) ends with
 * HWT_ERR_BAD_QUERY at its jump, after at most a few rounds.
 *
 * Lifecycle: *_alloc(config, ...) -> sync_forward -> next/event ... ->
 * *_free.  The config's trace buffer and the image must outlive the
 * decoder.  Decoders hold no global state; memory does not grow with the
 * trace (the return stack is a fixed ring; the block cache is bounded).
 */
#ifndef HWT_PT_FLOW_H
#define HWT_PT_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/error.h"
#include "hwt/image.h"
#include "hwt/pt_config.h"
#include "hwt/x86.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status flags (non-negative returns). */
enum hwt_pt_status {
	HWT_PTS_EVENT_PENDING = 1 << 0, /* call event() */
	HWT_PTS_IP_SUPPRESSED = 1 << 1, /* no ip for the last query/event */
	HWT_PTS_EOS = 1 << 2,		/* end of the trace (nothing more) */
};

enum hwt_pt_event_type {
	HWT_EV_ENABLED = 0,    /* tracing enabled (ip) */
	HWT_EV_DISABLED,       /* disabled at a branch (ip: the target, if any) */
	HWT_EV_ASYNC_DISABLED, /* disabled asynchronously (at, ip) */
	HWT_EV_ASYNC_BRANCH,   /* interrupt/exception (from, to) */
	HWT_EV_PAGING,	       /* cr3 change (bound to the next far branch/mov cr3) */
	HWT_EV_ASYNC_PAGING,   /* cr3 change at an async branch (ip) */
	HWT_EV_OVERFLOW,       /* internal buffer overflow; resume at ip */
	HWT_EV_EXEC_MODE,      /* execution mode change (ip) */
	HWT_EV_TSX,	       /* transaction begin/commit/abort (ip) */
	HWT_EV_STOP,	       /* TraceStop */
	HWT_EV_VMCS,	       /* VMCS base change */
	HWT_EV_ASYNC_VMCS,     /* VMCS base change at an async branch (ip) */
	HWT_EV_EXSTOP,	       /* execution stopped (ip) */
	HWT_EV_MWAIT,	       /* mwait hints (ip) */
	HWT_EV_PWRE,	       /* power entry */
	HWT_EV_PWRX,	       /* power exit */
	HWT_EV_PTWRITE,	       /* ptwrite payload (ip) */
	HWT_EV_TICK,	       /* timing packet (ip) */
	HWT_EV_CBR,	       /* core:bus ratio */
	HWT_EV_MNT,	       /* maintenance */
	HWT_EV_IFLAGS,	       /* interrupts enabled/disabled (ip) */
	HWT_EV_INTERRUPT,      /* CFE interrupt (vector, cr2) */
	HWT_EV_IRET,
	HWT_EV_SMI,
	HWT_EV_RSM,
	HWT_EV_INIT,
	HWT_EV_SIPI,
	HWT_EV_SHUTDOWN,
	HWT_EV_SYSCALL,
	HWT_EV_SWINTR,
	HWT_EV_UINTR,
	HWT_EV_UIRET,
	HWT_EV_VMENTRY,
	HWT_EV_VMEXIT,
	HWT_EV_TRIG,
	HWT_EV_EOT, /* end of trace (the trace ended while enabled) */
	HWT_EV_NTYPES
};

struct hwt_pt_event {
	uint8_t type;	       /* enum hwt_pt_event_type */
	uint8_t ip_suppressed; /* ip (and to/at) not known */
	uint8_t status_update; /* from a PSB+: state, not a change */
	uint8_t ip_hidden;     /* ip tells where the event binds, but the trace
				* did not report it for the event itself */
	uint8_t has_tsc;
	uint64_t tsc; /* time of the event, if has_tsc */
	uint32_t lost_mtc, lost_cyc;
	uint64_t ip; /* enabled, disabled, overflow, exec_mode, tsx, ... */
	union {
		struct {
			uint8_t resumed;
		} enabled;
		struct {
			uint64_t at;
		} async_disabled;
		struct {
			uint64_t from;
		} async_branch;
		struct {
			uint64_t cr3;
			uint8_t non_root;
		} paging;
		struct {
			uint8_t mode;
		} exec_mode;
		struct {
			uint8_t speculative, aborted;
		} tsx;
		struct {
			uint64_t base;
		} vmcs;
		struct {
			uint32_t hints, ext;
		} mwait;
		struct {
			uint8_t state, sub_state, hw;
		} pwre;
		struct {
			uint8_t last, deepest, interrupt, store, autonomous;
		} pwrx;
		struct {
			uint8_t size;
			uint64_t payload;
		} ptwrite;
		struct {
			uint8_t ratio;
		} cbr;
		struct {
			uint64_t payload;
		} mnt;
		struct {
			uint8_t iflag;
		} iflags;
		struct {
			uint8_t vector, has_cr2;
			uint64_t cr2;
		} interrupt;
		struct {
			uint8_t vector;
		} sipi;
		struct {
			uint8_t vector;
		} swintr;
		struct {
			uint8_t vector;
		} uintr;
		struct {
			uint8_t has_vector, vector, has_vmxr, has_vmxq;
			uint64_t vmxr, vmxq;
		} vmexit;
		struct {
			uint8_t trbv, mult, icntv, armed;
			uint16_t icnt;
		} trig;
	} u;
};

/* ---- query decoder ---- */
struct hwt_pt_query;

struct hwt_pt_query_options {
	size_t size; /* sizeof(struct hwt_pt_query_options) */
	uint8_t keep_tcal_on_ovf;
	uint8_t enable_tick_events;
	uint8_t enable_iflags_events;
	/* the caller never asks for the time (hwt_pt_*_time, events' tsc, a
	 * batch's want_time): the decoder does not track it.  Timing packets
	 * (MTC, CYC, TSC, TMA) are skipped, events carry no time and the
	 * time queries return HWT_ERR_NO_TIME; branches, instructions,
	 * events and errors are the same.  Ignored with enable_tick_events
	 * (ticks need the time). */
	uint8_t no_time;
};

struct hwt_pt_query *hwt_pt_query_alloc(const struct hwt_pt_config *cfg,
					const struct hwt_pt_query_options *opt);
void hwt_pt_query_free(struct hwt_pt_query *q);
/* Sync onto the next PSB; *ip is the resume ip (status IP_SUPPRESSED if
 * none).  Returns status flags or HWT_ERR_EOS. */
int hwt_pt_query_sync_forward(struct hwt_pt_query *q, uint64_t *ip);
int hwt_pt_query_cond_branch(struct hwt_pt_query *q, int *taken);
int hwt_pt_query_indirect_branch(struct hwt_pt_query *q, uint64_t *ip);
int hwt_pt_query_event(struct hwt_pt_query *q, struct hwt_pt_event *ev);
/* Peek at the pending event (NULL if none). */
const struct hwt_pt_event *hwt_pt_query_peek(const struct hwt_pt_query *q);
int hwt_pt_query_offset(const struct hwt_pt_query *q, uint64_t *offset);
int hwt_pt_query_sync_offset(const struct hwt_pt_query *q, uint64_t *offset);
int hwt_pt_query_time(const struct hwt_pt_query *q, uint64_t *tsc, uint32_t *lost_mtc,
		      uint32_t *lost_cyc);

/* ---- instruction decoder ---- */
struct hwt_pt_insn_decoder;

struct hwt_pt_insn {
	uint64_t ip;
	uint8_t size;
	uint8_t iclass; /* enum hwt_insn_class */
	uint8_t mode;	/* 16, 32, 64 */
	uint8_t speculative;
	uint8_t truncated; /* crossed an image piece boundary */
	uint8_t raw[15];
};

/* ---- decode cache ----
 * Decoded code: single instructions and straight-line runs (the
 * instructions from an address up to the first branch), keyed by address
 * and execution mode, for one image at a time.  A decoder allocates its
 * own unless hwt_pt_flow_options.cache names one; sharing one cache
 * between decoders that run one after the other on the same image (e.g.
 * one per trace region) keeps it warm.  Not for concurrent decoders.
 * The cache starts over by itself when the image it is used with changes
 * (another image, or hwt_image_version() moved on); call
 * hwt_pt_cache_clear() after freeing an image and allocating another,
 * which may get the same address.  Memory is bounded (a few MB): when the
 * cache is full it starts over. */
struct hwt_pt_cache;
struct hwt_pt_cache_config {
	size_t size;	    /* sizeof(struct hwt_pt_cache_config) */
	uint32_t max_insns; /* instructions kept in runs (0: the default, 1M;
			     * at least 256); about 9 bytes each */
};
struct hwt_pt_cache *hwt_pt_cache_alloc(void); /* the default config */
struct hwt_pt_cache *hwt_pt_cache_alloc_cfg(const struct hwt_pt_cache_config *cfg);
void hwt_pt_cache_free(struct hwt_pt_cache *c);
void hwt_pt_cache_clear(struct hwt_pt_cache *c);

struct hwt_pt_flow_options {
	size_t size; /* sizeof(struct hwt_pt_flow_options) */
	struct hwt_pt_query_options query;
	uint8_t end_on_call;	    /* block decoder: end a block after a call */
	uint8_t end_on_jump;	    /* block decoder: end a block after a jump */
	struct hwt_pt_cache *cache; /* shared decode cache, or NULL: own one */
	/* batch decoder (hwt_pt_block_batch): do not use the path cache
	 * (cached branch sequences per block and TNT packet); the result is
	 * the same, only slower (for tests) */
	uint8_t no_path_cache;
};

struct hwt_pt_insn_decoder *hwt_pt_insn_alloc(const struct hwt_pt_config *cfg,
					      const struct hwt_image *img,
					      const struct hwt_pt_flow_options *opt);
void hwt_pt_insn_free(struct hwt_pt_insn_decoder *d);
int hwt_pt_insn_sync_forward(struct hwt_pt_insn_decoder *d);
int hwt_pt_insn_next(struct hwt_pt_insn_decoder *d, struct hwt_pt_insn *insn);
int hwt_pt_insn_event(struct hwt_pt_insn_decoder *d, struct hwt_pt_event *ev);
int hwt_pt_insn_offset(const struct hwt_pt_insn_decoder *d, uint64_t *offset);
int hwt_pt_insn_sync_offset(const struct hwt_pt_insn_decoder *d, uint64_t *offset);
int hwt_pt_insn_time(const struct hwt_pt_insn_decoder *d, uint64_t *tsc, uint32_t *lost_mtc,
		     uint32_t *lost_cyc);
/* After an error from next/event: drop what is left of the current
 * branch answers and continue at the next ip the trace gives (a TIP, or an
 * event with an ip).  Returns status flags or an error (then sync
 * forward). */
int hwt_pt_insn_resync(struct hwt_pt_insn_decoder *d);
/* Current ip (0 if unknown). */
uint64_t hwt_pt_insn_ip(const struct hwt_pt_insn_decoder *d);

/* ---- block decoder ---- */
struct hwt_pt_block_decoder;

#define HWT_PT_BLOCK_MAX_INSN 1024

struct hwt_pt_block {
	uint64_t ip;	 /* first instruction */
	uint64_t end_ip; /* last instruction */
	uint32_t ninsn;
	uint8_t mode;
	uint8_t iclass; /* class of the last instruction */
	uint8_t speculative;
	uint8_t truncated;
	/* The instructions' addresses and sizes (valid until the next call);
	 * a block has at most HWT_PT_BLOCK_MAX_INSN instructions.  Where
	 * ips[i + 1] != ips[i] + sizes[i] the flow branched. */
	const uint64_t *ips;
	const uint8_t *sizes;
};

struct hwt_pt_block_decoder *hwt_pt_block_alloc(const struct hwt_pt_config *cfg,
						const struct hwt_image *img,
						const struct hwt_pt_flow_options *opt);
void hwt_pt_block_free(struct hwt_pt_block_decoder *d);
int hwt_pt_block_sync_forward(struct hwt_pt_block_decoder *d);
int hwt_pt_block_next(struct hwt_pt_block_decoder *d, struct hwt_pt_block *block);
int hwt_pt_block_event(struct hwt_pt_block_decoder *d, struct hwt_pt_event *ev);
int hwt_pt_block_offset(const struct hwt_pt_block_decoder *d, uint64_t *offset);
int hwt_pt_block_sync_offset(const struct hwt_pt_block_decoder *d, uint64_t *offset);
int hwt_pt_block_time(const struct hwt_pt_block_decoder *d, uint64_t *tsc, uint32_t *lost_mtc,
		      uint32_t *lost_cyc);
int hwt_pt_block_resync(struct hwt_pt_block_decoder *d);
uint64_t hwt_pt_block_ip(const struct hwt_pt_block_decoder *d);

/* ---- batch decoding: taken branches, events and errors in one stream ----
 * hwt_pt_block_batch() fills a caller's array with what the block
 * decoder's loop (sync_forward, event until no EVENT_PENDING, next, ...)
 * yields, reduced to taken branches, in order:
 *  - HWT_PTE_BRANCH: a taken branch from -> to; iclass is the branch
 *    instruction's class (enum hwt_insn_class; a conditional branch or a
 *    far transfer that lands on the next instruction is not taken and
 *    not reported; every other branch is).  Asynchronous branches are
 *    events (HWT_EV_ASYNC_BRANCH).
 *  - HWT_PTE_EVENT: the event events[index] (from hwt_pt_block_event).
 *  - HWT_PTE_ERROR: a decode error err at trace offset `offset`, flow at
 *    ip `from` (0 if unknown); the batch then syncs forward to the next
 *    PSB by itself (a sync that fails is an error entry too).
 *  - HWT_PTE_END: the trace is used up (HWT_PTS_EOS, or no PSB left); the
 *    last entry: later calls return 0 entries.
 *  - HWT_PTE_TIME (only with want_time and time_entries): the decoder's
 *    time moved where no other entry says so (from, to: 0): after a block
 *    whose branch was not taken or not reported, or before a STOP whose
 *    block moved it.  With these, the time after every block is the
 *    tsc of the last entry before the next block, so a caller can give
 *    each branch the time the block decoder's loop would read for it.
 *  - HWT_PTE_STOP (only with have_stop): the flow executed the
 *    instruction at stop_ip (from = stop_ip); it comes after the entries
 *    made before that instruction and before the branch (or event) that
 *    follows it; it has no instruction count (ninsn 0, no time: the
 *    instructions around it count toward the next entry).  A caller
 *    that decodes up to a PSB whose FUP says where the flow stood uses
 *    it to find where its part of the flow ends.
 * ninsn counts the instructions executed since the previous entry, up to
 * and including a branch's own instruction (for an error: those before
 * the one that failed; instructions past the end of the trace are not
 * counted, unless past_end is set: then the batch goes on past the end
 * of the trace with the instructions that need no trace, as
 * hwt_pt_block_next does, up to and counting the first that needs
 * trace, and the HWT_PTE_END comes after them).  With want_time, has_time/tsc give the decoder's
 * time (hwt_pt_block_time) when the entry was made.
 *
 * The decoder syncs forward by itself at the first call; the verbs above
 * may be mixed with batches (a batch goes on from where they left off,
 * and they from where a batch ended), except that a batch needs the
 * events of a status to be taken by the batch or by hwt_pt_block_event
 * before it.  While a batch runs, direct calls and jumps end blocks
 * (end_on_call/end_on_jump).  Cost: on cached code without events, one
 * lookup of the path cache per TNT packet delivers all its branches. */
enum hwt_pt_entry_type {
	HWT_PTE_BRANCH = 0,
	HWT_PTE_EVENT,
	HWT_PTE_ERROR,
	HWT_PTE_END,
	HWT_PTE_STOP,
	HWT_PTE_TIME,
};

struct hwt_pt_entry {
	uint8_t type;	  /* enum hwt_pt_entry_type */
	uint8_t iclass;	  /* BRANCH: enum hwt_insn_class of the branch */
	uint8_t has_time; /* tsc is valid (want_time) */
	uint8_t mode;	  /* BRANCH: execution mode (16, 32, 64) */
	int32_t err;	  /* ERROR: enum hwt_error */
	uint32_t ninsn;	  /* instructions since the previous entry */
	uint32_t index;	  /* EVENT: index in hwt_pt_batch.events */
	uint64_t from;	  /* BRANCH: branch ip; ERROR: flow ip (0: unknown) */
	uint64_t to;	  /* BRANCH: target; ERROR: trace offset */
	uint64_t tsc;
};

struct hwt_pt_batch {
	size_t size;		      /* sizeof(struct hwt_pt_batch) */
	struct hwt_pt_entry *entries; /* in: room for cap entries (cap >= 2) */
	size_t cap;
	struct hwt_pt_event *events; /* in: room for ev_cap events (>= 1) */
	size_t ev_cap;
	uint8_t want_time;    /* fill has_time/tsc */
	uint8_t have_stop;    /* report visits of stop_ip (HWT_PTE_STOP;
			       * then cap >= 3) */
	uint8_t past_end;     /* go on past the end of the trace (see above) */
	uint8_t time_entries; /* with want_time: HWT_PTE_TIME entries (then
			       * cap >= 4 with have_stop) */
	uint64_t stop_ip;
	size_t n, nev; /* out: entries and events filled */
	/* in, with have_stop: report visits of stop_ip only once the decoder
	 * has taken every packet before this offset of the buffer (0: all
	 * visits).  The offset where the packets that move the flow (TNT,
	 * TIP, TIP.PGE, TIP.PGD) end before a PSB: the flow visits the PSB's
	 * ip last after them. */
	uint64_t stop_from;
};

/* Set up b for hwt_pt_block_batch: zeroed, its size, the caller's arrays
 * (entries: cap >= 2, or 3 with have_stop; events: ev_cap >= 1); the
 * options (want_time, have_stop/stop_ip, past_end) stay 0 for the caller
 * to set. */
void hwt_pt_batch_init(struct hwt_pt_batch *b, struct hwt_pt_entry *entries, size_t cap,
		       struct hwt_pt_event *events, size_t ev_cap);

/* Fill b->entries (and b->events) from the decoder's current position.
 * Returns 1 when more may follow, 0 after the HWT_PTE_END entry, or a
 * negative error for bad arguments (nothing filled). */
int hwt_pt_block_batch(struct hwt_pt_block_decoder *d, struct hwt_pt_batch *b);

#ifdef __cplusplus
}
#endif
#endif /* HWT_PT_FLOW_H */
