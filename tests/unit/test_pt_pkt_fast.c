/* Unit tests: the packet decoder's fast paths against the checked parser.
 *
 * Oracle: hwt_pt_pkt_parse_ctx(), the checked one-packet parser (a pure
 * function that reads only the bytes it is given), walked packet by
 * packet with the block context.  The decoder has two unchecked paths
 * that must agree with it byte for byte: the chained batch loop of
 * hwt_pt_pkt_next_batch() and the table-driven fast_one() behind
 * hwt_pt_pkt_next(), both used only while 16 bytes remain.  Table-driven
 * cases: every first byte (and, for the 02 and 99 opcodes, every second
 * byte) with several payloads, placed after prefixes of different packet
 * sizes and at every distance from the buffer end (so that it is decoded
 * by the fast path, by the checked path near the end, or truncated);
 * positions, sizes, errors and all 24 bytes of each packet must match.
 * PAD runs, which the batch loop writes in bulk, and the word-at-a-time
 * PSB search (sync forward/backward, one part or a ring) have their own
 * cases.  The buffers are exact-size allocations, so ASan catches a read past
 * the end.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_packet.h"
#include "pt/packet_int.h"
#include "t.h"

struct ev {
	uint64_t off;
	int r;
	struct hwt_pt_packet p;
};

/* The reference: the checked parser, packet after packet. */
static size_t walk_ref(const uint8_t *b, size_t len, struct ev *ev, size_t max)
{
	size_t n = 0, pos = 0;
	int ctx = HWT_PKT_CTX_NONE;
	while (n < max) {
		memset(&ev[n], 0, sizeof(ev[n]));
		ev[n].off = pos;
		ev[n].r = hwt_pt_pkt_parse_ctx(b + pos, len - pos, ctx, &ev[n].p);
		if (ev[n].r < 0) {
			memset(&ev[n].p, 0, sizeof(ev[n].p));
			return n + 1;
		}
		ctx = hwt_pt_pkt_ctx_after(ctx, &ev[n].p);
		pos += (size_t)ev[n].r;
		n++;
	}
	return n;
}

/* The decoder from offset 0: batch 0 = hwt_pt_pkt_next, else batches of
 * that many; stops at the first error or the end. */
/* The batch loop's 64-byte chunk scan on (where the CPU has it) or off. */
static int use_simd;

static size_t walk_dec(const uint8_t *b, size_t len, int batch, struct ev *ev, size_t max)
{
	struct hwt_pt_buf buf = {b, b + len, NULL, NULL};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	struct hwt_pt_packet pk[256];
	size_t n = 0;
	if (!dec || hwt_pt_pkt_sync_set(dec, 0) < 0)
		return 0;
	pkt_set_simd(dec, use_simd);
	while (n < max) {
		uint64_t off;
		int r;
		hwt_pt_pkt_offset(dec, &off);
		memset(pk, 0, sizeof(pk));
		r = batch ? hwt_pt_pkt_next_batch(dec, pk, batch) : hwt_pt_pkt_next(dec, pk);
		if (batch && r > 0) {
			for (int i = 0; i < r && n < max; i++) {
				ev[n].off = off, ev[n].r = pk[i].size, ev[n].p = pk[i];
				off += pk[i].size;
				n++;
			}
			continue;
		}
		ev[n].off = off, ev[n].r = r, ev[n].p = pk[0];
		if (r < 0)
			memset(&ev[n].p, 0, sizeof(ev[n].p));
		n++;
		if (r < 0)
			break;
	}
	hwt_pt_pkt_free(dec);
	return n;
}

static int failures;

static void compare_n(const uint8_t *b, size_t len, const char *what, unsigned probe, size_t max)
{
	static struct ev ref[8192], got[8192];
	static const int batches[] = {0, 256, 2, 256, 7};
	size_t nr = walk_ref(b, len, ref, max);
	for (int k = 0; k < 5; k++) {
		use_simd = k < 3 ? 0 : 1; /* batch 0 (next) has no chunk scan */
		size_t ng = walk_dec(b, len, batches[k], got, max);
		int ok = ng == nr;
		size_t i = 0;
		for (; ok && i < nr; i++)
			ok = ref[i].off == got[i].off && ref[i].r == got[i].r &&
			     !memcmp(&ref[i].p, &got[i].p, sizeof(ref[i].p));
		if (!ok && failures++ < 5) {
			size_t j = i ? i - 1 : 0;
			CHECKF(0,
			       "%s, probe %04x, len %zu, batch %d: event %zu: ref %s/%d at %" PRIu64
			       ", got %s/%d at %" PRIu64 " (%zu vs %zu events)",
			       what, probe, len, batches[k], j, hwt_pt_pkt_name(ref[j].p.type),
			       ref[j].r, ref[j].off, hwt_pt_pkt_name(got[j].p.type), got[j].r,
			       got[j].off, nr, ng);
		}
	}
}

static void compare(const uint8_t *b, size_t len, const char *what, unsigned probe)
{
	compare_n(b, len, what, probe, 64);
}

/* Prefixes of fast packets of different sizes: the probe is reached
 * through the chained loop after 1-, 2-, 7- and 8-byte packets. */
static const struct {
	uint8_t n, b[12];
} prefixes[] = {
    {0, {0}},
    {1, {0x04}},					    /* TNT-8 */
    {3, {0x59, 0x12, 0x03}},				    /* MTC, CYC */
    {9, {0x19, 1, 2, 3, 4, 5, 6, 7, 0x00}},		    /* TSC, PAD */
    {9, {0x6d, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x0a}},  /* TIP (6 bytes), TNT */
    {10, {0x02, 0xa3, 0x05, 0, 0, 0, 0, 0x01, 0x02, 0x23}}, /* TNT-64, PSBEND */
};

static void probe_all_positions(const uint8_t *pk, size_t m, unsigned probe, const char *what)
{
	/* after the probe: more packets, fast and not (TNT, PSBEND, MODE, CBR) */
	static const uint8_t suffix[] = {0x06, 0x02, 0x23, 0x99, 0x01, 0x02, 0x03,
					 0x20, 0x00, 0x0c, 0x07, 0x08, 0x04, 0x04,
					 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04};
	for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
		size_t o = prefixes[k].n;
		/* every distance from the end: truncated, checked, fast */
		for (size_t len = o; len <= o + m + sizeof(suffix); len++) {
			uint8_t *b = malloc(len ? len : 1);
			if (!b)
				return;
			for (size_t i = 0; i < len; i++)
				b[i] = i < o	   ? prefixes[k].b[i]
				       : i < o + m ? pk[i - o]
						   : suffix[i - o - m];
			compare(b, len, what, probe);
			free(b);
		}
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Payload bytes after the opcode: zeros, ones, random. */
static void fill(uint8_t *pk, size_t from, int kind, uint64_t *s)
{
	for (size_t i = from; i < 16; i++)
		pk[i] = kind == 0 ? 0 : kind == 1 ? 0xff : (uint8_t)rnd(s);
}

static void t_one_byte_opcodes(void)
{
	uint64_t s = 99;
	failures = 0;
	for (unsigned b = 0; b < 256; b++) {
		if (b == 0x02 || b == 0x99)
			continue;
		for (int kind = 0; kind < 4; kind++) {
			uint8_t pk[16];
			pk[0] = (uint8_t)b;
			fill(pk, 1, kind < 3 ? kind : 2, &s);
			if (kind == 3)
				pk[1] &= 0xfe; /* a CYC that ends at its second byte */
			struct hwt_pt_packet p;
			int r = hwt_pt_pkt_parse(pk, 16, &p);
			probe_all_positions(pk, r > 0 ? (size_t)r : 2, b, "one-byte opcode");
		}
	}
}

static void t_two_byte_opcodes(void)
{
	uint64_t s = 7;
	failures = 0;
	for (unsigned b = 0; b < 2; b++) {
		for (unsigned x = 0; x < 256; x++) {
			for (int kind = 0; kind < 3; kind++) {
				uint8_t pk[16];
				pk[0] = b ? 0x99 : 0x02;
				pk[1] = (uint8_t)x;
				fill(pk, 2, kind, &s);
				struct hwt_pt_packet p;
				int r = hwt_pt_pkt_parse(pk, 16, &p);
				probe_all_positions(pk, r > 0 ? (size_t)r : 3,
						    (unsigned)pk[0] << 8 | x, "two-byte opcode");
			}
		}
	}
}

/* Packets whose fields the fast path computes: special payloads. */
static void t_special_payloads(void)
{
	static const uint8_t cases[][16] = {
	    {0x02, 0xa3, 0x01, 0, 0, 0, 0, 0},			    /* TNT-64, 0 bits: bad */
	    {0x02, 0xa3, 0x00, 0, 0, 0, 0, 0},			    /* TNT-64, no stop bit: bad */
	    {0x02, 0xa3, 0x02, 0, 0, 0, 0, 0},			    /* TNT-64, 1 bit */
	    {0x02, 0xa3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},	    /* TNT-64, 47 bits */
	    {0x02, 0xa3, 0, 0, 0, 0, 0, 0x80},			    /* TNT-64, stop bit 47 */
	    {0x02, 0x43, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, /* PIP */
	    {0x02, 0xc8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},	    /* VMCS */
	    {0x02, 0x73, 1, 2, 0, 0xff, 1, 0xee},		    /* TMA */
	    {0x02, 0x73, 1, 2, 1, 0xff, 1, 0xee},		    /* TMA, reserved */
	    {0x02, 0x73, 1, 2, 0, 0xff, 2, 0xee},		    /* TMA, fc too big */
	    {0x07, 0x03, 0x05, 0x00},				    /* CYC, 3 bytes */
	    {0x07, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00}, /* CYC */
	    {0xdd, 1, 2, 3, 4, 5, 6, 7, 8},					/* FUP, 8 bytes */
	    {0xc1, 1, 2, 3, 4, 5, 6, 7, 8}, /* TIP.PGD, 8 bytes */
	    {0xad, 1, 2, 3, 4, 5, 6, 7, 8}, /* TIP, IPBytes 5 */
	    {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	     0x02, 0x82}, /* PSB */
	    {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	     0x02, 0x83},						  /* broken PSB */
	    {0x02, 0x63, 0x80, 0x04, 1, 2, 3, 4, 0x02, 0x33},		  /* BBP, BIP, BEP */
	    {0x02, 0x63, 0x00, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 0x02, 0xb3}, /* BBP, BIP8, BEP */
	};
	failures = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t m = 16;
		while (m > 1 && !cases[i][m - 1])
			m--;
		probe_all_positions(cases[i], m, (unsigned)i, "special payload");
	}
}

/* Long random streams of the common packets (the chained loop's mix),
 * with rare other packets, against the reference over the whole stream. */
static void t_random_mix(void)
{
	uint64_t s = 12345;
	failures = 0;
	for (int iter = 0; iter < 200; iter++) {
		size_t len = 16 + rnd(&s) % 300, i = 0;
		uint8_t *b = malloc(len);
		while (i < len) {
			uint64_t x = rnd(&s);
			static const uint8_t common[] = {0x00, 0x04, 0x0a, 0x7e, 0x03, 0x07, 0x2d,
							 0x4d, 0x6d, 0x8d, 0xcd, 0x1d, 0x59, 0x19,
							 0x02, 0x99, 0x11, 0x31, 0x01, 0xa1};
			b[i++] = x % 7 ? common[(x >> 8) % sizeof(common)] : (uint8_t)(x >> 16);
			for (int j = 0; j < (int)((x >> 24) % 9) && i < len; j++)
				b[i++] = (uint8_t)(x >> (32 + j * 3));
		}
		compare(b, len, "random mix", (unsigned)iter);
		free(b);
	}
}

/* Append one packet of a varied stream to b[*i, len) (cut at len): mostly
 * the fast packets, every 02 and 99 second byte, CYCs of 1-4 bytes,
 * IPBytes 5 and 7 (bad), PSB, TMA, BBP with BIPs, PAD runs, TNT-64 with
 * no payload (bad) and the odd junk byte (the bad ones only if bad). */
static void put_packet(uint8_t *b, size_t *i, size_t len, uint64_t *s, int bad)
{
	uint8_t p[80];
	size_t n = 0;
	uint64_t x = rnd(s), r = x % 1000;
	static const uint8_t ext[] = {0x23, 0xf3, 0x83, 0xa3, 0x43, 0x03, 0xc8, 0x62, 0xe2,
				      0x33, 0xb3, 0x73, 0x82, 0xc3, 0x12, 0x32, 0x22, 0xa2,
				      0xc2, 0x13, 0x53, 0x63, 0xa3, 0xa3, 0x03, 0x23};
	if (r < 450) { /* TNT-8 */
		p[n++] = (uint8_t)(4 + (x >> 12) % 252) & 0xfe;
	} else if (r < 600) { /* IP packets, IPBytes 0-7 (5 and 7 rarely) */
		static const uint8_t lo[] = {0x01, 0x0d, 0x11, 0x1d};
		unsigned ipc = (x >> 12) % 8;
		if ((ipc == 5 || ipc == 7) && (!bad || (x >> 20) % 8))
			ipc = 1;
		p[n++] = (uint8_t)(lo[(x >> 16) % 4] | ipc << 5);
		for (int k = 0; k < 8; k++)
			p[n++] = (uint8_t)(x >> (24 + 4 * k));
		n = 1 + (ipc == 0 ? 0 : ipc == 1 ? 2 : ipc == 2 ? 4 : ipc <= 4 ? 6 : 8);
	} else if (r < 720) { /* CYC of 1-4 bytes */
		unsigned more = (x >> 12) % 4;
		p[n++] = (uint8_t)((x >> 16) & 0xf8) | (more ? 7 : 3);
		for (unsigned k = 1; k <= more; k++)
			p[n++] = (uint8_t)(((x >> (24 + 8 * k)) & 0xfe) | (k < more));
	} else if (r < 780) { /* MTC, TSC */
		p[n++] = (x >> 12) & 1 ? 0x59 : 0x19;
		for (int k = 0; k < 7; k++)
			p[n++] = (uint8_t)(x >> (16 + 6 * k));
		n = p[0] == 0x59 ? 2 : 8;
	} else if (r < 820) { /* MODE, leaves 0-7 (2-7 rarely) */
		uint8_t m = (uint8_t)(x >> 12);
		p[n++] = 0x99;
		p[n++] = !bad || (x >> 20) % 16 ? m & 0x3f : m;
	} else if (r < 930) { /* 02 xx */
		uint8_t y = !bad || (x >> 12) % 16 ? ext[(x >> 16) % (bad ? sizeof(ext) : 11)]
						   : (uint8_t)(x >> 24);
		p[n++] = 0x02;
		p[n++] = y;
		for (int k = 0; k < 14; k++)
			p[n++] = (uint8_t)rnd(s);
		if (y == 0xa3 && bad && (x >> 28) % 8 == 0) /* TNT-64: no payload (bad) */
			memset(p + 2, 0, 6);
		if (y == 0x82) /* PSB */
			for (int k = 2; k < 16; k++)
				p[k] = k & 1 ? 0x82 : 0x02;
		if (y == 0x73 && (x >> 28) % 8) { /* TMA: valid */
			p[4] = 0;
			p[6] &= 1;
		}
		if (y == 0x63) { /* BBP and BIPs, sometimes BEP */
			p[2] = (uint8_t)(x >> 32) & 0x9f;
			n = 3;
			for (unsigned k = (x >> 40) % 4; k; k--) {
				p[n++] = (uint8_t)(((x >> 44) & 0xf8) | 4);
				for (int j = 0; j < (p[2] & 0x80 ? 4 : 8); j++)
					p[n++] = (uint8_t)rnd(s);
			}
			if ((x >> 50) & 1)
				p[n++] = 0x02, p[n++] = 0x33;
		} else {
			n = 16;
			struct hwt_pt_packet q;
			int sz = hwt_pt_pkt_parse(p, n, &q);
			n = sz > 0 ? (size_t)sz : 2;
		}
	} else if (r < 990 || !bad) { /* a PAD run */
		for (unsigned k = 1 + (x >> 12) % ((x >> 20) % 4 ? 4 : 70); k; k--)
			p[n++] = 0;
	} else { /* junk */
		p[n++] = (uint8_t)(x >> 12);
	}
	for (size_t k = 0; k < n && *i < len; k++)
		b[(*i)++] = p[k];
}

/* Long varied streams, decoded whole: the batch loop's 64-byte chunk
 * scan (and the chained loop) against the checked parser. */
static void t_long_streams(void)
{
	uint64_t s = 777;
	failures = 0;
	for (int iter = 0; iter < 120; iter++) {
		size_t len = 100 + rnd(&s) % 3000, i = 0;
		uint8_t *b = malloc(len);
		while (i < len)
			put_packet(b, &i, len, &s, iter & 1);
		compare_n(b, len, "long stream", (unsigned)iter, 8192);
		free(b);
	}
}

/* Streams of small packets (PAD, TNT-8, one-byte CYC, MTC: the chunk
 * scan writes whole chunks of them 64 bytes at a time), with now and then
 * another packet (a chunk that the per-packet loop writes), and MTCs
 * whose payload is 59 too (runs of 59 bytes: which are opcodes, which
 * payloads), decoded whole in batches of many sizes (a chunk cut by the
 * end of the caller's array: the last store is partial), into arrays with
 * a canary just past the batch's end (ASan does not see the scan's masked
 * stores), against the checked parser. */
static void t_small_streams(void)
{
	static const uint8_t other[] = {0x0d, 0x11, 0x22, 0x02, 0x23, 0x07, 0x04, 0x59, 0x7c};
	static const int sizes[] = {1, 2, 5, 13, 21, 22, 23, 31, 32, 33, 57, 63, 64, 65, 200, 4096};
	static struct ev ref[8192];
	uint64_t s = 4242;
	failures = 0;
	for (int iter = 0; iter < 60; iter++) {
		size_t len = 200 + rnd(&s) % 5000, i = 0;
		uint8_t *b = malloc(len);
		while (i < len) {
			uint64_t x = rnd(&s), r = x % 1000;
			uint8_t p[9];
			size_t n = 0;
			if (iter % 3 && r == 999) { /* TIP, PSBEND, a 2-byte CYC, TNT, MTC */
				n = sizeof(other);
				memcpy(p, other, n);
			} else if (r < 700)
				p[n++] = (uint8_t)(4 + (x >> 12) % 252) & 0xfe;
			else if (r < 850)
				p[n++] = 0x59, p[n++] = (x >> 8) % 3 ? (uint8_t)(x >> 20) : 0x59;
			else if (r < 950)
				p[n++] = (uint8_t)((x >> 16) & 0xf8) | 3;
			else
				p[n++] = 0;
			for (size_t k = 0; k < n && i < len; k++)
				b[i++] = p[k];
		}
		size_t nr = walk_ref(b, len, ref, 8192);
		for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
			int bs = sizes[z];
			struct hwt_pt_buf buf = {b, b + len, NULL, NULL};
			struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
			struct hwt_pt_packet *pk = malloc((size_t)(bs + 1) * sizeof(*pk)), canary;
			memset(&canary, 0xa5, sizeof(canary));
			size_t n = 0, bad = 0;
			uint64_t off = 0;
			int r = 0;
			CHECK(dec && pk && hwt_pt_pkt_sync_set(dec, 0) == 0);
			pkt_set_simd(dec, 1);
			while (n < nr) {
				/* (the checked path, near the end, writes only the
				 * fields of a packet's type: the reference's others
				 * are zero) */
				memset(pk, 0, (size_t)bs * sizeof(*pk));
				pk[bs] = canary;
				r = hwt_pt_pkt_next_batch(dec, pk, bs);
				if (r <= 0)
					break;
				if (memcmp(&pk[bs], &canary, sizeof(canary)))
					bad++; /* a store past the batch */
				for (int k = 0; k < r; k++, n++) {
					if (n >= nr || ref[n].off != off ||
					    ref[n].r != pk[k].size ||
					    memcmp(&ref[n].p, &pk[k], sizeof(pk[k])))
						bad++;
					off += pk[k].size;
				}
			}
			if ((bad || n + 1 != nr) && failures++ < 5)
				CHECKF(0,
				       "small stream %d, batch %d: %zu of %zu packets differ, %zu "
				       "decoded",
				       iter, bs, bad, nr, n);
			free(pk);
			hwt_pt_pkt_free(dec);
		}
		free(b);
	}
}

/* PAD runs (decoded in bulk by the batch loop) of every length up to 70,
 * after a prefix, followed by other packets or the buffer end at every
 * distance; and longer runs (chunks of PADs in the chunk scan). */
static void t_pad_runs(void)
{
	static const uint8_t tail[] = {0x04, 0x2d, 0x11, 0x22, 0x00, 0x59, 0x00, 0x03};
	failures = 0;
	for (size_t run = 1; run <= 70; run++) {
		for (size_t o = 0; o < 3; o++) {
			for (size_t extra = 0; extra <= 20; extra++) {
				size_t len = o + run + extra;
				uint8_t *b = malloc(len);
				for (size_t i = 0; i < len; i++)
					b[i] = i < o	     ? 0x06
					       : i < o + run ? 0x00
							     : tail[(i - o - run) % sizeof(tail)];
				compare(b, len, "pad run", (unsigned)run);
				free(b);
			}
		}
	}
	/* long runs: whole 64-byte chunks of PADs, each packet compared */
	for (size_t run = 60; run <= 300; run += 11) {
		for (size_t o = 0; o < 4; o++) {
			for (size_t extra = 0; extra <= 90; extra += 30) {
				size_t len = o + run + extra;
				uint8_t *b = malloc(len);
				for (size_t i = 0; i < len; i++)
					b[i] = i < o	     ? 0x06
					       : i < o + run ? 0x00
							     : tail[(i - o - run) % sizeof(tail)];
				compare_n(b, len, "long pad run", (unsigned)run, 8192);
				free(b);
			}
		}
	}
}

/* The word-at-a-time PSB search: one PSB at every offset of buffers of
 * several lengths (junk around it that holds no 02 or 82 byte), as one
 * part and as a ring split at every point; sync_forward and
 * sync_backward must land on it, and a second sync must find nothing.
 * Oracle: the PSB's position, known by construction. */
static void t_psb_every_offset(void)
{
	static const uint8_t psb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
	uint64_t s = 5;
	failures = 0;
	for (size_t len = 16; len <= 80; len += len < 40 ? 1 : 13) {
		for (size_t o = 0; o + 16 <= len; o++) {
			uint8_t *b = malloc(len);
			for (size_t i = 0; i < len; i++) {
				uint8_t x = (uint8_t)rnd(&s);
				b[i] = x == 0x02 || x == 0x82 ? 0x04 : x;
			}
			memcpy(b + o, psb, 16);
			for (size_t split = 0; split <= len; split++) {
				uint8_t *p1 = malloc(split ? split : 1),
					*p2 = malloc(len - split + 1);
				memcpy(p1, b, split);
				memcpy(p2, b + split, len - split);
				struct hwt_pt_buf buf = {p1, p1 + split, p2, p2 + (len - split)};
				for (int back = 0; back < 2; back++) {
					struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
					uint64_t off = ~0ull;
					int r1 = back ? hwt_pt_pkt_sync_backward(dec)
						      : hwt_pt_pkt_sync_forward(dec);
					hwt_pt_pkt_sync_offset(dec, &off);
					int r2 = back ? hwt_pt_pkt_sync_backward(dec)
						      : hwt_pt_pkt_sync_forward(dec);
					if ((r1 != 0 || off != o || r2 != HWT_ERR_EOS) &&
					    failures++ < 5)
						CHECKF(0,
						       "len %zu, PSB at %zu, split %zu, %s: %d at "
						       "%" PRIu64 ", then %d",
						       len, o, split, back ? "backward" : "forward",
						       r1, off, r2);
					hwt_pt_pkt_free(dec);
				}
				free(p1);
				free(p2);
			}
			free(b);
		}
	}
}

int main(void)
{
	RUN(t_one_byte_opcodes);
	RUN(t_two_byte_opcodes);
	RUN(t_special_payloads);
	RUN(t_random_mix);
	RUN(t_pad_runs);
	RUN(t_long_streams);
	RUN(t_small_streams);
	RUN(t_psb_every_offset);
	return t_done();
}
