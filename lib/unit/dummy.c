/* lib/unit/dummy.c - the "dummy" unit: sideband only (MMAP2, COMM,
 * FORK/EXIT, context switches) through a software dummy event with a data
 * ring and no AUX ring.  It needs no trace hardware, so it is the part of
 * recording that runs on every machine, and it exercises the same
 * perf_event_open / mmap / ring / session path as the AUX units. */
#include <errno.h>
#include <stdio.h>
#include <sys/ioctl.h>

#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "unit/unit_int.h"

static int probe(struct hwt_unit_info *info)
{
	snprintf(info->name, sizeof(info->name), "dummy");
	info->present = 1;
	info->pmu_type = PERF_TYPE_SOFTWARE;
	snprintf(info->caps, sizeof(info->caps), "sideband-only");
	return 0;
}

static int configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	if (terms && *terms) {
		snprintf(err, errlen, "dummy takes no terms (got '%s')", terms);
		return HWT_ERR_INVALID;
	}
	hwt_perf_attr_sideband(hwt_session_attr(s), hwt_session_config(s)->inherit);
	return 0;
}

static int open_stream(struct hwt_session *s, pid_t tid, int cpu)
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
		hwt_perf_explain(e, "dummy", hwt_session_attr(s), tid, cpu, err, sizeof(err));
		hwt_session_set_err(s, "%s", err);
		return (e == EACCES || e == EPERM) ? HWT_ERR_PERM : HWT_ERR_IO;
	}
	int r = hwt_perf_map(st, cfg->data_bytes, 0, 0, err, sizeof(err));
	if (r) {
		hwt_session_set_err(s, "dummy: %s", err);
		return r;
	}
	__u64 id = 0;
	if (ioctl(st->fd, PERF_EVENT_IOC_ID, &id) == 0)
		st->id = st->sb_id = id;
	return 0;
}

const struct hwt_unit_ops hwt_unit_dummy = {
    .name = "dummy",
    .probe = probe,
    .configure = configure,
    .open = open_stream,
    .enable = hwt_hw_enable,
    .disable = hwt_hw_disable,
};
