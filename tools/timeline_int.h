/* tools/timeline_int.h - the timeline writer of "hwt timeline"
 * (cmd_timeline.c), also used by "hwt view". */
#ifndef HWT_TOOLS_TIMELINE_INT_H
#define HWT_TOOLS_TIMELINE_INT_H

#include "out/timeline.h"

/* Decode input and write its timeline to fd (what: its name for
 * messages).  Exit status as sp_run's (2: cannot read or write). */
int timeline_write(const char *input, int fd, const char *what,
		   const struct hwt_timeline_config *cfg, int progress);

#endif
