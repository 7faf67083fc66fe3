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
#include <errno.h>
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
static const char *const model_terms[] = {
    "line_size", "l1_size", "l1_ways",	   "l1_lat",   "llc_size",  "llc_ways",
    "llc_lat",	 "mem_lat", "tlb_entries", "tlb_ways", "page_size", "tlb_walk",
};

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

static int number(const char *v, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 0);
	if (!*v || errno)
		return -1;
	if (*end == 'k' || *end == 'K')
		n <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		n <<= 20, end++;
	if (*end)
		return -1;
	*out = n;
	return 0;
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
	unsigned long long ldlat = 30, period = 1000;
	char model[1024] = "";
	size_t mlen = 0;
	char *copy = strdup(terms ? terms : "");
	if (!copy)
		return HWT_ERR_NOMEM;
	char *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		const char *v = eq ? eq + 1 : "";
		if (eq)
			*eq = 0;
		unsigned long long n = 0;
		int ok = eq && !number(v, &n);
		if (!strcmp(t, "ldlat") && !stores) {
			if (!ok || n > 65535)
				goto bad;
			ldlat = n;
		} else if (!strcmp(t, "period")) {
			if (!ok || !n)
				goto bad;
			period = n;
		} else {
			int known = 0;
			for (size_t i = 0; i < sizeof(model_terms) / sizeof(model_terms[0]); i++)
				known |= !strcmp(t, model_terms[i]);
			if (!known) {
				snprintf(
				    err, errlen,
				    "%s (emulated): unknown term '%s' (known: %speriod, and the "
				    "cache model's line_size, l1_size, l1_ways, l1_lat, "
				    "llc_size, llc_ways, llc_lat, mem_lat, tlb_entries, "
				    "tlb_ways, page_size, tlb_walk)",
				    ev, t, stores ? "" : "ldlat, ");
				free(copy);
				return HWT_ERR_INVALID;
			}
			if (!ok || n > 0xffffffffull)
				goto bad;
			int k = snprintf(model + mlen, sizeof(model) - mlen, ",%s=%llu", t, n);
			if (k < 0 || (size_t)k >= sizeof(model) - mlen)
				goto bad;
			mlen += (size_t)k;
		}
		continue;
	bad:
		snprintf(err, errlen, "%s (emulated): bad value '%s' for term '%s'", ev, v, t);
		free(copy);
		return HWT_ERR_INVALID;
	}
	free(copy);
	char args[1400];
	snprintf(args, sizeof(args), "fmt=pebs,pebs=%s,ldlat=%llu,period=%llu%s",
		 stores ? "stores" : "loads", ldlat, period, model);
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
