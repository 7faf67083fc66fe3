/* lib/unit/cs_etm.c - Arm CoreSight ETM through perf_event_open (sysfs PMU "cs_etm"); sink
 * selection (config2) comes from the user's terms. Everything after probe/configure is the generic
 * AUX unit of perf_aux.c: same ring consumer, same session, same sink as every other unit.  hwt
 * does not decode this trace format; it records it into perf.data for perf to decode. */
#include <stdio.h>

#include "unit/unit_int.h"

static const struct hwt_hw_desc desc = {
    .name = "cs_etm",
    .what = "CoreSight ETM",
    .default_terms = NULL,
};

static int probe(struct hwt_unit_info *info)
{
	int r = hwt_hw_probe(&desc, info);
	snprintf(info->name, sizeof(info->name), "cs_etm");
	return r;
}

static int configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	return hwt_hw_configure(&desc, s, terms, err, errlen);
}

const struct hwt_unit_ops hwt_unit_cs_etm = {
    .name = "cs_etm",
    .probe = probe,
    .configure = configure,
    .open = hwt_hw_open,
    .enable = hwt_hw_enable,
    .disable = hwt_hw_disable,
    .close = hwt_hw_close,
};
