/* tests/unit/test_cache_model.c - the cache and TLB model of the emulated
 * sampling units (emu/cache_model.c, compiled in here): geometry, LRU
 * eviction, latencies, against facts that follow from the configuration
 * (sets = size / line / ways; addresses one set-stride apart share a
 * set). */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "../../emu/cache_model.c"

static struct cache_model *model(void)
{
	struct cache_model_config c;
	cache_model_config_init(&c);
	return cache_model_alloc(&c, NULL, 0);
}

static struct cache_model_result go(struct cache_model *m, uint64_t a)
{
	struct cache_model_result r;
	cache_model_access(m, a, 0, &r);
	return r;
}

static void t_defaults(void)
{
	struct cache_model_config c;
	cache_model_config_init(&c);
	CHECK_EQ(c.l1_size, 32768);
	CHECK_EQ(c.l1_ways, 8);
	CHECK_EQ(c.line_size, 64);
	CHECK_EQ(c.llc_size, 8 << 20);
	CHECK_EQ(c.llc_ways, 16);
	CHECK_EQ(c.tlb_entries, 64);
	CHECK_EQ(c.tlb_ways, 4);
	CHECK(c.l1_latency < c.llc_latency && c.llc_latency < c.mem_latency);
}

static void t_first_touch_misses_everything(void)
{
	struct cache_model *m = model();
	CHECK(m != NULL);
	struct cache_model_result r = go(m, 0x10000);
	CHECK_EQ(r.level, CACHE_MODEL_MEM);
	CHECK(!r.l1_hit && !r.llc_hit && !r.tlb_hit);
	CHECK_EQ(r.latency, 200 + 30);
	r = go(m, 0x10000 + 63); /* same line, same page */
	CHECK_EQ(r.level, CACHE_MODEL_L1);
	CHECK(r.l1_hit && r.tlb_hit);
	CHECK_EQ(r.latency, 4);
	r = go(m, 0x10000 + 64); /* next line: L1 and LLC miss, TLB hit */
	CHECK_EQ(r.level, CACHE_MODEL_MEM);
	CHECK(r.tlb_hit);
	CHECK_EQ(r.latency, 200);
	cache_model_free(m);
}

/* L1: 32 KiB / 64 B / 8 ways = 64 sets: lines 4 KiB apart share a set. */
static void t_l1_associativity_lru(void)
{
	struct cache_model *m = model();
	const uint64_t base = 0x400000, stride = 64 * 64;
	for (int i = 0; i < 8; i++)
		go(m, base + i * stride);
	for (int i = 0; i < 8; i++)
		CHECKF(go(m, base + i * stride).l1_hit, "way %d of 8 should still be in L1", i);
	/* touch 0 (now most recent), then a 9th line evicts the LRU one: 1 */
	go(m, base);
	struct cache_model_result r = go(m, base + 8 * stride);
	CHECK(!r.l1_hit);
	CHECK(go(m, base).l1_hit);
	r = go(m, base + 1 * stride);
	CHECK_EQ(r.level, CACHE_MODEL_LLC); /* evicted from L1, still in the LLC */
	CHECK_EQ(r.latency, 40);
	/* other sets are untouched by all this */
	CHECK_EQ(go(m, base + 64).level, CACHE_MODEL_MEM);
	cache_model_free(m);
}

/* A buffer of exactly L1's size stays in L1; twice that does not (LRU
 * over a sequential sweep evicts every line before its reuse). */
static void t_l1_capacity(void)
{
	struct cache_model *m = model();
	const uint64_t base = 0x7f0000000000ull;
	for (uint64_t a = 0; a < 32768; a += 64)
		go(m, base + a);
	int hits = 0;
	for (uint64_t a = 0; a < 32768; a += 64)
		hits += go(m, base + a).l1_hit;
	CHECK_EQ(hits, 512);
	cache_model_flush(m);
	for (uint64_t a = 0; a < 65536; a += 64)
		go(m, base + a);
	hits = 0;
	int llc = 0;
	for (uint64_t a = 0; a < 65536; a += 64) {
		struct cache_model_result r = go(m, base + a);
		hits += r.l1_hit;
		llc += r.llc_hit;
	}
	CHECK_EQ(hits, 0);
	CHECK_EQ(llc, 1024);
	cache_model_free(m);
}

/* LLC: 8 MiB / 64 / 16 = 8192 sets: lines 512 KiB apart share an LLC set
 * (and an L1 set). 17 of them push the first out of both. */
static void t_llc_associativity(void)
{
	struct cache_model *m = model();
	const uint64_t stride = 8192 * 64;
	for (int i = 0; i < 17; i++)
		go(m, 0x100000000ull + i * stride);
	struct cache_model_result r = go(m, 0x100000000ull);
	CHECK_EQ(r.level, CACHE_MODEL_MEM);
	r = go(m, 0x100000000ull + 16 * stride); /* the newest: in L1 (8 ways) still */
	CHECK_EQ(r.level, CACHE_MODEL_L1);
	r = go(m, 0x100000000ull + 5 * stride); /* out of L1, in the LLC */
	CHECK_EQ(r.level, CACHE_MODEL_LLC);
	cache_model_free(m);
}

/* DTLB: 64 entries / 4 ways = 16 sets: pages 16 pages apart share a set. */
static void t_tlb(void)
{
	struct cache_model *m = model();
	const uint64_t stride = 16 * 4096;
	for (int i = 0; i < 4; i++)
		CHECK(!go(m, 0x200000 + i * stride).tlb_hit);
	for (int i = 0; i < 4; i++)
		CHECK(go(m, 0x200000 + i * stride + 8).tlb_hit);
	go(m, 0x200000 + 4 * stride); /* evicts page 0 (LRU) */
	struct cache_model_result r = go(m, 0x200000);
	CHECK(!r.tlb_hit);
	CHECK(r.l1_hit); /* the line is still cached: walk + L1 */
	CHECK_EQ(r.latency, 30 + 4);
	/* 64 pages, one per set slot: all fit */
	cache_model_flush(m);
	for (int i = 0; i < 64; i++)
		go(m, 0x300000 + (uint64_t)i * 4096);
	int hits = 0;
	for (int i = 0; i < 64; i++)
		hits += go(m, 0x300000 + (uint64_t)i * 4096).tlb_hit;
	CHECK_EQ(hits, 64);
	cache_model_free(m);
}

static void t_config(void)
{
	struct cache_model_config c;
	cache_model_config_init(&c);
	CHECK_EQ(cache_model_config_set(&c, "l1_size", "16K"), 1);
	CHECK_EQ(c.l1_size, 16384);
	CHECK_EQ(cache_model_config_set(&c, "llc_size", "2M"), 1);
	CHECK_EQ(c.llc_size, 2 << 20);
	CHECK_EQ(cache_model_config_set(&c, "mem_lat", "300"), 1);
	CHECK_EQ(c.mem_latency, 300);
	CHECK_EQ(cache_model_config_set(&c, "nope", "1"), 0);
	CHECK_EQ(cache_model_config_set(&c, "l1_ways", "x"), -1);
	struct cache_model *m = cache_model_alloc(&c, NULL, 0);
	CHECK(m != NULL);
	struct cache_model_result r = go(m, 0x1000);
	CHECK_EQ(r.latency, 300 + 30);
	cache_model_free(m);
	char why[256] = "";
	c.l1_ways = 3; /* 256 lines / 3: not whole sets */
	CHECK(cache_model_alloc(&c, why, sizeof(why)) == NULL);
	CHECK(strstr(why, "L1D") != NULL);
	cache_model_config_init(&c);
	c.l1_ways = 512; /* fully associative: 1 set */
	m = cache_model_alloc(&c, NULL, 0);
	CHECK(m != NULL);
	for (int i = 0; i < 512; i++)
		go(m, (uint64_t)i * 4096 * 7);
	CHECK(go(m, 0).l1_hit);
	cache_model_free(m);
}

/* Two models are independent (no shared state). */
static void t_independent(void)
{
	struct cache_model *a = model(), *b = model();
	go(a, 0x5000);
	CHECK(go(a, 0x5000).l1_hit);
	CHECK(!go(b, 0x5000).l1_hit);
	cache_model_free(a);
	cache_model_free(b);
}

int main(void)
{
	RUN(t_defaults);
	RUN(t_first_touch_misses_everything);
	RUN(t_l1_associativity_lru);
	RUN(t_l1_capacity);
	RUN(t_llc_associativity);
	RUN(t_tlb);
	RUN(t_config);
	RUN(t_independent);
	return t_done();
}
