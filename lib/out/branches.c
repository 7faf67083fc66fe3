/* lib/out/branches.c - the output buffer of the flow printers and the
 * taken-branch lines of "hwt script --branches" (text and tsv).
 *
 * Lifecycle: hwt_outbuf_init (allocates cap bytes) -> formatters ->
 * hwt_outbuf_fini (flush, free).  Writes loop over partial writes; a
 * failing write records errno in ->err and drops the rest.
 */
#include <errno.h>
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

size_t hwt_out_branches_tsv_text(void *fctx, const struct hwt_dec_thread *t,
				 const struct hwt_dec_branch *br, size_t n,
				 const struct hwt_image *img, char *out)
{
	/* the prefix made here (no outbuf: nothing shared) */
	char pfx[16] = {0};
	size_t pl = hwt_fmt_dec(pfx, t->tid);
	pfx[pl++] = '\t';
	char *q = out;
	for (size_t i = 0; i < n; i++) {
		memcpy(q, pfx, 16);
		q = put_tsv(q + pl, br[i].from, br[i].to, br[i].kind);
	}
	return (size_t)(q - out);
}

void hwt_out_branches_tsv(struct hwt_outbuf *o, uint32_t tid, const struct hwt_dec_branch *br,
			  size_t n)
{
	/* the prefix once; lines in runs that fit in the buffer, with no
	 * check per line */
	char pfx[16];
	size_t pl = hwt_fmt_prefix(o, pfx, tid, HWT_OUT_PFX_TSV);
	while (n) {
		if (o->cap - o->len < TSV_LINE)
			hwt_outbuf_flush(o);
		size_t m = (o->cap - o->len) / TSV_LINE;
		if (m > n)
			m = n;
		char *q = o->buf + o->len;
		for (size_t i = 0; i < m; i++) {
			memcpy(q, pfx, 16);
			q = put_tsv(q + pl, br[i].from, br[i].to, br[i].kind);
		}
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
