/* lib/image/dwarf.c - source lines of image addresses (libdw).
 *
 * Design: a file's DWARF line table is read once, on the first
 * hwt_image_srcline that lands in the file, into a flat array of rows
 * (link-time address, file index, line) sorted by address, plus the
 * file's deduplicated source paths; then libdw's handles are closed, so
 * a lookup is a binary search and the memory is ours (freed with the
 * image).  The table is published with an atomic compare-and-swap, so
 * concurrent readers may race to build it: the loser frees its copy.
 * A file without a table still gets an (empty) entry, so the search for
 * debug info happens once.
 *
 * Where the lines come from: the file's own .debug_line, else a separate
 * debug file (debugfile.c): /usr/lib/debug/.build-id/xx/yyyy.debug by
 * the file's GNU build-id note, else the .gnu_debuglink name next to the
 * file, in its .debug/ folder or under /usr/lib/debug/<folder>/ (the
 * image's debug folders are searched before /usr/lib/debug; a candidate
 * whose build-id differs from the file's is skipped).
 *
 * Addresses: an image address is mapped to its byte's offset in the file
 * (through the piece that maps it) and from there to the link-time
 * address by the file's PT_LOAD headers (executable ones first), which
 * works for ELF loads at a bias and for plain file mappings alike.
 *
 * Rows: each DWARF sequence gives rows and an end row; rows are sorted by
 * address (end rows before real rows at the same address, then in table
 * order), and of several rows at one address the last wins.  Sequences
 * that start at address 0 (code the linker dropped) are left out.  A row
 * with line 0 (no source line) answers HWT_ERR_NOMAP.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/error.h"
#include "image_int.h"

#define NOFILE UINT32_MAX

struct img_line {
	uint64_t addr;
	uint32_t file; /* index in names, NOFILE: end of a sequence */
	uint32_t line;
};

struct img_load {
	uint64_t off, filesz, vaddr;
	int x; /* executable */
};

struct img_dwarf {
	struct img_line *rows;
	size_t nrows;
	char **names;
	size_t nnames;
	struct img_load *loads;
	size_t nloads;
};

/* Building state: rows with their table order, and a name hash. */
struct build_row {
	uint64_t addr;
	uint32_t file, line;
	uint64_t ord : 63, end : 1;
};

struct build {
	struct img_dwarf *d;
	struct build_row *rows;
	size_t n, cap;
	size_t namecap;
	uint32_t *hash; /* name index + 1, 0: empty */
	size_t hcap;
	int nomem;
};

void img_dwarf_free(struct img_dwarf *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	free(d->rows);
	free(d->loads);
	free(d);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int hash_grow(struct build *b)
{
	size_t nc = b->hcap ? 2 * b->hcap : 64;
	uint32_t *nh = calloc(nc, sizeof(*nh));
	if (!nh)
		return -1;
	for (size_t i = 0; i < b->d->nnames; i++) {
		size_t j = str_hash(b->d->names[i]) & (nc - 1);
		while (nh[j])
			j = (j + 1) & (nc - 1);
		nh[j] = (uint32_t)i + 1;
	}
	free(b->hash);
	b->hash = nh;
	b->hcap = nc;
	return 0;
}

/* Index of name in the file's names (added if new), NOFILE on no memory. */
static uint32_t name_index(struct build *b, const char *name)
{
	struct img_dwarf *d = b->d;
	if ((d->nnames + 1) * 2 > b->hcap && hash_grow(b))
		return NOFILE;
	size_t j = str_hash(name) & (b->hcap - 1);
	while (b->hash[j]) {
		if (!strcmp(d->names[b->hash[j] - 1], name))
			return b->hash[j] - 1;
		j = (j + 1) & (b->hcap - 1);
	}
	if (d->nnames == b->namecap) {
		size_t nc = b->namecap ? 2 * b->namecap : 16;
		char **nn = realloc(d->names, nc * sizeof(*nn));
		if (!nn)
			return NOFILE;
		d->names = nn;
		b->namecap = nc;
	}
	char *copy = strdup(name);
	if (!copy)
		return NOFILE;
	d->names[d->nnames] = copy;
	b->hash[j] = (uint32_t)d->nnames + 1;
	return (uint32_t)d->nnames++;
}

static int add_row(struct build *b, uint64_t addr, uint32_t file, uint32_t line, int end)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? 2 * b->cap : 1024;
		struct build_row *nr = realloc(b->rows, nc * sizeof(*nr));
		if (!nr)
			return -1;
		b->rows = nr;
		b->cap = nc;
	}
	b->rows[b->n] =
	    (struct build_row){.addr = addr, .file = file, .line = line, .ord = b->n, .end = !!end};
	b->n++;
	return 0;
}

struct range {
	uint64_t lo, hi;
};

static int range_cmp(const void *x, const void *y)
{
	const struct range *a = x, *b = y;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The unit's address ranges, sorted and disjoint (NULL and *n 0 if it
 * has none). */
static struct range *unit_ranges(Dwarf_Die *cudie, size_t *n)
{
	struct range *r = NULL;
	size_t cap = 0;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	*n = 0;
	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 8;
			struct range *nr = realloc(r, nc * sizeof(*nr));
			if (!nr)
				break;
			r = nr;
			cap = nc;
		}
		r[(*n)++] = (struct range){lo, hi};
	}
	if (!*n)
		return r;
	qsort(r, *n, sizeof(*r), range_cmp);
	size_t k = 0; /* merge overlapping ranges */
	for (size_t i = 1; i < *n; i++) {
		if (r[i].lo <= r[k].hi) {
			if (r[i].hi > r[k].hi)
				r[k].hi = r[i].hi;
		} else {
			r[++k] = r[i];
		}
	}
	*n = k + 1;
	return r;
}

static int in_ranges(const struct range *r, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* last range with lo <= a */
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < r[lo - 1].hi;
}

static int in_code(const struct img_dwarf *d, uint64_t a)
{
	for (size_t i = 0; i < d->nloads && d->loads[i].x; i++)
		if (a - d->loads[i].vaddr < d->loads[i].filesz)
			return 1;
	return 0;
}

/* The rows of one compile unit's line table.  libdw hands them sorted by
 * address (end rows first at an address), so a row that a sequence ends
 * with, at the sequence's end address, would outlive the end row: rows
 * outside the unit's address ranges (when it has some) are dropped, as
 * are rows outside the executable segments. */
static void add_unit(struct build *b, Dwarf_Die *cudie)
{
	Dwarf_Lines *lines;
	size_t n, nr;
	if (dwarf_getsrclines(cudie, &lines, &n))
		return;
	struct range *ranges = unit_ranges(cudie, &nr);
	/* libdw joins a file's folder entry and name; a path that is still
	 * relative is taken from the unit's compilation folder (as addr2line
	 * prints them, even when folder entry 0 is that folder) */
	Dwarf_Attribute at;
	const char *comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &at));
	char path[4096];
	Dwarf_Files *cur_files = NULL;
	uint32_t *map = NULL; /* the unit's file index -> name index + 1 */
	size_t nmap = 0;
	int skip = 0, in_seq = 0;
	for (size_t i = 0; i < n && !b->nomem; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int lineno;
		bool end;
		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineno(l, &lineno) ||
		    dwarf_lineendsequence(l, &end))
			continue;
		if (!in_seq) { /* first row of a sequence */
			in_seq = 1;
			skip = a == 0;
		}
		if (end)
			in_seq = 0;
		if (skip || (!end && ((nr && !in_ranges(ranges, nr, a)) || !in_code(b->d, a))))
			continue;
		if (end) {
			if (add_row(b, a, NOFILE, 0, 1))
				b->nomem = 1;
			continue;
		}
		Dwarf_Files *files;
		size_t idx;
		uint32_t fi = NOFILE;
		if (!dwarf_line_file(l, &files, &idx)) {
			if (files != cur_files) {
				size_t nf = 0;
				free(map);
				map = NULL;
				nmap = 0;
				cur_files = files;
				if (!dwarf_getsrcfiles(cudie, &(Dwarf_Files *){NULL}, &nf) && nf)
					nmap = nf;
				if (nmap < idx + 1)
					nmap = idx + 1;
				map = calloc(nmap, sizeof(*map));
				if (!map) {
					b->nomem = 1;
					break;
				}
			}
			if (idx < nmap) {
				if (!map[idx]) {
					const char *nm = dwarf_filesrc(files, idx, NULL, NULL);
					if (nm && nm[0] != '/' && comp_dir && comp_dir[0] &&
					    (size_t)snprintf(path, sizeof(path), "%s/%s", comp_dir,
							     nm) < sizeof(path))
						nm = path;
					uint32_t k = nm ? name_index(b, nm) : NOFILE;
					if (nm && k == NOFILE) {
						b->nomem = 1;
						break;
					}
					map[idx] = k + 1; /* NOFILE + 1 == 0: retried */
				}
				fi = map[idx] - 1;
			}
		}
		/* rows without a file or line still end the previous row */
		if (add_row(b, a, fi, fi == NOFILE ? 0 : (uint32_t)lineno, 0))
			b->nomem = 1;
	}
	free(map);
	free(ranges);
}

static void add_dwarf(struct build *b, Dwarf *dw)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	while (!b->nomem && !dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie)) {
		cu = next;
		if (type == DW_UT_compile || type == DW_UT_partial)
			add_unit(b, &cudie);
	}
}

static int row_cmp(const void *x, const void *y)
{
	const struct build_row *a = x, *b = y;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->end != b->end)
		return a->end ? -1 : 1; /* end rows first */
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* Sort the rows and keep the last of each address. */
static void finish(struct build *b)
{
	struct img_dwarf *d = b->d;
	if (!b->n || b->nomem)
		return;
	qsort(b->rows, b->n, sizeof(*b->rows), row_cmp);
	d->rows = malloc(b->n * sizeof(*d->rows));
	if (!d->rows)
		return;
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct build_row *r = &b->rows[i];
		if (k && d->rows[k - 1].addr == r->addr)
			k--;
		d->rows[k++] = (struct img_line){.addr = r->addr, .file = r->file, .line = r->line};
	}
	d->nrows = k;
}

static int read_loads(struct img_dwarf *d, Elf *elf)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph) || !nph)
		return 0;
	d->loads = calloc(nph, sizeof(*d->loads));
	if (!d->loads)
		return -1;
	/* executable segments first: they hold the code */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !ph.p_filesz || (int)!(ph.p_flags & PF_X) != pass)
				continue;
			d->loads[d->nloads++] = (struct img_load){.off = ph.p_offset,
								  .filesz = ph.p_filesz,
								  .vaddr = ph.p_vaddr,
								  .x = !pass};
		}
	return 0;
}

/* Lines from a separate debug file: taken if it had rows. */
static int take_debug_lines(void *arg, Elf *dbg)
{
	struct build *b = arg;
	Dwarf *dw = dwarf_begin_elf(dbg, DWARF_C_READ, NULL);
	if (!dw)
		return 0;
	size_t before = b->n;
	add_dwarf(b, dw);
	dwarf_end(dw);
	return b->n > before;
}

/* The line table of a file (empty if it has none); NULL on no memory. */
static struct img_dwarf *load(const struct img_file *f, const char *dirs)
{
	struct img_dwarf *d = calloc(1, sizeof(*d));
	if (!d || !f->map)
		return d;
	struct build b = {.d = d};
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)f->map, f->size);
	if (!elf)
		return d;
	if (elf_kind(elf) == ELF_K_ELF && !read_loads(d, elf) && d->nloads) {
		Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (dw) {
			add_dwarf(&b, dw);
			dwarf_end(dw);
		}
		if (!b.n && !b.nomem)
			img_debug_each(dirs, f->path, elf, take_debug_lines, &b);
		finish(&b);
	}
	elf_end(elf);
	free(b.rows);
	free(b.hash);
	if (b.nomem || (b.n && !d->rows)) {
		img_dwarf_free(d);
		return NULL;
	}
	return d;
}

/* The line table of the file of piece p (loaded on first use), NULL if
 * out of memory. */
static struct img_dwarf *table_of(const struct hwt_image *img, const struct img_piece *p)
{
	/* the table is built lazily: the file entry is not const */
	struct img_file *f = (struct img_file *)&img->files[p->file];
	struct img_dwarf *d = atomic_load_explicit(&f->dw, memory_order_acquire);
	if (!d) {
		d = load(f, img->debug_dirs);
		if (!d)
			return NULL;
		struct img_dwarf *none = NULL;
		if (!atomic_compare_exchange_strong_explicit(&f->dw, &none, d, memory_order_acq_rel,
							     memory_order_acquire)) {
			img_dwarf_free(d);
			d = none;
		}
	}
	return d;
}

int hwt_image_srclines(const struct hwt_image *img, uint64_t addr,
		       int (*cb)(void *arg, const char *file, unsigned line), void *arg)
{
	const struct img_piece *p = img ? img_piece_at(img, addr) : NULL;
	if (!p || p->file < 0)
		return HWT_ERR_NOMAP;
	struct img_dwarf *d = table_of(img, p);
	if (!d)
		return HWT_ERR_NOMEM;
	if (!d->nrows)
		return HWT_ERR_NOMAP;
	for (size_t i = 0; i < d->nrows; i++) {
		if (d->rows[i].file == NOFILE || !d->rows[i].line)
			continue;
		int r = cb(arg, d->names[d->rows[i].file], d->rows[i].line);
		if (r)
			return r;
	}
	return 0;
}

int hwt_image_srcline(const struct hwt_image *img, uint64_t addr, const char **file, unsigned *line)
{
	const struct img_piece *p = img ? img_piece_at(img, addr) : NULL;
	if (!p || p->file < 0)
		return HWT_ERR_NOMAP;
	struct img_dwarf *d = table_of(img, p);
	if (!d)
		return HWT_ERR_NOMEM;
	struct img_file *f = (struct img_file *)&img->files[p->file];
	if (!d->nrows)
		return HWT_ERR_NOMAP;
	uint64_t off = (uint64_t)(p->data - f->map) + (addr - p->begin), a = 0;
	size_t i;
	for (i = 0; i < d->nloads; i++)
		if (off - d->loads[i].off < d->loads[i].filesz) {
			a = off - d->loads[i].off + d->loads[i].vaddr;
			break;
		}
	if (i == d->nloads)
		return HWT_ERR_NOMAP;
	size_t lo = 0, hi = d->nrows;
	while (lo < hi) { /* last row with addr <= a */
		size_t mid = lo + (hi - lo) / 2;
		if (d->rows[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || d->rows[lo - 1].file == NOFILE || !d->rows[lo - 1].line)
		return HWT_ERR_NOMAP;
	*file = d->names[d->rows[lo - 1].file];
	*line = d->rows[lo - 1].line;
	return 0;
}
