/* lib/unit/emu_spe.c - the emulated Arm SPE unit (arm_spe): an aarch64
 * Linux program run under qemu-aarch64 with hwt's aarch64 plugin in its SPE
 * mode (emu/aarch64/spe.c; plugin argument spe=1).
 *
 * Lifecycle and ownership as the emulated cs_etm unit, whose launch, poll
 * and close it shares (emu_a64.h): probe -> configure (perf's arm_spe
 * terms -> attr.config/config1/config2/sample_period as the kernel's
 * arm_spe_pmu format defines them, and the plugin's spe_* arguments) ->
 * launch -> poll -> close.  AUXTRACE_INFO: perf's arm_spe layout (PMU
 * type, per-CPU mmaps = 0: one AUX buffer per thread).  perf 6.1 needs the
 * time conversion (TIME_CONV) before the AUXTRACE_INFO: the recorder
 * writes it first for this unit (the emulated clock: 1 tick = 1 ns).
 * Terms: period=N (or interval=N; default 1024 operations), ts_enable
 * (default on), jitter, load_filter, store_filter, branch_filter,
 * min_latency=N, event_filter=MASK; pa_enable and pct_enable are accepted
 * and have no effect (user-mode emulation has no physical addresses); and
 * the cache model's options (emu/cache_model.h: l1_size, llc_size, mem_lat,
 * ...), passed to the plugin as they are.
 * Limits: aarch64 ELF programs only; no address filters; no Context
 * packets (perf takes each buffer's thread from its AUXTRACE record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"
#include "unit/emu_a64.h"
#include "unit/unit_int.h"

#define SPE_PMU_TYPE 10		/* attr.type of the emulated arm_spe event */
#define SPE_DEFAULT_PERIOD 1024 /* caps/min_interval of the emulated unit */

/* the kernel's arm_spe_pmu format (attr.config bits) */
#define OPT_TS (1ull << 0)
#define OPT_PA (1ull << 1)
#define OPT_PCT (1ull << 2)
#define OPT_JITTER (1ull << 16)
#define OPT_BRANCH (1ull << 32)
#define OPT_LOAD (1ull << 33)
#define OPT_STORE (1ull << 34)

static int probe(struct hwt_unit_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "arm_spe");
	info->pmu_type = SPE_PMU_TYPE;
	snprintf(info->formats, sizeof(info->formats),
		 "ts_enable=config:0 pa_enable=config:1 pct_enable=config:2 jitter=config:16 "
		 "branch_filter=config:32 load_filter=config:33 store_filter=config:34 "
		 "event_filter=config1:0-63 min_latency=config2:0-11");
	snprintf(info->caps, sizeof(info->caps), "min_interval=%d count_size=16 arch_inst=1",
		 SPE_DEFAULT_PERIOD);
	return hwt_emu_a64_probe(info);
}

static const struct {
	const char *name;
	uint64_t bit;
} flags[] = {
    {"ts_enable", OPT_TS},	 {"pa_enable", OPT_PA},		{"pct_enable", OPT_PCT},
    {"jitter", OPT_JITTER},	 {"branch_filter", OPT_BRANCH}, {"load_filter", OPT_LOAD},
    {"store_filter", OPT_STORE},
};

/* the cache model's plugin arguments (emu/cache_model.h) */
static int configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	char model[512] = "";
	size_t mlen = 0;
	uint64_t cfg = OPT_TS, evfilt = 0, minlat = 0, period = SPE_DEFAULT_PERIOD;
	struct hwt_terms it;
	if (hwt_terms_open(&it, terms))
		return HWT_ERR_NOMEM;
	while (hwt_terms_next(&it)) {
		const char *t = it.name, *v = it.value;
		uint64_t n = 0;
		int bad = 0, known = 0;
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
			if (!strcmp(t, flags[i].name)) {
				known = 1;
				bad = hwt_term_uint(v, 1, &n);
				cfg = n ? cfg | flags[i].bit : cfg & ~flags[i].bit;
			}
		if (known) {
		} else if (!strcmp(t, "period") || !strcmp(t, "interval")) {
			known = 1;
			bad = hwt_term_uint(v, UINT32_MAX, &period) || period == 0;
		} else if (!strcmp(t, "min_latency")) {
			known = 1;
			bad = hwt_term_uint(v, 0xfff, &minlat);
		} else if (!strcmp(t, "event_filter")) {
			known = 1;
			bad = hwt_term_uint(v, UINT64_MAX, &evfilt);
		} else if (hwt_term_cache_model(t)) {
			known = 1;
			int k =
			    snprintf(model + mlen, sizeof(model) - mlen, ",%s=%s", t, v ? v : "");
			bad = !v || !*v || k < 0 || (size_t)k >= sizeof(model) - mlen;
			if (!bad)
				mlen += (size_t)k;
		}
		if (!known || bad) {
			snprintf(err, errlen,
				 known ? "arm_spe (emulated): bad value for term '%s'"
				       : "arm_spe (emulated): unknown term '%s' (known: period, "
					 "ts_enable, jitter, load_filter, store_filter, "
					 "branch_filter, min_latency, event_filter, pa_enable, "
					 "pct_enable, and the cache model's " HWT_CACHE_MODEL_TERMS
					 ")",
				 t);
			hwt_terms_close(&it);
			return HWT_ERR_INVALID;
		}
	}
	hwt_terms_close(&it);
	struct emu_a64_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	p->config = cfg;
	hwt_emu_link_init(&p->ln, 0);
	snprintf(p->what, sizeof(p->what), "arm_spe");
	snprintf(p->extra, sizeof(p->extra),
		 "spe=1,spe_period=%llu,spe_jitter=%d,spe_ld=%d,spe_st=%d,spe_br=%d,"
		 "spe_minlat=%llu,spe_evfilt=%llu,spe_ts=%d%s",
		 (unsigned long long)period, !!(cfg & OPT_JITTER), !!(cfg & OPT_LOAD),
		 !!(cfg & OPT_STORE), !!(cfg & OPT_BRANCH), (unsigned long long)minlat,
		 (unsigned long long)(evfilt & 0xffffffffu), !!(cfg & OPT_TS), model);
	hwt_session_set_unit_priv(s, p);
	struct perf_event_attr *a = hwt_session_attr(s);
	hwt_perf_attr_intel_pt(a, SPE_PMU_TYPE, cfg);
	a->config1 = evfilt;
	a->config2 = minlat;
	a->sample_period = period;
	a->aux_watermark = 0;
	/* per-thread buffers: no CPU in the samples (as the emulated cs_etm) */
	a->sample_type &= ~(uint64_t)PERF_SAMPLE_CPU;
	return 0;
}

/* perf's arm_spe AUXTRACE_INFO: PMU type, per-CPU mmaps (0). */
static int auxtrace_info(struct hwt_session *s, uint64_t *priv, size_t max)
{
	(void)s;
	if (max < 2)
		return HWT_ERR_INVALID;
	priv[0] = SPE_PMU_TYPE;
	priv[1] = 0;
	return 2;
}

const struct hwt_unit_ops hwt_unit_emu_spe = {
    .name = "arm_spe",
    .emulated = 1,
    .probe = probe,
    .configure = configure,
    .launch = hwt_emu_a64_launch,
    .poll = hwt_emu_a64_poll,
    .auxtrace_info = auxtrace_info,
    .close = hwt_emu_a64_close,
    .auxtrace_type = HWT_PERF_AUXTRACE_ARM_SPE,
};
