/* tools/report_mem.c - "hwt report --mem": where memory time goes, from
 * the samples of a sampling recording (Intel PEBS mem-loads/mem-stores,
 * Arm SPE), as the recording decoder delivers them (struct
 * hwt_dec_sample: nothing format-specific here).
 *
 * Tables: accesses and latency by code symbol (the sampled instruction's
 * function); by data object (the data symbol the address falls in, else
 * the mapping: [heap], [stack], [anon], [file]; script_samples.c); a
 * latency histogram (power-of-two buckets of cycles); the instructions
 * with the most cache misses (LLC misses, then L1 misses).  Memory grows
 * with the distinct functions, objects and instructions sampled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hwt/decode.h"
#include "progress.h"
#include "report_mem.h"
#include "script_perf.h"
#include "script_samples.h"

struct agg {
	char *name; /* key: symbol / object name; NULL for ip rows */
	uint64_t ip;
	uint64_t n, lat, l1miss, llcmiss, tlbmiss;
	uint64_t off; /* ip rows: offset in the symbol */
	char *sym;    /* ip rows: the symbol */
};

struct table {
	struct agg *v;
	size_t n, cap;
	uint32_t *idx; /* hash -> 1-based index into v */
	size_t hcap;
};

#define NBUCKETS 16

struct memrep {
	struct sp_symcache *sc;
	struct table code, data, insns;
	uint64_t n, loads, stores, other, lat, l1miss, llcmiss, tlbmiss;
	uint64_t hist[NBUCKETS];
	int nomem;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static uint64_t key_hash(const char *name, uint64_t ip)
{
	uint64_t h = name ? hash_str(name) : ip * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

static int key_eq(const struct agg *a, const char *name, uint64_t ip)
{
	return name ? a->name && !strcmp(a->name, name) : !a->name && a->ip == ip;
}

static int rehash(struct table *t, size_t ncap)
{
	uint32_t *idx = calloc(ncap, sizeof(*idx));
	if (!idx)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = key_hash(t->v[i].name, t->v[i].ip) & (ncap - 1);
		while (idx[j])
			j = (j + 1) & (ncap - 1);
		idx[j] = (uint32_t)(i + 1);
	}
	free(t->idx);
	t->idx = idx;
	t->hcap = ncap;
	return 0;
}

static struct agg *table_get(struct table *t, const char *name, uint64_t ip)
{
	if ((t->n + 1) * 2 > t->hcap && rehash(t, t->hcap ? 2 * t->hcap : 256))
		return NULL;
	size_t j = key_hash(name, ip) & (t->hcap - 1);
	while (t->idx[j]) {
		struct agg *a = &t->v[t->idx[j] - 1];
		if (key_eq(a, name, ip))
			return a;
		j = (j + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 256;
		struct agg *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		t->v = nv;
		t->cap = nc;
	}
	struct agg *a = &t->v[t->n];
	memset(a, 0, sizeof(*a));
	if (name && !(a->name = strdup(name)))
		return NULL;
	a->ip = ip;
	t->idx[j] = (uint32_t)++t->n;
	return a;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].sym);
	}
	free(t->v);
	free(t->idx);
}

static void count(struct agg *a, const struct hwt_dec_sample *s)
{
	a->n++;
	a->lat += s->weight;
	a->l1miss += !!(s->flags & HWT_DSF_L1_MISS);
	a->llcmiss += !!(s->flags & HWT_DSF_LLC_MISS);
	a->tlbmiss += !!(s->flags & HWT_DSF_TLB_MISS);
}

static void on_sample(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_sample *s)
{
	struct memrep *r = arg;
	r->n++;
	if (s->flags & HWT_DSF_LOAD)
		r->loads++;
	else if (s->flags & HWT_DSF_STORE)
		r->stores++;
	else
		r->other++;
	r->lat += s->weight;
	r->l1miss += !!(s->flags & HWT_DSF_L1_MISS);
	r->llcmiss += !!(s->flags & HWT_DSF_LLC_MISS);
	r->tlbmiss += !!(s->flags & HWT_DSF_TLB_MISS);
	unsigned b = 0;
	for (uint64_t w = s->weight; w > 1 && b < NBUCKETS - 1; w >>= 1)
		b++;
	r->hist[b]++;
	uint64_t off;
	const char *sym = sp_symbol(r->sc, s->img, s->ip, &off);
	struct agg *a = table_get(&r->code, sym ? sym : "[unknown]", 0);
	char buf[300];
	uint64_t doff;
	struct agg *d = NULL;
	int mem = !!(s->flags & (HWT_DSF_LOAD | HWT_DSF_STORE)); /* not SPE's branches */
	if (mem) {
		const char *obj = ss_data_object(s, buf, sizeof(buf), &doff);
		d = table_get(&r->data, obj ? obj : "[unknown]", 0);
	}
	struct agg *in = table_get(&r->insns, NULL, s->ip);
	if (!a || (mem && !d) || !in) {
		r->nomem = 1;
		return;
	}
	count(a, s);
	if (d)
		count(d, s);
	if (!in->n && sym) {
		in->sym = strdup(sym);
		in->off = off;
	}
	count(in, s);
}

static int by_lat(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;
	if (a->lat != b->lat)
		return a->lat < b->lat ? 1 : -1;
	if (a->n != b->n)
		return a->n < b->n ? 1 : -1;
	return a->name && b->name ? strcmp(a->name, b->name) : (a->ip > b->ip) - (a->ip < b->ip);
}

static int by_misses(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;
	if (a->llcmiss != b->llcmiss)
		return a->llcmiss < b->llcmiss ? 1 : -1;
	if (a->l1miss != b->l1miss)
		return a->l1miss < b->l1miss ? 1 : -1;
	if (a->lat != b->lat)
		return a->lat < b->lat ? 1 : -1;
	return (a->ip > b->ip) - (a->ip < b->ip);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_table(struct table *t, const char *title, const char *what, size_t top,
			const struct memrep *r)
{
	qsort(t->v, t->n, sizeof(*t->v), by_lat);
	printf("\n# %s (by total latency)\n", title);
	printf("# %8s %7s %12s %7s %7s %8s %7s %7s  %s\n", "samples", "%samp", "latency", "%lat",
	       "mean", "L1miss", "LLCmiss", "TLBmiss", what);
	for (size_t i = 0; i < t->n && (!top || i < top); i++) {
		const struct agg *a = &t->v[i];
		printf("  %8llu %6.2f%% %12llu %6.2f%% %7.1f %8llu %7llu %7llu  %s\n",
		       (unsigned long long)a->n, pct(a->n, r->n), (unsigned long long)a->lat,
		       pct(a->lat, r->lat), a->n ? (double)a->lat / (double)a->n : 0.0,
		       (unsigned long long)a->l1miss, (unsigned long long)a->llcmiss,
		       (unsigned long long)a->tlbmiss, a->name);
	}
	if (top && t->n > top)
		printf("  ... %zu more (-n 0 shows all)\n", t->n - top);
}

static void print_report(struct memrep *r, size_t top)
{
	printf("# %llu samples: %llu loads, %llu stores%s; total latency %llu cycles (mean "
	       "%.1f)\n",
	       (unsigned long long)r->n, (unsigned long long)r->loads,
	       (unsigned long long)r->stores, r->other ? ", others" : "",
	       (unsigned long long)r->lat, r->n ? (double)r->lat / (double)r->n : 0.0);
	printf("# L1 misses %llu (%.1f%%), LLC misses %llu (%.1f%%), TLB misses %llu (%.1f%%)\n",
	       (unsigned long long)r->l1miss, pct(r->l1miss, r->n), (unsigned long long)r->llcmiss,
	       pct(r->llcmiss, r->n), (unsigned long long)r->tlbmiss, pct(r->tlbmiss, r->n));
	print_table(&r->code, "code symbols", "symbol", top, r);
	print_table(&r->data, "data objects", "object", top, r);
	printf("\n# latency histogram (cycles)\n");
	uint64_t max = 0;
	for (int b = 0; b < NBUCKETS; b++)
		max = r->hist[b] > max ? r->hist[b] : max;
	for (int b = 0; b < NBUCKETS; b++) {
		if (!r->hist[b])
			continue;
		unsigned long long lo = b ? 1ull << b : 0, hi = 1ull << (b + 1);
		int bar = max ? (int)(50 * r->hist[b] / max) : 0;
		if (b == NBUCKETS - 1)
			printf("  %6llu+       ", lo);
		else
			printf("  %6llu-%-6llu ", lo, hi - 1);
		printf("%10llu %6.2f%% ", (unsigned long long)r->hist[b], pct(r->hist[b], r->n));
		for (int i = 0; i < bar; i++)
			putchar('#');
		putchar('\n');
	}
	struct table *t = &r->insns;
	qsort(t->v, t->n, sizeof(*t->v), by_misses);
	printf("\n# instructions with the most cache misses\n");
	printf("# %8s %8s %8s %7s  %-18s %s\n", "LLCmiss", "L1miss", "samples", "mean", "ip",
	       "symbol");
	size_t shown = 0;
	for (size_t i = 0; i < t->n && (!top || shown < top); i++) {
		const struct agg *a = &t->v[i];
		if (!a->l1miss && !a->llcmiss)
			break;
		shown++;
		printf("  %8llu %8llu %8llu %7.1f  0x%-16llx %s+0x%llx\n",
		       (unsigned long long)a->llcmiss, (unsigned long long)a->l1miss,
		       (unsigned long long)a->n, a->n ? (double)a->lat / (double)a->n : 0.0,
		       (unsigned long long)a->ip, a->sym ? a->sym : "[unknown]",
		       (unsigned long long)(a->sym ? a->off : 0));
	}
	if (!shown)
		printf("  (no sampled access missed a cache)\n");
}

int report_mem(const char *input, size_t top, int progress)
{
	struct memrep r;
	memset(&r, 0, sizeof(r));
	r.sc = sp_symcache_alloc();
	if (!r.sc)
		return 2;
	struct hwt_decode_consumer c = {
	    .size = sizeof(c),
	    .arg = &r,
	    .sample = on_sample,
	};
	struct progress *pg = progress_start("report", input, progress);
	int rc = sp_run_progress(input, "report", &c, pg);
	progress_stop(pg);
	if (rc != 2) {
		if (!r.n) {
			cli_err("report",
				"'%s' has no memory samples (record them with -e mem-loads, "
				"mem-stores or arm_spe)",
				input);
			rc = 2;
		} else {
			if (r.nomem)
				cli_err("report", "out of memory: the summary is incomplete");
			print_report(&r, top);
			fflush(stdout);
		}
	}
	table_free(&r.code);
	table_free(&r.data);
	table_free(&r.insns);
	sp_symcache_free(r.sc);
	return rc;
}
