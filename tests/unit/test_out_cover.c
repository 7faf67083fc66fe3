/* tests/unit/test_out_cover.c - the coverage writers (lib/out/lcov.c,
 * drcov.c).  lcov: this test program's own code (built with -g) is the
 * image; a function's instructions, walked with the x86 decoder, are fed
 * with counts, and the tracefile must name this file, the function with
 * its execution count, every line of the function's instructions (as the
 * image's line table gives them) with the fed count, and per conditional
 * branch the taken / not-taken split.  drcov: blocks of a file mapped at
 * a known address come out as (file offset, size, module) entries, once
 * each; blocks outside files are left out. */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/image.h"
#include "hwt/x86.h"
#include "out/cover.h"
#include "t.h"

int probe(int n);
static const int probe_first_line = __LINE__ + 1;
__attribute__((noinline)) int probe(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		if (i & 1)
			s += i;
	return s;
}
static const int probe_last_line = __LINE__ - 1;

static int first_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;
}

static char *slurp(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *s = malloc((size_t)n + 1);
	if (s && pread(fd, s, (size_t)n, 0) != n) {
		free(s);
		return NULL;
	}
	if (s)
		s[n] = 0;
	*len = (size_t)n;
	return s;
}

static char *write_to_mem(int (*fn)(void *, struct hwt_outbuf *), void *w, size_t *len)
{
	char path[] = "/tmp/hwt-cover-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	struct hwt_outbuf o;
	char *s = NULL;
	if (!hwt_outbuf_init(&o, fd, 8192) && !fn(w, &o)) {
		hwt_outbuf_fini(&o);
		s = slurp(fd, len);
	}
	close(fd);
	return s;
}

static int lcov_w(void *w, struct hwt_outbuf *o)
{
	return hwt_lcov_write(w, o, "t");
}
static int drcov_w(void *w, struct hwt_outbuf *o)
{
	return hwt_drcov_write(w, o);
}

static const int main_line;
static void t_lcov(void)
{
	CHECK_EQ(probe(5), 4);
	uintptr_t bias = 0;
	dl_iterate_phdr(first_bias, &bias);
	uint64_t entry = (uint64_t)((uintptr_t)probe - bias);
	struct hwt_image *img = hwt_image_alloc();
	CHECK_EQ(hwt_image_add_elf(img, "/proc/self/exe", 0), 0);
	struct hwt_lcov *c = hwt_lcov_alloc();
	/* every instruction of probe 3 times, each jcc taken once */
	uint64_t ip = entry;
	unsigned lines[64], nl = 0, njcc = 0, lo = 1u << 30, hi = 0, entry_line = 0;
	const char *file = NULL;
	for (int k = 0; k < 200; k++) {
		uint8_t b[15];
		struct hwt_x86_insn in;
		int n = hwt_image_read(img, ip, b, sizeof(b));
		CHECK(n > 0);
		if (n <= 0 || hwt_x86_decode(b, (size_t)n, ip, 64, &in))
			break;
		CHECK_EQ(hwt_lcov_insn(c, img, ip, 3), 0);
		if (in.iclass == HWT_INSN_JCC) {
			CHECK_EQ(hwt_lcov_taken(c, img, ip, 1), 0);
			njcc++;
		}
		const char *f;
		unsigned line;
		if (!hwt_image_srcline(img, ip, &f, &line)) {
			file = f;
			if (ip == entry)
				entry_line = line;
			if (line < lo)
				lo = line;
			if (line > hi)
				hi = line;
			int seen = 0;
			for (unsigned i = 0; i < nl; i++)
				seen |= lines[i] == line;
			if (!seen && nl < 64)
				lines[nl++] = line;
		}
		if (in.iclass == HWT_INSN_RET)
			break;
		ip += in.size;
	}
	CHECK(file != NULL && strstr(file, "test_out_cover.c") != NULL);
	CHECK((int)lo >= probe_first_line && (int)hi <= probe_last_line);
	CHECK(njcc >= 1);
	size_t len = 0;
	char *s = write_to_mem(lcov_w, c, &len);
	CHECK(s != NULL);
	if (s && file) {
		char want[512];
		CHECK(!strncmp(s, "TN:t\n", 5));
		snprintf(want, sizeof(want), "SF:%s\n", file);
		char *rec = strstr(s, want);
		CHECK(rec != NULL);
		char *end = rec ? strstr(rec, "end_of_record\n") : NULL;
		CHECK(end != NULL);
		if (rec && end) {
			*end = 0;
			CHECKF(strstr(rec, "FNDA:3,probe\n") != NULL, "%s", rec);
			snprintf(want, sizeof(want), "FN:%u,probe\n", entry_line);
			CHECKF(strstr(rec, want) != NULL, "no %s", want);
			for (unsigned i = 0; i < nl; i++) {
				snprintf(want, sizeof(want), "DA:%u,3\n", lines[i]);
				CHECKF(strstr(rec, want) != NULL, "no %s", want);
			}
			/* every line of this file's code is listed: main's
			 * never ran here */
			snprintf(want, sizeof(want), "LH:%u\n", nl);
			CHECK(strstr(rec, want) != NULL);
			snprintf(want, sizeof(want), "DA:%d,0\n", main_line);
			CHECKF(strstr(rec, want) != NULL, "no %s", want);
			unsigned nt = 0, nn = 0;
			for (char *p = strstr(rec, "BRDA:"); p; p = strstr(p + 1, "BRDA:")) {
				unsigned l, blk, br;
				unsigned long long cnt;
				CHECK(sscanf(p, "BRDA:%u,%u,%u,%llu", &l, &blk, &br, &cnt) == 4);
				CHECK(cnt == (br == 0 ? 1u : 2u));
				nt += br == 0;
				nn += br == 1;
			}
			CHECK_EQ(nt, njcc);
			CHECK_EQ(nn, njcc);
			snprintf(want, sizeof(want), "BRF:%u\nBRH:%u\n", 2 * njcc, 2 * njcc);
			CHECK(strstr(rec, want) != NULL);
		}
	}
	/* an address without lines counts as unlined */
	uint8_t nop = 0x90;
	struct hwt_image *mem = hwt_image_alloc();
	hwt_image_add_mem(mem, &nop, 1, 0x1000);
	CHECK_EQ(hwt_lcov_insn(c, mem, 0x1000, 7), 0);
	CHECK_EQ(hwt_lcov_unlined(c), 7);
	free(s);
	hwt_lcov_free(c);
	hwt_image_free(img);
	hwt_image_free(mem);
}

static void t_drcov(void)
{
	char path[] = "/tmp/hwt-drcov-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	static uint8_t code[0x3000];
	CHECK(write(fd, code, sizeof(code)) == (ssize_t)sizeof(code));
	close(fd);
	struct hwt_image *img = hwt_image_alloc();
	/* file offset 0x1000.. mapped at 0x401000: the module base 0x400000 */
	CHECK_EQ(hwt_image_add_file(img, path, 0x1000, 0x2000, 0x401000), 0);
	hwt_image_add_mem(img, code, 16, 0x900000);
	struct hwt_drcov *d = hwt_drcov_alloc();
	CHECK_EQ(hwt_drcov_block(d, img, 0x401010, 5), 0);
	CHECK_EQ(hwt_drcov_block(d, img, 0x401010, 5), 0); /* again: once */
	CHECK_EQ(hwt_drcov_block(d, img, 0x402000, 9), 0);
	CHECK_EQ(hwt_drcov_block(d, img, 0x900000, 4), 1); /* not a file */
	size_t len = 0;
	char *s = write_to_mem(drcov_w, d, &len);
	CHECK(s != NULL);
	if (s) {
		char want[512];
		snprintf(want, sizeof(want),
			 "DRCOV VERSION: 2\nDRCOV FLAVOR: drcov\nModule Table: version 2, count 1\n"
			 "Columns: id, base, end, entry, checksum, timestamp, path\n"
			 "  0, 0x0000000000400000, 0x0000000000403000, 0x0000000000000000, "
			 "0x00000000, 0x00000000, %s\nBB Table: 2 bbs\n",
			 path);
		size_t wl = strlen(want);
		CHECKF(len == wl + 16 && !memcmp(s, want, wl), "%s", s);
		if (len == wl + 16) {
			const uint8_t e[16] = {0x10, 0x10, 0, 0, 5, 0, 0, 0,
					       0x00, 0x20, 0, 0, 9, 0, 0, 0};
			CHECK(!memcmp(s + wl, e, 16));
		}
	}
	free(s);
	hwt_drcov_free(d);
	hwt_image_free(img);
	unlink(path);
}

static const int main_line = __LINE__ + 3; /* RUN(t_lcov) */
int main(void)
{
	RUN(t_lcov);
	RUN(t_drcov);
	return t_done();
}
