/* lib/spe/decode.c - Arm SPE in the recording decoder (hwt/decode.h): the
 * decoder ops of AUXTRACE type 4 (arm_spe).
 *
 * Each AUXTRACE chunk is decoded as it comes with the record decoder
 * (hwt/spe.h); every record becomes one hwt_dec_sample of the queue's
 * thread: ip = PC, addr = the data virtual address (loads/stores) or the
 * branch target (branches), weight = total latency, lat_issue, lat_xlat,
 * op = the Operation packet's class << 8 | its payload, flags from the
 * operation and its events, data_src as perf maps SPE events
 * (hwt_spe_data_src), time from the Timestamp packet (converted with the
 * recording's TIME_CONV), raw = the struct hwt_spe_record.  Damaged data
 * is a gap (HWT_ERR_BAD_PACKET at its offset) and decoding goes on at the
 * next whole record.  Per-CPU queues: the thread is the Context packet's
 * (CONTEXTIDR_EL1 holds the tid when the kernel writes it), else the one
 * the CPU's switch timeline says ran at the record's time.
 * Ownership: no per-queue state; nothing is held across chunks (a record
 * cut by a chunk's end is a gap: hardware and hwt's emulated unit write
 * whole records per AUX piece).
 */
#include <stdlib.h>
#include <string.h>

#include "decode/decode_int.h"
#include "hwt/decode.h"
#include "hwt/spe.h"

struct spe_state {
	struct hwt_decoder *dec;
	uint32_t pmu_type;
};

static int spe_create(struct hwt_decoder *dec, const uint64_t *priv, size_t npriv, void **state)
{
	struct spe_state *s = calloc(1, sizeof(*s));
	if (!s)
		return HWT_ERR_NOMEM;
	s->dec = dec;
	s->pmu_type = npriv ? (uint32_t)priv[0] : 0;
	*state = s;
	return 0;
}

static uint32_t sample_flags(const struct hwt_spe_record *r)
{
	uint32_t f = 0, e = r->events;
	if (r->op_class == HWT_SPE_OP_LDST && (r->flags & HWT_SPE_HAVE_VA)) {
		f |= r->op_bits & 1 ? HWT_DSF_STORE : HWT_DSF_LOAD;
		f |= HWT_DSF_HAVE_ADDR;
		if ((r->op_bits & 6) == 6)
			f |= HWT_DSF_ATOMIC;
		else if ((r->op_bits & 0xfe) == 4)
			f |= HWT_DSF_SIMD;
		if (e & HWT_SPE_EV_L1D_REFILL)
			f |= HWT_DSF_L1_MISS;
		if (e & HWT_SPE_EV_LLC_MISS)
			f |= HWT_DSF_LLC_MISS;
		if (e & HWT_SPE_EV_TLB_WALK)
			f |= HWT_DSF_TLB_MISS;
		if (e & HWT_SPE_EV_REMOTE)
			f |= HWT_DSF_REMOTE;
	} else if (r->op_class == HWT_SPE_OP_BRANCH) {
		f |= HWT_DSF_BRANCH;
		if (!(e & HWT_SPE_EV_NOT_TAKEN))
			f |= HWT_DSF_TAKEN;
		if (e & HWT_SPE_EV_MISPRED)
			f |= HWT_DSF_MISPRED;
		if (r->flags & HWT_SPE_HAVE_TARGET)
			f |= HWT_DSF_HAVE_ADDR;
	}
	if (r->flags & HWT_SPE_HAVE_PA)
		f |= HWT_DSF_HAVE_PHYS;
	return f;
}

static void emit(struct spe_state *s, struct hwt_dec_queue *q, const struct hwt_spe_record *r)
{
	uint64_t ns = r->flags & HWT_SPE_HAVE_TS ? hwt_decoder_tsc_to_ns(s->dec, r->ts) : 0;
	uint32_t tid = q->tid;
	if (q->per_cpu || tid == (uint32_t)-1) {
		if (r->flags & HWT_SPE_HAVE_CONTEXT) {
			tid = r->context;
		} else {
			size_t cur = 0;
			tid = hwt_dec_cpu_tid_at(s->dec, q->cpu, ns, &cur);
		}
	}
	struct hwt_dec_thread *t =
	    tid == (uint32_t)-1 ? NULL : hwt_dec_thread_get(s->dec, tid, (uint32_t)-1);
	struct hwt_dec_sample smp;
	memset(&smp, 0, sizeof(smp));
	smp.pid = t ? t->pid : (uint32_t)-1;
	smp.tid = tid;
	smp.cpu = q->cpu;
	smp.flags = sample_flags(r);
	if (r->flags & HWT_SPE_HAVE_TS) {
		smp.flags |= HWT_DSF_HAVE_TIME;
		smp.time_ns = ns;
	}
	smp.ip = r->pc;
	if (r->op_class == HWT_SPE_OP_BRANCH)
		smp.addr = r->target;
	else if (r->flags & HWT_SPE_HAVE_VA)
		smp.addr = r->va;
	smp.phys_addr = r->pa;
	smp.weight = r->lat_total;
	smp.lat_issue = r->lat_issue;
	smp.lat_xlat = r->lat_xlat;
	smp.data_src = hwt_spe_data_src(r);
	smp.op = (uint32_t)r->op_class << 8 | r->op_bits;
	smp.format = 4; /* PERF_AUXTRACE_ARM_SPE */
	smp.raw = r;
	smp.raw_size = sizeof(*r);
	hwt_dec_emit_sample(s->dec, t, &smp);
}

static int spe_chunk(void *state, struct hwt_dec_queue *q, const uint8_t *data, size_t size,
		     uint64_t offset)
{
	struct spe_state *s = state;
	struct hwt_spe_config cfg;
	hwt_spe_config_init(&cfg);
	cfg.begin = data;
	cfg.end = data + size;
	cfg.offset = offset;
	struct hwt_spe_decoder *d = hwt_spe_alloc(&cfg);
	if (!d)
		return HWT_ERR_NOMEM;
	struct hwt_spe_record r;
	int st;
	while ((st = hwt_spe_next(d, &r)) != HWT_ERR_EOS) {
		if (st < 0) {
			uint64_t at = offset;
			hwt_spe_offset(d, &at);
			hwt_dec_emit_gap(s->dec,
					 q->tid == (uint32_t)-1
					     ? NULL
					     : hwt_dec_thread_get(s->dec, q->tid, (uint32_t)-1),
					 at, 0, st);
			continue;
		}
		emit(s, q, &r);
	}
	hwt_spe_free(d);
	return 0;
}

static int spe_flush(void *state, struct hwt_dec_queue *q)
{
	(void)state;
	(void)q;
	return 0;
}

static void spe_free(void *state)
{
	free(state);
}

const struct hwt_decoder_ops hwt_decoder_arm_spe = {
    .name = "arm_spe",
    .auxtrace_type = 4, /* PERF_AUXTRACE_ARM_SPE */
    .create = spe_create,
    .chunk = spe_chunk,
    .flush = spe_flush,
    .free = spe_free,
};
