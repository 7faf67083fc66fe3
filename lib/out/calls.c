/* lib/out/calls.c - call/return lines of "hwt script --calls": indented
 * by call depth, with both ends symbolized and, on returns, the time spent
 * in the call when the trace has timing.  Stateless: the caller tracks
 * depth and call times. */
#include "out/out.h"

static void head(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		 unsigned depth)
{
	hwt_out_dec(o, tid, 7);
	hwt_out_char(o, ' ');
	if (have_time) {
		hwt_out_time_ns(o, time_ns);
		hwt_out_char(o, ' ');
	}
	if (depth > 200)
		depth = 200;
	char *p = hwt_outbuf_room(o, 2 * depth);
	memset(p, ' ', 2 * depth);
	o->len += 2 * depth;
}

static void tail(struct hwt_outbuf *o, const struct hwt_out_loc *from, const struct hwt_out_loc *to)
{
	hwt_out_hex(o, from->ip);
	hwt_out_mem(o, " => ", 4);
	hwt_out_hex(o, to->ip);
	hwt_out_char(o, ' ');
	hwt_out_sym(o, to->sym, to->off);
	if (to->src)
		hwt_out_src(o, to);
}

void hwt_out_call(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		  unsigned depth, const struct hwt_out_loc *from, const struct hwt_out_loc *to)
{
	head(o, tid, have_time, time_ns, depth);
	hwt_out_mem(o, "call ", 5);
	tail(o, from, to);
	hwt_out_char(o, '\n');
}

void hwt_out_ret(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		 unsigned depth, const struct hwt_out_loc *from, const struct hwt_out_loc *to,
		 int have_dur, uint64_t dur_ns)
{
	head(o, tid, have_time, time_ns, depth);
	hwt_out_mem(o, "ret  ", 5);
	tail(o, from, to);
	if (have_dur) {
		hwt_out_mem(o, " [", 2);
		hwt_out_dec(o, dur_ns, 0);
		hwt_out_mem(o, " ns]", 4);
	}
	hwt_out_char(o, '\n');
}
