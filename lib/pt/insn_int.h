/* lib/pt/insn_int.h - the instruction flow engine shared by the
 * instruction decoder (insn.c) and the block decoder (block.c). */
#ifndef HWT_LIB_PT_INSN_INT_H
#define HWT_LIB_PT_INSN_INT_H

#include "hwt/pt_flow.h"
#include "query_int.h"

#define RETSTACK_SIZE 64

struct retstack {
	uint64_t ip[RETSTACK_SIZE];
	uint8_t top, n;
};

void retstack_clear(struct retstack *rs);
void retstack_push(struct retstack *rs, uint64_t ip);
int retstack_pop(struct retstack *rs, uint64_t *ip);

/* One decoded instruction cached by (ip, image piece id, mode). */
struct icache_entry {
	uint64_t ip;
	uint32_t id;
	uint8_t mode, valid;
	struct hwt_x86_insn insn;
};
#define ICACHE_SIZE 4096

struct flow {
	struct hwt_pt_query *q;
	const struct hwt_image *img;
	struct hwt_pt_flow_options opt;
	struct hwt_pt_errata errata;
	struct hwt_pt_addr_filter filter;

	int enabled;
	int have_ip;
	uint64_t ip;
	int mode;
	int speculative;
	struct retstack rs;

	/* an instruction returned with an event bound to it, to be
	 * executed after the event(s) */
	int postponed;
	struct hwt_x86_insn pinsn;

	int synced;
	int resyncing;
	int was_disabled;   /* a disable event since the sync (for 'resumed') */
	int err_deferred;   /* the last error came from reading ahead */
	uint32_t eos_insns; /* instructions decoded after the end of the trace */
	/* the cycle check at direct jumps and calls (flow_no_trace_cycle) */
	struct {
		uint64_t ip, pos;
		int tnt_n, nready, nwait, flags;
		uint32_t n, lim;
	} cyc;

	struct icache_entry *icache;
};

int flow_init(struct flow *f, const struct hwt_pt_config *cfg, const struct hwt_image *img,
	      const struct hwt_pt_flow_options *opt);
void flow_fini(struct flow *f);
/* Allocate a decoder object of `size` bytes whose first member is a
 * struct flow, and initialise that flow (NULL on a bad config or no
 * memory); flow_free() undoes it.  The insn and block decoders are thin
 * shells made this way. */
void *flow_alloc(size_t size, const struct hwt_pt_config *cfg, const struct hwt_image *img,
		 const struct hwt_pt_flow_options *opt);
void flow_free(struct flow *f);
int flow_sync_forward(struct flow *f);
/* Decode the instruction at f->ip (cached).  0 or an error. */
int flow_decode(struct flow *f, struct hwt_x86_insn *xi, int *truncated);
/* Does the pending event apply before the instruction at f->ip? */
int flow_event_applies(const struct flow *f, const struct hwt_pt_event *ev);
/* Does the pending event bind to (come after) instruction xi? */
int flow_event_binds(const struct flow *f, const struct hwt_pt_event *ev,
		     const struct hwt_x86_insn *xi);
/* Execute xi: compute the next ip (queries TNT/TIP).  0 or an error. */
int flow_proceed(struct flow *f, const struct hwt_x86_insn *xi);
/* Status flags for the current position. */
int flow_status(struct flow *f);
int flow_event(struct flow *f, struct hwt_pt_event *ev);
/* One step: fill insn with the next instruction.  Returns status or an
 * error; *have_insn says whether insn is valid (also on errors). */
int flow_step(struct flow *f, struct hwt_x86_insn *xi, int *have_insn, int *truncated);
/* Called before executing the direct jump or call at ip (flow_proceed
 * does): 1 if the flow is in a cycle that needs no trace and so never
 * ends (the trace does not match the code: report HWT_ERR_BAD_QUERY),
 * else 0.  A fast path that executes direct jumps and calls without
 * flow_proceed must call it too. */
int flow_no_trace_cycle(struct flow *f, uint64_t ip);

/* After an error: continue at the next ip the trace gives. */
int flow_resync(struct flow *f);

#endif
