/* Unit tests: lib/pt/packet_decoder.c over whole streams.
 *
 * Oracle: streams are built with the encoder from seeded random packets,
 * so the expected packet list and every packet and PSB offset are known
 * independently of the decoder.  Covers: encode -> decode round trips,
 * every split point of a wrapped ring (two separately allocated parts, so
 * ASan catches any read past a part), sync forward/backward, truncation at
 * every length, and bounded decoding of garbage and bit-flipped streams.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_config.h"
#include "hwt/pt_packet.h"
#include "t.h"

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static uint64_t mask(unsigned bytes)
{
	return bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
}

/* A random valid packet.  *ctx is the block context (BIP only inside). */
static void gen(struct rng *r, int *ctx, int last_psb, struct hwt_pt_packet *p)
{
	static const int8_t ipb[] = {0, 2, 4, 6, 6, -1, 8};
	static const uint8_t ipcs[] = {0, 1, 2, 3, 4, 6};
	uint64_t x = rnd(r), y = rnd(r);
	memset(p, 0, sizeof(*p));
	if (*ctx != HWT_PKT_CTX_NONE) {
		switch (x % 8) {
		case 0:
			p->type = HWT_PKT_BEP, p->u.bep.ip = y & 1;
			break;
		case 1:
			p->type = HWT_PKT_PAD;
			break;
		case 2:
			p->type = HWT_PKT_MTC, p->u.mtc.ctc = (uint8_t)y;
			break;
		default:
			p->type = HWT_PKT_BIP;
			p->size = (uint8_t)(1 + *ctx);
			p->u.bip.id = y & 0x1f;
			p->u.bip.payload = (y >> 5) & mask((unsigned)*ctx);
		}
		*ctx = hwt_pt_pkt_ctx_after(*ctx, p);
		return;
	}
	switch (x % 40) {
	case 0:
		p->type = last_psb ? HWT_PKT_PAD : HWT_PKT_PSB;
		break;
	case 1:
		p->type = HWT_PKT_PSBEND;
		break;
	case 2:
		p->type = HWT_PKT_PAD;
		break;
	case 3:
		p->type = HWT_PKT_OVF;
		break;
	case 4:
		p->type = HWT_PKT_TRACESTOP;
		break;
	case 5:
	case 6:
	case 7:
	case 8:
		p->type = HWT_PKT_TNT8;
		p->u.tnt.bits = (uint8_t)(1 + y % 6);
		p->u.tnt.payload = (y >> 8) & ((1u << p->u.tnt.bits) - 1);
		break;
	case 9:
		p->type = HWT_PKT_TNT64;
		p->u.tnt.bits = (uint8_t)(1 + y % 47);
		p->u.tnt.payload = (y >> 8) & ((1ull << p->u.tnt.bits) - 1);
		break;
	case 10:
	case 11:
	case 12:
	case 13:
	case 14: {
		static const uint8_t t[] = {HWT_PKT_TIP, HWT_PKT_TIP_PGE, HWT_PKT_TIP_PGD,
					    HWT_PKT_FUP, HWT_PKT_TIP};
		p->type = t[x % 40 - 10];
		p->u.ip.ipc = ipcs[y % 6];
		p->u.ip.ip = rnd(r) & mask((unsigned)ipb[p->u.ip.ipc]);
		break;
	}
	case 15:
		p->type = HWT_PKT_PIP;
		p->u.pip.cr3 = (y << 5) & 0xfffffffffffe0ull;
		p->u.pip.nr = x >> 63;
		break;
	case 16:
		p->type = HWT_PKT_MODE_EXEC;
		p->u.mode_exec.csl = y & 1, p->u.mode_exec.csd = (y >> 1) & 1;
		p->u.mode_exec.iflag = (y >> 2) & 1;
		break;
	case 17:
		p->type = HWT_PKT_MODE_TSX;
		p->u.mode_tsx.intx = y & 1, p->u.mode_tsx.abrt = (y >> 1) & 1;
		break;
	case 18:
		p->type = HWT_PKT_CBR, p->u.cbr.ratio = (uint8_t)y;
		break;
	case 19:
		p->type = HWT_PKT_TSC, p->u.tsc.tsc = y >> 8;
		break;
	case 20:
		p->type = HWT_PKT_MTC, p->u.mtc.ctc = (uint8_t)y;
		break;
	case 21:
		p->type = HWT_PKT_TMA;
		p->u.tma.ctc = (uint16_t)y, p->u.tma.fc = (y >> 16) & 0x1ff;
		break;
	case 22:
	case 23:
		p->type = HWT_PKT_CYC;
		p->u.cyc.value = y >> (3 + (x >> 58) % 60);
		break;
	case 24:
		p->type = HWT_PKT_VMCS, p->u.vmcs.base = (y << 12) & 0xffffffffff000ull;
		break;
	case 25:
		p->type = HWT_PKT_MNT, p->u.mnt.payload = y;
		break;
	case 26:
		p->type = HWT_PKT_EXSTOP, p->u.exstop.ip = y & 1;
		break;
	case 27:
		p->type = HWT_PKT_MWAIT;
		p->u.mwait.hints = (uint32_t)y, p->u.mwait.ext = (uint32_t)(y >> 32);
		break;
	case 28:
		p->type = HWT_PKT_PWRE;
		p->u.pwre.state = y & 15, p->u.pwre.sub_state = (y >> 4) & 15;
		p->u.pwre.hw = (y >> 8) & 1;
		break;
	case 29:
		p->type = HWT_PKT_PWRX;
		p->u.pwrx.last = y & 15, p->u.pwrx.deepest = (y >> 4) & 15;
		p->u.pwrx.interrupt = (y >> 8) & 1, p->u.pwrx.store = (y >> 9) & 1;
		p->u.pwrx.autonomous = (y >> 10) & 1;
		break;
	case 30:
	case 31:
		p->type = HWT_PKT_PTW;
		p->u.ptw.plc = y & 1, p->u.ptw.ip = (y >> 1) & 1;
		p->u.ptw.payload = rnd(r) & mask(p->u.ptw.plc ? 8 : 4);
		break;
	case 32:
	case 33:
		p->type = HWT_PKT_BBP;
		p->u.bbp.sz = y & 1, p->u.bbp.type = (y >> 1) & 0x1f;
		break;
	case 34:
		p->type = HWT_PKT_BEP, p->u.bep.ip = y & 1;
		break;
	case 35:
	case 36:
		p->type = HWT_PKT_CFE;
		p->u.cfe.type = y & 0x1f, p->u.cfe.ip = (y >> 5) & 1;
		p->u.cfe.vector = (uint8_t)(y >> 8);
		break;
	case 37:
		p->type = HWT_PKT_EVD, p->u.evd.type = y & 0x1f, p->u.evd.payload = rnd(r);
		break;
	default:
		p->type = HWT_PKT_TRIG;
		p->u.trig.trbv = (uint8_t)y, p->u.trig.ip = (y >> 8) & 1;
		p->u.trig.mult = (y >> 9) & 1, p->u.trig.icntv = (y >> 10) & 1;
		p->u.trig.icnt = p->u.trig.icntv ? (uint16_t)(y >> 16) : 0;
		break;
	}
	*ctx = hwt_pt_pkt_ctx_after(*ctx, p);
}

struct stream {
	uint8_t *bytes;
	size_t len;
	struct hwt_pt_packet *pkts;
	uint64_t *offs;
	size_t n;
	uint64_t psb[4096];
	size_t npsb;
};

static void stream_make(struct stream *s, uint64_t seed, size_t npkts)
{
	struct rng r = {seed * 0x9e3779b97f4a7c15ull + 1};
	int ctx = HWT_PKT_CTX_NONE, last_psb = 0;
	s->bytes = malloc(npkts * 16 + 16);
	s->pkts = malloc(npkts * sizeof(*s->pkts));
	s->offs = malloc(npkts * sizeof(*s->offs));
	s->len = s->n = s->npsb = 0;
	for (size_t i = 0; i < npkts; i++) {
		struct hwt_pt_packet p;
		gen(&r, &ctx, last_psb, &p);
		int n = hwt_pt_pkt_encode(s->bytes + s->len, 16, &p);
		if (n <= 0) {
			t_fail(__FILE__, __LINE__, "encode %s failed: %d", hwt_pt_pkt_name(p.type),
			       n);
			continue;
		}
		p.size = (uint8_t)n;
		if (p.type == HWT_PKT_PSB && s->npsb < 4096)
			s->psb[s->npsb++] = s->len;
		last_psb = p.type == HWT_PKT_PSB;
		s->pkts[s->n] = p;
		s->offs[s->n++] = s->len;
		s->len += (size_t)n;
	}
}

static void stream_free(struct stream *s)
{
	free(s->bytes);
	free(s->pkts);
	free(s->offs);
}

static int pkt_same(const struct hwt_pt_packet *a, const struct hwt_pt_packet *b)
{
	struct hwt_pt_packet x = *a, y = *b;
	uint8_t ea[16], eb[16];
	/* compare by re-encoding: every field of the type is in the bytes */
	if (x.type != y.type || x.size != y.size)
		return 0;
	if (x.type == HWT_PKT_INVALID)
		return 1;
	int na = hwt_pt_pkt_encode(ea, 16, &x), nb = hwt_pt_pkt_encode(eb, 16, &y);
	return na == nb && na > 0 && !memcmp(ea, eb, (size_t)na);
}

/* Decode everything from offset 0, checking against the stream. */
static void check_decode(const struct stream *s, const struct hwt_pt_buf *buf, const char *what)
{
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(buf);
	struct hwt_pt_packet p;
	uint64_t off;
	CHECK(dec != NULL);
	if (!dec)
		return;
	CHECK(hwt_pt_pkt_size(dec) == s->len);
	CHECK(hwt_pt_pkt_sync_set(dec, 0) == 0);
	for (size_t i = 0; i < s->n; i++) {
		CHECK(hwt_pt_pkt_offset(dec, &off) == 0);
		int n = hwt_pt_pkt_next(dec, &p);
		CHECKF(n == s->pkts[i].size && off == s->offs[i] && pkt_same(&p, &s->pkts[i]),
		       "%s: packet %zu at %" PRIu64 ": got %s/%d want %s/%d at %" PRIu64, what, i,
		       off, hwt_pt_pkt_name(p.type), n, hwt_pt_pkt_name(s->pkts[i].type),
		       s->pkts[i].size, s->offs[i]);
		if (n <= 0)
			break;
	}
	CHECK(hwt_pt_pkt_next(dec, &p) == HWT_ERR_EOS);
	CHECK(hwt_pt_pkt_offset(dec, &off) == 0 && off == s->len);
	hwt_pt_pkt_free(dec);
}

static void t_roundtrip_random(void)
{
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct stream s;
		stream_make(&s, seed, 3000);
		struct hwt_pt_buf buf = {s.bytes, s.bytes + s.len, NULL, NULL};
		check_decode(&s, &buf, "contiguous");
		stream_free(&s);
	}
}

/* All PSB offsets found by repeated sync_forward / sync_backward. */
static size_t sync_all(const struct hwt_pt_buf *buf, int backward, uint64_t *out, size_t max)
{
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(buf);
	size_t n = 0;
	while (n < max) {
		int r = backward ? hwt_pt_pkt_sync_backward(dec) : hwt_pt_pkt_sync_forward(dec);
		if (r < 0) {
			CHECK(r == HWT_ERR_EOS);
			break;
		}
		hwt_pt_pkt_sync_offset(dec, &out[n++]);
	}
	hwt_pt_pkt_free(dec);
	return n;
}

static void t_ring_every_split(void)
{
	struct stream s;
	stream_make(&s, 7, 400);
	CHECK(s.npsb >= 3);
	for (size_t k = 0; k <= s.len; k++) {
		uint8_t *a = malloc(k ? k : 1), *b = malloc(s.len - k ? s.len - k : 1);
		memcpy(a, s.bytes, k);
		memcpy(b, s.bytes + k, s.len - k);
		struct hwt_pt_buf buf = {a, a + k, b, b + (s.len - k)};
		char what[32];
		snprintf(what, sizeof(what), "split %zu", k);
		check_decode(&s, &buf, what);
		uint64_t fw[64], bw[64];
		size_t nf = sync_all(&buf, 0, fw, 64), nb = sync_all(&buf, 1, bw, 64);
		CHECKF(nf == s.npsb && nb == s.npsb, "split %zu: %zu/%zu syncs, want %zu", k, nf,
		       nb, s.npsb);
		for (size_t i = 0; i < nf && i < s.npsb; i++)
			CHECKF(fw[i] == s.psb[i], "split %zu: forward sync %zu", k, i);
		for (size_t i = 0; i < nb && i < s.npsb; i++)
			CHECKF(bw[i] == s.psb[s.npsb - 1 - i], "split %zu: backward sync %zu", k,
			       i);
		free(a);
		free(b);
		if (t_case_failed)
			break;
	}
	/* an empty first part */
	struct hwt_pt_buf buf = {s.bytes, s.bytes, s.bytes, s.bytes + s.len};
	check_decode(&s, &buf, "empty first part");
	stream_free(&s);
}

static void t_sync(void)
{
	struct stream s;
	stream_make(&s, 3, 2000);
	struct hwt_pt_buf buf = {s.bytes, s.bytes + s.len, NULL, NULL};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	struct hwt_pt_packet p;
	uint64_t off;
	CHECK(s.npsb >= 10);
	CHECK(hwt_pt_pkt_offset(dec, &off) == HWT_ERR_NOSYNC);
	CHECK(hwt_pt_pkt_sync_offset(dec, &off) == HWT_ERR_NOSYNC);
	CHECK(hwt_pt_pkt_next(dec, &p) == HWT_ERR_NOSYNC);
	/* forward from every packet boundary: the first PSB after it */
	for (size_t i = 0; i < s.n; i++) {
		CHECK(hwt_pt_pkt_sync_set(dec, s.offs[i]) == 0);
		int r = hwt_pt_pkt_sync_forward(dec);
		size_t j = 0;
		while (j < s.npsb && s.psb[j] <= s.offs[i])
			j++;
		if (j == s.npsb) {
			CHECKF(r == HWT_ERR_EOS, "from %" PRIu64, s.offs[i]);
			continue;
		}
		CHECKF(r == 0 && hwt_pt_pkt_sync_offset(dec, &off) == 0 && off == s.psb[j] &&
			   hwt_pt_pkt_offset(dec, &off) == 0 && off == s.psb[j],
		       "from %" PRIu64 ": want %" PRIu64, s.offs[i], s.psb[j]);
		/* after decoding the PSB, forward goes to the next one */
		CHECK(hwt_pt_pkt_next(dec, &p) == 16 && p.type == HWT_PKT_PSB);
		r = hwt_pt_pkt_sync_forward(dec);
		CHECK(j + 1 < s.npsb
			  ? r == 0 && hwt_pt_pkt_sync_offset(dec, &off) == 0 && off == s.psb[j + 1]
			  : r == HWT_ERR_EOS);
		/* backward from a PSB: the one before */
		if (j + 1 < s.npsb) {
			CHECK(hwt_pt_pkt_sync_backward(dec) == 0);
			CHECK(hwt_pt_pkt_sync_offset(dec, &off) == 0 && off == s.psb[j]);
		}
	}
	/* from inside a PSB (after the first byte), forward skips it */
	CHECK(hwt_pt_pkt_sync_set(dec, s.psb[1] + 1) == 0);
	CHECK(hwt_pt_pkt_sync_forward(dec) == 0 && hwt_pt_pkt_sync_offset(dec, &off) == 0 &&
	      off == s.psb[2]);
	CHECK(hwt_pt_pkt_sync_set(dec, s.len + 1) == HWT_ERR_EOS);
	CHECK(hwt_pt_pkt_sync_set(dec, s.len) == 0 && hwt_pt_pkt_next(dec, &p) == HWT_ERR_EOS);
	hwt_pt_pkt_free(dec);
	stream_free(&s);
}

/* A packet decoded with bad bytes right before the PSB: the PSB is found
 * even when payload bytes before it look like PSB pairs, and even when
 * a bad packet ate the first bytes of the PSB. */
static void t_sync_psb_pattern_in_payload(void)
{
	uint8_t b[64];
	size_t n = 0;
	b[n++] = 0x4d; /* TIP ipc 2: payload ends in 02 82 */
	b[n++] = 0x11, b[n++] = 0x22, b[n++] = 0x02, b[n++] = 0x82;
	size_t psb = n;
	for (int i = 0; i < 8; i++)
		b[n++] = 0x02, b[n++] = 0x82;
	b[n++] = 0x02, b[n++] = 0x23;
	struct hwt_pt_buf buf = {b, b + n, NULL, NULL};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	uint64_t off;
	CHECK(hwt_pt_pkt_sync_forward(dec) == 0 && hwt_pt_pkt_sync_offset(dec, &off) == 0 &&
	      off == psb);
	CHECK(hwt_pt_pkt_sync_forward(dec) == HWT_ERR_EOS);
	hwt_pt_pkt_free(dec);
	dec = hwt_pt_pkt_alloc(&buf);
	CHECK(hwt_pt_pkt_sync_backward(dec) == 0 && hwt_pt_pkt_sync_offset(dec, &off) == 0 &&
	      off == psb);
	CHECK(hwt_pt_pkt_sync_backward(dec) == HWT_ERR_EOS);
	hwt_pt_pkt_free(dec);
}

static void t_truncated_every_length(void)
{
	struct stream s;
	stream_make(&s, 11, 300);
	for (size_t len = 0; len <= s.len; len++) {
		uint8_t *a = malloc(len ? len : 1);
		memcpy(a, s.bytes, len);
		struct hwt_pt_buf buf = {a, a + len, NULL, NULL};
		struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
		struct hwt_pt_packet p;
		hwt_pt_pkt_sync_set(dec, 0);
		size_t i = 0;
		int r;
		while ((r = hwt_pt_pkt_next(dec, &p)) > 0) {
			CHECKF(i < s.n && pkt_same(&p, &s.pkts[i]), "len %zu packet %zu", len, i);
			i++;
		}
		/* all complete packets, then end of stream */
		size_t want = 0;
		while (want < s.n && s.offs[want] + s.pkts[want].size <= len)
			want++;
		CHECKF(r == HWT_ERR_EOS && i == want, "len %zu: %zu packets, r=%d, want %zu", len,
		       i, r, want);
		hwt_pt_pkt_free(dec);
		free(a);
		if (t_case_failed)
			break;
	}
	stream_free(&s);
}

/* Decode with resync on errors; invariants and a bound on iterations. */
static void decode_bounded(const struct hwt_pt_buf *buf, const char *what)
{
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(buf);
	struct hwt_pt_packet p;
	uint64_t total = hwt_pt_pkt_size(dec), last = 0, off, steps = 0;
	int r = hwt_pt_pkt_sync_set(dec, 0);
	while (r >= 0) {
		CHECKF(++steps <= 2 * total + 4, "%s: not terminating", what);
		if (steps > 2 * total + 4)
			break;
		hwt_pt_pkt_offset(dec, &off);
		CHECKF(off >= last, "%s: offset went back", what);
		last = off;
		r = hwt_pt_pkt_next(dec, &p);
		if (r > 0) {
			uint64_t after;
			hwt_pt_pkt_offset(dec, &after);
			CHECKF(r <= HWT_PT_PKT_MAX_SIZE && after > off && after <= total &&
				   p.type > HWT_PKT_INVALID && p.type < HWT_PKT_NTYPES,
			       "%s: bad packet at %" PRIu64, what, off);
			continue;
		}
		if (r == HWT_ERR_EOS)
			break;
		CHECKF(r == HWT_ERR_BAD_OPC || r == HWT_ERR_BAD_PACKET, "%s: error %d", what, r);
		uint64_t same;
		CHECKF(hwt_pt_pkt_offset(dec, &same) == 0 && same == off, "%s: error moved", what);
		r = hwt_pt_pkt_sync_forward(dec);
		if (r == 0) {
			hwt_pt_pkt_offset(dec, &off);
			CHECKF(off + 15 >= last, "%s: resync went back too far", what);
			last = off;
		}
	}
	hwt_pt_pkt_free(dec);
}

static void t_garbage_and_bitflips(void)
{
	struct rng r = {12345};
	for (int iter = 0; iter < 300; iter++) {
		size_t len = 1 + rnd(&r) % 700;
		uint8_t *a = malloc(len);
		for (size_t i = 0; i < len; i++)
			a[i] = (uint8_t)rnd(&r);
		/* sprinkle PSBs so that resync has something to find */
		for (int k = 0; k < 3 && len > 40; k++) {
			size_t at = rnd(&r) % (len - 16);
			for (int j = 0; j < 16; j += 2)
				a[at + j] = 0x02, a[at + j + 1] = 0x82;
		}
		size_t split = rnd(&r) % (len + 1);
		struct hwt_pt_buf one = {a, a + len, NULL, NULL};
		struct hwt_pt_buf two = {a, a + split, a + split, a + len};
		decode_bounded(&one, "garbage");
		decode_bounded(&two, "garbage, two parts");
		free(a);
	}
	struct stream s;
	stream_make(&s, 99, 2000);
	for (int iter = 0; iter < 200; iter++) {
		uint8_t *a = malloc(s.len);
		memcpy(a, s.bytes, s.len);
		for (int k = 0; k < 1 + iter % 8; k++) {
			size_t bit = rnd(&r) % (s.len * 8);
			a[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		struct hwt_pt_buf buf = {a, a + s.len, NULL, NULL};
		decode_bounded(&buf, "bit flips");
		free(a);
	}
	stream_free(&s);
}

/* One decoding run as a list of (offset, result, packet) events, either
 * one hwt_pt_pkt_next() per packet or hwt_pt_pkt_next_batch(batch);
 * errors resync forward. */
struct ev {
	uint64_t off;
	int r;
	struct hwt_pt_packet p;
};

static size_t run_events(const struct hwt_pt_buf *buf, int batch, int errata, struct ev *ev,
			 size_t max)
{
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(buf);
	struct hwt_pt_packet pk[64];
	size_t n = 0;
	if (errata) {
		struct hwt_pt_errata er = {0};
		er.skd007 = er.skz84 = 1;
		hwt_pt_pkt_set_errata(dec, &er);
	}
	int r = hwt_pt_pkt_sync_set(dec, 0);
	while (r >= 0 && n < max) {
		uint64_t off;
		hwt_pt_pkt_offset(dec, &off);
		if (batch) {
			r = hwt_pt_pkt_next_batch(dec, pk, batch);
			for (int i = 0; i < r && n < max; i++) {
				ev[n].off = off, ev[n].r = pk[i].size, ev[n].p = pk[i];
				off += pk[i].size;
				n++;
			}
			if (r > 0)
				continue;
		} else {
			r = hwt_pt_pkt_next(dec, &pk[0]);
			ev[n].off = off, ev[n].r = r, ev[n].p = pk[0];
			n++;
			if (r > 0)
				continue;
			n--;
		}
		ev[n].off = off, ev[n].r = r;
		memset(&ev[n].p, 0, sizeof(ev[n].p));
		n++;
		if (r == HWT_ERR_EOS)
			break;
		r = hwt_pt_pkt_sync_forward(dec);
	}
	hwt_pt_pkt_free(dec);
	return n;
}

static void compare_runs(const struct hwt_pt_buf *buf, int errata, const char *what)
{
	static struct ev a[20000], b[20000];
	size_t na = run_events(buf, 0, errata, a, 20000);
	static const int sizes[] = {1, 3, 64};
	for (size_t s = 0; s < 3; s++) {
		size_t nb = run_events(buf, sizes[s], errata, b, 20000);
		CHECKF(na == nb, "%s, batch %d: %zu vs %zu events", what, sizes[s], na, nb);
		for (size_t i = 0; i < na && i < nb; i++) {
			int same = a[i].off == b[i].off && a[i].r == b[i].r &&
				   (a[i].r <= 0 || pkt_same(&a[i].p, &b[i].p));
			CHECKF(same, "%s, batch %d: event %zu at %" PRIu64 " (%d vs %d)", what,
			       sizes[s], i, a[i].off, a[i].r, b[i].r);
			if (!same)
				break;
		}
	}
}

static void t_batch_matches_single(void)
{
	struct stream s;
	stream_make(&s, 21, 3000);
	struct hwt_pt_buf buf = {s.bytes, s.bytes + s.len, NULL, NULL};
	compare_runs(&buf, 0, "stream");
	compare_runs(&buf, 1, "stream, errata");
	for (size_t k = 0; k < s.len; k += 1 + k / 3) {
		struct hwt_pt_buf two = {s.bytes, s.bytes + k, s.bytes + k, s.bytes + s.len};
		compare_runs(&two, 0, "stream, two parts");
	}
	stream_free(&s);
	/* garbage with the SKD007 (xx 02 f3) and SKZ84 (bad TMA) patterns */
	struct rng r = {777};
	for (int iter = 0; iter < 100; iter++) {
		size_t len = 64 + rnd(&r) % 2000;
		uint8_t *a = malloc(len);
		for (size_t i = 0; i < len; i++) {
			static const uint8_t pool[] = {0x07, 0x02, 0xf3, 0x73,
						       0x01, 0x99, 0x0d, 0x04};
			a[i] = rnd(&r) % 3 ? pool[rnd(&r) % 8] : (uint8_t)rnd(&r);
		}
		struct hwt_pt_buf one = {a, a + len, NULL, NULL};
		compare_runs(&one, 1, "garbage, errata");
		compare_runs(&one, 0, "garbage");
		free(a);
	}
}

/* SKD007: a 2-byte CYC whose second byte starts an OVF is reported as
 * that OVF (3 bytes consumed); without the erratum it is a CYC. */
static void t_errata_skd007_skz84(void)
{
	uint8_t b[32] = {0};
	b[0] = 0xf7, b[1] = 0x02, b[2] = 0xf3, b[3] = 0x00; /* CYC(f7 02), f3, PAD */
	struct hwt_pt_buf buf = {b, b + sizeof(b), NULL, NULL};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	struct hwt_pt_packet p;
	uint64_t off;
	hwt_pt_pkt_sync_set(dec, 0);
	CHECK(hwt_pt_pkt_next(dec, &p) == 2 && p.type == HWT_PKT_CYC);
	struct hwt_pt_errata er = {0};
	er.skd007 = 1;
	hwt_pt_pkt_set_errata(dec, &er);
	hwt_pt_pkt_sync_set(dec, 0);
	CHECK(hwt_pt_pkt_next(dec, &p) == 2 && p.type == HWT_PKT_OVF);
	CHECK(hwt_pt_pkt_offset(dec, &off) == 0 && off == 3);
	CHECK(hwt_pt_pkt_next(dec, &p) == 1 && p.type == HWT_PKT_PAD);
	hwt_pt_pkt_free(dec);
	/* SKZ84: a TMA with reserved bits is an 8-byte invalid packet */
	uint8_t t[32] = {0x02, 0x73, 0x01, 0x01, 0x01, 0x01, 0x00, 0xee, 0x00};
	struct hwt_pt_buf tb = {t, t + sizeof(t), NULL, NULL};
	dec = hwt_pt_pkt_alloc(&tb);
	hwt_pt_pkt_sync_set(dec, 0);
	CHECK(hwt_pt_pkt_next(dec, &p) == HWT_ERR_BAD_PACKET);
	er.skd007 = 0, er.skz84 = 1;
	hwt_pt_pkt_set_errata(dec, &er);
	CHECK(hwt_pt_pkt_next(dec, &p) == 8 && p.type == HWT_PKT_INVALID && p.size == 8);
	CHECK(hwt_pt_pkt_next(dec, &p) == 1 && p.type == HWT_PKT_PAD);
	hwt_pt_pkt_free(dec);
}

int main(void)
{
	RUN(t_roundtrip_random);
	RUN(t_ring_every_split);
	RUN(t_sync);
	RUN(t_sync_psb_pattern_in_payload);
	RUN(t_truncated_every_length);
	RUN(t_garbage_and_bitflips);
	RUN(t_batch_matches_single);
	RUN(t_errata_skd007_skz84);
	return t_done();
}
