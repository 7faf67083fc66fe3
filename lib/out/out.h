/* lib/out/out.h - buffered text output for the flow printers of
 * "hwt script": taken branches (branches.c), call/return trees (calls.c)
 * and instructions with optional disassembly (insn.c).
 *
 * struct hwt_outbuf is a caller-owned write buffer over a file descriptor
 * (large, default 1 MiB); the formatters append to it and it is written out
 * when full, by hwt_outbuf_flush, and by hwt_outbuf_fini.  A write error
 * sticks in ->err (EPIPE etc.) and later output is dropped.
 *
 * Speed (a few ns a line; bench/bench_hwt_fmt): no printf and no stdio;
 * a line takes one reservation (hwt_outbuf_room) and is written with the
 * hwt_fmt_* primitives below, which may write fixed-size scratch past
 * their text instead of looping or branching on lengths: hex 16 digits at
 * once (SSE2, else 64-bit arithmetic) shifted so that no leading zeros
 * print, decimal two digits per table entry.  The tsv lines of a batch
 * of branches (hwt_out_branches_tsv, hwt_fmt_branches_tsv) convert both
 * addresses of a line at once, by the best loop the CPU has (enum
 * hwt_out_simd, chosen by hwt_outbuf_init: AVX-512 VBMI 24.5 instructions
 * a line, SSSE3 53, portable C 61), each writing the same bytes (checked
 * against snprintf by tests/unit/test_out_fmt.c).  The thread column and the
 * time of the last line are kept as text in the buffer (consecutive
 * lines mostly share them).  Long symbol names and source lines take the
 * piece-by-piece path.
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
	char ttext[32];
	/* the line prefix of the last thread printed (pkind 0: none; else
	 * which format: "TID\t" of tsv, "%7u " of text) */
	uint32_t ptid;
	uint8_t pkind, plen;
	char ptext[16];
	/* hwt_out_branches_tsv's loop (enum hwt_out_simd): the best this
	 * CPU has (hwt_outbuf_init) */
	uint8_t simd;
};

/* ---------------- formatting primitives ----------------
 * They write into memory the caller reserved (hwt_outbuf_room) and may
 * write scratch bytes past the text they return the length of (up to the
 * sizes given): the next field overwrites them.  hwt_fmt_* are in the
 * header so the per-line formatters inline them. */

/* 16 lowercase hex digits of v, the most significant first, at p (16
 * bytes).  _swar: plain C; the other one SSE2 where there is SSE2. */
static inline void hwt_fmt_hex16_swar(char *p, uint64_t v)
{
	for (int half = 0; half < 2; half++) {
		/* spread the 8 nibbles of 32 bits into 8 bytes, the least
		 * significant nibble in the lowest byte */
		uint64_t x = half ? (uint32_t)v : v >> 32;
		x = ((x & 0xffff0000ull) << 16) | (x & 0xffffull);
		x = ((x & 0x0000ff000000ff00ull) << 8) | (x & 0x000000ff000000ffull);
		x = ((x & 0x00f000f000f000f0ull) << 4) | (x & 0x000f000f000f000full);
		/* 1 in the bytes holding 10..15: 'a' - '0' - 10 = 39 more */
		uint64_t ge10 = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
		x += 0x3030303030303030ull + ge10 * 39;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		x = __builtin_bswap64(x);
#endif
		memcpy(p + 8 * half, &x, 8);
	}
}

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
static inline void hwt_fmt_hex16(char *p, uint64_t v)
{
	/* bytes in printing order, then each split into its two nibbles */
	__m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i m = _mm_set1_epi8(0x0f);
	__m128i d = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), m), _mm_and_si128(x, m));
	__m128i ge10 = _mm_cmpgt_epi8(d, _mm_set1_epi8(9));
	d = _mm_add_epi8(d,
			 _mm_add_epi8(_mm_set1_epi8('0'), _mm_and_si128(ge10, _mm_set1_epi8(39))));
	_mm_storeu_si128((__m128i *)(void *)p, d);
}
#else
static inline void hwt_fmt_hex16(char *p, uint64_t v)
{
	hwt_fmt_hex16_swar(p, v);
}
#endif

/* "0x" + lowercase hex of v without leading zeros ("0x0" for 0) at p:
 * writes 18 bytes, returns the length (3..18). */
static inline size_t hwt_fmt_hex(char *p, uint64_t v)
{
	/* leading zero digits * 4 (v | 1: one digit for 0) */
	unsigned lz = (unsigned)__builtin_clzll(v | 1) & 60u;
	memcpy(p, "0x", 2);
	hwt_fmt_hex16(p + 2, v << lz);
	return 18 - lz / 4;
}

/* "00".."99" */
extern const char hwt_fmt_dec2[201];

/* Decimal digits of v (no leading zeros) at p: writes exactly the digits
 * (at most 20), returns their number. */
static inline size_t hwt_fmt_dec(char *p, uint64_t v)
{
	static const uint64_t pow10[20] = {1ull,
					   10ull,
					   100ull,
					   1000ull,
					   10000ull,
					   100000ull,
					   1000000ull,
					   10000000ull,
					   100000000ull,
					   1000000000ull,
					   10000000000ull,
					   100000000000ull,
					   1000000000000ull,
					   10000000000000ull,
					   100000000000000ull,
					   1000000000000000ull,
					   10000000000000000ull,
					   100000000000000000ull,
					   1000000000000000000ull,
					   10000000000000000000ull};
	/* digits - 1 = floor(log10 v): from the bit length, then one step */
	unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233u >> 12;
	size_t n = t + 1 - ((v | 1) < pow10[t]);
	char *q = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, hwt_fmt_dec2 + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(q - 2, hwt_fmt_dec2 + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return n;
}

/* The time of a line: "seconds.nanoseconds" of a perf clock value, kept
 * in o (consecutive lines mostly carry the same time); hwt_fmt_time
 * writes 32 bytes. */
void hwt_out_time_set(struct hwt_outbuf *o, uint64_t ns);
static inline size_t hwt_fmt_time(struct hwt_outbuf *o, char *p, uint64_t ns)
{
	if (__builtin_expect(!o->tlen || o->tlast != ns, 0))
		hwt_out_time_set(o, ns);
	memcpy(p, o->ttext, 32);
	return o->tlen;
}

/* The thread prefix of a line, kept in o: "TID\t" (tsv) or "%7u " (text);
 * hwt_fmt_prefix writes 16 bytes. */
enum { HWT_OUT_PFX_TSV = 1, HWT_OUT_PFX_TEXT = 2 };
void hwt_out_prefix_set(struct hwt_outbuf *o, uint32_t tid, int kind);
static inline size_t hwt_fmt_prefix(struct hwt_outbuf *o, char *p, uint32_t tid, int kind)
{
	if (__builtin_expect(o->pkind != kind || o->ptid != tid, 0))
		hwt_out_prefix_set(o, tid, kind);
	memcpy(p, o->ptext, 16);
	return o->plen;
}

/* The head of text lines: "%7u " and, with have_time, "TIME "; writes
 * up to HWT_OUT_HEAD bytes. */
#define HWT_OUT_HEAD (16 + 32 + 1)
static inline size_t hwt_fmt_head(struct hwt_outbuf *o, char *p, uint32_t tid, int have_time,
				  uint64_t ns)
{
	size_t n = hwt_fmt_prefix(o, p, tid, HWT_OUT_PFX_TEXT);
	if (have_time) {
		n += hwt_fmt_time(o, p + n, ns);
		p[n++] = ' ';
	}
	return n;
}

int hwt_outbuf_init(struct hwt_outbuf *o, int fd, size_t cap);
/* The loops of hwt_out_branches_tsv: portable C (SSE2 where there is
 * SSE2), SSSE3, AVX-512 (VBMI, CD, VL); each writes the same bytes. */
enum hwt_out_simd { HWT_OUT_PORTABLE = 0, HWT_OUT_SSSE3 = 1, HWT_OUT_AVX512 = 2 };
/* The best loop this CPU runs (enum hwt_out_simd). */
int hwt_out_simd_supported(void);
/* Flush and free the buffer (the fd stays open).  Returns o->err. */
int hwt_outbuf_fini(struct hwt_outbuf *o);
int hwt_outbuf_flush(struct hwt_outbuf *o);
/* n bytes of text at s, after what is buffered (large ones written
 * straight from s). */
void hwt_outbuf_write(struct hwt_outbuf *o, const char *s, size_t n);

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
/* Time: seconds.nanoseconds of a perf clock value. */
void hwt_out_time_ns(struct hwt_outbuf *o, uint64_t ns);
/* "%7u " and, with have_time, "TIME " (hwt_fmt_head). */
void hwt_out_head(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t ns);

/* Branch kinds (enum hwt_branch_kind), hwt_branch_kind_name and
 * hwt_branch_kind_of (branches.c) are public: hwt/decode.h. */

/* "tid<TAB>from<TAB>to<TAB>kind\n" */
void hwt_out_branch_tsv(struct hwt_outbuf *o, uint32_t tid, uint64_t from, uint64_t to, int kind);
/* The same for n branches of one thread (hwt_decode_consumer.branches). */
struct hwt_dec_branch;
void hwt_out_branches_tsv(struct hwt_outbuf *o, uint32_t tid, const struct hwt_dec_branch *br,
			  size_t n);
/* The same lines at out, with no buffer (out: room for 64 * n bytes);
 * simd: the loop (enum hwt_out_simd, at most hwt_out_simd_supported()).
 * Returns the bytes written. */
size_t hwt_fmt_branches_tsv(char *out, uint32_t tid, const struct hwt_dec_branch *br, size_t n,
			    int simd);
/* The same lines into out, as hwt_decode_consumer.branches_text (any
 * thread): at most HWT_OUT_TSV_LINE bytes a branch.  fctx: the loop to
 * run (a uint8_t, enum hwt_out_simd: an outbuf's simd, read only), or
 * NULL to detect it at each call. */
#define HWT_OUT_TSV_LINE 64
size_t hwt_out_branches_tsv_text(void *fctx, const struct hwt_dec_thread *t,
				 const struct hwt_dec_branch *br, size_t n,
				 const struct hwt_image *img, char *out);

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

/* "sym+0xoff" (sym of symlen bytes), or "[unknown]" when sym is NULL:
 * the location of a text, instruction or call line; returns the end */
static inline char *hwt_fmt_loc(char *q, const char *sym, size_t symlen, uint64_t off)
{
	if (sym) {
		memcpy(q, sym, symlen);
		q += symlen;
		*q++ = '+';
		q += hwt_fmt_hex(q, off);
	} else {
		memcpy(q, "[unknown]", 9);
		q += 9;
	}
	return q;
}

#endif
