/* tools/cmd_timeline.c - "hwt timeline": a recording's calls as a
 * timeline for trace viewers (Perfetto protobuf or Chrome JSON; the
 * writers are lib/out/timeline.c).
 *
 * A first pass over the sideband (COMM, FORK records; the trace itself is
 * skipped) names the threads and processes and collects exec events; the
 * decoding engine then feeds calls, returns, asynchronous branches
 * (signals, interrupts), system calls (syscall instructions) and trace
 * gaps to the writer as they come.  Exec
 * events are put on their thread's track before the first event that
 * follows them in time.  Memory: the writer's open calls per thread.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/x86.h"
#include "out/out.h"
#include "out/timeline.h"
#include "progress.h"
#include "hwt/decode.h"
#include "script_perf.h"
#include "timeline_int.h"

static const char usage_text[] =
    "usage: hwt timeline [-i FILE | FILE] [-o OUT] [--format perfetto|chrome]\n"
    "                    [--min-duration TIME] [--time START,END] [--max-depth N]\n"
    "                    [--no-progress] [-j N] [--no-batch]\n"
    "\n"
    "Write the calls of a recording (default hwt.data) as a timeline: one track\n"
    "per thread, grouped by process, one slice per call, instant events for\n"
    "trace gaps, asynchronous branches (signals, interrupts), system calls and exec.\n"
    "\n"
    "  -o OUT              output file (default: stdout, not a terminal)\n"
    "  --format perfetto   Perfetto's protobuf trace (default; ui.perfetto.dev)\n"
    "  --format chrome     Chrome's JSON trace (chrome://tracing, speedscope,\n"
    "                      ui.perfetto.dev)\n"
    "  --min-duration TIME leave out calls shorter than TIME (ns, or with a unit:\n"
    "                      ns, us, ms, s)\n"
    "  --time START,END    only this window, in the seconds 'hwt script' prints\n"
    "                      (e.g. 0.0012,0.0015; either may be left empty)\n"
    "  --max-depth N       leave out calls deeper than N per thread\n"
    "  --no-progress       no progress line on stderr\n"
    "  -j N                decode on N threads (default: the online CPUs; the\n"
    "                      result is the same for every N)\n"
    "  --no-batch          take every instruction by itself, not in ranges\n"
    "                      (slower; the result is the same)\n";

struct tl_exec {
	uint32_t pid, tid;
	uint64_t time;
	char comm[24];
};

struct tl_state {
	struct hwt_timeline *tl;
	struct sp_symcache *sc;
	struct tl_exec *ex; /* exec events not written yet, file order */
	size_t nex;
	int nomem;
};

/* "S.NNNNNNNNN" (seconds, as hwt script prints times) -> ns */
static int parse_seconds(const char *s, size_t len, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, nd = 0;
	if (!len)
		return -1;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nd++)
			if (nd < 9)
				frac = frac * 10 + (uint64_t)(s[i] - '0');
	}
	if (i != len)
		return -1;
	for (; nd < 9; nd++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return 0;
}

/* Sideband: thread and process names, exec events. */
static int sideband(const char *path, struct tl_state *st, struct hwt_timeline *tl)
{
	struct hwt_perf_reader *r;
	char err[256] = "";
	if (hwt_perf_reader_open(&r, path, err, sizeof(err))) {
		cli_err("timeline", "cannot read '%s': %s", path,
			err[0] ? err : "not a perf.data file");
		return -1;
	}
	struct hwt_perf_record rec;
	int rc;
	struct {
		uint32_t tid;
		char comm[24];
	} *names = NULL;
	size_t nnames = 0;
	while ((rc = hwt_perf_reader_next(r, &rec)) == 1) {
		if (rec.type == PERF_RECORD_FORK && rec.size >= sizeof(struct hwt_perf_rec_fork)) {
			/* a new thread or process: its parent's name until a COMM */
			const struct hwt_perf_rec_fork *f = (const void *)rec.hdr;
			for (size_t i = nnames; i-- > 0;)
				if (names[i].tid == f->ptid) {
					if (hwt_timeline_thread(tl, f->pid, f->tid, names[i].comm,
								names[i].comm))
						st->nomem = 1;
					break;
				}
		}
		if (rec.type == PERF_RECORD_COMM && rec.size > sizeof(struct hwt_perf_rec_comm)) {
			const struct hwt_perf_rec_comm *c = (const void *)rec.hdr;
			char comm[24];
			size_t max = rec.size - sizeof(*c);
			const char *s = (const char *)(c + 1);
			size_t n = strnlen(s, max < sizeof(comm) - 1 ? max : sizeof(comm) - 1);
			memcpy(comm, s, n);
			comm[n] = 0;
			if (hwt_timeline_thread(tl, c->pid, c->tid, c->pid == c->tid ? comm : NULL,
						comm))
				st->nomem = 1;
			void *nn = realloc(names, (nnames + 1) * sizeof(*names));
			if (nn) {
				names = nn;
				names[nnames].tid = c->tid;
				memcpy(names[nnames].comm, comm, n + 1);
				nnames++;
			}
			if ((rec.misc & PERF_RECORD_MISC_COMM_EXEC) && rec.have_sid) {
				struct tl_exec *nv = realloc(st->ex, (st->nex + 1) * sizeof(*nv));
				if (!nv) {
					st->nomem = 1;
					continue;
				}
				st->ex = nv;
				nv[st->nex].pid = c->pid;
				nv[st->nex].tid = c->tid;
				nv[st->nex].time = rec.sid.time;
				memcpy(nv[st->nex].comm, comm, n + 1);
				st->nex++;
			}
		}
	}
	free(names);
	if (rc < 0)
		cli_err("timeline", "cannot read '%s': %s", path, hwt_perf_reader_errmsg(r));
	hwt_perf_reader_free(r);
	return rc < 0 ? -1 : 0;
}

/* Exec events of tid up to time t (all of them: t UINT64_MAX). */
static void flush_exec(struct tl_state *st, uint32_t tid, uint64_t t)
{
	for (size_t i = 0; i < st->nex; i++) {
		struct tl_exec *e = &st->ex[i];
		if (e->tid != tid || e->time > t || !e->tid)
			continue;
		hwt_timeline_instant(st->tl, e->pid, e->tid, e->time, "exec", e->comm);
		e->tid = 0; /* written */
	}
}

static void t_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		     const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	struct tl_state *st = arg;
	if (!have_time)
		time_ns = 0; /* the thread's last time */
	if (st->nex)
		flush_exec(st, t->tid, have_time ? time_ns : 0);
	int rc = 0;
	if (kind == HWT_BR_CALL || kind == HWT_BR_ICALL) {
		uint64_t off;
		const char *name = sp_symbol(st->sc, img, to, &off);
		char buf[64];
		if (!name) {
			snprintf(buf, sizeof(buf), "[unknown] 0x%llx", (unsigned long long)to);
			name = buf;
		}
		rc = hwt_timeline_call(st->tl, t->pid, t->tid, time_ns, name);
	} else if (kind == HWT_BR_RET) {
		rc = hwt_timeline_return(st->tl, t->pid, t->tid, time_ns);
	} else if (kind == HWT_BR_ASYNC || kind == HWT_BR_FAR) {
		char d[80];
		snprintf(d, sizeof(d), "0x%llx => 0x%llx", (unsigned long long)from,
			 (unsigned long long)to);
		rc = hwt_timeline_instant(
		    st->tl, t->pid, t->tid, time_ns,
		    kind == HWT_BR_ASYNC ? "async branch (signal, interrupt)" : "far branch", d);
	}
	if (rc)
		st->nomem = 1;
}

/* Instructions: only system calls matter (the trace shows them as the
 * syscall instruction; with user-only tracing the kernel's part is not
 * traced). */
static void t_insn(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_insn *in,
		   const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	if (__builtin_expect(in->iclass != HWT_INSN_SYSCALL, 1))
		return;
	struct tl_state *st = arg;
	char d[48];
	snprintf(d, sizeof(d), "at 0x%llx", (unsigned long long)in->ip);
	if (hwt_timeline_instant(st->tl, t->pid, t->tid, have_time ? time_ns : 0, "syscall", d))
		st->nomem = 1;
}

/* Ranges: a system call is the last instruction of its range (ranges end
 * after far transfers), at the range's time; then the branch, as
 * t_insn and t_branch take them. */
static void t_ranges(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_range *rg, size_t n,
		     const struct hwt_image *img)
{
	for (size_t i = 0; i < n; i++) {
		const struct hwt_dec_range *x = &rg[i];
		if (__builtin_expect(x->n && x->iclass == HWT_INSN_SYSCALL, 0)) {
			struct hwt_dec_insn in;
			memset(&in, 0, sizeof(in));
			in.ip = x->last;
			in.iclass = HWT_INSN_SYSCALL;
			t_insn(arg, t, &in, img, x->have_time, x->time_ns);
		}
		if (x->kind != HWT_DEC_NO_BRANCH)
			t_branch(arg, t, x->from, x->to, x->kind, img, x->br_have_time,
				 x->br_time_ns);
	}
}

static void t_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	struct tl_state *st = arg;
	if (!t)
		return;
	char d[160];
	snprintf(d, sizeof(d), "%s at trace offset 0x%llx, ip 0x%llx", hwt_errstr(err),
		 (unsigned long long)offset, (unsigned long long)ip);
	if (hwt_timeline_instant(st->tl, t->pid, t->tid, 0, "trace gap", d))
		st->nomem = 1;
}

int timeline_write(const char *input, int fd, const char *what,
		   const struct hwt_timeline_config *cfg, int progress)
{
	struct hwt_outbuf o;
	if (hwt_outbuf_init(&o, fd, 1u << 20))
		return 2;
	struct tl_state st;
	memset(&st, 0, sizeof(st));
	st.tl = hwt_timeline_alloc(cfg, &o);
	st.sc = sp_symcache_alloc();
	int rc = 2;
	if (!st.tl || !st.sc) {
		cli_err("timeline", "out of memory");
		goto out;
	}
	if (strcmp(input, "-") && sideband(input, &st, st.tl)) /* a pipe is read once */
		goto out;
	struct hwt_decode_consumer c = {
	    .size = sizeof(c),
	    .arg = &st,
	    .flags = HWT_DEC_WANT_TIME,
	    .insn = t_insn,
	    .branch = t_branch,
	    .gap = t_gap,
	};
	if (!sp_no_batch()) { /* (per instruction: the reference) */
		c.insn = NULL;
		c.branch = NULL;
		c.ranges = t_ranges;
	}
	struct progress *pg = progress_start("timeline", input, progress);
	rc = sp_run_progress(input, "timeline", &c, pg);
	progress_stop(pg);
	if (rc != 2) {
		for (size_t i = 0; i < st.nex; i++)
			if (st.ex[i].tid)
				flush_exec(&st, st.ex[i].tid, UINT64_MAX);
		int err = hwt_timeline_finish(st.tl);
		if (err || st.nomem) {
			cli_err("timeline", "%s",
				err == HWT_ERR_IO
				    ? "cannot write the timeline (disk full? a closed pipe?)"
				    : "out of memory: the timeline is incomplete");
			rc = 2;
		}
	}
out:
	if (hwt_outbuf_fini(&o) && rc != 2) {
		cli_err("timeline", "cannot write '%s'", what);
		rc = 2;
	}
	hwt_timeline_free(st.tl);
	sp_symcache_free(st.sc);
	free(st.ex);
	return rc;
}

int hwt_cmd_timeline(int argc, char **argv)
{
	const char *input = NULL, *output = NULL;
	struct hwt_timeline_config cfg;
	hwt_timeline_config_init(&cfg);
	cfg.format = HWT_TL_PERFETTO;
	int progress = 1;
	for (int i = 1, k; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if ((k = sp_parse_decode_opt("timeline", argc, argv, &i)) != 0) {
			if (k < 0)
				return cli_usage_error(usage_text);
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "-i") || !strcmp(a, "--input") || !strcmp(a, "-o") ||
			   !strcmp(a, "--output")) {
			if (!v) {
				cli_err("timeline", "%s needs a file", a);
				return cli_usage_error(usage_text);
			}
			*(a[1] == 'i' || a[2] == 'i' ? &input : &output) = v;
			i++;
		} else if (!strcmp(a, "--format")) {
			if (!v || (strcmp(v, "perfetto") && strcmp(v, "chrome"))) {
				cli_err("timeline", "unknown format '%s' (known: perfetto, chrome)",
					v ? v : "");
				return cli_usage_error(usage_text);
			}
			cfg.format = !strcmp(v, "chrome") ? HWT_TL_CHROME : HWT_TL_PERFETTO;
			i++;
		} else if (!strcmp(a, "--min-duration")) {
			if (!v || cli_parse_duration(v, &cfg.min_duration_ns)) {
				cli_err("timeline",
					"--min-duration needs a time (e.g. 500, 2us, 1ms)");
				return cli_usage_error(usage_text);
			}
			i++;
		} else if (!strcmp(a, "--max-depth")) {
			unsigned long long d;
			if (!v || cli_parse_u64(v, &d) || d == 0 || d > 1u << 20) {
				cli_err("timeline", "--max-depth needs a number from 1");
				return cli_usage_error(usage_text);
			}
			cfg.max_depth = (unsigned)d;
			i++;
		} else if (!strcmp(a, "--time")) {
			const char *comma = v ? strchr(v, ',') : NULL;
			if (!comma ||
			    (comma > v && parse_seconds(v, (size_t)(comma - v), &cfg.start_ns)) ||
			    (comma[1] &&
			     parse_seconds(comma + 1, strlen(comma + 1), &cfg.end_ns)) ||
			    (cfg.end_ns && cfg.end_ns < cfg.start_ns)) {
				cli_err("timeline",
					"--time needs START,END in seconds (e.g. 0.0012,0.0015)");
				return cli_usage_error(usage_text);
			}
			i++;
		} else if (!strcmp(a, "--no-progress")) {
			progress = 0;
		} else if ((a[0] != '-' || !strcmp(a, "-")) && !input) {
			input = a;
		} else {
			cli_err("timeline", "unknown option '%s'", a);
			return cli_usage_error(usage_text);
		}
	}
	if (!input)
		input = "hwt.data";
	int fd = 1;
	if (output && strcmp(output, "-")) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			cli_err("timeline",
				"cannot write '%s': %m (check the folder exists and is "
				"writable)",
				output);
			return 2;
		}
	} else if (isatty(1)) {
		cli_err("timeline", "the timeline is a file for a viewer: give -o OUT, or "
				    "redirect stdout");
		return 2;
	}
	int rc = timeline_write(input, fd, output ? output : "stdout", &cfg, progress);
	if (fd != 1 && close(fd) && rc != 2) {
		cli_err("timeline", "cannot write '%s': %m", output);
		rc = 2;
	}
	return rc;
}
