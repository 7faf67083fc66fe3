/* lib/pt/insn.c - the instruction decoder: one executed instruction per
 * hwt_pt_insn_next() call.
 *
 * A thin shell over the flow engine (insn_flow.c), which it owns.  The
 * decoder owns its query decoder; the trace buffer and the image belong
 * to the caller and must outlive it.
 */
#include <stdlib.h>
#include <string.h>

#include "insn_int.h"

struct hwt_pt_insn_decoder {
	struct flow f;
};

struct hwt_pt_insn_decoder *hwt_pt_insn_alloc(const struct hwt_pt_config *cfg,
					      const struct hwt_image *img,
					      const struct hwt_pt_flow_options *opt)
{
	/* f is the first member: the flow engine allocates the whole object */
	return flow_alloc(sizeof(struct hwt_pt_insn_decoder), cfg, img, opt);
}

void hwt_pt_insn_free(struct hwt_pt_insn_decoder *d)
{
	flow_free(d ? &d->f : NULL);
}

int hwt_pt_insn_sync_forward(struct hwt_pt_insn_decoder *d)
{
	return flow_sync_forward(&d->f);
}

int hwt_pt_insn_next(struct hwt_pt_insn_decoder *d, struct hwt_pt_insn *insn)
{
	struct hwt_x86_insn xi;
	int have, trunc;
	memset(insn, 0, sizeof(*insn));
	insn->ip = d->f.ip;
	cache_bind(d->f.cache, d->f.img);
	int st = flow_step(&d->f, &xi, &have, &trunc);
	if (st < 0 && !have && d->f.err_deferred)
		insn->ip = 0;
	if (have) {
		insn->ip = xi.ip;
		insn->size = xi.size;
		insn->iclass = xi.iclass;
		insn->mode = xi.mode;
		insn->speculative = (uint8_t)d->f.speculative;
		insn->truncated = (uint8_t)trunc;
		memcpy(insn->raw, xi.raw, sizeof(insn->raw));
	}
	return st;
}

int hwt_pt_insn_event(struct hwt_pt_insn_decoder *d, struct hwt_pt_event *ev)
{
	return flow_event(&d->f, ev);
}

int hwt_pt_insn_offset(const struct hwt_pt_insn_decoder *d, uint64_t *offset)
{
	return hwt_pt_query_offset(d->f.q, offset);
}

int hwt_pt_insn_sync_offset(const struct hwt_pt_insn_decoder *d, uint64_t *offset)
{
	return hwt_pt_query_sync_offset(d->f.q, offset);
}

int hwt_pt_insn_time(const struct hwt_pt_insn_decoder *d, uint64_t *tsc, uint32_t *lost_mtc,
		     uint32_t *lost_cyc)
{
	return hwt_pt_query_time(d->f.q, tsc, lost_mtc, lost_cyc);
}

uint64_t hwt_pt_insn_ip(const struct hwt_pt_insn_decoder *d)
{
	return d->f.have_ip ? d->f.ip : 0;
}

int hwt_pt_insn_resync(struct hwt_pt_insn_decoder *d)
{
	return flow_resync(&d->f);
}
