/* lib/decode/vdso.h - the vdso and perf's build-id cache (vdso.c): used
 * by the recording decoder (loads) and by "hwt record" (saves).  Not
 * installed. */
#ifndef HWT_LIB_DECODE_VDSO_H
#define HWT_LIB_DECODE_VDSO_H
#include <stddef.h>
#include <stdint.h>

/* This process's vdso (the kernel maps the same one into every process):
 * its bytes in this process and their size.  0, or HWT_ERR_NOMAP. */
int hwt_vdso_self(const uint8_t **data, size_t *size);
/* The GNU build-id note of an ELF image held in memory (a vdso): 0 with
 * id (up to 20 bytes) and *len, or HWT_ERR_BAD_FILE. */
int hwt_elf_mem_build_id(const uint8_t *elf, size_t n, uint8_t id[20], size_t *len);
/* The build-id cache folder: $PERF_BUILDID_DIR, else $HOME/.debug (as
 * perf's default).  0, or HWT_ERR_INVALID when neither is set. */
int hwt_buildid_dir(char *buf, size_t n);
/* Path of a cached vdso: DIR/[vdso]/<hex build-id>/vdso. */
void hwt_vdso_cache_path(char *buf, size_t n, const char *dir, const uint8_t *id, size_t len);
/* Save a vdso into the cache as perf does (the file, and the link
 * DIR/.build-id/<2 hex>/<rest> -> ../../[vdso]/<hex>); an existing file
 * is kept.  0 or a negative hwt error. */
int hwt_vdso_cache_save(const char *dir, const uint8_t *id, size_t len, const uint8_t *data,
			size_t size);
/* Read a cached vdso (malloc'd *data, *size).  0 or a negative error. */
int hwt_vdso_cache_load(const char *dir, const uint8_t *id, size_t len, uint8_t **data,
			size_t *size);
#endif
