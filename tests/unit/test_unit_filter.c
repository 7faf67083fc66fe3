/* Unit tests: lib/unit/filter.c - perf --filter syntax to the kernel's
 * address filter string.  Oracle for symbol resolution: the running
 * test program itself; a function's file offset is computed from its
 * runtime address and /proc/self/maps (the kernel's own view of the
 * mapping), independently of the ELF parsing under test. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/unit.h"
#include "t.h"

void hwt_filter_target(void);
__attribute__((noinline)) void hwt_filter_target(void)
{
	__asm__ volatile("" ::: "memory");
}

/* File offset and path of the mapping holding addr. */
static int map_of(uintptr_t addr, unsigned long long *off, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];
	int found = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, o;
		int n = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*u %n", &lo, &hi, &o, &n) < 3)
			continue;
		if (addr >= lo && addr < hi) {
			*off = addr - lo + o;
			snprintf(path, len, "%s", line + n);
			path[strcspn(path, "\n")] = 0;
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

static void t_symbol_in_program(void)
{
	char exe[PATH_MAX], mpath[PATH_MAX], out[2 * PATH_MAX], err[256] = "", want[2 * PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n > 0 ? n : 0] = 0;
	unsigned long long off = 0;
	CHECK_EQ(map_of((uintptr_t)&hwt_filter_target, &off, mpath, sizeof(mpath)), 0);
	CHECK(!strcmp(mpath, exe));
	/* explicit size, @FILE */
	char spec[PATH_MAX + 64];
	snprintf(spec, sizeof(spec), "filter hwt_filter_target/0x40 @%s", exe);
	CHECKF(hwt_filter_translate(spec, NULL, out, sizeof(out), err, sizeof(err)) == 0, "%s",
	       err);
	snprintf(want, sizeof(want), "filter %#llx/0x40@%s", off, exe);
	CHECKF(!strcmp(out, want), "got '%s' want '%s'", out, want);
	/* default file (the traced command), default size = symbol size */
	CHECKF(hwt_filter_translate("start hwt_filter_target, tracestop hwt_filter_target", exe,
				    out, sizeof(out), err, sizeof(err)) == 0,
	       "%s", err);
	char w1[64];
	snprintf(w1, sizeof(w1), "start %#llx/", off);
	CHECKF(!strncmp(out, w1, strlen(w1)), "got '%s'", out);
	CHECKF(strstr(out, ",stop ") != NULL, "got '%s'", out);
	/* a filter with the symbol's own size: nonzero */
	CHECK_EQ(hwt_filter_translate("filter hwt_filter_target", exe, out, sizeof(out), err,
				      sizeof(err)),
		 0);
	CHECKF(!strstr(out, "/0@") && !strstr(out, "/0x0@"), "got '%s'", out);
}

static void t_kernel_and_errors(void)
{
	char out[512], err[256];
	CHECK_EQ(hwt_filter_translate("filter 0xffffffff81000000/0x1000", NULL, out, sizeof(out),
				      err, sizeof(err)),
		 0);
	CHECK(!strcmp(out, "filter 0xffffffff81000000/0x1000"));
	CHECK(hwt_filter_translate("jump main", "/bin/true", out, sizeof(out), err, sizeof(err)) <
	      0);
	CHECK(strstr(err, "unknown action"));
	CHECK(hwt_filter_translate("filter no_such_symbol_xyz/8", "/bin/true", out, sizeof(out),
				   err, sizeof(err)) < 0);
	CHECK(strstr(err, "no_such_symbol_xyz"));
	CHECK(hwt_filter_translate("filter 0x1000", NULL, out, sizeof(out), err, sizeof(err)) < 0);
	CHECK(strstr(err, "size"));
	CHECK(hwt_filter_translate("filter main/8 @/nonexistent/file", NULL, out, sizeof(out), err,
				   sizeof(err)) < 0);
	CHECK(hwt_filter_translate("  ,  ", NULL, out, sizeof(out), err, sizeof(err)) < 0);
}

int main(void)
{
	RUN(t_symbol_in_program);
	RUN(t_kernel_and_errors);
	return t_done();
}
