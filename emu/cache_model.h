/* emu/cache_model.h - a data cache and TLB *model* for the emulated
 * sampling units (Intel PEBS in emu/pebs.c, Arm SPE in emu/aarch64/).
 *
 * What it is: a small, deterministic timing model, not a simulation of any
 * real CPU.  Each data access (virtual address, load or store) goes
 * through:
 *   - a set-associative data TLB (default 64 entries, 4-way, 4 KiB pages):
 *     a miss costs a page walk (default 30 cycles) and fills the entry;
 *   - a set-associative L1 data cache (default 32 KiB, 8-way, 64-byte
 *     lines, 4 cycles);
 *   - on an L1 miss, a set-associative last-level cache (default 8 MiB,
 *     16-way, 40 cycles); on an LLC miss, memory (default 200 cycles).
 * Replacement is true LRU in every structure; both caches allocate on
 * loads and on stores (write-allocate), the LLC is neither inclusive nor
 * exclusive (its evictions do not touch L1).  Total latency = the level
 * that had the line (L1, LLC or memory) + the page walk if there was one.
 * An access is looked up at its first byte only (one line, one page).
 * Not modelled: prefetchers, line fill buffers, store buffers, coherence
 * between threads (each user keeps its own model: the emulated units use
 * one per guest thread, as if every thread had its own core and LLC),
 * physical addresses (caches are indexed and tagged with the virtual
 * address), huge pages, the walk's own cache accesses.
 *
 * Lifecycle: cache_model_config_init(&cfg) (the defaults), change fields,
 * cache_model_alloc(&cfg) -> cache_model_access() per access ->
 * cache_model_free().  The model owns its arrays; there is no global
 * state, so models in different threads are independent.  Plain C, no
 * QEMU types: unit tests include the .c file.
 */
#ifndef HWT_EMU_CACHE_MODEL_H
#define HWT_EMU_CACHE_MODEL_H

#include <stddef.h>
#include <stdint.h>

struct cache_model_config {
	size_t size;	    /* sizeof(struct cache_model_config) */
	uint32_t line_size; /* bytes per line (power of two), L1 and LLC */
	uint32_t l1_size;   /* L1D bytes */
	uint32_t l1_ways;
	uint32_t l1_latency; /* cycles of an L1 hit */
	uint64_t llc_size;   /* LLC bytes */
	uint32_t llc_ways;
	uint32_t llc_latency; /* cycles of an L1 miss that hits the LLC */
	uint32_t mem_latency; /* cycles of an LLC miss (DRAM) */
	uint32_t tlb_entries; /* DTLB entries */
	uint32_t tlb_ways;
	uint32_t page_size;	   /* bytes (power of two) */
	uint32_t tlb_walk_latency; /* cycles added by a DTLB miss */
};

/* What one access did. */
enum cache_model_level {
	CACHE_MODEL_L1 = 1,  /* the line was in L1 */
	CACHE_MODEL_LLC = 2, /* L1 miss, LLC hit */
	CACHE_MODEL_MEM = 3, /* L1 and LLC miss: memory */
};

struct cache_model_result {
	uint8_t level;	  /* enum cache_model_level */
	uint8_t l1_hit;	  /* level == L1 */
	uint8_t llc_hit;  /* level == LLC (0 when L1 hit: the LLC was not looked up) */
	uint8_t tlb_hit;  /* 0: page walk */
	uint32_t latency; /* total cycles */
};

struct cache_model;

/* The defaults above. */
void cache_model_config_init(struct cache_model_config *cfg);
/* NULL if out of memory or the geometry is bad: sizes / line / page /
 * ways must give a power-of-two number of sets >= 1 (why: out, may be
 * NULL). */
struct cache_model *cache_model_alloc(const struct cache_model_config *cfg, char *why,
				      size_t whylen);
void cache_model_free(struct cache_model *m);
/* Look addr up, update LRU state and fill what missed. */
void cache_model_access(struct cache_model *m, uint64_t addr, int is_store,
			struct cache_model_result *res);
/* Forget every line and TLB entry (cold caches, e.g. for a new address
 * space). */
void cache_model_flush(struct cache_model *m);
/* The configuration in use. */
const struct cache_model_config *cache_model_get_config(const struct cache_model *m);
/* Parse "name=value" for one config field (l1_size, l1_ways, line_size,
 * l1_lat, llc_size, llc_ways, llc_lat, mem_lat, tlb_entries, tlb_ways,
 * page_size, tlb_walk): 1 if name is a model option (value stored), 0 if
 * not one, -1 if the value is bad. Sizes take K/M suffixes. */
int cache_model_config_set(struct cache_model_config *cfg, const char *name, const char *value);

#endif /* HWT_EMU_CACHE_MODEL_H */
