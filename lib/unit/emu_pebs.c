/* lib/unit/emu_pebs.c - the emulated Intel PEBS units: perf's mem-loads
 * and mem-stores events, recorded by the x86-64 QEMU plugin with fmt=pebs
 * (emu/pebs.c: a cache/TLB model per thread, one PERF_RECORD_SAMPLE every
 * `period` counted accesses, in the stream's data ring; no AUX data).
 *
 * configure: terms ldlat=N (mem-loads: loads slower than N cycles count;
 * perf's default 30), period=N (perf record -c; default 1000) and the
 * cache model's options (l1_size=32K, llc_size=8M, mem_lat=200, ...: see
 * emu/cache_model.h), checked here and passed to the plugin.  The attr is
 * what perf record writes for "-e cpu/mem-loads,ldlat=30/P -d -W" on an
 * Intel core: type PERF_TYPE_RAW, config 0x1cd (MEM_TRANS_RETIRED
 * .LOAD_LATENCY, config1 = ldlat) or 0x82d0 (MEM_INST_RETIRED.ALL_STORES),
 * precise_ip 3, sample_period, sample_type IDENTIFIER|IP|TID|TIME|ADDR|ID|
 * CPU|PERIOD|WEIGHT|DATA_SRC, sample_id_all.  Everything else (launch,
 * streams, poll, close) is the emulated PT unit's (emu_pt.c).
 * No AUXTRACE_INFO: perf and hwt read the samples as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "unit/unit_int.h"

#define PEBS_SAMPLE_TYPE                                                                           \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |                \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)
#define CFG_MEM_LOADS 0x1cdull	 /* event 0xcd umask 0x01 */
#define CFG_MEM_STORES 0x82d0ull /* event 0xd0 umask 0x82 */

/* the cache model's plugin arguments (emu/cache_model.h) */
static int probe_common(struct hwt_unit_info *info, const char *name)
{
	int r = hwt_emu_x86_probe(info);
	snprintf(info->name, sizeof(info->name), "%s", name);
	info->pmu_type = PERF_TYPE_RAW;
	info->nr_addr_filters = 0;
	snprintf(info->formats, sizeof(info->formats), "%s",
		 strcmp(name, "mem-loads") ? "period" : "ldlat=config1:0-15 period");
	snprintf(info->caps, sizeof(info->caps), "cache_model=1");
	return r;
}

static int probe_loads(struct hwt_unit_info *info)
{
	return probe_common(info, "mem-loads");
}

static int probe_stores(struct hwt_unit_info *info)
{
	return probe_common(info, "mem-stores");
}

static int configure_common(struct hwt_session *s, const char *terms, int stores, char *err,
			    size_t errlen)
{
	const char *ev = stores ? "mem-stores" : "mem-loads";
	if (hwt_session_config(s)->snapshot) {
		snprintf(err, errlen,
			 "%s (emulated): samples have no snapshot mode (drop -S / "
			 "--flight-recorder)",
			 ev);
		return HWT_ERR_INVALID;
	}
	uint64_t ldlat = 30, period = 1000;
	char model[1024] = "";
	size_t mlen = 0;
	struct hwt_terms it;
	if (hwt_terms_open(&it, terms))
		return HWT_ERR_NOMEM;
	while (hwt_terms_next(&it)) {
		const char *t = it.name;
		uint64_t n = 0;
		int ok = it.value && !hwt_term_uint(it.value, UINT64_MAX, &n);
		if (!strcmp(t, "ldlat") && !stores) {
			if (!ok || n > 65535)
				goto bad;
			ldlat = n;
		} else if (!strcmp(t, "period")) {
			if (!ok || !n)
				goto bad;
			period = n;
		} else {
			if (!hwt_term_cache_model(t)) {
				snprintf(
				    err, errlen,
				    "%s (emulated): unknown term '%s' (known: %speriod, and the "
				    "cache model's " HWT_CACHE_MODEL_TERMS ")",
				    ev, t, stores ? "" : "ldlat, ");
				hwt_terms_close(&it);
				return HWT_ERR_INVALID;
			}
			if (!ok || n > 0xffffffffull)
				goto bad;
			int k = snprintf(model + mlen, sizeof(model) - mlen, ",%s=%llu", t,
					 (unsigned long long)n);
			if (k < 0 || (size_t)k >= sizeof(model) - mlen)
				goto bad;
			mlen += (size_t)k;
		}
		continue;
	bad:
		snprintf(err, errlen, "%s (emulated): bad value '%s' for term '%s'", ev,
			 it.value ? it.value : "", t);
		hwt_terms_close(&it);
		return HWT_ERR_INVALID;
	}
	hwt_terms_close(&it);
	char args[1400];
	snprintf(args, sizeof(args), "fmt=pebs,pebs=%s,ldlat=%llu,period=%llu%s",
		 stores ? "stores" : "loads", (unsigned long long)ldlat, (unsigned long long)period,
		 model);
	int r = hwt_emu_x86_configure(s, args);
	if (r)
		return r;
	struct perf_event_attr *a = hwt_session_attr(s);
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_RAW;
	a->config = stores ? CFG_MEM_STORES : CFG_MEM_LOADS;
	a->config1 = stores ? 0 : ldlat;
	a->sample_period = period;
	a->sample_type = PEBS_SAMPLE_TYPE;
	a->read_format = PERF_FORMAT_ID;
	a->disabled = 1;
	a->enable_on_exec = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
	a->precise_ip = 3;
	a->sample_id_all = 1;
	return 0;
}

static int configure_loads(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	return configure_common(s, terms, 0, err, errlen);
}

static int configure_stores(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	return configure_common(s, terms, 1, err, errlen);
}

const struct hwt_unit_ops hwt_unit_emu_mem_loads = {
    .name = "mem-loads",
    .emulated = 1,
    .probe = probe_loads,
    .configure = configure_loads,
    .launch = hwt_emu_x86_launch,
    .poll = hwt_emu_x86_poll,
    .close = hwt_emu_x86_close,
};

const struct hwt_unit_ops hwt_unit_emu_mem_stores = {
    .name = "mem-stores",
    .emulated = 1,
    .probe = probe_stores,
    .configure = configure_stores,
    .launch = hwt_emu_x86_launch,
    .poll = hwt_emu_x86_poll,
    .close = hwt_emu_x86_close,
};
