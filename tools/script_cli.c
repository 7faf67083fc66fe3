/* tools/script_cli.c - "hwt script [-i FILE | FILE]" on perf.data files:
 * the options and the printers (consumers of the engine in script_perf.c).
 * Output goes through one large buffer (lib/out); nothing is kept per
 * instruction, so memory does not grow with the trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "flight.h"
#include "hwt/decode.h"
#include "hwt/x86.h"
#include "out/out.h"
#include "progress.h"
#include "script_perf.h"
#include "script_samples.h"
#include "srcline.h"

static const char usage_text[] =
    "usage: hwt script [-i FILE | FILE] [--branches [--format tsv|text] | --insn [--disasm]\n"
    "                  | --calls | --last N [--tid T]] [--no-time] [--srcline] [-j N]\n"
    "\n"
    "Decode a recording (hwt's or perf's intel_pt, intel_bts or cs_etm perf.data;\n"
    "default hwt.data) and print its control flow.  Code is read from the files\n"
    "the recording mapped.\n"
    "\n"
    "  --branches        taken branches (default): tid, time, kind, from => to\n"
    "  --format tsv      branches as 'tid<TAB>from<TAB>to<TAB>kind'; kinds: jcc jmp\n"
    "                    ijmp call icall ret far async\n"
    "Sampling recordings (mem-loads, mem-stores, arm_spe) print one sample a line:\n"
    "  tid, time, operation, ip symbol+off => data address object+off, latency,\n"
    "  data source; tsv: tid ip addr latency data_src op time symbol object\n"
    "  --insn            every instruction: tid, time, ip, symbol+offset\n"
    "  --disasm          with --insn: disassembly (x86: Intel syntax; Arm: A64)\n"
    "  --calls           calls and returns, indented by depth, with durations\n"
    "  --no-time         leave out timestamps\n"
    "  --no-progress     no progress line on stderr (shown only when stderr is a\n"
    "                    terminal and stdout is not)\n"
    "  --srcline         source file:line after locations (DWARF line tables of the\n"
    "                    files, or their separate debug files); not with tsv\n"
    "  --debug-dir DIR   also look for separate debug files (stripped programs'\n"
    "                    symbols and lines) in DIR (like /usr/lib/debug: by\n"
    "                    .build-id/); repeatable; default $HWT_DEBUG_DIR (a:b)\n"
    "  -j N              decode on N threads (default: the online CPUs; the output\n"
    "                    is the same for every N)\n"
    "  --no-batch        decode block by block, not in batches (slower; the output\n"
    "                    is the same)\n"
    "  --last N          the flight recorder's report: per thread (or of --tid T)\n"
    "                    its last N taken branches and its call stack as\n"
    "                    reconstructed from the trace; the fatal signal if recorded\n"
    "Trace errors are printed inline as '[offset, ip: error: text]'; decoding goes\n"
    "on at the next PSB (cs_etm: A-sync).  Exit status 1 if there were any.\n"
    "(hwt script --pt FILE ... decodes a raw PT stream instead; see --pt --help.)\n";

enum mode { M_BRANCHES, M_INSN, M_CALLS };

/* --calls: per thread (hwt_dec_thread.user) */
#define CALL_STACK 256
struct calls {
	unsigned depth; /* call depth seen so far (calls - returns, >= 0) */
	uint64_t call_time[CALL_STACK];
	uint8_t call_have_time[CALL_STACK];
};

static void thread_free(void *arg, struct hwt_dec_thread *t)
{
	free(t->user);
	t->user = NULL;
}

struct printer {
	struct hwt_outbuf o;
	struct sp_symcache *sc;
	int mode, tsv, disasm, time;
	struct sl_cache *sl; /* --srcline */
};

static void loc(struct printer *pr, const struct hwt_image *img, uint64_t ip, struct hwt_out_loc *l)
{
	l->ip = ip;
	l->sym = sp_symbol(pr->sc, img, ip, &l->off);
	l->src = NULL;
	if (__builtin_expect(pr->sl != NULL, 0))
		l->src = sl_srcline(pr->sl, img, ip);
}

static void p_insn(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		   const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct printer *pr = arg;
	struct hwt_out_loc l;
	l.ip = in->ip;
	l.sym = sp_symbol(pr->sc, img, in->ip, &l.off);
	l.src = NULL;
	hwt_out_insn(&pr->o, t->tid, have_time && pr->time, time_ns, &l, pr->disasm, in->raw,
		     in->size, in->mode);
}

/* --insn --srcline (its own callback keeps p_insn lean) */
static void p_insn_src(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		       const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct printer *pr = arg;
	struct hwt_out_loc l;
	loc(pr, img, in->ip, &l);
	hwt_out_insn(&pr->o, t->tid, have_time && pr->time, time_ns, &l, pr->disasm, in->raw,
		     in->size, in->mode);
}

/* --branches --format tsv: no lookups (its own callback keeps it lean) */
static void p_branch_tsv(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
			 const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct printer *pr = arg;
	hwt_out_branch_tsv(&pr->o, t->tid, from, to, kind);
}

static void p_branches_tsv(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_branch *br,
			   size_t n, const struct hwt_image *img)
{
	struct printer *pr = arg;
	hwt_out_branches_tsv(&pr->o, t->tid, br, n);
}

/* The tsv loop for hwt_out_branches_tsv_text on every decoding thread:
 * the one the output buffer chose (read only) */
static void *p_text_ctx(void *arg)
{
	struct printer *pr = arg;
	return &pr->o.simd;
}

/* Text the decoding threads printed (hwt_out_branches_tsv_text) */
static void p_text(void *arg, const char *s, size_t n)
{
	struct printer *pr = arg;
	hwt_outbuf_write(&pr->o, s, n);
}

static void p_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		     const struct hwt_image *img, int have_time, uint64_t time_ns);

/* --branches (text) without --srcline: both ends symbolized, one
 * formatter call a line, nothing else per line */
static void p_branches_text(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_branch *br,
			    size_t n, const struct hwt_image *img)
{
	struct printer *pr = arg;
	struct hwt_out_loc lf = {0}, lt = {0};
	uint32_t tid = t->tid;
	int time = pr->time;
	for (size_t i = 0; i < n; i++) {
		lf.ip = br[i].from;
		lf.sym = sp_symbol(pr->sc, img, lf.ip, &lf.off);
		lt.ip = br[i].to;
		lt.sym = sp_symbol(pr->sc, img, lt.ip, &lt.off);
		hwt_out_branch_text(&pr->o, tid, time && br[i].have_time, br[i].time_ns, br[i].kind,
				    &lf, &lt);
	}
}

static void p_branches(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_branch *br,
		       size_t n, const struct hwt_image *img)
{
	for (size_t i = 0; i < n; i++)
		p_branch(arg, t, br[i].from, br[i].to, br[i].kind, img, br[i].have_time,
			 br[i].time_ns);
}

static void p_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		     const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct printer *pr = arg;
	have_time = have_time && pr->time;
	if (pr->mode == M_BRANCHES) {
		if (pr->tsv) {
			hwt_out_branch_tsv(&pr->o, t->tid, from, to, kind);
			return;
		}
		struct hwt_out_loc lf, lt;
		loc(pr, img, from, &lf);
		loc(pr, img, to, &lt);
		hwt_out_branch_text(&pr->o, t->tid, have_time, time_ns, kind, &lf, &lt);
		return;
	}
	if (pr->mode != M_CALLS)
		return;
	if (!t->user && !(t->user = calloc(1, sizeof(struct calls))))
		return;
	struct calls *cs = t->user;
	struct hwt_out_loc lf, lt;
	if (kind == HWT_BR_CALL || kind == HWT_BR_ICALL) {
		loc(pr, img, from, &lf);
		loc(pr, img, to, &lt);
		hwt_out_call(&pr->o, t->tid, have_time, time_ns, cs->depth, &lf, &lt);
		if (cs->depth < CALL_STACK) {
			cs->call_time[cs->depth] = time_ns;
			cs->call_have_time[cs->depth] = (uint8_t)have_time;
		}
		cs->depth++;
	} else if (kind == HWT_BR_RET) {
		int have_dur = 0;
		uint64_t dur = 0;
		if (cs->depth) {
			cs->depth--;
			if (cs->depth < CALL_STACK && cs->call_have_time[cs->depth] && have_time &&
			    time_ns >= cs->call_time[cs->depth]) {
				have_dur = 1;
				dur = time_ns - cs->call_time[cs->depth];
			}
		}
		loc(pr, img, from, &lf);
		loc(pr, img, to, &lt);
		hwt_out_ret(&pr->o, t->tid, have_time, time_ns, cs->depth, &lf, &lt, have_dur, dur);
	}
}

/* samples (PEBS, SPE): script_samples.c */
static void p_sample(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_sample *s)
{
	struct printer *pr = arg;
	ss_print_sample(&pr->o, pr->sc, t, s, pr->tsv, pr->time);
}

static void p_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	struct printer *pr = arg;
	hwt_out_gap(&pr->o, t ? t->tid : 0, offset, ip, hwt_errstr(err));
}

int hwt_script_perf(int argc, char **argv)
{
	const char *input = NULL;
	int srcline = 0, progress = 1;
	unsigned long long last = 0, tid = 0;
	int have_last = 0, have_tid = 0;
	struct printer pr;
	memset(&pr, 0, sizeof(pr));
	pr.time = 1;
	for (int i = 1, k; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
			if (i + 1 >= argc) {
				cli_err("script", "%s needs a file", a);
				return cli_usage_error(usage_text);
			}
			input = argv[++i];
		} else if (!strcmp(a, "--branches")) {
			pr.mode = M_BRANCHES;
		} else if ((k = sp_parse_decode_opt("script", argc, argv, &i)) != 0) {
			if (k < 0)
				return cli_usage_error(usage_text);
		} else if (!strcmp(a, "--insn")) {
			pr.mode = M_INSN;
		} else if (!strcmp(a, "--calls")) {
			pr.mode = M_CALLS;
		} else if (!strcmp(a, "--disasm")) {
			pr.disasm = 1;
		} else if (!strcmp(a, "--no-time")) {
			pr.time = 0;
		} else if (!strcmp(a, "--srcline")) {
			srcline = 1;
		} else if (!strcmp(a, "--no-progress")) {
			progress = 0;
		} else if (!strcmp(a, "--last") || !strcmp(a, "--tid")) {
			unsigned long long v;
			if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &v) || !v ||
			    v > 0x7fffffff) {
				cli_err("script", "%s needs a number > 0", a);
				return cli_usage_error(usage_text);
			}
			i++;
			if (a[2] == 'l')
				last = v, have_last = 1;
			else
				tid = v, have_tid = 1;
		} else if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
			const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || (strcmp(v, "tsv") && strcmp(v, "text"))) {
				cli_err("script", "unknown format '%s' (known: tsv, text)",
					v ? v : "");
				return cli_usage_error(usage_text);
			}
			pr.tsv = !strcmp(v, "tsv");
		} else if ((a[0] != '-' || !strcmp(a, "-")) && !input) {
			input = a;
		} else {
			cli_err("script", "unknown option '%s'", a);
			return cli_usage_error(usage_text);
		}
	}
	if (pr.disasm && pr.mode != M_INSN) {
		cli_err("script", "--disasm goes with --insn");
		return cli_usage_error(usage_text);
	}
	if (srcline && pr.tsv && pr.mode == M_BRANCHES) {
		cli_err("script", "--srcline goes with the text format");
		return cli_usage_error(usage_text);
	}
	if (!input)
		input = "hwt.data";
	if (have_tid && !have_last) {
		cli_err("script", "--tid goes with --last");
		return cli_usage_error(usage_text);
	}
	if (have_last) { /* the flight recorder's report (flight.c) */
		if (hwt_outbuf_init(&pr.o, STDOUT_FILENO, 1u << 16))
			return 2;
		int rc = flight_run(input, "script", (unsigned)last,
				    have_tid ? (long)tid : FLIGHT_ALL, 1, &pr.o);
		if (hwt_outbuf_fini(&pr.o) && rc == 0)
			rc = 1;
		return rc;
	}
	if (srcline && !(pr.sl = sl_cache_alloc()))
		return 2;
	if (hwt_outbuf_init(&pr.o, STDOUT_FILENO, 1u << 20)) {
		sl_cache_free(pr.sl);
		return 2;
	}
	pr.sc = sp_symcache_alloc();
	if (!pr.sc) {
		hwt_outbuf_fini(&pr.o);
		sl_cache_free(pr.sl);
		return 2;
	}
	struct hwt_decode_consumer c = {
	    .size = sizeof(c),
	    .arg = &pr,
	    /* only the disassembly needs the bytes */
	    .flags =
		(pr.time && !pr.tsv ? HWT_DEC_WANT_TIME : 0u) | (pr.disasm ? HWT_DEC_WANT_RAW : 0u),
	    .insn = pr.mode == M_INSN ? (pr.sl ? p_insn_src : p_insn) : NULL,
	    .branch = pr.mode == M_BRANCHES && pr.tsv ? p_branch_tsv : p_branch,
	    .gap = p_gap,
	    .sample = p_sample,
	    .thread_free = thread_free,
	    /* taken branches in arrays (the same lines, fewer calls) */
	    .branches = pr.mode == M_BRANCHES && pr.tsv	  ? p_branches_tsv
			: pr.mode == M_BRANCHES && !pr.sl ? p_branches_text
			: pr.mode != M_INSN		  ? p_branches
							  : NULL,
	    /* --format tsv -jN: the lines printed on the decoding threads */
	    .branches_text = pr.mode == M_BRANCHES && pr.tsv ? hwt_out_branches_tsv_text : NULL,
	    .text_max = HWT_OUT_TSV_LINE,
	    .text = p_text,
	    .text_ctx = p_text_ctx,
	};
	/* not when the output goes to the same terminal */
	struct progress *pg = progress_start("script", input, progress && !isatty(STDOUT_FILENO));
	int rc = sp_run_progress(input, "script", &c, pg);
	progress_stop(pg);
	if (hwt_outbuf_fini(&pr.o) && rc == 0)
		rc = 1;
	sp_symcache_free(pr.sc);
	sl_cache_free(pr.sl);
	return rc;
}
