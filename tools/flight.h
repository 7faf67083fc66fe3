/* tools/flight.h - the flight recorder's report (flight.c): per thread, the
 * last N taken branches and the call stack reconstructed from the trace
 * ("what did my program do just before it crashed").
 *
 * The module is a consumer of decoded branches: any decoder feeds it
 * branch by branch and gap by gap, per thread, in each thread's order;
 * locations are symbolized when fed (through the caller's locate
 * callback), so the report needs no image afterwards.  Memory: N branches
 * and the open calls per thread. */
#ifndef HWT_TOOLS_FLIGHT_H
#define HWT_TOOLS_FLIGHT_H

#include <stdint.h>

#include "out/out.h"

#define FLIGHT_DEFAULT_LAST 32

/* Symbolize ip (for the thread's image img, opaque here) into l: l->sym
 * (NULL if unknown) and l->off, l->src ("file:line" or NULL).  Texts must
 * outlive the flight object. */
typedef void (*flight_locate_fn)(void *arg, const void *img, uint64_t ip, struct hwt_out_loc *l);

/* A fatal signal that ended a thread (sig 0: none known). */
struct flight_fatal {
	int32_t pid, tid;
	int sig;
};

struct flight;
struct flight *flight_alloc(unsigned last_n, flight_locate_fn locate, void *arg);
void flight_free(struct flight *f);

/* A taken branch of thread tid (kind: enum hwt_branch_kind of out/out.h). */
void flight_branch(struct flight *f, uint32_t pid, uint32_t tid, uint64_t from, uint64_t to,
		   int kind, const void *img);
/* A gap in thread tid's trace (decode error at offset, ip): the stack may
 * be wrong from there on; it is kept and the report says so. */
void flight_gap(struct flight *f, uint32_t tid, uint64_t offset, uint64_t ip, int err);

/* Print the report of thread tid (tid < 0: of every thread, the fatal one
 * last): the fatal signal line when fatal names the thread, its last
 * branches (oldest first, as "hwt script --branches --srcline --no-time"
 * prints them) and its reconstructed call stack (innermost first).
 * Returns the number of threads reported. */
int flight_report(struct flight *f, struct hwt_outbuf *o, long tid,
		  const struct flight_fatal *fatal);

/* The fatal signals a recording names (hwt's HWT_FATAL feature): up to
 * max entries into v; returns the count (0 if none or unreadable). */
int flight_read_fatal(const char *path, struct flight_fatal *v, int max);
/* The text of a signal: "SIGSEGV (Segmentation fault)". */
const char *flight_signame(int sig, char *buf, unsigned len);

/* Decode a recording with the engine of "hwt script" (flight_run.c) and
 * print the report to o: of thread tid, of every thread (FLIGHT_ALL), or
 * of the thread whose fatal signal the recording names, else of every
 * thread (FLIGHT_FATAL).  Returns sp_run's status (2: no report). */
#define FLIGHT_ALL (-1L)
#define FLIGHT_FATAL (-2L)
int flight_run(const char *path, const char *cmd, unsigned last_n, long tid, int srcline,
	       struct hwt_outbuf *o);

#endif
