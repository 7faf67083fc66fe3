/* lib/out/ptdump.c - ptdump-compatible packet lines (see ptdump.h).
 *
 * Design: a packet is first rendered into fixed fields (offset, raw,
 * mnemonic, payload, tracking id/value), then the fields are joined with
 * ptdump's column widths.  Numbers are formatted by hand (no printf in the
 * per-packet path) so that dumping hundreds of MiB stays fast; only the
 * rare calibration column uses snprintf for its "%.3f".
 *
 * Ownership: struct hwt_ptdump owns its time tracker; the caller owns the
 * packet, the raw bytes and the output buffer.  Limits: each field holds
 * up to 63 characters (the longest, a TNT-64 payload, has 47), and one
 * packet's text (at most 5 diagnostics and one line) stays well within
 * HWT_PTDUMP_MAX_TEXT; writes beyond it are cut, never overflow.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/ptdump.h"

struct hwt_ptdump {
	struct hwt_ptdump_opts o;
	struct hwt_pt_last_ip lip;
	struct hwt_pt_time *time; /* NULL unless --time or --tcal */
	uint64_t last_tsc;	  /* for --time-delta */
	uint64_t last_fcr;	  /* for --time-delta with --tcal */
};

/* A small append-only string with a fixed capacity. */
struct field {
	char s[64];
	unsigned n;
};

static void f_clear(struct field *f)
{
	f->n = 0;
	f->s[0] = 0;
}

static void f_str(struct field *f, const char *s)
{
	while (*s && f->n < sizeof(f->s) - 1)
		f->s[f->n++] = *s++;
	f->s[f->n] = 0;
}

static const char hexdig[] = "0123456789abcdef";

/* Hex digits needed for v (at least 1). */
static unsigned hex_len(uint64_t v)
{
	return v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
}

/* "00" .. "ff": two digits per table lookup. */
static const char hex2[513] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
			      "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
			      "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
			      "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
			      "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
			      "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
			      "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
			      "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* 8 hex digits of a 32-bit value at d: spread the nibbles into bytes,
 * turn each into its ASCII digit in parallel, most significant first. */
static void put_hex8(char *d, uint32_t v)
{
	uint64_t x = v, ge10;

	x = ((x & 0xffff0000ull) << 16) | (x & 0xffffull);
	x = ((x & 0x0000ff000000ff00ull) << 8) | (x & 0x000000ff000000ffull);
	x = ((x & 0x00f000f000f000f0ull) << 4) | (x & 0x000f000f000f000full);
	/* byte i now holds nibble i; 0x01 in the bytes holding 10..15 */
	ge10 = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
	x += 0x3030303030303030ull + ge10 * ('a' - '0' - 10);
	x = __builtin_bswap64(x);
	memcpy(d, &x, 8);
}

/* Write v as exactly n hex digits ending at d + n. */
static void put_hex(char *d, uint64_t v, unsigned n)
{
	if (n == 16) {
		put_hex8(d, (uint32_t)(v >> 32));
		put_hex8(d + 8, (uint32_t)v);
		return;
	}
	while (n >= 2) {
		n -= 2;
		memcpy(d + n, hex2 + 2 * (v & 0xff), 2);
		v >>= 8;
	}
	if (n)
		d[0] = hexdig[v & 0xf];
}

/* v in hex, at least `width` digits (zero-padded). */
static void f_hex(struct field *f, uint64_t v, unsigned width)
{
	unsigned n = hex_len(v);

	if (n < width)
		n = width;
	if (f->n + n >= sizeof(f->s))
		return;
	put_hex(f->s + f->n, v, n);
	f->n += n;
	f->s[f->n] = 0;
}

static void f_dec(struct field *f, uint64_t v)
{
	char tmp[20];
	unsigned n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && f->n < sizeof(f->s) - 1)
		f->s[f->n++] = tmp[--n];
	f->s[f->n] = 0;
}

/* The text of one packet line before joining. */
struct line {
	struct field opcode, payload, id, val;
	uint8_t ext;  /* payload is an "extended" one (TNT): no tracking column */
	uint8_t skip; /* hidden by an option */
};

/* Output cursor over the caller's buffer (HWT_PTDUMP_MAX_TEXT bytes). */
struct out {
	char *p;
	size_t n;
};

static void o_mem(struct out *o, const char *s, size_t len)
{
	if (o->n + len >= HWT_PTDUMP_MAX_TEXT) /* cannot happen: see the limits */
		len = o->n + 1 < HWT_PTDUMP_MAX_TEXT ? HWT_PTDUMP_MAX_TEXT - 1 - o->n : 0;
	memcpy(o->p + o->n, s, len);
	o->n += len;
}

static void o_chr(struct out *o, char c)
{
	if (o->n + 1 < HWT_PTDUMP_MAX_TEXT)
		o->p[o->n++] = c;
}

static const char spaces[32] = "                                ";

/* A field, left-aligned in a column of `width` (< 32) characters.  The fast
 * path copies whole fixed-size blocks (no library calls) and relies on the
 * room left in the buffer for the over-copy. */
static void o_fcol(struct out *o, const struct field *f, unsigned width)
{
	size_t start = o->n;

	if (start + sizeof(f->s) + sizeof(spaces) >= HWT_PTDUMP_MAX_TEXT) {
		o_mem(o, f->s, f->n);
		while (f->n < width && o->n + 1 < HWT_PTDUMP_MAX_TEXT && o->n - start < width)
			o->p[o->n++] = ' ';
		return;
	}
	memcpy(o->p + start, f->s, sizeof(f->s));
	memcpy(o->p + start + f->n, spaces, sizeof(spaces));
	o->n = start + (f->n > width ? f->n : width);
}

static void o_str(struct out *o, const char *s)
{
	o_mem(o, s, strlen(s));
}

/* s left-aligned in a column of `width` characters. */
static void o_col(struct out *o, const char *s, size_t len, size_t width)
{
	o_mem(o, s, len);
	if (len < width && o->n + (width - len) < HWT_PTDUMP_MAX_TEXT) {
		memset(o->p + o->n, ' ', width - len);
		o->n += width - len;
	}
}

static void o_diag(struct out *o, uint64_t offset, const char *what, int err)
{
	struct field f;

	f_clear(&f);
	f_str(&f, "[");
	f_hex(&f, offset, 0);
	f_str(&f, ": ");
	o_mem(o, f.s, f.n);
	o_str(o, what);
	if (err) {
		o_str(o, ": ");
		o_str(o, hwt_errstr(err));
	}
	o_str(o, "]\n");
}

size_t hwt_ptdump_diag(char *buf, uint64_t offset, const char *what, int err)
{
	struct out o = {buf, 0};

	o_diag(&o, offset, what, err);
	return o.n;
}

struct hwt_ptdump *hwt_ptdump_alloc(const struct hwt_pt_config *cfg,
				    const struct hwt_ptdump_opts *opts)
{
	struct hwt_ptdump *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (opts) {
		size_t n = opts->size < sizeof(d->o) ? opts->size : sizeof(d->o);
		memcpy(&d->o, opts, n);
	}
	d->o.size = sizeof(d->o);
	if (d->o.time || d->o.tcal) {
		d->o.time_opts.size = sizeof(d->o.time_opts);
		d->time = hwt_pt_time_alloc(cfg, &d->o.time_opts);
		if (!d->time) {
			free(d);
			return NULL;
		}
	}
	hwt_ptdump_reset(d);
	return d;
}

void hwt_ptdump_free(struct hwt_ptdump *d)
{
	if (!d)
		return;
	hwt_pt_time_free(d->time);
	free(d);
}

void hwt_ptdump_reset(struct hwt_ptdump *d)
{
	hwt_pt_last_ip_init(&d->lip);
	if (d->time)
		hwt_pt_time_reset(d->time);
	d->last_tsc = 0;
	d->last_fcr = 0;
}

/* ---- payloads ----------------------------------------------------------- */

static uint64_t sext48(uint64_t v)
{
	v &= 0xffffffffffffull;
	return (v & (1ull << 47)) ? v | 0xffff000000000000ull : v;
}

static void ip_payload(struct line *l, const struct hwt_pt_packet *pkt, struct out *o,
		       uint64_t offset)
{
	struct field *f = &l->payload;
	uint64_t ip = pkt->u.ip.ip;

	f_hex(f, pkt->u.ip.ipc, 0);
	f_str(f, ": ");
	switch (pkt->u.ip.ipc) {
	case HWT_IPC_SUPPRESSED:
		f_str(f, "????????????????");
		break;
	case HWT_IPC_UPDATE_16:
		f_str(f, "????????????");
		f_hex(f, ip & 0xffff, 4);
		break;
	case HWT_IPC_UPDATE_32:
		f_str(f, "????????");
		f_hex(f, ip & 0xffffffffull, 8);
		break;
	case HWT_IPC_UPDATE_48:
		f_str(f, "????");
		f_hex(f, ip & 0xffffffffffffull, 12);
		break;
	case HWT_IPC_SEXT_48:
		f_hex(f, sext48(ip), 16);
		break;
	case HWT_IPC_FULL:
		f_hex(f, ip, 16);
		break;
	default:
		f_hex(f, ip, 16);
		o_diag(o, offset, "bad ipc", HWT_ERR_BAD_PACKET);
		break;
	}
}

static void last_ip_column(struct hwt_ptdump *d, struct line *l, const struct hwt_pt_packet *pkt,
			   struct out *o, uint64_t offset)
{
	uint64_t ip;
	int err;

	f_str(&l->id, "ip");
	err = hwt_pt_last_ip_update(&d->lip, pkt->u.ip.ipc, pkt->u.ip.ip);
	if (err < 0) {
		f_str(&l->val, "<unavailable>");
		o_diag(o, offset, "error tracking last-ip", err);
		return;
	}
	err = hwt_pt_last_ip_query(&d->lip, &ip);
	if (err == HWT_ERR_IP_SUPPRESSED) {
		f_str(&l->val, "<suppressed>");
	} else if (err < 0) {
		f_str(&l->val, "<unavailable>");
		o_diag(o, offset, "error tracking last-ip", err);
	} else {
		f_hex(&l->val, ip, 16);
	}
}

static void tnt_payload(struct line *l, const struct hwt_pt_packet *pkt)
{
	unsigned bits = pkt->u.tnt.bits;
	struct field *f = &l->payload;

	l->ext = 1;
	if (bits > sizeof(f->s) - 1)
		bits = sizeof(f->s) - 1;
	for (unsigned i = bits; i > 0; i--)
		f->s[f->n++] = (pkt->u.tnt.payload >> (i - 1)) & 1 ? '!' : '.';
	f->s[f->n] = 0;
}

/* Append ", " between list items. */
static void f_item(struct field *f, const char *s)
{
	if (f->n)
		f_str(f, ", ");
	f_str(f, s);
}

static const char *exec_mode_name(const struct hwt_pt_packet *pkt)
{
	if (pkt->u.mode_exec.csl)
		return pkt->u.mode_exec.csd ? "unknown" : "64-bit";
	return pkt->u.mode_exec.csd ? "32-bit" : "16-bit";
}

static const char *cfe_name(unsigned type)
{
	static const char *const names[] = {
	    [1] = "intr",	 [2] = "iret",	    [3] = "smi",     [4] = "rsm",
	    [5] = "sipi",	 [6] = "init",	    [7] = "vmentry", [8] = "vmexit",
	    [9] = "vmexit_intr", [10] = "shutdown", [12] = "uintr",  [13] = "uiret",
	    [14] = "swintr",	 [15] = "syscall",
	};
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "unknown";
}

static const char *evd_name(unsigned type)
{
	switch (type) {
	case 0:
		return "cr2";
	case 1:
		return "vmxq";
	case 2:
		return "vmxr";
	}
	return "unknown";
}

/* Power-state fields are the raw MWAIT-hint encodings; C-state n is
 * carried as n - 1 (mod 16). */
static void f_cstate(struct field *f, unsigned raw)
{
	f_str(f, "c");
	f_dec(f, (raw + 1) & 0xf);
}

/* ---- timing columns --------------------------------------------------- */

static void time_column(struct hwt_ptdump *d, struct line *l, struct out *o, uint64_t offset)
{
	uint64_t tsc;
	int err;

	f_str(&l->id, "tsc");
	err = hwt_pt_time_query(d->time, &tsc, NULL, NULL);
	if (err < 0) {
		o_diag(o, offset, "error printing time", err);
		f_str(&l->val, "<unavailable>");
		return;
	}
	if (!d->o.time_delta) {
		f_hex(&l->val, tsc, 16);
		return;
	}
	if (d->last_tsc <= tsc) {
		f_str(&l->val, "+");
		f_hex(&l->val, tsc - d->last_tsc, 0);
	} else {
		f_str(&l->val, "-");
		f_hex(&l->val, d->last_tsc - tsc, 0);
	}
	d->last_tsc = tsc;
}

static void tcal_column(struct hwt_ptdump *d, struct line *l, struct out *o, uint64_t offset)
{
	double scale = (double)(1u << HWT_PT_FCR_SHIFT), now, before;
	uint64_t fcr;
	char tmp[48];
	int err;

	f_str(&l->id, "fcr");
	err = hwt_pt_time_fcr(d->time, &fcr);
	if (err < 0) {
		f_str(&l->val, "<unavailable>");
		o_diag(o, offset, "error printing time", err);
		return;
	}
	now = (double)fcr / scale;
	if (!d->o.time_delta) {
		snprintf(tmp, sizeof(tmp), "%.3f", now);
	} else {
		before = (double)d->last_fcr / scale;
		if (d->last_fcr <= fcr)
			snprintf(tmp, sizeof(tmp), "+%.3f", now - before);
		else
			snprintf(tmp, sizeof(tmp), "-%.3f", before - now);
		d->last_fcr = fcr;
	}
	f_str(&l->val, tmp);
}

/* Feed a timing packet to the tracker, report its diagnostics in ptdump's
 * order, and fill the time or calibration column. */
static void track_time(struct hwt_ptdump *d, struct line *l, const struct hwt_pt_packet *pkt,
		       struct out *o, uint64_t offset)
{
	struct hwt_pt_time_report r;

	hwt_pt_time_update(d->time, pkt, &r);
	if (!r.timing)
		return;
	if (r.fcr_err)
		o_diag(o, offset, "calibration error", r.fcr_err);
	if (r.tcal_err)
		o_diag(o, offset, "error calibrating time", r.tcal_err);
	if (r.time_err)
		o_diag(o, offset, "error updating time", r.time_err);
	if (d->o.tcal && r.new_tcal)
		tcal_column(d, l, o, offset);
	if (d->o.time && r.new_time)
		time_column(d, l, o, offset);
}

/* ---- one packet --------------------------------------------------------- */

static void render(struct hwt_ptdump *d, struct line *l, const struct hwt_pt_packet *pkt,
		   struct out *o, uint64_t offset)
{
	struct field *p = &l->payload;

	f_str(&l->opcode, hwt_pt_pkt_name((enum hwt_pt_pkt_type)pkt->type));
	switch (pkt->type) {
	case HWT_PKT_PAD:
		l->skip = d->o.no_pad;
		break;
	case HWT_PKT_PSB:
	case HWT_PKT_PSBEND:
	case HWT_PKT_OVF:
		if (d->time)
			hwt_pt_time_update(d->time, pkt, NULL);
		break;
	case HWT_PKT_FUP:
	case HWT_PKT_TIP:
	case HWT_PKT_TIP_PGE:
	case HWT_PKT_TIP_PGD:
		ip_payload(l, pkt, o, offset);
		if (d->o.lastip)
			last_ip_column(d, l, pkt, o, offset);
		break;
	case HWT_PKT_TNT8:
	case HWT_PKT_TNT64:
		tnt_payload(l, pkt);
		break;
	case HWT_PKT_PIP:
		f_hex(p, pkt->u.pip.cr3, 0);
		if (pkt->u.pip.nr)
			f_str(p, ", nr");
		f_str(&l->id, "cr3");
		f_hex(&l->val, pkt->u.pip.cr3, 16);
		break;
	case HWT_PKT_VMCS:
		f_hex(p, pkt->u.vmcs.base, 0);
		f_str(&l->id, "vmcs");
		f_hex(&l->val, pkt->u.vmcs.base, 16);
		break;
	case HWT_PKT_MODE_EXEC:
		if (pkt->u.mode_exec.csd)
			f_item(p, "cs.d");
		if (pkt->u.mode_exec.csl)
			f_item(p, "cs.l");
		if (pkt->u.mode_exec.iflag)
			f_item(p, "if");
		if (d->o.exec_mode) {
			f_str(&l->id, "em");
			f_str(&l->val, exec_mode_name(pkt));
		}
		break;
	case HWT_PKT_MODE_TSX:
		if (pkt->u.mode_tsx.intx)
			f_item(p, "intx");
		if (pkt->u.mode_tsx.abrt)
			f_item(p, "abrt");
		break;
	case HWT_PKT_TSC:
	case HWT_PKT_CBR:
	case HWT_PKT_TMA:
	case HWT_PKT_MTC:
	case HWT_PKT_CYC:
		if (pkt->type == HWT_PKT_TSC) {
			f_hex(p, pkt->u.tsc.tsc, 0);
		} else if (pkt->type == HWT_PKT_CBR) {
			f_hex(p, pkt->u.cbr.ratio, 0);
		} else if (pkt->type == HWT_PKT_TMA) {
			f_hex(p, pkt->u.tma.ctc, 0);
			f_str(p, ", ");
			f_hex(p, pkt->u.tma.fc, 0);
		} else if (pkt->type == HWT_PKT_MTC) {
			f_hex(p, pkt->u.mtc.ctc, 0);
		} else {
			f_hex(p, pkt->u.cyc.value, 0);
		}
		if (d->time)
			track_time(d, l, pkt, o, offset);
		if (d->o.no_timing || (pkt->type == HWT_PKT_CYC && d->o.time_opts.no_cyc))
			l->skip = 1;
		break;
	case HWT_PKT_MNT:
		f_hex(p, pkt->u.mnt.payload, 0);
		break;
	case HWT_PKT_EXSTOP:
		if (pkt->u.exstop.ip)
			f_str(p, "ip");
		break;
	case HWT_PKT_MWAIT:
		f_hex(p, pkt->u.mwait.hints, 8);
		f_str(p, ", ");
		f_hex(p, pkt->u.mwait.ext, 8);
		break;
	case HWT_PKT_PWRE:
		f_cstate(p, pkt->u.pwre.state);
		f_str(p, ".");
		f_dec(p, (pkt->u.pwre.sub_state + 1u) & 0xf);
		if (pkt->u.pwre.hw)
			f_str(p, ", hw");
		break;
	case HWT_PKT_PWRX: {
		unsigned n =
		    !!pkt->u.pwrx.interrupt + !!pkt->u.pwrx.store + !!pkt->u.pwrx.autonomous;
		const char *wr = "bad";

		if (n == 1)
			wr = pkt->u.pwrx.interrupt ? "int" : pkt->u.pwrx.store ? "st" : "hw";
		f_str(p, wr);
		f_str(p, ": ");
		f_cstate(p, pkt->u.pwrx.last);
		f_str(p, ", ");
		f_cstate(p, pkt->u.pwrx.deepest);
		break;
	}
	case HWT_PKT_PTW:
		f_hex(p, pkt->u.ptw.plc, 0);
		f_str(p, ": ");
		f_hex(p, pkt->u.ptw.payload, 0);
		if (pkt->u.ptw.ip)
			f_str(p, ", ip");
		break;
	case HWT_PKT_CFE: {
		unsigned type = pkt->u.cfe.type;

		f_dec(p, type);
		/* The vector is meaningful for these types only; SIPI's is
		 * a page number and shown in hex. */
		if (type == 1 || type == 9 || type == 12 || type == 14) {
			f_str(p, ": ");
			f_dec(p, pkt->u.cfe.vector);
		} else if (type == 5) {
			f_str(p, ": ");
			f_hex(p, pkt->u.cfe.vector, 0);
		}
		if (pkt->u.cfe.ip)
			f_str(p, ", ip");
		f_str(&l->id, "type");
		f_str(&l->val, cfe_name(type));
		break;
	}
	case HWT_PKT_EVD:
		f_dec(p, pkt->u.evd.type);
		f_str(p, ": ");
		f_hex(p, pkt->u.evd.payload, 0);
		f_str(&l->id, "type");
		f_str(&l->val, evd_name(pkt->u.evd.type));
		break;
	case HWT_PKT_TRIG:
		f_hex(p, pkt->u.trig.trbv, 2);
		if (pkt->u.trig.ip)
			f_str(p, ", ip");
		if (pkt->u.trig.mult)
			f_str(p, ", mult");
		if (pkt->u.trig.icntv) {
			f_str(p, ", icnt: ");
			f_dec(p, pkt->u.trig.icnt);
		}
		break;
	case HWT_PKT_BBP:
		f_str(p, "sz: ");
		f_hex(p, pkt->u.bbp.sz, 0);
		f_str(p, ", type: ");
		f_hex(p, pkt->u.bbp.type, 0);
		break;
	case HWT_PKT_BIP:
		f_hex(p, pkt->u.bip.id, 0);
		f_str(p, ": ");
		f_hex(p, pkt->u.bip.payload, 0);
		break;
	case HWT_PKT_BEP:
		if (pkt->u.bep.ip)
			f_str(p, "ip");
		break;
	default: /* PSB handled above; STOP and INVALID have no payload */
		break;
	}
}

size_t hwt_ptdump_packet(struct hwt_ptdump *d, uint64_t offset, const struct hwt_pt_packet *pkt,
			 const uint8_t *raw, char *buf)
{
	struct out o = {buf, 0};
	struct line l;
	const char *sep = "";

	f_clear(&l.opcode);
	f_clear(&l.payload);
	f_clear(&l.id);
	f_clear(&l.val);
	l.ext = l.skip = 0;
	render(d, &l, pkt, &o, offset);
	if (l.skip || d->o.quiet)
		return o.n;

	if (!d->o.no_offset) {
		if (o.n + 17 < HWT_PTDUMP_MAX_TEXT) {
			put_hex(o.p + o.n, offset, 16);
			o.p[o.n + 16] = ' ';
			o.n += 17;
		}
		sep = " ";
	}
	if (d->o.raw && raw) {
		char hex[33];
		unsigned n = 0;

		for (unsigned i = 0; i < pkt->size && n + 2 < sizeof(hex); i++) {
			hex[n++] = hexdig[raw[i] >> 4];
			hex[n++] = hexdig[raw[i] & 0xf];
		}
		o_str(&o, sep);
		o_col(&o, hex, n, 33);
		sep = " ";
	}
	if (*sep)
		o_chr(&o, ' ');
	o_fcol(&o, &l.opcode, l.payload.n ? 10 : 0);
	if (l.ext) {
		o_chr(&o, ' ');
		o_fcol(&o, &l.payload, 0);
	} else if (l.id.n) {
		o_chr(&o, ' ');
		o_fcol(&o, &l.payload, 25);
		o_chr(&o, ' ');
		o_fcol(&o, &l.id, 5);
		o_fcol(&o, &l.val, 0);
	} else if (l.payload.n) {
		o_chr(&o, ' ');
		o_fcol(&o, &l.payload, 0);
	}
	o_chr(&o, '\n');
	return o.n;
}
