/* tools/script_perf.h - decode a perf.data recording (hwt's or perf's
 * intel_pt) into a stream of instructions, taken branches and gaps, for
 * "hwt script" (script_perf.c) and "hwt report" (cmd_report.c). */
#ifndef HWT_TOOLS_SCRIPT_PERF_H
#define HWT_TOOLS_SCRIPT_PERF_H

#include <stdint.h>

#include "hwt/image.h"
#include "hwt/pt_flow.h"

#define SP_STACK 256

/* Per traced thread, persistent across the trace. */
struct sp_thread {
	uint32_t pid, tid;
	unsigned depth; /* call depth seen so far (calls - returns, >= 0) */
	uint64_t call_time[SP_STACK];
	uint8_t call_have_time[SP_STACK];
	void *user; /* the consumer's; free()d with the thread */
};

struct sp_consumer {
	void *arg;
	int want_insn; /* deliver every instruction (else branches only) */
	int want_time; /* fill have_time/time_ns */
	int no_raw;    /* instructions need no raw bytes and no class but a
			* branch's (decoded block by block then) */
	void (*insn)(void *arg, struct sp_thread *t, const struct hwt_pt_insn *in,
		     const struct hwt_image *img, int have_time, uint64_t time_ns);
	/* A taken branch (kind: enum hwt_branch_kind of out/out.h). */
	void (*branch)(void *arg, struct sp_thread *t, uint64_t from, uint64_t to, int kind,
		       const struct hwt_image *img, int have_time, uint64_t time_ns);
	void (*gap)(void *arg, struct sp_thread *t, uint64_t offset, uint64_t ip, int err);
	/* How far decoding is: done of total bytes of the file (may be NULL;
	 * called once per record: keep it cheap). */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

/* Decode every AUXTRACE stream of the file.  Returns 0 (no gaps), 1 (ran,
 * with gaps or errors in the trace), 2 (cannot read the file; message
 * printed as "hwt CMD: ..."). */
int sp_run(const char *path, const char *cmd, const struct sp_consumer *c);

/* Symbol lookup with a small cache (per image). */
struct sp_symcache;
struct sp_symcache *sp_symcache_alloc(void);
void sp_symcache_free(struct sp_symcache *sc);
/* name (NULL if unknown) and offset of ip in img. */
const char *sp_symbol(struct sp_symcache *sc, const struct hwt_image *img, uint64_t ip,
		      uint64_t *off);

/* "hwt script" on a perf.data file (argv as hwt_cmd_script's). */
int hwt_script_perf(int argc, char **argv);

#endif
