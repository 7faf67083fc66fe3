/* tools/cmd_script.c - "hwt script": decode a trace into its flow.
 *
 * Modes, one function each:
 *   --pt FILE ... --format ptxed   a raw Intel PT stream with code images
 *                                  given as --raw/--elf, printed the way
 *                                  libipt's ptxed --no-inst prints it;
 *   (perf.data recordings: a later mode, in its own tools/script_*.c).
 * The image and the config are built here; decoding and printing live in
 * the library (lib/pt, lib/out/ptxed.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hwt/image.h"
#include "hwt/pt_config.h"
#include "hwt/pt_flow.h"
#include "out/ptxed.h"
#include "script_perf.h"

static const char usage_text[] =
    "usage: hwt script --pt FILE [--raw FILE[:OFF[-END]]:ADDR]... [--elf FILE[:BIAS]]...\n"
    "                  [--cpu F/M[/S]] [--format ptxed] [options]\n"
    "\n"
    "Decode a raw Intel PT stream against the given code images and print the\n"
    "instruction flow as libipt's 'ptxed --no-inst' does.\n"
    "\n"
    "  --pt FILE                the trace (read whole)\n"
    "  --raw FILE[:OFF[-END]]:ADDR  map FILE (from OFF to END) at ADDR\n"
    "  --elf FILE[:BIAS]        map an ELF file's PT_LOAD segments (+BIAS)\n"
    "  --cpu F/M[/S]            the recording cpu (enables errata workarounds)\n"
    "  --insn-decoder | --block-decoder\n"
    "  --resync-on-error        continue after errors at the next IP\n"
    "  --event:ip --event:time --event:tick --event:iflags\n"
    "  --block:show-blocks --block:end-on-call --block:end-on-jump\n"
    "  --stat --stat:insn --stat:blocks --quiet\n"
    "  --filter:addrN_cfg V --filter:addrN_a A --filter:addrN_b B   (N = 0..3)\n"
    "  --mtc-freq N --nom-freq N --cpuid-0x15.eax N --cpuid-0x15.ebx N\n"
    "  --insn:keep-tcal-on-ovf --block:keep-tcal-on-ovf --no-tcal --no-cyc\n"
    "  --no-inst --check        accepted (hwt never prints disassembly)\n";

struct buf_file {
	uint8_t *data;
	size_t size;
};

static int read_file(const char *path, struct buf_file *bf)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0;
	uint8_t *d = malloc(cap);
	while (d) {
		size_t r = fread(d + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		uint8_t *nd = realloc(d, cap * 2);
		if (!nd) {
			free(d);
			d = NULL;
			break;
		}
		d = nd;
		cap *= 2;
	}
	int bad = ferror(f) || !d;
	fclose(f);
	if (bad) {
		free(d);
		return -1;
	}
	bf->data = d;
	bf->size = n;
	return 0;
}

/* FILE[:OFF[-END]]:ADDR */
static int add_raw(struct hwt_image *img, const char *spec)
{
	char *s = strdup(spec);
	if (!s)
		return HWT_ERR_NOMEM;
	unsigned long long addr, off = 0, end = 0;
	int have_end = 0, err = HWT_ERR_INVALID;
	char *c = strrchr(s, ':');
	if (!c || cli_parse_u64(c + 1, &addr))
		goto out;
	*c = 0;
	char *c2 = strrchr(s, ':');
	if (c2) {
		char *dash = strchr(c2 + 1, '-');
		if (dash) {
			*dash = 0;
			if (cli_parse_u64(dash + 1, &end))
				goto out;
			have_end = 1;
		}
		if (cli_parse_u64(c2 + 1, &off))
			goto out;
		*c2 = 0;
	}
	if (have_end && end < off)
		goto out;
	err = hwt_image_add_file(img, s, off, have_end ? end - off : HWT_IMAGE_TO_END, addr);
out:
	free(s);
	return err;
}

static int add_elf(struct hwt_image *img, const char *spec)
{
	char *s = strdup(spec);
	if (!s)
		return HWT_ERR_NOMEM;
	unsigned long long bias = 0;
	char *c = strrchr(s, ':');
	if (c && !cli_parse_u64(c + 1, &bias))
		*c = 0;
	else
		bias = 0;
	int err = hwt_image_add_elf(img, s, bias);
	free(s);
	return err;
}

static int script_ptxed(int argc, char **argv)
{
	struct hwt_pt_config cfg;
	struct hwt_ptxed_options opt;
	struct hwt_image *img = hwt_image_alloc();
	const char *pt = NULL, *cpu = NULL;
	int rc = 2, cpu_bad = 0;
	struct buf_file trace = {0};

	hwt_pt_config_init(&cfg);
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	if (!img) {
		cli_err("script", "out of memory");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long long n;
#define NEEDV()                                                                                    \
	do {                                                                                       \
		if (!v) {                                                                          \
			cli_err("script", "%s needs an argument", a);                              \
			goto usage;                                                                \
		}                                                                                  \
		i++;                                                                               \
	} while (0)
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			rc = 0;
			goto out;
		} else if (!strcmp(a, "--pt")) {
			NEEDV();
			pt = v;
		} else if (!strcmp(a, "--raw")) {
			NEEDV();
			int err = add_raw(img, v);
			if (err) {
				cli_err("script",
					"cannot map '%s': %s (expected FILE[:OFF[-END]]:ADDR)", v,
					err == HWT_ERR_IO ? strerror(errno) : hwt_errstr(err));
				goto out;
			}
		} else if (!strcmp(a, "--elf")) {
			NEEDV();
			int err = add_elf(img, v);
			if (err) {
				cli_err("script", "cannot load ELF '%s': %s", v,
					err == HWT_ERR_IO ? strerror(errno) : hwt_errstr(err));
				goto out;
			}
		} else if (!strcmp(a, "--cpu")) {
			NEEDV();
			cpu = v;
		} else if (!strcmp(a, "--format")) {
			NEEDV();
			if (strcmp(v, "ptxed")) {
				cli_err("script", "unknown format '%s' (known: ptxed)", v);
				goto usage;
			}
		} else if (!strcmp(a, "--insn-decoder")) {
			opt.block_decoder = 0;
		} else if (!strcmp(a, "--block-decoder")) {
			opt.block_decoder = 1;
		} else if (!strcmp(a, "--resync-on-error")) {
			opt.resync_on_error = 1;
		} else if (!strcmp(a, "--event:ip")) {
			opt.event_ip = 1;
		} else if (!strcmp(a, "--event:time")) {
			opt.event_time = 1;
		} else if (!strcmp(a, "--event:tick")) {
			opt.event_tick = 1;
		} else if (!strcmp(a, "--event:iflags")) {
			opt.event_iflags = 1;
		} else if (!strcmp(a, "--block:show-blocks")) {
			opt.show_blocks = 1;
		} else if (!strcmp(a, "--block:end-on-call")) {
			opt.end_on_call = 1;
		} else if (!strcmp(a, "--block:end-on-jump")) {
			opt.end_on_jump = 1;
		} else if (!strcmp(a, "--stat")) {
			opt.stat = 1;
		} else if (!strcmp(a, "--stat:insn")) {
			opt.stat_insn = 1;
		} else if (!strcmp(a, "--stat:blocks")) {
			opt.stat_blocks = 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			opt.quiet = 1;
		} else if (!strcmp(a, "--insn:keep-tcal-on-ovf") ||
			   !strcmp(a, "--block:keep-tcal-on-ovf")) {
			opt.keep_tcal_on_ovf = 1;
		} else if (!strcmp(a, "--no-inst") || !strcmp(a, "--check") ||
			   !strcmp(a, "--no-tcal") || !strcmp(a, "--no-cyc") ||
			   !strcmp(a, "--no-wall-clock")) {
			/* accepted */
		} else if (!strcmp(a, "--mtc-freq") || !strcmp(a, "--nom-freq") ||
			   !strcmp(a, "--cpuid-0x15.eax") || !strcmp(a, "--cpuid-0x15.ebx")) {
			NEEDV();
			if (cli_parse_u64(v, &n)) {
				cli_err("script", "bad number '%s' for %s", v, a);
				goto usage;
			}
			if (!strcmp(a, "--mtc-freq"))
				cfg.mtc_freq = (uint8_t)n;
			else if (!strcmp(a, "--nom-freq"))
				cfg.nom_freq = (uint8_t)n;
			else if (!strcmp(a, "--cpuid-0x15.eax"))
				cfg.cpuid_0x15_eax = (uint32_t)n;
			else
				cfg.cpuid_0x15_ebx = (uint32_t)n;
		} else if (!strncmp(a, "--filter:addr", 13) && a[13] >= '0' && a[13] <= '3' &&
			   (!strcmp(a + 14, "_cfg") || !strcmp(a + 14, "_a") ||
			    !strcmp(a + 14, "_b"))) {
			int k = a[13] - '0';
			NEEDV();
			if (cli_parse_u64(v, &n)) {
				cli_err("script", "bad number '%s' for %s", v, a);
				goto usage;
			}
			if (!strcmp(a + 14, "_cfg"))
				cfg.addr_filter.cfg[k] = (uint8_t)n;
			else if (!strcmp(a + 14, "_a"))
				cfg.addr_filter.a[k] = n;
			else
				cfg.addr_filter.b[k] = n;
		} else {
			cli_err("script", "unknown option '%s'", a);
			goto usage;
		}
#undef NEEDV
	}
	if (!pt) {
		cli_err("script", "no trace given (use --pt FILE)");
		goto usage;
	}
	if (read_file(pt, &trace)) {
		cli_err("script", "cannot read '%s': %s", pt, strerror(errno));
		goto out;
	}
	if (cpu) {
		if (hwt_pt_cpu_parse(&cfg.cpu, cpu)) {
			cli_err("script", "bad cpu '%s' (expected F/M or F/M/S)", cpu);
			goto usage;
		}
		if (hwt_pt_cpu_errata(&cfg.errata, &cfg.cpu) < 0)
			cpu_bad = 1;
	}
	cfg.buf.begin = trace.data;
	cfg.buf.end = trace.data + trace.size;
	if (cpu_bad)
		printf("[0, 0: config error: %s]\n", hwt_errstr(HWT_ERR_BAD_CPU));
	struct hwt_ptxed_stats stats;
	int err = hwt_ptxed_run(stdout, &cfg, img, &opt, &stats);
	if (err) {
		cli_err("script", "cannot decode '%s': %s", pt, hwt_errstr(err));
		rc = 1;
		goto out;
	}
	rc = 0;
	goto out;
usage:
	rc = cli_usage_error(usage_text);
out:
	free(trace.data);
	hwt_image_free(img);
	return rc;
}

/* Two modes: a recording (script_cli.c; "hwt script --help") or, with
 * --pt, a raw trace printed as ptxed does ("hwt script --pt x --help"). */
int hwt_cmd_script(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--pt"))
			return script_ptxed(argc, argv);
	return hwt_script_perf(argc, argv);
}
