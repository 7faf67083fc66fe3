/* lib/out/out.h - buffered text output for the flow printers of
 * "hwt script": taken branches (branches.c), call/return trees (calls.c)
 * and instructions with optional disassembly (insn.c).
 *
 * struct hwt_outbuf is a caller-owned write buffer over a file descriptor
 * (large, default 1 MiB); the formatters append to it and it is written out
 * when full, by hwt_outbuf_flush, and by hwt_outbuf_fini.  Numbers are
 * formatted by hand (no printf on the hot path).  A write error sticks in
 * ->err (EPIPE etc.) and later output is dropped.
 */
#ifndef HWT_LIB_OUT_OUT_H
#define HWT_LIB_OUT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hwt/decode.h"

struct hwt_outbuf {
	int fd;
	char *buf;
	size_t len, cap;
	int err; /* errno of the first failed write, 0 if none */
	/* hwt_out_time_ns: text of the last time printed (tlen 0: none) */
	uint64_t tlast;
	uint8_t tlen;
	char ttext[31];
};

int hwt_outbuf_init(struct hwt_outbuf *o, int fd, size_t cap);
/* Flush and free the buffer (the fd stays open).  Returns o->err. */
int hwt_outbuf_fini(struct hwt_outbuf *o);
int hwt_outbuf_flush(struct hwt_outbuf *o);

/* Room for n more bytes (n <= 4096): returns where to write them. */
static inline char *hwt_outbuf_room(struct hwt_outbuf *o, size_t n)
{
	if (o->len + n > o->cap)
		hwt_outbuf_flush(o);
	return o->buf + o->len;
}
static inline void hwt_out_mem(struct hwt_outbuf *o, const char *s, size_t n)
{
	if (n > 4096) {
		hwt_outbuf_flush(o);
		while (n > 4096) {
			hwt_out_mem(o, s, 4096);
			s += 4096;
			n -= 4096;
		}
	}
	memcpy(hwt_outbuf_room(o, n), s, n);
	o->len += n;
}
static inline void hwt_out_str(struct hwt_outbuf *o, const char *s)
{
	hwt_out_mem(o, s, strlen(s));
}
static inline void hwt_out_char(struct hwt_outbuf *o, char c)
{
	*hwt_outbuf_room(o, 1) = c;
	o->len++;
}
/* "0x" + lowercase hex without leading zeros. */
void hwt_out_hex(struct hwt_outbuf *o, uint64_t v);
/* Decimal, right-aligned in width (0: none). */
void hwt_out_dec(struct hwt_outbuf *o, uint64_t v, int width);
/* "sym+0xoff" or "[unknown]" (sym NULL). */
void hwt_out_sym(struct hwt_outbuf *o, const char *sym, uint64_t off);
/* Time: seconds.nanoseconds of a perf clock value, "tsc:N" of a raw TSC. */
void hwt_out_time_ns(struct hwt_outbuf *o, uint64_t ns);

/* Branch kinds (enum hwt_branch_kind), hwt_branch_kind_name and
 * hwt_branch_kind_of (branches.c) are public: hwt/decode.h. */

/* "tid<TAB>from<TAB>to<TAB>kind\n" */
void hwt_out_branch_tsv(struct hwt_outbuf *o, uint32_t tid, uint64_t from, uint64_t to, int kind);
/* The same for n branches of one thread (hwt_decode_consumer.branches). */
struct hwt_dec_branch;
void hwt_out_branches_tsv(struct hwt_outbuf *o, uint32_t tid, const struct hwt_dec_branch *br,
			  size_t n);

struct hwt_out_loc {
	uint64_t ip;
	const char *sym; /* NULL if unknown */
	uint64_t off;
	const char *src; /* "file:line" (--srcline), NULL: none */
};
/* " file:line" of a location when it has one (srcline.c). */
void hwt_out_src(struct hwt_outbuf *o, const struct hwt_out_loc *l);
/* "TID [TIME] KIND FROM (sym+off) => TO (sym+off)\n"; have_time 0: no time.
 * A location's src follows its ")". */
void hwt_out_branch_text(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
			 int kind, const struct hwt_out_loc *from, const struct hwt_out_loc *to);

/* Calls: "TID [TIME] <depth*2 spaces>call FROM => TO sym\n" and
 * "TID [TIME] <indent>ret  FROM => TO sym [DUR ns]\n"; TO's src follows sym. */
void hwt_out_call(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		  unsigned depth, const struct hwt_out_loc *from, const struct hwt_out_loc *to);
void hwt_out_ret(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		 unsigned depth, const struct hwt_out_loc *from, const struct hwt_out_loc *to,
		 int have_dur, uint64_t dur_ns);

/* Instructions: "TID [TIME] IP sym+off[ src][\tDISASM]\n".  raw/size/mode
 * are needed for disasm only. */
void hwt_out_insn(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		  const struct hwt_out_loc *at, int disasm, const uint8_t *raw, unsigned size,
		  int mode);
/* "[OFFSET, IP: error: TEXT]\n" (tid first when non-zero). */
void hwt_out_gap(struct hwt_outbuf *o, uint32_t tid, uint64_t offset, uint64_t ip,
		 const char *text);

#endif
