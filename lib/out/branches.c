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
	o->buf = malloc(cap);
	return o->buf ? 0 : HWT_ERR_NOMEM;
}

int hwt_outbuf_flush(struct hwt_outbuf *o)
{
	size_t done = 0;
	while (!o->err && done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
			break;
		}
		done += (size_t)n;
	}
	o->len = 0;
	return o->err ? HWT_ERR_IO : 0;
}

int hwt_outbuf_fini(struct hwt_outbuf *o)
{
	if (o->buf)
		hwt_outbuf_flush(o);
	free(o->buf);
	o->buf = NULL;
	return o->err;
}

static const char hexdig[] = "0123456789abcdef";

/* Two decimal digits per table entry: "00".."99". */
static const char dec2[201] = "00010203040506070809101112131415161718192021222324"
			      "25262728293031323334353637383940414243444546474849"
			      "50515253545556575859606162636465666768697071727374"
			      "75767778798081828384858687888990919293949596979899";

/* "0x" + hex digits of v (no leading zeros) at p; returns the length.
 * Two digits per step from a 256-entry table. */
static inline size_t put_hex(char *p, uint64_t v)
{
	static const char hex2[513] =
	    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1; /* digits */
	p[0] = '0';
	p[1] = 'x';
	char *q = p + 2 + n; /* one past the last digit */
	while (q - p >= 4) {
		q -= 2;
		memcpy(q, hex2 + 2 * (v & 255), 2);
		v >>= 8;
	}
	if (q - p == 3)
		p[2] = hexdig[v & 15];
	return 2 + n;
}

/* Decimal digits of v at p; returns the length (<= 20). */
static inline size_t put_dec(char *p, uint64_t v)
{
	char tmp[20];
	char *q = tmp + sizeof(tmp);
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, dec2 + 2 * r, 2);
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, dec2 + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	size_t n = (size_t)(tmp + sizeof(tmp) - q);
	for (size_t i = 0; i < n; i++)
		p[i] = q[i];
	return n;
}

void hwt_out_hex(struct hwt_outbuf *o, uint64_t v)
{
	char *p = hwt_outbuf_room(o, 18);
	o->len += put_hex(p, v);
}

void hwt_out_dec(struct hwt_outbuf *o, uint64_t v, int width)
{
	char *p = hwt_outbuf_room(o, 64);
	if (width <= 0) {
		o->len += put_dec(p, v);
		return;
	}
	char tmp[24];
	size_t n = put_dec(tmp, v), k = 0;
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

void hwt_out_time_ns(struct hwt_outbuf *o, uint64_t ns)
{
	/* Consecutive lines mostly carry the same time: keep its text. */
	if (o->tlen && o->tlast == ns) {
		memcpy(hwt_outbuf_room(o, sizeof(o->ttext)), o->ttext, o->tlen);
		o->len += o->tlen;
		return;
	}
	char *t = o->ttext;
	size_t n = put_dec(t, ns / 1000000000u);
	t[n++] = '.';
	uint64_t f = ns % 1000000000u;
	for (int i = 8; i >= 0; i--, f /= 10)
		t[n + (size_t)i] = (char)('0' + f % 10);
	n += 9;
	o->tlen = (uint8_t)n;
	o->tlast = ns;
	memcpy(hwt_outbuf_room(o, sizeof(o->ttext)), t, n);
	o->len += n;
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

void hwt_out_branch_tsv(struct hwt_outbuf *o, uint32_t tid, uint64_t from, uint64_t to, int kind)
{
	/* one reservation for the whole line: 10 + 3 tabs + 2 * 18 + 5 + nl */
	char *p = hwt_outbuf_room(o, 64), *q = p;
	q += put_dec(q, tid);
	*q++ = '\t';
	q += put_hex(q, from);
	*q++ = '\t';
	q += put_hex(q, to);
	*q++ = '\t';
	/* kind names are at most 5 bytes: copy 8 of "name\n" padded */
	static const char kinds[HWT_BR_NKINDS + 1][8] = {
	    "jcc\n", "jmp\n", "ijmp\n", "call\n", "icall\n", "ret\n", "far\n", "async\n", "?\n"};
	static const uint8_t klen[HWT_BR_NKINDS + 1] = {4, 4, 5, 5, 6, 4, 4, 6, 2};
	unsigned ki = kind >= 0 && kind < HWT_BR_NKINDS ? (unsigned)kind : HWT_BR_NKINDS;
	memcpy(q, kinds[ki], 8);
	q += klen[ki];
	o->len += (size_t)(q - p);
}

void hwt_out_branches_tsv(struct hwt_outbuf *o, uint32_t tid, const struct hwt_dec_branch *br,
			  size_t n)
{
	/* the tid once */
	char tb[16] = {0};
	size_t tl = put_dec(tb, tid);
	static const char kinds[HWT_BR_NKINDS + 1][8] = {
	    "jcc\n", "jmp\n", "ijmp\n", "call\n", "icall\n", "ret\n", "far\n", "async\n", "?\n"};
	static const uint8_t klen[HWT_BR_NKINDS + 1] = {4, 4, 5, 5, 6, 4, 4, 6, 2};
	for (size_t i = 0; i < n; i++) {
		char *p = hwt_outbuf_room(o, 64), *q = p;
		memcpy(q, tb, 16);
		q += tl;
		*q++ = '\t';
		q += put_hex(q, br[i].from);
		*q++ = '\t';
		q += put_hex(q, br[i].to);
		*q++ = '\t';
		unsigned ki = br[i].kind < HWT_BR_NKINDS ? br[i].kind : HWT_BR_NKINDS;
		memcpy(q, kinds[ki], 8);
		q += klen[ki];
		o->len += (size_t)(q - p);
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
	hwt_out_dec(o, tid, 7);
	hwt_out_char(o, ' ');
	if (have_time) {
		hwt_out_time_ns(o, time_ns);
		hwt_out_char(o, ' ');
	}
	const char *k = hwt_branch_kind_name(kind);
	hwt_out_str(o, k);
	for (size_t i = strlen(k); i < 6; i++)
		hwt_out_char(o, ' ');
	loc(o, from);
	hwt_out_mem(o, " => ", 4);
	loc(o, to);
	hwt_out_char(o, '\n');
}

/* "IP (sym+0xoff)" or "IP ([unknown])" at p; symbol names are at most
 * 1024 bytes here (the caller checked).  Returns the length. */
static size_t put_loc(char *p, const struct hwt_out_loc *l, size_t symlen)
{
	char *q = p;
	q += put_hex(q, l->ip);
	*q++ = ' ';
	*q++ = '(';
	if (l->sym) {
		memcpy(q, l->sym, symlen);
		q += symlen;
		*q++ = '+';
		q += put_hex(q, l->off);
	} else {
		memcpy(q, "[unknown]", 9);
		q += 9;
	}
	*q++ = ')';
	return (size_t)(q - p);
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
	hwt_out_dec(o, tid, 7);
	hwt_out_char(o, ' ');
	if (have_time) {
		hwt_out_time_ns(o, time_ns);
		hwt_out_char(o, ' ');
	}
	char *p = hwt_outbuf_room(o, 2 * (18 + 3 + 1024 + 1 + 18 + 1) + 16), *q = p;
	static const char kinds[HWT_BR_NKINDS + 1][8] = {"jcc   ", "jmp   ", "ijmp  ",
							 "call  ", "icall ", "ret   ",
							 "far   ", "async ", "?     "};
	unsigned ki = kind >= 0 && kind < HWT_BR_NKINDS ? (unsigned)kind : HWT_BR_NKINDS;
	memcpy(q, kinds[ki], 6);
	q += 6;
	q += put_loc(q, from, fl);
	memcpy(q, " => ", 4);
	q += 4;
	q += put_loc(q, to, tl);
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
