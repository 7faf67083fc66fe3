/* lib/unit/aux_units.c - the hardware AUX units that are nothing but the
 * generic sysfs-described unit of perf_aux.c, one descriptor each:
 *  - intel_bts: Intel BTS (branch trace store), sysfs PMU "intel_bts"; no
 *    format terms.
 *  - arm_spe: the Arm Statistical Profiling Extension, sysfs PMU
 *    "arm_spe_0" (the first SPE instance); default terms ts_enable and
 *    pa_enable when present.
 *  - cs_etm: Arm CoreSight ETM, sysfs PMU "cs_etm"; sink selection
 *    (config2) comes from the user's terms.
 * Everything after probe/configure is perf_aux.c: same ring consumer, same
 * session, same sink as every other unit.  intel_bts adds perf's
 * intel_bts AUXTRACE_INFO and whole-record snapshots (hwt decodes BTS:
 * lib/bts); arm_spe and cs_etm are recorded for perf to decode.  Read-only
 * tables; no state.  intel_pt.c is the other hardware unit with its own
 * AUXTRACE_INFO. */
#include <string.h>

#include "hwt/bts.h"
#include "hwt/error.h"
#include "hwt/perf_records.h"
#include "unit/unit_int.h"

enum { AUX_BTS, AUX_SPE, AUX_ETM };

static const struct hwt_hw_desc descs[] = {
    [AUX_BTS] = {.unit = "intel_bts", .name = "intel_bts", .what = "Intel BTS"},
    [AUX_SPE] = {.unit = "arm_spe",
		 .name = "arm_spe_0",
		 .what = "Arm SPE",
		 .default_terms = "ts_enable,pa_enable"},
    [AUX_ETM] = {.unit = "cs_etm", .name = "cs_etm", .what = "CoreSight ETM"},
};

/* The ops table's probe/configure take no descriptor, so each unit gets a
 * pair of one-line trampolines into perf_aux.c with its own entry. */
#define HWT_AUX_UNIT(id, ix)                                                                       \
	static int id##_probe(struct hwt_unit_info *info)                                          \
	{                                                                                          \
		return hwt_hw_probe(&descs[ix], info);                                             \
	}                                                                                          \
	static int id##_configure(struct hwt_session *s, const char *terms, char *err,             \
				  size_t errlen)                                                   \
	{                                                                                          \
		return hwt_hw_configure(&descs[ix], s, terms, err, errlen);                        \
	}                                                                                          \
	const struct hwt_unit_ops hwt_unit_##id = {                                                \
	    .name = #id,                                                                           \
	    .probe = id##_probe,                                                                   \
	    .configure = id##_configure,                                                           \
	    .open = hwt_hw_open,                                                                   \
	    .enable = hwt_hw_enable,                                                               \
	    .disable = hwt_hw_disable,                                                             \
	    .close = hwt_hw_close,                                                                 \
	}

/* intel_bts: perf's intel_bts AUXTRACE_INFO (PMU type, the time
 * conversion the kernel publishes in the control page, snapshot mode), and
 * snapshots cut to whole 24-byte records. */
static int intel_bts_probe(struct hwt_unit_info *info)
{
	return hwt_hw_probe(&descs[AUX_BTS], info);
}
static int intel_bts_configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	return hwt_hw_configure(&descs[AUX_BTS], s, terms, err, errlen);
}
static int intel_bts_auxtrace_info(struct hwt_session *s, uint64_t *priv, size_t max)
{
	const struct hwt_pmu *pmu = hwt_hw_pmu(s);
	if (!pmu || max < HWT_IBTS_PRIV_MAX)
		return HWT_ERR_INVALID;
	memset(priv, 0, HWT_IBTS_PRIV_MAX * sizeof(uint64_t));
	priv[HWT_IBTS_PMU_TYPE] = pmu->type;
	priv[HWT_IBTS_TIME_MULT] = 1; /* perf 6.1 divides by it */
	struct hwt_stream **v;
	if (hwt_session_streams(s, &v) && v[0]->ring.ctl && v[0]->ring.ctl->time_mult) {
		const struct perf_event_mmap_page *pg = v[0]->ring.ctl;
		priv[HWT_IBTS_TIME_SHIFT] = pg->time_shift;
		priv[HWT_IBTS_TIME_MULT] = pg->time_mult;
		priv[HWT_IBTS_TIME_ZERO] = pg->time_zero;
		priv[HWT_IBTS_CAP_USER_TIME_ZERO] = pg->cap_user_time_zero;
	}
	priv[HWT_IBTS_SNAPSHOT_MODE] = hwt_session_config(s)->snapshot ? 1 : 0;
	return HWT_IBTS_PRIV_MAX;
}
const struct hwt_unit_ops hwt_unit_intel_bts = {
    .name = "intel_bts",
    .probe = intel_bts_probe,
    .configure = intel_bts_configure,
    .open = hwt_hw_open,
    .enable = hwt_hw_enable,
    .disable = hwt_hw_disable,
    .auxtrace_info = intel_bts_auxtrace_info,
    .close = hwt_hw_close,
    .aux_align = HWT_BTS_RECORD_SIZE,
    .auxtrace_type = HWT_PERF_AUXTRACE_INTEL_BTS,
};
HWT_AUX_UNIT(arm_spe, AUX_SPE);
HWT_AUX_UNIT(cs_etm, AUX_ETM);
