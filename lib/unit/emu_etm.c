/* lib/unit/emu_etm.c - the emulated Arm CoreSight ETM unit (cs_etm): an
 * aarch64 Linux program run under qemu-aarch64 with hwt's ETMv4 plugin
 * (emu/aarch64/, built as hwt-etm-plugin.so).
 *
 * Lifecycle and ownership as the emulated Intel PT unit (emu_pt.c): probe
 * (qemu-aarch64 and the plugin found?) -> configure (perf cs_etm terms ->
 * attr.config as perf sets it, plugin arguments) -> launch (temp dir +
 * announce pipe; exec qemu-aarch64 -L ROOT -plugin ... PROG) -> poll
 * (stream files announced by the plugin become session streams) -> close.
 * ROOT, the aarch64 sysroot (libraries, the dynamic loader), comes from
 * $HWT_SYSROOT or $QEMU_LD_PREFIX; programs named without '/' are looked
 * up in ROOT/usr/bin and ROOT/bin first.  AUXTRACE_INFO: the cs_etm layout
 * of perf's metadata version 1 (header, then per CPU the ETMv4 block with
 * the ID registers of a Cortex-A57, trace ID 0x10 + 2 * cpu).
 * Terms: timestamp (Timestamp packets), raw (unformatted ETMv4 bytes,
 * AUX records flagged PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW, as ETE/TRBE
 * systems write), sinkid/contextid accepted and ignored; cycacc is refused
 * (not emulated).  Programs the traced one starts with exec() are traced
 * too (emu/exec.c; the session's no_follow_exec / follow_exec become the
 * plugin's nofollow= / follow= arguments, as for the emulated PT unit).
 * Limits: aarch64 ELF programs only; no address filters.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"
#include "unit/emu_a64.h"
#include "unit/unit_int.h"

#define ETM_PMU_TYPE 9 /* attr.type of the emulated cs_etm event */
#define ETM_NCPU 1     /* CPUs in the metadata (every thread runs on CPU 0) */

/* perf's cs_etm format (attr.config bits) */
#define OPT_CYCACC (1ull << 12)
#define OPT_CTXTID (1ull << 14)
#define OPT_TS (1ull << 28)
#define OPT_RETSTK (1ull << 29)
/* TRCCONFIGR bits */
#define CFGR_CYCACC (1u << 4)
#define CFGR_CTXTID (1u << 6)
#define CFGR_TS (1u << 11)
#define CFGR_RETSTK (1u << 12)
/* ID registers as a Cortex-A57 (Juno) reports them: ETMv4.0, 64-bit
 * addresses, 32-bit context IDs, 8-bit VMIDs, 64-bit timestamps, no
 * speculation trace, branch broadcast / return stack / cycle counting
 * implemented */
#define ETM_TRCIDR0 0x28000ea1u
#define ETM_TRCIDR1 0x4100f403u
#define ETM_TRCIDR2 0x00000488u
#define ETM_TRCIDR8 0x0u
#define ETM_TRCAUTHSTATUS 0xccu
#define ETM_TRACEID(cpu) (0x10u + 2u * (unsigned)(cpu))

static int plugin_default(char *out, size_t outlen)
{
	char exe[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(out, outlen, "%s/hwt-etm-plugin.so", exe);
	return access(out, R_OK) ? -1 : 0;
}

static const char *sysroot(void)
{
	const char *r = getenv("HWT_SYSROOT");
	if (!r || !*r)
		r = getenv("QEMU_LD_PREFIX");
	return r && *r ? r : NULL;
}

static int probe(struct hwt_unit_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "cs_etm");
	info->pmu_type = ETM_PMU_TYPE;
	snprintf(info->formats, sizeof(info->formats),
		 "cycacc=config:12 contextid=config:14 timestamp=config:28 retstack=config:29 "
		 "sinkid=config2:0-31 raw=(hwt)");
	return hwt_emu_a64_probe(info);
}

int hwt_emu_a64_probe(struct hwt_unit_info *info)
{
	info->emulated = 1;
	char p[PATH_MAX];
	if (hwt_find_program("qemu-aarch64", p, sizeof(p))) {
		snprintf(info->why, sizeof(info->why),
			 "qemu-aarch64 not found in PATH (install it: apt install qemu-user)");
		return HWT_ERR_NOT_PRESENT;
	}
	if (plugin_default(p, sizeof(p))) {
		snprintf(info->why, sizeof(info->why),
			 "hwt-etm-plugin.so not found next to the hwt binary (build it: make)");
		return HWT_ERR_NOT_PRESENT;
	}
	info->present = 1;
	return 0;
}

static int configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	uint64_t cfg = 0;
	int raw = 0;
	struct hwt_terms it;
	if (hwt_terms_open(&it, terms))
		return HWT_ERR_NOMEM;
	while (hwt_terms_next(&it)) {
		const char *t = it.name;
		uint64_t n = 0;
		int bad = 0, known = 1;
		if (!strcmp(t, "timestamp")) {
			bad = hwt_term_uint(it.value, 1, &n);
			cfg = n ? cfg | OPT_TS : cfg & ~OPT_TS;
		} else if (!strcmp(t, "raw")) {
			bad = hwt_term_uint(it.value, 1, &n);
			raw = (int)n;
		} else if (!strcmp(t, "contextid") || !strcmp(t, "sinkid") ||
			   !strcmp(t, "retstack")) {
			bad = hwt_term_uint(it.value, UINT32_MAX, &n);
		} else if (!strcmp(t, "cycacc")) {
			snprintf(err, errlen,
				 "cs_etm (emulated): cycle-accurate tracing (cycacc) is not "
				 "emulated; record without it");
			hwt_terms_close(&it);
			return HWT_ERR_INVALID;
		} else {
			known = 0;
		}
		if (!known || bad) {
			snprintf(
			    err, errlen,
			    known ? "cs_etm (emulated): bad value for term '%s'"
				  : "cs_etm (emulated): unknown term '%s' (known: timestamp, raw, "
				    "contextid, retstack, sinkid)",
			    t);
			hwt_terms_close(&it);
			return HWT_ERR_INVALID;
		}
	}
	hwt_terms_close(&it);
	struct emu_a64_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return HWT_ERR_NOMEM;
	p->config = cfg;
	p->raw = raw;
	hwt_emu_link_init(&p->ln, 0);
	snprintf(p->what, sizeof(p->what), "cs_etm");
	snprintf(p->extra, sizeof(p->extra), "formatted=%d,timestamp=%d,traceid=%u,ncpu=%d", !raw,
		 !!(cfg & OPT_TS), ETM_TRACEID(0), ETM_NCPU);
	hwt_session_set_unit_priv(s, p);
	hwt_perf_attr_intel_pt(hwt_session_attr(s), ETM_PMU_TYPE, cfg);
	hwt_session_attr(s)->aux_watermark = 0;
	/* per-thread cs_etm as perf 6.1 records it: no CPU in the samples
	 * (perf 6.1 matches AUX records to per-thread buffers by cpu -1) */
	hwt_session_attr(s)->sample_type &= ~(uint64_t)PERF_SAMPLE_CPU;
	return 0;
}

/* The program as qemu-aarch64 runs it: an aarch64 ELF (by path, or by
 * name in ROOT/usr/bin, ROOT/bin, then $PATH). */
static int resolve_program(char *const argv[], const char *root, char ***out, char *err,
			   size_t errlen, const char *what)
{
	char path[PATH_MAX];
	int found = -1;
	if (argv[0] && !strchr(argv[0], '/') && root) {
		static const char *const dirs[] = {"/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"};
		for (size_t i = 0; i < 4 && found; i++) {
			snprintf(path, sizeof(path), "%s%s%s", root, dirs[i], argv[0]);
			found = access(path, X_OK);
		}
	}
	if (found && (!argv[0] || hwt_find_program(argv[0], path, sizeof(path)))) {
		snprintf(err, errlen, "%.300s: command not found", argv[0] ? argv[0] : "(none)");
		return HWT_ERR_INVALID;
	}
	unsigned char hdr[64] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, hdr, sizeof(hdr)) : -1;
	if (fd >= 0)
		close(fd);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)hdr;
	if (n < (ssize_t)sizeof(Elf64_Ehdr) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_AARCH64) {
		int x86 = n >= (ssize_t)sizeof(Elf64_Ehdr) &&
			  !memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_machine == EM_X86_64;
		snprintf(
		    err, errlen,
		    x86 ? "%.300s is an x86-64 program: the emulated %s traces Arm code; record it "
			  "with -e intel_pt"
			: "%.300s: not an aarch64 ELF program (the emulated %s unit runs "
			  "aarch64 Linux programs)",
		    path, what);
		return HWT_ERR_INVALID;
	}
	size_t argc = 0;
	while (argv[argc])
		argc++;
	char **v = calloc(argc + 1, sizeof(char *));
	if (!v)
		return HWT_ERR_NOMEM;
	v[0] = strdup(path);
	for (size_t i = 1; i < argc; i++)
		v[i] = strdup(argv[i]);
	*out = v;
	return 0;
}

static void free_argv(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

int hwt_emu_a64_launch(struct hwt_session *s, char *const argv[], pid_t *pid)
{
	struct emu_a64_priv *p = hwt_session_unit_priv(s);
	const struct hwt_session_config *cfg = hwt_session_config(s);
	char err[512] = "";
	char qemu[PATH_MAX], plugin[PATH_MAX];
	if (!p)
		return HWT_ERR_INVALID;
	if (cfg->filter && *cfg->filter) {
		hwt_session_set_err(s,
				    "emulated %s: address filters are not emulated; record without "
				    "--filter",
				    p->what);
		return HWT_ERR_INVALID;
	}
	if (hwt_find_program(cfg->qemu_path ? cfg->qemu_path : "qemu-aarch64", qemu,
			     sizeof(qemu))) {
		hwt_session_set_err(s,
				    "qemu-aarch64 not found (install it: apt install qemu-user)");
		return HWT_ERR_NOT_PRESENT;
	}
	if (cfg->plugin_path)
		snprintf(plugin, sizeof(plugin), "%s", cfg->plugin_path);
	else if (plugin_default(plugin, sizeof(plugin))) {
		hwt_session_set_err(s, "hwt-etm-plugin.so not found next to the hwt binary");
		return HWT_ERR_NOT_PRESENT;
	}
	const char *root = sysroot();
	char rootbuf[PATH_MAX] = "";
	if (root && !realpath(root, rootbuf)) {
		hwt_session_set_err(s, "aarch64 sysroot '%s': %s (set HWT_SYSROOT)", root,
				    strerror(errno));
		return HWT_ERR_INVALID;
	}
	char **prog = NULL;
	int r = resolve_program(argv, root ? rootbuf : NULL, &prog, err, sizeof(err), p->what);
	if (r) {
		hwt_session_set_err(s, "%s", err);
		return r;
	}
	if ((cfg->truth_path && strchr(cfg->truth_path, ',')) || strchr(plugin, ',') ||
	    strchr(rootbuf, ',')) {
		hwt_session_set_err(s, "emulated %s: paths must not contain ','", p->what);
		free_argv(prog);
		return HWT_ERR_INVALID;
	}
	r = hwt_emu_link_open(&p->ln, s);
	if (r) {
		free_argv(prog);
		return r;
	}
	char *xargs = hwt_emu_exec_args(cfg); /* which exec()ed programs to follow */
	size_t alen = strlen(plugin) + strlen(p->ln.dir) + strlen(rootbuf) + strlen(p->extra) +
		      (cfg->truth_path ? strlen(cfg->truth_path) : 0) +
		      (xargs ? strlen(xargs) : 0) + 512;
	char *parg = malloc(alen);
	size_t pc = 0;
	while (prog[pc])
		pc++;
	char **qv = calloc(pc + 7, sizeof(char *));
	if (!parg || !qv || !xargs) {
		free(xargs);
		free(parg);
		free(qv);
		free_argv(prog);
		return HWT_ERR_NOMEM;
	}
	int n = snprintf(parg, alen, "%s,", plugin);
	n += hwt_emu_link_args(&p->ln, s, parg + n, alen - (size_t)n);
	n += snprintf(parg + n, alen - (size_t)n, ",%s", p->extra);
	if (rootbuf[0])
		n += snprintf(parg + n, alen - (size_t)n, ",sysroot=%s", rootbuf);
	if (cfg->truth_path)
		n += snprintf(parg + n, alen - (size_t)n, ",truth=%s", cfg->truth_path);
	n += snprintf(parg + n, alen - (size_t)n, "%s", xargs);
	free(xargs);
	size_t k = 0;
	qv[k++] = qemu;
	if (rootbuf[0]) {
		qv[k++] = "-L";
		qv[k++] = rootbuf;
	}
	qv[k++] = "-plugin";
	qv[k++] = parg;
	for (size_t i = 0; i < pc; i++)
		qv[k++] = prog[i];
	r = hwt_emu_link_spawn(&p->ln, s, qv, 1, pid);
	free(qv);
	free(parg);
	free_argv(prog);
	return r;
}

int hwt_emu_a64_poll(struct hwt_session *s, int timeout_ms)
{
	struct emu_a64_priv *p = hwt_session_unit_priv(s);
	if (!p || p->ln.rfd < 0)
		return HWT_ERR_INVALID;
	return hwt_emu_link_poll(&p->ln, s, timeout_ms);
}

/* perf's cs_etm AUXTRACE_INFO, metadata version 1: header (version, PMU
 * type << 32 | CPU count, snapshot), then per CPU the ETMv4 block (magic,
 * cpu, number of parameters, TRCCONFIGR, TRCTRACEIDR, TRCIDR0, TRCIDR1,
 * TRCIDR2, TRCIDR8, TRCAUTHSTATUS). */
static int auxtrace_info(struct hwt_session *s, uint64_t *priv, size_t max)
{
	struct emu_a64_priv *p = hwt_session_unit_priv(s);
	size_t need = 3 + ETM_NCPU * 10;
	if (!p || max < need)
		return HWT_ERR_INVALID;
	uint32_t configr = 0;
	if (p->config & OPT_CYCACC)
		configr |= CFGR_CYCACC;
	if (p->config & OPT_CTXTID)
		configr |= CFGR_CTXTID;
	if (p->config & OPT_TS)
		configr |= CFGR_TS;
	if (p->config & OPT_RETSTK)
		configr |= CFGR_RETSTK;
	size_t k = 0;
	priv[k++] = 1; /* CS_HEADER_VERSION */
	priv[k++] = ((uint64_t)ETM_PMU_TYPE << 32) | ETM_NCPU;
	priv[k++] = hwt_session_config(s)->snapshot ? 1 : 0;
	for (unsigned cpu = 0; cpu < ETM_NCPU; cpu++) {
		priv[k++] = 0x4040404040404040ull; /* ETMv4 magic */
		priv[k++] = cpu;
		priv[k++] = 7;
		priv[k++] = configr;
		priv[k++] = ETM_TRACEID(cpu);
		priv[k++] = ETM_TRCIDR0;
		priv[k++] = ETM_TRCIDR1;
		priv[k++] = ETM_TRCIDR2;
		priv[k++] = ETM_TRCIDR8;
		priv[k++] = ETM_TRCAUTHSTATUS;
	}
	return (int)k;
}

void hwt_emu_a64_close(struct hwt_session *s)
{
	struct emu_a64_priv *p = hwt_session_unit_priv(s);
	if (!p)
		return;
	hwt_emu_link_stop(&p->ln);
	hwt_emu_link_free(&p->ln, NULL);
	free(p);
	hwt_session_set_unit_priv(s, NULL);
}

const struct hwt_unit_ops hwt_unit_emu_etm = {
    .name = "cs_etm",
    .emulated = 1,
    .probe = probe,
    .configure = configure,
    .launch = hwt_emu_a64_launch,
    .poll = hwt_emu_a64_poll,
    .auxtrace_info = auxtrace_info,
    .close = hwt_emu_a64_close,
    .auxtrace_type = HWT_PERF_AUXTRACE_CS_ETM,
};
