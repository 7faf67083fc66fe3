/* lib/pt/query_evtrace.c - event trace packets (CFE, EVD) and TRIG.
 *
 * EVD packets carry data (CR2, VMX exit qualification and reason) for
 * the CFE that follows; the data must fit the CFE's type, else the trace
 * is out of context.  A CFE names a control-flow event.  Two kinds:
 *  - events at an ip (interrupt, SMI, INIT, VM exit, ...): they wait for
 *    the next FUP (with the CFE's IP bit the ip is reported, without it
 *    the ip only places the event); that FUP may also start an
 *    asynchronous branch;
 *  - events after an instruction (IRET, UIRET, VM entry): with the IP bit
 *    the FUP names the instruction; without it they bind to the next far
 *    transfer.  Their FUP is no async branch: the instruction's own TIP
 *    follows.
 * TRIG reports a trigger; with its IP bit it binds to the next FUP.
 */
#include <string.h>

#include "query_int.h"

enum {
	CFE_INTR = 1,
	CFE_IRET,
	CFE_SMI,
	CFE_RSM,
	CFE_SIPI,
	CFE_INIT,
	CFE_VMENTRY,
	CFE_VMEXIT,
	CFE_VMEXIT_INTR,
	CFE_SHUTDOWN,
	CFE_UINTR = 12,
	CFE_UIRET,
	CFE_SWINTR,
	CFE_SYSCALL
};
enum { EVD_CR2 = 0, EVD_VMXQ = 1, EVD_VMXR = 2 };

int qry_cfe_after_insn(int type)
{
	return type == HWT_EV_IRET || type == HWT_EV_UIRET || type == HWT_EV_VMENTRY;
}

static int cfe_event(int cfe)
{
	switch (cfe) {
	case CFE_INTR:
		return HWT_EV_INTERRUPT;
	case CFE_IRET:
		return HWT_EV_IRET;
	case CFE_SMI:
		return HWT_EV_SMI;
	case CFE_RSM:
		return HWT_EV_RSM;
	case CFE_SIPI:
		return HWT_EV_SIPI;
	case CFE_INIT:
		return HWT_EV_INIT;
	case CFE_VMENTRY:
		return HWT_EV_VMENTRY;
	case CFE_VMEXIT:
	case CFE_VMEXIT_INTR:
		return HWT_EV_VMEXIT;
	case CFE_SHUTDOWN:
		return HWT_EV_SHUTDOWN;
	case CFE_UINTR:
		return HWT_EV_UINTR;
	case CFE_UIRET:
		return HWT_EV_UIRET;
	case CFE_SWINTR:
		return HWT_EV_SWINTR;
	case CFE_SYSCALL:
		return HWT_EV_SYSCALL;
	default:
		return -1;
	}
}

int qry_event_trace(struct hwt_pt_query *q, struct hwt_pt_packet *p)
{
	struct hwt_pt_event ev;

	if (p->type == HWT_PKT_EVD) {
		switch (p->u.evd.type) {
		case EVD_CR2:
			q->have_evd_cr2 = 1;
			q->evd_cr2 = p->u.evd.payload;
			break;
		case EVD_VMXQ:
			q->have_evd_vmxq = 1;
			q->evd_vmxq = p->u.evd.payload;
			break;
		case EVD_VMXR:
			q->have_evd_vmxr = 1;
			q->evd_vmxr = p->u.evd.payload;
			break;
		default:
			break; /* unknown data: ignored */
		}
		if (q->have_evd_cr2 && (q->have_evd_vmxq || q->have_evd_vmxr))
			return HWT_ERR_BAD_CONTEXT; /* no event has both */
		q->la_valid = 0;
		return 0;
	}
	if (p->type == HWT_PKT_TRIG) {
		memset(&ev, 0, sizeof(ev));
		ev.type = HWT_EV_TRIG;
		ev.u.trig.trbv = p->u.trig.trbv;
		ev.u.trig.mult = p->u.trig.mult;
		ev.u.trig.icntv = p->u.trig.icntv;
		ev.u.trig.icnt = p->u.trig.icnt;
		q->la_valid = 0;
		return qry_trig(q, &ev, p->u.trig.ip);
	}
	/* CFE */
	int type = cfe_event(p->u.cfe.type);
	int cr2 = q->have_evd_cr2, vmx = q->have_evd_vmxq || q->have_evd_vmxr;
	if (type == HWT_EV_INTERRUPT ? vmx : type == HWT_EV_VMEXIT ? cr2 : (cr2 || vmx))
		return HWT_ERR_BAD_CONTEXT;
	q->la_valid = 0;
	memset(&ev, 0, sizeof(ev));
	ev.type = (uint8_t)(type < 0 ? HWT_EV_NTYPES : type);
	switch (type) {
	case HWT_EV_INTERRUPT:
		ev.u.interrupt.vector = p->u.cfe.vector;
		ev.u.interrupt.has_cr2 = (uint8_t)cr2;
		ev.u.interrupt.cr2 = q->evd_cr2;
		break;
	case HWT_EV_SIPI:
		ev.u.sipi.vector = p->u.cfe.vector;
		break;
	case HWT_EV_SWINTR:
		ev.u.swintr.vector = p->u.cfe.vector;
		break;
	case HWT_EV_UINTR:
		ev.u.uintr.vector = p->u.cfe.vector;
		break;
	case HWT_EV_VMEXIT:
		ev.u.vmexit.has_vector = p->u.cfe.type == CFE_VMEXIT_INTR;
		ev.u.vmexit.vector = p->u.cfe.vector;
		ev.u.vmexit.has_vmxq = (uint8_t)q->have_evd_vmxq;
		ev.u.vmexit.vmxq = q->evd_vmxq;
		ev.u.vmexit.has_vmxr = (uint8_t)q->have_evd_vmxr;
		ev.u.vmexit.vmxr = q->evd_vmxr;
		break;
	default:
		break;
	}
	q->have_evd_cr2 = q->have_evd_vmxq = q->have_evd_vmxr = 0;
	return qry_cfe(q, &ev, p->u.cfe.ip);
}
