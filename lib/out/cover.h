/* lib/out/cover.h - coverage files from executed addresses: an lcov
 * tracefile (lcov.c, read by genhtml and most coverage tools) and a
 * DynamoRIO drcov log (drcov.c, read by Lighthouse, bncov, ...).
 *
 * Both writers are fed addresses with the image they were executed in
 * (hwt/image.h) and look up what they need on an address's first sight
 * only (file, symbol, DWARF source line, instruction class), copying it:
 * the image may change or go away after the call.  Memory: one entry per
 * distinct address (lcov) or distinct basic block (drcov), never per
 * execution.
 *
 * lcov: hwt_lcov_insn counts executions of the instruction at ip;
 * hwt_lcov_taken counts the times the conditional branch at ip was taken
 * (it was not taken the other times it executed).  The tracefile has, per
 * source file: FN/FNDA (functions whose first instruction has a line
 * there; the count is the executions of that first instruction), BRDA
 * (per conditional branch of a line, in address order, block = its index
 * in the line, branch 0 = taken, 1 = not taken), DA (per line: the
 * highest execution count of the line's instructions; 0 for the lines of
 * the line tables (hwt_image_srclines) of the files that ran that never
 * executed), and the LF/LH, FNF/FNH, BRF/BRH totals.  Functions and
 * branches are known only where code ran.  Addresses without a source
 * line are left out (counted in
 * hwt_lcov_unlined).  Source paths are written with "." and "dir/.."
 * taken out (lexically), as genhtml wants them.
 *
 * drcov: hwt_drcov_block adds the basic block [start, start + size)
 * (deduplicated); its module is the file mapped at start, the module base
 * the address of that file's offset 0 (start - file offset), so a block's
 * offset is its offset in the file.  Blocks not in a file are left out.
 */
#ifndef HWT_LIB_OUT_COVER_H
#define HWT_LIB_OUT_COVER_H

#include <stdint.h>

#include "hwt/image.h"
#include "out/out.h"

struct hwt_lcov;
struct hwt_lcov *hwt_lcov_alloc(void);
void hwt_lcov_free(struct hwt_lcov *c);
/* 0 or HWT_ERR_NOMEM. */
int hwt_lcov_insn(struct hwt_lcov *c, const struct hwt_image *img, uint64_t ip, uint64_t count);
int hwt_lcov_taken(struct hwt_lcov *c, const struct hwt_image *img, uint64_t ip, uint64_t count);
/* Instruction executions without a source line so far. */
uint64_t hwt_lcov_unlined(const struct hwt_lcov *c);
/* Write the tracefile (test_name: the TN: line, NULL: none).  0 or
 * HWT_ERR_NOMEM / HWT_ERR_IO. */
int hwt_lcov_write(struct hwt_lcov *c, struct hwt_outbuf *o, const char *test_name);

struct hwt_drcov;
struct hwt_drcov *hwt_drcov_alloc(void);
void hwt_drcov_free(struct hwt_drcov *d);
/* 0, 1 (left out: not in a file, or too large for drcov's 16-bit size
 * and 32-bit offset), or HWT_ERR_NOMEM. */
int hwt_drcov_block(struct hwt_drcov *d, const struct hwt_image *img, uint64_t start,
		    uint64_t size);
/* The same in two steps, for callers that know a block's start before its
 * size (and may no longer have the image then): the module of addr (its
 * id, >= 0), -1 if addr is not in a file, HWT_ERR_NOMEM; then the block
 * in that module (0, 1: left out, HWT_ERR_NOMEM). */
int hwt_drcov_module(struct hwt_drcov *d, const struct hwt_image *img, uint64_t addr);
int hwt_drcov_add(struct hwt_drcov *d, int module, uint64_t start, uint64_t size);
/* Write the log (version 2, flavor drcov).  0 or HWT_ERR_IO. */
int hwt_drcov_write(struct hwt_drcov *d, struct hwt_outbuf *o);

#endif
