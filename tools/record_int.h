/* tools/record_int.h - the perf.data sink of "hwt record" (record_sink.c). */
#ifndef HWT_TOOLS_RECORD_INT_H
#define HWT_TOOLS_RECORD_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "hwt/perf_data.h"
#include "hwt/unit.h"

struct hwt_record {
	struct hwt_perf_writer *w;
	struct hwt_session *s;
	char path[4096];
	int err;		/* first writer error */
	uint64_t records;	/* sideband records copied */
	uint64_t bytes_written; /* file size after finish */
	uint64_t round_mark;	/* records at the last FINISHED_ROUND */
	/* emulated units: per stream index, the newest sample time of its
	 * records (the clock behind each AUXTRACE record's reference) */
	uint64_t *last_time;
	size_t nlast;
	/* the programs run on this kernel (not emulated): name the vdso's
	 * build-id in the file and, unless no_buildid_cache, save the vdso
	 * into the build-id cache */
	int vdso, no_buildid_cache;
	/* output "-": the writer writes to out_fd, a dup of the standard
	 * output (pipe mode on a pipe), closed by finish/abort; standard
	 * output itself then goes to standard error, so that the recorded
	 * program's output does not mix with the data */
	int to_stdout, out_fd;
};

/* The session sink that writes into rec (valid once begin() ran). */
void hwt_record_sink(struct hwt_record *rec, struct hwt_sink *sink);
/* Rename an existing path to path.old and create path (0600); "-" is the
 * standard output (see to_stdout). */
int hwt_record_open_output(struct hwt_record *rec, const char *path, int argc, char **argv,
			   char *err, size_t errlen);
/* After the session started: attrs, PMU mappings, AUXTRACE_INFO, ID_INDEX;
 * for attach_pid > 0 the synthesized COMM and MMAP2 of the process. */
int hwt_record_begin(struct hwt_record *rec, struct hwt_session *s, const char *event,
		     pid_t attach_pid, char *err, size_t errlen);
/* TIME_CONV, features, header; closes the file (also frees rec's state). */
int hwt_record_finish(struct hwt_record *rec, struct hwt_session *s, char *err, size_t errlen);
/* A FINISHED_ROUND after a pump that copied records (perf sorts by time
 * within rounds). */
int hwt_record_round(struct hwt_record *rec);
/* Setup failed: remove the new file (and free rec's state). */
void hwt_record_abort(struct hwt_record *rec);

/* record_flight.c: the fatal signal that ended the program (from the
 * session, else from the wait status of child): into *out and into the
 * file; 0 when there is none.  Before hwt_record_finish. */
struct flight_fatal;
int flight_record_fatal(struct hwt_record *rec, struct hwt_session *s, pid_t child, int wstatus,
			struct flight_fatal *out);
/* SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT */
int flight_is_crash(int sig);
/* The event with a PSB period that fits the flight recorder's rings of
 * size bytes (intel_pt without a psb_period term; else event itself). */
const char *flight_event(const char *event, uint64_t size, char *buf, size_t len);
/* The flight recorder's report of the finished file path on stderr. */
void flight_record_report(const char *path, unsigned last_n, const struct flight_fatal *fat);

#endif
