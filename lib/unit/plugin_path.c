/* lib/unit/plugin_path.c - where the emulated units' QEMU plugins are.
 *
 * A plugin (hwt-pt-plugin.so, ...) is looked for, in this order:
 *   1. $HWT_PLUGIN_DIR, if set (and then only there: an explicit choice);
 *   2. the folder of the running program (the build tree: build/hwt next to
 *      build/hwt-pt-plugin.so);
 *   3. ../lib/hwt relative to that folder (an installed tree moved as a
 *      whole, or installed under DESTDIR and run from there);
 *   4. HWT_PLUGINDIR, the install folder given at compile time (make sets
 *      it to $(PLUGINDIR), e.g. /usr/local/lib/hwt).
 * Stateless: reads the environment and /proc/self/exe on every call. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit/unit_int.h"

static int try_dir(const char *dir, const char *name, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/%s", dir, name);
	return n > 0 && (size_t)n < outlen && !access(out, R_OK) ? 0 : -1;
}

int hwt_unit_find_plugin(const char *name, char *out, size_t outlen)
{
	const char *env = getenv("HWT_PLUGIN_DIR");
	if (env && *env)
		return try_dir(env, name, out, outlen);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (!try_dir(exe, name, out, outlen))
				return 0;
			char rel[PATH_MAX];
			if ((size_t)snprintf(rel, sizeof(rel), "%s/../lib/hwt", exe) <
				sizeof(rel) &&
			    !try_dir(rel, name, out, outlen))
				return 0;
		}
	}
#ifdef HWT_PLUGINDIR
	if (!try_dir(HWT_PLUGINDIR, name, out, outlen))
		return 0;
#endif
	return -1;
}

const char *hwt_unit_plugin_places(void)
{
	if (getenv("HWT_PLUGIN_DIR") && *getenv("HWT_PLUGIN_DIR"))
		return "in $HWT_PLUGIN_DIR (fix it, or unset it to search next to the hwt binary "
		       "and in the install folder)";
#ifdef HWT_PLUGINDIR
	return "next to the hwt binary, in its ../lib/hwt, or in " HWT_PLUGINDIR
	       " (set HWT_PLUGIN_DIR, or build and install it: make; make install)";
#else
	return "next to the hwt binary or in its ../lib/hwt (set HWT_PLUGIN_DIR, or build "
	       "it: make)";
#endif
}
