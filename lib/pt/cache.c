/* lib/pt/cache.c - the decode cache: instructions and straight-line runs.
 *
 * A flow decoder spends most of its time on code it has seen before, so
 * decoded code is kept in two direct-mapped tables: single instructions
 * (used where the flow must look at each instruction: events pending,
 * code near the end of a mapped piece) and runs (every instruction from
 * an address up to the first branch, with their addresses and sizes in
 * a pool), which let the flow engine cross a whole run with one lookup
 * when no event can interrupt it.
 *
 * Ownership: a cache is either owned by one decoder or shared by
 * decoders that run one after the other (hwt_pt_flow_options.cache).
 * It belongs to one image at a time (cache_bind clears it when the image
 * or its version changes).  Limits: fixed memory, about 10 MB when all
 * tables are touched (by default RUN_POOL run members, allocated with the
 * first run; RUN_SLOTS runs; ICACHE_SIZE instructions); a full pool
 * clears the run table and starts over.
 */
#include <stdlib.h>
#include <string.h>

#include "insn_int.h"

struct hwt_pt_cache *hwt_pt_cache_alloc(void)
{
	return hwt_pt_cache_alloc_cfg(NULL);
}

struct hwt_pt_cache *hwt_pt_cache_alloc_cfg(const struct hwt_pt_cache_config *cfg)
{
	struct hwt_pt_cache_config cc = {sizeof(cc), RUN_POOL};
	if (cfg)
		memcpy(&cc, cfg, cfg->size < sizeof(cc) ? cfg->size : sizeof(cc));
	if (!cc.max_insns)
		cc.max_insns = RUN_POOL;
	struct hwt_pt_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pool_cap = cc.max_insns < RUN_MAX ? RUN_MAX : cc.max_insns;
	/* calloc of large blocks maps zero pages: untouched slots cost nothing */
	c->icache = calloc(ICACHE_SIZE, sizeof(*c->icache));
	c->runs = calloc(RUN_SLOTS, sizeof(*c->runs));
	/* the pool (up to 9 MB) grows with the runs (build): short-lived
	 * decoders of small traces never need most of it */
	if (!c->icache || !c->runs) {
		hwt_pt_cache_free(c);
		return NULL;
	}
	return c;
}

void hwt_pt_cache_free(struct hwt_pt_cache *c)
{
	if (!c)
		return;
	free(c->icache);
	free(c->runs);
	free(c->ips);
	free(c->sizes);
	free(c->paths);
	free(c->pent);
	free(c->prs);
	free(c);
}

static void clear_runs(struct hwt_pt_cache *c)
{
	memset(c->runs, 0, RUN_SLOTS * sizeof(*c->runs));
	c->used = 0;
	c->epoch++;
}

void hwt_pt_cache_clear(struct hwt_pt_cache *c)
{
	if (!c)
		return;
	memset(c->icache, 0, ICACHE_SIZE * sizeof(*c->icache));
	clear_runs(c);
	path_clear(c);
	c->img = NULL;
	c->version = 0;
}

/* Decode the run at ip into slot r.  0, or an error if not even its first
 * instruction decodes from a piece with 15 bytes to spare. */
static int build(struct hwt_pt_cache *c, struct run *r, uint64_t ip, int mode)
{
	struct hwt_image_span span;
	struct hwt_x86_insn xi;
	int err = hwt_image_lookup(c->img, ip, &span);
	if (err)
		return err;
	if (c->used + RUN_MAX > c->pool_len && c->pool_len < c->pool_cap) {
		/* the pool grows by doubling up to pool_cap: decoders of small
		 * traces never pay for the whole pool (runs name members by
		 * index, so moving the pool is safe) */
		uint32_t len = c->pool_len ? 2 * c->pool_len : POOL_FIRST;
		if (len > c->pool_cap || len < c->pool_len)
			len = c->pool_cap;
		uint64_t *ips = realloc(c->ips, len * sizeof(*c->ips));
		if (!ips)
			return HWT_ERR_NOMEM;
		c->ips = ips;
		uint8_t *sizes = realloc(c->sizes, len);
		if (!sizes)
			return HWT_ERR_NOMEM;
		c->sizes = sizes;
		c->pool_len = len;
	}
	if (c->used + RUN_MAX > c->pool_len)
		clear_runs(c);
	const uint8_t *p = span.data;
	uint64_t avail = span.avail, at = ip;
	uint32_t n = 0, base = c->used;
	while (n < RUN_MAX && avail >= 15) {
		if (hwt_x86_decode(p, 15, at, mode, &xi))
			break;
		c->ips[base + n] = at;
		c->sizes[base + n] = xi.size;
		n++;
		r->last = (uint16_t)(at - ip);
		r->target = xi.target;
		r->size = xi.size;
		r->iclass = xi.iclass;
		r->flags = xi.flags;
		if (xi.iclass != HWT_INSN_OTHER)
			break;
		at += xi.size;
		p += xi.size;
		avail -= xi.size;
	}
	if (!n)
		return HWT_ERR_BAD_INSN;
	r->ip = ip;
	r->mode = (uint8_t)mode;
	r->valid = 1;
	r->n = (uint16_t)n;
	r->pool = base;
	c->used += n;
	return 0;
}

const struct run *cache_run_build(struct hwt_pt_cache *c, uint64_t ip, int mode)
{
	struct run *r = &c->runs[run_slot(ip, mode)];
	if (!c->img)
		return NULL;
	r->valid = 0;
	return build(c, r, ip, mode) ? NULL : r;
}

void run_last(const struct hwt_pt_cache *c, const struct run *r, struct hwt_x86_insn *xi)
{
	memset(xi, 0, sizeof(*xi));
	xi->ip = r->ip + r->last;
	xi->target = r->target;
	xi->size = r->size;
	xi->iclass = r->iclass;
	xi->mode = r->mode;
	xi->flags = r->flags;
}
