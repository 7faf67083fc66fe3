/* tests/unit/t_util.h - small helpers shared by the test programs (the
 * unit tests in tests/unit and the oracle programs in tests/e2e/progs,
 * which include it by relative path).  Header-only, standard C only.
 *
 * t_slurp(path, &len): the whole file in a malloc'ed buffer with a NUL
 * after its len bytes (so text files can be used as strings); NULL when
 * the file cannot be opened or read.  The caller frees it. */
#ifndef HWT_TESTS_T_UTIL_H
#define HWT_TESTS_T_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline uint8_t *t_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	size_t n = sz > 0 ? (size_t)sz : 0;
	uint8_t *p = malloc(n + 1);
	if (p && fread(p, 1, n, f) != n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	if (p)
		p[n] = 0;
	*len = n;
	return p;
}

#endif
