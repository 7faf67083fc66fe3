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
 * session, same sink as every other unit.  hwt does not decode these trace
 * formats; it records them into perf.data for perf to decode.  Read-only
 * tables; no state.  intel_pt.c is the one hardware unit with more than a
 * descriptor (its AUXTRACE_INFO). */
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

HWT_AUX_UNIT(intel_bts, AUX_BTS);
HWT_AUX_UNIT(arm_spe, AUX_SPE);
HWT_AUX_UNIT(cs_etm, AUX_ETM);
