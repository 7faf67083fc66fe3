/* emu/btsgen.h - the emulated Intel BTS record writer (one per thread).
 *
 * BTS (Intel SDM vol. 3, "Branch Trace Store") stores one 24-byte record
 * per taken branch: u64 from (the branch instruction), u64 to (its
 * target), u64 flags, of which only bit 4 is defined: the branch was
 * predicted (perf's BTS dump prints "pred"/"miss" from it).  The plugin
 * (plugin.c) reconstructs control flow exactly as for Intel PT and calls
 * btg_branch once per taken branch; records go into the same per-thread
 * byte buffer the PT generator uses (struct ptgen's buf/len/cap/total,
 * drained by stream.c), so streams, threads, forks and truth are shared.
 * User-only tracing (what perf's intel_bts//u sees): records whose from
 * or to lies in the kernel are filtered, so system calls, signal delivery
 * and sigreturn produce no record at all.
 *
 * "Predicted" comes from a small deterministic model of a branch
 * predictor (its own, no claim to match any CPU): direct jumps and calls
 * are always predicted; conditional branches by a table of 2-bit counters
 * indexed by the branch address; indirect jumps and calls by a table of
 * last targets; returns by a 16-entry return stack.
 *
 * Limits: as ptgen.h, the owner drains the buffer before it fills.
 */
#ifndef HWT_EMU_BTSGEN_H
#define HWT_EMU_BTSGEN_H

#include <stdint.h>
#include <string.h>

#include "ptgen.h"

#define BTG_RECORD 24
#define BTG_PREDICTED 0x10ull
#define BTG_BHT 4096 /* 2-bit counters */
#define BTG_BTB 1024 /* last indirect targets */
#define BTG_RSB 16

enum btg_kind { BTG_JCC, BTG_JMP, BTG_CALL, BTG_IJMP, BTG_ICALL, BTG_RET };

struct btsgen {
	uint8_t bht[BTG_BHT];
	uint64_t btb[BTG_BTB];
	uint64_t rsb[BTG_RSB];
	unsigned rsb_top, rsb_n;
};

static inline void btg_init(struct btsgen *b)
{
	memset(b, 0, sizeof(*b));
	memset(b->bht, 1, sizeof(b->bht)); /* weakly not taken */
}

static inline unsigned btg_hash(uint64_t ip, unsigned n)
{
	return (unsigned)((ip ^ (ip >> 12)) & (n - 1));
}

/* Predicted? next: the call's return address (calls), else unused. */
static inline int btg_predict(struct btsgen *b, int kind, uint64_t from, uint64_t to, uint64_t next)
{
	switch (kind) {
	case BTG_JCC: { /* only taken Jccs reach here: they train towards taken */
		uint8_t *c = &b->bht[btg_hash(from, BTG_BHT)];
		int pred = *c >= 2;
		if (*c < 3)
			(*c)++;
		return pred;
	}
	case BTG_CALL:
	case BTG_ICALL: {
		b->rsb_top = (b->rsb_top + 1) % BTG_RSB;
		b->rsb[b->rsb_top] = next;
		if (b->rsb_n < BTG_RSB)
			b->rsb_n++;
		if (kind == BTG_CALL)
			return 1;
	} /* fall through: an indirect call predicts like an indirect jump */
	/* FALLTHROUGH */
	case BTG_IJMP: {
		uint64_t *e = &b->btb[btg_hash(from, BTG_BTB)];
		int pred = *e == to;
		*e = to;
		return pred;
	}
	case BTG_RET: {
		int pred = 0;
		if (b->rsb_n) {
			pred = b->rsb[b->rsb_top] == to;
			b->rsb_top = (b->rsb_top + BTG_RSB - 1) % BTG_RSB;
			b->rsb_n--;
		}
		return pred;
	}
	default:
		return 1;
	}
}

/* A conditional branch fell through: train its counter towards not taken. */
static inline void btg_not_taken(struct btsgen *b, uint64_t from)
{
	uint8_t *c = &b->bht[btg_hash(from, BTG_BHT)];
	if (*c)
		(*c)--;
}

static inline void btg_put(struct ptgen *g, uint64_t from, uint64_t to, uint64_t flags)
{
	if (g->cap - g->len < BTG_RECORD)
		return; /* owner failed to drain: drop (never happens in practice) */
	uint64_t r[3] = {from, to, flags};
	memcpy(g->buf + g->len, r, sizeof(r));
	g->len += BTG_RECORD;
}

/* One taken branch (user mode to user mode). */
static inline void btg_branch(struct ptgen *g, struct btsgen *b, int kind, uint64_t from,
			      uint64_t to, uint64_t next)
{
	int pred = btg_predict(b, kind, from, to, next);
	btg_put(g, from, to, pred ? BTG_PREDICTED : 0);
}

/* The record that ends every piece handed to the AUX ring: all zero.
 * perf 6.1 (intel-bts.c) never turns the last record of an AUXTRACE
 * buffer into a sample and skips records with from == to == 0; each AUX
 * piece (and so each AUXTRACE buffer, made of whole pieces) ends with
 * this record, so every real branch is sampled.  hwt's decoder skips it
 * the same way. */
static inline void btg_end_piece(struct ptgen *g)
{
	btg_put(g, 0, 0, 0);
}

#endif /* HWT_EMU_BTSGEN_H */
