/* emu/cache_model.c - the data cache and TLB model (see cache_model.h).
 *
 * Each structure (L1D, LLC, DTLB) is an array of sets; a set holds its
 * ways' tags in most-recently-used-first order, so a hit moves the tag to
 * the front and a miss drops the last one (true LRU, no counters).  Tags
 * are "block number + 1" (line or page number), 0 meaning empty.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "cache_model.h"

struct cm_array {
	uint64_t *tags;	   /* nsets * ways, each set MRU first */
	uint32_t ways;	   /* tags per set */
	uint64_t set_mask; /* nsets - 1 */
	unsigned shift;	   /* log2 of the block (line or page) size */
};

struct cache_model {
	struct cache_model_config cfg;
	struct cm_array l1, llc, tlb;
};

void cache_model_config_init(struct cache_model_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->line_size = 64;
	cfg->l1_size = 32 << 10;
	cfg->l1_ways = 8;
	cfg->l1_latency = 4;
	cfg->llc_size = 8 << 20;
	cfg->llc_ways = 16;
	cfg->llc_latency = 40;
	cfg->mem_latency = 200;
	cfg->tlb_entries = 64;
	cfg->tlb_ways = 4;
	cfg->page_size = 4096;
	cfg->tlb_walk_latency = 30;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static unsigned log2u(uint64_t v)
{
	unsigned n = 0;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

/* entries = blocks in total (size / block); 0 or -1 for a bad geometry. */
static int array_init(struct cm_array *a, const char *what, uint64_t entries, uint32_t ways,
		      uint64_t block, char *why, size_t whylen)
{
	if (!is_pow2(block) || !ways || !entries || entries % ways || !is_pow2(entries / ways)) {
		if (why)
			snprintf(why, whylen,
				 "cache model: bad %s geometry (%llu entries, %u ways, %llu-byte "
				 "blocks: want a power-of-two number of sets and block size)",
				 what, (unsigned long long)entries, ways,
				 (unsigned long long)block);
		return -1;
	}
	a->ways = ways;
	a->set_mask = entries / ways - 1;
	a->shift = log2u(block);
	a->tags = calloc((size_t)entries, sizeof(uint64_t));
	if (!a->tags) {
		if (why)
			snprintf(why, whylen,
				 "cache model: out of memory for the %s (%llu entries)", what,
				 (unsigned long long)entries);
		return -1;
	}
	return 0;
}

struct cache_model *cache_model_alloc(const struct cache_model_config *cfg, char *why,
				      size_t whylen)
{
	if (!cfg || cfg->size < sizeof(*cfg)) {
		if (why)
			snprintf(why, whylen,
				 "cache model: config not set up with "
				 "cache_model_config_init");
		return NULL;
	}
	struct cache_model *m = calloc(1, sizeof(*m));
	if (!m) {
		if (why)
			snprintf(why, whylen, "cache model: out of memory");
		return NULL;
	}
	m->cfg = *cfg;
	uint64_t line = cfg->line_size ? cfg->line_size : 1;
	if (array_init(&m->l1, "L1D", cfg->l1_size / line, cfg->l1_ways, cfg->line_size, why,
		       whylen) ||
	    array_init(&m->llc, "LLC", cfg->llc_size / line, cfg->llc_ways, cfg->line_size, why,
		       whylen) ||
	    array_init(&m->tlb, "DTLB", cfg->tlb_entries, cfg->tlb_ways, cfg->page_size, why,
		       whylen)) {
		cache_model_free(m);
		return NULL;
	}
	return m;
}

void cache_model_free(struct cache_model *m)
{
	if (!m)
		return;
	free(m->l1.tags);
	free(m->llc.tags);
	free(m->tlb.tags);
	free(m);
}

void cache_model_flush(struct cache_model *m)
{
	const struct cm_array *v[3] = {&m->l1, &m->llc, &m->tlb};
	for (int i = 0; i < 3; i++)
		memset(v[i]->tags, 0, (size_t)(v[i]->set_mask + 1) * v[i]->ways * sizeof(uint64_t));
}

const struct cache_model_config *cache_model_get_config(const struct cache_model *m)
{
	return &m->cfg;
}

/* Look addr's block up in a: 1 on a hit; either way the block ends as
 * the set's most recently used (a miss evicts the least recently used). */
static int array_touch(struct cm_array *a, uint64_t addr)
{
	uint64_t blk = addr >> a->shift;
	uint64_t tag = blk + 1;
	uint64_t *set = a->tags + (size_t)(blk & a->set_mask) * a->ways;
	if (set[0] == tag) /* the most recently used: nothing moves */
		return 1;
	uint32_t w = a->ways;
	uint32_t i;
	for (i = 1; i < w; i++)
		if (set[i] == tag)
			break;
	int hit = i < w;
	if (!hit)
		i = w - 1; /* the LRU way (or an empty one at the end) */
	for (; i > 0; i--) /* short: a few ways */
		set[i] = set[i - 1];
	set[0] = tag;
	return hit;
}

void cache_model_access(struct cache_model *m, uint64_t addr, int is_store,
			struct cache_model_result *res)
{
	(void)is_store; /* write-allocate: stores fill like loads */
	memset(res, 0, sizeof(*res));
	res->tlb_hit = (uint8_t)array_touch(&m->tlb, addr);
	uint32_t lat = res->tlb_hit ? 0 : m->cfg.tlb_walk_latency;
	if (array_touch(&m->l1, addr)) {
		res->level = CACHE_MODEL_L1;
		res->l1_hit = 1;
		lat += m->cfg.l1_latency;
	} else if (array_touch(&m->llc, addr)) {
		res->level = CACHE_MODEL_LLC;
		res->llc_hit = 1;
		lat += m->cfg.llc_latency;
	} else {
		res->level = CACHE_MODEL_MEM;
		lat += m->cfg.mem_latency;
	}
	res->latency = lat;
}

static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	if (!v || !*v)
		return -1;
	unsigned long long n = strtoull(v, &end, 0);
	if (*end == 'k' || *end == 'K')
		n <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		n <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		n <<= 30, end++;
	if (*end || n > UINT32_MAX * 16ull)
		return -1;
	*out = n;
	return 0;
}

int cache_model_config_set(struct cache_model_config *cfg, const char *name, const char *value)
{
	static const struct {
		const char *name;
		size_t off;
		int is64;
	} opts[] = {
	    {"line_size", offsetof(struct cache_model_config, line_size), 0},
	    {"l1_size", offsetof(struct cache_model_config, l1_size), 0},
	    {"l1_ways", offsetof(struct cache_model_config, l1_ways), 0},
	    {"l1_lat", offsetof(struct cache_model_config, l1_latency), 0},
	    {"llc_size", offsetof(struct cache_model_config, llc_size), 1},
	    {"llc_ways", offsetof(struct cache_model_config, llc_ways), 0},
	    {"llc_lat", offsetof(struct cache_model_config, llc_latency), 0},
	    {"mem_lat", offsetof(struct cache_model_config, mem_latency), 0},
	    {"tlb_entries", offsetof(struct cache_model_config, tlb_entries), 0},
	    {"tlb_ways", offsetof(struct cache_model_config, tlb_ways), 0},
	    {"page_size", offsetof(struct cache_model_config, page_size), 0},
	    {"tlb_walk", offsetof(struct cache_model_config, tlb_walk_latency), 0},
	};
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (strcmp(name, opts[i].name))
			continue;
		uint64_t n;
		if (parse_size(value, &n))
			return -1;
		if (opts[i].is64) {
			memcpy((char *)cfg + opts[i].off, &n, sizeof(n));
		} else {
			if (n > UINT32_MAX)
				return -1;
			uint32_t v = (uint32_t)n;
			memcpy((char *)cfg + opts[i].off, &v, sizeof(v));
		}
		return 1;
	}
	return 0;
}
