/* Unit tests: lib/unit/session.c draining AUX and data rings.
 *
 * A fake emulated unit (cfg.unit) gives the session one stream whose rings
 * live in this process; the test is the producer, writing through the same
 * ring protocol (hwt_ring_aux_write / hwt_ring_write_record) that a kernel
 * or the emulated unit follows.  Oracles: the bytes produced (every AUX
 * byte delivered once, in order, at the right stream position), the
 * packets encoded (hwt's packet decoder over the session's two-part span
 * must give them back even when a packet is split by the ring's wrap), and
 * the flags/LOST records written (the session's counters).
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "hwt/perf_records.h"
#include "hwt/pt_packet.h"
#include "hwt/ring.h"
#include "hwt/unit.h"
#include "t.h"

#define AUX_SIZE 256
#define DATA_SIZE 4096

struct area {
	struct perf_event_mmap_page ctl;
	uint8_t data[DATA_SIZE];
	uint8_t aux[AUX_SIZE];
};

struct fake {
	struct area *a;
	struct hwt_ring prod;
	int overwrite;
	int done;
	int paused;
};

static struct fake g_fake;

static int f_configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	hwt_session_set_unit_priv(s, &g_fake);
	return 0;
}

static int f_launch(struct hwt_session *s, char *const argv[], pid_t *pid)
{
	struct fake *f = hwt_session_unit_priv(s);
	struct hwt_stream *st = hwt_session_add_stream(s);
	if (!st)
		return HWT_ERR_NOMEM;
	st->tid = st->pid = 1234;
	hwt_ring_init_producer(&f->prod, &f->a->ctl, f->a->data, DATA_SIZE, f->a->aux, AUX_SIZE,
			       f->overwrite);
	hwt_ring_attach(&st->ring, &f->a->ctl, f->a->data, DATA_SIZE, f->a->aux, AUX_SIZE,
			f->overwrite);
	*pid = 1234;
	return 0;
}

static int f_poll(struct hwt_session *s, int timeout_ms)
{
	struct fake *f = hwt_session_unit_priv(s);
	return f->done;
}

static int f_pause(struct hwt_session *s, struct hwt_stream *st, int on)
{
	struct fake *f = hwt_session_unit_priv(s);
	f->paused = on;
	return 0;
}

static const struct hwt_unit_ops fake_unit = {
    .name = "fake",
    .emulated = 1,
    .configure = f_configure,
    .launch = f_launch,
    .poll = f_poll,
    .pause = f_pause,
};

/* The same unit with a trace of 24-byte records (intel_bts). */
static const struct hwt_unit_ops fake_rec_unit = {
    .name = "fake",
    .emulated = 1,
    .configure = f_configure,
    .launch = f_launch,
    .poll = f_poll,
    .pause = f_pause,
    .aux_align = 24,
};
static const struct hwt_unit_ops *g_unit = &fake_unit;

/* What the sink saw. */
struct got {
	uint8_t bytes[1 << 16];
	size_t n;
	uint64_t next_pos;
	int pos_errors;
	int spans, wrapped_spans;
	struct hwt_ring_span last;
	int records, aux_records;
	/* packet check */
	const struct hwt_pt_packet *expect;
	size_t nexpect, iexpect;
	int split_packets;
	int decode_errors;
};

static struct got g;

static int sink_record(void *arg, struct hwt_stream *st, const struct perf_event_header *h)
{
	g.records++;
	if (h->type == PERF_RECORD_AUX)
		g.aux_records++;
	return 0;
}

static int sink_aux(void *arg, struct hwt_stream *st, const struct hwt_ring_span *sp)
{
	if (sp->pos != g.next_pos && !st->ring.overwrite)
		g.pos_errors++;
	g.next_pos = sp->pos + sp->n1 + sp->n2;
	g.spans++;
	if (sp->n2)
		g.wrapped_spans++;
	g.last = *sp;
	if (g.n + sp->n1 + sp->n2 <= sizeof(g.bytes)) {
		memcpy(g.bytes + g.n, sp->p1, sp->n1);
		if (sp->n2)
			memcpy(g.bytes + g.n + sp->n1, sp->p2, sp->n2);
		g.n += sp->n1 + sp->n2;
	}
	if (g.expect) {
		/* decode the span as delivered, over its two parts */
		struct hwt_pt_buf buf = {sp->p1, sp->p1 + sp->n1, sp->n2 ? sp->p2 : NULL,
					 sp->n2 ? sp->p2 + sp->n2 : NULL};
		struct hwt_pt_pkt_decoder *d = hwt_pt_pkt_alloc(&buf);
		if (!d || hwt_pt_pkt_sync_set(d, 0)) {
			g.decode_errors++;
			hwt_pt_pkt_free(d);
			return 0;
		}
		uint64_t off = 0;
		struct hwt_pt_packet pkt;
		int r;
		while ((r = hwt_pt_pkt_next(d, &pkt)) > 0) {
			if (sp->n2 && off < sp->n1 && off + (uint64_t)r > sp->n1)
				g.split_packets++;
			off += (uint64_t)r;
			const struct hwt_pt_packet *e =
			    g.iexpect < g.nexpect ? &g.expect[g.iexpect] : NULL;
			g.iexpect++;
			if (!e || e->type != pkt.type || e->size != pkt.size)
				g.decode_errors++;
			else if ((pkt.type == HWT_PKT_TIP || pkt.type == HWT_PKT_FUP) &&
				 (pkt.u.ip.ip != e->u.ip.ip || pkt.u.ip.ipc != e->u.ip.ipc))
				g.decode_errors++;
			else if (pkt.type == HWT_PKT_TNT8 && pkt.u.tnt.payload != e->u.tnt.payload)
				g.decode_errors++;
		}
		if (r != HWT_ERR_EOS || off != sp->n1 + sp->n2)
			g.decode_errors++;
		hwt_pt_pkt_free(d);
	}
	return 0;
}

static struct hwt_session *open_fake(int overwrite, uint64_t snap_bytes)
{
	memset(&g, 0, sizeof(g));
	memset(&g_fake, 0, sizeof(g_fake));
	g_fake.a = calloc(1, sizeof(struct area));
	g_fake.overwrite = overwrite;
	struct hwt_session_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.event = "fake";
	cfg.unit = g_unit;
	cfg.snapshot = overwrite;
	cfg.snapshot_bytes = snap_bytes;
	cfg.aux_bytes = AUX_SIZE < 4096 ? 4096 : AUX_SIZE; /* session minimum; ring is ours */
	struct hwt_sink sink = {.record = sink_record, .aux = sink_aux};
	struct hwt_session *s = NULL;
	char err[256];
	int r = hwt_session_open(&s, &cfg, &sink, err, sizeof(err));
	CHECKF(r == 0, "open: %s", err);
	if (r)
		return NULL;
	char *argv[] = {"prog", NULL};
	pid_t pid;
	CHECK_EQ(hwt_session_start_cmd(s, argv, &pid, err, sizeof(err)), 0);
	CHECK_EQ(pid, 1234);
	return s;
}

static void close_fake(struct hwt_session *s)
{
	hwt_session_close(s);
	free(g_fake.a);
}

/* Producer: AUX bytes then the PERF_RECORD_AUX naming them. */
static int produce(const uint8_t *p, size_t n, uint64_t flags)
{
	uint64_t head = g_fake.prod.ctl->aux_head;
	int r = hwt_ring_aux_write(&g_fake.prod, p, n);
	if (r)
		return r;
	struct hwt_perf_rec_aux a = {{PERF_RECORD_AUX, 0, sizeof(a)}, head, n, flags};
	return hwt_ring_write_record(&g_fake.prod, &a.header);
}

/* Full mode: a byte stream much longer than the ring, in odd pieces, each
 * announced by an AUX record: all bytes delivered once, in order. */
static void t_full_mode_wrap(void)
{
	struct hwt_session *s = open_fake(0, 0);
	if (!s)
		return;
	static uint8_t src[5000];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + (i >> 8));
	size_t w = 0;
	int refused = 0;
	while (w < sizeof(src)) {
		size_t n = 1 + (w * 7 % 97);
		if (n > sizeof(src) - w)
			n = sizeof(src) - w;
		if (produce(src + w, n, 0) == 0)
			w += n;
		else
			refused++;
		if (refused || w % 3 == 0) /* drain now and then */
			CHECK_EQ(hwt_session_pump(s, 0), 0);
		refused = 0;
	}
	g_fake.done = 1;
	CHECK_EQ(hwt_session_pump(s, 0), 1);
	CHECK_EQ(hwt_session_stop(s), 0);
	CHECK_EQ(g.n, sizeof(src));
	CHECK(memcmp(g.bytes, src, sizeof(src)) == 0);
	CHECK_EQ(g.pos_errors, 0);
	CHECK(g.wrapped_spans > 0);
	CHECK(g.aux_records == g.records && g.records > 0);
	struct hwt_session_stats st;
	hwt_session_get_stats(s, &st);
	CHECK_EQ(st.aux_bytes, sizeof(src));
	CHECK_EQ(st.streams, 1);
	close_fake(s);
}

/* Intel PT packets written whole per chunk; the ring wraps inside
 * packets; the session's spans decode to exactly the packets encoded. */
static void t_pt_packet_split_across_wrap(void)
{
	struct hwt_session *s = open_fake(0, 0);
	if (!s)
		return;
	static struct hwt_pt_packet pk[600];
	static uint8_t enc[600 * 16];
	static size_t off[601];
	size_t np = 0, ne = 0;
	for (int i = 0; np < 600; i++) {
		struct hwt_pt_packet p;
		memset(&p, 0, sizeof(p));
		switch (i % 6) {
		case 0:
			p.type = HWT_PKT_PSB;
			break;
		case 1:
			p.type = HWT_PKT_PSBEND;
			break;
		case 2:
			p.type = HWT_PKT_TNT8;
			p.u.tnt.bits = 5;
			p.u.tnt.payload = (uint64_t)(i & 0x1f);
			break;
		case 3:
			p.type = HWT_PKT_TIP;
			p.u.ip.ipc = HWT_IPC_SEXT_48;
			p.u.ip.ip = 0x401000u + (uint64_t)i * 0x10;
			break;
		case 4:
			p.type = HWT_PKT_FUP;
			p.u.ip.ipc = HWT_IPC_UPDATE_16;
			p.u.ip.ip = (uint64_t)(i * 3) & 0xffff;
			break;
		default:
			p.type = HWT_PKT_PAD;
			break;
		}
		int r = hwt_pt_pkt_encode(enc + ne, sizeof(enc) - ne, &p);
		CHECK(r > 0);
		if (r <= 0)
			break;
		p.size = (uint8_t)r;
		off[np] = ne;
		pk[np++] = p;
		ne += (size_t)r;
	}
	off[np] = ne;
	g.expect = pk;
	g.nexpect = np;
	/* chunks of 1..9 whole packets */
	size_t i = 0;
	while (i < np) {
		size_t k = 1 + (i % 9);
		if (k > np - i)
			k = np - i;
		size_t n = off[i + k] - off[i];
		if (produce(enc + off[i], n, 0)) {
			CHECK_EQ(hwt_session_pump(s, 0), 0); /* full: drain, retry */
			continue;
		}
		i += k;
		if (i % 2)
			CHECK_EQ(hwt_session_pump(s, 0), 0);
	}
	g_fake.done = 1;
	CHECK_EQ(hwt_session_pump(s, 0), 1);
	CHECK_EQ(g.iexpect, np);
	CHECK_EQ(g.decode_errors, 0);
	CHECK(g.split_packets > 0);
	CHECK_EQ(g.n, ne);
	CHECK(memcmp(g.bytes, enc, ne) == 0);
	close_fake(s);
}

/* Snapshot mode: the producer overwrites; a snapshot delivers the newest
 * bytes (at most the snapshot size), a second one only what is new. */
static void t_snapshot_overwrite(void)
{
	struct hwt_session *s = open_fake(1, 100);
	if (!s)
		return;
	static uint8_t src[1000];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 31 + 7);
	for (size_t w = 0; w < 700; w += 50)
		CHECK_EQ(hwt_ring_aux_write(&g_fake.prod, src + w, 50), 0);
	CHECK_EQ(hwt_session_pump(s, 0), 0);
	CHECK_EQ(g.spans, 0); /* nothing taken without a snapshot */
	CHECK_EQ(hwt_session_snapshot(s), 0);
	CHECK_EQ(g.spans, 1);
	CHECK_EQ(g.last.pos, 600);
	CHECK_EQ(g.n, 100);
	CHECK(memcmp(g.bytes, src + 600, 100) == 0);
	CHECK_EQ(g_fake.paused, 0); /* resumed */
	/* 40 new bytes: only those */
	CHECK_EQ(hwt_ring_aux_write(&g_fake.prod, src + 700, 40), 0);
	CHECK_EQ(hwt_session_snapshot(s), 0);
	CHECK_EQ(g.spans, 2);
	CHECK_EQ(g.last.pos, 700);
	CHECK_EQ(g.n, 140);
	CHECK(memcmp(g.bytes + 100, src + 700, 40) == 0);
	/* 260 more: overwritten past the ring; newest 100 (wrapping) */
	CHECK_EQ(hwt_ring_aux_write(&g_fake.prod, src + 740, 260), 0);
	g_fake.done = 1;
	CHECK_EQ(hwt_session_pump(s, 0), 1);
	CHECK_EQ(hwt_session_stop(s), 0); /* the final snapshot */
	CHECK_EQ(g.spans, 3);
	CHECK_EQ(g.last.pos, 900);
	CHECK(memcmp(g.bytes + 140, src + 900, 100) == 0);
	close_fake(s);
}

/* Snapshot of a unit with 24-byte records: whole records only, the
 * newest ones (the producer's head is always at a record boundary). */
static void t_snapshot_whole_records(void)
{
	g_unit = &fake_rec_unit;
	struct hwt_session *s = open_fake(1, 100);
	g_unit = &fake_unit;
	if (!s)
		return;
	static uint8_t src[24 * 40];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + 5);
	for (size_t w = 0; w < 24 * 30; w += 24) /* 720 bytes through a 256-byte ring */
		CHECK_EQ(hwt_ring_aux_write(&g_fake.prod, src + w, 24), 0);
	CHECK_EQ(hwt_session_snapshot(s), 0);
	CHECK_EQ(g.spans, 1);
	CHECK_EQ(g.n, 96); /* 100 cut to 4 records */
	CHECK_EQ(g.last.pos, 720 - 96);
	CHECK(memcmp(g.bytes, src + 720 - 96, 96) == 0);
	/* the final snapshot: the ring's newest 256 bytes hold 10 whole records,
	 * of which the 4 newest fit in 100 bytes */
	for (size_t w = 720; w < 24 * 40; w += 24)
		CHECK_EQ(hwt_ring_aux_write(&g_fake.prod, src + w, 24), 0);
	g_fake.done = 1;
	CHECK_EQ(hwt_session_pump(s, 0), 1);
	CHECK_EQ(hwt_session_stop(s), 0);
	CHECK_EQ(g.spans, 2);
	CHECK_EQ(g.last.pos, 960 - 96);
	CHECK(memcmp(g.bytes + 96, src + 960 - 96, 96) == 0);
	close_fake(s);
}

/* AUX flags and LOST records are counted per stream. */
static void t_flags_and_lost(void)
{
	struct hwt_session *s = open_fake(0, 0);
	if (!s)
		return;
	uint8_t b[32] = {0};
	CHECK_EQ(produce(b, 8, PERF_AUX_FLAG_TRUNCATED), 0);
	CHECK_EQ(produce(b, 8, PERF_AUX_FLAG_PARTIAL), 0);
	CHECK_EQ(produce(b, 8, PERF_AUX_FLAG_COLLISION | PERF_AUX_FLAG_TRUNCATED), 0);
	struct hwt_perf_rec_lost l = {{PERF_RECORD_LOST, 0, sizeof(l)}, 5, 42};
	CHECK_EQ(hwt_ring_write_record(&g_fake.prod, &l.header), 0);
	g_fake.done = 1;
	CHECK_EQ(hwt_session_pump(s, 0), 1);
	struct hwt_session_stats st;
	hwt_session_get_stats(s, &st);
	CHECK_EQ(st.aux_truncated, 2);
	CHECK_EQ(st.aux_partial, 1);
	CHECK_EQ(st.aux_collision, 1);
	CHECK_EQ(st.lost_records, 42);
	CHECK_EQ(st.aux_bytes, 24);
	CHECK_EQ(g.records, 4);
	close_fake(s);
}

int main(void)
{
	RUN(t_full_mode_wrap);
	RUN(t_pt_packet_split_across_wrap);
	RUN(t_snapshot_overwrite);
	RUN(t_snapshot_whole_records);
	RUN(t_flags_and_lost);
	return t_done();
}
