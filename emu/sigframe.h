/* emu/sigframe.h - where exactly a signal interrupted the guest.
 *
 * QEMU (user mode) delivers an asynchronous signal between two translated
 * blocks: the block after a conditional or indirect branch never starts,
 * the handler's block starts instead, so the blocks alone do not tell
 * whether the branch was taken nor where it went.  The signal frame QEMU
 * just wrote on the guest stack does: its ucontext holds the interrupted
 * RIP.  The plugin API of qemu 7.2 has no register access, so sigframe.c
 * finds the guest registers in QEMU's CPU state (the exported thread-local
 * `current_cpu`), at an offset calibrated once at a system call, where the
 * registers hold the call's number and arguments.
 *
 * Cost on the hot path: one bit test per block whose start may be a
 * handler (emu_sig_maybe).  Limits: without calibration (an unknown QEMU
 * layout) the plugin falls back to the block-based guess.
 */
#ifndef HWT_EMU_SIGFRAME_H
#define HWT_EMU_SIGFRAME_H

#include <stdint.h>

struct emu_sig {
	uint64_t bits[64];     /* hashed handler entry addresses (4096 bits) */
	uint64_t handler[65];  /* per signal: handler entry, 0 for none */
	uint64_t restorer[65]; /* per signal: sa_restorer */
	long env_off;	       /* offset of the guest registers from current_cpu */
	int calib;	       /* 0 not yet, 1 found, -1 gave up */
	int tries;
};

extern struct emu_sig emu_sig;

static inline unsigned emu_sig_hash(uint64_t ip)
{
	return (unsigned)((ip ^ (ip >> 12)) & 4095);
}

/* Could an ip of hash h be the entry of a signal handler? (no false
 * negatives) */
static inline int emu_sig_maybe_h(unsigned h)
{
	return (int)((emu_sig.bits[h >> 6] >> (h & 63)) & 1);
}

static inline int emu_sig_maybe(uint64_t ip)
{
	return emu_sig_maybe_h(emu_sig_hash(ip));
}

/* rt_sigaction(sig, act) succeeded or is about to: act is the guest's
 * kernel struct sigaction (host pointer), NULL for none. */
void emu_sig_action(int sig, const uint64_t *act);
/* At a system call: calibrate the register offset (cheap once done). */
void emu_sig_syscall(int64_t num, const uint64_t args[6]);
/* The block at `to` starts: if a signal frame for a handler at `to` was
 * just set up on this thread, store the interrupted RIP in *at, return 1. */
int emu_sig_frame(uint64_t to, uint64_t *at);

#endif /* HWT_EMU_SIGFRAME_H */
