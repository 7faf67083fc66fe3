/* emu/aarch64/etmgen.h - ETMv4 instruction trace packets and the CoreSight
 * frame formatter, as the emulated ETM unit writes them.
 *
 * One struct etmgen per traced thread, owned by the plugin.  Packets are
 * appended to a caller-owned raw buffer (no allocation); at a flush the
 * raw bytes go out as they are (ETE/TRBE style, padded to 8 with
 * no-payload Context packets, which decoders treat as "context
 * unchanged") or in 16-byte CoreSight frames carrying the thread's trace
 * ID (the last frame filled with trace ID 0, the null source).
 *
 * Packet rules (Arm IHI 0064, ETMv4 architecture):
 *  - A-sync (11 x 0x00, 0x80), Trace Info (0x01, PLCTL, INFO), Trace On
 *    (0x04), Address with Context 64-bit IS0 (0x85, 8 address bytes, info
 *    byte EL0 | SF | NS), Exception (0x06, type and E0) followed by its
 *    preferred return address, Timestamp (0x02, continuation bytes).
 *  - One atom per P0 instruction (branch): E (taken / executed) or N,
 *    bit 0 = oldest; packed into format 6 (3..23 E then E or N), format 3
 *    (3 atoms), 2 or 1.  Pending atoms go out before any other packet.
 *  - Target addresses after indirect branches: exact-match is not used;
 *    short (7 or 15 bits), long 32-bit or long 64-bit against the most
 *    recent address, which Trace Info invalidates.
 */
#ifndef HWT_EMU_ETMGEN_H
#define HWT_EMU_ETMGEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct etmgen {
	uint8_t *raw;
	size_t len, cap;
	uint32_t atoms;	 /* pending atoms, bit i = atom i, 1 = E */
	unsigned natoms; /* count */
	unsigned nn;	 /* N atoms among them */
	uint64_t last_addr;
	int addr_valid;
	int ts;		     /* timestamps on */
	uint64_t since_sync; /* bytes since the last A-sync */
};

static inline void etg_byte(struct etmgen *g, uint8_t b)
{
	if (g->len < g->cap)
		g->raw[g->len++] = b;
	g->since_sync++;
}

static inline void etg_atom_pkt(struct etmgen *g, uint32_t bits, unsigned n)
{
	if (n == 1)
		etg_byte(g, (uint8_t)(0xf6 | (bits & 1)));
	else if (n == 2)
		etg_byte(g, (uint8_t)(0xd8 | (bits & 3)));
	else
		etg_byte(g, (uint8_t)(0xf8 | (bits & 7)));
}

/* Format 6: e E atoms (3..23) then one E (last_e) or N. */
static inline void etg_f6(struct etmgen *g, unsigned e, int last_e)
{
	etg_byte(g, (uint8_t)(0xc0 | (e - 3) | (last_e ? 0 : 0x20)));
}

static inline void etg_flush_atoms(struct etmgen *g)
{
	unsigned n = g->natoms;
	if (!n)
		return;
	if (!g->nn && n >= 4)
		etg_f6(g, n - 1, 1);
	else
		etg_atom_pkt(g, g->atoms, n);
	g->atoms = 0;
	g->natoms = 0;
	g->nn = 0;
}

/* Invariant: pending atoms are all E (at most 23), or hold an N and
 * number at most 2. */
static inline void etg_atom(struct etmgen *g, int e)
{
	if (!g->nn) {
		if (e) {
			g->atoms |= 1u << g->natoms;
			if (++g->natoms == 24) {
				etg_f6(g, 23, 1);
				g->atoms = g->natoms = 0;
			}
			return;
		}
		if (g->natoms >= 3) {
			etg_f6(g, g->natoms, 0);
			g->atoms = g->natoms = 0;
			return;
		}
	}
	if (e)
		g->atoms |= 1u << g->natoms;
	else
		g->nn++;
	if (++g->natoms == 3) {
		etg_atom_pkt(g, g->atoms, 3);
		g->atoms = g->natoms = g->nn = 0;
	}
}

static inline void etg_addr(struct etmgen *g, uint64_t a)
{
	etg_flush_atoms(g);
	uint64_t l = g->last_addr;
	if (g->addr_valid && (a >> 9) == (l >> 9)) {
		etg_byte(g, 0x95);
		etg_byte(g, (uint8_t)((a >> 2) & 0x7f));
	} else if (g->addr_valid && (a >> 17) == (l >> 17)) {
		etg_byte(g, 0x95);
		etg_byte(g, (uint8_t)(0x80 | ((a >> 2) & 0x7f)));
		etg_byte(g, (uint8_t)(a >> 9));
	} else if (g->addr_valid && (a >> 32) == (l >> 32)) {
		etg_byte(g, 0x9a);
		etg_byte(g, (uint8_t)((a >> 2) & 0x7f));
		etg_byte(g, (uint8_t)((a >> 9) & 0x7f));
		etg_byte(g, (uint8_t)(a >> 16));
		etg_byte(g, (uint8_t)(a >> 24));
	} else {
		etg_byte(g, 0x9d);
		etg_byte(g, (uint8_t)((a >> 2) & 0x7f));
		etg_byte(g, (uint8_t)((a >> 9) & 0x7f));
		for (int i = 2; i < 8; i++)
			etg_byte(g, (uint8_t)(a >> (8 * i)));
	}
	g->last_addr = a;
	g->addr_valid = 1;
}

/* Address with Context, 64-bit, IS0; context: EL0, AArch64, non-secure,
 * no VMID / context ID. */
static inline void etg_addr_ctxt(struct etmgen *g, uint64_t a)
{
	etg_flush_atoms(g);
	etg_byte(g, 0x85);
	etg_byte(g, (uint8_t)((a >> 2) & 0x7f));
	etg_byte(g, (uint8_t)((a >> 9) & 0x7f));
	for (int i = 2; i < 8; i++)
		etg_byte(g, (uint8_t)(a >> (8 * i)));
	etg_byte(g, 0x30);
	g->last_addr = a;
	g->addr_valid = 1;
}

static inline void etg_timestamp(struct etmgen *g, uint64_t ts)
{
	etg_flush_atoms(g);
	etg_byte(g, 0x02);
	for (int i = 0; i < 8; i++) { /* 7 bits a byte, the 9th byte 8 bits */
		uint8_t b = (uint8_t)(ts & 0x7f);
		ts >>= 7;
		etg_byte(g, (uint8_t)(b | (ts ? 0x80 : 0)));
		if (!ts)
			return;
	}
	etg_byte(g, (uint8_t)ts);
}

/* A-sync + Trace Info (+ Timestamp): the decoder may start here. */
static inline void etg_sync(struct etmgen *g, uint64_t ts)
{
	etg_flush_atoms(g);
	for (int i = 0; i < 11; i++)
		etg_byte(g, 0x00);
	etg_byte(g, 0x80);
	etg_byte(g, 0x01); /* Trace Info */
	etg_byte(g, 0x01); /* PLCTL: INFO section present */
	etg_byte(g, 0x00); /* INFO: no cycle counting, no cond trace */
	g->addr_valid = 0;
	g->since_sync = 0;
	if (g->ts)
		etg_timestamp(g, ts);
}

static inline void etg_trace_on(struct etmgen *g)
{
	etg_flush_atoms(g);
	etg_byte(g, 0x04);
}

#define ETG_EXC_CALL 2 /* SVC */
#define ETG_EXC_IRQ 14

/* An exception; ret: the preferred return address (the next instruction
 * that has not executed). */
static inline void etg_exception(struct etmgen *g, unsigned type, uint64_t ret)
{
	etg_flush_atoms(g);
	etg_byte(g, 0x06);
	etg_byte(g, (uint8_t)(((type & 0x1f) << 1) | 1));
	etg_addr(g, ret);
}

/* The raw bytes in CoreSight 16-byte frames for trace ID id into out
 * (cap bytes); returns the bytes written (a multiple of 16). */
static inline size_t etg_frames(const uint8_t *raw, size_t n, unsigned id, uint8_t *out, size_t cap)
{
	size_t o = 0, i = 0;
	int first = 1;
	while ((i < n || first) && o + 16 <= cap) {
		uint8_t *f = out + o;
		uint8_t aux = 0;
		int pos = 0;
		memset(f, 0, 16);
		if (first) { /* ID change, effective for the next byte */
			f[0] = (uint8_t)((id << 1) | 1);
			pos = 1;
			first = 0;
		}
		for (; pos < 15 && i < n; pos++, i++) {
			uint8_t b = raw[i];
			if (pos & 1) {
				f[pos] = b;
			} else {
				f[pos] = b & 0xfe;
				aux |= (uint8_t)((b & 1) << (pos / 2));
			}
		}
		if (pos < 15) { /* pad with the null trace ID 0 */
			if (pos & 1) {
				/* the ID byte must sit at an even position: move
				 * the last data byte after it (aux 1: the byte
				 * after the ID still belongs to the old ID) */
				uint8_t last = f[pos - 1] | (uint8_t)((aux >> ((pos - 1) / 2)) & 1);
				aux &= (uint8_t) ~(1u << ((pos - 1) / 2));
				f[pos - 1] = 0x01;
				aux |= (uint8_t)(1u << ((pos - 1) / 2));
				f[pos] = last;
				pos++;
			} else {
				f[pos] = 0x01;
				pos++;
			}
			for (; pos < 15; pos++)
				f[pos] = 0;
		}
		f[15] = aux;
		o += 16;
		if (i >= n)
			break;
	}
	return o;
}

#endif /* HWT_EMU_ETMGEN_H */
