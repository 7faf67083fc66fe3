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
	hwt_out_dec(o, tid, 7);
	hwt_out_char(o, ' ');
	if (have_time) {
		hwt_out_time_ns(o, time_ns);
		hwt_out_char(o, ' ');
	}
	hwt_out_hex(o, at->ip);
	hwt_out_char(o, ' ');
	hwt_out_sym(o, at->sym, at->off);
	if (at->src)
		hwt_out_src(o, at);
	if (disasm && raw && size) {
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
