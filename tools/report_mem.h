/* tools/report_mem.h - "hwt report --mem" (report_mem.c). */
#ifndef HWT_TOOLS_REPORT_MEM_H
#define HWT_TOOLS_REPORT_MEM_H

#include <stddef.h>

/* Decode input's samples and print the memory report (top N rows per
 * table, 0: all).  Exit status as sp_run's; 2 also when there are no
 * samples. */
int report_mem(const char *input, size_t top, int progress);

#endif
