/* lib/unit/intel_pt.c - the Intel PT unit through perf_event_open
 * (sysfs PMU "intel_pt").  Everything but the defaults and AUXTRACE_INFO
 * is the generic AUX unit of perf_aux.c.  Default terms follow perf: pt,
 * branch, tsc, mtc with mtc_period=3 and psb_period=3 where the PMU has
 * the term and the cap that allows it.  AUXTRACE_INFO carries perf's Intel
 * PT private words (hwt/perf_records.h enum hwt_intel_pt_priv) with the
 * time conversion read from the first stream's control page. */
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "hwt/error.h"
#include "hwt/perf_records.h"
#include "unit/unit_int.h"

static const struct hwt_hw_desc desc = {
    .unit = "intel_pt",
    .name = "intel_pt",
    .what = "Intel PT",
    .default_terms = "pt,branch,tsc,mtc,mtc_period=3,psb_period=3",
};

static int probe(struct hwt_unit_info *info)
{
	return hwt_hw_probe(&desc, info);
}

static int configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	return hwt_hw_configure(&desc, s, terms, err, errlen);
}

static uint64_t term_mask(const struct hwt_pmu *pmu, const char *name)
{
	const struct hwt_pmu_format *f = hwt_pmu_find_format(pmu, name);
	return f && f->word == 0 ? f->mask : 0;
}

/* TSC:CTC (ART) ratio from CPUID leaf 0x15 (SDM: EBX/EAX = TSC/ART),
 * as perf records it; 0/0 where unknown. */
static void tsc_ctc_ratio(uint64_t *n, uint64_t *d)
{
	*n = *d = 0;
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, dx;
	if (__get_cpuid_max(0, NULL) >= 0x15 && __get_cpuid(0x15, &a, &b, &c, &dx) && a && b) {
		*n = b;
		*d = a;
	}
#endif
}

int hwt_ipt_priv_filter(uint64_t *priv, size_t max, const char *f)
{
	/* the --filter text (length without the NUL, as perf), then the
	 * string NUL-terminated and zero-padded to 8 */
	size_t flen = f ? strlen(f) : 0;
	size_t words = flen ? (flen + 1 + 7) / 8 : 0;
	if (flen && HWT_IPT_FILTER_STR_LEN + 1 + words <= max) {
		priv[HWT_IPT_FILTER_STR_LEN] = flen;
		memset(&priv[HWT_IPT_FILTER_STR_LEN + 1], 0, words * 8);
		memcpy(&priv[HWT_IPT_FILTER_STR_LEN + 1], f, flen);
		return (int)(HWT_IPT_FILTER_STR_LEN + 1 + words);
	}
	priv[HWT_IPT_FILTER_STR_LEN] = 0;
	return HWT_IPT_FILTER_STR_LEN + 1;
}

static int auxtrace_info(struct hwt_session *s, uint64_t *priv, size_t max)
{
	const struct hwt_pmu *pmu = hwt_hw_pmu(s);
	if (!pmu || max < HWT_IPT_FILTER_STR_LEN + 1)
		return HWT_ERR_INVALID;
	memset(priv, 0, (HWT_IPT_FILTER_STR_LEN + 1) * sizeof(uint64_t));
	priv[HWT_IPT_PMU_TYPE] = pmu->type;
	struct hwt_stream **v;
	size_t n = hwt_session_streams(s, &v);
	if (n && v[0]->ring.ctl) {
		const struct perf_event_mmap_page *pg = v[0]->ring.ctl;
		priv[HWT_IPT_TIME_SHIFT] = pg->time_shift;
		priv[HWT_IPT_TIME_MULT] = pg->time_mult;
		priv[HWT_IPT_TIME_ZERO] = pg->time_zero;
		priv[HWT_IPT_CAP_USER_TIME_ZERO] = pg->cap_user_time_zero;
		priv[HWT_IPT_PER_CPU_MMAPS] = v[0]->cpu >= 0;
	}
	priv[HWT_IPT_TSC_BIT] = term_mask(pmu, "tsc");
	priv[HWT_IPT_NORETCOMP_BIT] = term_mask(pmu, "noretcomp");
	const struct perf_event_attr *sb = hwt_session_sb_attr(s);
	/* perf: 1 = sched_switch tracepoint, 2 = context_switch records */
	priv[HWT_IPT_HAVE_SCHED_SWITCH] = sb && sb->context_switch ? 2 : 0;
	priv[HWT_IPT_SNAPSHOT_MODE] = hwt_session_config(s)->snapshot ? 1 : 0;
	priv[HWT_IPT_MTC_BIT] = term_mask(pmu, "mtc");
	priv[HWT_IPT_MTC_FREQ_BITS] = term_mask(pmu, "mtc_period");
	tsc_ctc_ratio(&priv[HWT_IPT_TSC_CTC_N], &priv[HWT_IPT_TSC_CTC_D]);
	priv[HWT_IPT_CYC_BIT] = term_mask(pmu, "cyc");
	uint64_t ratio = 0;
	(void)hwt_pmu_get_cap(pmu, "max_nonturbo_ratio", &ratio);
	priv[HWT_IPT_MAX_NONTURBO_RATIO] = ratio;
	return hwt_ipt_priv_filter(priv, max, hwt_session_config(s)->filter);
}

const struct hwt_unit_ops hwt_unit_intel_pt = {
    .name = "intel_pt",
    .probe = probe,
    .configure = configure,
    .open = hwt_hw_open,
    .enable = hwt_hw_enable,
    .disable = hwt_hw_disable,
    .auxtrace_info = auxtrace_info,
    .close = hwt_hw_close,
};
