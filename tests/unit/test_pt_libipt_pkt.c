/* Cross-check: hwt's packet decoder against libipt's (Debian libipt 2.0.5,
 * pt_pkt_next) packet by packet: type, size, offset, payload fields and
 * error codes, on seeded random encoded streams and on every .pt file of
 * the libipt-ptt corpus (ptdump-style: sync forward, decode, resync on
 * error).  Packets that libipt 2.0.5 does not know (CFE, EVD, TRIG, BBP,
 * BIP, BEP) are not generated, and in the corpus they are skipped only
 * where libipt reports an error for them.  libipt 2.0.5 has no MODE.Exec
 * IF bit, so only CS.L/CS.D are compared.  (Should libipt ever accept a
 * TMA with reserved bits set, that is tolerated and counted.)  The errata
 * tests are also decoded with each listed cpu's SKZ84 setting in both
 * decoders (libipt 2.0.5 has no SKD007 packet fix-up yet).
 */
#include <dirent.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_config.h"
#include "hwt/pt_packet.h"
#include "t.h"

static const enum pt_packet_type type_map[HWT_PKT_NTYPES] = {
    [HWT_PKT_PAD] = ppt_pad,	     [HWT_PKT_PSB] = ppt_psb,	      [HWT_PKT_PSBEND] = ppt_psbend,
    [HWT_PKT_TNT8] = ppt_tnt_8,	     [HWT_PKT_TNT64] = ppt_tnt_64,    [HWT_PKT_TIP] = ppt_tip,
    [HWT_PKT_TIP_PGE] = ppt_tip_pge, [HWT_PKT_TIP_PGD] = ppt_tip_pgd, [HWT_PKT_FUP] = ppt_fup,
    [HWT_PKT_PIP] = ppt_pip,	     [HWT_PKT_MODE_EXEC] = ppt_mode,  [HWT_PKT_MODE_TSX] = ppt_mode,
    [HWT_PKT_TRACESTOP] = ppt_stop,  [HWT_PKT_CBR] = ppt_cbr,	      [HWT_PKT_TSC] = ppt_tsc,
    [HWT_PKT_MTC] = ppt_mtc,	     [HWT_PKT_TMA] = ppt_tma,	      [HWT_PKT_CYC] = ppt_cyc,
    [HWT_PKT_VMCS] = ppt_vmcs,	     [HWT_PKT_OVF] = ppt_ovf,	      [HWT_PKT_MNT] = ppt_mnt,
    [HWT_PKT_EXSTOP] = ppt_exstop,   [HWT_PKT_MWAIT] = ppt_mwait,     [HWT_PKT_PWRE] = ppt_pwre,
    [HWT_PKT_PWRX] = ppt_pwrx,	     [HWT_PKT_PTW] = ppt_ptw,
};

static int unknown_to_libipt(int type)
{
	return type == HWT_PKT_CFE || type == HWT_PKT_EVD || type == HWT_PKT_TRIG ||
	       type == HWT_PKT_BBP || type == HWT_PKT_BIP || type == HWT_PKT_BEP;
}

/* Same packet?  Returns NULL or what differs. */
static const char *differs(const struct hwt_pt_packet *h, const struct pt_packet *l)
{
	if (h->type == HWT_PKT_INVALID) /* the SKZ84 fix-up: an invalid packet with a size */
		return l->type == ppt_invalid && h->size == l->size ? NULL : "invalid";
	if (h->type >= HWT_PKT_NTYPES || !type_map[h->type] || type_map[h->type] != l->type)
		return "type";
	if (h->size != l->size)
		return "size";
	const __typeof__(h->u) *u = &h->u;
	const __typeof__(l->payload) *v = &l->payload;
	switch (h->type) {
	case HWT_PKT_TNT8:
	case HWT_PKT_TNT64:
		return u->tnt.bits == v->tnt.bit_size && u->tnt.payload == v->tnt.payload ? NULL
											  : "tnt";
	case HWT_PKT_TIP:
	case HWT_PKT_TIP_PGE:
	case HWT_PKT_TIP_PGD:
	case HWT_PKT_FUP:
		return u->ip.ipc == v->ip.ipc && u->ip.ip == v->ip.ip ? NULL : "ip";
	case HWT_PKT_MODE_EXEC:
		return v->mode.leaf == pt_mol_exec && u->mode_exec.csl == v->mode.bits.exec.csl &&
			       u->mode_exec.csd == v->mode.bits.exec.csd
			   ? NULL
			   : "mode.exec";
	case HWT_PKT_MODE_TSX:
		return v->mode.leaf == pt_mol_tsx && u->mode_tsx.intx == v->mode.bits.tsx.intx &&
			       u->mode_tsx.abrt == v->mode.bits.tsx.abrt
			   ? NULL
			   : "mode.tsx";
	case HWT_PKT_PIP:
		return u->pip.cr3 == v->pip.cr3 && u->pip.nr == v->pip.nr ? NULL : "pip";
	case HWT_PKT_TSC:
		return u->tsc.tsc == v->tsc.tsc ? NULL : "tsc";
	case HWT_PKT_CBR:
		return u->cbr.ratio == v->cbr.ratio ? NULL : "cbr";
	case HWT_PKT_TMA:
		return u->tma.ctc == v->tma.ctc && u->tma.fc == v->tma.fc ? NULL : "tma";
	case HWT_PKT_MTC:
		return u->mtc.ctc == v->mtc.ctc ? NULL : "mtc";
	case HWT_PKT_CYC:
		return u->cyc.value == v->cyc.value ? NULL : "cyc";
	case HWT_PKT_VMCS:
		return u->vmcs.base == v->vmcs.base ? NULL : "vmcs";
	case HWT_PKT_MNT:
		return u->mnt.payload == v->mnt.payload ? NULL : "mnt";
	case HWT_PKT_EXSTOP:
		return u->exstop.ip == v->exstop.ip ? NULL : "exstop";
	case HWT_PKT_MWAIT:
		return u->mwait.hints == v->mwait.hints && u->mwait.ext == v->mwait.ext ? NULL
											: "mwait";
	case HWT_PKT_PWRE:
		return u->pwre.state == v->pwre.state && u->pwre.sub_state == v->pwre.sub_state &&
			       u->pwre.hw == v->pwre.hw
			   ? NULL
			   : "pwre";
	case HWT_PKT_PWRX:
		return u->pwrx.last == v->pwrx.last && u->pwrx.deepest == v->pwrx.deepest &&
			       u->pwrx.interrupt == v->pwrx.interrupt &&
			       u->pwrx.store == v->pwrx.store &&
			       u->pwrx.autonomous == v->pwrx.autonomous
			   ? NULL
			   : "pwrx";
	case HWT_PKT_PTW:
		return u->ptw.plc == v->ptw.plc && u->ptw.ip == v->ptw.ip &&
			       u->ptw.payload == v->ptw.payload
			   ? NULL
			   : "ptw";
	default:
		return NULL;
	}
}

struct stats {
	long packets, errors, skipped, tma_reserved, errata_runs;
};

/* Walk both decoders over the same bytes, ptdump-style, and compare. */
/* cpu: "f/m" to apply that cpu's packet-level errata in both, or NULL. */
static void cross_check_cpu(const uint8_t *bytes, size_t len, int nosync, const char *what,
			    struct stats *st, const char *cpu)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)bytes;
	cfg.end = (uint8_t *)bytes + len;
	struct hwt_pt_errata her = {0};
	if (cpu) {
		struct hwt_cpu hc;
		unsigned f = 0, m = 0;
		CHECK(sscanf(cpu, "%u/%u", &f, &m) == 2);
		cfg.cpu.vendor = pcv_intel;
		cfg.cpu.family = (uint16_t)f;
		cfg.cpu.model = (uint8_t)m;
		CHECK(hwt_pt_cpu_parse(&hc, cpu) == 0 && hwt_pt_cpu_errata(&her, &hc) == 0);
		if (pt_cpu_errata(&cfg.errata, &cfg.cpu) < 0)
			return; /* a cpu libipt 2.0.5 does not know yet */
		CHECKF(cfg.errata.skd007 == her.skd007 && cfg.errata.skz84 == her.skz84,
		       "%s: cpu %s: errata differ from libipt's", what, cpu);
	}
	struct pt_packet_decoder *l = pt_pkt_alloc_decoder(&cfg);
	struct hwt_pt_buf buf = {bytes, bytes + len, NULL, NULL};
	struct hwt_pt_pkt_decoder *h = hwt_pt_pkt_alloc(&buf);
	CHECK(l && h);
	if (!l || !h)
		goto out;
	if (cpu) {
		/* libipt 2.0.5's packet decoder applies SKZ84 but not yet the
		 * SKD007 fix-up (newer libipt does: checked against the corpus
		 * .exp in test_pt_packet) */
		her.skd007 = 0;
		hwt_pt_pkt_set_errata(h, &her);
		st->errata_runs++;
	}

	int rl = nosync ? pt_pkt_sync_set(l, 0) : pt_pkt_sync_forward(l);
	int rh = nosync ? hwt_pt_pkt_sync_set(h, 0) : hwt_pt_pkt_sync_forward(h);
	for (long guard = 0; guard < 4 * (long)len + 16; guard++) {
		uint64_t ol = 0, oh = 0;
		CHECKF((rl < 0) == (rh < 0), "%s: sync: libipt %d, hwt %d", what, rl, rh);
		if (rl < 0 || rh < 0)
			break;
		pt_pkt_get_offset(l, &ol);
		hwt_pt_pkt_offset(h, &oh);
		CHECKF(ol == oh, "%s: offset libipt %" PRIx64 ", hwt %" PRIx64, what, ol, oh);
		if (ol != oh)
			break;
		struct pt_packet lp;
		struct hwt_pt_packet hp;
		rl = pt_pkt_next(l, &lp, sizeof(lp));
		rh = hwt_pt_pkt_next(h, &hp);
		if (rl == -pte_eos && rh == HWT_ERR_EOS)
			break;
		if (rl < 0 && rh > 0 && unknown_to_libipt(hp.type)) {
			/* a packet newer than libipt 2.0.5: step over it */
			st->skipped++;
			rl = pt_pkt_sync_set(l, oh + (uint64_t)rh);
			continue;
		}
		if (rl > 0 && lp.type == ppt_tma && rh == HWT_ERR_BAD_PACKET) {
			/* reserved TMA bits, should libipt not check them */
			const uint8_t *p = bytes + oh;
			CHECKF(p[4] != 0 || (p[6] & 0xfe), "%s: tma at %" PRIx64, what, oh);
			st->tma_reserved++;
			rh = hwt_pt_pkt_sync_set(h, oh + 7);
			continue;
		}
		if (rl < 0 || rh < 0) {
			CHECKF(rl == rh, "%s: at %" PRIx64 ": libipt %s, hwt %s", what, oh,
			       rl < 0 ? pt_errstr(pt_errcode(rl)) : "ok",
			       rh < 0 ? hwt_errstr(rh) : hwt_pt_pkt_name(hp.type));
			if (rl >= 0 || rh >= 0)
				break;
			st->errors++;
			rl = pt_pkt_sync_forward(l);
			rh = hwt_pt_pkt_sync_forward(h);
			continue;
		}
		const char *d = differs(&hp, &lp);
		CHECKF(!d, "%s: at %" PRIx64 ": %s differs (hwt %s)", what, oh, d,
		       hwt_pt_pkt_name(hp.type));
		if (d)
			break;
		st->packets++;
	}
out:
	if (l)
		pt_pkt_free_decoder(l);
	hwt_pt_pkt_free(h);
}

static void cross_check(const uint8_t *bytes, size_t len, int nosync, const char *what,
			struct stats *st)
{
	cross_check_cpu(bytes, len, nosync, what, st, NULL);
}

/* ---- random streams of packets libipt 2.0.5 knows ---------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t gen_stream(uint64_t seed, uint8_t *out, size_t npkts)
{
	static const int8_t ipb[] = {0, 2, 4, 6, 6, -1, 8};
	static const uint8_t ipcs[] = {0, 1, 2, 3, 4, 6};
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
	size_t len = 0;
	int last_psb = 0;
	for (size_t i = 0; i < npkts; i++) {
		struct hwt_pt_packet p;
		uint64_t x = rnd(&s), y = rnd(&s);
		memset(&p, 0, sizeof(p));
		switch (x % 30) {
		case 0:
			p.type = last_psb ? HWT_PKT_PAD : HWT_PKT_PSB;
			break;
		case 1:
			p.type = HWT_PKT_PSBEND;
			break;
		case 2:
			p.type = HWT_PKT_PAD;
			break;
		case 3:
			p.type = HWT_PKT_OVF;
			break;
		case 4:
			p.type = HWT_PKT_TRACESTOP;
			break;
		case 5:
		case 6:
		case 7:
			p.type = HWT_PKT_TNT8;
			p.u.tnt.bits = (uint8_t)(1 + y % 6);
			p.u.tnt.payload = (y >> 8) & ((1u << p.u.tnt.bits) - 1);
			break;
		case 8:
			p.type = HWT_PKT_TNT64;
			p.u.tnt.bits = (uint8_t)(1 + y % 47);
			p.u.tnt.payload = (y >> 8) & ((1ull << p.u.tnt.bits) - 1);
			break;
		case 9:
		case 10:
		case 11:
		case 12: {
			static const uint8_t t[] = {HWT_PKT_TIP, HWT_PKT_TIP_PGE, HWT_PKT_TIP_PGD,
						    HWT_PKT_FUP};
			p.type = t[x % 30 - 9];
			p.u.ip.ipc = ipcs[y % 6];
			int n = ipb[p.u.ip.ipc];
			p.u.ip.ip = n == 8 ? rnd(&s) : rnd(&s) & ((1ull << (8 * n)) - 1);
			break;
		}
		case 13:
			p.type = HWT_PKT_PIP;
			p.u.pip.cr3 = (y << 5) & 0xfffffffffffe0ull, p.u.pip.nr = x >> 63;
			break;
		case 14:
			p.type = HWT_PKT_MODE_EXEC;
			p.u.mode_exec.csl = y & 1, p.u.mode_exec.csd = (y >> 1) & 1;
			break;
		case 15:
			p.type = HWT_PKT_MODE_TSX;
			p.u.mode_tsx.intx = y & 1, p.u.mode_tsx.abrt = (y >> 1) & 1;
			break;
		case 16:
			p.type = HWT_PKT_CBR, p.u.cbr.ratio = (uint8_t)y;
			break;
		case 17:
			p.type = HWT_PKT_TSC, p.u.tsc.tsc = y >> 8;
			break;
		case 18:
			p.type = HWT_PKT_MTC, p.u.mtc.ctc = (uint8_t)y;
			break;
		case 19:
			p.type = HWT_PKT_TMA, p.u.tma.ctc = (uint16_t)y,
			p.u.tma.fc = (y >> 16) & 0x1ff;
			break;
		case 20:
		case 21:
			p.type = HWT_PKT_CYC, p.u.cyc.value = y >> (3 + (x >> 58) % 60);
			break;
		case 22:
			p.type = HWT_PKT_VMCS, p.u.vmcs.base = (y << 12) & 0xffffffffff000ull;
			break;
		case 23:
			p.type = HWT_PKT_MNT, p.u.mnt.payload = y;
			break;
		case 24:
			p.type = HWT_PKT_EXSTOP, p.u.exstop.ip = y & 1;
			break;
		case 25:
			p.type = HWT_PKT_MWAIT;
			p.u.mwait.hints = (uint32_t)y, p.u.mwait.ext = (uint32_t)(y >> 32);
			break;
		case 26:
			p.type = HWT_PKT_PWRE;
			p.u.pwre.state = y & 15, p.u.pwre.sub_state = (y >> 4) & 15,
			p.u.pwre.hw = (y >> 8) & 1;
			break;
		case 27:
			p.type = HWT_PKT_PWRX;
			p.u.pwrx.last = y & 15, p.u.pwrx.deepest = (y >> 4) & 15;
			p.u.pwrx.interrupt = (y >> 8) & 1, p.u.pwrx.store = (y >> 9) & 1;
			p.u.pwrx.autonomous = (y >> 10) & 1;
			break;
		default:
			p.type = HWT_PKT_PTW;
			p.u.ptw.plc = y & 1, p.u.ptw.ip = (y >> 1) & 1;
			p.u.ptw.payload = p.u.ptw.plc ? rnd(&s) : (uint32_t)rnd(&s);
			break;
		}
		int n = hwt_pt_pkt_encode(out + len, 16, &p);
		if (n > 0)
			len += (size_t)n;
		last_psb = p.type == HWT_PKT_PSB;
	}
	return len;
}

static void t_random_streams(void)
{
	struct stats st = {0};
	size_t npkts = 20000;
	uint8_t *buf = malloc(npkts * 16);
	for (uint64_t seed = 1; seed <= 20; seed++) {
		size_t len = gen_stream(seed, buf, npkts);
		char what[32];
		snprintf(what, sizeof(what), "seed %" PRIu64, seed);
		cross_check(buf, len, 1, what, &st);
		cross_check(buf, len, 0, what, &st);
		/* the same with a few damaged bytes: errors must agree too */
		uint64_t s = seed;
		for (int k = 0; k < 50; k++)
			buf[rnd(&s) % len] ^= (uint8_t)(1u << (rnd(&s) % 8));
		snprintf(what, sizeof(what), "seed %" PRIu64 " damaged", seed);
		cross_check(buf, len, 0, what, &st);
	}
	CHECKF(st.packets > 500000 && st.errors > 0, "%ld packets, %ld errors", st.packets,
	       st.errors);
	free(buf);
}

static void t_corpus_files(void)
{
	const char *c = getenv("CORPUS");
	if (!c || !*c)
		c = "../shared/corpus/libipt-ptt";
	DIR *d = opendir(c);
	CHECKF(d != NULL, "cannot open corpus %s", c);
	if (!d)
		return;
	struct stats st = {0};
	int files = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[2048];
		snprintf(path, sizeof(path), "%s/%s/%s.pt", c, e->d_name, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		static uint8_t bytes[1 << 20];
		size_t len = fread(bytes, 1, sizeof(bytes), f);
		fclose(f);
		uint8_t *copy = malloc(len ? len : 1); /* exact size, for ASan */
		memcpy(copy, bytes, len);
		cross_check(copy, len, 0, e->d_name, &st);
		cross_check(copy, len, 1, e->d_name, &st);
		/* errata tests: decode with each listed cpu's errata too */
		snprintf(path, sizeof(path), "%s/%s/meta.json", c, e->d_name);
		FILE *mf = fopen(path, "r");
		char meta[8192] = "";
		if (mf) {
			size_t got = fread(meta, 1, sizeof(meta) - 1, mf);
			meta[got] = 0;
			fclose(mf);
		}
		char *cp = strstr(meta, "\"cpus\": [");
		for (char *q = cp ? strchr(cp, '[') : NULL; q && *q && *q != ']'; q++) {
			char cpu[16];
			if (*q == '"' && sscanf(q + 1, "%15[0-9/]", cpu) == 1) {
				cross_check_cpu(copy, len, 0, e->d_name, &st, cpu);
				q = strchr(q + 1, '"');
				if (!q)
					break;
			}
		}
		free(copy);
		files++;
	}
	closedir(d);
	CHECKF(files >= 200 && st.packets > 3000, "%d files, %ld packets", files, st.packets);
	CHECKF(st.skipped > 0 && st.errors > 0, "skipped %ld new, %ld errors", st.skipped,
	       st.errors);
	CHECKF(st.errata_runs >= 21, "only %ld runs with cpu errata", st.errata_runs);
	printf("# corpus: %d files, %ld packets equal, %ld errors equal, %ld new packets "
	       "skipped, %ld reserved-bit TMAs, %ld runs with cpu errata\n",
	       files, st.packets, st.errors, st.skipped, st.tma_reserved, st.errata_runs);
}

int main(void)
{
	RUN(t_random_streams);
	RUN(t_corpus_files);
	return t_done();
}
