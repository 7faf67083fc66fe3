/* tools/progress.h - the progress line of decoding commands (progress.c):
 * one line on stderr, redrawn in place at most 5 times a second, with
 * bytes done / total, rate and time left; only when stderr is a terminal
 * (nothing at all on pipes and files); erased when done. */
#ifndef HWT_TOOLS_PROGRESS_H
#define HWT_TOOLS_PROGRESS_H

#include <stdint.h>

struct progress;
/* NULL (no line: not a terminal, or disabled with on == 0) or a line for
 * command cmd over the file path (its size is the total). */
struct progress *progress_start(const char *cmd, const char *path, int on);
/* done bytes of the file are behind us (cheap: checks the clock every
 * call, draws at most every 200 ms). */
void progress_update(struct progress *p, uint64_t done);
/* Erase the line and free p (NULL: nothing). */
void progress_stop(struct progress *p);

/* The sp_consumer progress callback (arg: a struct progress *). */
void progress_cb(void *arg, uint64_t done, uint64_t total);

#endif
