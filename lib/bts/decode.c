/* lib/bts/decode.c - Intel BTS in the recording decoder (hwt/decode.h):
 * the decoder ops of AUXTRACE type 2 (intel_bts).
 *
 * Each AUXTRACE chunk of a thread's queue is decoded as it comes with
 * the BTS decoder (hwt/bts.h) over the image of the thread's process at
 * that point: every record gives a taken branch with its kind and, when
 * the consumer wants instructions, the instructions executed since the
 * previous branch (the exact walk; the first branch of a trace, or the
 * first after a gap, has only its own instruction).  A queue keeps the
 * previous target across chunks and the bytes of a record split between
 * two chunks.  BTS has no timestamps: nothing comes with a time.
 * Per-CPU BTS queues (no thread per record) are not decoded: one gap
 * (HWT_ERR_NOT_SUPPORTED) per queue.
 *
 * Ownership: the per-queue state (q->fmt) is freed in flush.
 */
#include "decode/decode_int.h"
#include <stdlib.h>
#include <string.h>

#include "hwt/bts.h"
#include "hwt/decode.h"
#include "hwt/x86.h"

struct bts_state {
	struct hwt_decoder *dec;
};

struct bts_queue {
	int have_prev;
	uint64_t prev_to;
	uint8_t tail[HWT_BTS_RECORD_SIZE]; /* a record split between chunks */
	size_t ntail;
	uint64_t tail_off;
	int unsupported_told;
};

static int bts_create(struct hwt_decoder *dec, const uint64_t *priv, size_t npriv, void **state)
{
	(void)priv;
	(void)npriv;
	struct bts_state *s = calloc(1, sizeof(*s));
	if (!s)
		return HWT_ERR_NOMEM;
	s->dec = dec;
	*state = s;
	return 0;
}

static void emit_walk(struct bts_state *s, struct hwt_dec_thread *t, const struct hwt_image *img,
		      const struct hwt_bts_branch *br, unsigned flags)
{
	for (uint32_t i = 0; i < br->ninsn; i++) {
		struct hwt_dec_insn in;
		memset(&in, 0, sizeof(in));
		in.ip = br->ips[i];
		in.size = br->sizes[i];
		in.mode = 64;
		in.iclass = i + 1 == br->ninsn ? br->iclass : HWT_INSN_OTHER;
		if (flags & HWT_DEC_WANT_RAW) {
			struct hwt_x86_insn x;
			if (hwt_image_read(img, in.ip, in.raw, in.size) == in.size &&
			    hwt_x86_decode(in.raw, in.size, in.ip, 64, &x) == 0)
				in.iclass = x.iclass;
		}
		hwt_dec_emit_insn(s->dec, t, &in, img, 0, 0);
	}
}

/* Decode buf (whole records) at stream offset off. */
static void decode(struct bts_state *s, struct bts_queue *bq, struct hwt_dec_thread *t,
		   const struct hwt_image *img, const uint8_t *buf, size_t size, uint64_t off)
{
	const struct hwt_decode_consumer *c = hwt_dec_consumer(s->dec);
	struct hwt_bts_config cfg;
	hwt_bts_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	cfg.offset = off;
	cfg.walk = c && (c->insn || c->ranges);
	cfg.have_prev = (uint8_t)bq->have_prev;
	cfg.prev_to = bq->prev_to;
	struct hwt_bts_decoder *d = hwt_bts_alloc(&cfg, img);
	if (!d) {
		hwt_dec_emit_gap(s->dec, t, off, 0, HWT_ERR_NOMEM);
		return;
	}
	struct hwt_bts_branch br;
	int r;
	while ((r = hwt_bts_next(d, &br)) != HWT_ERR_EOS) {
		if (r < 0) {
			uint64_t at = off;
			hwt_bts_offset(d, &at);
			hwt_dec_emit_gap(s->dec, t, at, hwt_bts_ip(d), r);
			continue;
		}
		if (cfg.walk)
			emit_walk(s, t, img, &br, c->flags);
		hwt_dec_emit_branch(s->dec, t, br.from, br.to, br.kind, img, 0, 0);
	}
	bq->have_prev = hwt_bts_prev(d, &bq->prev_to);
	hwt_bts_free(d);
}

static int bts_chunk(void *state, struct hwt_dec_queue *q, const uint8_t *data, size_t size,
		     uint64_t offset)
{
	struct bts_state *s = state;
	struct bts_queue *bq = q->fmt;
	if (!bq) {
		bq = calloc(1, sizeof(*bq));
		if (!bq)
			return HWT_ERR_NOMEM;
		q->fmt = bq;
	}
	if (q->per_cpu || q->tid == (uint32_t)-1) {
		if (!bq->unsupported_told)
			hwt_dec_emit_gap(s->dec, NULL, offset, 0, HWT_ERR_NOT_SUPPORTED);
		bq->unsupported_told = 1;
		return 0;
	}
	struct hwt_dec_thread *t = hwt_dec_thread_get(s->dec, q->tid, (uint32_t)-1);
	struct hwt_process *p = t ? hwt_dec_process_get(s->dec, t->pid) : NULL;
	const struct hwt_image *img = p ? hwt_process_image(p, NULL) : NULL;
	if (!img)
		return HWT_ERR_NOMEM;
	if (bq->ntail) { /* complete the record split at the last chunk's end */
		size_t need = HWT_BTS_RECORD_SIZE - bq->ntail;
		size_t k = size < need ? size : need;
		memcpy(bq->tail + bq->ntail, data, k);
		bq->ntail += k;
		data += k;
		size -= k;
		offset += k;
		if (bq->ntail < HWT_BTS_RECORD_SIZE)
			return 0;
		decode(s, bq, t, img, bq->tail, HWT_BTS_RECORD_SIZE, bq->tail_off);
		bq->ntail = 0;
	}
	size_t whole = size - size % HWT_BTS_RECORD_SIZE;
	if (whole)
		decode(s, bq, t, img, data, whole, offset);
	if (size > whole) {
		bq->ntail = size - whole;
		bq->tail_off = offset + whole;
		memcpy(bq->tail, data + whole, bq->ntail);
	}
	return 0;
}

/* COMM exec: the process runs another program, so its threads' next
 * records do not continue from the old program's last target. */
static int bts_record(void *state, const struct hwt_perf_record *rec)
{
	struct bts_state *s = state;
	if (rec->type != PERF_RECORD_COMM || !(rec->misc & PERF_RECORD_MISC_COMM_EXEC) ||
	    rec->size < sizeof(struct hwt_perf_rec_comm))
		return 0;
	struct hwt_perf_rec_comm c;
	memcpy(&c, rec->hdr, sizeof(c));
	struct hwt_dec_queue *q;
	for (size_t i = 0; (q = hwt_dec_queue_at(s->dec, i)); i++) {
		struct bts_queue *bq = q->fmt;
		if (!bq || q->per_cpu || q->tid == (uint32_t)-1)
			continue;
		struct hwt_dec_thread *t = hwt_dec_thread_get(s->dec, q->tid, (uint32_t)-1);
		if (t && t->pid == c.pid)
			bq->have_prev = 0;
	}
	return 0;
}

static int bts_flush(void *state, struct hwt_dec_queue *q)
{
	struct bts_state *s = state;
	struct bts_queue *bq = q->fmt;
	if (bq && bq->ntail) /* a partial record at the very end */
		hwt_dec_emit_gap(s->dec,
				 q->tid == (uint32_t)-1
				     ? NULL
				     : hwt_dec_thread_get(s->dec, q->tid, (uint32_t)-1),
				 bq->tail_off, 0, HWT_ERR_BAD_PACKET);
	free(bq);
	q->fmt = NULL;
	return 0;
}

static void bts_free(void *state)
{
	free(state);
}

const struct hwt_decoder_ops hwt_decoder_intel_bts = {
    .name = "intel_bts",
    .auxtrace_type = 2, /* PERF_AUXTRACE_INTEL_BTS */
    .create = bts_create,
    .chunk = bts_chunk,
    .record = bts_record,
    .flush = bts_flush,
    .free = bts_free,
};
