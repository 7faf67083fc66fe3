/* tools/record_sink.c - the perf.data sink of "hwt record".
 *
 * The session hands over each stream's data-ring records (copied as is:
 * they carry the sample_id trailer of the attrs declared in begin()) and
 * its AUX ranges (written as AUXTRACE records: offset = position in the
 * stream's AUX ring, idx = stream index, tid/cpu of the stream,
 * reference = the TSC when the data was read: rdtsc for hardware units,
 * for emulated ones the emulated TSC of the stream's newest record; perf's
 * Intel PT decoder takes the upper TSC bits from it and ignores TSC
 * packets while it is 0, so timed traces need it).  What
 * perf itself would synthesize is added here: AUXTRACE_INFO (from the
 * unit), ID_INDEX, for -p/-t the COMM and MMAP2 records of the running
 * process (from /proc), TIME_CONV at the end.  Owns the writer.
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "hwt/error.h"
#include "hwt/perf_records.h"
#include "record_int.h"
#include "vdso.h"

/* Control-page fields read for TIME_CONV beyond those pinned in
 * hwt/perf_records.h. */
_Static_assert(offsetof(struct perf_event_mmap_page, capabilities) == 40, "mmap_page.caps");
_Static_assert(offsetof(struct perf_event_mmap_page, time_cycles) == 80, "mmap_page.time_cycles");
_Static_assert(offsetof(struct perf_event_mmap_page, time_mask) == 88, "mmap_page.time_mask");

static int stream_index(struct hwt_record *rec, const struct hwt_stream *st)
{
	struct hwt_stream **v;
	size_t n = rec->s ? hwt_session_streams(rec->s, &v) : 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] == st)
			return (int)i;
	return 0;
}

/* The sample time in a non-sample record's sample_id trailer (attr's
 * sample_type with sample_id_all); 0 when it has none. */
static uint64_t record_time(const struct perf_event_attr *attr, const struct perf_event_header *h)
{
	if (!attr || !attr->sample_id_all || !(attr->sample_type & PERF_SAMPLE_TIME) ||
	    h->type == PERF_RECORD_SAMPLE || h->type >= 64 /* perf's user types (AUXTRACE, ...) */)
		return 0;
	size_t back = 8; /* TIME itself, then what follows it */
	back += attr->sample_type & PERF_SAMPLE_ID ? 8 : 0;
	back += attr->sample_type & PERF_SAMPLE_STREAM_ID ? 8 : 0;
	back += attr->sample_type & PERF_SAMPLE_CPU ? 8 : 0;
	back += attr->sample_type & PERF_SAMPLE_IDENTIFIER ? 8 : 0;
	if (h->size < sizeof(*h) + back)
		return 0;
	uint64_t t;
	memcpy(&t, (const uint8_t *)h + h->size - back, sizeof(t));
	return t;
}

/* perf time -> TSC with the stream's published conversion (the inverse
 * of time = time_zero + (tsc >> shift) * mult + ((tsc & mask) * mult >> shift)). */
static uint64_t time_to_tsc(const struct hwt_stream *st, uint64_t t)
{
	const struct perf_event_mmap_page *pg = st->ring.ctl;
	if (!pg || !pg->cap_user_time_zero || !pg->time_mult || pg->time_shift > 31 ||
	    t < pg->time_zero)
		return t;
	t -= pg->time_zero;
	uint64_t q = t / pg->time_mult, r = t % pg->time_mult;
	return (q << pg->time_shift) + (r << pg->time_shift) / pg->time_mult;
}

static int sink_record(void *arg, struct hwt_stream *st, const struct perf_event_header *h)
{
	struct hwt_record *rec = arg;
	if (rec->s && hwt_session_unit(rec->s)->emulated) {
		uint64_t t = record_time(hwt_session_attr(rec->s), h);
		size_t i = (size_t)stream_index(rec, st);
		if (t && i >= rec->nlast) {
			size_t n = i + 16;
			uint64_t *v = realloc(rec->last_time, n * sizeof(*v));
			if (v) {
				memset(v + rec->nlast, 0, (n - rec->nlast) * sizeof(*v));
				rec->last_time = v;
				rec->nlast = n;
			}
		}
		if (t && i < rec->nlast && t > rec->last_time[i])
			rec->last_time[i] = t;
	}
	int e = hwt_perf_writer_write_raw(rec->w, h, h->size, NULL, 0);
	if (e && !rec->err)
		rec->err = e;
	rec->records++;
	return e;
}

/* The AUXTRACE reference: the TSC when the data is read, as perf record
 * stores it.  An emulated stream's TSC is its own instruction clock, seen
 * through the times of its records (all written before this data is
 * handed over; perf needs only the TSC's upper bits from it). */
static uint64_t aux_reference(struct hwt_record *rec, const struct hwt_stream *st)
{
	if (rec->s && hwt_session_unit(rec->s)->emulated) {
		size_t i = (size_t)stream_index(rec, st);
		uint64_t t = i < rec->nlast ? rec->last_time[i] : 0;
		uint64_t tsc = t ? time_to_tsc(st, t) : 0;
		/* BTS data has no time of its own: perf decodes a whole buffer
		 * once an event at or after the reference comes, before applying
		 * that event.  One tick past the newest record seen, so that the
		 * sideband written before these branches (MMAP2 at the same
		 * instant included) is applied first. */
		if (hwt_session_unit(rec->s)->auxtrace_type == HWT_PERF_AUXTRACE_INTEL_BTS)
			tsc++;
		return tsc ? tsc : 1;
	}
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return 0;
#endif
}

static int sink_aux(void *arg, struct hwt_stream *st, const struct hwt_ring_span *sp)
{
	struct hwt_record *rec = arg;
	struct hwt_perf_auxtrace_desc d = {
	    .offset = sp->pos,
	    .reference = aux_reference(rec, st),
	    .idx = (uint32_t)stream_index(rec, st),
	    .tid = (uint32_t)st->tid,
	    .cpu = (uint32_t)st->cpu,
	};
	int e = hwt_perf_writer_write_auxtrace(rec->w, &d, sp->p1, sp->n1, sp->p2, sp->n2);
	if (e && !rec->err)
		rec->err = e;
	return e;
}

void hwt_record_sink(struct hwt_record *rec, struct hwt_sink *sink)
{
	memset(sink, 0, sizeof(*sink));
	sink->arg = rec;
	sink->record = sink_record;
	sink->aux = sink_aux;
}

/* A reader that goes away makes writes fail (EPIPE) instead of killing
 * hwt; a handler, not SIG_IGN, so that the recorded program (exec resets
 * handlers) keeps the default. */
static void on_sigpipe(int sig)
{
	(void)sig;
}

int hwt_record_open_output(struct hwt_record *rec, const char *path, int argc, char **argv,
			   char *err, size_t errlen)
{
	struct stat sb;
	snprintf(rec->path, sizeof(rec->path), "%s", path);
	rec->to_stdout = !strcmp(path, "-");
	if (!rec->to_stdout && !lstat(path, &sb)) {
		char old[4200];
		snprintf(old, sizeof(old), "%s.old", path);
		if (rename(path, old)) {
			snprintf(err, errlen, "cannot rename '%s' to '%s': %s", path, old,
				 strerror(errno));
			return HWT_ERR_IO;
		}
	}
	struct hwt_perf_writer_config cfg;
	hwt_perf_writer_config_init(&cfg);
	cfg.mode = 0600;
	cfg.argc = argc + 1;
	char **av = calloc((size_t)argc + 2, sizeof(char *));
	if (!av)
		return HWT_ERR_NOMEM;
	av[0] = "hwt";
	for (int i = 0; i < argc; i++)
		av[i + 1] = argv[i];
	cfg.argv = av;
	rec->w = hwt_perf_writer_alloc(&cfg);
	free(av);
	if (!rec->w)
		return HWT_ERR_NOMEM;
	int e;
	if (rec->to_stdout) {
		/* the data keeps the standard output; everything else written
		 * there from now on (the program's output) goes to stderr */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigpipe;
		sigaction(SIGPIPE, &sa, NULL);
		rec->out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		e = rec->out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0
			? HWT_ERR_IO
			: hwt_perf_writer_open_fd(rec->w, rec->out_fd);
		if (e && rec->out_fd >= 0)
			close(rec->out_fd);
	} else {
		e = hwt_perf_writer_open(rec->w, path);
	}
	if (e) {
		snprintf(err, errlen, "cannot write '%s': %s (choose another file with -o)", path,
			 strerror(errno));
		hwt_perf_writer_free(rec->w);
		rec->w = NULL;
		return e;
	}
	return 0;
}

void hwt_record_abort(struct hwt_record *rec)
{
	free(rec->last_time);
	rec->last_time = NULL;
	rec->nlast = 0;
	if (rec->w) {
		hwt_perf_writer_free(rec->w);
		rec->w = NULL;
		if (rec->to_stdout)
			close(rec->out_fd);
		else
			unlink(rec->path);
	}
}

/* Synthesize COMM and executable MMAP2 records for a running process. */
static int synth_process(struct hwt_record *rec, pid_t pid, uint64_t id)
{
	char path[64], line[4096 + 256];
	struct hwt_perf_sample_id sid;
	memset(&sid, 0, sizeof(sid));
	sid.id = sid.identifier = id;
	sid.pid = (uint32_t)pid;
	char comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	int e = 0;
	if (d) {
		struct dirent *de;
		while (!e && (de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			uint32_t tid = (uint32_t)atoi(de->d_name);
			char tcomm[64] = "";
			snprintf(line, sizeof(line), "/proc/%d/task/%u/comm", (int)pid, tid);
			FILE *tf = fopen(line, "r");
			if (tf) {
				if (fgets(tcomm, sizeof(tcomm), tf))
					tcomm[strcspn(tcomm, "\n")] = 0;
				fclose(tf);
			}
			sid.tid = tid;
			e = hwt_perf_writer_write_comm(rec->w, (uint32_t)pid, tid,
						       tcomm[0] ? tcomm : comm, 0, &sid);
		}
		closedir(d);
	}
	sid.tid = (uint32_t)pid;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return e;
	while (!e && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off, ino;
		char perms[8], dev[16];
		int n = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %n", &lo, &hi, perms, &off, dev,
			   &ino, &n) < 6)
			continue;
		char *name = line + n;
		name[strcspn(name, "\n")] = 0;
		if (perms[2] != 'x')
			continue;
		uint32_t prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) |
				(perms[1] == 'w' ? PROT_WRITE : 0);
		uint32_t flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		if (!name[0])
			name = "//anon";
		e = hwt_perf_writer_write_mmap2(rec->w, (uint32_t)pid, (uint32_t)pid, lo, hi - lo,
						off, prot, flags, name, PERF_RECORD_MISC_USER,
						&sid);
	}
	fclose(f);
	return e;
}

int hwt_record_begin(struct hwt_record *rec, struct hwt_session *s, const char *event,
		     pid_t attach_pid, char *err, size_t errlen)
{
	rec->s = s;
	const struct hwt_unit_ops *unit = hwt_session_unit(s);
	struct hwt_stream **v;
	size_t n = hwt_session_streams(s, &v);
	uint64_t *ids = calloc(n + 1, sizeof(uint64_t)), *sb_ids = calloc(n + 1, sizeof(uint64_t));
	struct hwt_perf_id_index_entry *idx = calloc(2 * n + 1, sizeof(*idx));
	size_t nids = 0, nsb = 0, nidx = 0;
	int e = 0;
	if (!ids || !sb_ids || !idx) {
		e = HWT_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i]->id)
			ids[nids++] = v[i]->id;
		if (v[i]->sb_id && v[i]->sb_id != v[i]->id)
			sb_ids[nsb++] = v[i]->sb_id;
		uint64_t cpu = (uint64_t)(int64_t)v[i]->cpu, tid = (uint64_t)(int64_t)v[i]->tid;
		if (v[i]->id)
			idx[nidx++] = (struct hwt_perf_id_index_entry){v[i]->id, i, cpu, tid};
		if (v[i]->sb_id && v[i]->sb_id != v[i]->id)
			idx[nidx++] = (struct hwt_perf_id_index_entry){v[i]->sb_id, i, cpu, tid};
	}
	char name[128];
	int is_dummy = !strcmp(unit->name, "dummy");
	if (is_dummy)
		snprintf(name, sizeof(name), "dummy:u");
	else if (strchr(event, '/'))
		snprintf(name, sizeof(name), "%s", event);
	else
		snprintf(name, sizeof(name), "%s//u", event);
	struct perf_event_attr sb;
	const struct perf_event_attr *sbp = hwt_session_sb_attr(s);
	if (unit->emulated) {
		ids[0] = HWT_EMU_ID_TRACE;
		nids = 1;
		hwt_perf_attr_sideband(&sb, 0);
		/* the plugin writes one sample_id layout for both events */
		sb.sample_type = hwt_session_attr(s)->sample_type;
		sbp = &sb;
		sb_ids[0] = HWT_EMU_ID_SIDEBAND;
		nsb = 1;
	}
	e = hwt_perf_writer_add_attr(rec->w, hwt_session_attr(s), name, ids, nids);
	if (e >= 0 && sbp && !is_dummy)
		e = hwt_perf_writer_add_attr(rec->w, sbp, "dummy:u", sb_ids, nsb);
	if (e >= 0 && !is_dummy)
		e = hwt_perf_writer_add_pmu(rec->w, unit->name, hwt_session_attr(s)->type);
	if (e < 0)
		goto out;
	e = 0;
	if (unit->emulated && unit->auxtrace_type == HWT_PERF_AUXTRACE_ARM_SPE) {
		/* perf 6.1's arm_spe takes the time conversion when it reads the
		 * AUXTRACE_INFO: TIME_CONV first (the emulated clock, 1 tick = 1 ns) */
		struct hwt_perf_rec_time_conv tc;
		memset(&tc, 0, sizeof(tc));
		tc.time_mult = 1;
		tc.cap_user_time_zero = 1;
		e = hwt_perf_writer_write_time_conv(rec->w, &tc);
	}
	if (!e && unit->auxtrace_info) {
		uint64_t priv[64];
		int k = unit->auxtrace_info(s, priv, 64);
		if (k > 0)
			e = hwt_perf_writer_write_auxtrace_info(
			    rec->w,
			    unit->auxtrace_type ? unit->auxtrace_type : HWT_PERF_AUXTRACE_INTEL_PT,
			    priv, (size_t)k);
	}
	if (!e && nidx && !is_dummy && !unit->emulated)
		e = hwt_perf_writer_write_id_index(rec->w, idx, nidx);
	if (!e && attach_pid > 0)
		e = synth_process(rec, attach_pid, nsb ? sb_ids[0] : nids ? ids[0] : 0);
out:
	if (e < 0)
		snprintf(err, errlen, "cannot write '%s': %s", rec->path, hwt_errstr(e));
	free(ids);
	free(sb_ids);
	free(idx);
	return e < 0 ? e : 0;
}

/* The running vdso (the one the recorded programs see): its build-id in
 * the BUILD_ID feature, the bytes in the build-id cache (as perf record
 * does, so that decoders find the vdso's code). */
static void add_vdso(struct hwt_record *rec)
{
	const uint8_t *d;
	size_t n, len;
	uint8_t id[20];
	char dir[4096];
	if (vdso_self(&d, &n) || elf_mem_build_id(d, n, id, &len))
		return;
	if (hwt_perf_writer_add_build_id(rec->w, -1, PERF_RECORD_MISC_USER, id, len, "[vdso]"))
		return;
	if (rec->no_buildid_cache || buildid_dir(dir, sizeof(dir)))
		return;
	if (vdso_cache_save(dir, id, len, d, n))
		fprintf(stderr,
			"hwt record: cannot save the vdso into the build-id cache '%s' (set "
			"PERF_BUILDID_DIR, or -N to skip)\n",
			dir);
}

int hwt_record_finish(struct hwt_record *rec, struct hwt_session *s, char *err, size_t errlen)
{
	struct hwt_stream **v;
	size_t n = hwt_session_streams(s, &v);
	int e = 0;
	if (n && v[0]->ring.ctl && v[0]->ring.ctl->cap_user_time_zero) {
		const struct perf_event_mmap_page *pg = v[0]->ring.ctl;
		struct hwt_perf_rec_time_conv tc;
		memset(&tc, 0, sizeof(tc));
		tc.time_shift = pg->time_shift;
		tc.time_mult = pg->time_mult;
		tc.time_zero = pg->time_zero;
		tc.time_cycles = pg->time_cycles;
		tc.time_mask = pg->time_mask;
		tc.cap_user_time_zero = 1;
		tc.cap_user_time_short = pg->cap_user_time_short;
		e = hwt_perf_writer_write_time_conv(rec->w, &tc);
	}
	if (!e && rec->vdso)
		add_vdso(rec);
	if (!e)
		e = hwt_perf_writer_finish(rec->w);
	uint64_t written = hwt_perf_writer_offset(rec->w);
	hwt_perf_writer_free(rec->w);
	rec->w = NULL;
	if (rec->to_stdout && close(rec->out_fd) && !e)
		e = HWT_ERR_IO;
	free(rec->last_time);
	rec->last_time = NULL;
	rec->nlast = 0;
	if (e) {
		snprintf(err, errlen, "cannot write '%s': %s", rec->path, hwt_errstr(e));
		return e;
	}
	struct stat sb;
	if (rec->to_stdout)
		rec->bytes_written = written;
	else if (!stat(rec->path, &sb))
		rec->bytes_written = (uint64_t)sb.st_size;
	return 0;
}

int hwt_record_round(struct hwt_record *rec)
{
	if (!rec->w || rec->records == rec->round_mark)
		return 0;
	rec->round_mark = rec->records;
	return hwt_perf_writer_write_finished_round(rec->w);
}
