/* lib/image/image_int.h - internals shared by image.c and elf.c. */
#ifndef HWT_LIB_IMAGE_INT_H
#define HWT_LIB_IMAGE_INT_H

#include <stdint.h>
#include <stddef.h>

#include <libelf.h>

#include "hwt/image.h"

struct img_sym {
	uint64_t addr, size; /* link-time address */
	const char *name;    /* points into the file mapping */
};

struct img_dwarf; /* dwarf.c: a file's line table, loaded on first use */

struct img_file {
	char *path;
	const uint8_t *map; /* mmap of the whole file (NULL if empty) */
	uint64_t size;
	struct img_sym *syms; /* sorted by addr */
	size_t nsyms;
	int syms_loaded;
	struct img_dwarf *_Atomic dw; /* NULL until hwt_image_srcline needs it */
};

struct img_piece {
	uint64_t begin, end; /* [begin, end) */
	const uint8_t *data; /* byte at begin */
	uint32_t id;
	int32_t file;  /* index in files, -1 for memory */
	uint64_t bias; /* ELF load bias (for symbols) */
};

struct hwt_image {
	struct img_piece *pieces; /* sorted, non-overlapping */
	size_t npieces, cap;
	struct img_file *files;
	size_t nfiles, fcap;
	uint8_t **mems; /* copies owned by the image */
	size_t nmems, mcap;
	uint32_t next_id;
	char *debug_dirs; /* hwt_image_set_debug_dirs (NULL: none) */
};

/* Get (open+mmap once) a file; returns its index or a negative error. */
int img_file_get(struct hwt_image *img, const char *path);
/* Insert [vaddr, vaddr+size) backed by data, overriding overlaps. */
int img_insert(struct hwt_image *img, uint64_t vaddr, uint64_t size, const uint8_t *data,
	       int32_t file, uint64_t bias);

/* The piece containing addr, or NULL. */
const struct img_piece *img_piece_at(const struct hwt_image *img, uint64_t addr);
/* Free a line table (NULL: nothing). */
void img_dwarf_free(struct img_dwarf *d);

/* debugfile.c: offer each separate debug file of the ELF file at path
 * (elf: its contents) to fn, best first, until fn returns nonzero (then
 * 1; 0 if none was taken).  The debug file is closed after fn returns.
 * dirs: colon-separated debug folders searched before /usr/lib/debug
 * (NULL: none). */
typedef int (*img_debug_fn)(void *arg, Elf *dbg);
int img_debug_each(const char *dirs, const char *path, Elf *elf, img_debug_fn fn, void *arg);

#endif
