/* hwt/a64.h - A64 (AArch64) instruction classification and disassembly
 * for trace decoders: the Arm twin of hwt/x86.h.
 *
 * Layer: lib/a64.  Capstone's A64 decoder underneath (Debian
 * libcapstone).  hwt_a64_decode says what a branch-trace decoder needs of
 * one instruction: its length (always 4), its class (the classes of
 * hwt/x86.h: jcc for B.cond/CBZ/CBNZ/TBZ/TBNZ, jmp for B, call for BL,
 * call.ind for BLR, jmp.ind for BR, ret for RET, syscall for SVC, int for
 * HVC/SMC/BRK/HLT, far.ret for ERET) and the target of a direct branch.
 * hwt_a64_disasm writes the instruction as text ("bl 0x4005d0").
 * Pure functions: no state kept between calls, no global state.
 * Limits: Capstone 4 does not know the Armv8.3 pointer-authenticated
 * branches (BRAA, RETAA, ...): HWT_ERR_BAD_INSN for them.
 */
#ifndef HWT_A64_H
#define HWT_A64_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The execution mode of A64 instructions in struct hwt_dec_insn.mode
 * (x86 uses 16, 32, 64). */
#define HWT_A64_MODE 0xa6

struct hwt_a64_insn {
	uint64_t ip;
	uint64_t target; /* direct branch target (flags & HWT_INSN_F_DIRECT) */
	uint8_t size;	 /* 4 */
	uint8_t iclass;	 /* enum hwt_insn_class (hwt/x86.h) */
	uint8_t flags;	 /* HWT_INSN_F_DIRECT (hwt/x86.h) */
	uint8_t raw[4];
};

/* Decode the instruction at ip from bytes[0..avail).  Returns 0,
 * HWT_ERR_NOMAP if avail < 4, HWT_ERR_BAD_INSN for bytes Capstone does
 * not decode, HWT_ERR_NOMEM if Capstone cannot start. */
int hwt_a64_decode(const uint8_t *bytes, size_t avail, uint64_t ip, struct hwt_a64_insn *insn);

/* The instruction as text ("mnemonic operands") into buf (n bytes, always
 * terminated when n > 0): 0, or the errors of hwt_a64_decode (buf then
 * holds "(bad)"). */
int hwt_a64_disasm(const uint8_t *bytes, size_t avail, uint64_t ip, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* HWT_A64_H */
