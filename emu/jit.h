/* emu/jit.h - code generated at run time (JIT compilers), captured at
 * translation time; see jit.c. */
#ifndef HWT_EMU_JIT_H
#define HWT_EMU_JIT_H

#include <stdint.h>

#include "emu.h"

struct qemu_plugin_tb;
struct jit_region;

/* A translated block in generated code: the block, its region and the
 * version of the region's code it belongs to. */
struct emu_jit_tb {
	struct emu_tb tb;
	struct jit_region *r;
	int ver;
};

/* An executable mapping appeared: anonymous (path "//anon", a memfd or a
 * deleted file: code may be generated there) or a file (not generated). */
void emu_jit_map(uint64_t addr, uint64_t len, const char *path);
/* mprotect(addr, len, ...PROT_EXEC) succeeded: 1 if the range lies in a
 * known anonymous range (its code stays as captured: no new mapping
 * record, JITs flip their code between writable and executable), else 0
 * (the range becomes anonymous: the caller writes its //anon record). */
int emu_jit_protect(uint64_t addr, uint64_t len);
/* At translation: a block in generated code gets its bytes captured and a
 * struct emu_jit_tb (zeroed but for r and ver; never freed); NULL for
 * blocks elsewhere. */
struct emu_jit_tb *emu_jit_capture(struct qemu_plugin_tb *tb, uint64_t start);
/* The block starts on thread t (before its trace is generated): announce
 * its region's version (MMAP2 of the version's ELF file) if not yet done. */
void emu_jit_exec(struct emu_thr *t, const struct emu_jit_tb *jt);
/* The process ends: symbols (perf map file) into the version files. */
void emu_jit_finish(void);

#endif /* HWT_EMU_JIT_H */
