/* lib/etm/flow.c - OpenCSD's generic trace elements -> the recording
 * decoder's flow (instructions, taken branches with their kind, events,
 * gaps) of one thread.
 *
 * An instruction range (executed instructions, the last one a branch or
 * not, taken or not) gives its instructions; when its last instruction is
 * a taken branch, the branch is held until the next range (or exception,
 * or inaccessible address) says where it went.  An exception remembers
 * its preferred return address: if trace resumes elsewhere, that is an
 * asynchronous transfer (a signal handler, an interrupt: HWT_BR_ASYNC and
 * an HWT_DEV_ASYNC event); a system call returning where it was taken
 * is no branch (EL1 is not traced).  Trace On gives an enabled event at
 * the next range.  Code the image does not have, lost sync (bad packets,
 * overflow) are gaps with their stream offset; a held branch is dropped
 * at a gap.  Branch kinds come from OpenCSD's own A64 classification of
 * the range's last instruction (type, link, return, conditional).
 */
#include <string.h>

#include "etm/etm_int.h"
#include "hwt/a64.h"
#include "hwt/error.h"
#include "hwt/perf_records.h"
#include "hwt/x86.h"

static uint8_t class_of(const ocsd_generic_trace_elem *e)
{
	if (e->last_i_type == OCSD_INSTR_BR) {
		if (e->last_i_subtype == OCSD_S_INSTR_BR_LINK)
			return HWT_INSN_CALL;
		return e->last_instr_cond ? HWT_INSN_JCC : HWT_INSN_JMP;
	}
	if (e->last_i_type == OCSD_INSTR_BR_INDIRECT) {
		if (e->last_i_subtype == OCSD_S_INSTR_BR_LINK)
			return HWT_INSN_CALL_IND;
		if (e->last_i_subtype == OCSD_S_INSTR_V8_RET)
			return HWT_INSN_RET;
		if (e->last_i_subtype == OCSD_S_INSTR_V8_ERET)
			return HWT_INSN_FAR_RET;
		return HWT_INSN_JMP_IND;
	}
	return HWT_INSN_OTHER;
}

void etm_flow_gap(struct etm_flow *f, uint64_t off, uint64_t ip, int err)
{
	f->have_br = 0;
	f->have_exc = 0;
	hwt_dec_emit_gap(f->dec, f->t, off, ip, err);
}

static void branch(struct etm_flow *f, uint64_t from, uint64_t to, int kind)
{
	hwt_dec_emit_branch(f->dec, f->t, from, to, kind, f->img, f->have_time, f->time_ns);
}

static void event(struct etm_flow *f, uint32_t type, uint64_t from, uint64_t ip)
{
	struct hwt_dec_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.ip = ip;
	ev.from = from;
	ev.have_time = (uint8_t)f->have_time;
	ev.time_ns = f->time_ns;
	ev.format = HWT_PERF_AUXTRACE_CS_ETM;
	hwt_dec_emit_event(f->dec, f->t, &ev);
}

static void insns(struct etm_flow *f, const ocsd_generic_trace_elem *e, uint8_t last_class)
{
	if (e->isa != ocsd_isa_aarch64)
		return; /* (A32/T32: not traced by the emulated unit; sizes vary) */
	uint32_t n = e->num_instr_range;
	struct hwt_dec_insn in;
	memset(&in, 0, sizeof(in));
	in.size = 4;
	in.mode = HWT_A64_MODE;
	for (uint32_t i = 0; i < n; i++) {
		in.ip = e->st_addr + 4ull * i;
		in.iclass = i + 1 == n ? last_class : HWT_INSN_OTHER;
		if (f->want_raw) {
			struct hwt_a64_insn a;
			if (hwt_image_read(f->img, in.ip, in.raw, 4) == 4 &&
			    !hwt_a64_decode(in.raw, 4, in.ip, &a) && i + 1 < n)
				in.iclass = a.iclass;
		}
		hwt_dec_emit_insn(f->dec, f->t, &in, f->img, f->have_time, f->time_ns);
	}
}

static void range(struct etm_flow *f, const ocsd_generic_trace_elem *e)
{
	uint64_t st = e->st_addr;
	if (f->have_br) {
		branch(f, f->br_from, st, f->br_kind);
		f->have_br = 0;
	} else if (f->have_exc && f->exc_ret != st) {
		branch(f, f->exc_ret, st, HWT_BR_ASYNC);
		event(f, HWT_DEV_ASYNC, f->exc_ret, st);
	}
	f->have_exc = 0;
	if (f->trace_on) {
		event(f, HWT_DEV_ENABLED, 0, st);
		f->trace_on = 0;
	}
	uint8_t cls = class_of(e);
	if (f->want_insn)
		insns(f, e, cls);
	if (e->last_instr_exec && cls != HWT_INSN_OTHER) {
		f->have_br = 1;
		f->br_from = e->en_addr - (e->last_instr_sz ? e->last_instr_sz : 4);
		f->br_kind = (uint8_t)hwt_branch_kind_of(cls);
	}
}

void etm_flow_elem(struct etm_flow *f, uint64_t off, const ocsd_generic_trace_elem *e)
{
	switch (e->elem_type) {
	case OCSD_GEN_TRC_ELEM_INSTR_RANGE:
		range(f, e);
		break;
	case OCSD_GEN_TRC_ELEM_EXCEPTION:
		if (e->excep_ret_addr) {
			if (f->have_br) /* taken, then the exception at its target */
				branch(f, f->br_from, e->en_addr, f->br_kind);
			f->have_exc = 1;
			f->exc_ret = e->en_addr;
		}
		f->have_br = 0;
		break;
	case OCSD_GEN_TRC_ELEM_TRACE_ON:
		f->trace_on = 1;
		f->have_br = 0; /* (its target is not traced) */
		break;
	case OCSD_GEN_TRC_ELEM_ADDR_NACC:
		if (f->have_br)
			branch(f, f->br_from, e->st_addr, f->br_kind);
		f->have_br = 0;
		f->have_exc = 0;
		etm_flow_gap(f, off, e->st_addr, HWT_ERR_NOMAP);
		break;
	case OCSD_GEN_TRC_ELEM_NO_SYNC:
		if (e->unsync_eot_info == UNSYNC_BAD_PACKET)
			etm_flow_gap(f, off, 0, HWT_ERR_BAD_PACKET);
		else if (e->unsync_eot_info == UNSYNC_OVERFLOW)
			etm_flow_gap(f, off, 0, HWT_ERR_OVERFLOW);
		f->have_br = 0;
		f->have_exc = 0;
		break;
	case OCSD_GEN_TRC_ELEM_EO_TRACE:
		f->have_br = 0; /* its target is not in the trace */
		f->have_exc = 0;
		break;
	case OCSD_GEN_TRC_ELEM_TIMESTAMP:
		f->have_time = 1;
		f->time_ns = hwt_decoder_tsc_to_ns(f->dec, e->timestamp);
		break;
	default:
		break;
	}
}
