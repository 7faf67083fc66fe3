/* hwt/image.h - the memory image a flow decoder reads instructions from.
 *
 * Layer: lib/image.  An image is an ordered set of sections: a range of a
 * file mapped at a virtual address, or a copied memory region.  A section
 * added later overrides earlier ones where they overlap (what remains of
 * an overridden section stays visible).  Files are opened and mmap()ed
 * once per image and shared by all their sections; ELF files can be
 * loaded by their PT_LOAD segments at a load bias, which also makes their
 * symbols (.symtab, else .dynsym) available for address lookups.
 *
 * Lifecycle: hwt_image_alloc, add sections, read (any number of
 * readers; reads do not modify the image), hwt_image_free.  Every mapped
 * piece has an id that changes whenever the piece changes, so callers can
 * cache decoded code keyed by (address, id).
 */
#ifndef HWT_IMAGE_H
#define HWT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hwt_image;

#define HWT_IMAGE_TO_END UINT64_MAX

struct hwt_image *hwt_image_alloc(void);
void hwt_image_free(struct hwt_image *img);

/* Folders to search for separate debug files (symbols and DWARF lines of
 * stripped files) before /usr/lib/debug, each as /usr/lib/debug is:
 * DIR/.build-id/xx/yyyy.debug by the file's build-id, DIR/<the file's
 * folder>/<.gnu_debuglink name>.  dirs: colon-separated (gdb's
 * debug-file-directory; e.g. the usr/lib/debug of a -dbgsym package
 * unpacked with dpkg-deb -x), copied; NULL or "": /usr/lib/debug only.
 * Set it before adding files (symbols are read when an ELF file is added).
 * 0, HWT_ERR_INVALID (img NULL) or HWT_ERR_NOMEM. */
int hwt_image_set_debug_dirs(struct hwt_image *img, const char *dirs);

/* Map file bytes [offset, offset+size) (size HWT_IMAGE_TO_END: to the end
 * of the file) at vaddr.  HWT_ERR_IO if the file cannot be opened,
 * HWT_ERR_INVALID if offset is beyond the end of the file. */
int hwt_image_add_file(struct hwt_image *img, const char *path, uint64_t offset, uint64_t size,
		       uint64_t vaddr);
/* Copy size bytes of data into the image at vaddr. */
int hwt_image_add_mem(struct hwt_image *img, const void *data, size_t size, uint64_t vaddr);
/* Load an ELF file's PT_LOAD segments (file-backed parts) at their
 * p_vaddr + bias, and its symbols.  HWT_ERR_BAD_FILE if not ELF. */
int hwt_image_add_elf(struct hwt_image *img, const char *path, uint64_t bias);

/* A contiguous mapped piece around an address. */
struct hwt_image_span {
	const uint8_t *data; /* the byte at addr */
	uint64_t avail;	     /* bytes readable from data in this piece */
	uint32_t id;	     /* id of the piece (changes when it changes) */
};
/* 0 and *span, or HWT_ERR_NOMAP. */
int hwt_image_lookup(const struct hwt_image *img, uint64_t addr, struct hwt_image_span *span);
/* Copy up to size bytes at addr, continuing across adjacent pieces.
 * Returns the number of bytes read (> 0) or HWT_ERR_NOMAP. */
int hwt_image_read(const struct hwt_image *img, uint64_t addr, void *buf, size_t size);

/* The symbol containing addr (or the closest one below it in the same
 * file): 0 with *name and *offset, or HWT_ERR_NOMAP. */
int hwt_image_symbol(const struct hwt_image *img, uint64_t addr, const char **name,
		     uint64_t *offset);

/* Where hwt_image_symbol's and hwt_image_where's answers for addr may
 * change next: *end, the lowest address above addr that is the start of
 * a symbol or a mapped piece, the end of addr's symbol (if it has a size)
 * or of its piece (UINT64_MAX if none); every address in [addr, *end)
 * gets the same answers as addr (with the offsets moved).  0, or
 * HWT_ERR_INVALID. */
int hwt_image_symbol_end(const struct hwt_image *img, uint64_t addr, uint64_t *end);

/* The data object (symbol with a size: variables in .data, .bss,
 * .rodata) of a loaded ELF file that contains addr, also where the file
 * maps no bytes (.bss): 0 with *name and *offset, or HWT_ERR_NOMAP. */
int hwt_image_data_symbol(const struct hwt_image *img, uint64_t addr, const char **name,
			  uint64_t *offset);
/* The file mapped at addr: 0 with *path (valid while the image lives) and
 * *file_offset, the offset of addr's byte in that file; HWT_ERR_NOMAP if
 * addr is not mapped from a file. */
int hwt_image_where(const struct hwt_image *img, uint64_t addr, const char **path,
		    uint64_t *file_offset);

/* The source line of addr from the DWARF line table of the file mapped
 * there (its own .debug_line, else a separate debug file found by
 * build-id under /usr/lib/debug/.build-id/ or by .gnu_debuglink next to
 * the file, in its .debug/ folder or under /usr/lib/debug; the
 * hwt_image_set_debug_dirs folders first): 0 with *file
 * (the source file's path, valid while the image lives) and *line (> 0);
 * HWT_ERR_NOMAP if addr is not mapped from a file or has no line.  A
 * file's table is read on its first lookup (safe with concurrent
 * readers), lookups are a binary search. */
int hwt_image_srcline(const struct hwt_image *img, uint64_t addr, const char **file,
		      unsigned *line);

/* Every row of the line table hwt_image_srcline reads for the file mapped
 * at addr (all its code, executed or not): cb(arg, file, line) per row
 * with a line, in address order (a line may come more than once; file
 * valid while the image lives).  0, HWT_ERR_NOMAP if addr is not mapped
 * from a file or the file has no lines, HWT_ERR_NOMEM, or the non-zero
 * value cb returned (which stops the walk). */
int hwt_image_srclines(const struct hwt_image *img, uint64_t addr,
		       int (*cb)(void *arg, const char *file, unsigned line), void *arg);

/* A number that changes whenever the image changes (a section added):
 * decoded-code caches compare it to know when to start over. */
uint32_t hwt_image_version(const struct hwt_image *img);

/* Number of mapped pieces (for tests and tools). */
size_t hwt_image_npieces(const struct hwt_image *img);

#ifdef __cplusplus
}
#endif
#endif /* HWT_IMAGE_H */
