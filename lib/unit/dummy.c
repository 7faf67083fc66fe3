/* lib/unit/dummy.c - the "dummy" unit: sideband only (MMAP2, COMM,
 * FORK/EXIT, context switches) through a software dummy event with a data
 * ring and no AUX ring.  It needs no trace hardware, so it is the part of
 * recording that runs on every machine, and it exercises the same
 * perf_event_open / mmap / ring / session path as the AUX units. */
#include <stdio.h>

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
	struct hwt_stream *st;
	int r = hwt_perf_open_stream(s, "dummy", tid, cpu, 0, &st);
	if (!r)
		st->sb_id = st->id;
	return r;
}

const struct hwt_unit_ops hwt_unit_dummy = {
    .name = "dummy",
    .probe = probe,
    .configure = configure,
    .open = open_stream,
    .enable = hwt_hw_enable,
    .disable = hwt_hw_disable,
};
