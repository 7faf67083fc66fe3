/* lib/etm/decode.c - Arm CoreSight ETM (cs_etm) in the recording decoder
 * (hwt/decode.h): the decoder ops of AUXTRACE type 3, on OpenCSD.
 *
 * create parses the AUXTRACE_INFO (info.c: trace ID -> CPU, the ETMv4/ETE
 * ID registers).  Each AUX queue gets its own OpenCSD decode tree
 * (tree.c) at its first chunk: CoreSight frames (every source) or, when
 * the recording's AUX records carry PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW
 * (0x100; ETE/TRBE), raw bytes of the queue's CPU's source.  The AUX
 * record of a chunk may come after it (hwt writes it so): until the
 * first AUX record, chunks are held (copied); without any, a queue's
 * trace is raw if it starts with an A-sync, frames otherwise.  Chunks are
 * then fed as they come, in one stream
 * per queue (memory: what OpenCSD holds), code read through the thread's
 * process image.  Elements become the flow of one thread per trace ID
 * (flow.c): per-thread queues belong to their thread; per-CPU queues
 * switch threads by the context ID (Linux writes the tid there with the
 * contextid term), else by the CPU's switch records.  At the end (flush)
 * OpenCSD hands out what it held.
 *
 * Ownership: the queue state (q->fmt: tree, flows) is freed in flush or,
 * if decoding stopped before, in free.
 */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "etm/etm_int.h"
#include "hwt/error.h"
#include "hwt/perf_records.h"

#define AUX_FLAG_RAW 0x100 /* PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW */

struct etm_state;

struct etm_queue {
	struct etm_state *s;
	struct hwt_dec_queue *q;
	struct etm_tree *tree;
	struct etm_flow *flows[128]; /* by trace ID */
	struct hwt_process *proc;    /* whose image the code comes from */
	uint64_t gen, epoch;
	const struct hwt_image *img;
	uint8_t *held; /* chunks before the first AUX record */
	size_t nheld, capheld;
	uint64_t held_off;
	size_t cursor; /* hwt_dec_cpu_tid_at */
	struct etm_queue *next;
};

struct etm_state {
	struct hwt_decoder *dec;
	struct etm_meta meta;
	int seen_aux, raw;
	struct etm_queue *queues;
};

static int etm_create(struct hwt_decoder *dec, const uint64_t *priv, size_t npriv, void **state)
{
	struct etm_state *s = calloc(1, sizeof(*s));
	if (!s)
		return HWT_ERR_NOMEM;
	char err[256];
	int r = etm_meta_parse(priv, npriv, &s->meta, err, sizeof(err));
	if (r) {
		hwt_dec_set_err(dec, "%s", err);
		free(s);
		return r;
	}
	s->dec = dec;
	*state = s;
	return 0;
}

static struct etm_flow *flow_of(struct etm_queue *eq, uint8_t id)
{
	id &= 0x7f;
	struct etm_flow *f = eq->flows[id];
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	const struct hwt_decode_consumer *c = hwt_dec_consumer(eq->s->dec);
	f->dec = eq->s->dec;
	f->c = c;
	f->want_insn = c->insn || c->ranges;
	f->want_raw = f->want_insn && (c->flags & HWT_DEC_WANT_RAW);
	if (!eq->q->per_cpu)
		f->t = hwt_dec_thread_get(eq->s->dec, eq->q->tid, (uint32_t)-1);
	eq->flows[id] = f;
	return f;
}

/* per-CPU: the thread that ran (context ID, else the switch records) */
static void per_cpu_thread(struct etm_queue *eq, struct etm_flow *f,
			   const ocsd_generic_trace_elem *e)
{
	uint32_t tid = (uint32_t)-1;
	if (e && e->elem_type == OCSD_GEN_TRC_ELEM_PE_CONTEXT && e->context.ctxt_id_valid)
		tid = e->context.context_id;
	else if (!f->t)
		tid = hwt_dec_cpu_tid_at(eq->s->dec, eq->q->cpu, f->have_time ? f->time_ns : 0,
					 &eq->cursor);
	if (tid != (uint32_t)-1 && (!f->t || f->t->tid != tid))
		f->t = hwt_dec_thread_get(eq->s->dec, tid, (uint32_t)-1);
}

static void on_elem(void *arg, uint64_t off, uint8_t id, const ocsd_generic_trace_elem *e)
{
	struct etm_queue *eq = arg;
	struct etm_flow *f = flow_of(eq, id);
	if (!f)
		return;
	if (eq->q->per_cpu)
		per_cpu_thread(eq, f, e);
	if (!f->t)
		return;
	f->img = eq->img;
	etm_flow_elem(f, off, e);
}

static void on_fatal(void *arg, uint64_t off)
{
	struct etm_queue *eq = arg;
	int any = 0;
	for (int i = 0; i < 128; i++)
		if (eq->flows[i] && eq->flows[i]->t) {
			eq->flows[i]->img = eq->img;
			etm_flow_gap(eq->flows[i], off, 0, HWT_ERR_BAD_PACKET);
			any = 1;
		}
	if (!any) {
		struct hwt_dec_thread *t =
		    eq->q->per_cpu ? NULL
				   : hwt_dec_thread_get(eq->s->dec, eq->q->tid, (uint32_t)-1);
		hwt_dec_emit_gap(eq->s->dec, t, off, 0, HWT_ERR_BAD_PACKET);
	}
}

static uint32_t on_mem(void *arg, uint64_t addr, uint32_t n, uint8_t *buf)
{
	struct etm_queue *eq = arg;
	if (!eq->img)
		return 0;
	int r = hwt_image_read(eq->img, addr, buf, n);
	return r > 0 ? (uint32_t)r : 0;
}

/* A-sync: 11 zero bytes then 0x80 */
static int starts_with_async(const uint8_t *d, size_t n)
{
	if (n < 12 || d[11] != 0x80)
		return 0;
	for (int i = 0; i < 11; i++)
		if (d[i])
			return 0;
	return 1;
}

static struct etm_queue *queue_new(struct etm_state *s, struct hwt_dec_queue *q)
{
	struct etm_queue *eq = calloc(1, sizeof(*eq));
	if (!eq)
		return NULL;
	eq->s = s;
	eq->q = q;
	eq->next = s->queues;
	s->queues = eq;
	return eq;
}

static void queue_free(struct etm_state *s, struct etm_queue *eq)
{
	for (struct etm_queue **p = &s->queues; *p; p = &(*p)->next)
		if (*p == eq) {
			*p = eq->next;
			break;
		}
	etm_tree_free(eq->tree);
	free(eq->held);
	for (int i = 0; i < 128; i++)
		free(eq->flows[i]);
	free(eq);
}

/* The code of the queue's thread (per-CPU: of every process) now. */
static void update_image(struct etm_state *s, struct etm_queue *eq)
{
	struct hwt_process *p;
	if (eq->q->per_cpu) {
		p = hwt_dec_all_processes(s->dec);
	} else {
		struct hwt_dec_thread *t = hwt_dec_thread_get(s->dec, eq->q->tid, (uint32_t)-1);
		p = t ? hwt_dec_process_get(s->dec, t->pid) : NULL;
	}
	uint64_t epoch = hwt_dec_process_epoch(s->dec);
	uint64_t gen = p ? hwt_process_generation(p) : 0;
	if (p != eq->proc || gen != eq->gen || epoch != eq->epoch) {
		if (eq->tree && (eq->proc || eq->img))
			etm_tree_mem_changed(eq->tree);
		eq->proc = p;
		eq->gen = gen;
		eq->epoch = epoch;
		eq->img = p ? hwt_process_image(p, NULL) : NULL;
	}
}

/* The queue's tree, in the format the recording says (or its data
 * suggests): 0, or HWT_ERR_NOMEM / HWT_ERR_BAD_CONFIG. */
static int tree_start(struct etm_state *s, struct etm_queue *eq, const uint8_t *data, size_t size)
{
	int raw = s->seen_aux ? s->raw : starts_with_async(data, size);
	const struct etm_src *src = etm_meta_cpu(&s->meta, eq->q->cpu);
	if (!src)
		src = &s->meta.src[0];
	struct etm_tree_cbs cbs = {.arg = eq, .elem = on_elem, .fatal = on_fatal, .mem = on_mem};
	int err = etm_tree_alloc(&eq->tree, &s->meta, !raw, src, &cbs);
	if (err)
		hwt_dec_set_err(s->dec,
				"OpenCSD refused the ETM decoder setup of the recording's "
				"cs_etm AUXTRACE_INFO (%s)",
				hwt_errstr(err));
	eq->proc = NULL;
	eq->img = NULL;
	update_image(s, eq);
	return err;
}

/* Decode the held chunks (the format is known now, or never will be). */
static int release(struct etm_state *s, struct etm_queue *eq)
{
	if (eq->tree)
		return 0;
	int err = tree_start(s, eq, eq->held, eq->nheld);
	if (!err && eq->nheld)
		err = etm_tree_feed(eq->tree, eq->held, eq->nheld, eq->held_off);
	free(eq->held);
	eq->held = NULL;
	eq->nheld = eq->capheld = 0;
	return err;
}

static int etm_record(void *state, const struct hwt_perf_record *rec)
{
	struct etm_state *s = state;
	if (rec->type != PERF_RECORD_AUX || rec->size < sizeof(struct hwt_perf_rec_aux))
		return 0;
	struct hwt_perf_rec_aux a;
	memcpy(&a, rec->hdr, sizeof(a));
	if (s->seen_aux)
		return 0;
	s->raw = !!(a.flags & AUX_FLAG_RAW);
	s->seen_aux = 1;
	for (struct etm_queue *eq = s->queues; eq; eq = eq->next) {
		int err = release(s, eq);
		if (err)
			return err;
	}
	return 0;
}

static int etm_chunk(void *state, struct hwt_dec_queue *q, const uint8_t *data, size_t size,
		     uint64_t offset)
{
	struct etm_state *s = state;
	struct etm_queue *eq = q->fmt;
	if (!eq) {
		eq = queue_new(s, q);
		if (!eq)
			return HWT_ERR_NOMEM;
		q->fmt = eq;
	}
	if (!eq->tree && !s->seen_aux) { /* hold it (one stream: offsets follow on) */
		if (!eq->nheld)
			eq->held_off = offset;
		if (eq->nheld + size > eq->capheld) {
			size_t nc = (eq->nheld + size) * 2;
			uint8_t *nb = realloc(eq->held, nc);
			if (!nb)
				return HWT_ERR_NOMEM;
			eq->held = nb;
			eq->capheld = nc;
		}
		memcpy(eq->held + eq->nheld, data, size);
		eq->nheld += size;
		return 0;
	}
	int err = release(s, eq);
	if (err)
		return err;
	update_image(s, eq);
	return etm_tree_feed(eq->tree, data, size, offset);
}

static int etm_flush(void *state, struct hwt_dec_queue *q)
{
	struct etm_state *s = state;
	struct etm_queue *eq = q->fmt;
	if (!eq)
		return 0;
	int err = release(s, eq);
	if (!err) {
		update_image(s, eq);
		etm_tree_eot(eq->tree);
	}
	queue_free(s, eq);
	q->fmt = NULL;
	return err;
}

static void etm_free(void *state)
{
	struct etm_state *s = state;
	while (s->queues) {
		s->queues->q->fmt = NULL;
		queue_free(s, s->queues);
	}
	free(s);
}

const struct hwt_decoder_ops hwt_decoder_cs_etm = {
    .name = "cs_etm",
    .auxtrace_type = HWT_PERF_AUXTRACE_CS_ETM,
    .create = etm_create,
    .chunk = etm_chunk,
    .record = etm_record,
    .flush = etm_flush,
    .free = etm_free,
};
