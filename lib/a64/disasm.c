/* lib/a64/disasm.c - A64 disassembly text via Capstone (hwt/a64.h):
 * "mnemonic operands", branch targets as absolute addresses.  One
 * Capstone handle per call, no details: no state kept. */
#include <stdio.h>

#include <capstone/capstone.h>

#include "hwt/a64.h"
#include "hwt/error.h"

int hwt_a64_disasm(const uint8_t *bytes, size_t avail, uint64_t ip, char *buf, size_t n)
{
	if (n)
		snprintf(buf, n, "(bad)");
	if (!bytes || avail < 4)
		return HWT_ERR_NOMAP;
	csh cs;
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &cs) != CS_ERR_OK)
		return HWT_ERR_NOMEM;
	cs_insn *in = NULL;
	int r = HWT_ERR_BAD_INSN;
	if (cs_disasm(cs, bytes, 4, ip, 1, &in) == 1) {
		if (n)
			snprintf(buf, n, "%s%s%s", in->mnemonic, in->op_str[0] ? " " : "",
				 in->op_str);
		r = 0;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&cs);
	return r;
}
