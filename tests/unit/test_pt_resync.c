/* tests/unit/test_pt_resync.c - errors next to MODE.TSX, MODE.Exec, FUP and
 * TIP.PGD: hwt's instruction and block decoders against libipt.
 *
 * Oracle: libipt 2.0.5's pt_insn decoder.  Small synthetic traces are
 * written with the packet encoder over a hand-assembled image.  Each trace
 * starts at a label $ (a PSB+ with that FUP), and is decoded three ways:
 *  - start: $ is mapped code; hwt and libipt must give the same
 *    instructions, events and errors;
 *  - sync: $ is unmapped; both decoders fail at once and sync forward
 *    after each error; again everything must match;
 *  - resync: $ is unmapped and hwt resyncs after the error (libipt 2.0.5
 *    has no resync).  Where the trace goes on is told by its first packet
 *    with an ip, so hwt must give an error and then what libipt gives for
 *    the start decode from its first event on.
 * Also traces that leave the flow in a cycle of direct jumps or calls in
 * the middle of the trace (an event whose ip the cycle never reaches, TNT
 * bits that no instruction asks for): libipt runs the cycle for ever (the
 * test stops it after CYC_CAP instructions and syncs forward); hwt must
 * stop it with HWT_ERR_BAD_QUERY after the same instructions, and then
 * decode on like libipt.  One PASS/FAIL line per trace and way.
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/image.h"
#include "hwt/pt_flow.h"
#include "hwt/pt_packet.h"
#include "t.h"

#define ORG 0x100000ull
#define UNMAPPED 0x200000ull
#define CYC_CAP 100000
#define MAXITEM 256
#define LOG_RUN 64 /* instructions logged between two events */

/* The image; the letters are the labels the traces use.  Zeros after the
 * code leave the 15 bytes that decode caches want after an instruction. */
static const uint8_t code[0x30] = {
    0x90,			  /* A +00: nop */
    0xeb, 0x03,			  /*   +01: jmp B */
    0x90, 0x90, 0x90,		  /*   +03: nop x3 */
    0x90,			  /* B +06: nop */
    0xff, 0xe0,			  /*   +07: jmp rax */
    0x90,			  /* C +09: nop */
    0x75, 0xf4,			  /*   +0a: jne A */
    0xc3,			  /* R +0c: ret */
    0xeb, 0xfe,			  /* D +0d: jmp D */
    0xeb, 0x02,			  /* E +0f: jmp F */
    0x90, 0x90,			  /*   +11: nop x2 */
    0xeb, 0xfa,			  /* F +13: jmp E */
    0xe8, 0xfb, 0xff, 0xff, 0xff, /* G +15: call G */
    0xf4,			  /*   +1a: hlt */
};

static uint64_t label(char c)
{
	switch (c) {
	case 'A':
		return ORG + 0x00;
	case 'B':
		return ORG + 0x06;
	case 'C':
		return ORG + 0x09;
	case 'D':
		return ORG + 0x0d;
	case 'E':
		return ORG + 0x0f;
	case 'F':
		return ORG + 0x13;
	case 'G':
		return ORG + 0x15;
	case 'R':
		return ORG + 0x0c;
	default:
		return UNMAPPED;
	}
}

/* ---- writing traces ---- */

struct trace {
	uint8_t buf[512];
	size_t n;
	uint64_t psb[8]; /* where the PSBs are */
	int npsb, err;
};

static void put(struct trace *t, const struct hwt_pt_packet *p)
{
	int r = hwt_pt_pkt_encode(t->buf + t->n, sizeof(t->buf) - t->n, p);
	if (r < 0)
		t->err = r;
	else
		t->n += (size_t)r;
}

static void put_type(struct trace *t, int type)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	put(t, &p);
}

/* An ip packet; c '-' suppresses the ip. */
static void put_ip(struct trace *t, int type, char c)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = (uint8_t)type;
	p.u.ip.ipc = c == '-' ? HWT_IPC_SUPPRESSED : HWT_IPC_FULL;
	p.u.ip.ip = c == '-' ? 0 : label(c);
	put(t, &p);
}

static void put_exec64(struct trace *t)
{
	struct hwt_pt_packet p;
	memset(&p, 0, sizeof(p));
	p.type = HWT_PKT_MODE_EXEC;
	p.u.mode_exec.csl = 1;
	put(t, &p);
}

/* Words: psb:X (PSB+ with MODE.Exec 64-bit and FUP X; X '$' is the start
 * label), fup:X, tip:X, pge:X, pgd:X (X '-': no ip), tnt:BITS (oldest
 * first, 1 taken), tsx:begin|commit|abort, exec32 (MODE.Exec 32-bit). */
static void build(struct trace *t, const char *words, char start)
{
	char w[32];
	memset(t, 0, sizeof(*t));
	for (const char *s = words; *s;) {
		size_t n = strcspn(s, " ");
		if (n >= sizeof(w)) {
			t->err = -1;
			return;
		}
		memcpy(w, s, n);
		w[n] = 0;
		s += n;
		s += strspn(s, " ");
		char *arg = strchr(w, ':');
		char x = arg ? (arg[1] == '$' ? start : arg[1]) : 0;
		if (!strncmp(w, "psb:", 4)) {
			if (t->npsb < 8)
				t->psb[t->npsb++] = t->n;
			put_type(t, HWT_PKT_PSB);
			put_exec64(t);
			put_ip(t, HWT_PKT_FUP, x);
			put_type(t, HWT_PKT_PSBEND);
		} else if (!strncmp(w, "fup:", 4)) {
			put_ip(t, HWT_PKT_FUP, x);
		} else if (!strncmp(w, "tip:", 4)) {
			put_ip(t, HWT_PKT_TIP, x);
		} else if (!strncmp(w, "pge:", 4)) {
			put_ip(t, HWT_PKT_TIP_PGE, x);
		} else if (!strncmp(w, "pgd:", 4)) {
			put_ip(t, HWT_PKT_TIP_PGD, x);
		} else if (!strncmp(w, "tnt:", 4)) {
			struct hwt_pt_packet p;
			memset(&p, 0, sizeof(p));
			p.type = HWT_PKT_TNT8;
			for (const char *b = arg + 1; *b; b++) {
				p.u.tnt.payload = p.u.tnt.payload << 1 | (uint64_t)(*b == '1');
				p.u.tnt.bits++;
			}
			put(t, &p);
		} else if (!strncmp(w, "tsx:", 4)) {
			struct hwt_pt_packet p;
			memset(&p, 0, sizeof(p));
			p.type = HWT_PKT_MODE_TSX;
			p.u.mode_tsx.intx = !strcmp(arg + 1, "begin");
			p.u.mode_tsx.abrt = !strcmp(arg + 1, "abort");
			put(t, &p);
		} else if (!strcmp(w, "exec32")) {
			struct hwt_pt_packet p;
			memset(&p, 0, sizeof(p));
			p.type = HWT_PKT_MODE_EXEC;
			p.u.mode_exec.csd = 1;
			put(t, &p);
		} else {
			t->err = -1;
			return;
		}
	}
}

/* ---- what a decoder says: instructions, events, errors ---- */

enum { IT_INSN, IT_EVENT, IT_ERROR, IT_CYCLE };

struct item {
	int kind, type, flags, err;
	uint64_t ip, from;
};

struct log {
	struct item it[MAXITEM];
	int n, full;
};

static void add(struct log *l, int kind, int type, int flags, int err, uint64_t ip, uint64_t from)
{
	if (l->n == MAXITEM) {
		l->full = 1;
		return;
	}
	struct item *i = &l->it[l->n++];
	i->kind = kind;
	i->type = type;
	i->flags = flags;
	i->err = err;
	i->ip = ip;
	i->from = from;
}

static void fmt_item(const struct item *i, char *out, size_t n)
{
	switch (i->kind) {
	case IT_INSN:
		snprintf(out, n, "insn %llx", (unsigned long long)i->ip);
		break;
	case IT_EVENT:
		snprintf(out, n, "event %d ip %llx from %llx flags %d", i->type,
			 (unsigned long long)i->ip, (unsigned long long)i->from, i->flags);
		break;
	case IT_ERROR:
		snprintf(out, n, "error %d", i->err);
		break;
	default:
		snprintf(out, n, "cycle");
		break;
	}
}

/* Compare a[ai..] with b[bi..]; 0 if equal, else -1 and why. */
static int compare(const struct log *a, int ai, const struct log *b, int bi, char *why, size_t wn)
{
	char x[96], y[96];
	for (int k = 0;; k++) {
		int ea = ai + k >= a->n, eb = bi + k >= b->n;
		if (ea && eb)
			return 0;
		if (ea || eb || memcmp(&a->it[ai + k], &b->it[bi + k], sizeof(struct item))) {
			if (ea)
				snprintf(x, sizeof(x), "(end)");
			else
				fmt_item(&a->it[ai + k], x, sizeof(x));
			if (eb)
				snprintf(y, sizeof(y), "(end)");
			else
				fmt_item(&b->it[bi + k], y, sizeof(y));
			snprintf(why, wn, "item %d: hwt %s, libipt %s", k, x, y);
			return -1;
		}
	}
}

static void dump(const char *who, const struct log *l)
{
	char x[96];
	if (!getenv("RESYNC_DEBUG"))
		return;
	for (int i = 0; i < l->n; i++) {
		fmt_item(&l->it[i], x, sizeof(x));
		printf("  %s %d: %s\n", who, i, x);
	}
}

static int ipt_read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
			void *ctx)
{
	(void)asid;
	(void)ctx;
	if (ip < ORG || ip >= ORG + sizeof(code))
		return -pte_nomap;
	size_t n = (size_t)(ORG + sizeof(code) - ip);
	if (n > size)
		n = size;
	memcpy(buf, code + (ip - ORG), n);
	return (int)n;
}

static void ipt_event(struct log *l, const struct pt_event *ev)
{
	uint64_t ip = 0, from = 0;
	int type, flags = 0;
	if (ev->status_update)
		return;
	switch (ev->type) {
	case ptev_enabled:
		type = HWT_EV_ENABLED;
		ip = ev->variant.enabled.ip;
		break;
	case ptev_disabled:
		type = HWT_EV_DISABLED;
		ip = ev->variant.disabled.ip;
		break;
	case ptev_async_disabled:
		type = HWT_EV_ASYNC_DISABLED;
		ip = ev->variant.async_disabled.ip;
		from = ev->variant.async_disabled.at;
		break;
	case ptev_async_branch:
		type = HWT_EV_ASYNC_BRANCH;
		ip = ev->variant.async_branch.to;
		from = ev->variant.async_branch.from;
		break;
	case ptev_overflow:
		type = HWT_EV_OVERFLOW;
		ip = ev->variant.overflow.ip;
		break;
	case ptev_exec_mode:
		type = HWT_EV_EXEC_MODE;
		ip = ev->variant.exec_mode.ip;
		flags = ev->variant.exec_mode.mode == ptem_64bit   ? 64
			: ev->variant.exec_mode.mode == ptem_32bit ? 32
			: ev->variant.exec_mode.mode == ptem_16bit ? 16
								   : 0;
		break;
	case ptev_tsx:
		type = HWT_EV_TSX;
		ip = ev->variant.tsx.ip;
		flags = ev->variant.tsx.speculative | ev->variant.tsx.aborted << 1;
		break;
	default:
		type = 100 + ev->type;
		break;
	}
	if (ev->ip_suppressed) {
		ip = 0;
		if (type != HWT_EV_ASYNC_BRANCH && type != HWT_EV_ASYNC_DISABLED)
			from = 0;
	}
	add(l, IT_EVENT, type, flags, 0, ip, from);
}

static void hwt_event(struct log *l, const struct hwt_pt_event *ev)
{
	uint64_t ip = ev->ip, from = 0;
	int flags = 0;
	if (ev->status_update)
		return;
	switch (ev->type) {
	case HWT_EV_ASYNC_DISABLED:
		from = ev->u.async_disabled.at;
		break;
	case HWT_EV_ASYNC_BRANCH:
		from = ev->u.async_branch.from;
		break;
	case HWT_EV_TSX:
		flags = ev->u.tsx.speculative | ev->u.tsx.aborted << 1;
		break;
	case HWT_EV_EXEC_MODE:
		flags = ev->u.exec_mode.mode;
		break;
	case HWT_EV_ENABLED:
	case HWT_EV_DISABLED:
	case HWT_EV_OVERFLOW:
		break;
	default:
		ip = 0;
		break;
	}
	if (ev->ip_suppressed)
		ip = 0;
	add(l, IT_EVENT, ev->type, flags, 0, ip, from);
}

/* libipt: sync forward after every error; a run of CYC_CAP instructions
 * without an event is logged as a cycle and also ends with a sync. */
static int run_libipt(const struct trace *t, struct log *l)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)t->buf;
	cfg.end = (uint8_t *)t->buf + t->n;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d)
		return -1;
	if (pt_image_set_callback(pt_insn_get_image(d), ipt_read_mem, NULL) < 0) {
		pt_insn_free_decoder(d);
		return -1;
	}
	memset(l, 0, sizeof(*l));
	int cycle = 0;
	for (int syncs = 0; syncs < 16 && !l->full; syncs++) {
		int st = 0;
		if (!cycle) {
			st = pt_insn_sync_forward(d);
		} else {
			/* libipt has read ahead: sync at the PSB after the
			 * current sync point by hand */
			uint64_t off = 0;
			int k = 0;
			pt_insn_get_sync_offset(d, &off);
			while (k < t->npsb && t->psb[k] <= off)
				k++;
			st = k < t->npsb ? pt_insn_sync_set(d, t->psb[k]) : -pte_eos;
			cycle = 0;
		}
		if (st < 0)
			break;
		long run = 0;
		for (;;) {
			while (st >= 0 && (st & pts_event_pending)) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof(ev));
				if (st >= 0)
					ipt_event(l, &ev);
				run = 0;
			}
			if (st < 0 || (st & pts_eos))
				break;
			struct pt_insn in;
			memset(&in, 0, sizeof(in));
			st = pt_insn_next(d, &in, sizeof(in));
			if (in.iclass != ptic_error && in.size && ++run <= LOG_RUN)
				add(l, IT_INSN, 0, 0, 0, in.ip, 0);
			if (st >= 0 && run == CYC_CAP) {
				add(l, IT_CYCLE, 0, 0, 0, 0, 0);
				cycle = 1;
				break;
			}
			if (st < 0)
				break;
		}
		if (st < 0 && st != -pte_eos)
			add(l, IT_ERROR, 0, 0, st, 0, 0);
		else if (st < 0 || (st & pts_eos))
			break;
	}
	pt_insn_free_decoder(d);
	return 0;
}

/* hwt, insn or block decoder: after an error sync forward, or resync. */
static int run_hwt(const struct trace *t, int block, int resync, struct log *l)
{
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	cfg.buf.begin = t->buf;
	cfg.buf.end = t->buf + t->n;
	struct hwt_image *img = hwt_image_alloc();
	if (!img || hwt_image_add_mem(img, code, sizeof(code), ORG)) {
		hwt_image_free(img);
		return -1;
	}
	struct hwt_pt_insn_decoder *di = block ? NULL : hwt_pt_insn_alloc(&cfg, img, NULL);
	struct hwt_pt_block_decoder *db = block ? hwt_pt_block_alloc(&cfg, img, NULL) : NULL;
	if (!di && !db) {
		hwt_image_free(img);
		return -1;
	}
	memset(l, 0, sizeof(*l));
	int st = 0, insns = 0, run = 0;
	for (int syncs = 0; syncs < 16 && !l->full;) {
		if (st == 0 || !resync) {
			st = block ? hwt_pt_block_sync_forward(db) : hwt_pt_insn_sync_forward(di);
			syncs++;
		} else {
			st = block ? hwt_pt_block_resync(db) : hwt_pt_insn_resync(di);
		}
		if (st < 0)
			break;
		run = 0;
		for (;;) {
			while (st >= 0 && (st & HWT_PTS_EVENT_PENDING)) {
				struct hwt_pt_event ev;
				st = block ? hwt_pt_block_event(db, &ev)
					   : hwt_pt_insn_event(di, &ev);
				if (st >= 0)
					hwt_event(l, &ev);
				run = 0;
			}
			if (st < 0 || (st & HWT_PTS_EOS))
				break;
			if (++insns > 2 * CYC_CAP) {
				add(l, IT_CYCLE, 0, 0, 0, 0, 0);
				st = HWT_ERR_EOS; /* hwt runs on for ever: stop */
				break;
			}
			if (block) {
				struct hwt_pt_block b;
				st = hwt_pt_block_next(db, &b);
				insns += (int)b.ninsn;
				for (uint32_t i = 0; i < b.ninsn; i++)
					if (++run <= LOG_RUN)
						add(l, IT_INSN, 0, 0, 0, b.ips[i], 0);
			} else {
				struct hwt_pt_insn in;
				st = hwt_pt_insn_next(di, &in);
				if (in.size && ++run <= LOG_RUN)
					add(l, IT_INSN, 0, 0, 0, in.ip, 0);
			}
			if (st < 0)
				break;
		}
		if (st < 0 && st != HWT_ERR_EOS)
			add(l, IT_ERROR, 0, 0, st, 0, 0);
		else
			break;
	}
	hwt_pt_insn_free(di);
	hwt_pt_block_free(db);
	hwt_image_free(img);
	return 0;
}

/* ---- the traces ---- */

struct tcase {
	const char *name;
	char start; /* the label of $ for the start decode */
	const char *words;
};

static const struct tcase cases[] = {
    /* TSX begin/commit: the FUP names the XBEGIN/XEND, nothing more */
    {"tsx_begin-tip", 'A', "psb:$ tsx:begin fup:A tip:C tnt:0 fup:R pgd:-"},
    {"tsx_commit-tip_pgd", 'A', "psb:$ tsx:commit fup:A pgd:B"},
    {"tsx_begin-tip_pgd", 'A', "psb:$ tsx:begin fup:B pgd:C"},
    {"tsx_commit-tip", 'A', "psb:$ tsx:commit fup:B tip:C tnt:0 fup:R pgd:-"},
    {"tsx_commit-tsx_begin-tip_pgd", 'A', "psb:$ tsx:commit fup:A tsx:begin fup:B pgd:C"},
    {"tsx_begin-psb", 'A', "psb:$ tsx:begin fup:A tip:C psb:C tnt:0 fup:R pgd:-"},
    /* TSX abort: the FUP is also the source of a branch */
    {"tsx_begin-tsx_abort-tip", 'A',
     "psb:$ tsx:begin fup:A tsx:abort fup:B tip:C tnt:0 fup:R pgd:-"},
    {"tsx_abort-tip_pgd", 'A', "psb:$ tsx:abort fup:A pgd:C pge:C tnt:0 fup:R pgd:-"},
    {"tsx_abort-tip_pgd_noip", 'A', "psb:$ tsx:abort fup:A pgd:- pge:C tnt:0 fup:R pgd:-"},
    /* MODE.Exec with an async branch and with a TIP */
    {"fup-mode_exec-tip", 'A', "psb:$ fup:B exec32 tip:C tnt:0 fup:R pgd:-"},
    {"mode_exec-tip", 'A', "psb:$ exec32 tip:C tnt:0 fup:R pgd:-"},
    /* FUP: async branch, async disable; TIP.PGD: sync disable */
    {"fup-tip", 'A', "psb:$ fup:A tip:C tnt:0 fup:R pgd:-"},
    {"fup-tip_pgd", 'A', "psb:$ fup:B pgd:- pge:C tnt:0 fup:R pgd:-"},
    {"tip_pgd-tip_pge-tsx", 'A', "psb:$ pgd:C pge:A tsx:begin fup:B pgd:C"},
    {"cycle_left_by_fup-tip", 'E', "psb:$ fup:F tip:C tnt:0 fup:R pgd:-"},
};

/* Cycles that only a trace that does not match the code leaves the
 * flow in. */
static const struct tcase cycles[] = {
    {"cycle-jmp-tsx", 'D', "psb:$ tsx:begin fup:A psb:C tnt:0 fup:R pgd:-"},
    {"cycle-jmp_jmp-tsx", 'E', "psb:$ tsx:begin fup:A psb:C tnt:0 fup:R pgd:-"},
    {"cycle-call-tsx", 'G', "psb:$ tsx:commit fup:B psb:C tnt:0 fup:R pgd:-"},
    {"cycle-jmp-tnt", 'D', "psb:$ tnt:1 psb:C tnt:0 fup:R pgd:-"},
    {"cycle-jmp-tip_pgd", 'D', "psb:$ pgd:C psb:C tnt:0 fup:R pgd:-"},
    {"cycle-jmp-fup-tip", 'E', "psb:$ fup:A tip:C psb:C tnt:0 fup:R pgd:-"},
};

static struct log ref, got;

static void t_case(const struct tcase *c)
{
	struct trace t, ts;
	char name[128], why[256];
	static const char *const dec[2] = {"insn", "block"};

	for (int way = 0; way < 3; way++) {
		static const char *const ways[3] = {"start", "sync", "resync"};
		snprintf(name, sizeof(name), "resync-%s-%s", c->name, ways[way]);
		t_begin(name);
		build(&t, c->words, way ? 'U' : c->start);
		CHECK(t.err == 0);
		/* resync: libipt's start decode, from its first event on */
		build(&ts, c->words, way == 2 ? c->start : 'U');
		CHECK(run_libipt(way == 2 ? &ts : &t, &ref) == 0);
		int from = 0;
		if (way == 2) {
			while (from < ref.n && ref.it[from].kind == IT_INSN)
				from++;
			CHECKF(from < ref.n && ref.it[from].kind == IT_EVENT,
			       "libipt has no event to resync at");
		}
		for (int block = 0; block < 2 && !t_case_failed; block++) {
			CHECK(run_hwt(&t, block, way == 2, &got) == 0);
			CHECK(!got.full && !ref.full);
			int gi = 0;
			if (way == 2) {
				CHECKF(got.n > 0 && got.it[0].kind == IT_ERROR &&
					   got.it[0].err == HWT_ERR_NOMAP,
				       "%s decoder: no nomap error first", dec[block]);
				gi = 1;
			}
			dump("libipt", &ref);
			dump(dec[block], &got);
			if (!t_case_failed && compare(&got, gi, &ref, from, why, sizeof(why)))
				t_fail(__FILE__, __LINE__, "%s decoder: %s", dec[block], why);
		}
		t_end();
	}
}

static void t_cycle(const struct tcase *c)
{
	struct trace t;
	char name[128], why[256];
	static const char *const dec[2] = {"insn", "block"};

	snprintf(name, sizeof(name), "resync-%s", c->name);
	t_begin(name);
	build(&t, c->words, c->start);
	CHECK(t.err == 0);
	CHECK(run_libipt(&t, &ref) == 0);
	/* libipt: the instructions (the log keeps LOG_RUN of them), the cycle */
	int cyc = 0;
	while (cyc < ref.n && ref.it[cyc].kind != IT_CYCLE)
		cyc++;
	CHECKF(cyc < ref.n, "libipt left the cycle");
	dump("libipt", &ref);
	for (int block = 0; block < 2 && !t_case_failed; block++) {
		CHECK(run_hwt(&t, block, 0, &got) == 0);
		int err = 0;
		dump(dec[block], &got);
		while (err < got.n && got.it[err].kind == IT_INSN)
			err++;
		CHECKF(err < got.n && got.it[err].kind == IT_ERROR &&
			   got.it[err].err == HWT_ERR_BAD_QUERY,
		       "%s decoder: no bad-query error in the cycle", dec[block]);
		CHECKF(err > 0 && err <= cyc, "%s decoder: %d instructions before the error",
		       dec[block], err);
		for (int i = 0; i < err && !t_case_failed; i++)
			CHECKF(got.it[i].ip == ref.it[i].ip,
			       "%s decoder: insn %d: %llx, libipt %llx", dec[block], i,
			       (unsigned long long)got.it[i].ip, (unsigned long long)ref.it[i].ip);
		if (!t_case_failed && compare(&got, err + 1, &ref, cyc + 1, why, sizeof(why)))
			t_fail(__FILE__, __LINE__, "%s decoder after the cycle: %s", dec[block],
			       why);
	}
	t_end();
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		t_case(&cases[i]);
	for (size_t i = 0; i < sizeof(cycles) / sizeof(cycles[0]); i++)
		t_cycle(&cycles[i]);
	return t_done();
}
