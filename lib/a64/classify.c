/* lib/a64/classify.c - A64 instruction length, branch class and direct
 * target via Capstone (hwt/a64.h).
 *
 * Capstone decodes one instruction with details (the condition code of
 * B.cond, the immediate operand of direct branches); the instruction id
 * maps onto enum hwt_insn_class.  A Capstone handle is opened and closed
 * per call (Capstone keeps no state between calls that matters here): no
 * global state.  Disassembly text: lib/a64/disasm.c.
 */
#include <string.h>

#include <capstone/capstone.h>

#include "hwt/a64.h"
#include "hwt/error.h"
#include "hwt/x86.h"

static int last_imm(const cs_arm64 *a, uint64_t *target)
{
	if (!a->op_count || a->operands[a->op_count - 1].type != ARM64_OP_IMM)
		return 0;
	*target = (uint64_t)a->operands[a->op_count - 1].imm;
	return 1;
}

static uint8_t class_of(const cs_insn *in, uint64_t *target, uint8_t *flags)
{
	const cs_arm64 *a = &in->detail->arm64;
	switch (in->id) {
	case ARM64_INS_B:
		if (last_imm(a, target))
			*flags |= HWT_INSN_F_DIRECT;
		return a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL && a->cc != ARM64_CC_NV
			   ? HWT_INSN_JCC
			   : HWT_INSN_JMP;
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		if (last_imm(a, target))
			*flags |= HWT_INSN_F_DIRECT;
		return HWT_INSN_JCC;
	case ARM64_INS_BL:
		if (last_imm(a, target))
			*flags |= HWT_INSN_F_DIRECT;
		return HWT_INSN_CALL;
	case ARM64_INS_BR:
		return HWT_INSN_JMP_IND;
	case ARM64_INS_BLR:
		return HWT_INSN_CALL_IND;
	case ARM64_INS_RET:
		return HWT_INSN_RET;
	case ARM64_INS_SVC:
		return HWT_INSN_SYSCALL;
	case ARM64_INS_HVC:
	case ARM64_INS_SMC:
	case ARM64_INS_BRK:
	case ARM64_INS_HLT:
		return HWT_INSN_INT;
	case ARM64_INS_ERET:
		return HWT_INSN_FAR_RET;
	default:
		return HWT_INSN_OTHER;
	}
}

int hwt_a64_decode(const uint8_t *bytes, size_t avail, uint64_t ip, struct hwt_a64_insn *insn)
{
	memset(insn, 0, sizeof(*insn));
	insn->ip = ip;
	if (!bytes || avail < 4)
		return HWT_ERR_NOMAP;
	csh cs;
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &cs) != CS_ERR_OK)
		return HWT_ERR_NOMEM;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *in = NULL;
	int r = HWT_ERR_BAD_INSN;
	if (cs_disasm(cs, bytes, 4, ip, 1, &in) == 1) {
		insn->size = 4;
		memcpy(insn->raw, bytes, 4);
		insn->iclass = class_of(in, &insn->target, &insn->flags);
		r = 0;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&cs);
	return r;
}
