/* tests/unit/t.h - the unit-test protocol of hwt (see tests/run.sh).
 *
 * Each test program prints one line per case: "PASS name" or
 * "FAIL name: why".  CHECK() records a failure with file:line and the
 * condition; a case passes when no CHECK in it failed.  main() returns
 * non-zero if any case failed.
 *
 *   static void t_foo(void) { CHECK(1 + 1 == 2); }
 *   int main(void) { RUN(t_foo); return t_done(); }
 */
#ifndef HWT_TESTS_T_H
#define HWT_TESTS_T_H

#include <stdio.h>
#include <stdarg.h>

static int t_case_failed, t_failed, t_passed;
static const char *t_case_name;

static inline void t_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	if (t_case_failed++)
		return; /* report the first failure of a case only */
	printf("FAIL %s: %s:%d: ", t_case_name, file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			t_fail(__FILE__, __LINE__, "%s", #cond);                                   \
	} while (0)
#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long t_a_ = (long long)(a), t_b_ = (long long)(b);                            \
		if (t_a_ != t_b_)                                                                  \
			t_fail(__FILE__, __LINE__, "%s == %s (%lld != %lld)", #a, #b, t_a_, t_b_); \
	} while (0)
#define CHECKF(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			t_fail(__FILE__, __LINE__, __VA_ARGS__);                                   \
	} while (0)

static inline void t_begin(const char *name)
{
	t_case_name = name;
	t_case_failed = 0;
}
static inline void t_end(void)
{
	if (t_case_failed) {
		t_failed++;
	} else {
		t_passed++;
		printf("PASS %s\n", t_case_name);
	}
	fflush(stdout);
}
#define RUN(fn)                                                                                    \
	do {                                                                                       \
		t_begin(#fn);                                                                      \
		fn();                                                                              \
		t_end();                                                                           \
	} while (0)
static inline int t_done(void)
{
	return t_failed ? 1 : 0;
}

#endif
