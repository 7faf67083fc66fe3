/* tools/cmd_report.c - "hwt report": summaries of a recording.
 *
 * Runs the decoding engine of "hwt script" (script_perf.c) with an
 * instruction consumer and aggregates, in memory that grows with the
 * program's code (functions, blocks, call paths), never with the trace:
 *   default     hot functions by instructions executed (and time when the
 *               trace has timing: the time between consecutive timed
 *               instructions goes to the function of the later one);
 *   --coverage  functions and basic blocks executed (a block starts at the
 *               target of a taken branch or where decoding (re)starts);
 *   --folded    flame-graph input: "caller;...;callee COUNT" lines, the
 *               stack followed through calls and returns, COUNT in
 *               instructions.
 * Functions are named by the ELF symbols of the mapped files
 * ("[unknown]" otherwise).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hwt/decode.h"
#include "out/out.h"
#include "progress.h"
#include "report_mem.h"
#include "report_views.h"
#include "script_perf.h"
#include "srcline.h"

static const char usage_text[] =
    "usage: hwt report [-i FILE | FILE] [--coverage | --folded | --mem] [--srcline] [-n N]\n"
    "       hwt report [-i FILE | FILE] --flamegraph | --flame-chart | --lcov | --drcov\n"
    "                  [-o OUT]\n"
    "\n"
    "Summarize a recording (default hwt.data):\n"
    "  (default)    hot functions by instructions executed (and time, if timed)\n"
    "  --coverage   functions and basic blocks executed\n"
    "  --folded     folded call stacks for flame graphs: 'a;b;c COUNT'\n"
    "  --srcline    source lines (file:line) instead of functions, where the\n"
    "               files have line tables (else the function)\n"
    "  -n N         show the top N functions (default 40; 0: all)\n"
    "  --mem        sampling recordings (mem-loads, mem-stores, arm_spe): accesses\n"
    "               and latency by code symbol and by data object (data symbol,\n"
    "               else [heap], [stack], [anon], [file]), a latency histogram,\n"
    "               the instructions with the most cache misses (top -n rows)\n"
    "  --flamegraph   an interactive flame graph (SVG: click to zoom, search)\n"
    "  --flame-chart  the same in time order (a root frame per thread)\n"
    "  --lcov         coverage as an lcov tracefile (lines, functions, branches;\n"
    "                 for genhtml)\n"
    "  --drcov        coverage as a DynamoRIO drcov log (modules, basic blocks)\n"
    "  -o OUT         write those to OUT (default: stdout)\n"
    "  --no-progress  no progress line on stderr (shown only on a terminal)\n"
    "  --debug-dir DIR\n"
    "                 also look for separate debug files (symbols, lines of\n"
    "                 stripped programs) in DIR, as in /usr/lib/debug (by\n"
    "                 .build-id/); repeatable; default $HWT_DEBUG_DIR (a:b)\n"
    "  -j N           decode on N threads (default: the online CPUs; the result\n"
    "                 is the same for every N)\n"
    "  --no-batch     decode block by block, not in batches, and take every\n"
    "                 instruction by itself, not in ranges (slower; the result\n"
    "                 is the same)\n";

static const char unknown[] = "[unknown]";

/* ---- a tiny hash map from a 128-bit key to a slot index ---- */
struct hmap {
	uint64_t *k1, *k2;
	uint32_t *val;
	size_t cap, n;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6));
	h ^= h >> 29;
	return h * 0xbf58476d1ce4e5b9ull;
}

static int hmap_grow(struct hmap *m)
{
	size_t nc = m->cap ? 2 * m->cap : 1024;
	struct hmap nm = {calloc(nc, 8), calloc(nc, 8), calloc(nc, 4), nc, 0};
	if (!nm.k1 || !nm.k2 || !nm.val) {
		free(nm.k1);
		free(nm.k2);
		free(nm.val);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->val[i])
			continue;
		size_t j = mix(m->k1[i], m->k2[i]) & (nc - 1);
		while (nm.val[j])
			j = (j + 1) & (nc - 1);
		nm.k1[j] = m->k1[i];
		nm.k2[j] = m->k2[i];
		nm.val[j] = m->val[i];
		nm.n++;
	}
	free(m->k1);
	free(m->k2);
	free(m->val);
	*m = nm;
	return 0;
}

/* The value (1-based) for the key; *is_new set if it was added with val. */
static uint32_t hmap_get(struct hmap *m, uint64_t a, uint64_t b, uint32_t val, int *is_new)
{
	*is_new = 0;
	if ((m->n + 1) * 2 > m->cap && hmap_grow(m))
		return 0;
	size_t j = mix(a, b) & (m->cap - 1);
	while (m->val[j]) {
		if (m->k1[j] == a && m->k2[j] == b)
			return m->val[j];
		j = (j + 1) & (m->cap - 1);
	}
	m->k1[j] = a;
	m->k2[j] = b;
	m->val[j] = val;
	m->n++;
	*is_new = 1;
	return val;
}

static void hmap_free(struct hmap *m)
{
	free(m->k1);
	free(m->k2);
	free(m->val);
}

struct func {
	const char *name;
	uint64_t insns, time_ns, blocks, distinct_insns;
};

struct node { /* call-path trie */
	uint32_t parent;
	const char *name;
	uint64_t count;
};

struct rthread {
	uint32_t node; /* current frame, 0: none yet */
	int have_last;
	uint64_t last_time;
	int block_start; /* the next instruction starts a block */
};

struct report {
	struct sp_symcache *sc;
	int mode; /* 0 hot, 1 coverage, 2 folded */
	struct func *f;
	size_t nf, capf;
	struct hmap fmap;  /* name -> func index + 1 */
	struct hmap insns; /* distinct (ip, 0) */
	struct hmap blocks;
	struct hmap ranges; /* --coverage: ranges whose instructions are in insns */
	struct node *nodes;
	size_t nn, capn;
	struct hmap nmap; /* (parent, name) -> node */
	uint64_t total;
	int have_time;
	int nomem;
	struct sl_cache *sl;   /* --srcline: group by source line */
	const char *last_name; /* func_of's last answer (runs of one function) */
	size_t last_fi;
};

static struct func *func_of(struct report *r, const char *name)
{
	if (name == r->last_name)
		return &r->f[r->last_fi];
	int is_new;
	uint32_t v = hmap_get(&r->fmap, (uint64_t)(uintptr_t)name, 0, (uint32_t)r->nf + 1, &is_new);
	if (!v) {
		r->nomem = 1;
		return NULL;
	}
	if (is_new) {
		if (r->nf == r->capf) {
			size_t nc = r->capf ? 2 * r->capf : 256;
			struct func *nv = realloc(r->f, nc * sizeof(*nv));
			if (!nv) {
				r->nomem = 1;
				return NULL;
			}
			r->f = nv;
			r->capf = nc;
		}
		memset(&r->f[r->nf], 0, sizeof(r->f[0]));
		r->f[r->nf++].name = name;
	}
	r->last_name = name;
	r->last_fi = v - 1;
	return &r->f[v - 1];
}

static uint32_t node_child(struct report *r, uint32_t parent, const char *name)
{
	int is_new;
	if (r->nn == 0) { /* node 0: the root */
		r->nodes = calloc(256, sizeof(*r->nodes));
		if (!r->nodes)
			return 0;
		r->capn = 256;
		r->nn = 1;
	}
	uint32_t v =
	    hmap_get(&r->nmap, parent, (uint64_t)(uintptr_t)name, (uint32_t)r->nn, &is_new);
	if (!v)
		return 0;
	if (is_new) {
		if (r->nn == r->capn) {
			struct node *nv = realloc(r->nodes, 2 * r->capn * sizeof(*nv));
			if (!nv) {
				r->nomem = 1;
				return 0;
			}
			r->nodes = nv;
			r->capn *= 2;
		}
		r->nodes[r->nn].parent = parent;
		r->nodes[r->nn].name = name;
		r->nodes[r->nn].count = 0;
		r->nn++;
	}
	return v;
}

static struct rthread *rt(struct hwt_dec_thread *t)
{
	if (!t->user) {
		t->user = calloc(1, sizeof(struct rthread));
		if (t->user)
			((struct rthread *)t->user)->block_start = 1;
	}
	return t->user;
}

static void r_thread_free(void *arg, struct hwt_dec_thread *t)
{
	free(t->user);
	t->user = NULL;
}

static const char *fname(struct report *r, const struct hwt_image *img, uint64_t ip)
{
	uint64_t off;
	const char *n = r->sl ? sl_srcline(r->sl, img, ip) : NULL;
	if (n)
		return n;
	n = sp_symbol(r->sc, img, ip, &off);
	return n ? n : unknown;
}

/* An instruction of f at time t: the time since the thread's last one
 * goes to f. */
static void r_time(struct report *r, struct rthread *th, struct func *f, uint64_t t)
{
	if (th->have_last && t >= th->last_time)
		f->time_ns += t - th->last_time;
	th->last_time = t;
	th->have_last = 1;
	r->have_time = 1;
}

static void r_insn(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		   const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct report *r = arg;
	struct rthread *th = rt(t);
	if (!th)
		return;
	const char *name = fname(r, img, in->ip);
	r->total++;
	if (r->mode == 2) {
		if (!th->node)
			th->node = node_child(r, 0, name);
		if (th->node)
			r->nodes[th->node].count++;
		return;
	}
	struct func *f = func_of(r, name);
	if (!f)
		return;
	f->insns++;
	if (have_time)
		r_time(r, th, f, time_ns);
	if (r->mode == 1) {
		int is_new;
		hmap_get(&r->insns, in->ip, 1, 1, &is_new);
		if (is_new)
			f->distinct_insns++;
		if (th->block_start) {
			hmap_get(&r->blocks, in->ip, 2, 1, &is_new);
			if (is_new)
				f->blocks++;
		}
		th->block_start = 0;
	}
}

static void branch_to(struct report *r, struct rthread *th, const struct hwt_image *img,
		      uint64_t to, int kind)
{
	th->block_start = 1;
	if (r->mode != 2)
		return;
	if (kind == HWT_BR_CALL || kind == HWT_BR_ICALL) {
		uint32_t n = node_child(r, th->node, fname(r, img, to));
		if (n)
			th->node = n;
	} else if (kind == HWT_BR_RET) {
		if (th->node && r->nodes[th->node].parent)
			th->node = r->nodes[th->node].parent;
		else /* returned above where the trace began: re-root */
			th->node = node_child(r, 0, fname(r, img, to));
	}
}

static void r_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		     const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct report *r = arg;
	struct rthread *th = rt(t);
	if (th)
		branch_to(r, th, img, to, kind);
}

/* --coverage: the instructions of x (n of them from ip, named name) not
 * seen before; 0, or -1 if they do not decode. */
static int r_distinct(struct report *r, const struct hwt_image *img, const struct hwt_dec_range *x,
		      uint64_t ip, uint32_t n, struct func *f)
{
	for (uint32_t i = 0; i < n; i++) {
		int is_new;
		hmap_get(&r->insns, ip, 1, 1, &is_new);
		if (is_new)
			f->distinct_insns++;
		if (i + 1 == n)
			break;
		unsigned sz = sp_insn_size(img, ip, x->mode);
		if (!sz)
			return -1;
		ip += sz;
	}
	return 0;
}

/* The instructions of range x, as r_insn takes them one by one: the
 * time from the thread's last one goes to the first one's function (the
 * others have the same time); counts go to each instruction's function
 * (sp_range_piece: one piece per function the range runs through). */
static void r_run(struct report *r, struct rthread *th, const struct hwt_image *img,
		  const struct hwt_dec_range *x)
{
	r->total += x->n;
	if (r->mode == 2) {
		if (!th->node)
			th->node = node_child(r, 0, fname(r, img, x->ip));
		if (th->node)
			r->nodes[th->node].count += x->n;
		return;
	}
	/* --coverage: a range seen before has its instructions in insns */
	int seen = 1;
	if (r->mode == 1 && x->last - x->ip < (1ull << 32)) {
		int is_new;
		uint32_t v = hmap_get(&r->ranges, x->ip, (x->last - x->ip) | (uint64_t)x->n << 32,
				      1, &is_new);
		seen = v && !is_new;
	} else if (r->mode == 1) {
		seen = 0;
	}
	uint64_t ip = x->ip;
	int first = 1;
	for (uint32_t left = x->n; left;) {
		const char *name;
		uint64_t at = ip;
		uint32_t k = sp_range_piece(r->sc, img, x, &ip, left, &name);
		struct func *f = func_of(r, name ? name : unknown);
		if (!f)
			return;
		f->insns += k;
		if (first && x->have_time)
			r_time(r, th, f, x->time_ns);
		if (r->mode == 1) {
			int is_new;
			if (first && th->block_start) {
				hmap_get(&r->blocks, at, 2, 1, &is_new);
				if (is_new)
					f->blocks++;
			}
			th->block_start = 0;
			if (!seen && r_distinct(r, img, x, at, k, f))
				r->nomem = 1; /* (cannot happen: the decoder read them) */
		}
		first = 0;
		left -= k;
	}
}

static void r_ranges(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_range *rg, size_t n,
		     const struct hwt_image *img)
{
	struct report *r = arg;
	struct rthread *th = rt(t);
	if (!th)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct hwt_dec_range *x = &rg[i];
		if (x->n)
			r_run(r, th, img, x);
		if (x->kind != HWT_DEC_NO_BRANCH)
			branch_to(r, th, img, x->to, x->kind);
	}
}

static void r_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	if (!t)
		return;
	struct rthread *th = rt(t);
	if (th) {
		th->block_start = 1;
		th->have_last = 0;
	}
}

static int by_insns(const void *a, const void *b)
{
	const struct func *x = a, *y = b;
	if (x->insns != y->insns)
		return x->insns < y->insns ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void print_path(struct hwt_outbuf *o, const struct report *r, uint32_t n, int depth)
{
	if (!n || depth > 4096)
		return;
	print_path(o, r, r->nodes[n].parent, depth + 1);
	if (r->nodes[n].parent)
		hwt_out_char(o, ';');
	hwt_out_str(o, r->nodes[n].name);
}

static void print_report(struct report *r, struct hwt_outbuf *o, size_t top)
{
	if (r->mode == 2) {
		for (uint32_t i = 1; i < r->nn; i++) {
			if (!r->nodes[i].count)
				continue;
			print_path(o, r, i, 0);
			hwt_out_char(o, ' ');
			hwt_out_dec(o, r->nodes[i].count, 0);
			hwt_out_char(o, '\n');
		}
		return;
	}
	r->last_name = NULL; /* (the order changes) */
	qsort(r->f, r->nf, sizeof(*r->f), by_insns);
	const char *what = r->sl ? "source line" : "function";
	char line[512];
	if (r->mode == 1) {
		uint64_t nb = 0, ni = 0;
		for (size_t i = 0; i < r->nf; i++) {
			nb += r->f[i].blocks;
			ni += r->f[i].distinct_insns;
		}
		snprintf(line, sizeof(line),
			 "# coverage: %zu %ss, %llu blocks, %llu distinct instructions "
			 "executed (%llu instructions in all)\n"
			 "#   blocks   insns  executed  %s\n",
			 r->nf, what, (unsigned long long)nb, (unsigned long long)ni,
			 (unsigned long long)r->total, what);
		hwt_out_str(o, line);
		for (size_t i = 0; i < r->nf && (!top || i < top); i++) {
			snprintf(line, sizeof(line), "%10llu %7llu %9llu  %s\n",
				 (unsigned long long)r->f[i].blocks,
				 (unsigned long long)r->f[i].distinct_insns,
				 (unsigned long long)r->f[i].insns, r->f[i].name);
			hwt_out_str(o, line);
		}
		return;
	}
	snprintf(line, sizeof(line), "# %llu instructions in %zu %ss\n# %12s %7s%s  %s\n",
		 (unsigned long long)r->total, r->nf, what, "instructions", "share",
		 r->have_time ? "        time(ns)" : "", what);
	hwt_out_str(o, line);
	for (size_t i = 0; i < r->nf && (!top || i < top); i++) {
		const struct func *f = &r->f[i];
		double pct = r->total ? 100.0 * (double)f->insns / (double)r->total : 0;
		if (r->have_time)
			snprintf(line, sizeof(line), "  %12llu %6.2f%% %15llu  %s\n",
				 (unsigned long long)f->insns, pct, (unsigned long long)f->time_ns,
				 f->name);
		else
			snprintf(line, sizeof(line), "  %12llu %6.2f%%  %s\n",
				 (unsigned long long)f->insns, pct, f->name);
		hwt_out_str(o, line);
	}
}

int hwt_cmd_report(int argc, char **argv)
{
	const char *input = NULL;
	unsigned long long top = 40;
	int srcline = 0, view = -1, progress = 1, mem = 0;
	const char *output = NULL;
	struct report r;
	memset(&r, 0, sizeof(r));
	for (int i = 1, k; i < argc; i++) {
		const char *a = argv[i];
		if ((k = sp_parse_decode_opt("report", argc, argv, &i)) != 0) {
			if (k < 0)
				return cli_usage_error(usage_text);
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
			if (i + 1 >= argc) {
				cli_err("report", "%s needs a file", a);
				return cli_usage_error(usage_text);
			}
			input = argv[++i];
		} else if (!strcmp(a, "-n")) {
			if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &top)) {
				cli_err("report", "-n needs a number");
				return cli_usage_error(usage_text);
			}
			i++;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc) {
				cli_err("report", "%s needs a file", a);
				return cli_usage_error(usage_text);
			}
			output = argv[++i];
		} else if (!strcmp(a, "--no-progress")) {
			progress = 0;
		} else if (!strcmp(a, "--flamegraph")) {
			view = RV_FLAME;
		} else if (!strcmp(a, "--flame-chart")) {
			view = RV_CHART;
		} else if (!strcmp(a, "--lcov")) {
			view = RV_LCOV;
		} else if (!strcmp(a, "--drcov")) {
			view = RV_DRCOV;
		} else if (!strcmp(a, "--coverage")) {
			r.mode = 1;
		} else if (!strcmp(a, "--folded")) {
			r.mode = 2;
		} else if (!strcmp(a, "--srcline")) {
			srcline = 1;
		} else if (!strcmp(a, "--mem")) {
			mem = 1;
		} else if ((a[0] != '-' || !strcmp(a, "-")) && !input) {
			input = a;
		} else {
			cli_err("report", "unknown option '%s'", a);
			return cli_usage_error(usage_text);
		}
	}
	if (srcline && r.mode == 2) {
		cli_err("report", "--srcline does not go with --folded");
		return cli_usage_error(usage_text);
	}
	if (view >= 0 && (srcline || r.mode)) {
		cli_err("report", "--flamegraph, --flame-chart, --lcov and --drcov go alone");
		return cli_usage_error(usage_text);
	}
	if (output && view < 0) {
		cli_err("report", "-o goes with --flamegraph, --flame-chart, --lcov or --drcov");
		return cli_usage_error(usage_text);
	}
	if (mem && (view >= 0 || srcline || r.mode || output)) {
		cli_err("report", "--mem goes alone (with -n)");
		return cli_usage_error(usage_text);
	}
	if (!input)
		input = "hwt.data";
	if (mem) /* samples (PEBS, SPE): report_mem.c */
		return report_mem(input, (size_t)top, progress);
	if (view >= 0)
		return report_views(input, view, output, progress);
	r.sc = sp_symcache_alloc();
	if (srcline && !(r.sl = sl_cache_alloc())) {
		sp_symcache_free(r.sc);
		return 2;
	}
	struct hwt_outbuf o;
	if (!r.sc || hwt_outbuf_init(&o, 1, 1u << 20)) {
		sp_symcache_free(r.sc);
		sl_cache_free(r.sl);
		return 2;
	}
	struct hwt_decode_consumer c = {
	    .size = sizeof(c),
	    .arg = &r,
	    .flags = r.mode == 0 ? HWT_DEC_WANT_TIME : 0u,
	    .insn = r_insn,
	    .branch = r_branch,
	    .gap = r_gap,
	    .thread_free = r_thread_free,
	};
	/* instructions in ranges, but per instruction with --no-batch (the
	 * reference) and --srcline (names change within functions) */
	if (!sp_no_batch() && !r.sl) {
		c.insn = NULL;
		c.branch = NULL;
		c.ranges = r_ranges;
	}
	/* per-thread state (rthread: small, one per thread) goes with the
	 * decoder's threads */
	struct progress *pg = progress_start("report", input, progress);
	int rc = sp_run_progress(input, "report", &c, pg);
	progress_stop(pg);
	if (rc != 2) {
		if (r.nomem)
			cli_err("report", "out of memory: the summary is incomplete");
		print_report(&r, &o, (size_t)top);
	}
	hwt_outbuf_fini(&o);
	hmap_free(&r.fmap);
	hmap_free(&r.insns);
	hmap_free(&r.blocks);
	hmap_free(&r.ranges);
	hmap_free(&r.nmap);
	free(r.f);
	free(r.nodes);
	sp_symcache_free(r.sc);
	sl_cache_free(r.sl);
	return rc;
}
