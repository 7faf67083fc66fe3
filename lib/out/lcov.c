/* lib/out/lcov.c - the lcov tracefile writer (cover.h).
 *
 * One entry per distinct instruction address: its execution and taken
 * counts, and what was looked up on its first sight (source file and line,
 * function and the function's entry, whether it is a conditional branch).
 * Functions get their own small table (entry -> name, file, line).
 * hwt_lcov_write sorts the entries by (file, line, address) and writes
 * one record per source file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "hwt/x86.h"
#include "out/addrmap.h"
#include "out/cover.h"

struct lent {
	uint64_t ip, count, taken;
	const char *file; /* interned; NULL: no line */
	unsigned line;
	uint32_t func; /* index + 1 in funcs, 0: none */
	uint8_t jcc;
};

struct kline {
	const char *file; /* interned, normalized */
	unsigned line;
};

struct lfunc {
	uint64_t entry;
	const char *name, *file;
	unsigned line;
};

struct hwt_lcov {
	struct lent *e;
	size_t ne, cape;
	struct hwt_amap map; /* ip -> entry + 1 */
	struct lfunc *f;
	size_t nf, capf;
	struct hwt_amap fmap; /* entry -> func + 1 */
	struct hwt_strtab str;
	uint64_t unlined;
	/* every line of the line tables of the files executed code was in
	 * (executed or not), for DA:line,0 */
	struct kline *k;
	size_t nk, capk;
	struct hwt_amap mods; /* interned file path -> 1: table walked */
	const char *last_raw, *last_norm;
	int nomem;
};

struct hwt_lcov *hwt_lcov_alloc(void)
{
	return calloc(1, sizeof(struct hwt_lcov));
}

void hwt_lcov_free(struct hwt_lcov *c)
{
	if (!c)
		return;
	free(c->e);
	free(c->f);
	hwt_amap_fini(&c->map);
	hwt_amap_fini(&c->fmap);
	hwt_amap_fini(&c->mods);
	hwt_strtab_fini(&c->str);
	free(c->k);
	free(c);
}

/* path with "." and "dir/.." taken out, lexically (as the source paths of
 * line tables are often "comp_dir/../x.c"; genhtml wants them plain). */
static const char *norm_path(struct hwt_lcov *c, const char *path)
{
	size_t len = strlen(path);
	char *out = malloc(len + 2);
	if (!out)
		return NULL;
	int abs = path[0] == '/';
	size_t n = 0, keep = 0; /* keep: leading ".." that cannot go */
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		size_t l = (size_t)(e - p);
		if (!l || (l == 1 && p[0] == '.')) {
			/* nothing */
		} else if (l == 2 && p[0] == '.' && p[1] == '.') {
			if (n > keep) { /* drop the last component */
				while (n > keep && out[n - 1] != '/')
					n--;
				if (n > keep)
					n--;
			} else if (!abs) {
				if (n)
					out[n++] = '/';
				memcpy(out + n, "..", 2);
				n += 2;
				keep = n;
			}
		} else {
			if (n || abs)
				out[n++] = '/';
			memcpy(out + n, p, l);
			n += l;
		}
		p = e;
	}
	if (!n && abs)
		out[n++] = '/';
	out[n] = 0;
	const char *r = hwt_strtab_intern(&c->str, n ? out : ".");
	free(out);
	return r;
}

static int known_line(void *arg, const char *file, unsigned line)
{
	struct hwt_lcov *c = arg;
	if (file != c->last_raw) { /* rows of one file come in runs */
		c->last_norm = norm_path(c, file);
		c->last_raw = file;
		if (!c->last_norm)
			return HWT_ERR_NOMEM;
	}
	if (c->nk && c->k[c->nk - 1].file == c->last_norm && c->k[c->nk - 1].line == line)
		return 0;
	if (c->nk == c->capk) {
		size_t nc = c->capk ? 2 * c->capk : 4096;
		struct kline *nv = realloc(c->k, nc * sizeof(*nv));
		if (!nv)
			return HWT_ERR_NOMEM;
		c->k = nv;
		c->capk = nc;
	}
	c->k[c->nk++] = (struct kline){c->last_norm, line};
	return 0;
}

/* On the first address in a file: take in its whole line table. */
static void note_file(struct hwt_lcov *c, const struct hwt_image *img, uint64_t ip)
{
	const char *path;
	uint64_t foff;
	if (hwt_image_where(img, ip, &path, &foff))
		return;
	path = hwt_strtab_intern(&c->str, path);
	uint32_t *slot = path ? hwt_amap_slot(&c->mods, (uint64_t)(uintptr_t)path) : NULL;
	if (!slot) {
		c->nomem = 1;
		return;
	}
	if (*slot)
		return;
	*slot = 1;
	hwt_amap_added(&c->mods);
	c->last_raw = NULL;
	if (hwt_image_srclines(img, ip, known_line, c) == HWT_ERR_NOMEM)
		c->nomem = 1;
}

static uint32_t func_of(struct hwt_lcov *c, const struct hwt_image *img, uint64_t ip)
{
	const char *name;
	uint64_t off;
	if (hwt_image_symbol(img, ip, &name, &off) || !name)
		return 0;
	uint64_t entry = ip - off;
	uint32_t *slot = hwt_amap_slot(&c->fmap, entry);
	if (!slot)
		return 0;
	if (*slot)
		return *slot;
	if (c->nf == c->capf) {
		size_t nc = c->capf ? 2 * c->capf : 256;
		struct lfunc *nv = realloc(c->f, nc * sizeof(*nv));
		if (!nv)
			return 0;
		c->f = nv;
		c->capf = nc;
	}
	struct lfunc *f = &c->f[c->nf];
	memset(f, 0, sizeof(*f));
	f->entry = entry;
	f->name = hwt_strtab_intern(&c->str, name);
	const char *file;
	unsigned line;
	if (!hwt_image_srcline(img, entry, &file, &line)) {
		f->file = norm_path(c, file);
		f->line = line;
	}
	if (!f->name)
		return 0;
	*slot = (uint32_t)++c->nf;
	hwt_amap_added(&c->fmap);
	return *slot;
}

static struct lent *entry(struct hwt_lcov *c, const struct hwt_image *img, uint64_t ip)
{
	uint32_t *slot = hwt_amap_slot(&c->map, ip);
	if (!slot)
		return NULL;
	if (*slot)
		return &c->e[*slot - 1];
	if (c->ne == c->cape) {
		size_t nc = c->cape ? 2 * c->cape : 1024;
		struct lent *nv = realloc(c->e, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		c->e = nv;
		c->cape = nc;
	}
	struct lent *e = &c->e[c->ne];
	memset(e, 0, sizeof(*e));
	e->ip = ip;
	const char *file;
	unsigned line;
	if (img && !hwt_image_srcline(img, ip, &file, &line)) {
		e->file = norm_path(c, file);
		e->line = line;
		if (!e->file)
			return NULL;
	}
	if (img) {
		uint8_t buf[15];
		struct hwt_x86_insn in;
		int n = hwt_image_read(img, ip, buf, sizeof(buf));
		if (n > 0 && !hwt_x86_decode(buf, (size_t)n, ip, 64, &in))
			e->jcc = in.iclass == HWT_INSN_JCC;
		/* the function table may grow: slot pointers into c->map
		 * stay valid (different map) */
		e->func = func_of(c, img, ip);
		if (e->file)
			note_file(c, img, ip);
	}
	*slot = (uint32_t)++c->ne;
	hwt_amap_added(&c->map);
	return e;
}

int hwt_lcov_insn(struct hwt_lcov *c, const struct hwt_image *img, uint64_t ip, uint64_t count)
{
	struct lent *e = entry(c, img, ip);
	if (!e)
		return HWT_ERR_NOMEM;
	e->count += count;
	if (!e->file)
		c->unlined += count;
	return 0;
}

int hwt_lcov_taken(struct hwt_lcov *c, const struct hwt_image *img, uint64_t ip, uint64_t count)
{
	struct lent *e = entry(c, img, ip);
	if (!e)
		return HWT_ERR_NOMEM;
	e->taken += count;
	return 0;
}

uint64_t hwt_lcov_unlined(const struct hwt_lcov *c)
{
	return c ? c->unlined : 0;
}

static int by_place(const void *a, const void *b)
{
	const struct lent *x = a, *y = b;
	int r = strcmp(x->file, y->file);
	if (r)
		return r;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

static int by_func(const void *a, const void *b)
{
	const struct lfunc *x = a, *y = b;
	int r = strcmp(x->file, y->file);
	if (r)
		return r;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_kline(const void *a, const void *b)
{
	const struct kline *x = a, *y = b;
	int r = x->file == y->file ? 0 : strcmp(x->file, y->file);
	if (r)
		return r;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int by_func_name(const void *a, const void *b)
{
	const struct lfunc *x = a, *y = b;
	int r = strcmp(x->file, y->file);
	if (!r)
		r = strcmp(x->name, y->name);
	if (!r && x->line != y->line)
		r = x->line < y->line ? -1 : 1;
	return r;
}

static void line_out(struct hwt_outbuf *o, const char *tag, unsigned long long a,
		     unsigned long long b)
{
	char buf[96];
	int n = snprintf(buf, sizeof(buf), "%s:%llu,%llu\n", tag, a, b);
	hwt_out_mem(o, buf, (size_t)n);
}

int hwt_lcov_write(struct hwt_lcov *c, struct hwt_outbuf *o, const char *test_name)
{
	/* the lined entries, sorted */
	size_t n = 0;
	struct lent *v = malloc((c->ne ? c->ne : 1) * sizeof(*v));
	struct lfunc *fv = malloc((c->nf ? c->nf : 1) * sizeof(*fv));
	uint64_t *fcount = calloc(c->nf ? c->nf : 1, sizeof(*fcount));
	if (!v || !fv || !fcount) {
		free(v);
		free(fv);
		free(fcount);
		return HWT_ERR_NOMEM;
	}
	for (size_t i = 0; i < c->ne; i++)
		if (c->e[i].file)
			v[n++] = c->e[i];
	qsort(v, n, sizeof(*v), by_place);
	qsort(c->k, c->nk, sizeof(*c->k), by_kline);
	size_t kc = 0; /* the known lines of the current file start here */
	/* a function's count: executions of its entry instruction */
	size_t nfv = 0;
	for (size_t i = 0; i < c->nf; i++) {
		if (!c->f[i].file)
			continue;
		uint32_t e = hwt_amap_get(&c->map, c->f[i].entry);
		fv[nfv] = c->f[i];
		fcount[nfv] = e ? c->e[e - 1].count : 0;
		/* keep counts with their functions through the sort: stash
		 * the count in the entry field (the address is not written) */
		fv[nfv].entry = fcount[nfv];
		nfv++;
	}
	/* one function per (file, name), as lcov keys them (the same code
	 * linked into two files, e.g. ld.so's and libc's syscall stubs):
	 * counts summed, the first line kept */
	qsort(fv, nfv, sizeof(*fv), by_func_name);
	size_t m = 0;
	for (size_t i = 0; i < nfv; i++) {
		if (m && fv[m - 1].file == fv[i].file && fv[m - 1].name == fv[i].name)
			fv[m - 1].entry += fv[i].entry;
		else
			fv[m++] = fv[i];
	}
	nfv = m;
	qsort(fv, nfv, sizeof(*fv), by_func);
	if (test_name) {
		hwt_out_str(o, "TN:");
		hwt_out_str(o, test_name);
		hwt_out_char(o, '\n');
	}
	size_t fi = 0;
	for (size_t i = 0; i < n;) {
		const char *file = v[i].file;
		size_t j = i;
		while (j < n && v[j].file == file)
			j++;
		hwt_out_str(o, "SF:");
		hwt_out_str(o, file);
		hwt_out_char(o, '\n');
		/* functions of this file (fv sorted by file too) */
		while (fi < nfv && strcmp(fv[fi].file, file) < 0)
			fi++;
		size_t f0 = fi, fnf = 0, fnh = 0;
		for (; fi < nfv && fv[fi].file == file; fi++) {
			char buf[64];
			snprintf(buf, sizeof(buf), "FN:%u,", fv[fi].line);
			hwt_out_str(o, buf);
			hwt_out_str(o, fv[fi].name);
			hwt_out_char(o, '\n');
		}
		for (size_t k = f0; k < fi; k++) {
			char buf[64];
			snprintf(buf, sizeof(buf), "FNDA:%llu,", (unsigned long long)fv[k].entry);
			hwt_out_str(o, buf);
			hwt_out_str(o, fv[k].name);
			hwt_out_char(o, '\n');
			fnf++;
			fnh += fv[k].entry != 0;
		}
		char buf[96];
		snprintf(buf, sizeof(buf), "FNF:%zu\nFNH:%zu\n", fnf, fnh);
		hwt_out_str(o, buf);
		/* branches: per line, its conditional branches in address order */
		size_t brf = 0, brh = 0;
		for (size_t k = i; k < j;) {
			size_t l = k;
			unsigned block = 0;
			for (; l < j && v[l].line == v[k].line; l++) {
				if (!v[l].jcc || !v[l].count)
					continue;
				uint64_t taken = v[l].taken <= v[l].count ? v[l].taken : v[l].count;
				uint64_t not_taken = v[l].count - taken;
				snprintf(buf, sizeof(buf), "BRDA:%u,%u,0,%llu\nBRDA:%u,%u,1,%llu\n",
					 v[l].line, block, (unsigned long long)taken, v[l].line,
					 block, (unsigned long long)not_taken);
				hwt_out_str(o, buf);
				block++;
				brf += 2;
				brh += (taken != 0) + (not_taken != 0);
			}
			k = l;
		}
		snprintf(buf, sizeof(buf), "BRF:%zu\nBRH:%zu\n", brf, brh);
		hwt_out_str(o, buf);
		/* lines: the highest count of the line's instructions, and
		 * the file's other lines of the line tables with 0, merged in
		 * line order */
		size_t lf = 0, lh = 0;
		while (kc < c->nk && c->k[kc].file != file && strcmp(c->k[kc].file, file) < 0)
			kc++;
		for (size_t k = i; k < j || (kc < c->nk && c->k[kc].file == file);) {
			if (k == j ||
			    (kc < c->nk && c->k[kc].file == file && c->k[kc].line < v[k].line)) {
				unsigned line = c->k[kc].line;
				while (kc < c->nk && c->k[kc].file == file && c->k[kc].line == line)
					kc++;
				line_out(o, "DA", line, 0);
				lf++;
				continue;
			}
			uint64_t max = 0;
			size_t l = k;
			for (; l < j && v[l].line == v[k].line; l++)
				if (v[l].count > max)
					max = v[l].count;
			while (kc < c->nk && c->k[kc].file == file && c->k[kc].line == v[k].line)
				kc++;
			line_out(o, "DA", v[k].line, max);
			lf++;
			lh += max != 0;
			k = l;
		}
		snprintf(buf, sizeof(buf), "LF:%zu\nLH:%zu\nend_of_record\n", lf, lh);
		hwt_out_str(o, buf);
		i = j;
	}
	free(v);
	free(fv);
	free(fcount);
	hwt_outbuf_flush(o);
	return o->err ? HWT_ERR_IO : 0;
}
