/* tests/unit/test_spe.c - the Arm SPE packet and record decoders
 * (hwt/spe.h) on bytes written by hand from the packet encodings of the Arm
 * Architecture Reference Manual (SPE packet formats).  The expected fields
 * are worked out by hand from those encodings, not by running the
 * decoder; the data_src values are perf's union perf_mem_data_src
 * (linux/perf_event.h) for the events given. */
#include <string.h>

#include "hwt/spe.h"
#include "t.h"

struct pkt_case {
	uint8_t bytes[12];
	size_t n;
	int ret; /* size, or the error */
	int type, index;
	uint64_t payload;
	const char *text;
};

#define NS_EL0 0x8000000000000000ull

static const struct pkt_case pkts[] = {
    {{0x00}, 1, 1, HWT_SPE_PAD, 0, 0, "PAD"},
    {{0x01}, 1, 1, HWT_SPE_END, 0, 0, "END"},
    {{0x71, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11},
     9,
     9,
     HWT_SPE_TIMESTAMP,
     0,
     0x1122334455667788ull,
     "TS 1234605616436508552"},
    /* Events, SZ = 0 (1 byte): retired, L1D access, TLB access */
    {{0x42, 0x16}, 2, 2, HWT_SPE_EVENTS, 0, 0x16, "EV RETIRED L1D-ACCESS TLB-ACCESS"},
    /* SZ = 1 (2 bytes): retired, L1D access, L1D refill, LLC access, LLC miss */
    {{0x52, 0x0e, 0x03},
     3,
     3,
     HWT_SPE_EVENTS,
     0,
     0x030e,
     "EV RETIRED L1D-ACCESS L1D-REFILL LLC-ACCESS LLC-REFILL"},
    /* SZ = 2 (4 bytes): not taken, mispredicted */
    {{0x62, 0xc0, 0x00, 0x00, 0x00}, 5, 5, HWT_SPE_EVENTS, 0, 0xc0, "EV NOT-TAKEN MISPRED"},
    {{0x43, 0x05}, 2, 2, HWT_SPE_DATA_SOURCE, 0, 5, "DATA-SOURCE 5"},
    {{0x53, 0x00, 0x01}, 3, 3, HWT_SPE_DATA_SOURCE, 0, 0x100, "DATA-SOURCE 256"},
    /* Context, SZ = 2 (4 bytes), CT 0 (EL1) and 1 (EL2) */
    {{0x64, 0x39, 0x30, 0x00, 0x00}, 5, 5, HWT_SPE_CONTEXT, 0, 0x3039, "CONTEXT 0x3039 el1"},
    {{0x65, 0x01, 0x00, 0x00, 0x00}, 5, 5, HWT_SPE_CONTEXT, 1, 1, "CONTEXT 0x1 el2"},
    /* Operation type: class 0 other, 1 load/store, 2 branch */
    {{0x48, 0x00}, 2, 2, HWT_SPE_OP_TYPE, 0, 0, "OTHER"},
    {{0x48, 0x01}, 2, 2, HWT_SPE_OP_TYPE, 0, 1, "OTHER COND"},
    {{0x49, 0x00}, 2, 2, HWT_SPE_OP_TYPE, 1, 0, "LD GP-REG"},
    {{0x49, 0x01}, 2, 2, HWT_SPE_OP_TYPE, 1, 1, "ST GP-REG"},
    {{0x49, 0x04}, 2, 2, HWT_SPE_OP_TYPE, 1, 4, "LD SIMD-FP"},
    {{0x49, 0x07}, 2, 2, HWT_SPE_OP_TYPE, 1, 7, "ST AT"},
    {{0x49, 0x1a}, 2, 2, HWT_SPE_OP_TYPE, 1, 0x1a, "LD EXCL AR"},
    {{0x4a, 0x01}, 2, 2, HWT_SPE_OP_TYPE, 2, 1, "B COND"},
    {{0x4a, 0x02}, 2, 2, HWT_SPE_OP_TYPE, 2, 2, "B IND"},
    /* Address: PC at EL0 non-secure */
    {{0xb0, 0x14, 0x3f, 0x83, 0x02, 0x55, 0x00, 0x00, 0x80},
     9,
     9,
     HWT_SPE_ADDRESS,
     0,
     NS_EL0 | 0x5502833f14ull,
     "PC 0x5502833f14 el0 ns=1"},
    /* PC at EL1: bit 55 set, the top byte comes back by sign extension */
    {{0xb0, 0x56, 0x34, 0x12, 0x00, 0x00, 0x80, 0xff, 0xa0},
     9,
     9,
     HWT_SPE_ADDRESS,
     0,
     0xa0ff800000123456ull,
     "PC 0xffff800000123456 el1 ns=1"},
    {{0xb1, 0xa4, 0x42, 0x83, 0x02, 0x55, 0x00, 0x00, 0x80},
     9,
     9,
     HWT_SPE_ADDRESS,
     1,
     NS_EL0 | 0x55028342a4ull,
     "TGT 0x55028342a4 el0 ns=1"},
    {{0xb2, 0x80, 0x14, 0x86, 0x02, 0x55, 0x00, 0x00, 0x00},
     9,
     9,
     HWT_SPE_ADDRESS,
     2,
     0x5502861480ull,
     "VA 0x5502861480"},
    {{0xb3, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x00, 0x80},
     9,
     9,
     HWT_SPE_ADDRESS,
     3,
     0x8000000080001000ull,
     "PA 0x80001000 ns=1"},
    /* extended header 0b0010_00ee: index bits [4:3] = 01 */
    {{0x21, 0xb2, 1, 0, 0, 0, 0, 0, 0, 0}, 10, 10, HWT_SPE_ADDRESS, 10, 1, "ADDR10 0x1"},
    /* Counters: total, issue, translation latency */
    {{0x98, 0x23, 0x00}, 3, 3, HWT_SPE_COUNTER, 0, 35, "LAT 35 TOT"},
    {{0x99, 0x01, 0x00}, 3, 3, HWT_SPE_COUNTER, 1, 1, "LAT 1 ISSUE"},
    {{0x9a, 0x34, 0x12}, 3, 3, HWT_SPE_COUNTER, 2, 0x1234, "LAT 4660 XLAT"},
    /* damage */
    {{0x02}, 1, HWT_ERR_BAD_PACKET, 0, 0, 0, NULL},
    {{0x4c, 0x00}, 2, HWT_ERR_BAD_PACKET, 0, 0, 0, NULL},
    {{0x71, 0x01, 0x02, 0x03}, 4, HWT_ERR_BAD_PACKET, 0, 0, 0, NULL},
    {{0xb0, 0x01}, 2, HWT_ERR_BAD_PACKET, 0, 0, 0, NULL},
    {{0x20, 0x42, 0x00}, 3, HWT_ERR_BAD_PACKET, 0, 0, 0, NULL},
    {{0x20}, 1, HWT_ERR_BAD_PACKET, 0, 0, 0, NULL},
    {{0}, 0, HWT_ERR_EOS, 0, 0, 0, NULL},
};

static void t_packets(void)
{
	for (size_t i = 0; i < sizeof(pkts) / sizeof(pkts[0]); i++) {
		const struct pkt_case *c = &pkts[i];
		struct hwt_spe_packet p;
		int r = hwt_spe_pkt_decode(c->bytes, c->n, &p);
		CHECKF(r == c->ret, "case %zu: returned %d, want %d", i, r, c->ret);
		if (r < 0 || c->ret < 0)
			continue;
		CHECKF(p.type == c->type && p.index == c->index && p.payload == c->payload &&
			   p.size == c->n,
		       "case %zu: type %d index %d payload %#llx size %d", i, p.type, p.index,
		       (unsigned long long)p.payload, p.size);
		char buf[128];
		hwt_spe_pkt_print(&p, buf, sizeof(buf));
		CHECKF(!strcmp(buf, c->text), "case %zu: printed '%s', want '%s'", i, buf, c->text);
	}
}

/* Records: a load (ends with a Timestamp), padding, a mispredicted
 * not-taken conditional branch (ends with End), one bad byte, a store. */
static const uint8_t trace[] = {
    /* 0: load */
    0xb0, 0x14, 0x3f, 0x83, 0x02, 0x55, 0x00, 0x00, 0x80, /* PC 0x5502833f14 */
    0x49, 0x00,						  /* LD GP-REG */
    0xb2, 0x80, 0x14, 0x86, 0x02, 0x55, 0x00, 0x00, 0x00, /* VA 0x5502861480 */
    0x9a, 0x1e, 0x00,					  /* LAT 30 XLAT */
    0x42, 0x36,	      /* EV RETIRED L1D-ACCESS TLB-ACCESS TLB-REFILL */
    0x99, 0x01, 0x00, /* LAT 1 ISSUE */
    0x98, 0x23, 0x00, /* LAT 35 TOT */
    0x71, 0x41, 0x4a, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, /* TS 0xf4a41 */
    /* 40: padding */
    0x00, 0x00, 0x00, 0x00,
    /* 44: branch */
    0xb0, 0x08, 0x3f, 0x83, 0x02, 0x55, 0x00, 0x00, 0x80, /* PC 0x5502833f08 */
    0x4a, 0x01,						  /* B COND */
    0xb1, 0xa4, 0x42, 0x83, 0x02, 0x55, 0x00, 0x00, 0x80, /* TGT 0x55028342a4 */
    0x42, 0xc2,						  /* EV RETIRED NOT-TAKEN MISPRED */
    0x99, 0x01, 0x00, 0x98, 0x0c, 0x00,			  /* LAT 1 ISSUE, LAT 12 TOT */
    0x01,						  /* END */
    /* 73: damage */
    0x07,
    /* 74: store hitting L1, ends with End */
    0xb0, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* PC 0x1000 */
    0x49, 0x01,						  /* ST GP-REG */
    0xb2, 0x08, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* VA 0x2008 */
    0x42, 0x06,						  /* EV RETIRED L1D-ACCESS */
    0x98, 0x05, 0x00, 0x01,				  /* LAT 5 TOT, END */
};

static void t_records(void)
{
	struct hwt_spe_config cfg;
	hwt_spe_config_init(&cfg);
	cfg.begin = trace;
	cfg.end = trace + sizeof(trace);
	cfg.offset = 0x1000;
	struct hwt_spe_decoder *d = hwt_spe_alloc(&cfg);
	CHECK(d != NULL);
	if (!d)
		return;
	struct hwt_spe_record r;
	CHECK_EQ(hwt_spe_sync_forward(d), 0);
	CHECK_EQ(hwt_spe_next(d, &r), 0);
	CHECK(r.pc == 0x5502833f14ull && r.el == 0 && r.ns == 1);
	CHECK(r.va == 0x5502861480ull && (r.flags & HWT_SPE_HAVE_VA));
	CHECK_EQ(r.op_class, HWT_SPE_OP_LDST);
	CHECK_EQ(r.events, 0x36);
	CHECK_EQ(r.lat_total, 35);
	CHECK_EQ(r.lat_issue, 1);
	CHECK_EQ(r.lat_xlat, 30);
	CHECK(r.ts == 0xf4a41 && (r.flags & HWT_SPE_HAVE_TS));
	CHECK_EQ(r.offset, 0x1000);
	CHECK_EQ(r.size, 40);
	CHECK(!strcmp(hwt_spe_op_name(&r), "ld"));
	/* load, L1 hit, TLB walk: LOAD | (L1 | HIT) << 5 | (WK | MISS) << 26 */
	CHECK_EQ(hwt_spe_data_src(&r), 0x02ull | 0x0aull << 5 | 0x24ull << 26);

	CHECK_EQ(hwt_spe_next(d, &r), 0);
	CHECK_EQ(r.offset, 0x1000 + 44);
	CHECK(r.pc == 0x5502833f08ull && r.target == 0x55028342a4ull);
	CHECK(!strcmp(hwt_spe_op_name(&r), "bcond"));
	CHECK_EQ(r.events, 0xc2);
	CHECK_EQ(r.lat_total, 12);
	CHECK(!(r.flags & HWT_SPE_HAVE_TS));
	CHECK_EQ(hwt_spe_data_src(&r), 0);

	CHECK_EQ(hwt_spe_next(d, &r), HWT_ERR_BAD_PACKET);
	uint64_t off = 0;
	CHECK_EQ(hwt_spe_offset(d, &off), 0);
	CHECK_EQ(off, 0x1000 + 73);

	CHECK_EQ(hwt_spe_next(d, &r), 0);
	CHECK_EQ(r.offset, 0x1000 + 74);
	CHECK(r.pc == 0x1000 && r.va == 0x2008);
	CHECK(!strcmp(hwt_spe_op_name(&r), "st"));
	/* store, L1 hit, no TLB events: STORE | (L1 | HIT) << 5 */
	CHECK_EQ(hwt_spe_data_src(&r), 0x04ull | 0x0aull << 5);
	CHECK_EQ(hwt_spe_next(d, &r), HWT_ERR_EOS);
	CHECK_EQ(hwt_spe_next(d, &r), HWT_ERR_EOS);
	hwt_spe_free(d);
}

/* A record cut by the end of the buffer: one error, then the end; an
 * LLC miss maps to L3 | MISS. */
static void t_cut(void)
{
	struct hwt_spe_config cfg;
	hwt_spe_config_init(&cfg);
	cfg.begin = trace;
	cfg.end = trace + 30; /* inside the first record */
	struct hwt_spe_decoder *d = hwt_spe_alloc(&cfg);
	struct hwt_spe_record r;
	CHECK_EQ(hwt_spe_next(d, &r), HWT_ERR_BAD_PACKET);
	CHECK_EQ(hwt_spe_next(d, &r), HWT_ERR_EOS);
	hwt_spe_free(d);

	memset(&r, 0, sizeof(r));
	r.flags = HWT_SPE_HAVE_OP | HWT_SPE_HAVE_VA;
	r.op_class = HWT_SPE_OP_LDST;
	r.events = HWT_SPE_EV_RETIRED | HWT_SPE_EV_L1D_ACCESS | HWT_SPE_EV_L1D_REFILL |
		   HWT_SPE_EV_LLC_ACCESS | HWT_SPE_EV_LLC_MISS | HWT_SPE_EV_TLB_ACCESS;
	/* LOAD | (L3 | MISS) << 5 | (WK | HIT) << 26 */
	CHECK_EQ(hwt_spe_data_src(&r), 0x02ull | 0x44ull << 5 | 0x22ull << 26);
	struct hwt_spe_config bad;
	hwt_spe_config_init(&bad);
	bad.size = 4;
	CHECK(hwt_spe_alloc(&bad) == NULL);
}

/* Resynchronization skips garbage up to the next whole record. */
static void t_resync(void)
{
	uint8_t buf[sizeof(trace) + 8];
	memset(buf, 0xb0, 8); /* PC headers whose records do not decode */
	memcpy(buf + 8, trace, sizeof(trace));
	struct hwt_spe_config cfg;
	hwt_spe_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	struct hwt_spe_decoder *d = hwt_spe_alloc(&cfg);
	struct hwt_spe_record r;
	int n = 0, bad = 0, st;
	while ((st = hwt_spe_next(d, &r)) != HWT_ERR_EOS) {
		if (st < 0)
			bad++;
		else if (n++ == 0)
			CHECK_EQ(r.offset, 8);
		CHECK(n + bad < 64);
		if (n + bad >= 64)
			break;
	}
	CHECK_EQ(n, 3);
	CHECK(bad >= 2);
	hwt_spe_free(d);
}

int main(void)
{
	RUN(t_packets);
	RUN(t_records);
	RUN(t_cut);
	RUN(t_resync);
	return t_done();
}
