/* hwt/process.h - the address space of one traced process, rebuilt from a
 * recording's sideband (MMAP/MMAP2, COMM exec, FORK, EXIT).
 *
 * Layer: lib/image.  A process is an ordered, non-overlapping list of
 * mappings (address range, file, file offset, prot).  A new mapping
 * replaces whatever it overlaps (as mmap(MAP_FIXED) does), munmap cuts
 * ranges out, exec drops everything, fork copies.  The image a decoder
 * reads (hwt/image.h) is built lazily from the mappings the first time it
 * is asked for after a change: each ELF file once, at the load bias its
 * mappings imply (code + symbols), other files and memory blobs (e.g. a
 * vdso copied from the recording) as raw pieces.
 *
 * Lifecycle: hwt_process_alloc / hwt_process_fork -> map/unmap/exec ... ->
 * hwt_process_image (valid until the next change or free) ->
 * hwt_process_free.  Memory grows with the number of mappings only.
 */
#ifndef HWT_PROCESS_H
#define HWT_PROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/image.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hwt_process;

struct hwt_process_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start */
	uint32_t prot;	     /* PROT_* (0: unknown, treated as executable) */
	const char *path;    /* owned by the process */
	const void *data;    /* memory blob instead of a file (NULL if none) */
};

struct hwt_process *hwt_process_alloc(uint32_t pid);
void hwt_process_free(struct hwt_process *p);
/* A copy of parent's mappings (and debug folders) under a new pid (fork). */
struct hwt_process *hwt_process_fork(const struct hwt_process *parent, uint32_t pid);
/* The folders its image searches for separate debug files
 * (hwt_image_set_debug_dirs; copied).  0 or HWT_ERR_NOMEM. */
int hwt_process_set_debug_dirs(struct hwt_process *p, const char *dirs);
uint32_t hwt_process_pid(const struct hwt_process *p);

/* Map [addr, addr+len) of path from pgoff, replacing overlapped ranges. */
int hwt_process_mmap(struct hwt_process *p, uint64_t addr, uint64_t len, uint64_t pgoff,
		     uint32_t prot, const char *path);
/* Map a copy of size bytes of data at addr (e.g. the vdso). */
int hwt_process_map_mem(struct hwt_process *p, uint64_t addr, const void *data, size_t size,
			const char *name);
int hwt_process_munmap(struct hwt_process *p, uint64_t addr, uint64_t len);
/* exec: the old address space is gone. */
void hwt_process_exec(struct hwt_process *p);

size_t hwt_process_nmaps(const struct hwt_process *p);
/* Mappings in address order; NULL if i is out of range. */
const struct hwt_process_map *hwt_process_map_at(const struct hwt_process *p, size_t i);
/* The mapping containing addr, or NULL. */
const struct hwt_process_map *hwt_process_find(const struct hwt_process *p, uint64_t addr);
/* Counter bumped by every change (callers cache per generation). */
uint64_t hwt_process_generation(const struct hwt_process *p);

/* The image for the current mappings (built on demand; NULL if out of
 * memory).  Files that cannot be opened are left out (reads there give
 * HWT_ERR_NOMAP); *missing (if not NULL) counts them. */
const struct hwt_image *hwt_process_image(struct hwt_process *p, size_t *missing);

#ifdef __cplusplus
}
#endif
#endif /* HWT_PROCESS_H */
