/* lib/image/image.c - sections, mappings and reads of a process image.
 *
 * Design: the image keeps a sorted array of non-overlapping pieces.
 * Adding a section cuts away what it overlaps in older pieces (splitting
 * one in two if needed) and inserts the new piece, so a lookup is one
 * binary search and later sections win.  Each new or cut piece gets a
 * fresh id.  Files are mmap()ed read-only once per image (img_file_get)
 * and unmapped by hwt_image_free; memory sections are copied.  Limits:
 * 2^32 ids per image (they start at a random value and wrap); a file must fit the address space.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwt/error.h"
#include "image_int.h"

struct hwt_image *hwt_image_alloc(void)
{
	struct hwt_image *img = calloc(1, sizeof(*img));
	/* ids (and so hwt_image_version) start at a random point: a cache
	 * bound to a freed image whose memory a new image reuses sees a
	 * different version (but for a 2^-32 chance) */
	if (img)
		img->next_id = arc4random() | 1u;
	return img;
}

void hwt_image_free(struct hwt_image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->nfiles; i++) {
		if (img->files[i].map)
			munmap((void *)img->files[i].map, img->files[i].size);
		free(img->files[i].syms);
		img_dwarf_free(img->files[i].dw);
		free(img->files[i].path);
	}
	for (size_t i = 0; i < img->nmems; i++)
		free(img->mems[i]);
	free(img->mems);
	free(img->files);
	free(img->pieces);
	free(img->debug_dirs);
	free(img);
}

int hwt_image_set_debug_dirs(struct hwt_image *img, const char *dirs)
{
	if (!img)
		return HWT_ERR_INVALID;
	char *d = NULL;
	if (dirs && *dirs && !(d = strdup(dirs)))
		return HWT_ERR_NOMEM;
	free(img->debug_dirs);
	img->debug_dirs = d;
	return 0;
}

int img_file_get(struct hwt_image *img, const char *path)
{
	for (size_t i = 0; i < img->nfiles; i++)
		if (!strcmp(img->files[i].path, path))
			return (int)i;
	if (img->nfiles == img->fcap) {
		size_t n = img->fcap ? 2 * img->fcap : 4;
		struct img_file *f = realloc(img->files, n * sizeof(*f));
		if (!f)
			return HWT_ERR_NOMEM;
		img->files = f;
		img->fcap = n;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return HWT_ERR_IO;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return HWT_ERR_IO;
	}
	struct img_file *f = &img->files[img->nfiles];
	memset(f, 0, sizeof(*f));
	f->size = (uint64_t)st.st_size;
	if (f->size) {
		void *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			close(fd);
			return HWT_ERR_IO;
		}
		f->map = m;
	}
	close(fd);
	f->path = strdup(path);
	if (!f->path) {
		if (f->map)
			munmap((void *)f->map, f->size);
		return HWT_ERR_NOMEM;
	}
	return (int)img->nfiles++;
}

static int reserve(struct hwt_image *img, size_t extra)
{
	if (img->npieces + extra <= img->cap)
		return 0;
	size_t n = img->cap ? 2 * img->cap : 8;
	while (n < img->npieces + extra)
		n *= 2;
	struct img_piece *p = realloc(img->pieces, n * sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	img->pieces = p;
	img->cap = n;
	return 0;
}

/* First piece whose end is above addr. */
static size_t first_above(const struct hwt_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->npieces;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (img->pieces[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int img_insert(struct hwt_image *img, uint64_t vaddr, uint64_t size, const uint8_t *data,
	       int32_t file, uint64_t bias)
{
	if (!size)
		return 0;
	if (vaddr + size < vaddr)
		size = 0 - vaddr; /* clip at the top of the address space */
	uint64_t end = vaddr + size;
	if (reserve(img, 2))
		return HWT_ERR_NOMEM;
	size_t i = first_above(img, vaddr);
	/* Split a piece that straddles both ends. */
	if (i < img->npieces && img->pieces[i].begin < vaddr && img->pieces[i].end > end) {
		struct img_piece hi = img->pieces[i];
		memmove(&img->pieces[i + 3], &img->pieces[i + 1],
			(img->npieces - i - 1) * sizeof(struct img_piece));
		img->npieces += 2;
		hi.data += end - hi.begin;
		hi.begin = end;
		hi.id = img->next_id++;
		img->pieces[i + 2] = hi;
		img->pieces[i].end = vaddr;
		img->pieces[i].id = img->next_id++;
		i++;
		goto place;
	}
	/* Trim a piece overlapping the start. */
	if (i < img->npieces && img->pieces[i].begin < vaddr) {
		img->pieces[i].end = vaddr;
		img->pieces[i].id = img->next_id++;
		i++;
	}
	/* Drop pieces fully covered; trim one overlapping the end. */
	size_t j = i;
	while (j < img->npieces && img->pieces[j].end <= end)
		j++;
	if (j < img->npieces && img->pieces[j].begin < end) {
		struct img_piece *p = &img->pieces[j];
		p->data += end - p->begin;
		p->begin = end;
		p->id = img->next_id++;
	}
	/* Replace [i, j) by one slot. */
	if (j == i) {
		memmove(&img->pieces[i + 1], &img->pieces[i],
			(img->npieces - i) * sizeof(struct img_piece));
		img->npieces++;
	} else if (j > i + 1) {
		memmove(&img->pieces[i + 1], &img->pieces[j],
			(img->npieces - j) * sizeof(struct img_piece));
		img->npieces -= j - i - 1;
	}
place:
	img->pieces[i] = (struct img_piece){.begin = vaddr,
					    .end = end,
					    .data = data,
					    .id = img->next_id++,
					    .file = file,
					    .bias = bias};
	return 0;
}

int hwt_image_add_file(struct hwt_image *img, const char *path, uint64_t offset, uint64_t size,
		       uint64_t vaddr)
{
	if (!img || !path)
		return HWT_ERR_INVALID;
	int fi = img_file_get(img, path);
	if (fi < 0)
		return fi;
	const struct img_file *f = &img->files[fi];
	if (offset > f->size)
		return HWT_ERR_INVALID;
	uint64_t left = f->size - offset;
	if (size > left)
		size = left;
	return img_insert(img, vaddr, size, f->map ? f->map + offset : NULL, fi, vaddr - offset);
}

int hwt_image_add_mem(struct hwt_image *img, const void *data, size_t size, uint64_t vaddr)
{
	if (!img || (!data && size))
		return HWT_ERR_INVALID;
	if (!size)
		return 0;
	if (img->nmems == img->mcap) {
		size_t n = img->mcap ? 2 * img->mcap : 4;
		uint8_t **m = realloc(img->mems, n * sizeof(*m));
		if (!m)
			return HWT_ERR_NOMEM;
		img->mems = m;
		img->mcap = n;
	}
	uint8_t *copy = malloc(size);
	if (!copy)
		return HWT_ERR_NOMEM;
	memcpy(copy, data, size);
	img->mems[img->nmems++] = copy;
	return img_insert(img, vaddr, size, copy, -1, 0);
}

const struct img_piece *img_piece_at(const struct hwt_image *img, uint64_t addr)
{
	size_t i = first_above(img, addr);
	if (i >= img->npieces || img->pieces[i].begin > addr)
		return NULL;
	return &img->pieces[i];
}

int hwt_image_lookup(const struct hwt_image *img, uint64_t addr, struct hwt_image_span *span)
{
	size_t i = first_above(img, addr);
	if (i >= img->npieces || img->pieces[i].begin > addr)
		return HWT_ERR_NOMAP;
	const struct img_piece *p = &img->pieces[i];
	span->data = p->data + (addr - p->begin);
	span->avail = p->end - addr;
	span->id = p->id;
	return 0;
}

int hwt_image_read(const struct hwt_image *img, uint64_t addr, void *buf, size_t size)
{
	size_t i = first_above(img, addr), done = 0;
	uint8_t *out = buf;
	while (done < size && i < img->npieces &&
	       (done ? img->pieces[i].begin == addr + done : img->pieces[i].begin <= addr)) {
		const struct img_piece *p = &img->pieces[i];
		uint64_t at = addr + done;
		uint64_t n = p->end - at;
		if (n > size - done)
			n = size - done;
		memcpy(out + done, p->data + (at - p->begin), n);
		done += n;
		i++;
		if (at + n == 0)
			break; /* wrapped */
	}
	if (!done)
		return HWT_ERR_NOMAP;
	return (int)done;
}

size_t hwt_image_npieces(const struct hwt_image *img)
{
	return img->npieces;
}

/* The piece mapping addr from a file, or NULL. */
static const struct img_piece *file_piece(const struct hwt_image *img, uint64_t addr)
{
	const struct img_piece *p = img_piece_at(img, addr);
	return p && p->file >= 0 ? p : NULL;
}

/* The number of f's symbols (sorted by address) at or below a: the last
 * of them is the nearest at or below a. */
static size_t syms_upto(const struct img_file *f, uint64_t a)
{
	size_t lo = 0, hi = f->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int hwt_image_symbol(const struct hwt_image *img, uint64_t addr, const char **name,
		     uint64_t *offset)
{
	const struct img_piece *p = file_piece(img, addr);
	if (!p)
		return HWT_ERR_NOMAP;
	const struct img_file *f = &img->files[p->file];
	uint64_t a = addr - p->bias;
	size_t lo = syms_upto(f, a);
	if (!lo)
		return HWT_ERR_NOMAP;
	const struct img_sym *s = &f->syms[lo - 1];
	if (s->size && a >= s->addr + s->size)
		return HWT_ERR_NOMAP;
	*name = s->name;
	*offset = a - s->addr;
	return 0;
}

int hwt_image_symbol_end(const struct hwt_image *img, uint64_t addr, uint64_t *end)
{
	if (!img || !end)
		return HWT_ERR_INVALID;
	size_t i = first_above(img, addr);
	*end = UINT64_MAX;
	if (i >= img->npieces)
		return 0;
	const struct img_piece *p = &img->pieces[i];
	if (p->begin > addr) { /* not mapped: up to the next piece */
		*end = p->begin;
		return 0;
	}
	*end = p->end;
	if (p->file < 0)
		return 0;
	const struct img_file *f = &img->files[p->file];
	uint64_t a = addr - p->bias;
	size_t lo = syms_upto(f, a);
	if (lo < f->nsyms && f->syms[lo].addr - a < *end - addr)
		*end = addr + (f->syms[lo].addr - a);
	if (lo) {
		const struct img_sym *s = &f->syms[lo - 1];
		if (s->size && a < s->addr + s->size && s->addr + s->size - a < *end - addr)
			*end = addr + (s->addr + s->size - a);
	}
	return 0;
}

int hwt_image_data_symbol(const struct hwt_image *img, uint64_t addr, const char **name,
			  uint64_t *offset)
{
	/* every ELF file with a piece at or below addr (the .bss follows
	 * the file's last piece), nearest first */
	size_t lo = 0, hi = img->npieces;
	while (lo < hi) { /* pieces with begin <= addr: [0, lo) */
		size_t mid = lo + (hi - lo) / 2;
		if (img->pieces[mid].begin <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	int32_t tried[8];
	size_t ntried = 0;
	for (size_t i = lo; i-- > 0 && ntried < 8;) {
		const struct img_piece *p = &img->pieces[i];
		if (p->file < 0)
			continue;
		int seen = 0;
		for (size_t k = 0; k < ntried; k++)
			seen |= tried[k] == p->file;
		if (seen)
			continue;
		tried[ntried++] = p->file;
		const struct img_file *f = &img->files[p->file];
		if (addr < p->bias)
			continue;
		uint64_t a = addr - p->bias;
		size_t l = syms_upto(f, a);
		/* symbols may nest (a sized one before an alias): look back a little */
		for (size_t k = l; k-- > 0 && l - k <= 4;) {
			const struct img_sym *s = &f->syms[k];
			if (s->size && a < s->addr + s->size) {
				*name = s->name;
				*offset = a - s->addr;
				return 0;
			}
		}
	}
	return HWT_ERR_NOMAP;
}

int hwt_image_where(const struct hwt_image *img, uint64_t addr, const char **path,
		    uint64_t *file_offset)
{
	const struct img_piece *p = file_piece(img, addr);
	if (!p)
		return HWT_ERR_NOMAP;
	const struct img_file *f = &img->files[p->file];
	*path = f->path;
	*file_offset = (uint64_t)(p->data - f->map) + (addr - p->begin);
	return 0;
}

uint32_t hwt_image_version(const struct hwt_image *img)
{
	return img->next_id;
}
