/* lib/unit/terms.c - a unit's event terms, the text between the slashes
 * of "arm_spe/period=4k,jitter/" as perf writes it, taken one term at a
 * time by the emulated units' configure ops (emu_pt.c, emu_etm.c,
 * emu_spe.c, emu_pebs.c), with numbers read the way perf reads them.
 *
 * Lifecycle: hwt_terms_open copies the text (the caller's stays as it
 * is), hwt_terms_next splits off the next term ("name" or "name=value"),
 * hwt_terms_close frees the copy; name and value point into the copy
 * until then.  No state outside the struct.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "unit/unit_int.h"

int hwt_terms_open(struct hwt_terms *it, const char *terms)
{
	memset(it, 0, sizeof(*it));
	it->copy = strdup(terms ? terms : "");
	return it->copy ? 0 : HWT_ERR_NOMEM;
}

int hwt_terms_next(struct hwt_terms *it)
{
	char *t = strtok_r(it->started ? NULL : it->copy, ",", &it->save);
	it->started = 1;
	if (!t)
		return 0;
	char *eq = strchr(t, '=');
	if (eq)
		*eq = 0;
	it->name = t;
	it->value = eq ? eq + 1 : NULL;
	return 1;
}

void hwt_terms_close(struct hwt_terms *it)
{
	free(it->copy);
	it->copy = NULL;
}

int hwt_term_uint(const char *v, uint64_t max, uint64_t *out)
{
	if (!v)
		v = "1"; /* a bare term is a flag that is set */
	if (!*v || *v == '-')
		return -1;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 0);
	unsigned shift = 0;
	if (*end == 'k' || *end == 'K')
		shift = 10, end++;
	else if (*end == 'm' || *end == 'M')
		shift = 20, end++;
	else if (*end == 'g' || *end == 'G')
		shift = 30, end++;
	if (errno || *end || n > (max >> shift))
		return -1;
	*out = (uint64_t)n << shift;
	return 0;
}

int hwt_term_cache_model(const char *name)
{
	static const char *const names[] = {
	    "line_size", "l1_size", "l1_ways",	   "l1_lat",   "llc_size",  "llc_ways",
	    "llc_lat",	 "mem_lat", "tlb_entries", "tlb_ways", "page_size", "tlb_walk",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}
