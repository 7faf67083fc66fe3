/* tests/unit/test_out_fmt.c - the formatting primitives and line
 * formatters of lib/out (out.h, branches.c, insn.c, calls.c) against
 * snprintf: edge values of every hex width and decimal length, the bytes
 * they may and may not write, and whole lines through the output buffer
 * (with flushes across a small buffer). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out/out.h"
#include "t.h"

/* Edge values: 0, 1, 0xf, 2^64-1, and for every hex width 1..16 its
 * smallest and largest value and a mixed pattern; every power of ten
 * and its neighbours; some pseudo-random values. */
static size_t edge_values(uint64_t *v, size_t max)
{
	size_t n = 0;
	v[n++] = 0;
	v[n++] = 1;
	v[n++] = 0xf;
	v[n++] = 0x10;
	v[n++] = UINT64_MAX;
	v[n++] = UINT64_MAX - 1;
	for (unsigned w = 1; w <= 16; w++) {
		uint64_t lo = 1ull << (4 * (w - 1)),
			 hi = w == 16 ? UINT64_MAX : (1ull << (4 * w)) - 1;
		v[n++] = lo;
		v[n++] = hi;
		v[n++] = 0xfedcba9876543210ull >> (4 * (16 - w));
		v[n++] = 0x0123456789abcdefull & hi;
		v[n++] = (0xa5a5a5a5a5a5a5a5ull & hi) | lo;
	}
	uint64_t p = 1;
	for (int d = 0; d < 20; d++, p *= 10) {
		v[n++] = p;
		v[n++] = p - 1;
		v[n++] = p + 1;
	}
	uint64_t x = 0x9e3779b97f4a7c15ull;
	while (n < max) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		v[n++] = x >> (x & 63);
	}
	return n;
}

static void t_hex16(void)
{
	uint64_t v[400];
	size_t n = edge_values(v, 400);
	for (size_t i = 0; i < n; i++) {
		char want[32], a[17] = {0}, b[17] = {0};
		snprintf(want, sizeof(want), "%016" PRIx64, v[i]);
		hwt_fmt_hex16(a, v[i]);
		hwt_fmt_hex16_swar(b, v[i]);
		CHECKF(!memcmp(a, want, 16), "hex16 %s: %.16s", want, a);
		CHECKF(!memcmp(b, want, 16), "hex16_swar %s: %.16s", want, b);
	}
}

static void t_hex(void)
{
	uint64_t v[400];
	size_t n = edge_values(v, 400);
	for (size_t i = 0; i < n; i++) {
		char want[32], got[32];
		memset(got, '#', sizeof(got));
		int wl = snprintf(want, sizeof(want), "0x%" PRIx64, v[i]);
		size_t gl = hwt_fmt_hex(got, v[i]);
		CHECKF(gl == (size_t)wl && !memcmp(got, want, gl), "hex %s: %.*s", want, (int)gl,
		       got);
		/* 18 bytes written at most */
		CHECKF(got[18] == '#', "hex %s wrote past 18 bytes", want);
	}
	/* every width: the number of digits */
	for (unsigned w = 1; w <= 16; w++) {
		char got[32];
		CHECK_EQ(hwt_fmt_hex(got, 1ull << (4 * (w - 1))), 2 + w);
		CHECK_EQ(hwt_fmt_hex(got, w == 16 ? UINT64_MAX : (1ull << (4 * w)) - 1), 2 + w);
	}
}

static void t_dec(void)
{
	uint64_t v[400];
	size_t n = edge_values(v, 400);
	for (size_t i = 0; i < n; i++) {
		char want[32], got[32];
		memset(got, '#', sizeof(got));
		int wl = snprintf(want, sizeof(want), "%" PRIu64, v[i]);
		size_t gl = hwt_fmt_dec(got, v[i]);
		CHECKF(gl == (size_t)wl && !memcmp(got, want, gl), "dec %s: %.*s", want, (int)gl,
		       got);
		CHECKF(got[gl] == '#', "dec %s wrote past its digits", want);
	}
}

/* An output buffer over a temporary file; take() reads what was written. */
static int tmp_fd(void)
{
	FILE *f = tmpfile();
	return f ? dup(fileno(f)) : -1; /* the FILE stays open (test only) */
}

static char *take(struct hwt_outbuf *o, int fd, size_t *len)
{
	hwt_outbuf_fini(o);
	off_t end = lseek(fd, 0, SEEK_END);
	char *s = malloc((size_t)end + 1);
	if (!s)
		return NULL;
	*len = (size_t)pread(fd, s, (size_t)end, 0);
	s[*len] = 0;
	close(fd);
	return s;
}

static const char *const kinds[] = {"jcc", "jmp", "ijmp", "call", "icall", "ret", "far", "async"};

/* got (gl bytes, freed) must equal want (wl bytes, freed); the first
 * difference is reported with its context */
static void same_output(char *got, size_t gl, char *want, size_t wl)
{
	CHECK(got && gl == wl);
	if (got)
		for (size_t i = 0; i < wl && i < gl; i++)
			if (got[i] != want[i]) {
				size_t s = i > 60 ? i - 60 : 0;
				CHECKF(0,
				       "first difference at byte %zu: got '%.120s' want '%.120s'",
				       i, got + s, want + s);
				break;
			}
	free(got);
	free(want);
}

/* Whole tsv lines, one by one and in batches (also printed outside the
 * buffer, as the decoding threads of -jN do, and written into it), across
 * many flushes of a small buffer and with no buffer, with the thread
 * changing; batches by the loop simd (enum hwt_out_simd). */
static void tsv_lines(int simd)
{
	uint64_t v[400];
	size_t n = edge_values(v, 400);
	struct hwt_dec_branch br[400];
	memset(br, 0, sizeof(br));
	for (size_t i = 0; i < n; i++) {
		br[i].from = v[i];
		br[i].to = v[(i * 7 + 3) % n];
		/* and unknown kinds (every byte value) */
		br[i].kind = (uint8_t)(i % 3 ? i % (HWT_BR_NKINDS + 2) : i * 37);
	}
	static const uint32_t tids[] = {0, 1, 9672, 4294967295u, 1234567};
	size_t wcap = 8 << 20, wl = 0;
	char *want = malloc(wcap), text[64 * 400];
	int fd = tmp_fd();
	struct hwt_outbuf o;
	CHECK(want && fd >= 0 && !hwt_outbuf_init(&o, fd, 0)); /* the smallest buffer */
	if (!want || fd < 0)
		return;
	o.simd = (uint8_t)simd;
	for (int rep = 0; rep < 20; rep++)
		for (size_t k = 0; k < 5; k++) {
			uint32_t tid = tids[(k + (size_t)rep) % 5];
			for (size_t i = 0; i < n; i++)
				wl += (size_t)snprintf(
				    want + wl, wcap - wl,
				    "%" PRIu32 "\t0x%" PRIx64 "\t0x%" PRIx64 "\t%s\n", tid,
				    br[i].from, br[i].to,
				    br[i].kind < HWT_BR_NKINDS ? kinds[br[i].kind] : "?");
			if (rep % 4 == 2) { /* printed elsewhere, then written */
				struct hwt_dec_thread th = {0, tid, NULL};
				char *tx = malloc(n * HWT_OUT_TSV_LINE);
				CHECK(tx != NULL);
				if (!tx)
					return;
				size_t a = hwt_out_branches_tsv_text(NULL, &th, br, 5, NULL, tx);
				hwt_outbuf_write(&o, tx, a); /* (copied) */
				a = hwt_out_branches_tsv_text(NULL, &th, br + 5, n - 5, NULL, tx);
				hwt_outbuf_write(&o, tx, a); /* (written from tx) */
				free(tx);
			} else if (rep % 3 == 1) {
				hwt_out_branches_tsv(&o, tid, br, n / 3);
				hwt_out_branches_tsv(&o, tid, br + n / 3, n - n / 3);
			} else if (rep % 3 == 2) { /* no buffer */
				size_t bl = hwt_fmt_branches_tsv(text, tid, br, n, simd);
				CHECK(bl <= 64 * n);
				hwt_out_mem(&o, text, bl);
			} else {
				for (size_t i = 0; i < n; i++)
					hwt_out_branch_tsv(&o, tid, br[i].from, br[i].to,
							   br[i].kind);
			}
		}
	size_t gl;
	char *got = take(&o, fd, &gl);
	same_output(got, gl, want, wl);
}

static void t_tsv_lines(void)
{
	tsv_lines(HWT_OUT_PORTABLE);
}

static void t_tsv_lines_ssse3(void)
{
	tsv_lines(HWT_OUT_SSSE3);
}

static void t_tsv_lines_avx512(void)
{
	tsv_lines(HWT_OUT_AVX512);
}

/* Text lines (with and without time; symbols known, unknown, long) and
 * instruction, call and return lines, against snprintf. */
static void t_text_lines(void)
{
	uint64_t v[400];
	size_t n = edge_values(v, 400);
	char longsym[1500];
	memset(longsym, 's', sizeof(longsym) - 1);
	longsym[sizeof(longsym) - 1] = 0;
	const char *syms[] = {"main", NULL, "_dl_start", longsym, "x", ""};
	size_t wcap = 8 << 20, wl = 0;
	char *want = malloc(wcap);
	int fd = tmp_fd();
	struct hwt_outbuf o;
	CHECK(want && fd >= 0 && !hwt_outbuf_init(&o, fd, 0));
	if (!want || fd < 0)
		return;
	char fs[1600], ts[1600];
	for (size_t i = 0; i < n; i++) {
		uint32_t tid = i % 5 == 4 ? 123456789u : i % 3 ? 42 : (uint32_t)i;
		/* times: repeated, changing, at second boundaries, huge */
		uint64_t t = i % 4 == 0 ? v[i] : i % 4 == 1 ? v[i] % 3000000000u : 1000000000u * i;
		int have_time = i % 5 != 2;
		struct hwt_out_loc a = {v[i], syms[i % 6], v[(i + 1) % n], NULL};
		struct hwt_out_loc b = {v[(i + 5) % n], syms[(i + 1) % 6], i, NULL};
		int kind = (int)(i % (HWT_BR_NKINDS + 1));
		const char *kn = kind < HWT_BR_NKINDS ? kinds[kind] : "?";
		char tb[40] = "";
		if (have_time)
			snprintf(tb, sizeof(tb), "%" PRIu64 ".%09" PRIu64 " ", t / 1000000000u,
				 t % 1000000000u);
		if (a.sym)
			snprintf(fs, sizeof(fs), "%s+0x%" PRIx64, a.sym, a.off);
		else
			snprintf(fs, sizeof(fs), "[unknown]");
		if (b.sym)
			snprintf(ts, sizeof(ts), "%s+0x%" PRIx64, b.sym, b.off);
		else
			snprintf(ts, sizeof(ts), "[unknown]");
		wl += (size_t)snprintf(want + wl, wcap - wl,
				       "%7" PRIu32 " %s%-6s0x%" PRIx64 " (%s) => 0x%" PRIx64
				       " (%s)\n",
				       tid, tb, kn, a.ip, fs, b.ip, ts);
		hwt_out_branch_text(&o, tid, have_time, t, kind, &a, &b);
		wl += (size_t)snprintf(want + wl, wcap - wl, "%7" PRIu32 " %s0x%" PRIx64 " %s\n",
				       tid, tb, a.ip, fs);
		hwt_out_insn(&o, tid, have_time, t, &a, 0, NULL, 0, 64);
		unsigned depth = (unsigned)(i % 7);
		wl += (size_t)snprintf(want + wl, wcap - wl,
				       "%7" PRIu32 " %s%*scall 0x%" PRIx64 " => 0x%" PRIx64 " %s\n",
				       tid, tb, 2 * (int)depth, "", a.ip, b.ip, ts);
		hwt_out_call(&o, tid, have_time, t, depth, &a, &b);
		wl += (size_t)snprintf(want + wl, wcap - wl,
				       "%7" PRIu32 " %s%*sret  0x%" PRIx64 " => 0x%" PRIx64
				       " %s [%" PRIu64 " ns]\n",
				       tid, tb, 2 * (int)depth, "", a.ip, b.ip, ts, v[i]);
		hwt_out_ret(&o, tid, have_time, t, depth, &a, &b, 1, v[i]);
		/* a tsv line between: the thread prefix is per format */
		wl += (size_t)snprintf(want + wl, wcap - wl,
				       "%" PRIu32 "\t0x%" PRIx64 "\t0x0\tjcc\n", tid, a.ip);
		hwt_out_branch_tsv(&o, tid, a.ip, 0, HWT_BR_JCC);
	}
	size_t gl;
	char *got = take(&o, fd, &gl);
	same_output(got, gl, want, wl);
}

/* hwt_out_dec's widths and hwt_out_time_ns alone. */
static void t_dec_time(void)
{
	uint64_t v[400];
	size_t n = edge_values(v, 400);
	size_t wcap = 1 << 20, wl = 0;
	char *want = malloc(wcap);
	int fd = tmp_fd();
	struct hwt_outbuf o;
	CHECK(want && fd >= 0 && !hwt_outbuf_init(&o, fd, 0));
	if (!want || fd < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		int w = (int)(i % 25);
		wl += (size_t)snprintf(want + wl, wcap - wl,
				       "%*" PRIu64 "|%" PRIu64 ".%09" PRIu64 "|", w, v[i],
				       v[i] / 1000000000u, v[i] % 1000000000u);
		hwt_out_dec(&o, v[i], w);
		hwt_out_char(&o, '|');
		hwt_out_time_ns(&o, v[i]);
		hwt_out_char(&o, '|');
	}
	size_t gl;
	char *got = take(&o, fd, &gl);
	same_output(got, gl, want, wl);
}

int main(void)
{
	RUN(t_hex16);
	RUN(t_hex);
	RUN(t_dec);
	RUN(t_tsv_lines);
	if (hwt_out_simd_supported() >= HWT_OUT_SSSE3)
		RUN(t_tsv_lines_ssse3);
	else
		printf("SKIP t_tsv_lines_ssse3: this CPU has no SSSE3\n");
	if (hwt_out_simd_supported() >= HWT_OUT_AVX512)
		RUN(t_tsv_lines_avx512);
	else
		printf("SKIP t_tsv_lines_avx512: this CPU has no AVX-512 (VBMI, CD, VL)\n");
	RUN(t_text_lines);
	RUN(t_dec_time);
	return t_done();
}
