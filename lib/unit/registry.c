/* lib/unit/registry.c - the table of trace units.
 *
 * Order matters for hwt_unit_find(): hardware units first, so "intel_pt"
 * finds the perf_event_open unit and hwt_unit_find_emulated("intel_pt")
 * the QEMU-based one (lib/unit/emu_pt.c, helper "emu").  The emulated
 * unit is referenced weakly so that the library links while it is being
 * written; once lib/unit/emu_pt.c defines hwt_unit_emu_pt it is listed.
 * Read-only tables; no state.
 */
#include <string.h>

#include "unit/unit_int.h"

/* Strong reference once lib/unit/emu_pt.c exists (so that the static
 * library's member is linked in); weak before, so the tree links while it
 * is being written.  (An incremental build made before emu_pt.c appeared
 * needs registry.o rebuilt.) */
#if defined(__has_include)
#if __has_include("emu_pt.c")
#define HWT_HAVE_EMU_PT 1
#endif
#endif
#ifndef HWT_HAVE_EMU_PT
extern const struct hwt_unit_ops hwt_unit_emu_pt __attribute__((weak));
#endif

static const struct hwt_unit_ops *const units_hw[] = {
    &hwt_unit_intel_pt, &hwt_unit_intel_bts, &hwt_unit_arm_spe, &hwt_unit_cs_etm, &hwt_unit_dummy,
};
static const struct hwt_unit_ops *const units_all[] = {
    &hwt_unit_intel_pt, &hwt_unit_intel_bts, &hwt_unit_arm_spe,
    &hwt_unit_cs_etm,	&hwt_unit_emu_pt,    &hwt_unit_dummy,
};

const struct hwt_unit_ops *const *hwt_unit_all(size_t *count)
{
#ifdef HWT_HAVE_EMU_PT
	if (1) {
#else
	if (&hwt_unit_emu_pt) {
#endif
		*count = sizeof(units_all) / sizeof(units_all[0]);
		return units_all;
	}
	*count = sizeof(units_hw) / sizeof(units_hw[0]);
	return units_hw;
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
