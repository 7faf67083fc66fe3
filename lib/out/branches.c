/* lib/out/branches.c - the output buffer of the flow printers and the
 * taken-branch lines of "hwt script --branches" (text and tsv).
 *
 * Lifecycle: hwt_outbuf_init (allocates cap bytes) -> formatters ->
 * hwt_outbuf_fini (flush, free).  Writes loop over partial writes; a
 * failing write records errno in ->err and drops the rest.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/x86.h"
#include "out/out.h"

int hwt_outbuf_init(struct hwt_outbuf *o, int fd, size_t cap)
{
	if (cap < 8192)
		cap = 8192;
	o->fd = fd;
	o->len = 0;
	o->cap = cap;
	o->err = 0;
	o->tlen = 0;
	o->pkind = 0;
	o->simd = (uint8_t)hwt_out_simd_supported();
	o->buf = malloc(cap);
	return o->buf ? 0 : HWT_ERR_NOMEM;
}

static void write_all(struct hwt_outbuf *o, const char *p, size_t len)
{
	size_t done = 0;
	while (!o->err && done < len) {
		ssize_t n = write(o->fd, p + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
			break;
		}
		done += (size_t)n;
	}
}

int hwt_outbuf_flush(struct hwt_outbuf *o)
{
	write_all(o, o->buf, o->len);
	o->len = 0;
	return o->err ? HWT_ERR_IO : 0;
}

void hwt_outbuf_write(struct hwt_outbuf *o, const char *s, size_t n)
{
	if (n > o->cap - o->len) {
		hwt_outbuf_flush(o);
		if (n >= o->cap / 2) { /* (no copy) */
			write_all(o, s, n);
			return;
		}
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

int hwt_outbuf_fini(struct hwt_outbuf *o)
{
	if (o->buf)
		hwt_outbuf_flush(o);
	free(o->buf);
	o->buf = NULL;
	return o->err;
}

const char hwt_fmt_dec2[201] = "00010203040506070809101112131415161718192021222324"
			       "25262728293031323334353637383940414243444546474849"
			       "50515253545556575859606162636465666768697071727374"
			       "75767778798081828384858687888990919293949596979899";

void hwt_out_hex(struct hwt_outbuf *o, uint64_t v)
{
	char *p = hwt_outbuf_room(o, 18);
	o->len += hwt_fmt_hex(p, v);
}

void hwt_out_dec(struct hwt_outbuf *o, uint64_t v, int width)
{
	char *p = hwt_outbuf_room(o, 64);
	if (width <= 0) {
		o->len += hwt_fmt_dec(p, v);
		return;
	}
	char tmp[24];
	size_t n = hwt_fmt_dec(tmp, v), k = 0;
	for (int i = (int)n; i < width && i < 40; i++)
		p[k++] = ' ';
	memcpy(p + k, tmp, n);
	o->len += k + n;
}

void hwt_out_sym(struct hwt_outbuf *o, const char *sym, uint64_t off)
{
	if (!sym) {
		hwt_out_mem(o, "[unknown]", 9);
		return;
	}
	hwt_out_str(o, sym);
	hwt_out_char(o, '+');
	hwt_out_hex(o, off);
}

void hwt_out_time_set(struct hwt_outbuf *o, uint64_t ns)
{
	char *t = o->ttext;
	size_t n = hwt_fmt_dec(t, ns / 1000000000u);
	unsigned f = (unsigned)(ns % 1000000000u);
	t[n] = '.';
	t[n + 1] = (char)('0' + f / 100000000u);
	f %= 100000000u;
	for (int i = 3; i >= 0; i--, f /= 100)
		memcpy(t + n + 2 + 2 * i, hwt_fmt_dec2 + 2 * (f % 100), 2);
	o->tlen = (uint8_t)(n + 10);
	o->tlast = ns;
}

void hwt_out_time_ns(struct hwt_outbuf *o, uint64_t ns)
{
	char *p = hwt_outbuf_room(o, 32);
	o->len += hwt_fmt_time(o, p, ns);
}

void hwt_out_head(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t ns)
{
	char *p = hwt_outbuf_room(o, HWT_OUT_HEAD);
	o->len += hwt_fmt_head(o, p, tid, have_time, ns);
}

void hwt_out_prefix_set(struct hwt_outbuf *o, uint32_t tid, int kind)
{
	char *t = o->ptext;
	size_t n = 0;
	if (kind == HWT_OUT_PFX_TEXT)
		for (size_t d = hwt_fmt_dec(t, tid); d < 7; d++)
			t[n++] = ' ';
	n += hwt_fmt_dec(t + n, tid);
	t[n++] = kind == HWT_OUT_PFX_TEXT ? ' ' : '\t';
	o->plen = (uint8_t)n;
	o->pkind = (uint8_t)kind;
	o->ptid = tid;
}

static const char *const kind_names[HWT_BR_NKINDS] = {"jcc",   "jmp", "ijmp", "call",
						      "icall", "ret", "far",  "async"};

const char *hwt_branch_kind_name(int kind)
{
	return kind >= 0 && kind < HWT_BR_NKINDS ? kind_names[kind] : "?";
}

int hwt_branch_kind_of(int iclass)
{
	switch (iclass) {
	case HWT_INSN_JCC:
		return HWT_BR_JCC;
	case HWT_INSN_JMP:
		return HWT_BR_JMP;
	case HWT_INSN_JMP_IND:
		return HWT_BR_IJMP;
	case HWT_INSN_CALL:
		return HWT_BR_CALL;
	case HWT_INSN_CALL_IND:
		return HWT_BR_ICALL;
	case HWT_INSN_RET:
		return HWT_BR_RET;
	default:
		return HWT_BR_FAR;
	}
}

/* A tsv line's kind column: "name\n" padded to 8 bytes, its length in
 * the last byte. */
static const char tsv_kinds[HWT_BR_NKINDS + 1][8] = {
    "jcc\n\0\0\0\4", "jmp\n\0\0\0\4", "ijmp\n\0\0\5", "call\n\0\0\5",	"icall\n\0\6",
    "ret\n\0\0\0\4", "far\n\0\0\0\4", "async\n\0\6",  "?\n\0\0\0\0\0\2"};

/* The same with the tab before it (hwt_out_branches_tsv's lines), for
 * every value of the kind byte (no bounds check per line). */
/* clang-format off */
#define TK_UNKNOWN "\t?\n\0\0\0\0\3"
#define TK_8 TK_UNKNOWN, TK_UNKNOWN, TK_UNKNOWN, TK_UNKNOWN, \
	TK_UNKNOWN, TK_UNKNOWN, TK_UNKNOWN, TK_UNKNOWN
#define TK_32 TK_8, TK_8, TK_8, TK_8
_Static_assert(HWT_BR_NKINDS == 8, "tsv_tkinds lists 8 kinds");
static const char tsv_tkinds[256][8] = {
    "\tjcc\n\0\0\5", "\tjmp\n\0\0\5", "\tijmp\n\0\6", "\tcall\n\0\6",
    "\ticall\n\7", "\tret\n\0\0\5", "\tfar\n\0\0\5", "\tasync\n\7",
    TK_8, TK_8, TK_8, /* 8..31 */
    TK_32, TK_32, TK_32, TK_32, TK_32, TK_32, TK_32 /* 32..255 */};
/* clang-format on */

/* The most a tsv line takes in the buffer: prefix 16, 2 * (18 + tab),
 * kind 8. */
#define TSV_LINE HWT_OUT_TSV_LINE

/* "from\tto\tkind\n" at q (after the prefix); returns the end. */
static inline char *put_tsv(char *q, uint64_t from, uint64_t to, unsigned kind)
{
	q += hwt_fmt_hex(q, from);
	*q++ = '\t';
	q += hwt_fmt_hex(q, to);
	*q++ = '\t';
	const char *k = tsv_kinds[kind < HWT_BR_NKINDS ? kind : HWT_BR_NKINDS];
	memcpy(q, k, 8);
	return q + k[7];
}

void hwt_out_branch_tsv(struct hwt_outbuf *o, uint32_t tid, uint64_t from, uint64_t to, int kind)
{
	char *p = hwt_outbuf_room(o, TSV_LINE), *q = p;
	q += hwt_fmt_prefix(o, q, tid, HWT_OUT_PFX_TSV);
	q = put_tsv(q, from, to, kind >= 0 ? (unsigned)kind : HWT_BR_NKINDS);
	o->len += (size_t)(q - p);
}

/* hwt_out_branches_tsv's lines: the prefix "TID\t0x" (pl bytes of 16),
 * from's digits, "\t0x", to's digits, the kind with its tab
 * (tsv_tkinds); each line starts at the end of the one before. */

/* The portable loop: per address, the digits without leading zeros
 * (hwt_fmt_hex16 of the address shifted left by them). */
static char *tsv_run(char *q, const char *pfx, size_t pl, const struct hwt_dec_branch *br, size_t m)
{
	for (size_t i = 0; i < m; i++) {
		uint64_t f = br[i].from, t = br[i].to;
		unsigned k = br[i].kind, lf = (unsigned)__builtin_clzll(f | 1) & 60u,
			 lt = (unsigned)__builtin_clzll(t | 1) & 60u;
		memcpy(q, pfx, 16);
		q += pl;
		hwt_fmt_hex16(q, f << lf);
		q += 16 - lf / 4;
		memcpy(q, "\t0x", 4);
		q += 3;
		hwt_fmt_hex16(q, t << lt);
		q += 16 - lt / 4;
		memcpy(q, tsv_tkinds[k], 8);
		q += tsv_tkinds[k][7];
	}
	return q;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TSV_SIMD 1
#include <immintrin.h>
#define TSV_TARGET __attribute__((target("avx2,avx512f,avx512vl,avx512cd,avx512vbmi")))
#define TSV_SSSE3 __attribute__((target("ssse3")))

_Static_assert(offsetof(struct hwt_dec_branch, to) == offsetof(struct hwt_dec_branch, from) + 8,
	       "the AVX-512 tsv loop loads from and to as one 128-bit vector");

/* vpmultishiftqb's bit offsets: an address's 16 nibbles, the most
 * significant first, from two copies of it (qwords 0-1: from, 2-3: to) */
static const uint8_t tsv_nib[32]
    __attribute__((aligned(32))) = {60, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0,
				    60, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0};
/* vpermb looks up the low 5 (6) bits of each byte: the digits twice (4
 * times: broadcast) */
static const char tsv_hex[33] __attribute__((aligned(32))) = "0123456789abcdef"
							     "0123456789abcdef";

/* The AVX-512 loop: two lines at a time, the four addresses at once:
 * their leading zero digits from vplzcntq, shifted out with vpsllvq;
 * 64 digits by one vpmultishiftqb (each byte: 8 bits from a nibble's
 * offset) and one vpermb (the digit of the low 6 bits).  Writes the
 * same bytes as tsv_run (so does tsv_run_ssse3). */
TSV_TARGET static inline char *tsv_put_avx512(char *q, __m128i p16, size_t pl, __m128i df,
					      __m128i dt, size_t nf, size_t nt, unsigned k)
{
	_mm_storeu_si128((__m128i *)(void *)q, p16);
	q += pl;
	_mm_storeu_si128((__m128i *)(void *)q, df);
	q += nf;
	memcpy(q, "\t0x", 4);
	q += 3;
	_mm_storeu_si128((__m128i *)(void *)q, dt);
	q += nt;
	memcpy(q, tsv_tkinds[k], 8);
	return q + tsv_tkinds[k][7];
}

TSV_TARGET static char *tsv_run_avx512(char *q, const char *pfx, size_t pl,
				       const struct hwt_dec_branch *br, size_t m)
{
	const __m256i one = _mm256_set1_epi64x(1), c60 = _mm256_set1_epi64x(60),
		      c64 = _mm256_set1_epi64x(64);
	const __m128i p16 = _mm_loadu_si128((const __m128i *)(const void *)pfx);
	const __m512i nib = _mm512_broadcast_i64x4(
			  _mm256_load_si256((const __m256i *)(const void *)tsv_nib)),
		      lut = _mm512_broadcast_i64x4(
			  _mm256_load_si256((const __m256i *)(const void *)tsv_hex)),
		      twice = _mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3);
	size_t i = 0;
	for (; i + 2 <= m; i += 2) {
		__m256i v = _mm256_inserti128_si256(
		    _mm256_castsi128_si256(
			_mm_loadu_si128((const __m128i *)(const void *)&br[i].from)),
		    _mm_loadu_si128((const __m128i *)(const void *)&br[i + 1].from), 1);
		__m256i lz = _mm256_and_si256(_mm256_lzcnt_epi64(_mm256_or_si256(v, one)), c60);
		__m512i w = _mm512_permutexvar_epi64(
		    twice, _mm512_castsi256_si512(_mm256_sllv_epi64(v, lz)));
		__m512i d = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(nib, w), lut);
		/* the digits: 16 - leading zero digits */
		__m256i nd = _mm256_srli_epi64(_mm256_sub_epi64(c64, lz), 2);
		__m128i n0 = _mm256_castsi256_si128(nd), n1 = _mm256_extracti128_si256(nd, 1);
		q = tsv_put_avx512(q, p16, pl, _mm512_castsi512_si128(d),
				   _mm512_extracti32x4_epi32(d, 1), (size_t)_mm_cvtsi128_si64(n0),
				   (size_t)_mm_extract_epi64(n0, 1), br[i].kind);
		q = tsv_put_avx512(q, p16, pl, _mm512_extracti32x4_epi32(d, 2),
				   _mm512_extracti32x4_epi32(d, 3), (size_t)_mm_cvtsi128_si64(n1),
				   (size_t)_mm_extract_epi64(n1, 1), br[i + 1].kind);
	}
	if (i < m) { /* the last line alone */
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)&br[i].from);
		__m128i lz =
		    _mm_and_si128(_mm_lzcnt_epi64(_mm_or_si128(v, _mm256_castsi256_si128(one))),
				  _mm256_castsi256_si128(c60));
		__m256i w =
		    _mm256_permute4x64_epi64(_mm256_castsi128_si256(_mm_sllv_epi64(v, lz)), 0x50);
		__m256i d = _mm256_permutexvar_epi8(
		    _mm256_multishift_epi64_epi8(_mm512_castsi512_si256(nib), w),
		    _mm512_castsi512_si256(lut));
		__m128i nd = _mm_srli_epi64(_mm_sub_epi64(_mm256_castsi256_si128(c64), lz), 2);
		q = tsv_put_avx512(q, p16, pl, _mm256_castsi256_si128(d),
				   _mm256_extracti128_si256(d, 1), (size_t)_mm_cvtsi128_si64(nd),
				   (size_t)_mm_extract_epi64(nd, 1), br[i].kind);
	}
	return q;
}

/* The SSSE3 loop: the leading zero digits shifted out of each address
 * (bsr), then both at once: bytes in printing order (pshufb), split into
 * nibbles, each digit looked up by pshufb. */
TSV_SSSE3 static char *tsv_run_ssse3(char *q, const char *pfx, size_t pl,
				     const struct hwt_dec_branch *br, size_t m)
{
	const __m128i p16 = _mm_loadu_si128((const __m128i *)(const void *)pfx),
		      m0f = _mm_set1_epi8(0x0f),
		      rev = _mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8),
		      lut = _mm_loadu_si128((const __m128i *)(const void *)tsv_hex);
	for (size_t i = 0; i < m; i++) {
		uint64_t f = br[i].from, t = br[i].to;
		unsigned lf = (unsigned)__builtin_clzll(f | 1) & 60u,
			 lt = (unsigned)__builtin_clzll(t | 1) & 60u, k = br[i].kind;
		__m128i x = _mm_shuffle_epi8(
		    _mm_set_epi64x((long long)(t << lt), (long long)(f << lf)), rev);
		__m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), m0f), lo = _mm_and_si128(x, m0f);
		_mm_storeu_si128((__m128i *)(void *)q, p16);
		q += pl;
		_mm_storeu_si128((__m128i *)(void *)q,
				 _mm_shuffle_epi8(lut, _mm_unpacklo_epi8(hi, lo)));
		q += 16 - lf / 4;
		memcpy(q, "\t0x", 4);
		q += 3;
		_mm_storeu_si128((__m128i *)(void *)q,
				 _mm_shuffle_epi8(lut, _mm_unpackhi_epi8(hi, lo)));
		q += 16 - lt / 4;
		memcpy(q, tsv_tkinds[k], 8);
		q += tsv_tkinds[k][7];
	}
	return q;
}
#endif

int hwt_out_simd_supported(void)
{
#ifdef TSV_SIMD
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd") &&
	    __builtin_cpu_supports("avx512vbmi"))
		return HWT_OUT_AVX512;
	if (__builtin_cpu_supports("ssse3"))
		return HWT_OUT_SSSE3;
#endif
	return 0;
}

/* m lines at q after the prefix pfx (pl bytes, "0x" included) */
static char *tsv_lines(char *q, const char *pfx, size_t pl, const struct hwt_dec_branch *br,
		       size_t m, int simd)
{
#ifdef TSV_SIMD
	if (simd == HWT_OUT_AVX512)
		return tsv_run_avx512(q, pfx, pl, br, m);
	if (simd == HWT_OUT_SSSE3)
		return tsv_run_ssse3(q, pfx, pl, br, m);
#endif
	(void)simd;
	return tsv_run(q, pfx, pl, br, m);
}

size_t hwt_fmt_branches_tsv(char *out, uint32_t tid, const struct hwt_dec_branch *br, size_t n,
			    int simd)
{
	char pfx[16] = {0};
	size_t pl = hwt_fmt_dec(pfx, tid);
	memcpy(pfx + pl, "\t0x", 3);
	return (size_t)(tsv_lines(out, pfx, pl + 3, br, n, simd) - out);
}

size_t hwt_out_branches_tsv_text(void *fctx, const struct hwt_dec_thread *t,
				 const struct hwt_dec_branch *br, size_t n,
				 const struct hwt_image *img, char *out)
{
	(void)img;
	return hwt_fmt_branches_tsv(out, t->tid, br, n,
				    fctx ? *(const uint8_t *)fctx : hwt_out_simd_supported());
}

void hwt_out_branches_tsv(struct hwt_outbuf *o, uint32_t tid, const struct hwt_dec_branch *br,
			  size_t n)
{
	/* the prefix once; lines in runs that fit in the buffer, with no
	 * check per line */
	char pfx[16];
	size_t pl = hwt_fmt_prefix(o, pfx, tid, HWT_OUT_PFX_TSV);
	memcpy(pfx + pl, "0x", 2);
	pl += 2;
	while (n) {
		if (o->cap - o->len < TSV_LINE)
			hwt_outbuf_flush(o);
		size_t m = (o->cap - o->len) / TSV_LINE;
		if (m > n)
			m = n;
		char *q = tsv_lines(o->buf + o->len, pfx, pl, br, m, o->simd);
		o->len = (size_t)(q - o->buf);
		br += m;
		n -= m;
	}
}

static void loc(struct hwt_outbuf *o, const struct hwt_out_loc *l)
{
	hwt_out_hex(o, l->ip);
	hwt_out_mem(o, " (", 2);
	hwt_out_sym(o, l->sym, l->off);
	hwt_out_char(o, ')');
	if (l->src)
		hwt_out_src(o, l);
}

/* The line piece by piece (long symbol names, source lines). */
static void hwt_out_branch_text_slow(struct hwt_outbuf *o, uint32_t tid, int have_time,
				     uint64_t time_ns, int kind, const struct hwt_out_loc *from,
				     const struct hwt_out_loc *to)
{
	hwt_out_head(o, tid, have_time, time_ns);
	const char *k = hwt_branch_kind_name(kind);
	hwt_out_str(o, k);
	for (size_t i = strlen(k); i < 6; i++)
		hwt_out_char(o, ' ');
	loc(o, from);
	hwt_out_mem(o, " => ", 4);
	loc(o, to);
	hwt_out_char(o, '\n');
}

/* "IP (sym+0xoff)" or "IP ([unknown])" at q; symbol names are at most
 * 1024 bytes here (the caller checked).  Returns the end. */
static inline char *put_loc(char *q, const struct hwt_out_loc *l, size_t symlen)
{
	q += hwt_fmt_hex(q, l->ip);
	memcpy(q, " (", 2);
	q += 2;
	q = hwt_fmt_loc(q, l->sym, symlen, l->off);
	*q++ = ')';
	return q;
}

void hwt_out_branch_text(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
			 int kind, const struct hwt_out_loc *from, const struct hwt_out_loc *to)
{
	/* "TID " (7 wide) + time + kind (6 wide) + 2 locs + " => " + nl */
	size_t fl = from->sym ? strlen(from->sym) : 0, tl = to->sym ? strlen(to->sym) : 0;
	if (fl > 1024 || tl > 1024 || from->src || to->src) {
		hwt_out_branch_text_slow(o, tid, have_time, time_ns, kind, from, to);
		return;
	}
	char *p = hwt_outbuf_room(o, 16 + 32 + 8 + 2 * (18 + 2 + 1024 + 1 + 18 + 1) + 4 + 1),
	     *q = p;
	q += hwt_fmt_head(o, q, tid, have_time, time_ns);
	static const char kinds[HWT_BR_NKINDS + 1][8] = {"jcc   ", "jmp   ", "ijmp  ",
							 "call  ", "icall ", "ret   ",
							 "far   ", "async ", "?     "};
	unsigned ki = kind >= 0 && kind < HWT_BR_NKINDS ? (unsigned)kind : HWT_BR_NKINDS;
	memcpy(q, kinds[ki], 8);
	q += 6;
	q = put_loc(q, from, fl);
	memcpy(q, " => ", 4);
	q += 4;
	q = put_loc(q, to, tl);
	*q++ = '\n';
	o->len += (size_t)(q - p);
}

void hwt_out_gap(struct hwt_outbuf *o, uint32_t tid, uint64_t offset, uint64_t ip, const char *text)
{
	if (tid) {
		hwt_out_dec(o, tid, 7);
		hwt_out_char(o, ' ');
	}
	hwt_out_char(o, '[');
	hwt_out_hex(o, offset);
	hwt_out_mem(o, ", ", 2);
	hwt_out_hex(o, ip);
	hwt_out_mem(o, ": error: ", 9);
	hwt_out_str(o, text);
	hwt_out_mem(o, "]\n", 2);
}
