/* lib/unit/session.c - a recording session: one trace unit, its streams,
 * and the pump that drains every stream into a sink.
 *
 * Lifecycle: hwt_session_open picks the unit (hardware, or the emulated
 * one per cfg->emulate) and configures it -> one of start_cmd (fork the
 * command held before exec, open its streams with enable_on_exec, let it
 * exec), attach (-p/-t: one stream per thread) or open_cpus -> pump until
 * it returns 1 -> stop (disable, final drain, snapshot) -> close.
 *
 * Draining (the same for kernel and emulated streams): the data ring's
 * records go to sink->record; PERF_RECORD_AUX names the AUX range
 * [aux_offset, aux_offset + aux_size) that is complete: in full mode the
 * session hands that range to sink->aux and releases it (aux_tail);
 * TRUNCATED / PARTIAL / COLLISION flags and PERF_RECORD_LOST are counted
 * per stream.  Emulated streams (fd == -1) may not write AUX records: what
 * lies past the last one is taken with hwt_ring_aux_peek.  In snapshot
 * mode the AUX ring is overwritten by the producer; hwt_session_snapshot
 * pauses each producer and delivers the newest bytes not yet delivered.
 *
 * Ownership: the session owns streams, their fds and mappings, and the
 * forked child's pid (it reaps it).  Spans and records given to the sink
 * are valid during the callback only.  Not thread-safe.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"
#include "unit/unit_int.h"

struct hwt_session {
	struct hwt_session_config cfg;
	const struct hwt_unit_ops *unit;
	struct hwt_sink sink;
	struct perf_event_attr attr;	/* trace event */
	struct perf_event_attr sb_attr; /* sideband dummy event */
	struct hwt_stream **streams;
	size_t nr, cap;
	void *unit_priv;
	int configured;
	pid_t child;		    /* forked by start_cmd, or launched (emulated) */
	int child_owned;	    /* this session reaps it */
	int exit_status;	    /* wait status, -1 unknown */
	pid_t fatal_pid, fatal_tid; /* hwt_session_set_fatal (fatal_sig 0: none) */
	int fatal_sig;
	pid_t attach_pid;
	int done;
	char kfilter[1024]; /* kernel address filter string, "" if none */
	uint8_t *scratch;
	struct hwt_stream *cur;
	int cb_err;
	char err[512];
	char notice[256];
};

static int is_dummy(const struct hwt_session *s);

void hwt_session_set_err(struct hwt_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

const char *hwt_session_err(const struct hwt_session *s)
{
	return s->err;
}

const char *hwt_session_notice(const struct hwt_session *s)
{
	return s->notice;
}

struct perf_event_attr *hwt_session_attr(struct hwt_session *s)
{
	return &s->attr;
}

const struct perf_event_attr *hwt_session_sb_attr(const struct hwt_session *s)
{
	if (!s->cfg.sideband || is_dummy(s) || s->unit->emulated)
		return NULL;
	return &s->sb_attr;
}

const struct hwt_session_config *hwt_session_config(const struct hwt_session *s)
{
	return &s->cfg;
}

const struct hwt_unit_ops *hwt_session_unit(const struct hwt_session *s)
{
	return s->unit;
}

void *hwt_session_unit_priv(struct hwt_session *s)
{
	return s->unit_priv;
}

void hwt_session_set_unit_priv(struct hwt_session *s, void *priv)
{
	s->unit_priv = priv;
}

void hwt_session_set_exit_status(struct hwt_session *s, int wstatus)
{
	s->exit_status = wstatus;
}

int hwt_session_exit_status(const struct hwt_session *s)
{
	return s->exit_status;
}

void hwt_session_set_fatal(struct hwt_session *s, pid_t pid, pid_t tid, int sig)
{
	s->fatal_pid = pid;
	s->fatal_tid = tid;
	s->fatal_sig = sig;
}

int hwt_session_fatal(const struct hwt_session *s, pid_t *pid, pid_t *tid, int *sig)
{
	if (!s->fatal_sig)
		return 0;
	*pid = s->fatal_pid;
	*tid = s->fatal_tid;
	*sig = s->fatal_sig;
	return 1;
}

struct hwt_stream *hwt_session_add_stream(struct hwt_session *s)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct hwt_stream **v = realloc(s->streams, cap * sizeof(*v));
		if (!v)
			return NULL;
		s->streams = v;
		s->cap = cap;
	}
	struct hwt_stream *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->fd = st->sb_fd = -1;
	st->pid = st->tid = -1;
	st->cpu = -1;
	s->streams[s->nr++] = st;
	return st;
}

size_t hwt_session_streams(struct hwt_session *s, struct hwt_stream ***streams)
{
	*streams = s->streams;
	return s->nr;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int is_dummy(const struct hwt_session *s)
{
	return !strcmp(s->unit->name, "dummy");
}

int hwt_session_open(struct hwt_session **out, const struct hwt_session_config *cfg,
		     const struct hwt_sink *sink, char *err, size_t errlen)
{
	*out = NULL;
	if (!cfg || cfg->size < offsetof(struct hwt_session_config, sideband) || !sink) {
		snprintf(err, errlen, "bad session configuration");
		return HWT_ERR_INVALID;
	}
	struct hwt_session *s = calloc(1, sizeof(*s));
	if (!s)
		return HWT_ERR_NOMEM;
	memcpy(&s->cfg, cfg, cfg->size < sizeof(s->cfg) ? cfg->size : sizeof(s->cfg));
	s->cfg.size = sizeof(s->cfg);
	s->sink = *sink;
	s->exit_status = -1;
	s->child = -1;
	s->attach_pid = -1;
	if (!s->cfg.event)
		s->cfg.event = "intel_pt";
	if (!s->cfg.aux_bytes)
		s->cfg.aux_bytes = 4u << 20;
	if (!s->cfg.data_bytes)
		s->cfg.data_bytes = 512u << 10;
	if (!is_pow2(s->cfg.aux_bytes) || !is_pow2(s->cfg.data_bytes) || s->cfg.data_bytes < 4096 ||
	    s->cfg.aux_bytes < 4096) {
		snprintf(
		    err, errlen,
		    "buffer sizes must be powers of two of at least 4 KiB (AUX %llu, data %llu)",
		    (unsigned long long)s->cfg.aux_bytes, (unsigned long long)s->cfg.data_bytes);
		free(s);
		return HWT_ERR_INVALID;
	}
	s->scratch = malloc(65536);
	if (!s->scratch) {
		free(s);
		return HWT_ERR_NOMEM;
	}
	char name[64], terms[512], mods[16];
	if (hwt_event_split(s->cfg.event, name, sizeof(name), terms, sizeof(terms), mods,
			    sizeof(mods))) {
		snprintf(err, errlen, "cannot parse event '%s' (expected NAME[/TERMS/][u])",
			 s->cfg.event);
		hwt_session_close(s);
		return HWT_ERR_INVALID;
	}
	const struct hwt_unit_ops *hw = NULL, *emu = hwt_unit_find_emulated(name);
	size_t n;
	const struct hwt_unit_ops *const *all = hwt_unit_all(&n);
	for (size_t i = 0; i < n; i++)
		if (!all[i]->emulated && !strcmp(all[i]->name, name))
			hw = all[i];
	if (!hw && !emu && !s->cfg.unit) {
		snprintf(
		    err, errlen,
		    "unknown event '%s' (known: intel_pt, intel_bts, arm_spe, cs_etm, mem-loads, "
		    "mem-stores, dummy; see 'hwt list')",
		    name);
		hwt_session_close(s);
		return HWT_ERR_INVALID;
	}
	int r;
	if (s->cfg.unit) { /* fields past cfg->size are zero (calloc) */
		s->unit = s->cfg.unit;
	} else if (s->cfg.emulate == 1) {
		if (!emu) {
			snprintf(err, errlen,
				 "there is no emulated unit for '%s' (only intel_pt, intel_bts, "
				 "cs_etm, arm_spe, mem-loads and mem-stores)",
				 name);
			hwt_session_close(s);
			return HWT_ERR_NOT_PRESENT;
		}
		struct hwt_unit_info info;
		memset(&info, 0, sizeof(info));
		if (emu->probe && emu->probe(&info)) {
			snprintf(err, errlen, "emulated %s: %s", name,
				 info.why[0] ? info.why : "not available");
			hwt_session_close(s);
			return HWT_ERR_NOT_PRESENT;
		}
		s->unit = emu;
	} else {
		struct hwt_unit_info info;
		memset(&info, 0, sizeof(info));
		r = hw ? hw->probe(&info) : HWT_ERR_NOT_PRESENT;
		if (r && s->cfg.emulate == 0 && emu) {
			snprintf(s->notice, sizeof(s->notice),
				 "%s: no hardware unit here; recording with the emulated %s unit "
				 "(QEMU)",
				 name, name);
			s->unit = emu;
		} else if (r) {
			if (hw)
				snprintf(err, errlen, "%s: %s", name, info.why);
			else
				snprintf(err, errlen, "%s: no hardware unit exists for this event",
					 name);
			hwt_session_close(s);
			return HWT_ERR_NOT_PRESENT;
		} else {
			s->unit = hw;
		}
	}
	r = s->unit->configure ? s->unit->configure(s, terms, err, errlen) : 0;
	if (r) {
		hwt_session_close(s);
		return r;
	}
	s->configured = 1;
	int user_only = 1;
	if (strchr(mods, 'k'))
		user_only = strchr(mods, 'u') ? 0 : -1;
	if (user_only == 1)
		s->attr.exclude_kernel = 1;
	else if (user_only == 0)
		s->attr.exclude_kernel = 0;
	else
		s->attr.exclude_kernel = 0, s->attr.exclude_user = 1;
	s->attr.disabled = 1;
	hwt_perf_attr_sideband(&s->sb_attr, s->cfg.inherit);
	if (s->cfg.inherit) {
		s->attr.inherit = 1;
	} else {
		s->sb_attr.context_switch = 1;
	}
	s->sb_attr.exclude_kernel = s->attr.exclude_kernel;
	*out = s;
	return 0;
}

/* The sideband dummy event of a stream, writing into its data ring. */
static int open_sideband(struct hwt_session *s, struct hwt_stream *st, pid_t pid, int cpu)
{
	if (!s->cfg.sideband || is_dummy(s) || st->fd < 0)
		return 0;
	st->sb_fd = hwt_perf_open(&s->sb_attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (st->sb_fd < 0) {
		char e[512];
		hwt_perf_explain(errno, "sideband (dummy)", &s->sb_attr, pid, cpu, e, sizeof(e));
		hwt_session_set_err(s, "%s", e);
		return HWT_ERR_IO;
	}
	if (ioctl(st->sb_fd, PERF_EVENT_IOC_SET_OUTPUT, st->fd) < 0) {
		hwt_session_set_err(s, "sideband: cannot redirect into the trace ring: %s",
				    strerror(errno));
		return HWT_ERR_IO;
	}
	__u64 id = 0;
	if (ioctl(st->sb_fd, PERF_EVENT_IOC_ID, &id) == 0)
		st->sb_id = id;
	return 0;
}

static int set_filter(struct hwt_session *s, struct hwt_stream *st)
{
	if (!s->kfilter[0] || st->fd < 0 || is_dummy(s))
		return 0;
	if (ioctl(st->fd, PERF_EVENT_IOC_SET_FILTER, s->kfilter) < 0) {
		int e = errno;
		const struct hwt_pmu *pmu = hwt_hw_pmu(s);
		hwt_session_set_err(s,
				    "the kernel refused the address filter '%s': %s (this PMU has "
				    "%d address filter ranges)",
				    s->kfilter, strerror(e), pmu ? pmu->nr_addr_filters : 0);
		return HWT_ERR_INVALID;
	}
	return 0;
}

/* Open one kernel stream (unit + sideband + filter). */
static int open_one(struct hwt_session *s, pid_t pid, int cpu)
{
	size_t before = s->nr;
	int r = s->unit->open(s, pid, cpu);
	if (r)
		return r;
	if (s->nr == before)
		return 0;
	struct hwt_stream *st = s->streams[s->nr - 1];
	if (pid >= 0 && s->cfg.inherit) {
		st->pid = pid;
		st->tid = -1;
	}
	r = open_sideband(s, st, pid, cpu);
	if (!r)
		r = set_filter(s, st);
	return r;
}

static int translate_filter(struct hwt_session *s, const char *default_file, char *err,
			    size_t errlen)
{
	if (!s->cfg.filter || !*s->cfg.filter || s->unit->emulated)
		return 0;
	if (is_dummy(s)) {
		snprintf(err, errlen, "--filter needs a trace event (not dummy)");
		return HWT_ERR_INVALID;
	}
	return hwt_filter_translate(s->cfg.filter, default_file, s->kfilter, sizeof(s->kfilter),
				    err, errlen);
}

static int online_cpus(int **out)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	if (n < 1)
		n = 1;
	int *v = calloc((size_t)n, sizeof(int));
	if (!v)
		return HWT_ERR_NOMEM;
	int k = 0;
	for (long c = 0; c < n; c++) {
		char p[96], b[8] = "1";
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%ld/online", c);
		FILE *f = fopen(p, "r");
		if (f) {
			if (!fgets(b, sizeof(b), f))
				b[0] = '1';
			fclose(f);
		}
		if (b[0] == '1')
			v[k++] = (int)c;
	}
	*out = v;
	return k;
}

int hwt_session_start_cmd(struct hwt_session *s, char *const argv[], pid_t *pid, char *err,
			  size_t errlen)
{
	if (s->unit->launch) {
		int r = s->unit->launch(s, argv, &s->child);
		if (r) {
			snprintf(err, errlen, "%s", s->err[0] ? s->err : hwt_errstr(r));
			return r;
		}
		*pid = s->child;
		return 0;
	}
	int r = translate_filter(s, argv[0], err, errlen);
	if (r)
		return r;
	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return HWT_ERR_IO;
	}
	s->attr.enable_on_exec = 1;
	s->sb_attr.enable_on_exec = 1;
	pid_t c = fork();
	if (c < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return HWT_ERR_IO;
	}
	if (c == 0) {
		char b;
		close(go[1]);
		close(ex[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* the parent gave up */
		execvp(argv[0], argv);
		int e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	s->child = c;
	s->child_owned = 1;
	if (s->cfg.inherit) {
		int *cpus;
		int n = online_cpus(&cpus);
		r = n < 0 ? n : 0;
		for (int i = 0; i < n && !r; i++)
			r = open_one(s, c, cpus[i]);
		if (n >= 0)
			free(cpus);
	} else {
		r = open_one(s, c, -1);
	}
	if (r) {
		snprintf(err, errlen, "%s", s->err[0] ? s->err : hwt_errstr(r));
		close(go[1]);
		close(ex[0]);
		int st;
		waitpid(c, &st, 0);
		s->child = -1;
		s->child_owned = 0;
		return r;
	}
	/* let it exec; the events enable themselves at exec */
	if (write(go[1], "g", 1) != 1) {
		snprintf(err, errlen, "cannot start the command: %s", strerror(errno));
		close(go[1]);
		close(ex[0]);
		return HWT_ERR_IO;
	}
	close(go[1]);
	int e = 0;
	ssize_t k = read(ex[0], &e, sizeof(e));
	close(ex[0]);
	if (k == (ssize_t)sizeof(e)) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(e));
		int st;
		waitpid(c, &st, 0);
		s->exit_status = st;
		s->child = -1;
		s->done = 1;
		return HWT_ERR_IO;
	}
	*pid = c;
	return 0;
}

int hwt_session_attach(struct hwt_session *s, pid_t pid, pid_t tid, char *err, size_t errlen)
{
	if (s->unit->emulated) {
		snprintf(err, errlen,
			 "the emulated unit can only trace a command it starts (not -p/-t)");
		return HWT_ERR_NOT_SUPPORTED;
	}
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)(pid > 0 ? pid : tid));
	int r = translate_filter(s, exe, err, errlen);
	if (r)
		return r;
	s->attach_pid = pid > 0 ? pid : tid;
	if (tid > 0) {
		r = open_one(s, tid, -1);
	} else {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		DIR *d = opendir(path);
		if (!d) {
			snprintf(err, errlen, "no such process: %d", (int)pid);
			return HWT_ERR_INVALID;
		}
		struct dirent *de;
		r = 0;
		while (!r && (de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			r = open_one(s, (pid_t)atoi(de->d_name), -1);
			if (r == HWT_ERR_IO && errno == ESRCH)
				r = 0; /* the thread exited meanwhile */
		}
		closedir(d);
	}
	if (r) {
		snprintf(err, errlen, "%s", s->err[0] ? s->err : hwt_errstr(r));
		return r;
	}
	r = s->unit->enable ? s->unit->enable(s) : 0;
	for (size_t i = 0; !r && i < s->nr; i++)
		if (s->streams[i]->sb_fd >= 0)
			(void)ioctl(s->streams[i]->sb_fd, PERF_EVENT_IOC_ENABLE, 0);
	if (r)
		snprintf(err, errlen, "cannot enable the events: %s", strerror(errno));
	return r;
}

int hwt_session_open_cpus(struct hwt_session *s, const int *cpus, size_t ncpus, char *err,
			  size_t errlen)
{
	if (s->unit->emulated) {
		snprintf(err, errlen, "the emulated unit cannot trace CPUs (-a/-C)");
		return HWT_ERR_NOT_SUPPORTED;
	}
	int r = translate_filter(s, NULL, err, errlen);
	if (r)
		return r;
	int *all = NULL;
	if (!cpus) {
		int n = online_cpus(&all);
		if (n < 0)
			return n;
		cpus = all;
		ncpus = (size_t)n;
	}
	s->sb_attr.context_switch = 1;
	if (is_dummy(s))
		s->attr.context_switch = 1;
	for (size_t i = 0; i < ncpus && !r; i++)
		r = open_one(s, -1, cpus[i]);
	free(all);
	if (!r && s->unit->enable)
		r = s->unit->enable(s);
	for (size_t i = 0; !r && i < s->nr; i++)
		if (s->streams[i]->sb_fd >= 0)
			(void)ioctl(s->streams[i]->sb_fd, PERF_EVENT_IOC_ENABLE, 0);
	if (r)
		snprintf(err, errlen, "%s", s->err[0] ? s->err : hwt_errstr(r));
	return r;
}

/* ---- draining ---- */

static int deliver_aux(struct hwt_session *s, struct hwt_stream *st, uint64_t pos, uint64_t len)
{
	if (!len || !st->ring.aux)
		return 0;
	if (pos < st->aux_done) { /* part of it already delivered */
		uint64_t skip = st->aux_done - pos;
		if (skip >= len)
			return 0;
		pos += skip;
		len -= skip;
	}
	if (len > st->ring.aux_size) { /* cannot happen in full mode; keep the newest */
		pos += len - st->ring.aux_size;
		len = st->ring.aux_size;
	}
	struct hwt_ring_span sp;
	hwt_ring_aux_range(&st->ring, pos, len, &sp);
	int r = s->sink.aux ? s->sink.aux(s->sink.arg, st, &sp) : 0;
	st->aux_bytes += len;
	st->aux_done = pos + len;
	return r;
}

static int on_record(void *arg, const struct perf_event_header *rec)
{
	struct hwt_session *s = arg;
	struct hwt_stream *st = s->cur;
	if (rec->type == PERF_RECORD_AUX && rec->size >= sizeof(struct hwt_perf_rec_aux)) {
		const struct hwt_perf_rec_aux *a = (const void *)rec;
		if (a->flags & PERF_AUX_FLAG_TRUNCATED)
			st->aux_truncated++;
		if (a->flags & PERF_AUX_FLAG_PARTIAL)
			st->aux_partial++, st->aux_lost++;
		if (a->flags & PERF_AUX_FLAG_COLLISION)
			st->aux_collision++, st->aux_lost++;
		if (!s->cfg.snapshot && st->ring.aux) {
			int r = deliver_aux(s, st, a->aux_offset, a->aux_size);
			uint64_t end = a->aux_offset + a->aux_size;
			if (end > st->ring.ctl->aux_tail)
				hwt_ring_aux_release(&st->ring, end - st->ring.ctl->aux_tail);
			if (r)
				return r;
		}
	} else if (rec->type == PERF_RECORD_LOST && rec->size >= sizeof(struct hwt_perf_rec_lost)) {
		const struct hwt_perf_rec_lost *l = (const void *)rec;
		st->lost_records += l->lost;
		st->aux_lost++;
	}
	return s->sink.record ? s->sink.record(s->sink.arg, st, rec) : 0;
}

static int drain_stream(struct hwt_session *s, struct hwt_stream *st)
{
	int r = 0;
	if (!st->announced) {
		st->announced = 1;
		if (s->sink.stream && (r = s->sink.stream(s->sink.arg, st)) < 0)
			return r;
	}
	if (st->ring.data) {
		s->cur = st;
		r = hwt_ring_read_records(&st->ring, on_record, s, s->scratch, 65536);
		s->cur = NULL;
		if (r < 0)
			return r;
		r = 0;
	}
	if (st->fd < 0 && st->ring.aux && !s->cfg.snapshot) {
		struct hwt_ring_span sp;
		size_t n = hwt_ring_aux_peek(&st->ring, &sp);
		if (n) {
			r = deliver_aux(s, st, sp.pos, n);
			/* only what was delivered: the producer may have
			 * written more since the peek */
			hwt_ring_aux_release(&st->ring, sp.pos + n - st->ring.ctl->aux_tail);
		}
	}
	return r;
}

static int drain_all(struct hwt_session *s)
{
	int err = 0;
	for (size_t i = 0; i < s->nr; i++) {
		int r = drain_stream(s, s->streams[i]);
		if (r && !err)
			err = r;
	}
	return err;
}

static int child_gone(struct hwt_session *s)
{
	if (s->child_owned && s->child > 0) {
		int st;
		pid_t w = waitpid(s->child, &st, WNOHANG);
		if (w == s->child) {
			s->exit_status = st;
			s->child = -1;
			return 1;
		}
		return w < 0 && errno == ECHILD;
	}
	if (s->attach_pid > 0) {
		int all_hup = s->nr > 0;
		for (size_t i = 0; i < s->nr; i++)
			all_hup &= s->streams[i]->hup;
		if (all_hup)
			return 1;
		return kill(s->attach_pid, 0) < 0 && errno == ESRCH;
	}
	return 0;
}

int hwt_session_pump(struct hwt_session *s, int timeout_ms)
{
	if (s->done)
		return 1;
	if (s->unit->poll) {
		int r = s->unit->poll(s, timeout_ms);
		int d = drain_all(s);
		if (r < 0)
			return r;
		if (d < 0)
			return d;
		if (r == 1)
			s->done = 1;
		return r == 1;
	}
	struct pollfd pf[256];
	size_t n = s->nr < 256 ? s->nr : 256;
	for (size_t i = 0; i < n; i++) {
		pf[i].fd = s->streams[i]->fd;
		pf[i].events = POLLIN;
		pf[i].revents = 0;
	}
	int gone = child_gone(s);
	if (!gone) {
		int pr = poll(pf, (nfds_t)n, timeout_ms);
		if (pr > 0)
			for (size_t i = 0; i < n; i++)
				if (pf[i].revents & POLLHUP)
					s->streams[i]->hup = 1;
	}
	int r = drain_all(s);
	if (r < 0)
		return r;
	if (gone || child_gone(s)) {
		r = drain_all(s);
		s->done = 1;
		return r < 0 ? r : 1;
	}
	return 0;
}

static int pause_stream(struct hwt_session *s, struct hwt_stream *st, int on)
{
	if (s->unit->pause)
		return s->unit->pause(s, st, on);
	if (st->fd >= 0)
		return ioctl(st->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, on) < 0 ? HWT_ERR_IO : 0;
	return 0;
}

int hwt_session_snapshot(struct hwt_session *s)
{
	if (!s->cfg.snapshot)
		return 0;
	int err = 0;
	uint64_t want = s->cfg.snapshot_bytes ? s->cfg.snapshot_bytes : s->cfg.aux_bytes;
	for (size_t i = 0; i < s->nr; i++) {
		struct hwt_stream *st = s->streams[i];
		if (!st->ring.aux)
			continue;
		(void)pause_stream(s, st, 1);
		struct hwt_ring_span sp;
		size_t n = hwt_ring_aux_snapshot(&st->ring, &sp);
		uint64_t head = sp.pos + n, pos = sp.pos, len = n;
		if (len > want)
			pos = head - want, len = want;
		if (s->unit->aux_align > 1) /* whole records: head is at a boundary */
			pos += len % s->unit->aux_align, len -= len % s->unit->aux_align;
		int r = deliver_aux(s, st, pos, len);
		(void)pause_stream(s, st, 0);
		if (r && !err)
			err = r;
	}
	return err;
}

int hwt_session_stop(struct hwt_session *s)
{
	if (s->unit->disable)
		(void)s->unit->disable(s);
	for (size_t i = 0; i < s->nr; i++)
		if (s->streams[i]->sb_fd >= 0)
			(void)ioctl(s->streams[i]->sb_fd, PERF_EVENT_IOC_DISABLE, 0);
	int r = drain_all(s);
	int r2 = hwt_session_snapshot(s);
	return r ? r : r2;
}

void hwt_session_get_stats(const struct hwt_session *s, struct hwt_session_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->streams = s->nr;
	for (size_t i = 0; i < s->nr; i++) {
		const struct hwt_stream *st = s->streams[i];
		out->aux_bytes += st->aux_bytes;
		out->lost_records += st->lost_records;
		out->aux_truncated += st->aux_truncated;
		out->aux_partial += st->aux_partial;
		out->aux_collision += st->aux_collision;
	}
}

void hwt_session_close(struct hwt_session *s)
{
	if (!s)
		return;
	if (s->configured && s->unit && s->unit->close)
		s->unit->close(s);
	for (size_t i = 0; i < s->nr; i++) {
		struct hwt_stream *st = s->streams[i];
		if (st->fd >= 0) {
			hwt_perf_unmap(st);
			close(st->fd);
		}
		if (st->sb_fd >= 0)
			close(st->sb_fd);
		free(st);
	}
	if (s->child_owned && s->child > 0) {
		kill(s->child, SIGKILL);
		int st;
		waitpid(s->child, &st, 0);
	}
	free(s->streams);
	free(s->scratch);
	free(s);
}
