/* tools/report_views.h - file outputs of "hwt report" (report_views.c). */
#ifndef HWT_TOOLS_REPORT_VIEWS_H
#define HWT_TOOLS_REPORT_VIEWS_H

enum { RV_FLAME, RV_CHART, RV_LCOV, RV_DRCOV };

/* Decode input and write the kind's output to output ("-" or NULL:
 * stdout), with a progress line on a terminal unless progress is 0.  Exit
 * status as sp_run's (2: cannot read or write). */
int report_views(const char *input, int kind, const char *output, int progress);

#endif
