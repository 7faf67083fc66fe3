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

void hwt_out_hex(struct hwt_outbuf *o, uint64_t v)
{
	char *p = hwt_outbuf_room(o, 18);
	int n = 1;
	for (uint64_t t = v >> 4; t; t >>= 4)
		n++;
	p[0] = '0';
	p[1] = 'x';
	for (int i = n - 1; i >= 0; i--, v >>= 4)
		p[2 + i] = hexdig[v & 15];
	o->len += 2 + (size_t)n;
}

void hwt_out_dec(struct hwt_outbuf *o, uint64_t v, int width)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char *p = hwt_outbuf_room(o, 64);
	size_t k = 0;
	for (int i = n; i < width && i < 40; i++)
		p[k++] = ' ';
	while (n)
		p[k++] = tmp[--n];
	o->len += k;
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
	hwt_out_dec(o, ns / 1000000000u, 0);
	hwt_out_char(o, '.');
	char *p = hwt_outbuf_room(o, 9);
	uint64_t f = ns % 1000000000u;
	for (int i = 8; i >= 0; i--, f /= 10)
		p[i] = (char)('0' + f % 10);
	o->len += 9;
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
	hwt_out_dec(o, tid, 0);
	hwt_out_char(o, '\t');
	hwt_out_hex(o, from);
	hwt_out_char(o, '\t');
	hwt_out_hex(o, to);
	hwt_out_char(o, '\t');
	hwt_out_str(o, hwt_branch_kind_name(kind));
	hwt_out_char(o, '\n');
}

static void loc(struct hwt_outbuf *o, const struct hwt_out_loc *l)
{
	hwt_out_hex(o, l->ip);
	hwt_out_mem(o, " (", 2);
	hwt_out_sym(o, l->sym, l->off);
	hwt_out_char(o, ')');
}

void hwt_out_branch_text(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
			 int kind, const struct hwt_out_loc *from, const struct hwt_out_loc *to)
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
