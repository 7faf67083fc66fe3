/* bench/bench_pkt.c - packet decoding speed: hwt vs libipt's pt_pkt_next.
 *
 * Builds (seeded, reproducible) a PT stream of at least 256 MiB with hwt's
 * encoder and a realistic mix: mostly TNT-8 and compressed TIPs (IPs from
 * a small set of nearby "functions", compressed with hwt_pt_ipc_for), some
 * TNT-64, FUP and MODE.Exec, MTC/CYC timing with occasional TSC/CBR, and a
 * PSB+ (PSB, TSC, TMA, CBR, MODE.Exec, FUP, PSBEND) every 4 KiB.  Then
 * times hwt's packet decoder (hwt_pt_pkt_next_batch, 256 packets per call)
 * and libipt's pt_pkt_next over the same bytes (all packets, each payload
 * is read into a checksum that must agree), best of 5 runs, alternating,
 * by the thread's CPU time (the rule for single-thread figures:
 * on a shared machine wall time includes time spent descheduled), and
 * prints exactly one line:
 *   pkt-decode: hwt <X> MB/s, libipt <Y> MB/s, ratio <X/Y>
 * (MB = 10^6 bytes).  The consumer is the same on both sides: per packet
 * it reads the type, the size and the 16 bytes of the payload union and
 * adds them into a sum.  Diagnostics go to stderr: the speed of hwt's one-
 * packet-per-call hwt_pt_pkt_next, wall-clock figures, and the scans that
 * need no packet decode (sync_forward and sync_backward PSB to PSB, and
 * sync_forward over the stream with every PSB broken: the resync after
 * an error; and batch decoding of a 16 MiB run of PADs), and the batch
 * speed with the 64-byte chunk scan off (the scalar chained loop).
 * usage: bench_pkt [MiB]
 */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hwt/pt_packet.h"
#include "pt/packet_int.h"

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
	uint64_t packets, sum;
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

/* batch: 0 = one hwt_pt_pkt_next() call per packet, else packets per
 * hwt_pt_pkt_next_batch() call.  check: per-type checksum (comparable with
 * libipt's), else the branch-free one.  simd: the batch loop's 64-byte
 * chunk scan (where the CPU has it). */
static struct result run_hwt_scan(const uint8_t *b, size_t len, int batch, int check, int simd)
{
	struct hwt_pt_buf buf = {b, b + len, NULL, NULL};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	struct result res = {0, 0};
	static struct hwt_pt_packet pk[256];
	int r;
	if (!dec || hwt_pt_pkt_sync_forward(dec) < 0) {
		fprintf(stderr, "bench_pkt: hwt cannot sync\n");
		exit(1);
	}
	pkt_set_simd(dec, simd);
	if (check) {
		while ((r = hwt_pt_pkt_next_batch(dec, pk, 256)) > 0)
			for (int i = 0; i < r; i++)
				touch(&res, &pk[i]);
	} else if (batch) {
		while ((r = hwt_pt_pkt_next_batch(dec, pk, batch)) > 0)
			for (int i = 0; i < r; i++)
				touch_raw(&res, pk[i].type, pk[i].size, &pk[i].u);
	} else {
		while ((r = hwt_pt_pkt_next(dec, &pk[0])) > 0)
			touch_raw(&res, pk[0].type, pk[0].size, &pk[0].u);
	}
	if (r != HWT_ERR_EOS)
		fprintf(stderr, "bench_pkt: hwt stopped: %s\n", hwt_errstr(r));
	hwt_pt_pkt_free(dec);
	return res;
}

static struct result run_hwt(const uint8_t *b, size_t len, int batch, int check)
{
	return run_hwt_scan(b, len, batch, check, 1);
}

static struct result run_libipt(const uint8_t *b, size_t len, int check)
{
	struct pt_config cfg;
	struct pt_packet p;
	struct result res = {0, 0};
	int r;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)b;
	cfg.end = (uint8_t *)b + len;
	struct pt_packet_decoder *dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec || pt_pkt_sync_forward(dec) < 0) {
		fprintf(stderr, "bench_pkt: libipt cannot sync\n");
		exit(1);
	}
	if (!check) {
		while ((r = pt_pkt_next(dec, &p, sizeof(p))) > 0)
			touch_raw(&res, p.type, p.size, &p.payload);
	} else
		while ((r = pt_pkt_next(dec, &p, sizeof(p))) > 0) {
			res.packets++;
			switch (p.type) {
			case ppt_tnt_8:
			case ppt_tnt_64:
				res.sum += p.payload.tnt.payload + p.payload.tnt.bit_size;
				break;
			case ppt_tip:
			case ppt_tip_pge:
			case ppt_tip_pgd:
			case ppt_fup:
				res.sum += p.payload.ip.ip + p.payload.ip.ipc;
				break;
			case ppt_mtc:
				res.sum += p.payload.mtc.ctc;
				break;
			case ppt_cyc:
				res.sum += p.payload.cyc.value;
				break;
			case ppt_tsc:
				res.sum += p.payload.tsc.tsc;
				break;
			default:
				res.sum += p.size;
			}
		}
	if (r != -pte_eos)
		fprintf(stderr, "bench_pkt: libipt stopped: %s\n", pt_errstr(pt_errcode(r)));
	pt_pkt_free_decoder(dec);
	return res;
}

/* The PSB scans: sync forward (or backward) through the whole stream,
 * PSB after PSB; best-of-3 thread CPU seconds, the number of PSBs in
 * *n. */
static double time_sync(const uint8_t *b, size_t len, int backward, uint64_t *n)
{
	struct hwt_pt_buf buf = {b, b + len, NULL, NULL};
	double best = 1e30;
	for (int i = 0; i < 3; i++) {
		struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
		uint64_t k = 0;
		double c0 = cpu_now();
		while ((backward ? hwt_pt_pkt_sync_backward(dec) : hwt_pt_pkt_sync_forward(dec)) ==
		       0)
			k++;
		double c = cpu_now() - c0;
		if (c < best)
			best = c;
		*n = k;
		hwt_pt_pkt_free(dec);
	}
	return best;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 256, len;
	uint8_t *b = make_stream((mib ? mib : 1) << 20, &len);
	double best_h = 1e30, best_l = 1e30, best_1 = 1e30, cpu_h = 1e30, cpu_l = 1e30,
	       cpu_s = 1e30;
	struct result rh = {0, 0}, rl = {0, 0}, r1 = {0, 0};
	if (!b) {
		fprintf(stderr, "bench_pkt: out of memory\n");
		return 1;
	}
	/* untimed: both decoders must see the same packets and payloads */
	rh = run_hwt(b, len, 256, 1);
	rl = run_libipt(b, len, 1);
	if (rh.packets != rl.packets || rh.sum != rl.sum)
		fprintf(stderr,
			"bench_pkt: decoders disagree: hwt %" PRIu64 " packets (sum %" PRIx64
			"), libipt %" PRIu64 " (sum %" PRIx64 ")\n",
			rh.packets, rh.sum, rl.packets, rl.sum);
	for (int i = 0; i < 5; i++) {
		double c0 = cpu_now(), t0 = now();
		rh = run_hwt(b, len, 256, 0);
		double c1 = cpu_now(), t1 = now();
		rl = run_libipt(b, len, 0);
		double c2 = cpu_now(), t2 = now();
		if (c1 - c0 < cpu_h)
			cpu_h = c1 - c0;
		if (c2 - c1 < cpu_l)
			cpu_l = c2 - c1;
		r1 = run_hwt(b, len, 0, 0);
		double c3 = cpu_now();
		if (run_hwt_scan(b, len, 256, 0, 0).packets != rh.packets)
			fprintf(stderr, "bench_pkt: packet counts disagree (chunk scan off)\n");
		if (cpu_now() - c3 < cpu_s)
			cpu_s = cpu_now() - c3;
		if (t1 - t0 < best_h)
			best_h = t1 - t0;
		if (t2 - t1 < best_l)
			best_l = t2 - t1;
		if (c3 - c2 < best_1)
			best_1 = c3 - c2;
	}
	if (rh.packets != r1.packets || rh.packets != rl.packets)
		fprintf(stderr, "bench_pkt: packet counts disagree\n");
	fprintf(stderr, "bench_pkt: %zu bytes, %" PRIu64 " packets (%.2f bytes/packet)\n", len,
		rh.packets, (double)len / (double)rh.packets);
	double x = (double)len / 1e6 / cpu_h, y = (double)len / 1e6 / cpu_l;
	fprintf(stderr, "bench_pkt: hwt one packet per call (hwt_pt_pkt_next): %.0f MB/s\n",
		(double)len / 1e6 / best_1);
	struct hwt_pt_buf probe = {b, b + len, NULL, NULL};
	struct hwt_pt_pkt_decoder *pd = hwt_pt_pkt_alloc(&probe);
	fprintf(stderr, "bench_pkt: hwt batch, chunk scan %s; with it off: %.0f MB/s\n",
		pd && pkt_set_simd(pd, 1) ? "on (AVX-512 VBMI)" : "not available here",
		(double)len / 1e6 / cpu_s);
	hwt_pt_pkt_free(pd);
	fprintf(stderr, "bench_pkt: by wall time: hwt %.0f MB/s, libipt %.0f MB/s\n",
		(double)len / 1e6 / best_h, (double)len / 1e6 / best_l);
	/* scans at memory speed: PSB search forward and backward, and the
	 * resync after an error where no PSB follows (every PSB broken) */
	uint64_t npsb;
	double tf = time_sync(b, len, 0, &npsb);
	fprintf(stderr, "bench_pkt: sync_forward PSB to PSB: %.0f MB/s (%" PRIu64 " PSBs)\n",
		(double)len / 1e6 / tf, npsb);
	double tb = time_sync(b, len, 1, &npsb);
	fprintf(stderr, "bench_pkt: sync_backward PSB to PSB: %.0f MB/s (%" PRIu64 " PSBs)\n",
		(double)len / 1e6 / tb, npsb);
	for (size_t i = 0; i + 16 <= len; i++)
		if (b[i] == 0x02 && b[i + 1] == 0x82 && b[i + 15] == 0x82)
			b[i + 15] = 0x83;
	double tn = time_sync(b, len, 0, &npsb);
	fprintf(stderr, "bench_pkt: sync_forward with no PSB (resync scan): %.0f MB/s\n",
		(double)len / 1e6 / tn);
	/* a zero-filled gap (16 MiB of PADs after a PSB), batch decoded */
	size_t zlen = (size_t)16 << 20;
	uint8_t *z = calloc(1, zlen);
	if (z) {
		double bz = 1e30;
		memset(z, 0x02, 16);
		for (int i = 1; i < 16; i += 2)
			z[i] = 0x82;
		for (int i = 0; i < 3; i++) {
			double c0 = cpu_now();
			run_hwt(z, zlen, 256, 0);
			double c = cpu_now() - c0;
			if (c < bz)
				bz = c;
		}
		fprintf(stderr, "bench_pkt: a run of PADs, batch decoded: %.0f MB/s\n",
			(double)zlen / 1e6 / bz);
		free(z);
	}
	printf("pkt-decode: hwt %.0f MB/s, libipt %.0f MB/s, ratio %.2f\n", x, y, x / y);
	free(b);
	return 0;
}
