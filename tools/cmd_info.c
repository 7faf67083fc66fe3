/* tools/cmd_info.c - "hwt info [--mmaps] [FILE]": what a recording holds.
 *
 * Reads a perf.data file (hwt's or perf's; file mode or pipe mode, "-"
 * is standard input) with the lib/perf reader in one forward pass (so it
 * works on a pipe) and prints, once every record was read: where it was captured, its events (name,
 * type, config, ids), the trace mode (per-thread or per-CPU, snapshot), its threads (pid/tid and
 * comm), trace bytes per thread or CPU (AUXTRACE payloads), and lost or truncated data (AUX flags,
 * LOST records, AUXTRACE_ERROR).  --mmaps prints instead every mapping, one a line: "pid start end
 * pgoff path" (hex addresses, in time order as perf script shows them). Exit: 0 ok, 1 the file has
 * a malformed record (what was read is still printed), 2 usage or setup errors (missing or
 * malformed file). Memory: tables grow with the number of threads/mappings; freed on exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "cli.h"
#include "hwt/perf_data.h"

static const char usage_text[] =
    "usage: hwt info [--mmaps] [FILE]\n"
    "\n"
    "Summarize a recording (perf.data written by hwt or perf; default hwt.data):\n"
    "events, trace mode, threads, trace bytes per thread/CPU, lost or truncated data.\n"
    "FILE '-' is standard input: pipe-mode perf.data ('perf record -o -',\n"
    "'perf inject -o -') or a whole perf.data file ('cat FILE |').\n"
    "\n"
    "  --mmaps      print each process's memory map instead, one mapping a line:\n"
    "               pid start end pgoff path (hex)\n"
    "  -i FILE      the recording (same as the FILE argument)\n"
    "  -h, --help   this text\n";

struct thr {
	int32_t pid, tid;
	char comm[256]; /* "a -> b -> c" when the thread exec()ed several programs */
	int execs;	/* COMM exec records seen */
	int exited;
};

struct trace_key {
	int32_t key; /* tid (per-thread) or cpu (per-CPU) */
	uint64_t bytes, records;
};

struct info {
	struct thr *thr;
	size_t nr_thr, cap_thr;
	/* trace bytes by tid and by cpu: which one is shown is known only at
	 * the end (AUXTRACE_INFO may come late), and a pipe is read once */
	struct trace_key *tk_tid, *tk_cpu;
	size_t nr_tid, cap_tid, nr_cpu, cap_cpu;
	uint64_t count[128]; /* records by type (types >= 128 in other) */
	uint64_t count_other;
	uint64_t aux, aux_trunc, aux_partial, aux_collision, aux_overwrite, aux_bytes;
	uint64_t lost_recs, lost_events, lost_samples, auxtrace_errors;
	uint64_t auxtrace_bytes;
	int have_pt_info;
	struct hwt_perf_intel_pt_info pt;
	int any_cpu_aux, any_tid_aux, idx_cpu;
};

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * elem);
	if (!q) {
		fprintf(stderr, "hwt info: out of memory\n");
		exit(2);
	}
	*cap = c;
	return q;
}

static struct thr *thread_get(struct info *in, int32_t pid, int32_t tid)
{
	for (size_t i = 0; i < in->nr_thr; i++) {
		struct thr *t = &in->thr[i];
		if (t->tid != tid)
			continue;
		if (t->pid == -1) /* THREAD_MAP entries carry no pid */
			t->pid = pid;
		if (t->pid == pid || pid == -1)
			return t;
	}
	in->thr = grow(in->thr, &in->cap_thr, in->nr_thr + 1, sizeof(*in->thr));
	struct thr *t = &in->thr[in->nr_thr++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return t;
}

static struct trace_key *trace_add(struct trace_key *tk, size_t *nr, size_t *cap, int32_t key,
				   uint64_t bytes)
{
	size_t i;
	for (i = 0; i < *nr; i++)
		if (tk[i].key == key)
			break;
	if (i == *nr) {
		tk = grow(tk, cap, *nr + 1, sizeof(*tk));
		memset(&tk[i], 0, sizeof(tk[i]));
		tk[i].key = key;
		(*nr)++;
	}
	tk[i].bytes += bytes;
	tk[i].records++;
	return tk;
}

/* Copy a NUL-terminated string from a record (bounded by the record). */
static void rec_str(const struct hwt_perf_record *rec, size_t off, char *out, size_t n)
{
	const char *s = (const char *)rec->hdr + off;
	size_t avail = rec->size > off ? rec->size - off : 0;
	size_t l = strnlen(s, avail);
	if (l >= n)
		l = n - 1;
	memcpy(out, s, l);
	out[l] = 0;
}

static const char *type_name(const struct hwt_perf_reader *r, uint32_t type, char *buf, size_t n)
{
	static const char *const fixed[] = {"hardware", "software", "tracepoint",
					    "hw-cache", "raw",	    "breakpoint"};
	if (type < 6)
		return fixed[type];
	/* PMU_MAPPINGS: u32 nr, { u32 type; u32 len; char name[len] } */
	size_t sz;
	const uint8_t *p = hwt_perf_reader_feature(r, HWT_FEAT_PMU_MAPPINGS, &sz);
	if (p && sz >= 4) {
		uint32_t nr, t, len;
		size_t off = 4;
		memcpy(&nr, p, 4);
		for (uint32_t i = 0; i < nr && off + 8 <= sz; i++) {
			memcpy(&t, p + off, 4);
			memcpy(&len, p + off + 4, 4);
			off += 8;
			if (len > sz - off)
				break;
			if (t == type && memchr(p + off, 0, len)) {
				snprintf(buf, n, "%s", (const char *)p + off);
				return buf;
			}
			off += len;
		}
	}
	snprintf(buf, n, "pmu %u", type);
	return buf;
}

/* One mapping for --mmaps; printed in time order as perf script shows
 * them (perf record writes each CPU's ring buffer in turn, so a process
 * that moved between CPUs has its records out of time order in the
 * file). */
struct mmap_line {
	uint64_t time, seq;
	int32_t pid;
	uint64_t addr, len, pgoff;
	char *path;
};

static int mmap_line_cmp(const void *a, const void *b)
{
	const struct mmap_line *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int print_mmaps(struct hwt_perf_reader *r, const char *file)
{
	struct hwt_perf_record rec;
	struct mmap_line *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t time = 0; /* a record without a time keeps its predecessor's */
	int e, rc = 0;
	while ((e = hwt_perf_reader_next(r, &rec)) > 0) {
		struct mmap_line l = {0};
		char path[4096];
		if (rec.type == PERF_RECORD_MMAP2 &&
		    rec.size >= sizeof(struct hwt_perf_rec_mmap2)) {
			struct hwt_perf_rec_mmap2 m;
			memcpy(&m, rec.hdr, sizeof(m));
			rec_str(&rec, sizeof(m), path, sizeof(path));
			l = (struct mmap_line){0, 0, (int32_t)m.pid, m.addr, m.len, m.pgoff, NULL};
		} else if (rec.type == PERF_RECORD_MMAP &&
			   rec.size >= sizeof(struct hwt_perf_rec_mmap)) {
			struct hwt_perf_rec_mmap m;
			memcpy(&m, rec.hdr, sizeof(m));
			rec_str(&rec, sizeof(m), path, sizeof(path));
			l = (struct mmap_line){0, 0, (int32_t)m.pid, m.addr, m.len, m.pgoff, NULL};
		} else {
			continue;
		}
		if (rec.have_sid && rec.sid.time)
			time = rec.sid.time;
		l.time = time;
		l.seq = n;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct mmap_line *nv = realloc(v, nc * sizeof(*v));
			if (!nv) {
				cli_err("info",
					"%s: out of memory after %zu mappings; print fewer "
					"(split the recording) or free memory",
					file, n);
				rc = 2;
				break;
			}
			v = nv;
			cap = nc;
		}
		l.path = strdup(path);
		if (!l.path) {
			cli_err("info", "%s: out of memory after %zu mappings", file, n);
			rc = 2;
			break;
		}
		v[n++] = l;
	}
	if (n)
		qsort(v, n, sizeof(*v), mmap_line_cmp);
	for (size_t i = 0; i < n; i++) {
		printf("%d 0x%llx 0x%llx 0x%llx %s\n", v[i].pid, (unsigned long long)v[i].addr,
		       (unsigned long long)(v[i].addr + v[i].len), (unsigned long long)v[i].pgoff,
		       v[i].path);
		free(v[i].path);
	}
	free(v);
	if (!rc && e < 0) {
		cli_err("info", "%s: %s; the mappings above were read before it", file,
			hwt_perf_reader_errmsg(r));
		return 1;
	}
	return rc;
}

static void scan_record(struct hwt_perf_reader *r, struct info *in,
			const struct hwt_perf_record *rec)
{
	(void)r;
	if (rec->type < 128)
		in->count[rec->type]++;
	else
		in->count_other++;
	switch (rec->type) {
	case PERF_RECORD_COMM:
		if (rec->size >= sizeof(struct hwt_perf_rec_comm)) {
			struct hwt_perf_rec_comm c;
			memcpy(&c, rec->hdr, sizeof(c));
			struct thr *t = thread_get(in, (int32_t)c.pid, (int32_t)c.tid);
			char name[64];
			rec_str(rec, sizeof(c), name, sizeof(name));
			size_t l = strlen(t->comm);
			/* each program a thread exec()ed: "sh -> env -> printenv" */
			if ((rec->misc & PERF_RECORD_MISC_COMM_EXEC) && t->execs++ && l &&
			    l + strlen(name) + 5 < sizeof(t->comm))
				snprintf(t->comm + l, sizeof(t->comm) - l, " -> %s", name);
			else
				snprintf(t->comm, sizeof(t->comm), "%s", name);
		}
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (rec->size >= sizeof(struct hwt_perf_rec_fork)) {
			struct hwt_perf_rec_fork f;
			memcpy(&f, rec->hdr, sizeof(f));
			struct thr *t = thread_get(in, (int32_t)f.pid, (int32_t)f.tid);
			if (rec->type == PERF_RECORD_EXIT)
				t->exited = 1;
			else if (!t->comm[0]) {
				/* a new thread inherits its parent's comm */
				for (size_t i = 0; i < in->nr_thr; i++)
					if (in->thr[i].tid == (int32_t)f.ptid && in->thr[i].comm[0])
						snprintf(t->comm, sizeof(t->comm), "%s",
							 in->thr[i].comm);
			}
		}
		break;
	case HWT_PERF_RECORD_THREAD_MAP:
		if (rec->size >= sizeof(struct hwt_perf_rec_thread_map)) {
			struct hwt_perf_rec_thread_map m;
			memcpy(&m, rec->hdr, sizeof(m));
			size_t max =
			    (rec->size - sizeof(m)) / sizeof(struct hwt_perf_thread_map_entry);
			for (uint64_t i = 0; i < m.nr && i < max; i++) {
				struct hwt_perf_thread_map_entry e;
				memcpy(&e, (const uint8_t *)rec->hdr + sizeof(m) + i * sizeof(e),
				       sizeof(e));
				struct thr *t = thread_get(in, -1, (int32_t)e.pid);
				if (!t->comm[0] && e.comm[0])
					snprintf(t->comm, sizeof(t->comm), "%.16s", e.comm);
			}
		}
		break;
	case PERF_RECORD_AUX:
		if (rec->size >= sizeof(struct hwt_perf_rec_aux)) {
			struct hwt_perf_rec_aux a;
			memcpy(&a, rec->hdr, sizeof(a));
			in->aux++;
			in->aux_bytes += a.aux_size;
			in->aux_trunc += !!(a.flags & PERF_AUX_FLAG_TRUNCATED);
			in->aux_overwrite += !!(a.flags & PERF_AUX_FLAG_OVERWRITE);
			in->aux_partial += !!(a.flags & PERF_AUX_FLAG_PARTIAL);
			in->aux_collision += !!(a.flags & PERF_AUX_FLAG_COLLISION);
		}
		break;
	case PERF_RECORD_LOST:
		if (rec->size >= sizeof(struct hwt_perf_rec_lost)) {
			struct hwt_perf_rec_lost l;
			memcpy(&l, rec->hdr, sizeof(l));
			in->lost_recs++;
			in->lost_events += l.lost;
		}
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (rec->size >= sizeof(struct hwt_perf_rec_lost_samples)) {
			struct hwt_perf_rec_lost_samples l;
			memcpy(&l, rec->hdr, sizeof(l));
			in->lost_samples += l.lost;
		}
		break;
	case HWT_PERF_RECORD_AUXTRACE_ERROR:
		in->auxtrace_errors++;
		break;
	case HWT_PERF_RECORD_AUXTRACE_INFO:
		if (rec->size >= sizeof(struct hwt_perf_rec_auxtrace_info)) {
			struct hwt_perf_rec_auxtrace_info ai;
			memcpy(&ai, rec->hdr, sizeof(ai));
			size_t nr = (rec->size - sizeof(ai)) / 8;
			uint64_t priv[HWT_IPT_PRIV_MAX];
			if (nr > HWT_IPT_PRIV_MAX)
				nr = HWT_IPT_PRIV_MAX;
			memcpy(priv, (const uint8_t *)rec->hdr + sizeof(ai), nr * 8);
			if (ai.type == HWT_PERF_AUXTRACE_INTEL_PT &&
			    !hwt_perf_intel_pt_info_parse(&in->pt, priv, nr))
				in->have_pt_info = 1;
		}
		break;
	case HWT_PERF_RECORD_ID_INDEX:
		if (rec->size >= sizeof(struct hwt_perf_rec_id_index)) {
			size_t max = (rec->size - sizeof(struct hwt_perf_rec_id_index)) /
				     sizeof(struct hwt_perf_id_index_entry);
			for (size_t i = 0; i < max; i++) {
				struct hwt_perf_id_index_entry e;
				memcpy(&e, (const uint8_t *)rec->hdr + 16 + i * sizeof(e),
				       sizeof(e));
				if ((int64_t)e.cpu >= 0)
					in->idx_cpu = 1;
			}
		}
		break;
	case HWT_PERF_RECORD_AUXTRACE:
		in->auxtrace_bytes += rec->aux_size;
		if ((int32_t)rec->sid.cpu >= 0)
			in->any_cpu_aux = 1;
		if ((int32_t)rec->sid.tid >= 0)
			in->any_tid_aux = 1;
		in->tk_tid = trace_add(in->tk_tid, &in->nr_tid, &in->cap_tid, (int32_t)rec->sid.tid,
				       rec->aux_size);
		in->tk_cpu = trace_add(in->tk_cpu, &in->nr_cpu, &in->cap_cpu, (int32_t)rec->sid.cpu,
				       rec->aux_size);
		break;
	}
}

static int print_info(struct hwt_perf_reader *r, const char *file)
{
	struct info in;
	memset(&in, 0, sizeof(in));
	struct hwt_perf_record rec;
	int e;
	while ((e = hwt_perf_reader_next(r, &rec)) > 0)
		scan_record(r, &in, &rec);
	const char *bad = e < 0 ? hwt_perf_reader_errmsg(r) : NULL;
	int per_cpu = in.have_pt_info ? in.pt.per_cpu_mmaps
				      : (in.any_cpu_aux || (!in.any_tid_aux && in.idx_cpu));
	/* Trace bytes are keyed by CPU in per-CPU mode, by tid otherwise. */
	const struct trace_key *tk = per_cpu ? in.tk_cpu : in.tk_tid;
	size_t nr_tk = per_cpu ? in.nr_cpu : in.nr_tid;

	printf("file:      %s (%llu bytes of records%s)\n", file,
	       (unsigned long long)hwt_perf_reader_data_size(r),
	       hwt_perf_reader_is_pipe(r) ? ", pipe mode" : "");
	const char *host = hwt_perf_reader_feature_string(r, HWT_FEAT_HOSTNAME);
	const char *os = hwt_perf_reader_feature_string(r, HWT_FEAT_OSRELEASE);
	const char *arch = hwt_perf_reader_feature_string(r, HWT_FEAT_ARCH);
	const char *cpuid = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID);
	const char *cpudesc = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUDESC);
	const char *ver = hwt_perf_reader_feature_string(r, HWT_FEAT_VERSION);
	uint32_t online = 0, avail = 0;
	int have_cpus = !hwt_perf_reader_nrcpus(r, &online, &avail);
	printf("host:      %s, %s %s\n", host ? host : "?", arch ? arch : "?", os ? os : "?");
	printf("cpu:       %s%s%s%s", cpuid ? cpuid : "?", cpudesc ? " (" : "",
	       cpudesc ? cpudesc : "", cpudesc ? ")" : "");
	if (have_cpus)
		printf(", %u online of %u", online, avail);
	printf("\n");
	if (ver)
		printf("writer:    %s\n", ver);
	const char *cmd = hwt_perf_reader_cmdline(r);
	if (cmd)
		printf("command:   %s\n", cmd);

	printf("events:\n");
	for (size_t i = 0; i < hwt_perf_reader_nr_attrs(r); i++) {
		const struct hwt_perf_attr_info *a = hwt_perf_reader_attr(r, i);
		char tb[64];
		printf("  %-16s type %u (%s), config %#llx, %zu id%s\n",
		       a->name && a->name[0] ? a->name : "?", a->attr.type,
		       type_name(r, a->attr.type, tb, sizeof(tb)),
		       (unsigned long long)a->attr.config, a->nr_ids, a->nr_ids == 1 ? "" : "s");
	}
	printf("mode:      %s", per_cpu ? "per-CPU" : "per-thread");
	if (in.have_pt_info)
		printf(", intel_pt%s", in.pt.snapshot_mode ? ", snapshot" : ", full trace");
	printf("\n");

	printf("threads:   %zu\n", in.nr_thr);
	for (size_t i = 0; i < in.nr_thr; i++)
		printf("  pid %d tid %d  %s%s\n", in.thr[i].pid, in.thr[i].tid,
		       in.thr[i].comm[0] ? in.thr[i].comm : "?",
		       in.thr[i].exited ? " (exited)" : "");
	size_t fsz = 0; /* hwt's HWT_FATAL feature: "fatal pid=P tid=T signal=S" lines */
	const char *fat = hwt_perf_reader_feature(r, HWT_FEAT_HWT_FATAL, &fsz);
	for (size_t at = 0; fat && at < fsz;) {
		const char *nl = memchr(fat + at, '\n', fsz - at);
		size_t l = nl ? (size_t)(nl - (fat + at)) : fsz - at;
		size_t skip = l >= 6 && !memcmp(fat + at, "fatal ", 6) ? 6 : 0;
		printf("fatal:     %.*s\n", (int)(l - skip), fat + at + skip);
		at += l + 1;
	}

	printf("trace:     %llu bytes in %llu AUXTRACE records\n",
	       (unsigned long long)in.auxtrace_bytes,
	       (unsigned long long)in.count[HWT_PERF_RECORD_AUXTRACE]);
	for (size_t i = 0; i < nr_tk; i++)
		printf("  %s %d: %llu bytes in %llu records\n", per_cpu ? "cpu" : "tid", tk[i].key,
		       (unsigned long long)tk[i].bytes, (unsigned long long)tk[i].records);
	printf("aux:       %llu AUX records (%llu bytes), of which %llu truncated, %llu partial, "
	       "%llu collision, %llu overwrite\n",
	       (unsigned long long)in.aux, (unsigned long long)in.aux_bytes,
	       (unsigned long long)in.aux_trunc, (unsigned long long)in.aux_partial,
	       (unsigned long long)in.aux_collision, (unsigned long long)in.aux_overwrite);
	printf("lost:      %llu LOST records (%llu events lost), %llu samples lost, "
	       "%llu trace errors\n",
	       (unsigned long long)in.lost_recs, (unsigned long long)in.lost_events,
	       (unsigned long long)in.lost_samples, (unsigned long long)in.auxtrace_errors);
	printf("records:  ");
	for (uint32_t t = 0; t < 128; t++)
		if (in.count[t])
			printf(" %s %llu", hwt_perf_record_name(t),
			       (unsigned long long)in.count[t]);
	if (in.count_other)
		printf(" other %llu", (unsigned long long)in.count_other);
	printf("\n");
	if (in.count[HWT_PERF_RECORD_COMPRESSED])
		printf("note:      %llu records are zstd-compressed (perf record -z); hwt does not "
		       "read inside them: re-record without -z\n",
		       (unsigned long long)in.count[HWT_PERF_RECORD_COMPRESSED]);
	free(in.thr);
	free(in.tk_tid);
	free(in.tk_cpu);
	if (bad) {
		cli_err("info", "%s: %s; the summary above covers the records before it", file,
			bad);
		return 1;
	}
	return 0;
}

int hwt_cmd_info(int argc, char **argv)
{
	const char *file = NULL;
	int mmaps = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--mmaps")) {
			mmaps = 1;
		} else if (!strcmp(argv[i], "-i") && i + 1 < argc && !file) {
			file = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_err("info", "unknown option '%s'", argv[i]);
			return cli_usage_error(usage_text);
		} else if (!file) {
			file = argv[i];
		} else {
			cli_err("info", "more than one file given ('%s', '%s')", file, argv[i]);
			return cli_usage_error(usage_text);
		}
	}
	if (!file)
		file = "hwt.data";
	struct hwt_perf_reader *r;
	char why[256];
	int e = hwt_perf_reader_open(&r, file, why, sizeof(why));
	if (e == HWT_ERR_IO) {
		cli_err("info", "cannot open '%s': %s%s", file, why,
			errno == ENOENT ? " (record one with 'hwt record' or name the file)" : "");
		return 2;
	}
	if (e) {
		cli_err("info",
			"'%s' is not a readable perf.data file: %s; was it written "
			"completely (by 'hwt record' or 'perf record')?",
			file, why);
		return 2;
	}
	int rc = mmaps ? print_mmaps(r, file) : print_info(r, file);
	hwt_perf_reader_free(r);
	return rc;
}
