/* bench/bench_pkt.c - packet decoding speed: hwt vs libipt's pt_pkt_next.
 *
 * usage: bench_pkt FILE.data [SYN_MiB]   the real trace (the main line)
 *        bench_pkt [MiB]                 a synthetic stream only
 *
 * The real trace: each AUXTRACE queue of a perf.data (bench_rec.h: the
 * queue's chunks concatenated in memory, as the flow benches read them),
 * one stream per queue.  The synthetic stream (seeded, reproducible, at
 * least MiB MiB, hwt's encoder) has a realistic mix: mostly TNT-8 and
 * compressed TIPs (IPs from a small set of nearby "functions", compressed
 * with hwt_pt_ipc_for), some TNT-64, FUP and MODE.Exec, MTC/CYC timing
 * with occasional TSC/CBR, and a PSB+ (PSB, TSC, TMA, CBR, MODE.Exec,
 * FUP, PSBEND) every 4 KiB; with a file it is a diagnostic (SYN_MiB,
 * default 64, 0: none) whose figures go into the line's parenthesis.
 *
 * Times hwt's packet decoder (hwt_pt_pkt_next_batch, 256 packets per
 * call) and libipt's pt_pkt_next over the same bytes (all packets of
 * every stream; after a decode error both sync forward to the next PSB;
 * each payload is read into a checksum that must agree), best of 5 runs,
 * alternating, by the thread's CPU time (the rule for single-
 * thread figures: on a shared machine wall time includes time spent
 * descheduled), and prints exactly one line:
 *   pkt-decode: hwt <X> MB/s, libipt <Y> MB/s, ratio <X/Y> (...)
 * (MB = 10^6 bytes).  The consumer is the same on both sides: per packet
 * it reads the type, the size and the 16 bytes of the payload union and
 * adds them into a sum.  Diagnostics go to stderr: the packet mix, the
 * speed of hwt's one-packet-per-call hwt_pt_pkt_next, wall-clock figures,
 * and the scans that need no packet decode (sync_forward and
 * sync_backward PSB to PSB, and sync_forward over the stream with every
 * PSB broken: the resync after an error; and batch decoding of a 16 MiB
 * run of PADs), and the batch speed with the 64-byte chunk scan off (the
 * scalar chained loop).
 */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwt/pt_packet.h"
#include "pt/packet_int.h"

#include "bench_rec.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t put(uint8_t *out, const struct hwt_pt_packet *p)
{
	int n = hwt_pt_pkt_encode(out, HWT_PT_PKT_MAX_SIZE, p);
	if (n <= 0) {
		fprintf(stderr, "bench_pkt: cannot encode %s: %s\n", hwt_pt_pkt_name(p->type),
			hwt_errstr(n));
		exit(1);
	}
	return (size_t)n;
}

static size_t put_ip(uint8_t *out, int type, struct hwt_pt_last_ip *lip, uint64_t ip)
{
	static const uint64_t masks[7] = {0, 0xffff, 0xffffffff, 0xffffffffffff, 0xffffffffffff,
					  0, ~0ull};
	struct hwt_pt_packet p = {.type = (uint8_t)type};
	p.u.ip.ipc = hwt_pt_ipc_for(lip, ip);
	p.u.ip.ip = ip & masks[p.u.ip.ipc];
	hwt_pt_last_ip_update(lip, p.u.ip.ipc, p.u.ip.ip);
	return put(out, &p);
}

static uint8_t *make_stream(size_t want, size_t *len_out)
{
	uint8_t *b = malloc(want + 4096);
	uint64_t s = 0x1234567887654321ull, tsc = 0x1000000, ip = 0x401000;
	uint64_t funcs[64];
	struct hwt_pt_last_ip lip;
	size_t len = 0, next_psb = 0;
	if (!b)
		return NULL;
	for (int i = 0; i < 64; i++)
		funcs[i] = 0x400000 + (rnd(&s) % 0x200000); /* a 2 MiB text segment */
	funcs[63] = 0x7f12345678ull;			    /* a shared library far away */
	hwt_pt_last_ip_init(&lip);
	while (len < want) {
		struct hwt_pt_packet p = {0};
		if (len >= next_psb) {
			next_psb = (len / 4096 + 1) * 4096;
			p.type = HWT_PKT_PSB;
			len += put(b + len, &p);
			p = (struct hwt_pt_packet){.type = HWT_PKT_TSC, .u.tsc = {tsc += 5000}};
			len += put(b + len, &p);
			p = (struct hwt_pt_packet){
			    .type = HWT_PKT_TMA, .u.tma = {(uint16_t)tsc, (uint16_t)(tsc & 0x1ff)}};
			len += put(b + len, &p);
			p = (struct hwt_pt_packet){.type = HWT_PKT_CBR, .u.cbr = {0x20}};
			len += put(b + len, &p);
			p = (struct hwt_pt_packet){.type = HWT_PKT_MODE_EXEC,
						   .u.mode_exec = {1, 0, 1}};
			len += put(b + len, &p);
			hwt_pt_last_ip_init(&lip); /* PSB resets IP compression */
			len += put_ip(b + len, HWT_PKT_FUP, &lip, ip);
			p = (struct hwt_pt_packet){.type = HWT_PKT_PSBEND};
			len += put(b + len, &p);
			continue;
		}
		uint64_t x = rnd(&s), r = x % 1000;
		if (r < 520) { /* TNT-8 */
			p.type = HWT_PKT_TNT8;
			p.u.tnt.bits = (uint8_t)(1 + (x >> 12) % 6);
			p.u.tnt.payload = (x >> 20) & ((1u << p.u.tnt.bits) - 1);
		} else if (r < 740) { /* TIP to a nearby target */
			uint64_t f = funcs[(x >> 12) % 64];
			ip = f + ((x >> 24) & 0x3ff);
			len += put_ip(b + len, HWT_PKT_TIP, &lip, ip);
			continue;
		} else if (r < 770) {
			p.type = HWT_PKT_TNT64;
			p.u.tnt.bits = (uint8_t)(7 + (x >> 12) % 41);
			p.u.tnt.payload = (x >> 16) & ((1ull << p.u.tnt.bits) - 1);
		} else if (r < 790) {
			ip += (x >> 12) & 0xff;
			len += put_ip(b + len, HWT_PKT_FUP, &lip, ip);
			continue;
		} else if (r < 800) {
			p.type = HWT_PKT_MODE_EXEC;
			p.u.mode_exec.csl = 1;
			p.u.mode_exec.iflag = (x >> 12) & 1;
		} else if (r < 860) {
			p.type = HWT_PKT_MTC;
			p.u.mtc.ctc = (uint8_t)(tsc >> 8);
			tsc += 256;
		} else if (r < 990) {
			p.type = HWT_PKT_CYC;
			p.u.cyc.value = (x >> 12) & ((x >> 40) & 1 ? 0xfff : 0x1f);
		} else if (r < 995) {
			p.type = HWT_PKT_TSC;
			p.u.tsc.tsc = tsc += 1000;
		} else {
			p.type = HWT_PKT_CBR;
			p.u.cbr.ratio = (uint8_t)(0x18 + (x >> 12) % 16);
		}
		len += put(b + len, &p);
	}
	*len_out = len;
	return b;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: a diagnostic for a loaded machine, where
 * wall-clock time includes time spent descheduled. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
	uint64_t packets, sum, errors;
};

static inline void touch(struct result *res, const struct hwt_pt_packet *p)
{
	res->packets++;
	switch (p->type) {
	case HWT_PKT_TNT8:
	case HWT_PKT_TNT64:
		res->sum += p->u.tnt.payload + p->u.tnt.bits;
		break;
	case HWT_PKT_TIP:
	case HWT_PKT_TIP_PGE:
	case HWT_PKT_TIP_PGD:
	case HWT_PKT_FUP:
		res->sum += p->u.ip.ip + p->u.ip.ipc;
		break;
	case HWT_PKT_MTC:
		res->sum += p->u.mtc.ctc;
		break;
	case HWT_PKT_CYC:
		res->sum += p->u.cyc.value;
		break;
	case HWT_PKT_TSC:
		res->sum += p->u.tsc.tsc;
		break;
	default:
		res->sum += p->size;
	}
}

/* The timed consumers read type, size and the whole payload union (16
 * bytes for hwt and for libipt's largest common members) without
 * type-dependent branches, so both decoders pay the same consumer cost. */
static inline void touch_raw(struct result *res, unsigned type, unsigned size, const void *u)
{
	uint64_t w[2];
	memcpy(w, u, sizeof(w));
	res->packets++;
	res->sum += type + size + w[0] + w[1];
}

/* The streams measured: the real trace's queues, or one synthetic one. */
struct streams {
	const uint8_t **b;
	size_t *len, n, total;
};

/* batch: 0 = one hwt_pt_pkt_next() call per packet, else packets per
 * hwt_pt_pkt_next_batch() call.  check: per-type checksum (comparable with
 * libipt's), else the branch-free one.  simd: the batch loop's 64-byte
 * chunk scan (where the CPU has it).  After an error: sync forward. */
static void run_hwt_one(struct result *res, const uint8_t *b, size_t len, int batch, int check,
			int simd)
{
	struct hwt_pt_buf buf = {b, b + len, NULL, NULL};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	static struct hwt_pt_packet pk[256];
	int r;
	if (!dec) {
		fprintf(stderr, "bench_pkt: hwt cannot allocate a decoder: out of memory\n");
		exit(1);
	}
	pkt_set_simd(dec, simd);
	while (hwt_pt_pkt_sync_forward(dec) == 0) {
		if (check) {
			while ((r = hwt_pt_pkt_next_batch(dec, pk, 256)) > 0)
				for (int i = 0; i < r; i++)
					touch(res, &pk[i]);
		} else if (batch) {
			while ((r = hwt_pt_pkt_next_batch(dec, pk, batch)) > 0)
				for (int i = 0; i < r; i++)
					touch_raw(res, pk[i].type, pk[i].size, &pk[i].u);
		} else {
			while ((r = hwt_pt_pkt_next(dec, &pk[0])) > 0)
				touch_raw(res, pk[0].type, pk[0].size, &pk[0].u);
		}
		if (r == HWT_ERR_EOS)
			break;
		res->errors++;
	}
	hwt_pt_pkt_free(dec);
}

static struct result run_hwt_scan(const struct streams *s, int batch, int check, int simd)
{
	struct result res = {0, 0, 0};
	for (size_t i = 0; i < s->n; i++)
		run_hwt_one(&res, s->b[i], s->len[i], batch, check, simd);
	return res;
}

static struct result run_hwt(const struct streams *s, int batch, int check)
{
	return run_hwt_scan(s, batch, check, 1);
}

static void run_libipt_one(struct result *res, const uint8_t *b, size_t len, int check)
{
	struct pt_config cfg;
	struct pt_packet p;
	int r;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)b + len;
	struct pt_packet_decoder *dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec) {
		fprintf(stderr, "bench_pkt: libipt cannot allocate a decoder: out of memory\n");
		exit(1);
	}
	while (pt_pkt_sync_forward(dec) >= 0) {
		if (!check) {
			while ((r = pt_pkt_next(dec, &p, sizeof(p))) > 0)
				touch_raw(res, p.type, p.size, &p.payload);
		} else
			while ((r = pt_pkt_next(dec, &p, sizeof(p))) > 0) {
				res->packets++;
				switch (p.type) {
				case ppt_tnt_8:
				case ppt_tnt_64:
					res->sum += p.payload.tnt.payload + p.payload.tnt.bit_size;
					break;
				case ppt_tip:
				case ppt_tip_pge:
				case ppt_tip_pgd:
				case ppt_fup:
					res->sum += p.payload.ip.ip + p.payload.ip.ipc;
					break;
				case ppt_mtc:
					res->sum += p.payload.mtc.ctc;
					break;
				case ppt_cyc:
					res->sum += p.payload.cyc.value;
					break;
				case ppt_tsc:
					res->sum += p.payload.tsc.tsc;
					break;
				default:
					res->sum += p.size;
				}
			}
		if (r == -pte_eos)
			break;
		res->errors++;
	}
	pt_pkt_free_decoder(dec);
}

static struct result run_libipt(const struct streams *s, int check)
{
	struct result res = {0, 0, 0};
	for (size_t i = 0; i < s->n; i++)
		run_libipt_one(&res, s->b[i], s->len[i], check);
	return res;
}

/* The PSB scans: sync forward (or backward) through every stream, PSB
 * after PSB; best-of-3 thread CPU seconds, the number of PSBs in *n. */
static double time_sync(const struct streams *s, int backward, uint64_t *n)
{
	double best = 1e30;
	for (int i = 0; i < 3; i++) {
		uint64_t k = 0;
		double c0 = cpu_now();
		for (size_t j = 0; j < s->n; j++) {
			struct hwt_pt_buf buf = {s->b[j], s->b[j] + s->len[j], NULL, NULL};
			struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
			while ((backward ? hwt_pt_pkt_sync_backward(dec)
					 : hwt_pt_pkt_sync_forward(dec)) == 0)
				k++;
			hwt_pt_pkt_free(dec);
		}
		double c = cpu_now() - c0;
		if (c < best)
			best = c;
		*n = k;
	}
	return best;
}

/* The packet mix (stderr): count and bytes of each packet type. */
static void print_mix(const struct streams *s)
{
	uint64_t cnt[256] = {0}, bytes[256] = {0}, all = 0;
	static struct hwt_pt_packet pk[256];
	for (size_t j = 0; j < s->n; j++) {
		struct hwt_pt_buf buf = {s->b[j], s->b[j] + s->len[j], NULL, NULL};
		struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
		int r;
		while (dec && hwt_pt_pkt_sync_forward(dec) == 0)
			while ((r = hwt_pt_pkt_next_batch(dec, pk, 256)) > 0)
				for (int i = 0; i < r; i++) {
					cnt[pk[i].type]++;
					bytes[pk[i].type] += pk[i].size;
					all++;
				}
		hwt_pt_pkt_free(dec);
	}
	fprintf(stderr, "bench_pkt: packet mix:");
	for (int t = 0; t < 256; t++)
		if (cnt[t] * 1000 >= all)
			fprintf(stderr, " %s %.1f%% (%.1f%% of bytes)", hwt_pt_pkt_name(t),
				100.0 * (double)cnt[t] / (double)all,
				100.0 * (double)bytes[t] / (double)s->total);
	fprintf(stderr, "\n");
}

/* Best-of-runs CPU seconds of hwt (batch) and libipt over s, after an
 * untimed check that both see the same packets; the diagnostics (label:
 * what s is) on stderr.  full: all diagnostics, else hwt and libipt only. */
static void measure(const struct streams *s, const char *label, int runs, int full,
		    double *cpu_h_out, double *cpu_l_out, uint64_t *packets)
{
	double best_h = 1e30, best_l = 1e30, best_1 = 1e30, cpu_h = 1e30, cpu_l = 1e30,
	       cpu_s = 1e30;
	double mb = (double)s->total / 1e6;
	struct result rh, rl, r1 = {0, 0, 0};
	/* untimed: both decoders must see the same packets and payloads */
	rh = run_hwt(s, 256, 1);
	rl = run_libipt(s, 1);
	if (rh.packets != rl.packets || rh.sum != rl.sum || rh.errors != rl.errors)
		fprintf(stderr,
			"bench_pkt: %s: decoders disagree: hwt %" PRIu64 " packets (sum %" PRIx64
			", %" PRIu64 " errors), libipt %" PRIu64 " (sum %" PRIx64 ", %" PRIu64
			" errors)\n",
			label, rh.packets, rh.sum, rh.errors, rl.packets, rl.sum, rl.errors);
	for (int i = 0; i < runs; i++) {
		double c0 = cpu_now(), t0 = now();
		rh = run_hwt(s, 256, 0);
		double c1 = cpu_now(), t1 = now();
		rl = run_libipt(s, 0);
		double c2 = cpu_now(), t2 = now();
		if (c1 - c0 < cpu_h)
			cpu_h = c1 - c0;
		if (c2 - c1 < cpu_l)
			cpu_l = c2 - c1;
		if (t1 - t0 < best_h)
			best_h = t1 - t0;
		if (t2 - t1 < best_l)
			best_l = t2 - t1;
		if (!full)
			continue;
		r1 = run_hwt(s, 0, 0);
		double c3 = cpu_now();
		if (run_hwt_scan(s, 256, 0, 0).packets != rh.packets)
			fprintf(stderr, "bench_pkt: %s: packet counts disagree (chunk scan off)\n",
				label);
		if (cpu_now() - c3 < cpu_s)
			cpu_s = cpu_now() - c3;
		if (c3 - c2 < best_1)
			best_1 = c3 - c2;
	}
	if (rh.packets != rl.packets || (full && rh.packets != r1.packets))
		fprintf(stderr, "bench_pkt: %s: packet counts disagree\n", label);
	fprintf(stderr,
		"bench_pkt: %s: %zu bytes in %zu streams, %" PRIu64
		" packets (%.2f bytes/packet), %" PRIu64 " decode errors\n",
		label, s->total, s->n, rh.packets, (double)s->total / (double)rh.packets,
		rh.errors);
	fprintf(stderr, "bench_pkt: %s: hwt batch %.0f MB/s, libipt %.0f MB/s (CPU time)\n", label,
		mb / cpu_h, mb / cpu_l);
	fprintf(stderr, "bench_pkt: %s: by wall time: hwt %.0f MB/s, libipt %.0f MB/s\n", label,
		mb / best_h, mb / best_l);
	*cpu_h_out = cpu_h;
	*cpu_l_out = cpu_l;
	*packets = rh.packets;
	if (!full)
		return;
	print_mix(s);
	fprintf(stderr, "bench_pkt: %s: hwt one packet per call (hwt_pt_pkt_next): %.0f MB/s\n",
		label, mb / best_1);
	struct hwt_pt_buf probe = {s->b[0], s->b[0] + s->len[0], NULL, NULL};
	struct hwt_pt_pkt_decoder *pd = hwt_pt_pkt_alloc(&probe);
	fprintf(stderr, "bench_pkt: %s: hwt batch, chunk scan %s; with it off: %.0f MB/s\n", label,
		pd && pkt_set_simd(pd, 1) ? "on (AVX-512 VBMI, VBMI2)" : "not available here", mb / cpu_s);
	hwt_pt_pkt_free(pd);
	/* scans at memory speed: PSB search forward and backward */
	uint64_t npsb;
	double tf = time_sync(s, 0, &npsb);
	fprintf(stderr, "bench_pkt: %s: sync_forward PSB to PSB: %.0f MB/s (%" PRIu64 " PSBs)\n",
		label, mb / tf, npsb);
	double tb = time_sync(s, 1, &npsb);
	fprintf(stderr, "bench_pkt: %s: sync_backward PSB to PSB: %.0f MB/s (%" PRIu64 " PSBs)\n",
		label, mb / tb, npsb);
}

/* The resync after an error where no PSB follows: sync_forward over a
 * copy of the streams with every PSB broken. */
static void measure_resync(const struct streams *s, const char *label)
{
	struct streams c = *s;
	uint8_t **cb = calloc(s->n, sizeof(*cb));
	uint64_t npsb;
	int ok = cb != NULL;
	for (size_t j = 0; ok && j < s->n; j++) {
		uint8_t *b = cb[j] = malloc(s->len[j] ? s->len[j] : 1);
		if (!b) {
			ok = 0;
			break;
		}
		memcpy(b, s->b[j], s->len[j]);
		for (size_t i = 0; i + 16 <= s->len[j]; i++)
			if (b[i] == 0x02 && b[i + 1] == 0x82 && b[i + 15] == 0x82)
				b[i + 15] = 0x83;
	}
	if (ok) {
		c.b = (const uint8_t **)cb;
		double tn = time_sync(&c, 0, &npsb);
		fprintf(stderr,
			"bench_pkt: %s: sync_forward with no PSB (resync scan): %.0f MB/s\n", label,
			(double)s->total / 1e6 / tn);
	}
	for (size_t j = 0; cb && j < s->n; j++)
		free(cb[j]);
	free(cb);
}

/* A zero-filled gap (16 MiB of PADs after a PSB), batch decoded. */
static void measure_pads(void)
{
	size_t zlen = (size_t)16 << 20;
	uint8_t *z = calloc(1, zlen);
	if (!z)
		return;
	const uint8_t *zb = z;
	struct streams s = {&zb, &zlen, 1, zlen};
	double bz = 1e30;
	memset(z, 0x02, 16);
	for (int i = 1; i < 16; i += 2)
		z[i] = 0x82;
	for (int i = 0; i < 3; i++) {
		double c0 = cpu_now();
		run_hwt(&s, 256, 0);
		double c = cpu_now() - c0;
		if (c < bz)
			bz = c;
	}
	fprintf(stderr, "bench_pkt: a run of PADs, batch decoded: %.0f MB/s\n",
		(double)zlen / 1e6 / bz);
	free(z);
}

static void no_map(void *arg, const char *path, uint64_t pgoff, uint64_t len, uint64_t addr)
{
	(void)arg, (void)path, (void)pgoff, (void)len, (void)addr;
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	const char *file = argc > 1 && !is_number(argv[1]) ? argv[1] : NULL;
	size_t syn_mib = file ? (argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 64)
			      : (argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 256);
	struct bench_rec br;
	struct streams real = {0}, syn = {0};
	uint8_t *sb = NULL;
	const uint8_t *sbc;
	size_t slen = 0;
	double h = 0, l = 0, sh = 0, sl = 0;
	uint64_t pk = 0, spk = 0;

	if (file) {
		if (bench_rec_load(&br, "bench_pkt", file, no_map, NULL))
			return 1;
		real.b = calloc(br.nq + 1, sizeof(*real.b));
		real.len = calloc(br.nq + 1, sizeof(*real.len));
		if (!real.b || !real.len) {
			fprintf(stderr, "bench_pkt: out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < br.nq; i++)
			if (br.qs[i].n) {
				real.b[real.n] = br.qs[i].d;
				real.len[real.n++] = br.qs[i].n;
				real.total += br.qs[i].n;
			}
		if (!real.total) {
			fprintf(stderr,
				"bench_pkt: %s: no AUXTRACE data: record with -e intel_pt\n", file);
			return 1;
		}
		measure(&real, "real trace", 5, 1, &h, &l, &pk);
		measure_resync(&real, "real trace");
	}
	if (syn_mib) {
		sb = make_stream(syn_mib << 20, &slen);
		if (!sb) {
			fprintf(stderr, "bench_pkt: out of memory\n");
			return 1;
		}
		sbc = sb;
		syn = (struct streams){&sbc, &slen, 1, slen};
		measure(&syn, "synthetic", file ? 3 : 5, !file, &sh, &sl, &spk);
		if (!file)
			measure_resync(&syn, "synthetic");
	}
	measure_pads();
	if (file) {
		printf("pkt-decode: hwt %.0f MB/s, libipt %.0f MB/s, ratio %.2f (%.0f MB of real "
		       "trace: the AUXTRACE data of %s, %.2f bytes/packet; CPU time, best of 5",
		       (double)real.total / 1e6 / h, (double)real.total / 1e6 / l, l / h,
		       (double)real.total / 1e6, file, (double)real.total / (double)pk);
		if (syn_mib)
			printf("; synthetic %zu MiB mix: hwt %.0f MB/s, libipt %.0f MB/s", syn_mib,
			       (double)slen / 1e6 / sh, (double)slen / 1e6 / sl);
		printf(")\n");
		bench_rec_free(&br);
	} else
		printf("pkt-decode: hwt %.0f MB/s, libipt %.0f MB/s, ratio %.2f (synthetic %zu MiB "
		       "mix, %.2f bytes/packet; CPU time, best of 5)\n",
		       (double)slen / 1e6 / sh, (double)slen / 1e6 / sl, sl / sh, syn_mib,
		       (double)slen / (double)spk);
	free(real.b);
	free(real.len);
	free(sb);
	return 0;
}
