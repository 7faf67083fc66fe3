/* tools/cmd_record.c - "hwt record": run a program (or attach to one, or
 * trace CPUs) under a trace unit and write a perf.data file.
 *
 * Flow: parse options -> check everything that can be checked before the
 * program runs (command found, x86-64 ELF for intel_pt, unit present,
 * output writable; each failure is one line and exit 2) -> open the
 * session (lib/unit) -> rename an existing output to FILE.old, create FILE
 * (0600) -> start -> declare the attrs (ids of the streams just opened)
 * and the synthesized records (AUXTRACE_INFO, ID_INDEX, for -p/-t the
 * process's COMM and executable mappings) -> pump: every data-ring record
 * is copied as is, every AUX range becomes an AUXTRACE record -> stop,
 * TIME_CONV, finish -> a perf-like summary line; exit with the program's
 * status (128+N if signal N killed it).
 *
 * Signals: SIGINT/SIGTERM stop the recording (the program gets SIGINT, then
 * SIGKILL after 2 s) and still leave a complete file; SIGUSR2 takes a
 * snapshot in -S mode.  The flags are this tool's only globals.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "flight.h"
#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/unit.h"
#include "record_int.h"
#include "unit/unit_int.h"

static const char usage_text[] =
    "usage: hwt record [-e EVENT[/TERMS/][u]] [--emulate|--no-emulate] [-o FILE] [-m SIZE]\n"
    "                  [-S[SIZE]] [--flight-recorder[=SIZE] [--last N]]\n"
    "                  [--filter SPEC] [--truth FILE]\n"
    "                  [--no-follow-exec | --follow-exec=GLOB...]\n"
    "                  [-p PID | -t TID | -a | -C LIST] [-N] [--] [CMD ARGS...]\n"
    "Record CMD (or a running process, or CPUs) into a perf.data file.\n"
    "  -e EVENT        intel_pt (default), intel_bts, arm_spe, cs_etm, mem-loads,\n"
    "                  mem-stores, dummy (sideband only); terms as perf's:\n"
    "                  intel_pt/tsc,mtc,mtc_period=3,cyc,cyc_thresh=N,psb_period=N,\n"
    "                  noretcomp,branch=0/u, mem-loads/ldlat=30/ (emulated PEBS)\n"
    "  -c N            sample period of a sampling event (mem-loads, mem-stores,\n"
    "                  arm_spe)\n"
    "  --emulate       use the emulated unit (QEMU; intel_pt, intel_bts, cs_etm,\n"
    "                  arm_spe, mem-loads, mem-stores) even if\n"
    "                  hardware exists\n"
    "  --no-emulate    hardware only: fail if the trace unit is not present\n"
    "  -o FILE         output (default hwt.data; an existing one becomes FILE.old);\n"
    "                  '-': standard output (perf's pipe mode on a pipe; the program's\n"
    "                  own standard output then goes to standard error)\n"
    "  -m SIZE         AUX buffer per stream: bytes with K/M/G suffix, or pages;\n"
    "                  DATA,AUX sets both rings\n"
    "  -S[SIZE]        snapshot mode: keep the newest SIZE bytes, written on SIGUSR2\n"
    "                  and at the end\n"
    "  --filter SPEC   address filters: 'filter|start|stop|tracestop ADDR|SYM[/SIZE]\n"
    "                  [@FILE]', comma separated\n"
    "  --truth FILE    emulated unit: write the ground truth to FILE (branches;\n"
    "                  mem-loads/mem-stores/arm_spe: the sampled operations)\n"
    "  --no-follow-exec  emulated unit: programs started by exec() run untraced\n"
    "                  (by default they are traced too, in the same stream)\n"
    "  --follow-exec=GLOB  emulated unit: follow only programs whose path matches\n"
    "                  GLOB (fnmatch; without '/': the file name); repeatable;\n"
    "                  the others run untraced, with what they start\n"
    "  --flight-recorder[=SIZE]  keep only the newest SIZE (default 256K) of each\n"
    "                  thread's trace (snapshot mode); when the program dies of\n"
    "                  SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT, print which thread\n"
    "                  died, its last branches and its call stack on stderr\n"
    "  --last N        with --flight-recorder: print N branches (default 32)\n"
    "  -p PID, -t TID  attach to a running process / thread\n"
    "  -a, -C LIST     trace all / the listed CPUs (needs perf_event_paranoid <= 0)\n"
    "  -N, --no-buildid-cache  do not save the vdso into the build-id cache\n"
    "                  ($PERF_BUILDID_DIR, else ~/.debug; its build-id is in FILE)\n"
    "Exit status: the program's (128+N if killed by signal N); 2 on setup errors.\n";

static volatile sig_atomic_t g_stop, g_snap;

static void on_stop(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void on_snap(int sig)
{
	(void)sig;
	g_snap = 1;
}

static int parse_size(const char *s, uint64_t *out, int pages_if_plain)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (end == s || errno)
		return -1;
	uint64_t mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024ULL * 1024 * 1024, end++;
	else if (pages_if_plain)
		mul = (uint64_t)sysconf(_SC_PAGESIZE);
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = v * mul;
	return 0;
}

static uint64_t round_pow2(uint64_t v)
{
	uint64_t p = 4096;
	while (p < v)
		p <<= 1;
	return p;
}

static int parse_cpus(const char *s, int **out, size_t *n)
{
	int *v = NULL;
	size_t k = 0;
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;
		if (end == p || a < 0 || a > 4095)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b > 4095)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			int *nv = realloc(v, (k + 1) * sizeof(int));
			if (!nv)
				goto bad;
			v = nv;
			v[k++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (!k)
		goto bad;
	*out = v;
	*n = k;
	return 0;
bad:
	free(v);
	return -1;
}

/* The ELF machine of a file: EM_*, 0 if not ELF, -1 if unreadable. */
static int elf_machine(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n < (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return 0;
	return h[EI_DATA] == ELFDATA2LSB ? (h[18] | h[19] << 8) : (h[19] | h[18] << 8);
}

struct rec_opts {
	const char *event, *output, *filter, *truth;
	const char *follow_exec; /* --follow-exec globs, '\n'-separated */
	int no_follow_exec;
	int emulate, all_cpus, snapshot, no_buildid_cache;
	int flight;	 /* --flight-recorder */
	unsigned last_n; /* --last */
	uint64_t aux_bytes, data_bytes, snapshot_bytes;
	const char *period; /* -c N: the event's sample period (term period=N) */
	pid_t pid, tid;
	int *cpus;
	size_t ncpus;
	char **cmd;
};

static int parse_args(int argc, char **argv, struct rec_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->event = "intel_pt";
	o->output = "hwt.data";
	o->pid = o->tid = -1;
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
#define NEEDVAL()                                                                                  \
	do {                                                                                       \
		if (i + 1 >= argc) {                                                               \
			cli_err("record", "option %s needs a value", a);                           \
			return cli_usage_error(usage_text);                                        \
		}                                                                                  \
		val = argv[++i];                                                                   \
	} while (0)
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (a[0] != '-') {
			break;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return -1;
		} else if (!strcmp(a, "-e") || !strcmp(a, "--event")) {
			NEEDVAL();
			o->event = val;
		} else if (!strncmp(a, "-e", 2) && a[2]) {
			o->event = a + 2;
		} else if (!strcmp(a, "-c") || !strcmp(a, "--count")) {
			NEEDVAL();
			o->period = val;
		} else if (!strcmp(a, "-N") || !strcmp(a, "--no-buildid-cache")) {
			o->no_buildid_cache = 1;
		} else if (!strcmp(a, "--emulate")) {
			o->emulate = 1;
		} else if (!strcmp(a, "--no-emulate")) {
			o->emulate = -1;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			NEEDVAL();
			o->output = val;
		} else if (!strcmp(a, "-m") || !strcmp(a, "--mmap-pages")) {
			NEEDVAL();
			const char *comma = strchr(val, ',');
			char first[64];
			snprintf(first, sizeof(first), "%.*s",
				 (int)(comma ? (size_t)(comma - val) : strlen(val)), val);
			uint64_t v;
			if (comma) {
				if ((first[0] && parse_size(first, &o->data_bytes, 1)) ||
				    parse_size(comma + 1, &o->aux_bytes, 1))
					goto badsize;
			} else if (parse_size(first, &v, 1)) {
				goto badsize;
			} else {
				o->aux_bytes = v;
			}
			continue;
		badsize:
			cli_err("record", "bad size '%s' for -m (e.g. 4M, 256K, 64 pages)", val);
			return 2;
		} else if (!strncmp(a, "-S", 2) || !strncmp(a, "--snapshot", 10)) {
			o->snapshot = 1;
			const char *sz = a[1] == 'S' ? a + 2 : a + 10;
			if (*sz == '=')
				sz++;
			if (*sz && parse_size(sz, &o->snapshot_bytes, 0)) {
				cli_err("record", "bad snapshot size '%s'", sz);
				return 2;
			}
		} else if (!strncmp(a, "--flight-recorder", 17) && (!a[17] || a[17] == '=')) {
			o->flight = 1;
			o->snapshot = 1;
			if (a[17] && parse_size(a + 18, &o->snapshot_bytes, 0)) {
				cli_err("record", "bad flight recorder size '%s' (e.g. 256K, 1M)",
					a + 18);
				return 2;
			}
		} else if (!strcmp(a, "--last")) {
			NEEDVAL();
			unsigned long long v;
			if (cli_parse_u64(val, &v) || !v || v > 1000000) {
				cli_err("record", "bad branch count '%s' for --last", val);
				return 2;
			}
			o->last_n = (unsigned)v;
		} else if (!strcmp(a, "--filter")) {
			NEEDVAL();
			o->filter = val;
		} else if (!strcmp(a, "--no-follow-exec")) {
			o->no_follow_exec = 1;
		} else if (!strncmp(a, "--follow-exec", 13) && (a[13] == '=' || !a[13])) {
			if (!a[13])
				NEEDVAL();
			const char *g = a[13] ? a + 14 : val;
			static char globs[8192]; /* every --follow-exec, '\n'-separated */
			size_t ol = strlen(globs);
			if (!*g || strchr(g, '\n') || ol + strlen(g) + 2 > sizeof(globs)) {
				cli_err("record", "bad glob '%s' for --follow-exec", g);
				return 2;
			}
			snprintf(globs + ol, sizeof(globs) - ol, "%s%s", ol ? "\n" : "", g);
			o->follow_exec = globs;
		} else if (!strcmp(a, "--truth")) {
			NEEDVAL();
			o->truth = val;
		} else if (!strcmp(a, "-p") || !strcmp(a, "-t")) {
			NEEDVAL();
			unsigned long long v;
			if (cli_parse_u64(val, &v) || !v || v > 0x7fffffff) {
				cli_err("record", "bad %s '%s'", a[1] == 'p' ? "PID" : "TID", val);
				return 2;
			}
			if (a[1] == 'p')
				o->pid = (pid_t)v;
			else
				o->tid = (pid_t)v;
		} else if (!strcmp(a, "-a") || !strcmp(a, "--all-cpus")) {
			o->all_cpus = 1;
		} else if (!strcmp(a, "-C") || !strcmp(a, "--cpu")) {
			NEEDVAL();
			if (parse_cpus(val, &o->cpus, &o->ncpus)) {
				cli_err("record", "bad CPU list '%s' (e.g. 0,2-3)", val);
				return 2;
			}
		} else {
			cli_err("record", "unknown option '%s'", a);
			return cli_usage_error(usage_text);
		}
#undef NEEDVAL
	}
	o->cmd = i < argc ? argv + i : NULL;
	int modes = (o->pid > 0) + (o->tid > 0) + (o->all_cpus || o->cpus);
	if (modes > 1) {
		cli_err("record", "-p, -t and -a/-C exclude each other");
		return 2;
	}
	if (!o->cmd && !modes) {
		cli_err("record", "nothing to record: give a command, -p PID, -t TID, -a or -C");
		return cli_usage_error(usage_text);
	}
	if (o->cmd && (o->pid > 0 || o->tid > 0)) {
		cli_err("record", "-p/-t attach to a running program: give no command");
		return 2;
	}
	if (o->last_n && !o->flight) {
		cli_err("record", "--last goes with --flight-recorder");
		return 2;
	}
	if (o->flight && !strcmp(o->output, "-")) {
		cli_err("record", "--flight-recorder reads its file back for the report: give -o "
				  "FILE, not -o -");
		return 2;
	}
	if (o->flight) { /* per-thread rings of the flight recorder's size */
		if (!o->snapshot_bytes)
			o->snapshot_bytes = 256 << 10;
		if (!o->aux_bytes)
			o->aux_bytes = o->snapshot_bytes;
		if (!o->last_n)
			o->last_n = FLIGHT_DEFAULT_LAST;
	}
	if (o->aux_bytes)
		o->aux_bytes = round_pow2(o->aux_bytes);
	if (o->data_bytes)
		o->data_bytes = round_pow2(o->data_bytes);
	return 0;
}

/* Pre-flight: "one clear line and exit 2 before anything runs". */
static int preflight(const struct rec_opts *o, char *prog, size_t proglen)
{
	if (o->cmd) {
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(o->event, "/:"), o->event);
		/* cs_etm (emulated) finds bare names in the aarch64 sysroot */
		int a64 = !strcmp(name, "cs_etm") || !strcmp(name, "arm_spe");
		if (a64 && !strchr(o->cmd[0], '/'))
			return 0;
		if (hwt_find_program(o->cmd[0], prog, proglen)) {
			cli_err("record", "command not found: '%s'", o->cmd[0]);
			return 2;
		}
		int m = elf_machine(prog);
		int bts = !strcmp(name, "intel_bts");
		if ((bts || !strcmp(name, "intel_pt")) && m == EM_AARCH64) {
			cli_err(
			    "record",
			    "'%s' is not an x86-64 program (it is aarch64): Intel %s traces x86-64 "
			    "code; record it with -e cs_etm (the emulated CoreSight ETM)",
			    prog, bts ? "BTS" : "PT");
			return 2;
		}
		if ((bts || !strcmp(name, "intel_pt")) && m > 0 && m != EM_X86_64) {
			cli_err("record",
				"'%s' is not an x86-64 program (ELF machine %d): Intel %s traces "
				"x86-64 code only",
				prog, m, bts ? "BTS" : "PT");
			return 2;
		}
		if (a64 && m == EM_X86_64) {
			cli_err("record",
				"'%s' is an x86-64 program: %s traces Arm code; record it "
				"with -e intel_pt",
				prog, name[0] == 'c' ? "CoreSight ETM" : "Arm SPE");
			return 2;
		}
	}
	if (!strcmp(o->output, "-"))
		return 0; /* standard output */
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", o->output);
	const char *d = dirname(dir);
	if (access(d, W_OK | X_OK)) {
		cli_err("record", "cannot write '%s': %s (choose another file with -o)", o->output,
			strerror(errno));
		return 2;
	}
	struct stat sb;
	if (!stat(o->output, &sb) && S_ISDIR(sb.st_mode)) {
		cli_err("record", "cannot write '%s': it is a directory", o->output);
		return 2;
	}
	return 0;
}

/* "name[/terms/][mods]" with term=value added to the terms. */
static const char *event_with_term(const char *ev, const char *term, const char *value, char *buf,
				   size_t len)
{
	const char *sl = strchr(ev, '/');
	if (!sl) {
		size_t n = strcspn(ev, ":");
		snprintf(buf, len, "%.*s/%s=%s/%s", (int)n, ev, term, value,
			 ev[n] ? ev + n + 1 : "");
		return buf;
	}
	const char *end = strchr(sl + 1, '/');
	if (!end)
		end = sl + strlen(sl);
	snprintf(buf, len, "%.*s%s%s=%s%s", (int)(end - ev), ev, end > sl + 1 ? "," : "", term,
		 value, *end ? end : "/");
	return buf;
}

static int exit_code(int wstatus)
{
	if (wstatus < 0)
		return 0;
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

int hwt_cmd_record(int argc, char **argv)
{
	struct rec_opts o;
	int r = parse_args(argc, argv, &o);
	if (r)
		return r < 0 ? 0 : r;
	char prog[PATH_MAX] = "";
	r = preflight(&o, prog, sizeof(prog));
	if (r) {
		free(o.cpus);
		return r;
	}

	struct hwt_record rec;
	memset(&rec, 0, sizeof(rec));
	struct hwt_session_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	char fevent[512];
	if (o.flight)
		o.event = flight_event(o.event, o.snapshot_bytes, fevent, sizeof(fevent));
	char pevent[600];
	if (o.period) /* perf's -c: the period term of the event */
		o.event = event_with_term(o.event, "period", o.period, pevent, sizeof(pevent));
	cfg.event = o.event;
	cfg.emulate = o.emulate;
	cfg.aux_bytes = o.aux_bytes;
	cfg.data_bytes = o.data_bytes;
	cfg.snapshot = o.snapshot;
	cfg.snapshot_bytes = o.snapshot_bytes;
	cfg.filter = o.filter;
	cfg.truth_path = o.truth;
	cfg.no_follow_exec = o.no_follow_exec;
	cfg.follow_exec = o.follow_exec;
	cfg.sideband = 1;
	cfg.inherit = o.cmd && !(o.all_cpus || o.cpus);
	struct hwt_sink sink;
	hwt_record_sink(&rec, &sink);
	char err[1024];
	struct hwt_session *s;
	r = hwt_session_open(&s, &cfg, &sink, err, sizeof(err));
	if (r) {
		cli_err("record", "%s", err);
		free(o.cpus);
		return 2;
	}
	const struct hwt_unit_ops *unit = hwt_session_unit(s);
	if (hwt_session_notice(s)[0])
		fprintf(stderr, "hwt record: %s\n", hwt_session_notice(s));
	if (o.truth && !unit->emulated) {
		cli_err("record", "--truth needs the emulated unit (--emulate)");
		hwt_session_close(s);
		free(o.cpus);
		return 2;
	}
	rec.vdso = !unit->emulated;
	rec.no_buildid_cache = o.no_buildid_cache;
	if (hwt_record_open_output(&rec, o.output, argc, argv, err, sizeof(err))) {
		cli_err("record", "%s", err);
		hwt_session_close(s);
		free(o.cpus);
		return 2;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_snap;
	sigaction(SIGUSR2, &sa, NULL);

	pid_t child = -1, plain_child = -1;
	if (o.pid > 0 || o.tid > 0)
		r = hwt_session_attach(s, o.pid, o.tid, err, sizeof(err));
	else if (o.all_cpus || o.cpus)
		r = hwt_session_open_cpus(s, o.cpus, o.ncpus, err, sizeof(err));
	else
		r = hwt_session_start_cmd(s, o.cmd, &child, err, sizeof(err));
	if (!r && o.cmd && (o.all_cpus || o.cpus)) {
		plain_child = fork();
		if (plain_child == 0) {
			execvp(o.cmd[0], o.cmd);
			_exit(127);
		}
	}
	if (r) {
		cli_err("record", "%s", err);
		hwt_record_abort(&rec);
		hwt_session_close(s);
		free(o.cpus);
		return 2;
	}
	if (hwt_record_begin(&rec, s, o.event, o.pid > 0 ? o.pid : o.tid, err, sizeof(err))) {
		cli_err("record", "%s", err);
		hwt_record_abort(&rec);
		hwt_session_close(s);
		free(o.cpus);
		return 2;
	}

	int plain_status = -1;
	struct timespec stop_at = {0, 0};
	int stop_sent = 0, rc = 0;
	for (;;) {
		r = hwt_session_pump(s, 100);
		/* Emulated units: each process has its own clock (its instruction
		 * count), so a round could end before a late process's earlier
		 * records: perf then sorts the whole file once. */
		if (!unit->emulated)
			(void)hwt_record_round(&rec);
		if (r < 0) {
			cli_err("record", "reading the trace failed: %s", hwt_errstr(r));
			rc = 1;
			break;
		}
		if (r == 1)
			break;
		if (rec.err) {
			cli_err("record", "writing '%s' failed: %s", o.output, hwt_errstr(rec.err));
			rc = 1;
			break;
		}
		if (g_snap) {
			g_snap = 0;
			(void)hwt_session_snapshot(s);
		}
		if (plain_child > 0) {
			if (waitpid(plain_child, &plain_status, WNOHANG) == plain_child)
				break;
		}
		if (g_stop) {
			pid_t target = child > 0 ? child : plain_child;
			if (target <= 0)
				break;
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (!stop_sent) {
				kill(target, SIGINT);
				stop_sent = 1;
				stop_at = now;
				stop_at.tv_sec += 2;
			} else if (now.tv_sec > stop_at.tv_sec ||
				   (now.tv_sec == stop_at.tv_sec &&
				    now.tv_nsec >= stop_at.tv_nsec)) {
				kill(target, SIGKILL);
				stop_at.tv_sec += 3600;
			}
			if (plain_child > 0 &&
			    waitpid(plain_child, &plain_status, WNOHANG) == plain_child)
				break;
		}
	}
	(void)hwt_session_stop(s);
	int status = plain_child > 0 ? plain_status : hwt_session_exit_status(s);
	struct hwt_session_stats stats;
	hwt_session_get_stats(s, &stats);
	struct flight_fatal fatal;
	int fatal_known = plain_child <= 0 && !rc &&
			  flight_record_fatal(&rec, s, child, status, &fatal) == 0 && fatal.sig;
	int fr = hwt_record_finish(&rec, s, err, sizeof(err));
	hwt_session_close(s);
	free(o.cpus);
	if (fr) {
		cli_err("record", "%s", err);
		return 2;
	}
	fprintf(stderr,
		"[ hwt record: Wrote %.3f MB to %s: %zu stream%s, %llu trace bytes, %llu records, "
		"lost %llu, truncated %llu, partial %llu, collision %llu ]\n",
		(double)rec.bytes_written / (1024.0 * 1024.0), o.output, stats.streams,
		stats.streams == 1 ? "" : "s", (unsigned long long)stats.aux_bytes,
		(unsigned long long)rec.records, (unsigned long long)stats.lost_records,
		(unsigned long long)stats.aux_truncated, (unsigned long long)stats.aux_partial,
		(unsigned long long)stats.aux_collision);
	if (o.flight && fatal_known && flight_is_crash(fatal.sig))
		flight_record_report(o.output, o.last_n, &fatal);
	if (rc)
		return rc;
	if (o.pid > 0 || o.tid > 0 || ((o.all_cpus || o.cpus) && plain_child <= 0))
		return 0;
	return exit_code(status);
}
