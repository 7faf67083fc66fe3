/* lib/pt/insn_int.h - the instruction flow engine shared by the
 * instruction decoder (insn.c) and the block decoder (block.c). */
#ifndef HWT_LIB_PT_INSN_INT_H
#define HWT_LIB_PT_INSN_INT_H

#include "hwt/pt_flow.h"
#include "hwt/image.h"
#include "image/image_int.h"
#include "packet_int.h"
#include "query_int.h"

#define RETSTACK_SIZE 64

struct retstack {
	uint64_t ip[RETSTACK_SIZE];
	uint8_t top, n;
};

void retstack_clear(struct retstack *rs);
static inline void retstack_push(struct retstack *rs, uint64_t ip)
{
	rs->ip[rs->top] = ip;
	rs->top = (uint8_t)((rs->top + 1) % RETSTACK_SIZE);
	if (rs->n < RETSTACK_SIZE)
		rs->n++;
}
static inline int retstack_pop(struct retstack *rs, uint64_t *ip)
{
	if (!rs->n)
		return HWT_ERR_RETSTACK_EMPTY;
	rs->top = (uint8_t)((rs->top + RETSTACK_SIZE - 1) % RETSTACK_SIZE);
	rs->n--;
	*ip = rs->ip[rs->top];
	return 0;
}

/* One decoded instruction cached by (ip, image piece id, mode). */
struct icache_entry {
	uint64_t ip;
	uint32_t id;
	uint8_t mode, valid;
	struct hwt_x86_insn insn;
};
#define ICACHE_SIZE 4096

/* A straight-line run: the instructions from ip up to and including the
 * first that is not HWT_INSN_OTHER (the last one), or up to RUN_MAX
 * instructions, all decoded from one image piece (cache.c).  32 bytes:
 * only what executing the last instruction needs. */
struct run {
	uint64_t ip;
	uint64_t target; /* last instruction's direct target */
	uint32_t pool;	 /* index of the first one in cache->ips/sizes */
	uint16_t n;	 /* instructions, including the last */
	uint16_t last;	 /* ip of the last instruction - ip */
	uint8_t mode, valid;
	uint8_t size, iclass, flags; /* of the last instruction */
};
#define RUN_MAX 256
#define RUN_SLOTS 16384
#define RUN_POOL (1u << 20)   /* default pool size */
#define POOL_FIRST (1u << 14) /* the pool's first allocation */

/* A path (path.c): from ip, in mode, what the TNT bits select when every
 * run on the way ends in a conditional branch, a direct jump or nothing
 * (RUN_MAX): the taken branches as finished batch entries (struct
 * hwt_pt_entry: type, class, mode, from, to and the instructions since
 * the previous one; no time) in the entry pool, with their return stack
 * operations beside them, and where the path leaves off (right after the
 * conditional branch that took the last bit it uses).  The key is the
 * bits not yet used with a stop bit above them: (1 << n) | bits, the
 * oldest bit at n - 1 (n <= 63). */
struct path {
	uint64_t ip;
	uint64_t key;
	uint64_t end;  /* ip after the path */
	uint32_t br;   /* first entry in cache->pent (and cache->prs) */
	uint32_t tail; /* instructions after the last branch */
	uint32_t epoch;
	uint8_t mode, used, nbr; /* mode; bits used; branches */
	uint8_t flags;		 /* PATH_RS, PATH_END_JCC */
};
#define PATH_RS 1      /* some branch pushes or pops the return stack */
#define PATH_END_JCC 2 /* the run at end ends in a conditional branch */
/* The key of the n bits of bits (oldest at n - 1; 1 <= n <= 63). */
static inline uint64_t path_key(uint64_t bits, int n)
{
	return (bits | (1ull << n)) & ((2ull << n) - 1);
}
/* While a path is built: one branch (path.c). */
struct path_br {
	uint64_t from, to;
	uint32_t ninsn; /* instructions since the previous branch, its own included */
	uint8_t iclass;
	uint8_t rs; /* return stack: 0 nothing, PATH_POP a pop, else push from + rs */
};
#define PATH_POP 0xff
#define PATH_MAXDEPTH 32 /* calls of a path not returned from (< RETSTACK_SIZE) */
#define PATH_SLOTS 65536
#define PATH_POOL (1u << 18)
#define PATH_MAXBR 64	  /* branches in one path */
#define PATH_MAXSTEPS 192 /* runs in one path */

struct hwt_pt_cache {
	const struct hwt_image *img; /* the image the entries belong to */
	uint32_t version;	     /* its hwt_image_version() then */
	struct icache_entry *icache; /* ICACHE_SIZE, single instructions */
	struct run *runs;	     /* RUN_SLOTS, direct-mapped */
	uint64_t *ips;		     /* pool_cap addresses of run members */
	uint8_t *sizes;		     /* pool_cap sizes of run members */
	uint32_t pool_cap;	     /* the pool's limit (hwt_pt_cache_config.max_insns) */
	uint32_t pool_len;	     /* entries allocated in ips and sizes (build grows them) */
	uint32_t used;		     /* pool entries in use */
	uint32_t epoch;		     /* bumped whenever runs are dropped */
	/* paths (path.c), allocated with the first one */
	struct path *paths;	   /* PATH_SLOTS, direct-mapped */
	struct hwt_pt_entry *pent; /* PATH_POOL entries of paths' branches */
	uint8_t *prs;		   /* PATH_POOL: their path_br.rs */
	uint32_t pbr_used;	   /* pool entries in use */
	uint32_t path_epoch;	   /* paths of another epoch are invalid (never 0) */
};

/* Make the cache belong to img (clearing it if it held another image or
 * an older version of this one). */
static inline void cache_bind(struct hwt_pt_cache *c, const struct hwt_image *img)
{
	/* the image's version read in place (hwt_image_version, inlined) */
	if (c->img != img || (img && c->version != img->next_id)) {
		/* a cache bound to no image holds nothing (new, or cleared):
		 * not touching its tables keeps short-lived decoders cheap */
		if (c->img)
			hwt_pt_cache_clear(c);
		c->img = img;
		c->version = img ? hwt_image_version(img) : 0;
	}
}
/* The run starting at ip in the given mode, decoded on a miss; NULL if
 * there is none (no code mapped with 15 bytes to spare, or an invalid
 * first instruction): the caller then decodes one instruction at a time.
 * Valid until the next cache_run call. */
const struct run *cache_run_build(struct hwt_pt_cache *c, uint64_t ip, int mode);
static inline size_t run_slot(uint64_t ip, int mode)
{
	uint64_t h = (ip ^ (ip >> 14) ^ ((uint64_t)mode << 7)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 50) & (RUN_SLOTS - 1);
}
static inline const struct run *cache_run(struct hwt_pt_cache *c, uint64_t ip, int mode)
{
	const struct run *r = &c->runs[run_slot(ip, mode)];
	if (r->valid && r->ip == ip && r->mode == mode)
		return r;
	return cache_run_build(c, ip, mode);
}
/* The last instruction of r as a decoded instruction (without raw bytes). */
void run_last(const struct hwt_pt_cache *c, const struct run *r, struct hwt_x86_insn *xi);

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

	struct hwt_pt_cache *cache;
	int own_cache;
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
/* flow_proceed for the conditional branch that ends run r, where its bit
 * is cached (q->tnt_n) and no tick is due (!q->tnt_tick), without
 * decoding it again.  0. */
int flow_proceed_jcc(struct flow *f, const struct run *r);
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

/* Can the flow cross straight-line code and ask the trace only at its
 * end?  True when tracing is on at a known ip and nothing is pending that
 * could bind before the next branch: no events (ready, waiting for an ip
 * or an async branch in flight), no deferred error, no held-back
 * instruction, and not at the end of the trace.  Then flow_step on each
 * instruction would only decode it and move on, up to the first branch,
 * which flow_proceed answers as flow_step would. */
static inline int flow_fast_ok(const struct flow *f)
{
	const struct hwt_pt_query *q = f->q;
	return f->enabled && f->have_ip && !f->postponed && !f->resyncing && !q->nready &&
	       !q->nwait && !q->fup_pending && !q->err && (!q->eos || q->tnt_n);
}

/* Take the next TNT bit without asking the query decoder when that is
 * all it would do: bits are cached, no tick is due, and what follows is
 * another TNT packet (so reading ahead would read nothing; without time
 * tracking, nothing but timing packets: qry_next_tnt8).  1 and *taken,
 * or 0: ask hwt_pt_query_cond_branch.  (Reading ahead fills the same
 * lookahead packet: see qry_read_ahead.) */
static inline int flow_quick_bit(struct hwt_pt_query *q, int *taken)
{
	if (!q->tnt_n || q->tnt_tick)
		return 0;
	if (!q->la_valid) {
		/* what reading ahead would read next, if it is a TNT-8 */
		if (!qry_next_tnt8(q))
			return 0;
		q->la_valid = 1;
	} else if (q->la.type != HWT_PKT_TNT8 && q->la.type != HWT_PKT_TNT64) {
		return 0;
	}
	q->tnt_n--;
	*taken = (int)((q->tnt_bits >> q->tnt_n) & 1);
	if (!q->tnt_n)
		qry_take_tnt(q); /* what reading ahead does now */
	return 1;
}

/* Execute the last instruction of run r where that needs no event
 * handling: direct jumps and calls, and conditional branches and
 * compressed returns whose TNT bit flow_quick_bit gives.  Returns 1 when done
 * (the status is then 0: nothing changed in the query decoder), 0 when
 * the caller must use flow_proceed. */
static inline int flow_quick_proceed(struct flow *f, const struct run *r, uint64_t last_ip)
{
	uint64_t next = last_ip + r->size;
	int taken;
	switch (r->iclass) {
	case HWT_INSN_OTHER:
		f->ip = next;
		return 1;
	case HWT_INSN_JCC:
		if (!flow_quick_bit(f->q, &taken))
			return 0;
		f->ip = taken ? r->target : next;
		return 1;
	case HWT_INSN_JMP:
		if (flow_no_trace_cycle(f, last_ip))
			return 0; /* flow_proceed reports it */
		f->ip = r->target;
		return 1;
	case HWT_INSN_CALL:
		if (flow_no_trace_cycle(f, last_ip))
			return 0; /* flow_proceed reports it */
		if (r->target != next)
			retstack_push(&f->rs, next);
		f->ip = r->target;
		return 1;
	case HWT_INSN_RET:
		if (!f->rs.n || !flow_quick_bit(f->q, &taken))
			return 0;
		if (!taken) {
			f->q->tnt_n++; /* give it back: flow_proceed reports the error */
			return 0;
		}
		return retstack_pop(&f->rs, &f->ip) == 0;
	default:
		return 0;
	}
}

/* After an error: continue at the next ip the trace gives. */
int flow_resync(struct flow *f);

/* The block decoder (block.c); batch.c decodes with it. */
struct hwt_pt_block_decoder {
	struct flow f;
	uint64_t ips[HWT_PT_BLOCK_MAX_INSN];
	uint8_t sizes[HWT_PT_BLOCK_MAX_INSN];
	/* the last block came from the one-run fast lane, and nothing was
	 * called since that could have changed the state: flow_fast_ok still
	 * holds (the lane pushes no event, sets no error, ends no trace) */
	int quiet;
	/* for batches (batch.c): the status of the last verb, whether there
	 * is one, and the batch's own state */
	int bst, have_bst;
	struct {
		uint32_t acc; /* instructions since the last entry */
		int ended;    /* HWT_PTE_END delivered */
		int pend;     /* a branch held back with an event bound to it */
		uint64_t pend_from, pend_next;
		uint8_t pend_class, pend_mode;
		uint64_t err_off; /* the last error's offset, and how often */
		int same_err;
		/* with time_entries: the time of the last entry made */
		int lhas;
		uint64_t ltsc;
	} bt;
};

/* Paths (path.c).  The path at ip in mode for the key (path_key), built
 * on a miss; NULL if there is none (the first run does not end in a
 * conditional branch, or no code). */
static inline size_t path_slot(uint64_t ip, int mode, uint64_t key)
{
	uint64_t h =
	    (ip ^ (key << 20) ^ (key >> 24) ^ ((uint64_t)mode << 2)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 40) & (PATH_SLOTS - 1);
}
const struct path *path_get(struct hwt_pt_cache *c, uint64_t ip, int mode, uint64_t key);
void path_clear(struct hwt_pt_cache *c);

#endif
