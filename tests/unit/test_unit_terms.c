/* Unit tests: lib/unit/terms.c - the event terms of the emulated units'
 * configure ops, split one at a time, and their numbers read as perf
 * reads them.  Oracle: tables written by hand from perf's term syntax
 * ("name" or "name=value", comma separated; numbers in C notation with
 * an optional k/m/g multiplier). */
#include <stdint.h>
#include <string.h>

#include "hwt/error.h"
#include "t.h"
#include "unit/unit_int.h"

static void t_split(void)
{
	static const struct {
		const char *terms;
		const char *want; /* name=value or name (no '=') per term, ';' after each */
	} cases[] = {
	    {NULL, ""},
	    {"", ""},
	    {",,", ""},
	    {"cyc", "cyc;"},
	    {"cyc=1,mtc_period=3", "cyc=1;mtc_period=3;"},
	    {"a=,b", "a=;b;"},
	    {",period=4k,,jitter,", "period=4k;jitter;"},
	    {"x=y=z", "x=y=z;"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256] = "", keep[64] = "";
		if (cases[i].terms)
			snprintf(keep, sizeof(keep), "%s", cases[i].terms);
		struct hwt_terms it;
		CHECK_EQ(hwt_terms_open(&it, cases[i].terms), 0);
		size_t n = 0;
		while (hwt_terms_next(&it))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s%s;", it.name,
					      it.value ? "=" : "", it.value ? it.value : "");
		CHECKF(hwt_terms_next(&it) == 0, "case %zu: a term after the end", i);
		hwt_terms_close(&it);
		CHECKF(!strcmp(buf, cases[i].want), "case %zu: got '%s', want '%s'", i, buf,
		       cases[i].want);
		if (cases[i].terms)
			CHECKF(!strcmp(keep, cases[i].terms), "case %zu: the caller's text changed",
			       i);
	}
}

static void t_uint(void)
{
	static const struct {
		const char *v;
		uint64_t max;
		int ok;
		uint64_t want;
	} cases[] = {
	    {NULL, 1, 1, 1},
	    {"0", 1, 1, 0},
	    {"1", 1, 1, 1},
	    {"2", 1, 0, 0},
	    {"15", 15, 1, 15},
	    {"16", 15, 0, 0},
	    {"0x10", 100, 1, 16},
	    {"010", 100, 1, 8},
	    {"4k", 1u << 20, 1, 4096},
	    {"4K", 4096, 1, 4096},
	    {"4k", 4095, 0, 0},
	    {"2m", UINT64_MAX, 1, 2u << 20},
	    {"1g", UINT64_MAX, 1, 1u << 30},
	    {"", 10, 0, 0},
	    {"-1", UINT64_MAX, 0, 0},
	    {"12x", 100, 0, 0},
	    {"4kk", UINT64_MAX, 0, 0},
	    {"99999999999999999999", UINT64_MAX, 0, 0},
	    {"18446744073709551615", UINT64_MAX, 1, UINT64_MAX},
	    {"17179869184g", UINT64_MAX, 0, 0}, /* 2^34 g overflows 64 bits */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t got = 12345;
		int r = hwt_term_uint(cases[i].v, cases[i].max, &got);
		CHECKF((r == 0) == cases[i].ok, "'%s' max %llu: returned %d",
		       cases[i].v ? cases[i].v : "(bare)", (unsigned long long)cases[i].max, r);
		if (cases[i].ok)
			CHECKF(got == cases[i].want, "'%s': got %llu, want %llu",
			       cases[i].v ? cases[i].v : "(bare)", (unsigned long long)got,
			       (unsigned long long)cases[i].want);
		else
			CHECKF(got == 12345, "'%s': refused but wrote %llu", cases[i].v,
			       (unsigned long long)got);
	}
}

static void t_cache_model(void)
{
	CHECK(hwt_term_cache_model("l1_size"));
	CHECK(hwt_term_cache_model("tlb_walk"));
	CHECK(!hwt_term_cache_model("l1"));
	CHECK(!hwt_term_cache_model("period"));
	CHECK(!hwt_term_cache_model(""));
	/* every name the messages list is one the model takes */
	char names[] = HWT_CACHE_MODEL_TERMS;
	int n = 0;
	for (char *s = NULL, *t = strtok_r(names, ", ", &s); t; t = strtok_r(NULL, ", ", &s), n++)
		CHECKF(hwt_term_cache_model(t), "'%s' is listed but not taken", t);
	CHECK_EQ(n, 12);
}

int main(void)
{
	RUN(t_split);
	RUN(t_uint);
	RUN(t_cache_model);
	return t_done();
}
