/* fuzz/fuzz_pt_pkt.c - libFuzzer target for the Intel PT packet layer.
 *
 * The input is a trace.  Checked invariants (a violation aborts):
 *   - parse at every offset: the size is within 1..16 and within the bytes
 *     available; re-encoding the packet and parsing that gives the same
 *     packet (reserved bits aside; a CYC may shrink to its minimal form);
 *   - the packet decoder (sync forward, next until the end, sync forward
 *     again after an error) makes progress, offsets only grow (a resync
 *     may go back at most 15 bytes, into a PSB eaten by a bad packet),
 *     sizes are 1..16, and it terminates within a bounded number of steps;
 *   - every packet and error the decoder gives (contiguous trace, no
 *     errata) is what the checked parser hwt_pt_pkt_parse_ctx gives at that
 *     offset in that block context (the decoder's unchecked fast paths
 *     against the checked one);
 *   - the same trace as a two-part ring, split at a point derived from the
 *     input, and bulk decoding (hwt_pt_pkt_next_batch, with the 64-byte
 *     chunk scan off and on where the CPU has it) give exactly the same
 *     packets, offsets and errors, with and without the packet-level
 *     errata (chosen by an input bit).
 * The two ring parts are separate exact-size allocations, so ASan reports
 * any read past a part.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_config.h"
#include "hwt/pt_packet.h"
#include "pt/packet_int.h"

#include "fuzz.h"

struct event {
	uint64_t off;
	int r;
	uint8_t enc[16];
	int nenc;
};

/* batch: 0 = hwt_pt_pkt_next, else hwt_pt_pkt_next_batch with that many. */
static int same_packet(const struct hwt_pt_packet *a, const struct hwt_pt_packet *b);

/* flat: the trace's bytes, to check each result against the checked
 * parser (NULL: no check). */
static void check_ref(const struct hwt_pt_buf *buf, uint64_t off, int r,
		      const struct hwt_pt_packet *p, int *ctx)
{
	struct hwt_pt_packet q;
	const uint8_t *flat = buf->begin;
	size_t size = (size_t)(buf->end - buf->begin);
	int rr = hwt_pt_pkt_parse_ctx(flat + off, size - off, *ctx, &q);
	ENSURE(rr == r);
	if (r > 0) {
		ENSURE(same_packet(p, &q));
		*ctx = hwt_pt_pkt_ctx_after(*ctx, &q);
	}
}

static size_t walk(const struct hwt_pt_buf *buf, struct event *ev, size_t max, int batch,
		   int errata, int simd)
{
	int ref = !errata && !buf->begin2, ctx = HWT_PKT_CTX_NONE;
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(buf);
	ENSURE(dec);
	pkt_set_simd(dec, simd);
	if (errata) {
		struct hwt_pt_errata er = {0};
		er.skd007 = er.skz84 = 1;
		hwt_pt_pkt_set_errata(dec, &er);
	}
	uint64_t total = hwt_pt_pkt_size(dec), last = 0, steps = 0;
	size_t n = 0;
	int r = hwt_pt_pkt_sync_forward(dec);
	while (r >= 0 && n < max) {
		ENSURE(++steps <= 2 * total + 4);
		uint64_t off, after;
		struct hwt_pt_packet p, pk[64];
		ENSURE(hwt_pt_pkt_offset(dec, &off) == 0);
		ENSURE(off + 15 >= last && off <= total);
		last = off;
		if (batch) {
			r = hwt_pt_pkt_next_batch(dec, pk, batch);
			ENSURE(r <= batch);
			for (int i = 0; i + 1 < r && n < max; i++) { /* all but the last */
				ENSURE(pk[i].size >= 1 && pk[i].size <= HWT_PT_PKT_MAX_SIZE);
				ev[n].off = off;
				ev[n].r = pk[i].size;
				ev[n].nenc = hwt_pt_pkt_encode(ev[n].enc, 16, &pk[i]);
				if (ref)
					check_ref(buf, off, pk[i].size, &pk[i], &ctx);
				off += pk[i].size;
				n++;
			}
			if (r > 0) {
				p = pk[r - 1];
				r = p.size;
			}
		} else {
			r = hwt_pt_pkt_next(dec, &p);
		}
		if (n >= max)
			break;
		if (ref)
			check_ref(buf, off, r, &p, &ctx);
		ev[n].off = off;
		ev[n].r = r;
		ev[n].nenc = 0;
		if (r > 0) {
			ENSURE(r <= HWT_PT_PKT_MAX_SIZE && p.size == r);
			ENSURE(hwt_pt_pkt_offset(dec, &after) == 0 && after > off &&
			       after <= total);
			ENSURE(after - off == (uint64_t)r ||
			       (errata && after - off == (uint64_t)r + 1));
			ev[n].nenc = hwt_pt_pkt_encode(ev[n].enc, 16, &p);
			ENSURE(ev[n].nenc > 0 || p.type == HWT_PKT_INVALID);
			last = after;
			n++;
			continue;
		}
		n++;
		if (r == HWT_ERR_EOS)
			break;
		ENSURE(r == HWT_ERR_BAD_OPC || r == HWT_ERR_BAD_PACKET);
		ENSURE(hwt_pt_pkt_offset(dec, &after) == 0 && after == off);
		r = hwt_pt_pkt_sync_forward(dec);
		ctx = HWT_PKT_CTX_NONE;
	}
	hwt_pt_pkt_free(dec);
	return n;
}

static int same_packet(const struct hwt_pt_packet *a, const struct hwt_pt_packet *b)
{
	uint8_t x[16], y[16];
	if (a->type != b->type || a->size != b->size)
		return 0;
	int nx = hwt_pt_pkt_encode(x, 16, a), ny = hwt_pt_pkt_encode(y, 16, b);
	return nx == ny && (nx < 0 || !memcmp(x, y, (size_t)nx));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* parse at every offset, in and out of a block context */
	for (size_t i = 0; i < size; i++) {
		for (int ctx = 0; ctx <= HWT_PKT_CTX_BIP8; ctx += 4) {
			struct hwt_pt_packet p, q;
			uint8_t enc[16];
			int r = hwt_pt_pkt_parse_ctx(data + i, size - i, ctx, &p);
			if (r < 0) {
				ENSURE(p.type == HWT_PKT_INVALID);
				continue;
			}
			ENSURE(r >= 1 && r <= HWT_PT_PKT_MAX_SIZE && (size_t)r <= size - i);
			ENSURE(p.type > HWT_PKT_INVALID && p.type < HWT_PKT_NTYPES && p.size == r);
			int n = hwt_pt_pkt_encode(enc, sizeof(enc), &p);
			if (p.type == HWT_PKT_CYC) { /* may carry redundant zero bytes */
				ENSURE(n > 0 && n <= r);
				ENSURE(hwt_pt_pkt_parse_ctx(enc, (size_t)n, ctx, &q) == n);
				ENSURE(q.type == HWT_PKT_CYC && q.u.cyc.value == p.u.cyc.value);
				continue;
			}
			ENSURE(n == r);
			ENSURE(hwt_pt_pkt_parse_ctx(enc, (size_t)n, ctx, &q) == n);
			ENSURE(same_packet(&p, &q));
		}
	}

	/* the decoder, contiguous and as a two-part ring */
	size_t max = size + 8;
	struct event *a = malloc(max * sizeof(*a)), *b = malloc(max * sizeof(*b));
	uint8_t *copy = malloc(size ? size : 1);
	size_t split = size ? ((size_t)data[0] * 257 + (size > 1 ? data[1] : 0)) % (size + 1) : 0;
	uint8_t *p1 = malloc(split ? split : 1), *p2 = malloc(size - split ? size - split : 1);
	ENSURE(a && b && copy && p1 && p2);
	memcpy(copy, data, size);
	memcpy(p1, data, split);
	memcpy(p2, data + split, size - split);
	struct hwt_pt_buf one = {copy, copy + size, NULL, NULL};
	struct hwt_pt_buf two = {p1, p1 + split, p2, p2 + (size - split)};
	int errata = size > 2 && (data[2] & 1);
	size_t na = walk(&one, a, max, 0, errata, 0);
	/* ring or not, batch size (0: next), the batch loop's chunk scan
	 * (where the CPU has it) */
	static const struct {
		int ring, batch, simd;
	} cases[] = {{1, 0, 0}, {1, 1, 0},  {1, 5, 1}, {1, 64, 1},
		     {0, 5, 0}, {0, 64, 0}, {0, 1, 1}, {0, 64, 1}};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t nb = walk(cases[k].ring ? &two : &one, b, max, cases[k].batch, errata,
				 cases[k].simd);
		ENSURE(na == nb);
		for (size_t i = 0; i < na; i++) {
			ENSURE(a[i].off == b[i].off && a[i].r == b[i].r && a[i].nenc == b[i].nenc);
			ENSURE(a[i].nenc <= 0 || !memcmp(a[i].enc, b[i].enc, (size_t)a[i].nenc));
		}
	}
	free(a);
	free(b);
	free(copy);
	free(p1);
	free(p2);
	return 0;
}
