/* lib/perf/attrs.c - the perf_event_attr values perf 6.1 records for an
 * intel_pt session, so that files hwt writes look like perf's own to
 * perf's intel_pt decoder (which matches the trace event by attr.type
 * against the AUXTRACE_INFO PMU type and reads tsc/noretcomp/mtc/cyc from
 * its config).  Pure functions, no state. */
#include <string.h>

#include "hwt/perf_data.h"

#define SAMPLE_ID_BITS                                                                             \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |                   \
	 PERF_SAMPLE_IDENTIFIER)

/* What the trace event and the sideband event share: a user-only event,
 * enabled on exec, whose records carry the sample id. */
static void attr_common(struct perf_event_attr *attr, uint32_t type, uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	attr->sample_period = 1;
	attr->sample_type = SAMPLE_ID_BITS;
	attr->read_format = PERF_FORMAT_ID;
	attr->disabled = 1;
	attr->enable_on_exec = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_guest = 1;
	attr->sample_id_all = 1;
}

void hwt_perf_attr_intel_pt(struct perf_event_attr *attr, uint32_t pmu_type, uint64_t config)
{
	attr_common(attr, pmu_type, config);
}

void hwt_perf_attr_sideband(struct perf_event_attr *attr, int per_cpu)
{
	attr_common(attr, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
	attr->mmap = 1;
	attr->comm = 1;
	attr->task = 1;
	attr->mmap2 = 1;
	attr->comm_exec = 1;
	if (per_cpu) {
		attr->inherit = 1;
		attr->context_switch = 1;
	}
}
