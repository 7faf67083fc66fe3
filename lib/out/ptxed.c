/* lib/out/ptxed.c - ptxed-compatible output of the instruction flow.
 *
 * The driver loop is the one ptxed uses: sync forward, then alternately
 * drain pending events and decode the next instruction (or block); on an
 * error print it and, with resync_on_error, try to pick the flow up again
 * at the next IP the trace gives, else sync forward to the next PSB.  The
 * line formats follow the corpus README (libipt-ptt).
 */
#include <inttypes.h>
#include <string.h>

#include "out/ptxed.h"

static const char *mode_name(int mode)
{
	switch (mode) {
	case 16:
		return "16-bit";
	case 32:
		return "32-bit";
	case 64:
		return "64-bit";
	default:
		return "unknown";
	}
}

static void print_event(FILE *o, const struct hwt_pt_event *ev, const struct hwt_ptxed_options *opt)
{
	int ipok = !ev->ip_suppressed && !ev->ip_hidden;
	fputc('[', o);
	if (opt->event_time && ev->has_tsc)
		fprintf(o, "%016" PRIx64 "  ", ev->tsc);
	switch (ev->type) {
	case HWT_EV_ENABLED:
		fputs(ev->u.enabled.resumed ? "resumed" : "enabled", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_DISABLED:
		fputs("disabled", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_ASYNC_DISABLED:
		fputs("disabled", o);
		if (opt->event_ip) {
			fprintf(o, ", at: %016" PRIx64, ev->u.async_disabled.at);
			if (ipok)
				fprintf(o, ", ip: %016" PRIx64, ev->ip);
		}
		break;
	case HWT_EV_ASYNC_BRANCH:
		fputs("interrupt", o);
		if (opt->event_ip) {
			fprintf(o, ", from: %016" PRIx64, ev->u.async_branch.from);
			if (ipok)
				fprintf(o, ", to: %016" PRIx64, ev->ip);
		}
		break;
	case HWT_EV_PAGING:
		fprintf(o, "paging, cr3: %016" PRIx64 "%s", ev->u.paging.cr3,
			ev->u.paging.non_root ? ", nr" : "");
		break;
	case HWT_EV_ASYNC_PAGING:
		fprintf(o, "paging, cr3: %016" PRIx64 "%s", ev->u.paging.cr3,
			ev->u.paging.non_root ? ", nr" : "");
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_OVERFLOW:
		fputs("overflow", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_EXEC_MODE:
		fprintf(o, "exec mode: %s", mode_name(ev->u.exec_mode.mode));
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_TSX:
		if (ev->u.tsx.aborted)
			fputs("aborted", o);
		else if (ev->u.tsx.speculative)
			fputs("begin transaction", o);
		else
			fputs("committed", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_STOP:
		fputs("stopped", o);
		break;
	case HWT_EV_VMCS:
		fprintf(o, "vmcs, base: %016" PRIx64, ev->u.vmcs.base);
		break;
	case HWT_EV_ASYNC_VMCS:
		fprintf(o, "vmcs, base: %016" PRIx64, ev->u.vmcs.base);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_EXSTOP:
		fputs("exstop", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_MWAIT:
		fprintf(o, "mwait %" PRIx32 " %" PRIx32, ev->u.mwait.hints, ev->u.mwait.ext);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_PWRE:
		fprintf(o, "pwre c%u.%u%s", (ev->u.pwre.state + 1) & 0xf,
			(ev->u.pwre.sub_state + 1) & 0xf, ev->u.pwre.hw ? " hw" : "");
		break;
	case HWT_EV_PWRX:
		fprintf(o, "pwrx %s: c%u (c%u)",
			ev->u.pwrx.interrupt ? "int"
			: ev->u.pwrx.store   ? "st"
					     : "hw",
			(ev->u.pwrx.last + 1) & 0xf, (ev->u.pwrx.deepest + 1) & 0xf);
		break;
	case HWT_EV_PTWRITE:
		fprintf(o, "ptwrite: %" PRIx64, ev->u.ptwrite.payload);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_TICK:
		fputs("tick", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_CBR:
		fprintf(o, "cbr: %x", ev->u.cbr.ratio);
		break;
	case HWT_EV_MNT:
		fprintf(o, "mnt: %" PRIx64, ev->u.mnt.payload);
		break;
	case HWT_EV_IFLAGS:
		fputs(ev->u.iflags.iflag ? "interrupts enabled" : "interrupts disabled", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_INTERRUPT:
		fprintf(o, "interrupt %u", ev->u.interrupt.vector);
		if (ev->u.interrupt.has_cr2)
			fprintf(o, ", cr2: %016" PRIx64, ev->u.interrupt.cr2);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_IRET:
	case HWT_EV_SMI:
	case HWT_EV_RSM:
	case HWT_EV_INIT:
	case HWT_EV_SHUTDOWN:
	case HWT_EV_SYSCALL:
	case HWT_EV_UIRET:
	case HWT_EV_VMENTRY: {
		static const char *const nm[] = {
		    [HWT_EV_IRET] = "iret",	    [HWT_EV_SMI] = "smi",
		    [HWT_EV_RSM] = "rsm",	    [HWT_EV_INIT] = "init",
		    [HWT_EV_SHUTDOWN] = "shutdown", [HWT_EV_SYSCALL] = "syscall",
		    [HWT_EV_UIRET] = "uiret",	    [HWT_EV_VMENTRY] = "vmentry",
		};
		fputs(nm[ev->type], o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	}
	case HWT_EV_SIPI:
		fprintf(o, "sipi: %x", ev->u.sipi.vector);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_SWINTR:
		fprintf(o, "swintr %u", ev->u.swintr.vector);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_UINTR:
		fprintf(o, "uintr %u", ev->u.uintr.vector);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_VMEXIT:
		fputs("vmexit", o);
		if (ev->u.vmexit.has_vector)
			fprintf(o, ", intr: %u", ev->u.vmexit.vector);
		if (ev->u.vmexit.has_vmxr)
			fprintf(o, ", vmxr: %016" PRIx64, ev->u.vmexit.vmxr);
		if (ev->u.vmexit.has_vmxq)
			fprintf(o, ", vmxq: %016" PRIx64, ev->u.vmexit.vmxq);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_TRIG:
		fprintf(o, "trig %02x", ev->u.trig.trbv);
		if (ev->u.trig.mult)
			fputs(", mult", o);
		if (opt->event_ip && ipok)
			fprintf(o, ", ip: %016" PRIx64, ev->ip);
		break;
	case HWT_EV_EOT:
		fputs("end of trace", o);
		break;
	default:
		fprintf(o, "event %u", ev->type);
		break;
	}
	fputs("]\n", o);
}

/* The decoder behind a small vtable so one loop serves both. */
struct dec {
	int block;
	struct hwt_pt_insn_decoder *insn;
	struct hwt_pt_block_decoder *blk;
};

static int d_sync(struct dec *d)
{
	return d->block ? hwt_pt_block_sync_forward(d->blk) : hwt_pt_insn_sync_forward(d->insn);
}
static int d_event(struct dec *d, struct hwt_pt_event *ev)
{
	return d->block ? hwt_pt_block_event(d->blk, ev) : hwt_pt_insn_event(d->insn, ev);
}
static int d_offset(struct dec *d, uint64_t *off)
{
	return d->block ? hwt_pt_block_offset(d->blk, off) : hwt_pt_insn_offset(d->insn, off);
}
static int d_sync_offset(struct dec *d, uint64_t *off)
{
	return d->block ? hwt_pt_block_sync_offset(d->blk, off)
			: hwt_pt_insn_sync_offset(d->insn, off);
}
static int d_resync(struct dec *d)
{
	return d->block ? hwt_pt_block_resync(d->blk) : hwt_pt_insn_resync(d->insn);
}

static void diagnose(FILE *o, struct dec *d, const char *kind, uint64_t ip, int err)
{
	uint64_t off = 0;
	if (d_offset(d, &off) < 0)
		fprintf(o, "[?, %" PRIx64 ": %s: %s]\n", ip, kind, hwt_errstr(err));
	else
		fprintf(o, "[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", off, ip, kind, hwt_errstr(err));
}

static int drain(FILE *o, struct dec *d, int status, const struct hwt_ptxed_options *opt)
{
	while (status >= 0 && (status & HWT_PTS_EVENT_PENDING)) {
		struct hwt_pt_event ev;
		status = d_event(d, &ev);
		if (status < 0)
			return status;
		if (ev.type == HWT_EV_TICK && !opt->event_tick)
			continue;
		if (ev.type == HWT_EV_IFLAGS && !opt->event_iflags)
			continue;
		if (!opt->quiet && !ev.status_update)
			print_event(o, &ev, opt);
	}
	return status;
}

/* Decode one run after a sync; returns the final error (HWT_ERR_EOS at the
 * end) and *ip of the failing instruction. */
static int run(FILE *o, struct dec *d, int status, const struct hwt_ptxed_options *opt,
	       struct hwt_ptxed_stats *stats, uint64_t *ip)
{
	for (;;) {
		*ip = 0;
		status = drain(o, d, status, opt);
		if (status < 0)
			return status;
		if (status & HWT_PTS_EOS) {
			if (!(status & HWT_PTS_IP_SUPPRESSED) && !opt->quiet)
				fputs("[end of trace]\n", o);
			return HWT_ERR_EOS;
		}
		if (d->block) {
			struct hwt_pt_block b;
			status = hwt_pt_block_next(d->blk, &b);
			*ip = b.ip;
			if (b.ninsn) {
				stats->blocks++;
				stats->insn += b.ninsn;
				if (!opt->quiet) {
					if (opt->show_blocks)
						fputs("[block]\n", o);
					for (uint32_t i = 0; i < b.ninsn; i++)
						fprintf(o, "%s%016" PRIx64 "\n",
							b.speculative ? "? " : "", b.ips[i]);
				}
				*ip = b.end_ip;
			}
			if (status < 0)
				return status;
		} else {
			struct hwt_pt_insn in;
			status = hwt_pt_insn_next(d->insn, &in);
			*ip = in.ip;
			if (in.size) {
				stats->insn++;
				if (!opt->quiet)
					fprintf(o, "%s%016" PRIx64 "\n", in.speculative ? "? " : "",
						in.ip);
			}
			if (status < 0)
				return status;
		}
	}
}

int hwt_ptxed_run(FILE *o, const struct hwt_pt_config *cfg, const struct hwt_image *img,
		  const struct hwt_ptxed_options *opt, struct hwt_ptxed_stats *stats)
{
	struct hwt_pt_flow_options fo;
	struct dec d = {0};
	uint64_t sync = 0;
	int have_sync = 0;

	memset(stats, 0, sizeof(*stats));
	memset(&fo, 0, sizeof(fo));
	fo.size = sizeof(fo);
	fo.query.size = sizeof(fo.query);
	fo.query.keep_tcal_on_ovf = opt->keep_tcal_on_ovf;
	fo.query.enable_tick_events = opt->event_tick;
	fo.query.enable_iflags_events = opt->event_iflags;
	fo.end_on_call = opt->end_on_call;
	fo.end_on_jump = opt->end_on_jump;
	d.block = opt->block_decoder;
	if (d.block)
		d.blk = hwt_pt_block_alloc(cfg, img, &fo);
	else
		d.insn = hwt_pt_insn_alloc(cfg, img, &fo);
	if (!d.blk && !d.insn)
		return HWT_ERR_NOMEM;

	for (;;) {
		uint64_t ip = 0;
		int status = d_sync(&d);
		if (status < 0) {
			uint64_t ns;
			if (status == HWT_ERR_EOS)
				break;
			diagnose(o, &d, "sync error", 0, status);
			if (d_sync_offset(&d, &ns) < 0 || (have_sync && ns <= sync))
				break;
			sync = ns;
			have_sync = 1;
			continue;
		}
		d_sync_offset(&d, &sync);
		have_sync = 1;
		status = run(o, &d, status, opt, stats, &ip);
		uint64_t last_off = UINT64_MAX, last_ip = 0;
		int last_err = 0;
		while (status != HWT_ERR_EOS) {
			uint64_t off = UINT64_MAX;
			d_offset(&d, &off);
			if (off == last_off && ip == last_ip && status == last_err)
				break; /* no progress since the last resync: sync forward */
			diagnose(o, &d, "error", ip, status);
			last_off = off;
			last_ip = ip;
			last_err = status;
			if (!opt->resync_on_error)
				break;
			int rs = d_resync(&d);
			if (rs < 0) {
				if (rs == HWT_ERR_EOS) {
					status = rs;
					break;
				}
				diagnose(o, &d, "resync error", ip, rs);
				break;
			}
			status = run(o, &d, rs, opt, stats, &ip);
		}
		if (status == HWT_ERR_EOS)
			break;
	}
	if (opt->stat_insn || opt->stat_blocks) {
		if (opt->stat_insn)
			fprintf(o, "insn: %" PRIu64 ".\n", stats->insn);
		if (opt->stat_blocks)
			fprintf(o, "blocks: %" PRIu64 ".\n", stats->blocks);
	} else if (opt->stat) {
		fprintf(o, "insn: %" PRIu64 ".\n", stats->insn);
		if (d.block)
			fprintf(o, "blocks: %" PRIu64 ".\n", stats->blocks);
	}
	if (d.block)
		hwt_pt_block_free(d.blk);
	else
		hwt_pt_insn_free(d.insn);
	return 0;
}
