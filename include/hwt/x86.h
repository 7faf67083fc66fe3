/* hwt/x86.h - x86 instruction classification for trace decoders.
 *
 * Layer: lib/x86.  One call decodes one instruction (Zydis underneath) and
 * says what a branch-trace decoder needs: its length, its class (how it
 * transfers control and which trace packet that produces), the target of a
 * direct branch, and a few side effects (CR3 write, VMCS load, CPL
 * change).  Pure function: no state, no allocation.
 */
#ifndef HWT_X86_H
#define HWT_X86_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hwt_insn_class {
	HWT_INSN_OTHER = 0, /* no control transfer */
	HWT_INSN_JCC,	    /* conditional direct branch (incl. jcxz, loop*) */
	HWT_INSN_JMP,	    /* near direct jump */
	HWT_INSN_JMP_IND,   /* near indirect jump */
	HWT_INSN_CALL,	    /* near direct call */
	HWT_INSN_CALL_IND,  /* near indirect call */
	HWT_INSN_RET,	    /* near return */
	HWT_INSN_FAR_CALL,  /* far call (direct or indirect) */
	HWT_INSN_FAR_JMP,   /* far jump (direct or indirect) */
	HWT_INSN_FAR_RET,   /* lret, iret, eretu/erets, uiret */
	HWT_INSN_SYSCALL,   /* syscall, sysenter */
	HWT_INSN_SYSRET,    /* sysret, sysexit */
	HWT_INSN_INT,	    /* int n, int3, int1, into */
	HWT_INSN_VMCALL,    /* vmcall, vmmcall, vmlaunch, vmresume */
	HWT_INSN_PTWRITE,   /* ptwrite */
	HWT_INSN_NCLASSES
};

/* Extra facts (hwt_x86_insn.flags). */
enum hwt_insn_flag {
	HWT_INSN_F_MOV_CR3 = 1 << 0, /* mov to cr3 */
	HWT_INSN_F_VMPTRLD = 1 << 1, /* vmptrld */
	HWT_INSN_F_VMENTRY = 1 << 2, /* vmlaunch, vmresume */
	HWT_INSN_F_IRET = 1 << 3,    /* iret/iretd/iretq */
	HWT_INSN_F_ERET = 1 << 4,    /* eretu, erets (FRED) */
	HWT_INSN_F_UIRET = 1 << 5,   /* uiret */
	HWT_INSN_F_DIRECT = 1 << 6,  /* target is valid (direct branch) */
};

struct hwt_x86_insn {
	uint64_t ip;
	uint64_t target; /* direct branch target (HWT_INSN_F_DIRECT) */
	uint8_t size;	 /* 1..15 */
	uint8_t iclass;	 /* enum hwt_insn_class */
	uint8_t mode;	 /* 16, 32 or 64 (enum hwt_pt_exec_mode) */
	uint8_t flags;	 /* enum hwt_insn_flag */
	uint8_t raw[15];
};

/* Decode the instruction at ip from bytes[0..avail) in the given mode
 * (16/32/64).  Returns 0, HWT_ERR_BAD_INSN for invalid bytes, or
 * HWT_ERR_NOMAP if avail ends before the instruction does (more bytes
 * might make it valid). */
int hwt_x86_decode(const uint8_t *bytes, size_t avail, uint64_t ip, int mode,
		   struct hwt_x86_insn *insn);

/* Class properties. */
static inline int hwt_insn_is_far(int c)
{
	return c >= HWT_INSN_FAR_CALL && c <= HWT_INSN_VMCALL;
}
static inline int hwt_insn_is_branch(int c)
{
	return c != HWT_INSN_OTHER && c != HWT_INSN_PTWRITE;
}
/* Produces a TIP (or needs one) when it executes with branch tracing on. */
static inline int hwt_insn_is_indirect(int c)
{
	return c == HWT_INSN_JMP_IND || c == HWT_INSN_CALL_IND || c == HWT_INSN_RET ||
	       hwt_insn_is_far(c);
}
/* Changes the CPL (so trace filtering by CPL may enable/disable). */
static inline int hwt_insn_changes_cpl(const struct hwt_x86_insn *i)
{
	return i->iclass == HWT_INSN_SYSCALL || i->iclass == HWT_INSN_SYSRET ||
	       i->iclass == HWT_INSN_INT || (i->flags & (HWT_INSN_F_IRET | HWT_INSN_F_ERET));
}

/* Short name of a class ("jcc", "call.ind", ...). */
const char *hwt_insn_class_name(int iclass);

#ifdef __cplusplus
}
#endif
#endif /* HWT_X86_H */
