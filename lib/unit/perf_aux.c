/* lib/unit/perf_aux.c - perf_event_open, the mmap of the data and AUX
 * rings, and the generic sysfs-described AUX trace unit.
 *
 * Kernel ABI (linux/perf_event.h, perf_event_open(2)): an AUX-capable PMU
 * event is opened with attr.type = sysfs "type" and attr.config built from
 * the sysfs format terms; mmap(fd, 0) of 1 + 2^n pages maps the control
 * page and the data ring; writing aux_offset/aux_size into the control
 * page and mmap(fd, aux_offset) of aux_size bytes maps the AUX ring (read
 * and write: full mode, the kernel never overwrites unreleased bytes; read
 * only: overwrite/snapshot mode).  From there struct hwt_ring (lib/buf) is
 * the one consumer for kernel and emulated units.
 *
 * Lifecycle: hwt_hw_configure (reads the PMU, builds the attr, owns a
 * struct hw_priv in the session) -> hwt_hw_open per thread/CPU (one
 * stream each: fd, mappings) -> enable/disable by ioctl -> hwt_hw_close
 * (unmaps and closes every stream's fds, frees the priv).  Nothing here is
 * global; errors are turned into one line that says what to do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"
#include "unit/unit_int.h"

int hwt_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int hwt_perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 99;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 99;
		fclose(f);
	}
	return v;
}

void hwt_perf_explain(int e, const char *what, const struct perf_event_attr *attr, pid_t pid,
		      int cpu, char *err, size_t errlen)
{
	int par = hwt_perf_paranoid();
	char target[64];
	if (pid >= 0)
		snprintf(target, sizeof(target), "pid %d", (int)pid);
	else
		snprintf(target, sizeof(target), "CPU %d", cpu);
	switch (e) {
	case EACCES:
	case EPERM:
		if (pid < 0)
			snprintf(err, errlen,
				 "%s on %s: permission denied: CPU-wide tracing needs "
				 "kernel.perf_event_paranoid <= 0 (it is %d) or CAP_PERFMON; run "
				 "'sudo sysctl kernel.perf_event_paranoid=0', or trace a command "
				 "or -p PID instead",
				 what, target, par);
		else if (attr && !attr->exclude_kernel && par >= 2)
			snprintf(err, errlen,
				 "%s on %s: permission denied: tracing the kernel needs "
				 "kernel.perf_event_paranoid <= 1 (it is %d); add the 'u' "
				 "modifier (e.g. -e %s/u) or lower the setting",
				 what, target, par, what);
		else
			snprintf(err, errlen,
				 "%s on %s: permission denied (kernel.perf_event_paranoid is %d): "
				 "you can only trace your own processes (and "
				 "kernel.yama.ptrace_scope may forbid attaching); run as their "
				 "owner or with CAP_PERFMON",
				 what, target, par);
		break;
	case EBUSY:
		snprintf(err, errlen,
			 "%s on %s: the trace unit is busy: another tracer (perf, another hwt, "
			 "a hypervisor) holds it; stop that one and retry",
			 what, target);
		break;
	case ESRCH:
		snprintf(err, errlen, "%s: no such process: %s", what, target);
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		snprintf(err, errlen,
			 "%s on %s: not supported by this kernel or CPU (%s); run 'hwt list'", what,
			 target, strerror(e));
		break;
	case EINVAL:
		snprintf(err, errlen,
			 "%s on %s: the kernel rejected the event (config=%#llx config1=%#llx "
			 "config2=%#llx): a term or the buffer size is not supported here; see "
			 "'hwt list' for the formats and caps",
			 what, target, attr ? (unsigned long long)attr->config : 0ULL,
			 attr ? (unsigned long long)attr->config1 : 0ULL,
			 attr ? (unsigned long long)attr->config2 : 0ULL);
		break;
	case EMFILE:
	case ENFILE:
		snprintf(err, errlen, "%s on %s: too many open files: raise 'ulimit -n'", what,
			 target);
		break;
	default:
		snprintf(err, errlen, "%s on %s: %s", what, target, strerror(e));
	}
}

int hwt_perf_map(struct hwt_stream *st, uint64_t data_bytes, uint64_t aux_bytes, int overwrite,
		 char *err, size_t errlen)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)page + (size_t)data_bytes;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		snprintf(err, errlen, "cannot map the %llu KiB data ring of the perf event: %s%s",
			 (unsigned long long)(data_bytes >> 10), strerror(e),
			 e == EPERM || e == ENOMEM
			     ? " (raise kernel.perf_event_mlock_kb or use a smaller -m)"
			     : "");
		return e == EPERM ? HWT_ERR_PERM : HWT_ERR_IO;
	}
	st->map = m;
	st->map_len = len;
	struct perf_event_mmap_page *pg = m;
	void *aux = NULL;
	if (aux_bytes) {
		pg->aux_offset = len;
		pg->aux_size = aux_bytes;
		aux = mmap(NULL, (size_t)aux_bytes, PROT_READ | (overwrite ? 0 : PROT_WRITE),
			   MAP_SHARED, st->fd, (off_t)len);
		if (aux == MAP_FAILED) {
			int e = errno;
			snprintf(err, errlen, "cannot map the %llu KiB AUX ring: %s%s",
				 (unsigned long long)(aux_bytes >> 10), strerror(e),
				 e == EPERM || e == ENOMEM
				     ? " (raise kernel.perf_event_mlock_kb or use a smaller -m)"
				     : "");
			hwt_perf_unmap(st);
			return e == EPERM ? HWT_ERR_PERM : HWT_ERR_IO;
		}
		st->aux_map = aux;
		st->aux_map_len = (size_t)aux_bytes;
	}
	int r = hwt_ring_attach(&st->ring, pg, (uint8_t *)m + page, data_bytes, aux, aux_bytes,
				overwrite);
	if (r) {
		snprintf(err, errlen, "ring sizes must be powers of two");
		hwt_perf_unmap(st);
	}
	return r;
}

void hwt_perf_unmap(struct hwt_stream *st)
{
	if (st->aux_map)
		munmap(st->aux_map, st->aux_map_len);
	if (st->map)
		munmap(st->map, st->map_len);
	st->aux_map = st->map = NULL;
	st->aux_map_len = st->map_len = 0;
}

/* ---- the generic sysfs-described AUX unit ---- */

struct hw_priv {
	const struct hwt_hw_desc *d;
	struct hwt_pmu pmu;
};

int hwt_hw_probe(const struct hwt_hw_desc *d, struct hwt_unit_info *info)
{
	struct hwt_pmu pmu;
	char why[200];
	const char *root = hwt_sysfs_root();
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", d->unit);
	int r = hwt_pmu_read(root, d->name, &pmu, why, sizeof(why));
	if (r == HWT_ERR_NOT_PRESENT) {
		snprintf(info->why, sizeof(info->why),
			 "not present (no %s/%s: this CPU or VM has no %s; %s)", root, d->name,
			 d->what,
			 strcmp(d->name, "intel_pt") && strcmp(d->name, "intel_bts")
			     ? "use --emulate: the emulated unit runs aarch64 programs under "
			       "qemu-aarch64"
			     : "use --emulate");
		return HWT_ERR_NOT_PRESENT;
	}
	if (r) {
		snprintf(info->why, sizeof(info->why), "unusable: %.200s", why);
		return HWT_ERR_NOT_PRESENT;
	}
	info->present = 1;
	info->pmu_type = pmu.type;
	info->nr_addr_filters = pmu.nr_addr_filters > 0 ? (unsigned)pmu.nr_addr_filters : 0;
	size_t k = 0;
	for (size_t i = 0; i < pmu.nr_formats && k < sizeof(info->formats); i++) {
		const struct hwt_pmu_format *f = &pmu.formats[i];
		int lo = __builtin_ctzll(f->mask), hi = 63 - __builtin_clzll(f->mask);
		char range[16];
		if (lo == hi)
			snprintf(range, sizeof(range), "%d", lo);
		else
			snprintf(range, sizeof(range), "%d-%d", lo, hi);
		int n = snprintf(info->formats + k, sizeof(info->formats) - k, "%s%s=config%s:%s",
				 k ? " " : "", f->name,
				 f->word == 0	? ""
				 : f->word == 1 ? "1"
						: "2",
				 range);
		if (n < 0 || (size_t)n >= sizeof(info->formats) - k)
			break;
		k += (size_t)n;
	}
	k = 0;
	for (size_t i = 0; i < pmu.nr_caps && k < sizeof(info->caps); i++) {
		int n = snprintf(info->caps + k, sizeof(info->caps) - k,
				 pmu.caps[i].value > 9 ? "%s%s=%#llx" : "%s%s=%llu", k ? " " : "",
				 pmu.caps[i].name, (unsigned long long)pmu.caps[i].value);
		if (n < 0 || (size_t)n >= sizeof(info->caps) - k)
			break;
		k += (size_t)n;
	}
	return 0;
}

/* Default terms gated by a cap (perf applies the same rule). */
static int term_allowed(const struct hwt_pmu *pmu, const char *term)
{
	static const struct {
		const char *term, *cap;
	} gates[] = {{"mtc", "mtc"},
		     {"mtc_period", "mtc"},
		     {"cyc", "psb_cyc"},
		     {"psb_period", "psb_cyc"},
		     {"pwr_evt", "power_event_trace"},
		     {"ptw", "ptwrite"}};
	uint64_t v;
	for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]); i++)
		if (!strcmp(gates[i].term, term))
			return !hwt_pmu_get_cap(pmu, gates[i].cap, &v) && v;
	return 1;
}

int hwt_hw_configure(const struct hwt_hw_desc *d, struct hwt_session *s, const char *terms,
		     char *err, size_t errlen)
{
	struct hw_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	char why[256];
	const char *root = hwt_sysfs_root();
	int r = hwt_pmu_read(root, d->name, &p->pmu, why, sizeof(why));
	if (r) {
		if (r == HWT_ERR_NOT_PRESENT)
			snprintf(err, errlen,
				 "%s: not present (no %s/%s: this CPU or VM has no %s); use "
				 "--emulate to record with the emulated Intel PT unit",
				 d->name, root, d->name, d->what);
		else
			snprintf(err, errlen, "%s: %s", d->name, why);
		free(p);
		return r;
	}
	p->d = d;
	struct perf_event_attr *attr = hwt_session_attr(s);
	hwt_perf_attr_intel_pt(attr, p->pmu.type, 0);
	/* defaults first (only the terms this PMU has), then the user's */
	if (d->default_terms) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", d->default_terms);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			char name[64];
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(t, "="), t);
			if (hwt_pmu_find_format(&p->pmu, name) && term_allowed(&p->pmu, name)) {
				char e2[128];
				(void)hwt_pmu_apply_terms(&p->pmu, attr, t, e2, sizeof(e2));
			}
		}
	}
	r = hwt_pmu_apply_terms(&p->pmu, attr, terms, err, errlen);
	if (r) {
		free(p);
		return r;
	}
	hwt_session_set_unit_priv(s, p);
	return 0;
}

const struct hwt_pmu *hwt_hw_pmu(struct hwt_session *s)
{
	const struct hwt_unit_ops *u = hwt_session_unit(s);
	if (!u || u->emulated || !strcmp(u->name, "dummy"))
		return NULL;
	struct hw_priv *p = hwt_session_unit_priv(s);
	return p ? &p->pmu : NULL;
}

int hwt_perf_open_stream(struct hwt_session *s, const char *what, pid_t tid, int cpu, int aux,
			 struct hwt_stream **out)
{
	const struct hwt_session_config *cfg = hwt_session_config(s);
	struct hwt_stream *st = hwt_session_add_stream(s);
	char err[512];
	if (!st)
		return HWT_ERR_NOMEM;
	st->pid = st->tid = tid;
	st->cpu = cpu;
	st->fd = hwt_perf_open(hwt_session_attr(s), tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (st->fd < 0) {
		int e = errno;
		hwt_perf_explain(e, what, hwt_session_attr(s), tid, cpu, err, sizeof(err));
		hwt_session_set_err(s, "%s", err);
		return aux && e == EBUSY	     ? HWT_ERR_BUSY
		       : (e == EACCES || e == EPERM) ? HWT_ERR_PERM
						     : HWT_ERR_IO;
	}
	int r = hwt_perf_map(st, cfg->data_bytes, aux ? cfg->aux_bytes : 0, aux ? cfg->snapshot : 0,
			     err, sizeof(err));
	if (r) {
		hwt_session_set_err(s, "%s: %s", what, err);
		return r;
	}
	__u64 id = 0;
	if (ioctl(st->fd, PERF_EVENT_IOC_ID, &id) == 0)
		st->id = id;
	*out = st;
	return 0;
}

int hwt_hw_open(struct hwt_session *s, pid_t tid, int cpu)
{
	struct hw_priv *p = hwt_session_unit_priv(s);
	struct hwt_stream *st;
	return hwt_perf_open_stream(s, p->d->name, tid, cpu, 1, &st);
}

int hwt_hw_enable(struct hwt_session *s)
{
	struct hwt_stream **v;
	size_t n = hwt_session_streams(s, &v);
	for (size_t i = 0; i < n; i++)
		if (v[i]->fd >= 0 && ioctl(v[i]->fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return HWT_ERR_IO;
	return 0;
}

int hwt_hw_disable(struct hwt_session *s)
{
	struct hwt_stream **v;
	size_t n = hwt_session_streams(s, &v);
	for (size_t i = 0; i < n; i++)
		if (v[i]->fd >= 0)
			(void)ioctl(v[i]->fd, PERF_EVENT_IOC_DISABLE, 0);
	return 0;
}

void hwt_hw_close(struct hwt_session *s)
{
	free(hwt_session_unit_priv(s));
	hwt_session_set_unit_priv(s, NULL);
}
