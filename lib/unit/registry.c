/* lib/unit/registry.c - the table of trace units.
 *
 * Order matters for hwt_unit_find(): hardware units first, so "intel_pt"
 * finds the perf_event_open unit and hwt_unit_find_emulated("intel_pt")
 * the QEMU-based one (lib/unit/emu_pt.c).  Read-only tables; no state.
 */
#include <string.h>

#include "unit/unit_int.h"

static const struct hwt_unit_ops *const units_all[] = {
    &hwt_unit_intel_pt,	     &hwt_unit_intel_bts,      &hwt_unit_arm_spe, &hwt_unit_cs_etm,
    &hwt_unit_emu_pt,	     &hwt_unit_emu_bts,	       &hwt_unit_emu_etm, &hwt_unit_emu_spe,
    &hwt_unit_emu_mem_loads, &hwt_unit_emu_mem_stores, &hwt_unit_dummy,
};

const struct hwt_unit_ops *const *hwt_unit_all(size_t *count)
{
	*count = sizeof(units_all) / sizeof(units_all[0]);
	return units_all;
}

const struct hwt_unit_ops *hwt_unit_find(const char *name)
{
	size_t n;
	const struct hwt_unit_ops *const *v = hwt_unit_all(&n);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i]->name, name))
			return v[i];
	return NULL;
}

const struct hwt_unit_ops *hwt_unit_find_emulated(const char *name)
{
	size_t n;
	const struct hwt_unit_ops *const *v = hwt_unit_all(&n);
	for (size_t i = 0; i < n; i++)
		if (v[i]->emulated && !strcmp(v[i]->name, name))
			return v[i];
	return NULL;
}
