/* tests/unit/test_bts.c - the Intel BTS decoder (hwt/bts.h) on records
 * written by hand over a hand-assembled code image.  The expected kinds,
 * instruction walks and gaps are worked out by hand from the encodings
 * below (Intel SDM opcode tables), not by running the decoder. */
#include <stdlib.h>
#include <string.h>

#include "hwt/bts.h"
#include "hwt/x86.h"
#include "t.h"

#define ORG 0x1000ull
#define KERN 0xffffffff81000000ull

/* The code, at ORG:
 *  00: 48 31 c0        xor rax,rax
 *  03: 74 02           je 07
 *  05: 90              nop
 *  06: 90              nop
 *  07: e8 14 00 00 00  call 20
 *  0c: eb 02           jmp 10
 *  0e: 90 90
 *  10: ff e0           jmp rax
 *  12: ff d0           call rax
 *  14: 0f 05           syscall
 *  16: 90              nop
 *  17: c3              ret
 *  18: 90 x 8
 *  20: 90              nop
 *  21: 90              nop
 *  22: c3              ret */
static const uint8_t code[] = {
    0x48, 0x31, 0xc0, 0x74, 0x02, 0x90, 0x90, 0xe8, 0x14, 0x00, 0x00, 0x00,
    0xeb, 0x02, 0x90, 0x90, 0xff, 0xe0, 0xff, 0xd0, 0x0f, 0x05, 0x90, 0xc3,
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3,
};
#define A(o) (ORG + (o))

struct rec {
	uint64_t from, to, flags;
};

/* What one hwt_bts_next call gives. */
struct want {
	int ret;
	uint64_t from, to; /* ret 0 */
	int kind;
	uint32_t ninsn; /* walk on */
	int walked;
	uint64_t first, ip; /* first walked ip; ret < 0: hwt_bts_ip */
	uint64_t offset;    /* hwt_bts_offset (record index * 24) */
};

struct tcase {
	const char *name;
	struct rec recs[16];
	size_t nrec;
	size_t trim; /* bytes cut off the end (partial record) */
	struct want want[16];
	size_t nwant;
};

#define R(f, t)                                                                                    \
	{                                                                                          \
		A(f), A(t), 0x10                                                                   \
	}
#define OK(f, t, k, n, w, first, idx)                                                              \
	{                                                                                          \
		0, A(f), A(t), k, n, w, A(first), 0, (idx)*24                                      \
	}
#define GAP(e, ip, idx)                                                                            \
	{                                                                                          \
		e, 0, 0, 0, 0, 0, 0, ip, (idx)*24                                                  \
	}

static const struct tcase cases[] = {
    {"flow",
     {R(0x03, 0x07),
      R(0x07, 0x20),
      R(0x22, 0x0c),
      R(0x0c, 0x10),
      {0, 0, 0},
      R(0x10, 0x12),
      R(0x12, 0x00),
      R(0x07, 0x20),
      R(0x22, 0x14),
      R(0x17, 0x18)},
     10,
     0,
     {OK(0x03, 0x07, HWT_BTS_JCC, 1, 0, 0x03, 0),
      OK(0x07, 0x20, HWT_BTS_CALL, 1, 1, 0x07, 1),
      OK(0x22, 0x0c, HWT_BTS_RET, 3, 1, 0x20, 2),
      OK(0x0c, 0x10, HWT_BTS_JMP, 1, 1, 0x0c, 3),
      /* record 4 is padding: skipped, the walk goes on */
      OK(0x10, 0x12, HWT_BTS_IJMP, 1, 1, 0x10, 5),
      OK(0x12, 0x00, HWT_BTS_ICALL, 1, 1, 0x12, 6),
      /* xor, je (not taken), nop, nop, call */
      OK(0x07, 0x20, HWT_BTS_CALL, 5, 1, 0x00, 7),
      OK(0x22, 0x14, HWT_BTS_RET, 3, 1, 0x20, 8),
      /* syscall (the kernel's branches are not in a user-only trace), nop, ret */
      OK(0x17, 0x18, HWT_BTS_RET, 3, 1, 0x14, 9),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 9 * 24}},
     10},
    {"far_async",
     {{A(0x14), KERN, 0}, R(0x05, 0x20), R(0x22, 0x17)},
     3,
     0,
     {{0, A(0x14), KERN, HWT_BTS_FAR, 1, 0, A(0x14), 0, 0},
      OK(0x05, 0x20, HWT_BTS_ASYNC, 1, 0, 0x05, 1),
      OK(0x22, 0x17, HWT_BTS_RET, 3, 1, 0x20, 2),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 2 * 24}},
     4},
    {"from_unmapped",
     {{0x9000, A(0x10), 0x10}, R(0x10, 0x12), R(0x12, 0x20)},
     3,
     0,
     {GAP(HWT_ERR_NOMAP, 0x9000, 0),
      OK(0x10, 0x12, HWT_BTS_IJMP, 1, 0, 0x10, 1),
      OK(0x12, 0x20, HWT_BTS_ICALL, 1, 1, 0x12, 2),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 2 * 24}},
     4},
    {"to_unmapped",
     {{A(0x10), 0x9000, 0x10}, R(0x22, 0x0c)},
     2,
     0,
     {GAP(HWT_ERR_NOMAP, 0x9000, 0),
      OK(0x22, 0x0c, HWT_BTS_RET, 1, 0, 0x22, 1),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 24}},
     3},
    {"from_zero",
     {{0, A(0x10), 0}, R(0x10, 0x12)},
     2,
     0,
     {GAP(HWT_ERR_NOMAP, 0, 0),
      OK(0x10, 0x12, HWT_BTS_IJMP, 1, 0, 0x10, 1),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 24}},
     3},
    {"walk_mismatch",
     /* after je -> 07 the call at 07 is taken, yet no record says so */
     {R(0x03, 0x07), R(0x22, 0x0c), R(0x0c, 0x10)},
     3,
     0,
     {OK(0x03, 0x07, HWT_BTS_JCC, 1, 0, 0x03, 0),
      GAP(HWT_ERR_BAD_QUERY, A(0x07), 1),
      OK(0x22, 0x0c, HWT_BTS_RET, 1, 0, 0x22, 1),
      OK(0x0c, 0x10, HWT_BTS_JMP, 1, 1, 0x0c, 2),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 2 * 24}},
     5},
    {"walk_into_insn",
     /* from 0x08 is inside the call at 07: no instruction starts there */
     {R(0x03, 0x05), R(0x08, 0x10)},
     2,
     0,
     {OK(0x03, 0x05, HWT_BTS_JCC, 1, 0, 0x03, 0),
      GAP(HWT_ERR_BAD_QUERY, A(0x07), 1),
      OK(0x08, 0x10, HWT_BTS_ASYNC, 1, 0, 0x08, 1),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 24}},
     4},
    {"walk_past",
     /* from 0x18 the nops run on to the ret at 0x22, which is not 0x17 */
     {R(0x17, 0x18), R(0x17, 0x00)},
     2,
     0,
     {OK(0x17, 0x18, HWT_BTS_RET, 1, 0, 0x17, 0),
      GAP(HWT_ERR_BAD_QUERY, A(0x22), 1),
      OK(0x17, 0x00, HWT_BTS_RET, 1, 0, 0x17, 1),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 24}},
     4},
    {"partial",
     {R(0x10, 0x12), R(0x12, 0x20)},
     2,
     8,
     {OK(0x10, 0x12, HWT_BTS_IJMP, 1, 0, 0x10, 0),
      GAP(HWT_ERR_BAD_PACKET, 0, 1),
      {HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 24}},
     3},
    {"all_padding",
     {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
     3,
     0,
     {{HWT_ERR_EOS, 0, 0, 0, 0, 0, 0, 0, 0}},
     1},
};

static struct hwt_image *mkimage(void)
{
	struct hwt_image *img = hwt_image_alloc();
	if (img && hwt_image_add_mem(img, code, sizeof(code), ORG)) {
		hwt_image_free(img);
		return NULL;
	}
	return img;
}

static void run_case(const struct tcase *c, struct hwt_image *img)
{
	uint8_t buf[16 * 24];
	size_t n = c->nrec * 24 - c->trim;
	memcpy(buf, c->recs, c->nrec * 24);
	struct hwt_bts_config cfg;
	hwt_bts_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + n;
	cfg.walk = 1;
	struct hwt_bts_decoder *d = hwt_bts_alloc(&cfg, img);
	CHECK(d);
	if (!d)
		return;
	int st = hwt_bts_sync_forward(d);
	CHECK_EQ(st, c->want[0].ret == HWT_ERR_EOS ? HWT_ERR_EOS : 0);
	for (size_t i = 0; i < c->nwant; i++) {
		const struct want *w = &c->want[i];
		struct hwt_bts_branch br;
		int r = hwt_bts_next(d, &br);
		uint64_t off = 0;
		hwt_bts_offset(d, &off);
		CHECKF(r == w->ret, "%s call %zu: %d, want %d", c->name, i, r, w->ret);
		if (r != w->ret)
			break;
		if (r == HWT_ERR_EOS)
			break;
		CHECKF(off == w->offset, "%s call %zu: offset %llu, want %llu", c->name, i,
		       (unsigned long long)off, (unsigned long long)w->offset);
		if (r < 0) {
			CHECKF(hwt_bts_ip(d) == w->ip, "%s call %zu: ip %#llx, want %#llx", c->name,
			       i, (unsigned long long)hwt_bts_ip(d), (unsigned long long)w->ip);
			continue;
		}
		CHECKF(br.from == w->from && br.to == w->to, "%s call %zu: %#llx -> %#llx", c->name,
		       i, (unsigned long long)br.from, (unsigned long long)br.to);
		CHECKF(br.kind == w->kind, "%s call %zu: kind %d, want %d", c->name, i, br.kind,
		       w->kind);
		CHECKF(br.ninsn == w->ninsn && br.walked == w->walked,
		       "%s call %zu: %u insns (walked %d), want %u (%d)", c->name, i, br.ninsn,
		       br.walked, w->ninsn, w->walked);
		if (br.ninsn) {
			CHECKF(br.ips[0] == w->first, "%s call %zu: first %#llx, want %#llx",
			       c->name, i, (unsigned long long)br.ips[0],
			       (unsigned long long)w->first);
			CHECK(br.ips[br.ninsn - 1] == br.from);
			for (uint32_t k = 1; k < br.ninsn; k++) /* a walk is straight-line code */
				CHECK(br.ips[k] == br.ips[k - 1] + br.sizes[k - 1]);
		}
		CHECK(br.predicted == ((br.flags & 0x10) != 0));
	}
	hwt_bts_free(d);
}

static void t_cases(void)
{
	struct hwt_image *img = mkimage();
	CHECK(img);
	if (!img)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i], img);
	hwt_image_free(img);
}

/* Without walking: the same branches and kinds, no instructions, and a
 * trace that does not match the code is no error. */
static void t_no_walk(void)
{
	struct hwt_image *img = mkimage();
	struct rec recs[] = {R(0x03, 0x07), R(0x22, 0x0c), R(0x0c, 0x10)};
	struct hwt_bts_config cfg;
	hwt_bts_config_init(&cfg);
	cfg.begin = (const uint8_t *)recs;
	cfg.end = cfg.begin + sizeof(recs);
	struct hwt_bts_decoder *d = hwt_bts_alloc(&cfg, img);
	CHECK(d && hwt_bts_sync_forward(d) == 0);
	static const int kinds[] = {HWT_BTS_JCC, HWT_BTS_RET, HWT_BTS_JMP};
	struct hwt_bts_branch br;
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(hwt_bts_next(d, &br), 0);
		CHECK_EQ(br.kind, kinds[i]);
		CHECK_EQ(br.ninsn, 0);
	}
	CHECK_EQ(hwt_bts_next(d, &br), HWT_ERR_EOS);
	hwt_bts_free(d);
	hwt_image_free(img);
}

/* A trace cut in two buffers: the second continues the first's walk. */
static void t_continue(void)
{
	struct hwt_image *img = mkimage();
	struct rec a[] = {R(0x12, 0x00)}, b[] = {R(0x07, 0x20)};
	struct hwt_bts_config cfg;
	hwt_bts_config_init(&cfg);
	cfg.begin = (const uint8_t *)a;
	cfg.end = cfg.begin + sizeof(a);
	cfg.walk = 1;
	struct hwt_bts_decoder *d = hwt_bts_alloc(&cfg, img);
	struct hwt_bts_branch br;
	CHECK(d && hwt_bts_next(d, &br) == 0);
	uint64_t to = 0;
	CHECK(hwt_bts_prev(d, &to) == 1 && to == A(0x00));
	hwt_bts_free(d);
	cfg.begin = (const uint8_t *)b;
	cfg.end = cfg.begin + sizeof(b);
	cfg.offset = 24;
	cfg.have_prev = 1;
	cfg.prev_to = to;
	d = hwt_bts_alloc(&cfg, img);
	CHECK(d && hwt_bts_sync_forward(d) == 0);
	CHECK_EQ(hwt_bts_next(d, &br), 0);
	CHECK(br.walked && br.ninsn == 5 && br.ips[0] == A(0x00) && br.offset == 24);
	hwt_bts_free(d);
	hwt_image_free(img);
}

/* Misaligned and random bytes: gaps, never a crash, always an end. */
static void t_garbage(void)
{
	struct hwt_image *img = mkimage();
	struct rec recs[8];
	for (int i = 0; i < 8; i++)
		recs[i] = (struct rec){A(0x10), A(0x12), 0x10};
	uint8_t buf[8 * 24 + 8];
	memcpy(buf + 5, recs, sizeof(recs)); /* misaligned by 5 */
	memset(buf, 0x90, 5);
	unsigned seed = 1;
	for (int round = 0; round < 200; round++) {
		if (round) /* random bytes, some pointing into the image */
			for (size_t i = 0; i < sizeof(buf); i++) {
				seed = seed * 1103515245u + 12345u;
				buf[i] = (uint8_t)(seed >> 16);
				if (i % 8 == 1 && (seed & 0x100))
					buf[i] = 0x10, buf[i - 1] = (uint8_t)(seed >> 24) % 0x23;
				if (i % 8 == 2 && (seed & 0x100))
					memset(buf + i, 0, 6);
			}
		struct hwt_bts_config cfg;
		hwt_bts_config_init(&cfg);
		cfg.begin = buf;
		cfg.end = buf + sizeof(buf) - (size_t)(round % 7);
		cfg.walk = 1;
		struct hwt_bts_decoder *d = hwt_bts_alloc(&cfg, img);
		CHECK(d);
		if (!d)
			break;
		int steps = 0, r;
		struct hwt_bts_branch br;
		while ((r = hwt_bts_next(d, &br)) != HWT_ERR_EOS && steps < 100) {
			steps++;
			if (r < 0)
				CHECK(r == HWT_ERR_NOMAP || r == HWT_ERR_BAD_INSN ||
				      r == HWT_ERR_BAD_QUERY || r == HWT_ERR_BAD_PACKET);
		}
		CHECK(r == HWT_ERR_EOS && steps <= 2 * 9);
		hwt_bts_free(d);
	}
	hwt_image_free(img);
}

static void t_args(void)
{
	struct hwt_image *img = mkimage();
	struct hwt_bts_config cfg;
	hwt_bts_config_init(&cfg);
	CHECK(hwt_bts_alloc(NULL, img) == NULL);
	CHECK(hwt_bts_alloc(&cfg, NULL) == NULL);
	struct hwt_bts_decoder *d = hwt_bts_alloc(&cfg, img); /* empty trace */
	struct hwt_bts_branch br;
	CHECK(d && hwt_bts_sync_forward(d) == HWT_ERR_EOS && hwt_bts_next(d, &br) == HWT_ERR_EOS);
	CHECK(hwt_bts_next(NULL, &br) == HWT_ERR_INVALID);
	hwt_bts_free(d);
	hwt_bts_free(NULL);
	struct hwt_bts_record r;
	uint8_t two[48] = {1};
	CHECK(hwt_bts_record_at(two, two + 47, 1, &r) == HWT_ERR_EOS);
	CHECK(hwt_bts_record_at(two, two + 48, 0, &r) == 0 && r.from == 1);
	hwt_image_free(img);
}

int main(void)
{
	RUN(t_cases);
	RUN(t_no_walk);
	RUN(t_continue);
	RUN(t_garbage);
	RUN(t_args);
	return t_done();
}
