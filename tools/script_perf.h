/* tools/script_perf.h - decode a perf.data recording (hwt's or perf's)
 * through the library (hwt/decode.h) for "hwt script" (script_cli.c) and
 * "hwt report" (cmd_report.c): the CLI's wrapper and a symbol cache. */
#ifndef HWT_TOOLS_SCRIPT_PERF_H
#define HWT_TOOLS_SCRIPT_PERF_H

#include <stdint.h>

#include "hwt/image.h"

struct hwt_dec_range;

struct hwt_decode_consumer;

/* Decode every AUXTRACE stream of the file with the library's recording
 * decoder (hwt/decode.h).  Returns 0 (no gaps), 1 (ran, with gaps or
 * errors in the trace or file), 2 (cannot read the file or decode its
 * format; message printed as "hwt CMD: ..."). */
int sp_run(const char *path, const char *cmd, const struct hwt_decode_consumer *c);
/* The same, updating a progress line (tools/progress.h; NULL: none) with
 * the bytes of the file decoded so far. */
struct progress;
int sp_run_progress(const char *path, const char *cmd, const struct hwt_decode_consumer *c,
		    struct progress *pg);

/* Decoding options for the runs above (hwt_decoder_config.jobs, .flags
 * and .debug_dirs): set from -j N, --no-path-cache, --no-batch,
 * --debug-dir DIR (repeatable; none: $HWT_DEBUG_DIR, colon-separated). */
void sp_set_decode(unsigned jobs, unsigned flags);
/* Parse a decoding option at argv[*i] (-j N, -jN, --jobs N, --jobs=N,
 * --no-path-cache, --no-batch, --debug-dir DIR): 1 if it was one (*i moved past its
 * value), 0 if not, -1 on a bad value (message printed). */
int sp_parse_decode_opt(const char *cmd, int argc, char **argv, int *i);

/* Symbol lookup with a small cache (per image). */
struct sp_symcache;
struct sp_symcache *sp_symcache_alloc(void);
void sp_symcache_free(struct sp_symcache *sc);
/* name (NULL if unknown) and offset of ip in img. */
const char *sp_symbol(struct sp_symcache *sc, const struct hwt_image *img, uint64_t ip,
		      uint64_t *off);

/* sp_symbol's name, and *end: the address where it may change next
 * (hwt_image_symbol_end; ip + 1 without an image). */
const char *sp_symbol_end(struct sp_symcache *sc, const struct hwt_image *img, uint64_t ip,
			  uint64_t *end);
/* The size of the x86 instruction at ip in img (mode: 16, 32, 64; 0:
 * 64), or 0 if it cannot be read or does not decode. */
unsigned sp_insn_size(const struct hwt_image *img, uint64_t ip, int mode);
/* A range's instructions by name (sp_symbol): the piece from *ip on, of
 * left instructions (at most), that has one name (*name): its count;
 * *ip moves to the next piece's first instruction when the piece ends
 * before the range does.  Walks instructions (x86 lengths) only where the
 * range crosses a symbol's end.  Call with *ip = r->ip, left = r->n, then
 * on while left -= count is not 0. */
uint32_t sp_range_piece(struct sp_symcache *sc, const struct hwt_image *img,
			const struct hwt_dec_range *r, uint64_t *ip, uint32_t left,
			const char **name);
/* --no-batch was given: tools use the per-instruction callbacks (the
 * reference the ranges must equal). */
int sp_no_batch(void);

/* "hwt script" on a perf.data file (argv as hwt_cmd_script's). */
int hwt_script_perf(int argc, char **argv);

#endif
