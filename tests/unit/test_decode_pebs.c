/* tests/unit/test_decode_pebs.c - memory samples from PERF_RECORD_SAMPLE
 * records (lib/decode/pebs.c) through the recording decoder: each case
 * writes a perf.data with the writer API (an attr whose sample_type has
 * the fields perf record writes for PEBS memory events, with extra
 * fields the parser must step over: CALLCHAIN, RAW, WEIGHT_STRUCT,
 * PHYS_ADDR), the sideband of one process with a [heap] mapping, and
 * samples whose values the test chose; the consumer must get exactly
 * those values back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "t.h"
#include "hwt/decode.h"
#include "hwt/perf_data.h"
#include "hwt/perf_records.h"

static char dir[256];

#define DS_L1_HIT 0x229100142ull    /* load, L1 hit, lvl_num L1, TLB L1 hit */
#define DS_RAM_WALK 0x1ab1401042ull /* load, local RAM, lvl_num RAM, TLB L1 miss walk */
#define DS_STORE_L3 0x629100844ull  /* store, L3 hit, lvl_num L3, TLB L1 hit */

struct got {
	int n;
	struct hwt_dec_sample s[8];
	char map[8][32];
	uint32_t tid[8];
};

static void on_sample(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_sample *s)
{
	struct got *g = arg;
	if (g->n >= 8)
		return;
	g->s[g->n] = *s;
	snprintf(g->map[g->n], sizeof(g->map[0]), "%s", s->data_map ? s->data_map : "");
	g->tid[g->n] = t ? t->tid : 0;
	g->n++;
}

/* one sample in the layout of st: IDENTIFIER IP TID TIME ADDR ID CPU PERIOD
 * CALLCHAIN RAW WEIGHT(_STRUCT) DATA_SRC PHYS_ADDR */
static size_t sample(uint8_t *buf, uint64_t st, uint64_t ip, uint32_t pid, uint32_t tid,
		     uint64_t time, uint64_t addr, uint64_t weight, uint64_t ds)
{
	uint64_t v[40];
	size_t n = 1;
	if (st & PERF_SAMPLE_IDENTIFIER)
		v[n++] = 1;
	if (st & PERF_SAMPLE_IP)
		v[n++] = ip;
	if (st & PERF_SAMPLE_TID)
		v[n++] = pid | (uint64_t)tid << 32;
	if (st & PERF_SAMPLE_TIME)
		v[n++] = time;
	if (st & PERF_SAMPLE_ADDR)
		v[n++] = addr;
	if (st & PERF_SAMPLE_ID)
		v[n++] = 1;
	if (st & PERF_SAMPLE_CPU)
		v[n++] = 3;
	if (st & PERF_SAMPLE_PERIOD)
		v[n++] = 1000;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		v[n++] = 2;
		v[n++] = 0xfffffe0000001000ull;
		v[n++] = ip;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t raw[4] = {12, 0xaaaaaaaa, 0xbbbbbbbb, 0xcccccccc}; /* size + 12 bytes */
		memcpy(&v[n], raw, 16);
		n += 2;
	}
	if (st & PERF_SAMPLE_WEIGHT)
		v[n++] = weight;
	if (st & PERF_SAMPLE_WEIGHT_STRUCT)
		v[n++] = weight | 0x1234ull << 32; /* var1_dw latency, var2_w instr latency */
	if (st & PERF_SAMPLE_DATA_SRC)
		v[n++] = ds;
	if (st & PERF_SAMPLE_PHYS_ADDR)
		v[n++] = 0x12345000;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (uint16_t)(n * 8)};
	memcpy(v, &h, 8);
	memcpy(buf, v, n * 8);
	return n * 8;
}

static int run(const char *path, uint64_t st, struct got *g)
{
	memset(g, 0, sizeof(*g));
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	if (!w || hwt_perf_writer_open(w, path)) {
		hwt_perf_writer_free(w);
		return -1;
	}
	struct perf_event_attr a, sb;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_RAW;
	a.config = 0x1cd;
	a.sample_period = 1000;
	a.sample_type = st;
	a.sample_id_all = 1;
	hwt_perf_attr_sideband(&sb, 0);
	sb.sample_type = st;
	uint64_t id1 = 1, id2 = 2;
	hwt_perf_writer_add_attr(w, &a, "cpu/mem-loads/P", &id1, 1);
	hwt_perf_writer_add_attr(w, &sb, "dummy:u", &id2, 1);
	struct hwt_perf_sample_id s;
	memset(&s, 0, sizeof(s));
	s.pid = s.tid = 100;
	s.id = s.identifier = 2;
	hwt_perf_writer_write_comm(w, 100, 100, "prog", 1, &s);
	hwt_perf_writer_write_mmap2(w, 100, 100, 0x5000000, 0x21000, 0, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, "[heap]", PERF_RECORD_MISC_USER,
				    &s);
	uint8_t buf[512];
	size_t n = sample(buf, st, 0x401000, 100, 100, 1000, 0x5000010, 4, DS_L1_HIT);
	hwt_perf_writer_write_raw(w, buf, n, NULL, 0);
	n = sample(buf, st, 0x401234, 100, 101, 2000, 0x7000000, 230, DS_RAM_WALK);
	hwt_perf_writer_write_raw(w, buf, n, NULL, 0);
	n = sample(buf, st, 0x401238, 100, 100, 3000, 0x5020ff8, 40, DS_STORE_L3);
	hwt_perf_writer_write_raw(w, buf, n, NULL, 0);
	if (hwt_perf_writer_finish(w)) {
		hwt_perf_writer_free(w);
		return -1;
	}
	hwt_perf_writer_free(w);
	struct hwt_decode_consumer c = {.size = sizeof(c), .arg = g, .sample = on_sample};
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.path = path;
	cfg.consumer = &c;
	struct hwt_decoder *d;
	if (hwt_decoder_alloc(&d, &cfg))
		return -1;
	int r = hwt_decoder_run(d);
	struct hwt_decoder_info info = {.size = sizeof(info)};
	hwt_decoder_info(d, &info);
	if (!r && info.nr_samples != (uint64_t)g->n)
		r = -2;
	hwt_decoder_free(d);
	return r;
}

static void check_three(const struct got *g, int have_time)
{
	CHECK_EQ(g->n, 3);
	CHECK_EQ(g->s[0].ip, 0x401000);
	CHECK_EQ(g->s[0].addr, 0x5000010);
	CHECK_EQ(g->s[0].weight, 4);
	CHECK_EQ(g->s[0].data_src, DS_L1_HIT);
	CHECK_EQ(g->s[0].pid, 100);
	CHECK_EQ(g->tid[0], 100);
	CHECK(g->s[0].flags & HWT_DSF_LOAD);
	CHECK(!(g->s[0].flags & (HWT_DSF_L1_MISS | HWT_DSF_LLC_MISS | HWT_DSF_TLB_MISS)));
	CHECK(!strcmp(g->map[0], "[heap]"));
	CHECK_EQ(g->s[0].data_map_start, 0x5000000);
	CHECK(g->s[0].img != NULL);
	CHECK_EQ(!!(g->s[0].flags & HWT_DSF_HAVE_TIME), have_time);
	if (have_time)
		CHECK_EQ(g->s[1].time_ns, 2000);
	CHECK_EQ(g->tid[1], 101);
	CHECK_EQ(g->s[1].weight, 230);
	CHECK(g->s[1].flags & HWT_DSF_L1_MISS);
	CHECK(g->s[1].flags & HWT_DSF_LLC_MISS);
	CHECK(g->s[1].flags & HWT_DSF_TLB_MISS);
	CHECK(!strcmp(g->map[1], "")); /* 0x7000000 is not mapped */
	CHECK(g->s[2].flags & HWT_DSF_STORE);
	CHECK(g->s[2].flags & HWT_DSF_L1_MISS);
	CHECK(!(g->s[2].flags & HWT_DSF_LLC_MISS));
	CHECK(!strcmp(g->map[2], "[heap]"));
	char buf[64];
	CHECK(!strcmp(hwt_dec_sample_source(&g->s[0], buf, sizeof(buf)), "L1 hit"));
	CHECK(!strcmp(hwt_dec_sample_source(&g->s[1], buf, sizeof(buf)), "memory, TLB walk"));
	CHECK(!strcmp(hwt_dec_sample_source(&g->s[2], buf, sizeof(buf)), "LLC hit"));
	CHECK(!strcmp(hwt_dec_sample_op_name(&g->s[2]), "store"));
}

#define ST_PEBS                                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |                \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)

static void t_pebs_layout(void)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/a.data", dir);
	struct got g;
	CHECK_EQ(run(path, ST_PEBS, &g), 0);
	check_three(&g, 1);
}

/* fields the parser steps over, and the weight as a struct */
static void t_extra_fields(void)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/b.data", dir);
	struct got g;
	uint64_t st = (ST_PEBS & ~(uint64_t)PERF_SAMPLE_WEIGHT) | PERF_SAMPLE_CALLCHAIN |
		      PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_PHYS_ADDR;
	CHECK_EQ(run(path, st, &g), 0);
	check_three(&g, 1);
	CHECK(g.s[0].flags & HWT_DSF_HAVE_PHYS);
	CHECK_EQ(g.s[0].phys_addr, 0x12345000);
}

/* samples without an address (e.g. cycles) are not memory samples */
static void t_not_memory(void)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/c.data", dir);
	struct got g;
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		      PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT;
	CHECK_EQ(run(path, st, &g), 0);
	CHECK_EQ(g.n, 0);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/hwt-test-pebs-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(t_pebs_layout);
	RUN(t_extra_fields);
	RUN(t_not_memory);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return 1;
	return t_done();
}
