/* lib/out/calls.c - call/return lines of "hwt script --calls": indented
 * by call depth, with both ends symbolized and, on returns, the time spent
 * in the call when the trace has timing.  Stateless: the caller tracks
 * depth and call times. */
#include "out/out.h"

/* The line with its head, indent and "call "/"ret  " and both ends;
 * returns where it ends, NULL if it does not fit one reservation (long
 * symbol name, source line): then the caller prints it piece by piece. */
static char *line(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		  unsigned depth, const char *what, const struct hwt_out_loc *from,
		  const struct hwt_out_loc *to)
{
	size_t sl = to->sym ? strlen(to->sym) : 0;
	if (depth > 200)
		depth = 200;
	if (sl > 1024 || to->src) {
		hwt_out_head(o, tid, have_time, time_ns);
		char *p = hwt_outbuf_room(o, 2 * depth);
		memset(p, ' ', 2 * depth);
		o->len += 2 * depth;
		hwt_out_mem(o, what, 5);
		hwt_out_hex(o, from->ip);
		hwt_out_mem(o, " => ", 4);
		hwt_out_hex(o, to->ip);
		hwt_out_char(o, ' ');
		hwt_out_sym(o, to->sym, to->off);
		hwt_out_src(o, to);
		return NULL;
	}
	/* head, indent (<= 400), what, 2 ips, sym+off, " [DUR ns]\n" */
	char *q = hwt_outbuf_room(o, HWT_OUT_HEAD + 400 + 5 + 2 * 18 + 5 + 1024 + 19 + 32);
	q += hwt_fmt_head(o, q, tid, have_time, time_ns);
	memset(q, ' ', 2 * depth);
	q += 2 * depth;
	memcpy(q, what, 5);
	q += 5;
	q += hwt_fmt_hex(q, from->ip);
	memcpy(q, " => ", 4);
	q += 4;
	q += hwt_fmt_hex(q, to->ip);
	*q++ = ' ';
	q = hwt_fmt_loc(q, to->sym, sl, to->off);
	return q;
}

void hwt_out_call(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		  unsigned depth, const struct hwt_out_loc *from, const struct hwt_out_loc *to)
{
	char *q = line(o, tid, have_time, time_ns, depth, "call ", from, to);
	if (!q) {
		hwt_out_char(o, '\n');
		return;
	}
	*q++ = '\n';
	o->len = (size_t)(q - o->buf);
}

void hwt_out_ret(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		 unsigned depth, const struct hwt_out_loc *from, const struct hwt_out_loc *to,
		 int have_dur, uint64_t dur_ns)
{
	char *q = line(o, tid, have_time, time_ns, depth, "ret  ", from, to);
	if (!q) {
		if (have_dur) {
			hwt_out_mem(o, " [", 2);
			hwt_out_dec(o, dur_ns, 0);
			hwt_out_mem(o, " ns]", 4);
		}
		hwt_out_char(o, '\n');
		return;
	}
	if (have_dur) {
		memcpy(q, " [", 2);
		q += 2;
		q += hwt_fmt_dec(q, dur_ns);
		memcpy(q, " ns]", 4);
		q += 4;
	}
	*q++ = '\n';
	o->len = (size_t)(q - o->buf);
}
