/* lib/etm/dump.c - ETMv4 packet listing (hwt/etm.h) on OpenCSD's C API.
 *
 * One decode tree per call: a frame deformatter (memory-aligned frames)
 * or a single raw source, one ETMv4 instruction packet processor per
 * source (packet processing only, no instruction decode, so no memory
 * image is needed), OpenCSD's packet printer for the text.  Data goes in
 * as one block, then end-of-trace.  The tree is destroyed before return.
 */
#include <stdio.h>
#include <string.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "hwt/error.h"
#include "hwt/etm.h"

void hwt_etm_source_default(struct hwt_etm_source *s, uint8_t id)
{
	memset(s, 0, sizeof(*s));
	s->trace_id = id;
	s->idr0 = 0x28000ea1u;
	s->idr1 = 0x4100f403u;
	s->idr2 = 0x00000488u;
	s->idr8 = 0;
}

struct ctx {
	hwt_etm_packet_cb cb;
	void *arg;
	uint8_t id;
	int stop;
};

static ocsd_datapath_resp_t on_packet(const void *p_context, const ocsd_datapath_op_t op,
				      const ocsd_trc_index_t index_sop, const void *p_packet_in)
{
	struct ctx *c = (struct ctx *)p_context;
	if (op != OCSD_OP_DATA || !p_packet_in || c->stop)
		return c->stop ? OCSD_RESP_FATAL_SYS_ERR : OCSD_RESP_CONT;
	char text[512];
	if (ocsd_pkt_str(OCSD_PROTOCOL_ETMV4I, p_packet_in, text, sizeof(text)) != OCSD_OK)
		snprintf(text, sizeof(text), "(packet not printable)");
	if (c->cb(c->arg, index_sop, c->id, text))
		c->stop = 1;
	return c->stop ? OCSD_RESP_FATAL_SYS_ERR : OCSD_RESP_CONT;
}

int hwt_etm_dump(const struct hwt_etm_dump_config *cfg, const uint8_t *data, size_t size,
		 hwt_etm_packet_cb cb, void *arg)
{
	if (!cfg || cfg->size < sizeof(*cfg) || !cb || (!data && size) || !cfg->nsrc ||
	    cfg->nsrc > 128 || (!cfg->formatted && cfg->nsrc != 1))
		return HWT_ERR_INVALID;
	dcd_tree_handle_t t = ocsd_create_dcd_tree(
	    cfg->formatted ? OCSD_TRC_SRC_FRAME_FORMATTED : OCSD_TRC_SRC_SINGLE,
	    cfg->formatted ? OCSD_DFRMTR_FRAME_MEM_ALIGN : 0);
	if (t == C_API_INVALID_TREE_HANDLE)
		return HWT_ERR_NOMEM;
	struct ctx ctx[128];
	int r = 0;
	for (size_t i = 0; i < cfg->nsrc && !r; i++) {
		const struct hwt_etm_source *s = &cfg->src[i];
		ocsd_etmv4_cfg c;
		memset(&c, 0, sizeof(c));
		c.reg_idr0 = s->idr0;
		c.reg_idr1 = s->idr1;
		c.reg_idr2 = s->idr2;
		c.reg_idr8 = s->idr8;
		c.reg_configr = s->configr;
		c.reg_traceidr = s->trace_id;
		c.arch_ver = ARCH_V8;
		c.core_prof = profile_CortexA;
		unsigned char csid = 0;
		ctx[i] = (struct ctx){.cb = cb, .arg = arg, .id = s->trace_id};
		if (ocsd_dt_create_decoder(t, OCSD_BUILTIN_DCD_ETMV4I, OCSD_CREATE_FLG_PACKET_PROC,
					   &c, &csid) != OCSD_OK ||
		    ocsd_dt_attach_packet_callback(t, csid, OCSD_C_API_CB_PKT_SINK, on_packet,
						   &ctx[i]) != OCSD_OK)
			r = HWT_ERR_INVALID;
	}
	size_t done = 0;
	while (!r && done < size) {
		uint32_t used = 0;
		size_t n = size - done > 0x40000000 ? 0x40000000 : size - done;
		ocsd_datapath_resp_t resp =
		    ocsd_dt_process_data(t, OCSD_OP_DATA, done, (uint32_t)n, data + done, &used);
		int stopped = 0;
		for (size_t i = 0; i < cfg->nsrc; i++)
			stopped |= ctx[i].stop;
		if (stopped)
			break;
		if (OCSD_DATA_RESP_IS_FATAL(resp)) {
			/* damaged data the packet processor cannot get past:
			 * start over after it (it resynchronises at an A-sync) */
			ocsd_dt_process_data(t, OCSD_OP_RESET, 0, 0, NULL, NULL);
			if (!used)
				used = 1;
		}
		done += used ? used : n;
	}
	if (!r)
		ocsd_dt_process_data(t, OCSD_OP_EOT, 0, 0, NULL, NULL);
	ocsd_destroy_dcd_tree(t);
	return r;
}
