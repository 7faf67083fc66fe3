/* lib/unit/unit_int.h - internals shared by the trace-unit backends and the
 * session: the perf_event_open/mmap/AUX helpers (perf_aux.c) and the
 * generic sysfs-described hardware unit that intel_pt, intel_bts, arm_spe
 * and cs_etm are instances of.  Not installed. */
#ifndef HWT_LIB_UNIT_INT_H
#define HWT_LIB_UNIT_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#include "hwt/unit.h"

/* The backends' ops tables (registry.c lists them; intel_bts, arm_spe and
 * cs_etm are descriptors in aux_units.c). */
extern const struct hwt_unit_ops hwt_unit_intel_pt;
extern const struct hwt_unit_ops hwt_unit_intel_bts;
extern const struct hwt_unit_ops hwt_unit_arm_spe;
extern const struct hwt_unit_ops hwt_unit_cs_etm;
extern const struct hwt_unit_ops hwt_unit_dummy;
/* The emulated cs_etm unit (emu_etm.c: qemu-aarch64 + hwt-etm-plugin.so). */
extern const struct hwt_unit_ops hwt_unit_emu_etm;
/* The emulated arm_spe unit (emu_spe.c: the same plugin in its SPE mode). */
extern const struct hwt_unit_ops hwt_unit_emu_spe;

/* The emulated PEBS units (emu_pebs.c: mem-loads, mem-stores), run by
 * the x86-64 plugin with other arguments: emu_pt.c's probe, launch, poll
 * and close on a private state hwt_emu_x86_configure sets up with the
 * plugin arguments of the unit ("fmt=pebs,..."). */
extern const struct hwt_unit_ops hwt_unit_emu_mem_loads;
extern const struct hwt_unit_ops hwt_unit_emu_mem_stores;
int hwt_emu_x86_configure(struct hwt_session *s, const char *plugin_args);
int hwt_emu_x86_probe(struct hwt_unit_info *info);
int hwt_emu_x86_launch(struct hwt_session *s, char *const argv[], pid_t *pid);
int hwt_emu_x86_poll(struct hwt_session *s, int timeout_ms);
void hwt_emu_x86_close(struct hwt_session *s);

/* Find a program like execvp (a name with '/' as is, else along $PATH,
 * /usr/local/bin:/usr/bin:/bin without it): 0 with its path in out, or -1.
 * emu_pt.c; also used by `hwt record` (tools/cmd_record.c). */
int hwt_find_program(const char *name, char *out, size_t outlen);

/* Find the QEMU plugin file `name` of an emulated unit (plugin_path.c:
 * $HWT_PLUGIN_DIR, else next to the running program, its ../lib/hwt, the
 * compile-time HWT_PLUGINDIR): 0 with its path in out, or -1.
 * hwt_unit_plugin_places() says where it looked, for error messages. */
int hwt_unit_find_plugin(const char *name, char *out, size_t outlen);
const char *hwt_unit_plugin_places(void);

/* A one-line error for the session (what failed, on what, what to do). */
void hwt_session_set_err(struct hwt_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *hwt_session_err(const struct hwt_session *s);

/* perf_event_open(2); returns the fd or -1 with errno. */
int hwt_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags);
/* Explain a failed perf_event_open / mmap (errno e) in one line. */
void hwt_perf_explain(int e, const char *what, const struct perf_event_attr *attr, pid_t pid,
		      int cpu, char *err, size_t errlen);
/* kernel.perf_event_paranoid, or 99 if unreadable. */
int hwt_perf_paranoid(void);
/* Map st->fd: control page + data ring (data_bytes) and, if aux_bytes,
 * the AUX ring (read-only in overwrite mode); set up st->ring.  Returns 0
 * or a negative error with err filled. */
int hwt_perf_map(struct hwt_stream *st, uint64_t data_bytes, uint64_t aux_bytes, int overwrite,
		 char *err, size_t errlen);
void hwt_perf_unmap(struct hwt_stream *st);
/* Add a stream for (tid, cpu) to s, open the session's attr on it and map
 * it: the data ring and, if aux (a trace unit), the AUX ring of the
 * session's size and mode.  0 and *out, or a negative error with the
 * session's message set (what: the unit, for messages). */
int hwt_perf_open_stream(struct hwt_session *s, const char *what, pid_t tid, int cpu, int aux,
			 struct hwt_stream **out);

/* The generic sysfs-described AUX unit. */
struct hwt_hw_desc {
	const char *unit;	   /* unit (event) name: "intel_pt", "arm_spe", ... */
	const char *name;	   /* PMU name in sysfs */
	const char *what;	   /* "Intel PT", "Arm SPE", ... for messages */
	const char *default_terms; /* applied when the PMU has the term */
};
int hwt_hw_probe(const struct hwt_hw_desc *d, struct hwt_unit_info *info);
int hwt_hw_configure(const struct hwt_hw_desc *d, struct hwt_session *s, const char *terms,
		     char *err, size_t errlen);
int hwt_hw_open(struct hwt_session *s, pid_t tid, int cpu);
int hwt_hw_enable(struct hwt_session *s);
int hwt_hw_disable(struct hwt_session *s);
void hwt_hw_close(struct hwt_session *s);
/* The PMU read at configure time (NULL for dummy / emulated). */
const struct hwt_pmu *hwt_hw_pmu(struct hwt_session *s);

/* AUXTRACE_INFO for Intel PT (intel_pt.c, also the emulated unit): put the
 * --filter text f (may be NULL) at HWT_IPT_FILTER_STR_LEN of priv (max
 * words, at least HWT_IPT_FILTER_STR_LEN + 1); returns the words used. */
int hwt_ipt_priv_filter(uint64_t *priv, size_t max, const char *f);

/* emu_exec.c: the plugin arguments (",nofollow=1", ",follow=GLOB"...,
 * %-encoded) that tell the emulated units which exec()ed programs to
 * follow; malloc()ed ("" for all), NULL when out of memory. */
char *hwt_emu_exec_args(const struct hwt_session_config *cfg);

/* terms.c: a unit's event terms ("period=4k,jitter"), one at a time:
 *   struct hwt_terms it;
 *   if (hwt_terms_open(&it, terms)) return HWT_ERR_NOMEM;
 *   while (hwt_terms_next(&it)) ... it.name, it.value (NULL: no '=') ...
 *   hwt_terms_close(&it);
 * hwt_term_uint reads a value as perf does (decimal, 0x hex, 0 octal, a
 * k/m/g suffix; NULL, a bare term, is 1): 0 and *out, or -1 when it is not
 * a number or above max.  hwt_term_cache_model: 1 for the terms of the
 * emulated cache model (emu/cache_model.h), HWT_CACHE_MODEL_TERMS. */
struct hwt_terms {
	char *copy, *save;
	const char *name, *value;
	int started;
};
int hwt_terms_open(struct hwt_terms *it, const char *terms);
int hwt_terms_next(struct hwt_terms *it);
void hwt_terms_close(struct hwt_terms *it);
int hwt_term_uint(const char *v, uint64_t max, uint64_t *out);
int hwt_term_cache_model(const char *name);
#define HWT_CACHE_MODEL_TERMS                                                                      \
	"line_size, l1_size, l1_ways, l1_lat, llc_size, llc_ways, llc_lat, mem_lat, tlb_entries, " \
	"tlb_ways, page_size, tlb_walk"

#endif
