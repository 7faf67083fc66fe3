/* lib/unit/emu_pt.c - the emulated Intel PT unit: a program run under
 * qemu-x86_64 with hwt's TCG plugin (emu/, built as hwt-pt-plugin.so).
 *
 * Lifecycle: probe (qemu-x86_64 and the plugin found?) -> configure (perf
 * intel_pt terms -> the attr.config bits a real intel_pt event would have,
 * and plugin arguments) -> launch (private temp dir + announce pipe; fork;
 * exec qemu-x86_64 -plugin ...,dir=D,fd=N -- PROG ARGS; the program keeps
 * stdin/stdout/stderr, environment and cwd) -> poll (the plugin announces
 * each thread's stream file "S pid tid ppid ptid path" and its end
 * "E tid wait_ns"; each file is mapped and becomes a session stream with
 * fd = -1; done once every qemu process closed the pipe and the launched
 * one is reaped; then the streams that never ended (threads a signal
 * killed) get their box appended, unit/emu_abi.h, the streams' truth
 * files are joined into the --truth file, and the thread a fatal
 * signal killed is read from QEMU's per-thread log, qemu_logs_fatal) ->
 * close (unmap, remove the temp dir, kill a leftover child).  Ownership: the unit's private state
 * (struct emu_priv) belongs to the session (unit_priv); the stream mappings are unmapped in close.
 * Limits: x86-64 Linux ELF programs (and #! scripts whose interpreter is
 * one); threads in one process number at most what the plugin supports.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"
#include "hwt/pt_packet.h"
#include "unit/emu_abi.h"
#include "unit/emu_link.h"
#include "unit/unit_int.h"

#define EMU_PMU_TYPE 8 /* attr.type of the emulated intel_pt event */
#define EMU_TSC_CTC_N 40
#define EMU_TSC_CTC_D 1
#define EMU_CBR 10

/* perf's intel_pt format (config bits) */
#define CFG_PT (1ull << 0)
#define CFG_CYC (1ull << 1)
#define CFG_MTC (1ull << 9)
#define CFG_TSC (1ull << 10)
#define CFG_NORETCOMP (1ull << 11)
#define CFG_BRANCH (1ull << 13)
#define CFG_MTC_PERIOD_SHIFT 14
#define CFG_CYC_THRESH_SHIFT 19
#define CFG_PSB_PERIOD_SHIFT 24

struct emu_priv {
	uint64_t config;
	int bts;		/* the emulated intel_bts unit (fmt=bts) */
	char *fmt_args;		/* another unit of the plugin (emu_pebs.c): its arguments */
	int fatal_log;		/* qemu writes its fatal-signal trace line to dir/fatal.<tid> */
	int boxes_done;		/* unfinished streams' boxes appended (see emu_abi.h) */
	int truth_done;		/* the streams' truth files joined into the --truth file */
	struct hwt_emu_link ln; /* child, pipe, stream files */
};

int hwt_find_program(const char *name, char *out, size_t outlen)
{
	if (strchr(name, '/')) {
		if (access(name, X_OK))
			return -1;
		snprintf(out, outlen, "%s", name);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);
		snprintf(out, outlen, "%.*s/%s", (int)n, n ? path : ".", name);
		struct stat sb;
		if (!stat(out, &sb) && S_ISREG(sb.st_mode) && !access(out, X_OK))
			return 0;
		if (!c)
			break;
		path = c + 1;
	}
	return -1;
}

static int plugin_default(char *out, size_t outlen)
{
	return hwt_unit_find_plugin("hwt-pt-plugin.so", out, outlen);
}

static int probe(struct hwt_unit_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "intel_pt");
	info->emulated = 1;
	info->pmu_type = EMU_PMU_TYPE;
	info->nr_addr_filters = 4;
	snprintf(info->formats, sizeof(info->formats),
		 "pt=config:0 cyc=config:1 mtc=config:9 tsc=config:10 noretcomp=config:11 "
		 "branch=config:13 mtc_period=config:14-17 cyc_thresh=config:19-22 "
		 "psb_period=config:24-27");
	snprintf(info->caps, sizeof(info->caps),
		 "psb_cyc=1 mtc=1 tsc_art_ratio=%d:%d max_nonturbo_ratio=%d ip_filtering=1 "
		 "num_address_ranges=4 mtc_periods=ffff cycle_thresholds=ffff "
		 "psb_periods=ffff",
		 EMU_TSC_CTC_N, EMU_TSC_CTC_D, EMU_CBR);
	char p[PATH_MAX];
	if (hwt_find_program("qemu-x86_64", p, sizeof(p))) {
		snprintf(info->why, sizeof(info->why),
			 "qemu-x86_64 not found in PATH (install it: apt install qemu-user)");
		return HWT_ERR_NOT_PRESENT;
	}
	if (plugin_default(p, sizeof(p))) {
		snprintf(info->why, sizeof(info->why), "hwt-pt-plugin.so not found %s",
			 hwt_unit_plugin_places());
		return HWT_ERR_NOT_PRESENT;
	}
	info->present = 1;
	return 0;
}

static int configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	/* perf's intel_pt defaults */
	uint64_t cfg = CFG_PT | CFG_TSC | CFG_MTC | CFG_BRANCH | (3ull << CFG_MTC_PERIOD_SHIFT) |
		       (3ull << CFG_PSB_PERIOD_SHIFT);
	struct hwt_terms it;
	if (hwt_terms_open(&it, terms))
		return HWT_ERR_NOMEM;
	while (hwt_terms_next(&it)) {
		const char *t = it.name;
		uint64_t n;
		int bad = 0;
		struct {
			const char *name;
			uint64_t bit;
		} flags[] = {{"pt", CFG_PT},
			     {"cyc", CFG_CYC},
			     {"mtc", CFG_MTC},
			     {"tsc", CFG_TSC},
			     {"noretcomp", CFG_NORETCOMP},
			     {"branch", CFG_BRANCH}};
		struct {
			const char *name;
			unsigned shift;
		} fields[] = {{"mtc_period", CFG_MTC_PERIOD_SHIFT},
			      {"cyc_thresh", CFG_CYC_THRESH_SHIFT},
			      {"psb_period", CFG_PSB_PERIOD_SHIFT}};
		int known = 0;
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]) && !known; i++) {
			if (strcmp(t, flags[i].name))
				continue;
			known = 1;
			if (hwt_term_uint(it.value, 1, &n))
				bad = 1;
			else if (n)
				cfg |= flags[i].bit;
			else
				cfg &= ~flags[i].bit;
		}
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && !known; i++) {
			if (strcmp(t, fields[i].name))
				continue;
			known = 1;
			if (!it.value || hwt_term_uint(it.value, 15, &n))
				bad = 1;
			else
				cfg = (cfg & ~(0xfull << fields[i].shift)) | (n << fields[i].shift);
		}
		if (!known || bad) {
			snprintf(err, errlen,
				 known ? "intel_pt (emulated): bad value for term '%s'"
				       : "intel_pt (emulated): unknown term '%s' (known: tsc, mtc, "
					 "mtc_period, cyc, cyc_thresh, psb_period, noretcomp, "
					 "branch, pt)",
				 t);
			hwt_terms_close(&it);
			return HWT_ERR_INVALID;
		}
	}
	hwt_terms_close(&it);
	struct emu_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	p->config = cfg;
	hwt_emu_link_init(&p->ln, HWT_EMU_BOX_BYTES);
	hwt_session_set_unit_priv(s, p);
	hwt_perf_attr_intel_pt(hwt_session_attr(s), EMU_PMU_TYPE, cfg);
	struct perf_event_attr *a = hwt_session_attr(s);
	a->aux_watermark = 0;
	return 0;
}

/* The program as qemu must run it: a resolved x86-64 ELF path, or a #!
 * script's interpreter followed by the script. */
static int resolve_program(char *const argv[], char ***out, char *err, size_t errlen)
{
	char path[PATH_MAX];
	if (!argv[0] || hwt_find_program(argv[0], path, sizeof(path))) {
		snprintf(err, errlen, "%.300s: command not found", argv[0] ? argv[0] : "(none)");
		return HWT_ERR_INVALID;
	}
	size_t argc = 0;
	while (argv[argc])
		argc++;
	char **v = calloc(argc + 4, sizeof(char *));
	if (!v)
		return HWT_ERR_NOMEM;
	size_t k = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char hdr[256] = {0};
	ssize_t n = fd >= 0 ? read(fd, hdr, sizeof(hdr) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n >= 2 && hdr[0] == '#' && hdr[1] == '!') {
		char *l = (char *)hdr + 2, *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		while (*l == ' ' || *l == '\t')
			l++;
		char *sp = strpbrk(l, " \t");
		if (sp) {
			*sp++ = 0;
			while (*sp == ' ' || *sp == '\t')
				sp++;
		}
		v[k++] = strdup(l);
		if (sp && *sp)
			v[k++] = strdup(sp);
		v[k++] = strdup(path);
		snprintf(path, sizeof(path), "%s", v[0]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, hdr, sizeof(hdr)) : -1;
		if (fd >= 0)
			close(fd);
	} else {
		v[k++] = strdup(path);
	}
	Elf64_Ehdr *eh = (Elf64_Ehdr *)hdr;
	if (n < (ssize_t)sizeof(Elf64_Ehdr) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64) {
		snprintf(err, errlen,
			 "%.300s: not an x86-64 ELF program (the emulated intel_pt unit runs "
			 "x86-64 Linux programs only)",
			 path);
		for (size_t i = 0; i < k; i++)
			free(v[i]);
		free(v);
		return HWT_ERR_INVALID;
	}
	for (size_t i = 1; i < argc; i++)
		v[k++] = strdup(argv[i]);
	v[k] = NULL;
	*out = v;
	return 0;
}

static void free_argv(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

/* QEMU (7.1 on) can write each thread's log to its own file (-d tid, -D
 * FILE.%d), and its trace event user_dump_core_and_abort is the line it
 * logs when a guest signal kills the program: so the file's name says
 * which thread died, its text of which signal.  1 if this qemu takes the
 * options. */
#define FATAL_LOG_ITEMS "tid,trace:user_dump_core_and_abort"
static int qemu_logs_fatal(const char *qemu, const char *logarg)
{
	pid_t ch = fork();
	if (ch < 0)
		return 0;
	if (ch == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(qemu, qemu, "-d", FATAL_LOG_ITEMS, "-D", logarg, "-version", (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(ch, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int launch(struct hwt_session *s, char *const argv[], pid_t *pid)
{
	struct emu_priv *p = hwt_session_unit_priv(s);
	const struct hwt_session_config *cfg = hwt_session_config(s);
	char err[512] = "";
	char qemu[PATH_MAX], plugin[PATH_MAX];
	if (!p)
		return HWT_ERR_INVALID;
	if (hwt_find_program(cfg->qemu_path ? cfg->qemu_path : "qemu-x86_64", qemu, sizeof(qemu))) {
		hwt_session_set_err(s, "qemu-x86_64 not found (install it: apt install qemu-user)");
		return HWT_ERR_NOT_PRESENT;
	}
	if (cfg->plugin_path)
		snprintf(plugin, sizeof(plugin), "%s", cfg->plugin_path);
	else if (plugin_default(plugin, sizeof(plugin))) {
		hwt_session_set_err(s, "hwt-pt-plugin.so not found %s", hwt_unit_plugin_places());
		return HWT_ERR_NOT_PRESENT;
	}
	char **prog = NULL;
	int r = resolve_program(argv, &prog, err, sizeof(err));
	if (r) {
		hwt_session_set_err(s, "%s", err);
		return r;
	}
	char kfilter[2048] = "";
	if (cfg->filter && *cfg->filter) {
		r = hwt_filter_translate(cfg->filter, prog[0], kfilter, sizeof(kfilter), err,
					 sizeof(err));
		if (r) {
			hwt_session_set_err(s, "%s", err);
			free_argv(prog);
			return r;
		}
		for (char *c = kfilter; *c; c++)
			if (*c == ',')
				*c = ';';
	}
	if ((p->bts || p->fmt_args) && kfilter[0]) {
		hwt_session_set_err(s, "%s has no address filters (drop --filter)",
				    p->bts ? "intel_bts" : "this event");
		free_argv(prog);
		return HWT_ERR_INVALID;
	}
	if ((cfg->truth_path && strchr(cfg->truth_path, ',')) || strchr(plugin, ',') ||
	    strchr(kfilter, ',')) {
		hwt_session_set_err(s, "emulated intel_pt: paths must not contain ','");
		free_argv(prog);
		return HWT_ERR_INVALID;
	}
	r = hwt_emu_link_open(&p->ln, s);
	if (r) {
		free_argv(prog);
		return r;
	}
	uint64_t c = p->config;
	char *xargs = hwt_emu_exec_args(cfg); /* which exec()ed programs to follow */
	size_t alen = strlen(plugin) + strlen(p->ln.dir) + strlen(kfilter) +
		      (p->fmt_args ? strlen(p->fmt_args) : 0) +
		      (cfg->truth_path ? strlen(cfg->truth_path) : 0) +
		      (xargs ? strlen(xargs) : 0) + 512;
	char *parg = xargs ? malloc(alen) : NULL;
	size_t pc = 0;
	while (prog && prog[pc])
		pc++;
	char **qv = calloc(pc + 9, sizeof(char *));
	if (!parg || !qv) {
		free(xargs);
		free(parg);
		free(qv);
		free_argv(prog);
		return HWT_ERR_NOMEM;
	}
	int n = snprintf(parg, alen, "%s,", plugin);
	n += hwt_emu_link_args(&p->ln, s, parg + n, alen - (size_t)n);
	if (p->fmt_args)
		n += snprintf(parg + n, alen - (size_t)n, ",%s", p->fmt_args);
	else if (p->bts)
		n += snprintf(parg + n, alen - (size_t)n, ",fmt=bts");
	else
		n += snprintf(parg + n, alen - (size_t)n,
			      ",tsc=%d,mtc=%d,mtc_period=%u,cyc=%d,cyc_thresh=%u,psb_period=%u,"
			      "noretcomp=%d,branch=%d",
			      !!(c & CFG_TSC), !!(c & CFG_MTC),
			      (unsigned)(c >> CFG_MTC_PERIOD_SHIFT) & 15, !!(c & CFG_CYC),
			      (unsigned)(c >> CFG_CYC_THRESH_SHIFT) & 15,
			      (unsigned)(c >> CFG_PSB_PERIOD_SHIFT) & 15, !!(c & CFG_NORETCOMP),
			      !!(c & CFG_BRANCH));
	if (cfg->truth_path)
		n += snprintf(parg + n, alen - (size_t)n, ",truth=%s,truthbox=1", cfg->truth_path);
	if (kfilter[0])
		n += snprintf(parg + n, alen - (size_t)n, ",filter=%s", kfilter);
	n += snprintf(parg + n, alen - (size_t)n, "%s", xargs);
	free(xargs);
	char logarg[PATH_MAX + 16];
	snprintf(logarg, sizeof(logarg), "%s/fatal.%%d", p->ln.dir);
	p->fatal_log = !strchr(p->ln.dir, '%') && qemu_logs_fatal(qemu, logarg);
	size_t k = 0;
	qv[k++] = qemu;
	qv[k++] = "-plugin";
	qv[k++] = parg;
	if (p->fatal_log) {
		qv[k++] = "-d";
		qv[k++] = FATAL_LOG_ITEMS;
		qv[k++] = "-D";
		qv[k++] = logarg;
	}
	qv[k++] = "--";
	for (size_t i = 0; i < pc; i++)
		qv[k++] = prog[i];
	r = hwt_emu_link_spawn(&p->ln, s, qv, 0, pid);
	free(qv);
	free(parg);
	free_argv(prog);
	return r;
}

/* A dead thread's stream truth file (<stream>.truth) made exactly the
 * box's published length: the lines the file lacks from the box, the
 * lines written ahead of the published state cut off (emu_abi.h). */
static void finish_truth(const struct hwt_emu_map *m, const struct hwt_emu_box *b,
			 const struct hwt_emu_box_state *st)
{
	char path[PATH_MAX + 8];
	struct stat sb;
	snprintf(path, sizeof(path), "%s.truth", m->path);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	uint64_t have = fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	if (have > st->truth_end) {
		if (ftruncate(fd, (off_t)st->truth_end) < 0) {
			/* the file keeps its lines: the compare shows them */
		}
	} else if (have >= st->truth_base && st->truth_end - st->truth_base <= HWT_EMU_BOX_TRUTH) {
		const char *t = (const char *)b + HWT_EMU_BOX_HDR + HWT_EMU_BOX_PKT;
		uint64_t pos = have;
		while (pos < st->truth_end) {
			ssize_t w = pwrite(fd, t + (pos - st->truth_base),
					   (size_t)(st->truth_end - pos), (off_t)pos);
			if (w <= 0)
				break;
			pos += (uint64_t)w;
		}
	}
	close(fd);
}

/* Finish a dead thread's stream from its box (emu_abi.h): the packet
 * bytes the AUX ring does not have yet, the pending TNT bits and the end
 * packets; its truth file.  1 when done, 0 when the AUX ring has no room
 * yet (full mode: the session drains it first). */
static int append_box(struct hwt_session *s, struct hwt_emu_map *m)
{
	struct hwt_emu_box *b = m->box;
	if (!b || __atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) != HWT_EMU_BOX_MAGIC)
		return 1;
	struct hwt_emu_box_state st = b->st[__atomic_load_n(&b->seq, __ATOMIC_ACQUIRE) & 1];
	struct hwt_ring *r = &m->st->ring;
	uint64_t n = 0, off = 0;
	if (st.pkt_off <= HWT_EMU_BOX_PKT && st.pkt_len <= HWT_EMU_BOX_PKT - st.pkt_off && r->ctl) {
		/* a prefix may be in the ring already (killed after writing it) */
		uint64_t sent = r->ctl->aux_head - st.aux_base;
		if (r->ctl->aux_head < st.aux_base || sent > st.pkt_len)
			sent = st.pkt_len; /* cannot happen: the box is stale */
		off = st.pkt_off + sent;
		n = st.pkt_len - sent;
	}
	uint64_t ntnt = st.ntnt <= 6 ? st.ntnt : 0;
	uint8_t end[2 * HWT_PT_PKT_MAX_SIZE];
	size_t nend = 0;
	if (st.end_ip) { /* the thread stopped there: FUP + TIP.PGD */
		struct hwt_pt_packet pk = {.type = HWT_PKT_FUP};
		pk.u.ip.ipc = 6; /* the full address: no last-IP state needed */
		pk.u.ip.ip = st.end_ip;
		int k = hwt_pt_pkt_encode(end, sizeof(end), &pk);
		memset(&pk, 0, sizeof(pk));
		pk.type = HWT_PKT_TIP_PGD;
		int k2 = k > 0 ? hwt_pt_pkt_encode(end + k, sizeof(end) - (size_t)k, &pk) : -1;
		nend = k2 > 0 ? (size_t)(k + k2) : 0;
	}
	uint64_t total = n + (ntnt ? 1 : 0) + nend;
	uint64_t pad = (8 - (total & 7)) & 7; /* PADs: perf wants 8-byte pieces */
	if (!r->overwrite && total + pad > r->aux_size)
		total = 0; /* cannot happen (the plugin drains at aux_size / 4): drop */
	if (total && r->aux) {
		if (!r->overwrite && hwt_ring_aux_space(r) < total + pad)
			return 0;
		uint8_t tail[8] = {0};
		if (n)
			hwt_ring_aux_write(r, (const uint8_t *)b + HWT_EMU_BOX_HDR + off,
					   (size_t)n);
		tail[0] = hwt_emu_tnt_byte(st.tnt, ntnt);
		if (ntnt)
			hwt_ring_aux_write(r, tail, 1);
		if (nend)
			hwt_ring_aux_write(r, end, nend);
		memset(tail, 0, sizeof(tail));
		if (pad)
			hwt_ring_aux_write(r, tail, (size_t)pad);
	}
	if (hwt_session_config(s)->truth_path)
		finish_truth(m, b, &st);
	b->magic = 0; /* done */
	return 1;
}

/* The --truth file: every stream's truth file (<stream>.truth), in the
 * order the streams were announced (a thread's lines stay in order). */
static void join_truth(struct hwt_session *s, struct emu_priv *p)
{
	const char *truth = hwt_session_config(s)->truth_path;
	if (!truth || p->truth_done)
		return;
	p->truth_done = 1;
	/* the plugin created it empty (and wrote there what had no stream) */
	int out = open(truth, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out < 0) {
		hwt_session_set_err(s, "cannot write the truth file %s: %s", truth,
				    strerror(errno));
		return;
	}
	char *buf = malloc(1 << 20);
	for (size_t i = 0; buf && i < p->ln.nmaps; i++) {
		char path[PATH_MAX + 8];
		snprintf(path, sizeof(path), "%s.truth", p->ln.maps[i].path);
		int in = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t k;
		while (in >= 0 && (k = read(in, buf, 1 << 20)) > 0) {
			for (ssize_t o = 0; o < k;) {
				ssize_t w = write(out, buf + o, (size_t)(k - o));
				if (w <= 0)
					break;
				o += w;
			}
		}
		if (in >= 0)
			close(in);
		unlink(path);
	}
	free(buf);
	close(out);
}

/* The fatal-signal lines QEMU logged (dir/fatal.<tid>, see
 * qemu_logs_fatal): the one of the launched process is the session's. */
static void read_fatal(struct hwt_session *s, struct emu_priv *p)
{
	DIR *d = opendir(p->ln.dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		int tid, sig;
		if (sscanf(de->d_name, "fatal.%d", &tid) != 1)
			continue;
		char f[PATH_MAX + 300], line[512] = "";
		snprintf(f, sizeof(f), "%s/%s", p->ln.dir, de->d_name);
		FILE *fp = fopen(f, "re");
		if (!fp)
			continue;
		while (fgets(line, sizeof(line), fp)) {
			const char *at = strstr(line, "user_dump_core_and_abort");
			at = at ? strstr(at, " signal ") : NULL;
			if (!at || sscanf(at, " signal %d", &sig) != 1 || sig <= 0)
				continue;
			pid_t pid = -1;
			for (size_t i = 0; i < p->ln.nmaps; i++)
				if (p->ln.maps[i].st->tid == tid)
					pid = p->ln.maps[i].st->pid;
			if (pid == p->ln.child || pid < 0)
				hwt_session_set_fatal(s, pid < 0 ? p->ln.child : pid, tid, sig);
		}
		fclose(fp);
	}
	if (d)
		closedir(d);
}

static int emu_poll(struct hwt_session *s, int timeout_ms)
{
	struct emu_priv *p = hwt_session_unit_priv(s);
	if (!p || p->ln.rfd < 0)
		return HWT_ERR_INVALID;
	hwt_emu_link_poll(&p->ln, s, timeout_ms);
	if (!(p->ln.eof && p->ln.reaped))
		return 0;
	/* Every traced process is gone: the streams without an end line
	 * belong to threads killed by a signal; their boxes hold the trace
	 * and truth they had not written out yet. */
	if (!p->boxes_done) {
		int all = 1;
		for (size_t i = 0; i < p->ln.nmaps; i++)
			if (!p->ln.maps[i].st->hup && !append_box(s, &p->ln.maps[i]))
				all = 0;
		if (!all)
			return 0; /* the session drains the rings, then we go on */
		p->boxes_done = 1;
		join_truth(s, p);
		if (p->fatal_log)
			read_fatal(s, p);
	}
	return 1;
}

static int auxtrace_info(struct hwt_session *s, uint64_t *priv, size_t max)
{
	struct emu_priv *p = hwt_session_unit_priv(s);
	if (!p || max < HWT_IPT_FILTER_STR_LEN + 1)
		return HWT_ERR_INVALID;
	memset(priv, 0, (HWT_IPT_FILTER_STR_LEN + 1) * sizeof(uint64_t));
	priv[HWT_IPT_PMU_TYPE] = EMU_PMU_TYPE;
	priv[HWT_IPT_TIME_SHIFT] = 0;
	priv[HWT_IPT_TIME_MULT] = 1;
	priv[HWT_IPT_TIME_ZERO] = 0;
	priv[HWT_IPT_CAP_USER_TIME_ZERO] = 1;
	priv[HWT_IPT_TSC_BIT] = CFG_TSC;
	priv[HWT_IPT_NORETCOMP_BIT] = CFG_NORETCOMP;
	priv[HWT_IPT_HAVE_SCHED_SWITCH] = 0;
	priv[HWT_IPT_SNAPSHOT_MODE] = hwt_session_config(s)->snapshot ? 1 : 0;
	priv[HWT_IPT_PER_CPU_MMAPS] = 0;
	priv[HWT_IPT_MTC_BIT] = CFG_MTC;
	priv[HWT_IPT_MTC_FREQ_BITS] = 0xfull << CFG_MTC_PERIOD_SHIFT;
	priv[HWT_IPT_TSC_CTC_N] = EMU_TSC_CTC_N;
	priv[HWT_IPT_TSC_CTC_D] = EMU_TSC_CTC_D;
	priv[HWT_IPT_CYC_BIT] = CFG_CYC;
	priv[HWT_IPT_MAX_NONTURBO_RATIO] = EMU_CBR;
	return hwt_ipt_priv_filter(priv, max, hwt_session_config(s)->filter);
}

static void emu_close(struct hwt_session *s)
{
	struct emu_priv *p = hwt_session_unit_priv(s);
	if (!p)
		return;
	hwt_emu_link_stop(&p->ln);
	join_truth(s, p); /* a session that stopped early: what the files have */
	hwt_emu_link_free(&p->ln, "fatal.");
	free(p->fmt_args);
	free(p);
	hwt_session_set_unit_priv(s, NULL);
}

const struct hwt_unit_ops hwt_unit_emu_pt = {
    .name = "intel_pt",
    .emulated = 1,
    .probe = probe,
    .configure = configure,
    .launch = launch,
    .poll = emu_poll,
    .auxtrace_info = auxtrace_info,
    .close = emu_close,
};

/* ---- the emulated Intel BTS unit: the same QEMU plugin with fmt=bts ----
 *
 * Everything but configure and AUXTRACE_INFO is the emulated PT unit's:
 * launch passes fmt=bts, the plugin writes perf's intel_bts records (24
 * bytes each: from, to, flags) into the same AUX rings.  The attr is what
 * perf records for "-e intel_bts//u" (type: a made-up PMU number, as for
 * intel_pt, config 0, sample_id_all); AUXTRACE_INFO is perf's intel_bts
 * layout (hwt/perf_records.h HWT_IBTS_*).  No format terms, no filters. */
#define EMU_BTS_PMU_TYPE 9

static int bts_probe(struct hwt_unit_info *info)
{
	int r = probe(info);
	snprintf(info->name, sizeof(info->name), "intel_bts");
	info->pmu_type = EMU_BTS_PMU_TYPE;
	info->nr_addr_filters = 0;
	info->formats[0] = 0;
	info->caps[0] = 0;
	return r;
}

static int bts_configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	if (terms && *terms) {
		snprintf(err, errlen,
			 "intel_bts (emulated): unknown term '%s' (intel_bts has none)", terms);
		return HWT_ERR_INVALID;
	}
	struct emu_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	p->bts = 1;
	hwt_emu_link_init(&p->ln, HWT_EMU_BOX_BYTES);
	hwt_session_set_unit_priv(s, p);
	struct perf_event_attr *a = hwt_session_attr(s);
	hwt_perf_attr_intel_pt(a, EMU_BTS_PMU_TYPE, 0);
	a->aux_watermark = 0;
	return 0;
}

static int bts_auxtrace_info(struct hwt_session *s, uint64_t *priv, size_t max)
{
	if (max < HWT_IBTS_PRIV_MAX)
		return HWT_ERR_INVALID;
	memset(priv, 0, HWT_IBTS_PRIV_MAX * sizeof(uint64_t));
	priv[HWT_IBTS_PMU_TYPE] = EMU_BTS_PMU_TYPE;
	/* perf 6.1's intel-bts takes its TSC <-> time conversion from these
	 * words, not from TIME_CONV (which hwt writes at the end, after this
	 * record), and divides by TIME_MULT: it must not be 0.  As the plugin
	 * publishes in the control page: 1 tick = 1 ns. */
	priv[HWT_IBTS_TIME_SHIFT] = 0;
	priv[HWT_IBTS_TIME_MULT] = 1;
	priv[HWT_IBTS_TIME_ZERO] = 0;
	priv[HWT_IBTS_CAP_USER_TIME_ZERO] = 1;
	priv[HWT_IBTS_SNAPSHOT_MODE] = hwt_session_config(s)->snapshot ? 1 : 0;
	return HWT_IBTS_PRIV_MAX;
}

const struct hwt_unit_ops hwt_unit_emu_bts = {
    .name = "intel_bts",
    .emulated = 1,
    .probe = bts_probe,
    .configure = bts_configure,
    .launch = launch,
    .poll = emu_poll,
    .auxtrace_info = bts_auxtrace_info,
    .close = emu_close,
    .aux_align = 24,
    .auxtrace_type = HWT_PERF_AUXTRACE_INTEL_BTS,
};

/* Another unit of the same plugin (the emulated PEBS unit, emu_pebs.c):
 * its own attr, the plugin arguments it passes (e.g. "fmt=pebs,..."),
 * and everything else (launch, poll, close) as above. */
int hwt_emu_x86_configure(struct hwt_session *s, const char *plugin_args)
{
	struct emu_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	p->fmt_args = strdup(plugin_args);
	if (!p->fmt_args) {
		free(p);
		return HWT_ERR_NOMEM;
	}
	hwt_emu_link_init(&p->ln, HWT_EMU_BOX_BYTES);
	hwt_session_set_unit_priv(s, p);
	return 0;
}

int hwt_emu_x86_probe(struct hwt_unit_info *info)
{
	return probe(info);
}

int hwt_emu_x86_launch(struct hwt_session *s, char *const argv[], pid_t *pid)
{
	return launch(s, argv, pid);
}

int hwt_emu_x86_poll(struct hwt_session *s, int timeout_ms)
{
	return emu_poll(s, timeout_ms);
}

void hwt_emu_x86_close(struct hwt_session *s)
{
	emu_close(s);
}
