/* lib/unit/emu_exec.c - which programs started by exec() the emulated
 * units follow (emu/exec.c does the following): the session's
 * no_follow_exec and follow_exec, as plugin arguments.  QEMU splits
 * plugin arguments at ',', so a glob's ',', '%', '=' and bytes outside
 * printable ASCII are %-encoded (%2c); the plugin decodes them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit/unit_int.h"

char *hwt_emu_exec_args(const struct hwt_session_config *cfg)
{
	if (cfg->size < offsetof(struct hwt_session_config, follow_exec) + sizeof(cfg->follow_exec))
		return strdup("");
	if (cfg->no_follow_exec)
		return strdup(",nofollow=1");
	const char *g = cfg->follow_exec ? cfg->follow_exec : "";
	char *out = malloc(4 * strlen(g) + 16 * (strlen(g) + 1) + 1);
	if (!out)
		return NULL;
	size_t n = 0;
	out[0] = 0;
	while (*g) {
		size_t l = strcspn(g, "\n");
		if (l) {
			n += (size_t)sprintf(out + n, ",follow=");
			for (size_t i = 0; i < l; i++) {
				unsigned char c = (unsigned char)g[i];
				int plain =
				    c > 0x20 && c < 0x7f && c != ',' && c != '%' && c != '=';
				n += (size_t)(plain ? sprintf(out + n, "%c", c)
						    : sprintf(out + n, "%%%02x", c));
			}
		}
		g += l;
		if (*g == '\n')
			g++;
	}
	return out;
}
