/* tools/cmd_list.c - "hwt list": every trace unit hwt knows (hardware
 * through perf_event_open, the emulated Intel PT unit, dummy), whether it
 * is usable here, and what sysfs says about it (type, nr_addr_filters,
 * format terms, caps).  Read-only: probes only.  $HWT_SYSFS_ROOT replaces
 * /sys/bus/event_source/devices (tests use a fake tree). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "hwt/unit.h"

static const char usage_text[] =
    "usage: hwt list [-v]\n"
    "List the trace units: hardware (intel_pt, intel_bts, arm_spe, cs_etm via\n"
    "perf_event_open), the emulated Intel PT unit (QEMU), and dummy (sideband only).\n"
    "  -v, --verbose   also print format terms and caps of present units\n";

int hwt_cmd_list(int argc, char **argv)
{
	int verbose = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = 1;
		} else {
			cli_err("list", "unknown argument '%s'", argv[i]);
			return cli_usage_error(usage_text);
		}
	}
	size_t n;
	const struct hwt_unit_ops *const *all = hwt_unit_all(&n);
	int emu_listed = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hwt_unit_ops *u = all[i];
		struct hwt_unit_info info;
		memset(&info, 0, sizeof(info));
		snprintf(info.name, sizeof(info.name), "%s", u->name);
		int r = u->probe ? u->probe(&info) : -1;
		const char *kind = u->emulated ? " (emulated)" : "";
		emu_listed |= u->emulated;
		if (r == 0 && info.present) {
			printf("%s%s: present", info.name, kind);
			if (!u->emulated && strcmp(u->name, "dummy"))
				printf(" (type %u, nr_addr_filters %u)", info.pmu_type,
				       info.nr_addr_filters);
			printf("\n");
			if (info.formats[0] && (verbose || !u->emulated))
				printf("    formats: %s\n", info.formats);
			if (info.caps[0] && (verbose || !u->emulated))
				printf("    caps: %s\n", info.caps);
		} else {
			printf("%s%s: %s\n", info.name, kind,
			       info.why[0] ? info.why : "not present");
		}
	}
	if (!emu_listed)
		printf(
		    "intel_pt (emulated): not built into this hwt (lib/unit/emu_pt.c missing)\n");
	return 0;
}
