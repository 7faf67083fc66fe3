/* lib/out/insn.c - instruction lines of "hwt script --insn": tid, time,
 * address, symbol+offset and, with --disasm, Intel-syntax disassembly by
 * Zydis's formatter (A64: Capstone, hwt/a64.h; one call per instruction;
 * no state kept). */
#include <Zydis/Zydis.h>

#include "hwt/a64.h"
#include "out/out.h"

void hwt_out_insn(struct hwt_outbuf *o, uint32_t tid, int have_time, uint64_t time_ns,
		  const struct hwt_out_loc *at, int disasm, const uint8_t *raw, unsigned size,
		  int mode)
{
	size_t sl = at->sym ? strlen(at->sym) : 0;
	int dis = disasm && raw && size;
	if (!dis && !at->src && sl <= 1024) {
		/* the whole line in one reservation */
		char *p = hwt_outbuf_room(o, HWT_OUT_HEAD + 18 + 1 + 1024 + 1 + 18 + 1), *q = p;
		q += hwt_fmt_head(o, q, tid, have_time, time_ns);
		q += hwt_fmt_hex(q, at->ip);
		*q++ = ' ';
		q = hwt_fmt_loc(q, at->sym, sl, at->off);
		*q++ = '\n';
		o->len += (size_t)(q - p);
		return;
	}
	hwt_out_head(o, tid, have_time, time_ns);
	hwt_out_hex(o, at->ip);
	hwt_out_char(o, ' ');
	hwt_out_sym(o, at->sym, at->off);
	if (at->src)
		hwt_out_src(o, at);
	if (dis) {
		ZydisDisassembledInstruction di;
		ZydisMachineMode mm = mode == 32   ? ZYDIS_MACHINE_MODE_LONG_COMPAT_32
				      : mode == 16 ? ZYDIS_MACHINE_MODE_LONG_COMPAT_16
						   : ZYDIS_MACHINE_MODE_LONG_64;
		hwt_out_char(o, '\t');
		if (mode == HWT_A64_MODE) {
			char text[128];
			hwt_a64_disasm(raw, size, at->ip, text, sizeof(text));
			hwt_out_str(o, text);
		} else if (ZYAN_SUCCESS(ZydisDisassembleIntel(mm, at->ip, raw, size, &di)))
			hwt_out_str(o, di.text);
		else
			hwt_out_str(o, "(bad)");
	}
	hwt_out_char(o, '\n');
}
