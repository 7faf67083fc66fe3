/* tools/record_flight.c - "hwt record --flight-recorder": what the
 * recorder adds around the recording (cmd_record.c calls these): the fatal
 * signal that ended the program, written into the file (hwt's HWT_FATAL
 * feature: every recording whose program a signal killed says which
 * thread, when the unit knows it, and which signal), and the report
 * printed at once on stderr when the signal is a crash (flight.c).
 *
 * Which thread: the emulated unit learns it from QEMU (emu_pt.c); a
 * hardware unit only has the program's wait status, so the thread is
 * unknown (-1) and the report shows every thread's end.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flight.h"
#include "hwt/perf_records.h"
#include "record_int.h"

int flight_record_fatal(struct hwt_record *rec, struct hwt_session *s, pid_t child, int wstatus,
			struct flight_fatal *out)
{
	memset(out, 0, sizeof(*out));
	pid_t pid, tid;
	int sig;
	int killed = wstatus >= 0 && WIFSIGNALED(wstatus);
	if (hwt_session_fatal(s, &pid, &tid, &sig) && killed && WTERMSIG(wstatus) == sig) {
		out->pid = pid;
		out->tid = tid;
		out->sig = sig;
	} else if (killed && child > 0) {
		out->pid = child;
		out->tid = -1;
		out->sig = WTERMSIG(wstatus);
	} else {
		return 0;
	}
	char text[128];
	int n = snprintf(text, sizeof(text), "fatal pid=%d tid=%d signal=%d\n", (int)out->pid,
			 (int)out->tid, out->sig);
	return hwt_perf_writer_add_feature(rec->w, HWT_FEAT_HWT_FATAL, text, (size_t)n);
}

int flight_is_crash(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

void flight_record_report(const char *path, unsigned last_n, const struct flight_fatal *fat)
{
	char sn[96];
	fflush(stdout);
	if (fat->tid > 0)
		fprintf(stderr,
			"hwt record: the flight recorder's report (again: hwt script -i %s --last "
			"%u --tid %d):\n",
			path, last_n, (int)fat->tid);
	else
		fprintf(stderr,
			"hwt record: pid %d died of %s; which thread is not known here: every "
			"thread's report follows (again: hwt script -i %s --last %u):\n",
			(int)fat->pid, flight_signame(fat->sig, sn, sizeof(sn)), path, last_n);
	struct hwt_outbuf o;
	if (hwt_outbuf_init(&o, STDERR_FILENO, 1u << 16))
		return;
	(void)flight_run(path, "record", last_n, fat->tid > 0 ? (long)fat->tid : FLIGHT_ALL, 1, &o);
	(void)hwt_outbuf_fini(&o);
}

const char *flight_event(const char *event, uint64_t size, char *buf, size_t len)
{
	size_t nl = strcspn(event, "/");
	if (nl != 8 || strncmp(event, "intel_pt", 8) || strstr(event, "psb_period"))
		return event;
	/* a PSB (where decoding can start) at least every size/4 bytes:
	 * every 2^(n+11) bytes (Intel SDM: IA32_RTIT_CTL.PSBFreq) */
	unsigned n = 0;
	while (n < 15 && (2048ull << (n + 1)) <= size / 4)
		n++;
	if (!event[nl]) {
		snprintf(buf, len, "intel_pt/psb_period=%u/u", n);
	} else {
		const char *terms = event + nl + 1, *end = strchr(terms, '/');
		if (!end)
			return event;
		snprintf(buf, len, "intel_pt/%.*s%spsb_period=%u%s", (int)(end - terms), terms,
			 end > terms ? "," : "", n, end);
	}
	return buf;
}
