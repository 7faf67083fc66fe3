/* tools/cmd_dump.c - "hwt dump": list the packets of a raw Intel PT stream,
 * line for line as libipt's ptdump prints them (same option names).
 *
 * Flow: parse options into a struct hwt_pt_config and hwt_ptdump_opts,
 * map the file, sync to the first PSB (or start at 0 with --no-sync), then
 * render each packet with lib/out/ptdump.c into a large output buffer.  A
 * decode error prints "[<offset>: error decoding packet: <error>]", the
 * decoder moves to the next PSB and the tracking state restarts.
 *
 * Input formats: a raw PT stream (a regular file is mapped, a pipe is read
 * to its end).  A perf.data file (PERFILE2 magic) is recognised and routed
 * to dump_perf_data(): each AUX stream (the AUXTRACE payloads of one
 * thread or CPU, in file order) is dumped in turn under a "# stream" line,
 * decoded for the cpu and timing parameters the recording holds.
 *
 * Intel BTS: a recording whose AUXTRACE_INFO says intel_bts, or a raw
 * file with --bts, is printed one 24-byte record a line (dump_bts):
 * offset, from, to, flags and pred/miss (flags bit 4), as perf's BTS
 * dump names it; all-zero records print as "pad".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "cli.h"
#include "hwt/bts.h"
#include "hwt/pt_config.h"
#include "hwt/etm.h"
#include "hwt/spe.h"
#include "hwt/perf_data.h"
#include "hwt/pt_packet.h"
#include "out/ptdump.h"

static const char usage_text[] =
    "usage: hwt dump [OPTIONS] FILE[:FROM[-TO]]\n"
    "\n"
    "Print the packets of a raw Intel PT stream, one per line, as libipt's\n"
    "ptdump does.  FROM/TO select a byte range of FILE.  FILE may also be a\n"
    "recording (perf.data): each thread's or CPU's trace is dumped in turn.\n"
    "Intel BTS recordings (and raw files with --bts) print one record a line:\n"
    "offset, from, to, flags, pred|miss.\n"
    "\n"
    "options:\n"
    "  --help|-h                 this text\n"
    "  --bts                     FILE holds Intel BTS records (24 bytes each)\n"
    "  --spe                     FILE holds Arm SPE records (arm_spe recordings are\n"
    "                            recognised by themselves): one packet a line\n"
    "  --no-sync                 start at offset 0 instead of the first PSB\n"
    "  --quiet                   print only errors\n"
    "  --no-pad                  hide PAD packets\n"
    "  --no-timing               hide timing packets\n"
    "  --no-cyc                  hide CYC packets and ignore them for time\n"
    "  --no-offset               drop the offset column\n"
    "  --raw                     add a column with the packet bytes\n"
    "  --lastip                  show the reconstructed IP on IP packets\n"
    "  --exec-mode               show the execution mode on mode.exec\n"
    "  --time                    show the estimated TSC on timing packets\n"
    "  --tcal                    show the time calibration (fcr) instead\n"
    "  --time-delta              show time (or fcr) as a delta to the last one\n"
    "  --no-tcal                 do not calibrate (CYC packets cannot be used)\n"
    "  --no-wall-clock           accept time without a TSC (relative time)\n"
    "  --keep-tcal-on-ovf        keep the calibration across an overflow\n"
    "  --cpu none|auto|F/M[/S]   decode for this cpu (enables its errata)\n"
    "  --mtc-freq N              IA32_RTIT_CTL.MTCFreq\n"
    "  --nom-freq N              nominal core:bus ratio (MSR_PLATFORM_INFO[15:8])\n"
    "  --cpuid-0x15.eax N        CPUID.15H:EAX (TSC:crystal ratio denominator)\n"
    "  --cpuid-0x15.ebx N        CPUID.15H:EBX (TSC:crystal ratio numerator)\n"
    "\n"
    "Arm CoreSight ETMv4 (cs_etm recordings are recognised by themselves):\n"
    "  --trace-id ID             FILE is frame-formatted ETMv4 trace; list source ID\n"
    "  --etm-raw                 FILE is raw (unformatted) ETMv4 trace\n"
    "One packet a line: OFFSET ID TEXT (OpenCSD's packet printer).\n";

#define OUTBUF_SIZE (4u << 20)

struct outbuf {
	char *p;
	size_t n;
	int failed;
};

static void out_flush(struct outbuf *o)
{
	if (o->n && fwrite(o->p, 1, o->n, stdout) != o->n)
		o->failed = 1;
	o->n = 0;
}

/* Make room for one more packet's text. */
static char *out_room(struct outbuf *o)
{
	if (o->n + HWT_PTDUMP_MAX_TEXT > OUTBUF_SIZE)
		out_flush(o);
	return o->p + o->n;
}

static void out_diag(struct outbuf *o, uint64_t offset, const char *what, int err)
{
	char *p = out_room(o);

	o->n += hwt_ptdump_diag(p, offset, what, err);
}

struct input {
	const uint8_t *data;
	size_t size;
	void *map;
	size_t map_size;
	uint8_t *heap;
};

static void input_close(struct input *in)
{
	if (in->map)
		munmap(in->map, in->map_size);
	free(in->heap);
}

/* Split "file:from[-to]" when the suffix parses as a range. */
static int split_range(char *arg, uint64_t *from, uint64_t *to, int *have_to)
{
	char *colon = strrchr(arg, ':'), *end;
	unsigned long long a, b;

	*from = 0;
	*to = 0;
	*have_to = 0;
	if (!colon || !colon[1])
		return 0;
	errno = 0;
	a = strtoull(colon + 1, &end, 0);
	if (errno || end == colon + 1)
		return 0;
	if (*end == '-') {
		char *s = end + 1;
		b = strtoull(s, &end, 0);
		if (errno || end == s || *end)
			return 0;
		if (b <= a)
			return -1;
		*to = b;
		*have_to = 1;
	} else if (*end) {
		return 0;
	}
	*from = a;
	*colon = 0;
	return 0;
}

static int input_open(struct input *in, char *arg)
{
	uint64_t from, to;
	int have_to, fd;
	struct stat st;

	memset(in, 0, sizeof(*in));
	if (split_range(arg, &from, &to, &have_to) < 0) {
		cli_err("dump", "bad range in '%s': TO must be above FROM", arg);
		return -1;
	}
	fd = open(arg, O_RDONLY);
	if (fd < 0) {
		cli_err("dump", "cannot open '%s': %s", arg, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		cli_err("dump", "cannot stat '%s': %s", arg, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		/* A pipe or a device: read until the end. */
		size_t cap = 0;
		ssize_t got;

		for (;;) {
			if (in->map_size == cap) {
				uint8_t *p = realloc(in->heap, cap ? 2 * cap : 1 << 20);
				if (!p) {
					cli_err("dump", "out of memory reading '%s'", arg);
					close(fd);
					return -1;
				}
				in->heap = p;
				cap = cap ? 2 * cap : 1 << 20;
			}
			got = read(fd, in->heap + in->map_size, cap - in->map_size);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				cli_err("dump", "cannot read '%s': %s", arg, strerror(errno));
				close(fd);
				return -1;
			}
			if (!got)
				break;
			in->map_size += (size_t)got;
		}
	} else if (st.st_size > 0) {
		in->map_size = (size_t)st.st_size;
		in->map = mmap(NULL, in->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (in->map == MAP_FAILED) {
			/* Not mappable (a pipe, a special file): read it. */
			in->map = NULL;
			in->heap = malloc(in->map_size);
			if (!in->heap ||
			    pread(fd, in->heap, in->map_size, 0) != (ssize_t)in->map_size) {
				cli_err("dump", "cannot read '%s': %s", arg, strerror(errno));
				close(fd);
				return -1;
			}
		}
	}
	close(fd);
	in->data = in->map ? in->map : in->heap;
	in->size = in->map_size;
	if (from >= in->size && (from || have_to)) {
		cli_err("dump", "offset 0x%llx is beyond the end of '%s' (%zu bytes)",
			(unsigned long long)from, arg, in->size);
		return -1;
	}
	if (have_to && to > in->size) {
		cli_err("dump", "range end 0x%llx is beyond the end of '%s' (%zu bytes)",
			(unsigned long long)to, arg, in->size);
		return -1;
	}
	if (in->data)
		in->data += from;
	in->size = (have_to ? to : in->size) - from;
	return 0;
}

static int cpu_auto(struct hwt_cpu *cpu)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned eax, ebx, ecx, edx, family, model;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return -1;
	family = (eax >> 8) & 0xf;
	model = (eax >> 4) & 0xf;
	if (family == 0xf)
		family += (eax >> 20) & 0xff;
	if (family == 0x6 || family == 0xf)
		model += ((eax >> 16) & 0xf) << 4;
	memset(cpu, 0, sizeof(*cpu));
	cpu->vendor = HWT_CPU_INTEL;
	cpu->family = (uint16_t)family;
	cpu->model = (uint8_t)model;
	cpu->stepping = (uint8_t)(eax & 0xf);
	return 0;
#else
	(void)cpu;
	return -1;
#endif
}

static int arg_num(const char *opt, const char *arg, unsigned long long max,
		   unsigned long long *val)
{
	if (!arg) {
		cli_err("dump", "%s: missing argument", opt);
		return -1;
	}
	if (cli_parse_u64(arg, val) < 0) {
		cli_err("dump", "%s: bad argument: %s", opt, arg);
		return -1;
	}
	if (*val > max) {
		cli_err("dump", "%s: value too big: %s", opt, arg);
		return -1;
	}
	return 0;
}

struct dump_state {
	struct hwt_pt_pkt_decoder *dec;
	struct hwt_ptdump *fmt;
	struct outbuf out;
	const uint8_t *data;
	int errors;
};

/* Dump packets until the end (0) or a decode error (negative). */
static int dump_packets(struct dump_state *s)
{
	struct hwt_pt_packet pkt;
	uint64_t offset = 0;

	for (;;) {
		int n;

		hwt_pt_pkt_offset(s->dec, &offset);
		n = hwt_pt_pkt_next(s->dec, &pkt);
		if (n == HWT_ERR_EOS)
			return 0;
		if (n < 0) {
			out_diag(&s->out, offset, "error decoding packet", n);
			s->errors++;
			return n;
		}
		s->out.n +=
		    hwt_ptdump_packet(s->fmt, offset, &pkt, s->data + offset, out_room(&s->out));
	}
}

static int dump_stream(struct dump_state *s, int no_sync)
{
	int err;

	if (no_sync) {
		err = hwt_pt_pkt_sync_set(s->dec, 0);
		if (err < 0) {
			out_diag(&s->out, 0, "sync error", err);
			return err;
		}
	} else {
		err = hwt_pt_pkt_sync_forward(s->dec);
		if (err == HWT_ERR_EOS)
			return 0;
		if (err < 0) {
			out_diag(&s->out, 0, "sync error", err);
			return err;
		}
	}
	while (dump_packets(s) < 0) {
		uint64_t at = 0, sync = 0;

		hwt_pt_pkt_offset(s->dec, &at);
		err = hwt_pt_pkt_sync_forward(s->dec);
		/* Never resume at the spot that just failed. */
		if (!err && !hwt_pt_pkt_sync_offset(s->dec, &sync) && sync == at) {
			err = hwt_pt_pkt_sync_set(s->dec, at + 1);
			if (!err)
				err = hwt_pt_pkt_sync_forward(s->dec);
		}
		if (err == HWT_ERR_EOS)
			return 0;
		if (err < 0) {
			out_diag(&s->out, 0, "sync error", err);
			return err;
		}
		hwt_ptdump_reset(s->fmt);
	}
	return 0;
}

/* Decode one PT stream held in memory (a raw file, or one AUX stream of a
 * recording) into s->out.  Returns 0, or 1 if there were decode errors. */
static int dump_buffer(struct dump_state *s, const struct hwt_pt_config *cfg_in,
		       const struct hwt_ptdump_opts *o, const uint8_t *data, size_t size,
		       int no_sync)
{
	struct hwt_pt_config cfg = *cfg_in;
	int rc;

	cfg.buf.begin = data;
	cfg.buf.end = data ? data + size : NULL;
	s->data = data;
	s->errors = 0;
	s->dec = hwt_pt_pkt_alloc(&cfg.buf);
	s->fmt = hwt_ptdump_alloc(&cfg, o);
	if (!s->dec || !s->fmt) {
		cli_err("dump", "out of memory");
		rc = 2;
	} else {
		hwt_pt_pkt_set_errata(s->dec, &cfg.errata);
		rc = dump_stream(s, no_sync) < 0 || s->errors ? 1 : 0;
	}
	hwt_ptdump_free(s->fmt);
	hwt_pt_pkt_free(s->dec);
	s->fmt = NULL;
	s->dec = NULL;
	return rc;
}

/* One AUX stream of a recording: the AUXTRACE payloads of one queue (mmap
 * index), concatenated in file order. */
struct aux_stream {
	uint32_t idx;
	int32_t tid, cpu;
	uint8_t *data;
	size_t size, cap;
};

static struct aux_stream *aux_stream_get(struct aux_stream **v, size_t *n, uint32_t idx)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].idx == idx)
			return &(*v)[i];
	struct aux_stream *nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return NULL;
	*v = nv;
	memset(&nv[*n], 0, sizeof(nv[*n]));
	nv[*n].idx = idx;
	return &nv[(*n)++];
}

static int aux_stream_append(struct aux_stream *st, const uint8_t *p, size_t n)
{
	if (st->size + n > st->cap) {
		size_t cap = st->cap ? st->cap : 1u << 16;
		while (cap < st->size + n)
			cap *= 2;
		uint8_t *d = realloc(st->data, cap);
		if (!d)
			return -1;
		st->data = d;
		st->cap = cap;
	}
	memcpy(st->data + st->size, p, n);
	st->size += n;
	return 0;
}

/* Take the decoder parameters a recording holds: the cpu (CPUID feature,
 * unless --cpu was given) and intel_pt's timing fields (unless given). */
static void config_from_recording(struct hwt_pt_config *cfg, struct hwt_perf_reader *r,
				  const struct hwt_perf_intel_pt_info *info, int have_info,
				  int have_cpu)
{
	const char *cpuid = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID);
	unsigned fam, model, step;

	if (!have_cpu && cpuid && !strncmp(cpuid, "GenuineIntel,", 13) &&
	    sscanf(cpuid + 13, "%u,%u,%u", &fam, &model, &step) == 3) {
		cfg->cpu.vendor = HWT_CPU_INTEL;
		cfg->cpu.family = (uint16_t)fam;
		cfg->cpu.model = (uint8_t)model;
		cfg->cpu.stepping = (uint8_t)step;
		if (hwt_pt_cpu_errata(&cfg->errata, &cfg->cpu) < 0)
			memset(&cfg->errata, 0, sizeof(cfg->errata));
	}
	if (!have_info)
		return;
	if (!cfg->cpuid_0x15_eax && !cfg->cpuid_0x15_ebx) {
		cfg->cpuid_0x15_eax = info->tsc_ctc_ratio_d;
		cfg->cpuid_0x15_ebx = info->tsc_ctc_ratio_n;
	}
	if (!cfg->nom_freq)
		cfg->nom_freq = (uint8_t)info->max_nonturbo_ratio;
}

/* Intel BTS records, one a line: "OFFSET  FROM -> TO  flags 0xF pred|miss"
 * (without the offset column under --no-offset); a trailing partial record
 * is reported as an error.  Returns 1 if there was one, else 0. */
static int dump_bts(struct dump_state *s, const struct hwt_ptdump_opts *o, const uint8_t *data,
		    size_t size)
{
	struct hwt_bts_record r;
	size_t i = 0;
	for (; hwt_bts_record_at(data, data + size, i, &r) == 0; i++) {
		if (o->quiet)
			continue;
		char *p = out_room(&s->out);
		int n = 0;
		if (!o->no_offset)
			n = snprintf(p, 64, "%016llx  ",
				     (unsigned long long)(i * HWT_BTS_RECORD_SIZE));
		if (!r.from && !r.to && !r.flags)
			n += snprintf(p + n, 64, "pad\n");
		else
			n += snprintf(p + n, 160, "0x%llx -> 0x%llx  flags 0x%llx %s\n",
				      (unsigned long long)r.from, (unsigned long long)r.to,
				      (unsigned long long)r.flags,
				      r.flags & HWT_BTS_FLAG_PREDICTED ? "pred" : "miss");
		s->out.n += (size_t)n;
	}
	size_t rest = size - i * HWT_BTS_RECORD_SIZE;
	if (rest) {
		char *p = out_room(&s->out);
		s->out.n += (size_t)snprintf(p, 128, "[%016llx: partial record: %zu bytes]\n",
					     (unsigned long long)(i * HWT_BTS_RECORD_SIZE), rest);
		return 1;
	}
	return 0;
}

/* Arm SPE packets, one a line: "OFFSET  BYTES  TEXT" (a run of Padding
 * as one line); bad bytes as "[OFFSET: bad packet]", listing resumes at the
 * next whole record (hwt/spe.h).  Returns 1 if there was damage, else 0. */
static int dump_spe(struct dump_state *s, const struct hwt_ptdump_opts *o, const uint8_t *data,
		    size_t size)
{
	int damaged = 0;
	size_t i = 0;
	while (i < size) {
		struct hwt_spe_packet pkt;
		int k = hwt_spe_pkt_decode(data + i, size - i, &pkt);
		if (k < 0) {
			char *p = out_room(&s->out);
			s->out.n +=
			    (size_t)snprintf(p, 128, "[%08zx: bad packet 0x%02x]\n", i, data[i]);
			damaged = 1;
			struct hwt_spe_config c;
			hwt_spe_config_init(&c);
			c.begin = data + i + 1;
			c.end = data + size;
			struct hwt_spe_decoder *d = hwt_spe_alloc(&c);
			uint64_t at = size - i - 1;
			if (d && hwt_spe_sync_forward(d) == 0)
				hwt_spe_offset(d, &at);
			hwt_spe_free(d);
			i += 1 + (size_t)at;
			continue;
		}
		size_t run = (size_t)k;
		if (pkt.type == HWT_SPE_PAD)
			while (i + run < size && data[i + run] == 0)
				run++;
		if (!o->quiet) {
			char *p = out_room(&s->out);
			int n = 0;
			if (!o->no_offset)
				n += snprintf(p, 32, "%08zx  ", i);
			for (int b = 0; b < 11; b++)
				n += snprintf(p + n, 8,
					      b < k && pkt.type != HWT_SPE_PAD ? "%02x " : "   ",
					      data[i + (size_t)b % (size_t)k]);
			if (pkt.type == HWT_SPE_PAD)
				n += snprintf(p + n, 64, " PAD x%zu\n", run);
			else {
				p[n++] = ' ';
				n += hwt_spe_pkt_print(&pkt, p + n, 200);
				p[n++] = '\n';
			}
			s->out.n += (size_t)n;
		}
		i += run;
	}
	return damaged;
}

/* ---- Arm CoreSight ETMv4 (cs_etm) ---- */
static int etm_line(void *arg, uint64_t offset, uint8_t id, const char *text)
{
	struct dump_state *s = arg;
	size_t len = strlen(text);
	if (len > 900)
		len = 900;
	char *p = out_room(&s->out);
	int n = snprintf(p, 1024, "%08llx  %02x  %.*s\n", (unsigned long long)offset, id, (int)len,
			 text);
	s->out.n += (size_t)n;
	if (strstr(text, "BAD") || strstr(text, "RESERVED"))
		s->errors++;
	return 0;
}

static int etm_dump_buffer(struct dump_state *s, const struct hwt_etm_source *src, size_t nsrc,
			   int formatted, const uint8_t *data, size_t size)
{
	struct hwt_etm_dump_config c = {
	    .size = sizeof(c), .formatted = formatted, .src = src, .nsrc = formatted ? nsrc : 1};
	int e = hwt_etm_dump(&c, data, size, etm_line, s);
	if (e < 0) {
		cli_err("dump", "ETMv4 decoder setup failed: %s", hwt_errstr(e));
		return 2;
	}
	return s->errors ? 1 : 0;
}

/* perf's cs_etm AUXTRACE_INFO (metadata versions 0-1): the ETMv4 sources. */
static size_t etm_sources(const uint64_t *w, size_t nw, struct hwt_etm_source *src, size_t max)
{
	if (nw < 3)
		return 0;
	uint64_t ncpu = w[1] & 0xffffffffu, version = w[0];
	size_t k = 3, n = 0;
	for (uint64_t c = 0; c < ncpu && n < max && k < nw; c++) {
		uint64_t magic = w[k];
		size_t np = version >= 1 && k + 2 < nw ? (size_t)w[k + 2] : 0;
		size_t base = version >= 1 ? k + 3 : k + 2;
		if (version == 0)
			np = magic == 0x4040404040404040ull ? 7 : 4;
		if (base + np > nw)
			break;
		if ((magic == 0x4040404040404040ull || magic == 0x5050505050505050ull) && np >= 6) {
			struct hwt_etm_source *s = &src[n++];
			memset(s, 0, sizeof(*s));
			s->configr = (uint32_t)w[base];
			s->trace_id = (uint8_t)(w[base + 1] & 0x7f);
			s->idr0 = (uint32_t)w[base + 2];
			s->idr1 = (uint32_t)w[base + 3];
			s->idr2 = (uint32_t)w[base + 4];
			s->idr8 = (uint32_t)w[base + 5];
		}
		k = base + np;
	}
	return n;
}

/* hwt dump on a perf.data file: each AUX stream (per thread or per CPU)
 * is dumped in turn under a "# stream" header line. */
static int dump_perf_data(struct dump_state *s, const struct input *in, const char *name,
			  struct hwt_pt_config *cfg, const struct hwt_ptdump_opts *o, int have_cpu,
			  int no_sync)
{
	struct hwt_perf_reader *r = NULL;
	struct hwt_perf_intel_pt_info info;
	struct hwt_perf_record rec;
	struct aux_stream *v = NULL;
	size_t nv = 0;
	char err[256] = "";
	int have_info = 0, rc = 0, ret, bts = 0, etm_raw = 0, spe = 0;
	struct hwt_etm_source esrc[64];
	size_t nesrc = 0;

	if (hwt_perf_reader_open_mem(&r, in->data, in->size, err, sizeof(err)) < 0) {
		cli_err("dump", "cannot read recording '%s': %s", name, err);
		return 2;
	}
	while ((ret = hwt_perf_reader_next(r, &rec)) == 1) {
		if (rec.type == HWT_PERF_RECORD_AUXTRACE_INFO &&
		    rec.size >= sizeof(struct hwt_perf_rec_auxtrace_info)) {
			const struct hwt_perf_rec_auxtrace_info *ai = (const void *)rec.hdr;
			size_t nr = (rec.size - sizeof(*ai)) / sizeof(uint64_t);
			bts = ai->type == HWT_PERF_AUXTRACE_INTEL_BTS;
			spe = ai->type == HWT_PERF_AUXTRACE_ARM_SPE;
			if (ai->type == HWT_PERF_AUXTRACE_INTEL_PT &&
			    hwt_perf_intel_pt_info_parse(&info, (const uint64_t *)(ai + 1), nr) ==
				0)
				have_info = 1;
			if (ai->type == HWT_PERF_AUXTRACE_CS_ETM)
				nesrc = etm_sources((const uint64_t *)(ai + 1), nr, esrc, 64);
		} else if (rec.type == PERF_RECORD_AUX &&
			   rec.size >= sizeof(struct hwt_perf_rec_aux)) {
			const struct hwt_perf_rec_aux *a = (const void *)rec.hdr;
			if (a->flags & 0x100) /* PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW */
				etm_raw = 1;
		} else if (rec.type == HWT_PERF_RECORD_AUXTRACE && rec.aux_data) {
			struct aux_stream *st = aux_stream_get(&v, &nv, rec.aux_idx);
			if (!st || aux_stream_append(st, rec.aux_data, rec.aux_size) < 0) {
				cli_err("dump", "out of memory reading '%s'", name);
				rc = 2;
				break;
			}
			st->tid = (int32_t)rec.sid.tid;
			st->cpu = (int32_t)rec.sid.cpu;
		}
	}
	if (ret < 0 && !rc) {
		cli_err("dump", "'%s' is damaged: %s; dumping what came before", name,
			hwt_perf_reader_errmsg(r));
		rc = 1;
	}
	if (!rc || rc == 1) {
		config_from_recording(cfg, r, &info, have_info, have_cpu);
		if (!nv)
			cli_err("dump", "'%s' holds no trace data (no AUXTRACE records)", name);
		for (size_t i = 0; i < nv; i++) {
			int n = snprintf(out_room(&s->out), 256,
					 "# stream %u: tid %d, cpu %d, %zu bytes\n", v[i].idx,
					 v[i].tid, v[i].cpu, v[i].size);
			s->out.n += (size_t)n;
			int one;
			if (bts)
				one = dump_bts(s, o, v[i].data, v[i].size);
			else if (spe)
				one = dump_spe(s, o, v[i].data, v[i].size);
			else if (nesrc)
				one =
				    etm_dump_buffer(s, esrc, nesrc, !etm_raw, v[i].data, v[i].size);
			else
				one = dump_buffer(s, cfg, o, v[i].data, v[i].size, no_sync);
			if (one > rc)
				rc = one;
		}
	}
	for (size_t i = 0; i < nv; i++)
		free(v[i].data);
	free(v);
	hwt_perf_reader_free(r);
	return rc;
}

int hwt_cmd_dump(int argc, char **argv)
{
	struct hwt_pt_config cfg;
	struct hwt_ptdump_opts o;
	struct dump_state s;
	struct input in;
	char *file = NULL;
	int no_sync = 0, have_cpu = 0, rc, bts = 0, etm = 0, etm_raw = 0, spe = 0;
	unsigned trace_id = 0x10;

	hwt_pt_config_init(&cfg);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.time_opts.size = sizeof(o.time_opts);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		unsigned long long v;

		if (a[0] != '-') {
			if (file)
				return cli_usage_error(usage_text);
			file = argv[i];
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "--bts")) {
			bts = 1;
		} else if (!strcmp(a, "--spe")) {
			spe = 1;
		} else if (!strcmp(a, "--trace-id")) {
			if (arg_num(a, argv[++i], 0x6f, &v) < 0)
				return 2;
			trace_id = (unsigned)v;
			etm = 1;
		} else if (!strcmp(a, "--etm-raw")) {
			etm = etm_raw = 1;
		} else if (!strcmp(a, "--no-sync")) {
			no_sync = 1;
		} else if (!strcmp(a, "--quiet")) {
			o.quiet = 1;
		} else if (!strcmp(a, "--no-pad")) {
			o.no_pad = 1;
		} else if (!strcmp(a, "--no-timing")) {
			o.no_timing = 1;
		} else if (!strcmp(a, "--no-cyc")) {
			o.time_opts.no_cyc = 1;
		} else if (!strcmp(a, "--no-offset")) {
			o.no_offset = 1;
		} else if (!strcmp(a, "--raw")) {
			o.raw = 1;
		} else if (!strcmp(a, "--lastip")) {
			o.lastip = 1;
		} else if (!strcmp(a, "--exec-mode")) {
			o.exec_mode = 1;
		} else if (!strcmp(a, "--time") || !strcmp(a, "--tcal")) {
			int is_tcal = !strcmp(a, "--tcal");

			if (is_tcal ? o.time : o.tcal) {
				cli_err("dump", "specify either --time or --tcal");
				return 2;
			}
			if (is_tcal)
				o.tcal = 1;
			else
				o.time = 1;
		} else if (!strcmp(a, "--time-delta")) {
			o.time_delta = 1;
		} else if (!strcmp(a, "--no-tcal")) {
			o.time_opts.no_tcal = 1;
		} else if (!strcmp(a, "--no-wall-clock")) {
			o.time_opts.no_wall_clock = 1;
		} else if (!strcmp(a, "--keep-tcal-on-ovf")) {
			o.time_opts.keep_tcal_on_ovf = 1;
		} else if (!strcmp(a, "--cpu")) {
			const char *c = argv[++i];

			if (!c) {
				cli_err("dump", "--cpu: missing argument");
				return 2;
			}
			if (!strcmp(c, "none")) {
				memset(&cfg.cpu, 0, sizeof(cfg.cpu));
				have_cpu = 0;
			} else if (!strcmp(c, "auto")) {
				if (cpu_auto(&cfg.cpu) < 0) {
					cli_err("dump", "--cpu auto: cannot read the cpu here; "
							"give F/M instead");
					return 2;
				}
				have_cpu = 1;
			} else if (hwt_pt_cpu_parse(&cfg.cpu, c) < 0) {
				cli_err("dump",
					"--cpu: cpu must be given as F/M[/S] (decimal), "
					"not '%s'",
					c);
				return 2;
			} else {
				have_cpu = 1;
			}
		} else if (!strcmp(a, "--mtc-freq")) {
			if (arg_num(a, argv[++i], UINT8_MAX, &v) < 0)
				return 2;
			cfg.mtc_freq = (uint8_t)v;
		} else if (!strcmp(a, "--nom-freq")) {
			if (arg_num(a, argv[++i], UINT8_MAX, &v) < 0)
				return 2;
			cfg.nom_freq = (uint8_t)v;
		} else if (!strcmp(a, "--cpuid-0x15.eax")) {
			if (arg_num(a, argv[++i], UINT32_MAX, &v) < 0)
				return 2;
			cfg.cpuid_0x15_eax = (uint32_t)v;
		} else if (!strcmp(a, "--cpuid-0x15.ebx")) {
			if (arg_num(a, argv[++i], UINT32_MAX, &v) < 0)
				return 2;
			cfg.cpuid_0x15_ebx = (uint32_t)v;
		} else {
			cli_err("dump", "unknown option: %s", a);
			return cli_usage_error(usage_text);
		}
	}
	if (!file) {
		cli_err("dump", "no trace file given");
		return cli_usage_error(usage_text);
	}

	memset(&s, 0, sizeof(s));
	s.out.p = malloc(OUTBUF_SIZE);
	if (!s.out.p) {
		cli_err("dump", "out of memory");
		return 2;
	}
	if (have_cpu) {
		int err = hwt_pt_cpu_errata(&cfg.errata, &cfg.cpu);
		if (err < 0) {
			out_diag(&s.out, 0, "failed to determine errata", err);
			memset(&cfg.errata, 0, sizeof(cfg.errata));
		}
	}
	if (input_open(&in, file) < 0) {
		out_flush(&s.out);
		free(s.out.p);
		return 2;
	}
	if (in.size >= 8 && !memcmp(in.data, "PERFILE2", 8))
		rc = dump_perf_data(&s, &in, file, &cfg, &o, have_cpu, no_sync);
	else if (bts)
		rc = dump_bts(&s, &o, in.data, in.size);
	else if (spe)
		rc = dump_spe(&s, &o, in.data, in.size);
	else if (etm) {
		struct hwt_etm_source src;
		hwt_etm_source_default(&src, (uint8_t)trace_id);
		rc = etm_dump_buffer(&s, &src, 1, !etm_raw, in.data, in.size);
	} else
		rc = dump_buffer(&s, &cfg, &o, in.data, in.size, no_sync);
	out_flush(&s.out);
	if (fflush(stdout) != 0 || s.out.failed) {
		cli_err("dump", "writing the output failed: %s", strerror(errno));
		rc = 2;
	}
	input_close(&in);
	free(s.out.p);
	return rc;
}
