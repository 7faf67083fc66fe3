/* Unit tests: lib/buf/ring.c - the perf mmap ring protocol. */
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "hwt/ring.h"
#include "t.h"

struct area {
	struct perf_event_mmap_page ctl;
	uint8_t data[256];
	uint8_t aux[64];
};

static uint8_t scratch[65536];

static void span_copy(const struct hwt_ring_span *sp, uint8_t *out)
{
	memcpy(out, sp->p1, sp->n1);
	if (sp->n2)
		memcpy(out + sp->n1, sp->p2, sp->n2);
}

/* Full mode: a producer writing a byte sequence in odd-sized pieces and a
 * consumer releasing what it read see every byte once, in order, across
 * many wraps; the producer is refused when the ring is full. */
static void t_aux_full_mode_wraps(void)
{
	struct area *a = calloc(1, sizeof(*a));
	struct hwt_ring prod, cons;
	CHECK_EQ(hwt_ring_init_producer(&prod, &a->ctl, a->data, 256, a->aux, 64, 0), 0);
	CHECK_EQ(hwt_ring_attach(&cons, &a->ctl, a->data, 256, a->aux, 64, 0), 0);
	uint8_t src[1000], got[1000];
	for (int i = 0; i < 1000; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	size_t wpos = 0, rpos = 0;
	int refused = 0;
	while (rpos < sizeof(src)) {
		size_t n = 1 + (wpos % 23);
		if (wpos + n > sizeof(src))
			n = sizeof(src) - wpos;
		int was_refused = 0;
		if (n && hwt_ring_aux_write(&prod, src + wpos, n) == 0)
			wpos += n;
		else if (n)
			refused++, was_refused = 1;
		struct hwt_ring_span sp;
		size_t avail = hwt_ring_aux_peek(&cons, &sp);
		CHECK_EQ(sp.pos, rpos);
		CHECK(avail <= 64);
		if (avail && (was_refused || n == 0 || wpos % 7 == 0)) {
			span_copy(&sp, got + rpos);
			rpos += avail;
			hwt_ring_aux_release(&cons, avail);
		}
	}
	CHECK(memcmp(src, got, sizeof(src)) == 0);
	CHECK(refused > 0);
	free(a);
}

/* Overwrite mode: a snapshot gives the newest aux_size bytes. */
static void t_aux_snapshot_overwrite(void)
{
	struct area *a = calloc(1, sizeof(*a));
	struct hwt_ring prod;
	CHECK_EQ(hwt_ring_init_producer(&prod, &a->ctl, a->data, 256, a->aux, 64, 1), 0);
	uint8_t src[300], got[64];
	for (int i = 0; i < 300; i++)
		src[i] = (uint8_t)(i ^ 0x5a);
	struct hwt_ring_span sp;
	CHECK_EQ(hwt_ring_aux_write(&prod, src, 10), 0);
	CHECK_EQ(hwt_ring_aux_snapshot(&prod, &sp), 10);
	CHECK_EQ(sp.pos, 0);
	span_copy(&sp, got);
	CHECK(memcmp(got, src, 10) == 0);
	for (int i = 10; i < 300; i += 13)
		CHECK_EQ(hwt_ring_aux_write(&prod, src + i, (i + 13 > 300) ? 300 - i : 13), 0);
	CHECK_EQ(hwt_ring_aux_snapshot(&prod, &sp), 64);
	CHECK_EQ(sp.pos, 300 - 64);
	span_copy(&sp, got);
	CHECK(memcmp(got, src + 300 - 64, 64) == 0);
	/* one write larger than the ring keeps its tail */
	CHECK_EQ(hwt_ring_aux_write(&prod, src, 100), 0);
	CHECK_EQ(hwt_ring_aux_snapshot(&prod, &sp), 64);
	span_copy(&sp, got);
	CHECK(memcmp(got, src + 36, 64) == 0);
	CHECK_EQ(sp.pos, 400 - 64);
	free(a);
}

struct rec_seen {
	int n;
	uint32_t sum;
};

static int on_rec(void *arg, const struct perf_event_header *rec)
{
	struct rec_seen *s = arg;
	const uint8_t *p = (const uint8_t *)rec;
	s->n++;
	for (unsigned i = sizeof(*rec); i < rec->size; i++)
		if (p[i] != (uint8_t)(rec->misc + i))
			return HWT_ERR_BAD_FORMAT;
	s->sum += rec->type;
	return 0;
}

/* Records of varying sizes, split by the wrap, arrive intact. */
static void t_records_wrap(void)
{
	struct area *a = calloc(1, sizeof(*a));
	struct hwt_ring r;
	CHECK_EQ(hwt_ring_init_producer(&r, &a->ctl, a->data, 256, NULL, 0, 0), 0);
	uint8_t buf[128];
	uint32_t want = 0;
	int total = 0;
	for (int round = 0; round < 50; round++) {
		int k;
		for (k = 0; k < 4; k++) {
			struct perf_event_header *h = (void *)buf;
			h->size = (uint16_t)(8 * (1 + (round * 4 + k) % 11));
			h->type = (uint32_t)(round * 4 + k);
			h->misc = (uint16_t)round;
			for (unsigned i = sizeof(*h); i < h->size; i++)
				buf[i] = (uint8_t)(h->misc + i);
			if (hwt_ring_write_record(&r, h) != 0)
				break;
			want += h->type;
			total++;
		}
		struct rec_seen s = {0, 0};
		int n = hwt_ring_read_records(&r, on_rec, &s, scratch, sizeof(scratch));
		CHECK_EQ(n, k);
		CHECK_EQ(s.n, k);
		(void)s;
		want -= s.sum;
	}
	CHECK_EQ(want, 0);
	CHECK(total > 100);
	CHECK(a->ctl.data_head > 256 * 4); /* really wrapped several times */
	/* a full ring refuses */
	struct perf_event_header big = {.type = 1, .misc = 0, .size = 128};
	uint8_t bb[128] = {0};
	memcpy(bb, &big, sizeof(big));
	for (unsigned i = 8; i < 128; i++)
		bb[i] = (uint8_t)i;
	CHECK_EQ(hwt_ring_write_record(&r, (void *)bb), 0);
	CHECK_EQ(hwt_ring_write_record(&r, (void *)bb), 0);
	CHECK_EQ(hwt_ring_write_record(&r, (void *)bb), HWT_ERR_AGAIN);
	free(a);
}

int main(void)
{
	RUN(t_aux_full_mode_wraps);
	RUN(t_aux_snapshot_overwrite);
	RUN(t_records_wrap);
	return t_done();
}
