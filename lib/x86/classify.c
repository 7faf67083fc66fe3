/* lib/x86/classify.c - x86 instruction length and branch class via Zydis.
 *
 * hwt_x86_decode() runs Zydis' instruction decoder without operand
 * decoding (the cheap part) and maps the mnemonic, opcode and branch type
 * onto enum hwt_insn_class.  A few instructions that Zydis 4.0 does not
 * know (FRED's eretu/erets) are recognised from their bytes first.  The
 * decoder object is built on the stack per call: no global state.
 */
#include <string.h>

#include <Zydis/Zydis.h>

#include "hwt/error.h"
#include "hwt/x86.h"

static uint64_t mask_width(uint64_t v, unsigned width)
{
	if (width == 16)
		return v & 0xffffu;
	if (width == 32)
		return v & 0xffffffffu;
	return v;
}

/* FRED returns: F3 0F 01 CA (eretu), F2 0F 01 CA (erets). */
static int fred_eret(const uint8_t *b, size_t avail)
{
	return avail >= 4 && (b[0] == 0xf3 || b[0] == 0xf2) && b[1] == 0x0f && b[2] == 0x01 &&
	       b[3] == 0xca;
}

int hwt_x86_decode(const uint8_t *bytes, size_t avail, uint64_t ip, int mode,
		   struct hwt_x86_insn *insn)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZyanStatus st;

	memset(insn, 0, sizeof(*insn));
	insn->ip = ip;
	insn->mode = (uint8_t)mode;
	if (mode == 64)
		st = ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	else if (mode == 32)
		st =
		    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_COMPAT_32, ZYDIS_STACK_WIDTH_32);
	else if (mode == 16)
		st =
		    ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_COMPAT_16, ZYDIS_STACK_WIDTH_16);
	else
		return HWT_ERR_INVALID;
	if (!ZYAN_SUCCESS(st))
		return HWT_ERR_INTERNAL;
	if (mode == 64 && avail >= 3 && bytes[0] == 0xd5 && bytes[1] == 0x00 && bytes[2] == 0xa1) {
		/* APX jmpabs (REX2 + A1 imm64): traced with a TIP like an
		 * indirect jump. */
		if (avail < 11)
			return HWT_ERR_NOMAP;
		insn->size = 11;
		insn->iclass = HWT_INSN_JMP_IND;
		memcpy(insn->raw, bytes, 11);
		for (int i = 10; i >= 3; i--)
			insn->target = (insn->target << 8) | bytes[i];
		return 0;
	}
	if (fred_eret(bytes, avail)) {
		insn->size = 4;
		insn->iclass = HWT_INSN_FAR_RET;
		insn->flags = HWT_INSN_F_ERET;
		memcpy(insn->raw, bytes, 4);
		return 0;
	}
	st = ZydisDecoderDecodeInstruction(&dec, NULL, bytes, avail > 15 ? 15 : avail, &zi);
	if (!ZYAN_SUCCESS(st)) {
		if (st == ZYDIS_STATUS_NO_MORE_DATA && avail < 15)
			return HWT_ERR_NOMAP;
		return HWT_ERR_BAD_INSN;
	}
	insn->size = zi.length;
	memcpy(insn->raw, bytes, zi.length);

	int far = zi.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;
	int rel = zi.raw.imm[0].is_relative;
	switch (zi.mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		if (far)
			insn->iclass = HWT_INSN_FAR_JMP;
		else
			insn->iclass = rel ? HWT_INSN_JMP : HWT_INSN_JMP_IND;
		break;
	case ZYDIS_MNEMONIC_CALL:
		if (far)
			insn->iclass = HWT_INSN_FAR_CALL;
		else
			insn->iclass = rel ? HWT_INSN_CALL : HWT_INSN_CALL_IND;
		break;
	case ZYDIS_MNEMONIC_RET:
		insn->iclass = far ? HWT_INSN_FAR_RET : HWT_INSN_RET;
		break;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		insn->iclass = HWT_INSN_FAR_RET;
		insn->flags |= HWT_INSN_F_IRET;
		break;
	case ZYDIS_MNEMONIC_UIRET:
		insn->iclass = HWT_INSN_FAR_RET;
		insn->flags |= HWT_INSN_F_UIRET;
		break;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
		insn->iclass = HWT_INSN_SYSCALL;
		break;
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSEXIT:
		insn->iclass = HWT_INSN_SYSRET;
		break;
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:
		insn->iclass = HWT_INSN_INT;
		break;
	case ZYDIS_MNEMONIC_VMLAUNCH:
	case ZYDIS_MNEMONIC_VMRESUME:
		insn->iclass = HWT_INSN_VMCALL;
		insn->flags |= HWT_INSN_F_VMENTRY;
		break;
	case ZYDIS_MNEMONIC_VMCALL:
	case ZYDIS_MNEMONIC_VMMCALL:
		insn->iclass = HWT_INSN_VMCALL;
		break;
	case ZYDIS_MNEMONIC_PTWRITE:
		insn->iclass = HWT_INSN_PTWRITE;
		break;
	case ZYDIS_MNEMONIC_VMPTRLD:
		insn->flags |= HWT_INSN_F_VMPTRLD;
		break;
	case ZYDIS_MNEMONIC_MOV:
		if (zi.opcode_map == ZYDIS_OPCODE_MAP_0F && zi.opcode == 0x22 &&
		    zi.raw.modrm.reg == 3)
			insn->flags |= HWT_INSN_F_MOV_CR3;
		break;
	default:
		if (zi.meta.category == ZYDIS_CATEGORY_COND_BR)
			insn->iclass = HWT_INSN_JCC;
		break;
	}
	if (rel && (insn->iclass == HWT_INSN_JMP || insn->iclass == HWT_INSN_CALL ||
		    insn->iclass == HWT_INSN_JCC)) {
		uint64_t t = ip + zi.length + (uint64_t)zi.raw.imm[0].value.s;
		insn->target = mask_width(t, zi.operand_width);
		insn->flags |= HWT_INSN_F_DIRECT;
	}
	return 0;
}

const char *hwt_insn_class_name(int iclass)
{
	static const char *const names[HWT_INSN_NCLASSES] = {
	    "other",   "jcc",	  "jmp",     "jmp.ind", "call", "call.ind", "ret",     "far.call",
	    "far.jmp", "far.ret", "syscall", "sysret",	"int",	"vmcall",   "ptwrite",
	};
	if (iclass < 0 || iclass >= HWT_INSN_NCLASSES)
		return "?";
	return names[iclass];
}
