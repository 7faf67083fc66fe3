/* Unit tests: lib/unit/sysfs.c and the hardware units' probe/configure on
 * a fake sysfs tree ($HWT_SYSFS_ROOT) describing a machine WITH Intel PT.
 *
 * The fake tree holds the files Linux's intel_pt driver exports (format
 * terms, caps, type, nr_addr_filters).  The expected attr.config values
 * are computed here from the Intel SDM's IA32_RTIT_CTL bit positions
 * (CYCEn 1, MTCEn 9, TSCEn 10, DisRETC 11, BranchEn 13, MTCFreq 17:14,
 * CycThresh 22:19, PSBFreq 27:24), not from hwt's parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/unit.h"
#include "t.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	/* make parent dirs */
	for (char *q = p + strlen(root) + 1; *q; q++)
		if (*q == '/') {
			*q = 0;
			mkdir(p, 0755);
			*q = '/';
		}
	FILE *f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

/* SDM IA32_RTIT_CTL positions. */
#define CYC (1ULL << 1)
#define MTC (1ULL << 9)
#define TSC (1ULL << 10)
#define DISRETC (1ULL << 11)
#define BRANCH (1ULL << 13)
#define PT (1ULL << 0)
#define MTCFREQ(v) ((uint64_t)(v) << 14)
#define CYCTHRESH(v) ((uint64_t)(v) << 19)
#define PSBFREQ(v) ((uint64_t)(v) << 24)

static void make_tree(int mtc_cap)
{
	snprintf(root, sizeof(root), "/tmp/hwt-fake-sysfs-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	put("intel_pt/type", "8\n");
	put("intel_pt/nr_addr_filters", "2\n");
	put("intel_pt/format/pt", "config:0\n");
	put("intel_pt/format/cyc", "config:1\n");
	put("intel_pt/format/mtc", "config:9\n");
	put("intel_pt/format/tsc", "config:10\n");
	put("intel_pt/format/noretcomp", "config:11\n");
	put("intel_pt/format/branch", "config:13\n");
	put("intel_pt/format/mtc_period", "config:14-17\n");
	put("intel_pt/format/cyc_thresh", "config:19-22\n");
	put("intel_pt/format/psb_period", "config:24-27\n");
	put("intel_pt/caps/psb_cyc", "1\n");
	put("intel_pt/caps/mtc", mtc_cap ? "1\n" : "0\n");
	put("intel_pt/caps/mtc_periods", "249\n"); /* %x: bitmap 0x249 */
	put("intel_pt/caps/ip_filtering", "1\n");
	put("intel_pt/caps/num_address_ranges", "2\n");
	put("intel_pt/caps/max_nonturbo_ratio", "24\n"); /* %u in the driver */
	setenv("HWT_SYSFS_ROOT", root, 1);
}

static void rm_tree(void)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
	unsetenv("HWT_SYSFS_ROOT");
}

static void t_format_parse(void)
{
	unsigned w = 9;
	uint64_t m = 0;
	CHECK_EQ(hwt_pmu_format_parse("config:0-7", &w, &m), 0);
	CHECK_EQ(w, 0);
	CHECK(m == 0xffULL);
	CHECK_EQ(hwt_pmu_format_parse("config1:3,8-9,63", &w, &m), 0);
	CHECK_EQ(w, 1);
	CHECK(m == ((1ULL << 3) | (3ULL << 8) | (1ULL << 63)));
	CHECK_EQ(hwt_pmu_format_parse("config2:0-63", &w, &m), 0);
	CHECK_EQ(w, 2);
	CHECK(m == ~0ULL);
	CHECK(hwt_pmu_format_parse("config:", &w, &m) < 0);
	CHECK(hwt_pmu_format_parse("config:7-3", &w, &m) < 0);
	CHECK(hwt_pmu_format_parse("config:64", &w, &m) < 0);
	CHECK(hwt_pmu_format_parse("conf:1", &w, &m) < 0);
	CHECK(hwt_pmu_format_parse("config:1x", &w, &m) < 0);
}

static void t_read_pmu(void)
{
	make_tree(1);
	struct hwt_pmu pmu;
	char why[256];
	CHECK_EQ(hwt_pmu_read(NULL, "intel_pt", &pmu, why, sizeof(why)), 0);
	CHECK_EQ(pmu.type, 8);
	CHECK_EQ(pmu.nr_addr_filters, 2);
	CHECK_EQ(pmu.nr_formats, 9);
	const struct hwt_pmu_format *f = hwt_pmu_find_format(&pmu, "mtc_period");
	CHECK(f && f->word == 0 && f->mask == MTCFREQ(0xf));
	uint64_t v = 0;
	CHECK_EQ(hwt_pmu_get_cap(&pmu, "mtc_periods", &v), 0);
	CHECK(v == 0x249);
	CHECK_EQ(hwt_pmu_get_cap(&pmu, "num_address_ranges", &v), 0);
	CHECK_EQ(v, 2);
	CHECK(hwt_pmu_get_cap(&pmu, "nope", &v) == HWT_ERR_NOT_PRESENT);
	CHECK(hwt_pmu_read(NULL, "intel_bts", &pmu, why, sizeof(why)) == HWT_ERR_NOT_PRESENT);
	rm_tree();
}

static void t_set_term(void)
{
	make_tree(1);
	struct hwt_pmu pmu;
	char why[256];
	CHECK_EQ(hwt_pmu_read(NULL, "intel_pt", &pmu, why, sizeof(why)), 0);
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	CHECK_EQ(hwt_pmu_set_term(&pmu, &a, "mtc_period", 3), 0);
	CHECK(a.config == MTCFREQ(3));
	CHECK_EQ(hwt_pmu_set_term(&pmu, &a, "cyc_thresh", 15), 0);
	CHECK(a.config == (MTCFREQ(3) | CYCTHRESH(15)));
	CHECK(hwt_pmu_set_term(&pmu, &a, "cyc_thresh", 16) < 0); /* 4 bits */
	CHECK_EQ(hwt_pmu_set_term(&pmu, &a, "mtc_period", 0), 0);
	CHECK(a.config == CYCTHRESH(15));
	CHECK(hwt_pmu_set_term(&pmu, &a, "bogus", 1) < 0);
	char err[256];
	memset(&a, 0, sizeof(a));
	CHECK_EQ(hwt_pmu_apply_terms(&pmu, &a, "tsc,noretcomp=1,psb_period=5", err, sizeof(err)),
		 0);
	CHECK(a.config == (TSC | DISRETC | PSBFREQ(5)));
	CHECK(hwt_pmu_apply_terms(&pmu, &a, "tsc,fancy", err, sizeof(err)) < 0);
	CHECKF(strstr(err, "fancy") && strstr(err, "mtc_period"), "err: %s", err);
	rm_tree();
}

static void t_event_split(void)
{
	char n[32], t[64], m[8];
	CHECK_EQ(hwt_event_split("intel_pt/tsc,cyc/u", n, sizeof(n), t, sizeof(t), m, sizeof(m)),
		 0);
	CHECK(!strcmp(n, "intel_pt") && !strcmp(t, "tsc,cyc") && !strcmp(m, "u"));
	CHECK_EQ(hwt_event_split("dummy:u", n, sizeof(n), t, sizeof(t), m, sizeof(m)), 0);
	CHECK(!strcmp(n, "dummy") && !t[0] && !strcmp(m, "u"));
	CHECK_EQ(hwt_event_split("intel_pt//", n, sizeof(n), t, sizeof(t), m, sizeof(m)), 0);
	CHECK(!strcmp(n, "intel_pt") && !t[0] && !m[0]);
	CHECK(hwt_event_split("intel_pt/tsc", n, sizeof(n), t, sizeof(t), m, sizeof(m)) < 0);
	CHECK(hwt_event_split("intel_pt//x", n, sizeof(n), t, sizeof(t), m, sizeof(m)) < 0);
}

static void t_probe_present(void)
{
	make_tree(1);
	const struct hwt_unit_ops *u = hwt_unit_find("intel_pt");
	CHECK(u && !u->emulated);
	struct hwt_unit_info info;
	memset(&info, 0, sizeof(info));
	CHECK_EQ(u->probe(&info), 0);
	CHECK(info.present);
	CHECK_EQ(info.pmu_type, 8);
	CHECK_EQ(info.nr_addr_filters, 2);
	CHECKF(strstr(info.formats, "mtc_period=config:14-17"), "formats: %s", info.formats);
	CHECKF(strstr(info.caps, "mtc_periods=0x249"), "caps: %s", info.caps);
	/* the other hardware units are absent from the fake tree */
	const struct hwt_unit_ops *bts = hwt_unit_find("intel_bts");
	CHECK(bts && bts->probe(&info) == HWT_ERR_NOT_PRESENT);
	CHECKF(strstr(info.why, "intel_bts") && strstr(info.why, "--emulate"), "why: %s", info.why);
	rm_tree();
}

static int nop_record(void *a, struct hwt_stream *st, const struct perf_event_header *h)
{
	return 0;
}

static uint64_t session_config(const char *event, int emulate, int *err_out)
{
	struct hwt_session_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.event = event;
	cfg.emulate = emulate;
	struct hwt_sink sink = {.record = nop_record};
	struct hwt_session *s;
	char err[512];
	*err_out = hwt_session_open(&s, &cfg, &sink, err, sizeof(err));
	if (*err_out)
		return 0;
	uint64_t c = hwt_session_attr(s)->config;
	CHECK_EQ(hwt_session_attr(s)->type, 8);
	CHECK(!hwt_session_unit(s)->emulated);
	if (strchr(event, '/') && event[strlen(event) - 1] == 'u')
		CHECK(hwt_session_attr(s)->exclude_kernel);
	hwt_session_close(s);
	return c;
}

/* The attr a session builds: perf's defaults gated by caps, then terms. */
static void t_session_config_bits(void)
{
	int e;
	make_tree(1);
	uint64_t c = session_config("intel_pt", -1, &e);
	CHECK_EQ(e, 0);
	CHECK(c == (PT | BRANCH | TSC | MTC | MTCFREQ(3) | PSBFREQ(3)));
	c = session_config("intel_pt/cyc,cyc_thresh=2,mtc_period=6,noretcomp,branch=1/u", -1, &e);
	CHECK_EQ(e, 0);
	CHECK(c ==
	      (PT | BRANCH | TSC | MTC | MTCFREQ(6) | PSBFREQ(3) | CYC | CYCTHRESH(2) | DISRETC));
	c = session_config("intel_pt/tsc=0,mtc=0/u", -1, &e);
	CHECK_EQ(e, 0);
	CHECK(c == (PT | BRANCH | MTCFREQ(3) | PSBFREQ(3)));
	session_config("intel_pt/nosuchterm/u", -1, &e);
	CHECK(e < 0);
	rm_tree();
	/* without the mtc cap, MTC is not turned on by default */
	make_tree(0);
	c = session_config("intel_pt", -1, &e);
	CHECK_EQ(e, 0);
	CHECK(c == (PT | BRANCH | TSC | PSBFREQ(3)));
	rm_tree();
}

/* No PMU in the tree and --no-emulate: a message naming the PMU. */
static void t_session_absent(void)
{
	make_tree(1);
	const char *names[] = {"intel_bts", "arm_spe", "cs_etm"};
	for (int i = 0; i < 3; i++) {
		struct hwt_session_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.size = sizeof(cfg);
		cfg.event = names[i];
		cfg.emulate = -1;
		struct hwt_sink sink = {.record = nop_record};
		struct hwt_session *s = NULL;
		char err[512] = "";
		CHECK(hwt_session_open(&s, &cfg, &sink, err, sizeof(err)) == HWT_ERR_NOT_PRESENT);
		CHECK(s == NULL);
		CHECKF(strstr(err, names[i]) && strstr(err, "--emulate"), "err: %s", err);
	}
	rm_tree();
}

/* AUXTRACE_INFO words perf's decoder reads, from the fake PMU; the
 * expected bits are the SDM positions above. */
static void t_auxtrace_info(void)
{
	make_tree(1);
	struct hwt_session_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.event = "intel_pt/cyc/u";
	cfg.emulate = -1;
	cfg.sideband = 1;
	cfg.inherit = 1;
	cfg.filter = "filter main @/bin/true";
	struct hwt_sink sink = {.record = nop_record};
	struct hwt_session *s = NULL;
	char err[512];
	CHECKF(hwt_session_open(&s, &cfg, &sink, err, sizeof(err)) == 0, "%s", err);
	if (!s)
		return;
	const struct hwt_unit_ops *u = hwt_session_unit(s);
	uint64_t priv[64];
	int n = u->auxtrace_info ? u->auxtrace_info(s, priv, 64) : -1;
	CHECK(n > HWT_IPT_FILTER_STR_LEN);
	struct hwt_perf_intel_pt_info info;
	CHECK_EQ(hwt_perf_intel_pt_info_parse(&info, priv, n > 0 ? (size_t)n : 0), 0);
	CHECK_EQ(info.pmu_type, 8);
	CHECK(info.tsc_bit == TSC);
	CHECK(info.noretcomp_bit == DISRETC);
	CHECK(info.mtc_bit == MTC);
	CHECK(info.mtc_freq_bits == MTCFREQ(0xf));
	CHECK(info.cyc_bit == CYC);
	CHECK_EQ(info.max_nonturbo_ratio, 24);
	CHECK_EQ(info.have_sched_switch, 2); /* per-CPU: context_switch sideband */
	/* perf's layout: length without NUL, then the string padded to 8 */
	const char *fs = "filter main @/bin/true";
	CHECK_EQ(priv[HWT_IPT_FILTER_STR_LEN], strlen(fs));
	CHECK_EQ(n, HWT_IPT_PRIV_MAX + (strlen(fs) + 1 + 7) / 8);
	CHECK(n > 0 && !memcmp(&priv[HWT_IPT_PRIV_MAX], fs, strlen(fs) + 1));
	hwt_session_close(s);
	rm_tree();
}

int main(void)
{
	RUN(t_format_parse);
	RUN(t_read_pmu);
	RUN(t_set_term);
	RUN(t_event_split);
	RUN(t_probe_present);
	RUN(t_session_config_bits);
	RUN(t_session_absent);
	RUN(t_auxtrace_info);
	return t_done();
}
