/* Unit tests: lib/core/error.c */
#include <string.h>

#include "hwt/error.h"
#include "t.h"

static void t_errstr_known(void)
{
	CHECK(strcmp(hwt_errstr(HWT_ERR_BAD_PACKET), "unknown packet") == 0);
	CHECK(strcmp(hwt_errstr(-HWT_ERR_NOMAP), "no memory mapped at this address") == 0);
	CHECK(strcmp(hwt_errstr(HWT_OK), "success") == 0);
}

static void t_errstr_every_code_distinct(void)
{
	/* every code from -1 to -69 that has a text has its own text */
	for (int a = -1; a >= -69; a--) {
		const char *sa = hwt_errstr(a);
		CHECK(sa != NULL);
		if (strcmp(sa, "unknown error") == 0)
			continue;
		for (int b = a - 1; b >= -69; b--)
			CHECKF(strcmp(sa, hwt_errstr(b)) != 0, "codes %d and %d share \"%s\"", a, b, sa);
	}
	CHECK(strcmp(hwt_errstr(-1000), "unknown error") == 0);
}

int main(void)
{
	RUN(t_errstr_known);
	RUN(t_errstr_every_code_distinct);
	return t_done();
}
