/* lib/pt/cpu.c - which Intel PT errata workarounds apply to which cpu.
 *
 * Design: hwt_pt_cpu_parse() reads "F/M" or "F/M/S" (decimal, as ptdump's
 * --cpu); hwt_pt_cpu_errata() maps family/model to the errata named by
 * Intel's specification-update ids.  The model lists come from the
 * specification updates (BDM = Broadwell, SKD/SKL = Skylake client and its
 * Kaby/Coffee/Comet Lake successors, SKZ = Skylake server and its Xeon
 * successors, APL = Goldmont) and agree with the libipt-ptt corpus, whose
 * errata tests list the cpus on which each workaround must apply.  A cpu
 * that is not in the table (including 0/0 and any non-Intel vendor) gives
 * HWT_ERR_BAD_CPU with all errata cleared, as libipt does.  Pure functions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/pt_config.h"

/* Errata groups: each cpu gets the union of the groups it is listed in. */
enum {
	E_BDM64 = 1 << 0,
	E_BDM70 = 1 << 1,
	E_SKD007 = 1 << 2,
	E_SKD010 = 1 << 3,
	E_SKD022 = 1 << 4,
	E_SKL014 = 1 << 5,
	E_SKL168 = 1 << 6,
	E_SKZ84 = 1 << 7,
	E_APL11 = 1 << 8,
	E_APL12 = 1 << 9,
};

struct cpu_errata {
	uint16_t family;
	uint8_t model;
	uint16_t errata;
};

#define SKL_CLIENT (E_BDM70 | E_SKD007 | E_SKD010 | E_SKD022 | E_SKL014 | E_SKL168)

static const struct cpu_errata table[] = {
    /* Broadwell */
    {6, 0x3d, E_BDM64 | E_BDM70},
    {6, 0x47, E_BDM64 | E_BDM70},
    {6, 0x4f, E_BDM64 | E_BDM70},
    {6, 0x56, E_BDM64 | E_BDM70},
    /* Skylake / Kaby Lake / Coffee Lake / Comet Lake client */
    {6, 0x4e, SKL_CLIENT},
    {6, 0x5e, SKL_CLIENT},
    {6, 0x8e, SKL_CLIENT},
    {6, 0x9e, SKL_CLIENT},
    {6, 0xa5, SKL_CLIENT},
    {6, 0xa6, SKL_CLIENT},
    /* Skylake / Cascade Lake / Ice Lake server */
    {6, 0x55, E_BDM70 | E_SKD022 | E_SKL014 | E_SKZ84},
    {6, 0x6a, E_BDM70 | E_SKD022 | E_SKL014 | E_SKZ84},
    {6, 0x6c, E_BDM70 | E_SKD022 | E_SKL014 | E_SKZ84},
    /* Sapphire / Emerald / Granite Rapids, Xeon Phi-like 19/1 */
    {6, 0x8f, E_BDM70 | E_SKD022 | E_SKZ84},
    {6, 0xad, E_BDM70 | E_SKD022 | E_SKZ84},
    {6, 0xae, E_BDM70 | E_SKD022 | E_SKZ84},
    {6, 0xcf, E_BDM70 | E_SKD022 | E_SKZ84},
    {19, 0x01, E_BDM70 | E_SKD022 | E_SKZ84},
    /* Cannon Lake, Ice Lake, Tiger Lake client */
    {6, 0x66, E_BDM70 | E_SKD022 | E_SKL014},
    {6, 0x7d, E_BDM70 | E_SKD022 | E_SKL014},
    {6, 0x7e, E_BDM70 | E_SKD022 | E_SKL014},
    {6, 0x8c, E_BDM70 | E_SKD022 | E_SKL014},
    {6, 0x8d, E_BDM70 | E_SKD022 | E_SKL014},
    {6, 0xa7, E_BDM70 | E_SKD022 | E_SKL014},
    {6, 0xa8, E_BDM70 | E_SKD022 | E_SKL014},
    /* Alder Lake, Raptor Lake, Meteor Lake, Arrow Lake, Lunar Lake, ... */
    {6, 0x97, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0x9a, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xbf, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xb7, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xb5, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xaa, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xac, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xba, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xcc, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xbd, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xc5, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xc6, E_BDM70 | E_SKD022 | E_APL11},
    {6, 0xd5, E_BDM70 | E_SKD022 | E_APL11},
    {18, 0x01, E_BDM70 | E_SKD022 | E_APL11},
    {18, 0x03, E_BDM70 | E_SKD022 | E_APL11},
    /* Goldmont (Apollo Lake, Denverton) */
    {6, 0x5c, E_APL11 | E_APL12},
    {6, 0x5f, E_APL11 | E_APL12},
    /* Goldmont Plus, Tremont, Gracemont / Crestmont Atoms */
    {6, 0x7a, E_APL11},
    {6, 0x86, E_APL11},
    {6, 0x96, E_APL11},
    {6, 0x9c, E_APL11},
    {6, 0xb6, E_APL11},
    {6, 0xaf, E_APL11},
    {6, 0xdd, E_APL11},
};

int hwt_pt_cpu_errata(struct hwt_pt_errata *errata, const struct hwt_cpu *cpu)
{
	if (!errata || !cpu)
		return HWT_ERR_INVALID;
	memset(errata, 0, sizeof(*errata));
	if (cpu->vendor != HWT_CPU_INTEL)
		return HWT_ERR_BAD_CPU;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].family != cpu->family || table[i].model != cpu->model)
			continue;
		unsigned e = table[i].errata;
		errata->bdm64 = !!(e & E_BDM64);
		errata->bdm70 = !!(e & E_BDM70);
		errata->skd007 = !!(e & E_SKD007);
		errata->skd010 = !!(e & E_SKD010);
		errata->skd022 = !!(e & E_SKD022);
		errata->skl014 = !!(e & E_SKL014);
		errata->skl168 = !!(e & E_SKL168);
		errata->skz84 = !!(e & E_SKZ84);
		errata->apl11 = !!(e & E_APL11);
		errata->apl12 = !!(e & E_APL12);
		return 0;
	}
	return HWT_ERR_BAD_CPU;
}

/* One decimal field; *end gets the first character after it. */
static int field(const char *s, const char **end, unsigned long max, unsigned long *out)
{
	char *e;

	if (*s < '0' || *s > '9')
		return HWT_ERR_INVALID;
	errno = 0;
	*out = strtoul(s, &e, 10);
	if (errno || *out > max)
		return HWT_ERR_INVALID;
	*end = e;
	return 0;
}

int hwt_pt_cpu_parse(struct hwt_cpu *cpu, const char *text)
{
	unsigned long f, m, st = 0;
	const char *s = text;

	if (!cpu || !text)
		return HWT_ERR_INVALID;
	if (field(s, &s, 0xffff, &f) < 0 || *s++ != '/')
		return HWT_ERR_INVALID;
	if (field(s, &s, 0xff, &m) < 0)
		return HWT_ERR_INVALID;
	if (*s == '/') {
		s++;
		if (field(s, &s, 0xff, &st) < 0)
			return HWT_ERR_INVALID;
	}
	if (*s)
		return HWT_ERR_INVALID;
	memset(cpu, 0, sizeof(*cpu));
	cpu->vendor = HWT_CPU_INTEL;
	cpu->family = (uint16_t)f;
	cpu->model = (uint8_t)m;
	cpu->stepping = (uint8_t)st;
	return 0;
}
