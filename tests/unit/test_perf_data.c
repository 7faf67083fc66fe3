/* tests/unit/test_perf_data.c - lib/perf writer and reader.
 *
 * Files written with the writer are read back with the reader (every
 * record type, features, attrs/ids, AUXTRACE payloads in two parts);
 * truncated and bit-flipped files must give clean errors (run under ASan
 * in the sanitizer build); perf's own recordings (perf record -e dummy /
 * -e cpu-clock, when perf can record here) are read and their record
 * counts compared with perf's own dump (the oracle).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "t.h"
#include "t_util.h"
#include "hwt/perf_data.h"

static char tmpdir[] = "/tmp/hwt-test-perf-XXXXXX";

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tmpdir, name);
}

static void attr_init(struct perf_event_attr *a, uint32_t type, uint64_t config, uint64_t st)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->config = config;
	a->sample_period = 1;
	a->sample_type = st;
	a->sample_id_all = 1;
	a->read_format = PERF_FORMAT_ID;
}

#define ST_ALL                                                                                     \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |                   \
	 PERF_SAMPLE_IDENTIFIER)

static uint8_t big[100000 + 3];

/* Writes the reference file used by several cases. */
static int write_reference(const char *path)
{
	static char *argv[] = {"hwt", "record", "--", "./prog with space"};
	struct hwt_perf_writer_config cfg;
	hwt_perf_writer_config_init(&cfg);
	cfg.hostname = "testhost";
	cfg.osrelease = "6.1.0-test";
	cfg.arch = "x86_64";
	cfg.cpuid = "GenuineIntel,6,142,10";
	cfg.cpudesc = "Test CPU";
	cfg.nr_cpus_online = 3;
	cfg.nr_cpus_avail = 4;
	cfg.total_mem_kb = 123456;
	cfg.argc = 4;
	cfg.argv = argv;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(&cfg);
	if (!w)
		return -1;
	int e = hwt_perf_writer_open(w, path);
	struct perf_event_attr a;
	uint64_t pt_ids[2] = {101, 102}, sb_ids[2] = {201, 202};
	attr_init(&a, 8, 0x2001, ST_ALL);
	if (!e)
		e = hwt_perf_writer_add_attr(w, &a, "intel_pt//u", pt_ids, 2) == 0 ? 0 : -1;
	attr_init(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY,
		  PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
		      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_IDENTIFIER);
	a.mmap2 = a.comm = a.task = 1;
	if (!e)
		e = hwt_perf_writer_add_attr(w, &a, "dummy:u", sb_ids, 2) == 1 ? 0 : -1;
	if (!e)
		e = hwt_perf_writer_add_pmu(w, "intel_pt", 8);
	struct hwt_perf_intel_pt_info info;
	hwt_perf_intel_pt_info_init(&info);
	info.pmu_type = 8;
	info.per_cpu_mmaps = 1;
	info.snapshot_mode = 1;
	info.max_nonturbo_ratio = 33;
	info.filter = "filter 0x1000/0x200@/bin/ls";
	if (!e)
		e = hwt_perf_writer_write_intel_pt_info(w, &info);
	struct hwt_perf_id_index_entry idx[4] = {{101, 0, 0, (uint64_t)-1},
						 {102, 1, 1, (uint64_t)-1},
						 {201, 0, 0, (uint64_t)-1},
						 {202, 1, 1, (uint64_t)-1}};
	if (!e)
		e = hwt_perf_writer_write_id_index(w, idx, 4);
	uint32_t pids[2] = {10, 11};
	const char *comms[2] = {"a-very-long-command-name", "b"};
	if (!e)
		e = hwt_perf_writer_write_thread_map(w, pids, comms, 2);
	struct hwt_perf_rec_time_conv tc;
	memset(&tc, 0, sizeof(tc));
	tc.time_shift = 31;
	tc.time_mult = 123456;
	tc.time_zero = 999;
	tc.cap_user_time_zero = 1;
	if (!e)
		e = hwt_perf_writer_write_time_conv(w, &tc);
	struct hwt_perf_sample_id sid = {
	    .pid = 10, .tid = 11, .time = 5000, .id = 201, .stream_id = 77, .cpu = 1};
	if (!e)
		e = hwt_perf_writer_write_comm(w, 10, 11, "worker", 1, &sid);
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_mmap2(w, 10, 11, 0x400000, 0x2000, 0x1000, 5, 2,
						"/usr/bin/some program", 0, &sid);
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_task(w, PERF_RECORD_FORK, 10, 10, 12, 11, 777, &sid);
	sid.id = 101;
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_itrace_start(w, 10, 12, &sid);
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_aux(
		    w, 4096, 8192, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL, &sid);
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_lost(w, 101, 9, &sid);
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_switch(w, 0, PERF_RECORD_MISC_SWITCH_OUT, 0, 0, &sid);
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_switch(w, 1, 0, 33, 34, &sid);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	struct hwt_perf_auxtrace_desc d = {
	    .offset = 4096, .reference = 0xabc, .idx = 1, .tid = (uint32_t)-1, .cpu = 1};
	/* small, in two parts, unpadded */
	if (!e)
		e = hwt_perf_writer_write_auxtrace(w, &d, big, 5, big + 5, 6);
	d.offset += 11;
	/* big, in two parts (direct writes), padded by 5 */
	if (!e)
		e = hwt_perf_writer_write_auxtrace(w, &d, big, 60000, big + 60000,
						   sizeof(big) - 60000);
	sid.id = 202;
	sid.time++;
	if (!e)
		e = hwt_perf_writer_write_task(w, PERF_RECORD_EXIT, 10, 10, 12, 11, 888, &sid);
	/* A raw record in two pieces: a COMM built by hand, no sample_id. */
	uint8_t raw[24] = {0};
	struct perf_event_header rh = {PERF_RECORD_COMM, 0, sizeof(raw)};
	memcpy(raw, &rh, 8);
	uint32_t pp[2] = {50, 51};
	memcpy(raw + 8, pp, 8);
	memcpy(raw + 16, "rawcomm", 8);
	if (!e)
		e = hwt_perf_writer_write_raw(w, raw, 12, raw + 12, 12);
	if (!e)
		e = hwt_perf_writer_write_finished_round(w);
	if (!e)
		e = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	return e;
}

static void t_roundtrip(void)
{
	char path[256];
	path_of(path, sizeof(path), "ref.data");
	CHECK_EQ(write_reference(path), 0);
	struct hwt_perf_reader *r;
	char why[256];
	int e = hwt_perf_reader_open(&r, path, why, sizeof(why));
	CHECKF(e == 0, "open: %s", why);
	if (e)
		return;
	/* attrs */
	CHECK_EQ(hwt_perf_reader_nr_attrs(r), 2);
	const struct hwt_perf_attr_info *a0 = hwt_perf_reader_attr(r, 0),
					*a1 = hwt_perf_reader_attr(r, 1);
	CHECK(a0 && a1 && !hwt_perf_reader_attr(r, 2));
	if (!a0 || !a1)
		return;
	CHECK_EQ(a0->attr.type, 8);
	CHECK_EQ(a0->attr.config, 0x2001);
	CHECK_EQ(a0->attr.sample_type, ST_ALL);
	CHECK(a0->name && !strcmp(a0->name, "intel_pt//u"));
	CHECK(a1->name && !strcmp(a1->name, "dummy:u"));
	CHECK_EQ(a0->nr_ids, 2);
	CHECK_EQ(a0->ids[1], 102);
	CHECK_EQ(a1->ids[0], 201);
	CHECK_EQ(a1->attr.mmap2, 1);
	CHECK_EQ(hwt_perf_reader_attr_by_id(r, 202), 1);
	CHECK_EQ(hwt_perf_reader_attr_by_id(r, 5), -1);
	/* features */
	const char *s = hwt_perf_reader_feature_string(r, HWT_FEAT_HOSTNAME);
	CHECK(s && !strcmp(s, "testhost"));
	s = hwt_perf_reader_feature_string(r, HWT_FEAT_OSRELEASE);
	CHECK(s && !strcmp(s, "6.1.0-test"));
	s = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID);
	CHECK(s && !strcmp(s, "GenuineIntel,6,142,10"));
	s = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUDESC);
	CHECK(s && !strcmp(s, "Test CPU"));
	s = hwt_perf_reader_feature_string(r, HWT_FEAT_ARCH);
	CHECK(s && !strcmp(s, "x86_64"));
	CHECK(hwt_perf_reader_feature_string(r, HWT_FEAT_VERSION) != NULL);
	s = hwt_perf_reader_cmdline(r);
	CHECK(s && !strcmp(s, "hwt record -- ./prog with space"));
	uint32_t on = 0, av = 0;
	CHECK_EQ(hwt_perf_reader_nrcpus(r, &on, &av), 0);
	CHECK_EQ(on, 3);
	CHECK_EQ(av, 4);
	uint64_t kb = 0;
	CHECK_EQ(hwt_perf_reader_total_mem(r, &kb), 0);
	CHECK_EQ(kb, 123456);
	CHECK(hwt_perf_reader_feature(r, HWT_FEAT_PMU_MAPPINGS, NULL) != NULL);
	CHECK(hwt_perf_reader_feature(r, HWT_FEAT_BUILD_ID, NULL) == NULL);

	/* records, in order */
	static const uint32_t want[] = {HWT_PERF_RECORD_AUXTRACE_INFO,
					HWT_PERF_RECORD_ID_INDEX,
					HWT_PERF_RECORD_THREAD_MAP,
					HWT_PERF_RECORD_TIME_CONV,
					PERF_RECORD_COMM,
					PERF_RECORD_MMAP2,
					PERF_RECORD_FORK,
					PERF_RECORD_ITRACE_START,
					PERF_RECORD_AUX,
					PERF_RECORD_LOST,
					PERF_RECORD_SWITCH,
					PERF_RECORD_SWITCH_CPU_WIDE,
					HWT_PERF_RECORD_AUXTRACE,
					HWT_PERF_RECORD_AUXTRACE,
					PERF_RECORD_EXIT,
					PERF_RECORD_COMM,
					HWT_PERF_RECORD_FINISHED_ROUND};
	struct hwt_perf_record rec;
	size_t i = 0, nidx = 0;
	uint64_t t = 5000;
	/* perf's AUXTRACE index: u64 nr, { file offset, header size } each */
	size_t fsz = 0;
	const uint8_t *fidx = hwt_perf_reader_feature(r, HWT_FEAT_AUXTRACE, &fsz);
	uint64_t idx[5] = {0};
	CHECK(fidx && fsz == 8 + 2 * 16);
	if (fidx && fsz == 8 + 2 * 16)
		memcpy(idx, fidx, fsz);
	CHECK_EQ(idx[0], 2);
	while ((e = hwt_perf_reader_next(r, &rec)) > 0) {
		CHECKF(i < sizeof(want) / 4 && rec.type == want[i], "record %zu: type %u (%s)", i,
		       rec.type, hwt_perf_record_name(rec.type));
		const uint8_t *p = (const uint8_t *)rec.hdr;
		if (rec.type < 64 && i != 15) {
			/* every sideband record carried the sid fields */
			CHECKF(rec.have_sid, "record %zu has no sample_id", i);
			CHECK_EQ(rec.sid.pid, 10);
			CHECK_EQ(rec.sid.tid, 11);
			CHECK_EQ(rec.sid.time, t);
			CHECK_EQ(rec.sid.cpu, 1);
			t++;
			CHECK_EQ(rec.attr_index, rec.sid.id >= 201 ? 1 : 0);
			if (rec.attr_index == 1)
				CHECK_EQ(rec.sid.stream_id, 77);
		}
		switch (i) {
		case 0: {
			struct hwt_perf_intel_pt_info info;
			size_t nr = (rec.size - 16) / 8;
			uint64_t priv[64];
			CHECK(nr > HWT_IPT_PRIV_MAX && nr < 64);
			memcpy(priv, p + 16, nr * 8);
			CHECK_EQ(hwt_perf_intel_pt_info_parse(&info, priv, nr), 0);
			CHECK_EQ(info.pmu_type, 8);
			CHECK_EQ(info.per_cpu_mmaps, 1);
			CHECK_EQ(info.snapshot_mode, 1);
			CHECK_EQ(info.tsc_bit, 1 << 10);
			CHECK_EQ(info.max_nonturbo_ratio, 33);
			CHECK_EQ(priv[HWT_IPT_FILTER_STR_LEN],
				 strlen("filter 0x1000/0x200@/bin/ls"));
			CHECK(!strcmp((const char *)&priv[HWT_IPT_PRIV_MAX],
				      "filter 0x1000/0x200@/bin/ls"));
			CHECK_EQ(hwt_perf_intel_pt_info_parse(&info, priv, 8), HWT_ERR_BAD_FORMAT);
			break;
		}
		case 1: {
			struct hwt_perf_id_index_entry ent;
			CHECK_EQ(rec.size, 16 + 4 * 32);
			memcpy(&ent, p + 16 + 32, sizeof(ent));
			CHECK_EQ(ent.id, 102);
			CHECK_EQ(ent.cpu, 1);
			break;
		}
		case 2: {
			struct hwt_perf_thread_map_entry ent;
			memcpy(&ent, p + 16, sizeof(ent));
			CHECK_EQ(ent.pid, 10);
			CHECK(!memcmp(ent.comm, "a-very-long-com", 16)); /* truncated, NUL */
			break;
		}
		case 3: {
			struct hwt_perf_rec_time_conv tc;
			CHECK_EQ(rec.size, sizeof(tc));
			memcpy(&tc, p, sizeof(tc));
			CHECK_EQ(tc.time_mult, 123456);
			CHECK_EQ(tc.time_zero, 999);
			CHECK_EQ(tc.cap_user_time_zero, 1);
			break;
		}
		case 4:
			CHECK_EQ(rec.misc, PERF_RECORD_MISC_COMM_EXEC);
			CHECK(!strcmp((const char *)p + 16, "worker"));
			CHECK_EQ(rec.size % 8, 0);
			break;
		case 5: {
			struct hwt_perf_rec_mmap2 m;
			memcpy(&m, p, sizeof(m));
			CHECK_EQ(m.addr, 0x400000);
			CHECK_EQ(m.len, 0x2000);
			CHECK_EQ(m.pgoff, 0x1000);
			CHECK_EQ(m.prot, 5);
			CHECK_EQ(m.flags, 2);
			CHECK(!strcmp((const char *)p + sizeof(m), "/usr/bin/some program"));
			break;
		}
		case 6: {
			struct hwt_perf_rec_fork f;
			memcpy(&f, p, sizeof(f));
			CHECK(f.pid == 10 && f.ppid == 10 && f.tid == 12 && f.ptid == 11 &&
			      f.time == 777);
			break;
		}
		case 8: {
			struct hwt_perf_rec_aux x;
			memcpy(&x, p, sizeof(x));
			CHECK(x.aux_offset == 4096 && x.aux_size == 8192 &&
			      x.flags == (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL));
			break;
		}
		case 9: {
			struct hwt_perf_rec_lost x;
			memcpy(&x, p, sizeof(x));
			CHECK(x.id == 101 && x.lost == 9);
			break;
		}
		case 10:
			CHECK_EQ(rec.misc, PERF_RECORD_MISC_SWITCH_OUT);
			break;
		case 11: {
			struct hwt_perf_rec_switch_cpu_wide x;
			memcpy(&x, p, sizeof(x));
			CHECK(x.next_prev_pid == 33 && x.next_prev_tid == 34);
			break;
		}
		case 12:
		case 13:
			CHECK_EQ(rec.file_offset, idx[1 + 2 * nidx]);
			CHECK_EQ(idx[2 + 2 * nidx], 48);
			CHECK_EQ(rec.aux_idx, 1);
			CHECK_EQ(rec.aux_offset, nidx ? 4096 + 11 : 4096);
			CHECK_EQ(rec.aux_reference, 0xabc);
			nidx++;
			break;
		}
		switch (i) {
		case 12:
			CHECK_EQ(rec.aux_size, 16);
			CHECK(!memcmp(rec.aux_data, big, 11));
			CHECK(rec.aux_data[11] == 0 && rec.aux_data[15] == 0);
			CHECK_EQ(rec.sid.cpu, 1);
			break;
		case 13: {
			struct hwt_perf_rec_auxtrace x;
			memcpy(&x, p, sizeof(x));
			CHECK_EQ(rec.aux_size, sizeof(big) + 5);
			CHECK(!memcmp(rec.aux_data, big, sizeof(big)));
			CHECK(x.offset == 4096 + 11 && x.reference == 0xabc && x.idx == 1 &&
			      x.cpu == 1 && x.tid == (uint32_t)-1);
			/* zero-copy: the payload lies inside the record's file bytes */
			CHECK(rec.aux_data == p + 48);
			break;
		}
		case 14: {
			struct hwt_perf_rec_fork f;
			memcpy(&f, p, sizeof(f));
			CHECK(f.time == 888);
			CHECK_EQ(rec.sid.id, 202);
			break;
		}
		case 15:
			CHECK(!strcmp((const char *)p + 16, "rawcomm"));
			CHECK_EQ(rec.have_sid, 0); /* too short for a trailer */
			break;
		}
		i++;
	}
	CHECK_EQ(e, 0);
	CHECK_EQ(i, sizeof(want) / 4);
	/* rewind gives the same first record */
	hwt_perf_reader_rewind(r);
	CHECK_EQ(hwt_perf_reader_next(r, &rec), 1);
	CHECK_EQ(rec.type, HWT_PERF_RECORD_AUXTRACE_INFO);
	hwt_perf_reader_free(r);
}

/* Iterate whatever the reader accepts; returns records seen or error. */
static int drain(const uint8_t *p, size_t n, int *open_err)
{
	struct hwt_perf_reader *r;
	char why[256];
	*open_err = hwt_perf_reader_open_mem(&r, p, n, why, sizeof(why));
	if (*open_err)
		return why[0] ? 0 : -1000; /* an error must come with a reason */
	struct hwt_perf_record rec;
	int e, k = 0;
	for (size_t i = 0; i < hwt_perf_reader_nr_attrs(r); i++)
		(void)hwt_perf_reader_attr(r, i)->attr.type;
	for (int f = 1; f < 32; f++)
		(void)hwt_perf_reader_feature_string(r, f);
	(void)hwt_perf_reader_cmdline(r);
	while ((e = hwt_perf_reader_next(r, &rec)) > 0) {
		k++;
		if (rec.aux_size)
			k += rec.aux_data[rec.aux_size - 1] == 0x55; /* touch the last byte */
	}
	if (e < 0 && !hwt_perf_reader_errmsg(r)[0])
		k = -1000;
	hwt_perf_reader_free(r);
	return e < 0 ? e : k;
}

static void t_truncated(void)
{
	char path[256];
	path_of(path, sizeof(path), "ref.data");
	size_t n;
	uint8_t *full = t_slurp(path, &n);
	CHECK(full != NULL);
	if (!full)
		return;
	int clean_errors = 0, bad = 0;
	/* Every length (the big AUXTRACE in steps): an exact-size copy, so
	 * ASan sees any read past the end. */
	for (size_t len = 0; len < n; len += (len > 2000 && len < n - 3000) ? 997 : 1) {
		uint8_t *p = malloc(len ? len : 1);
		memcpy(p, full, len);
		int oe;
		int k = drain(p, len, &oe);
		if (k == -1000)
			bad++;
		if (oe == HWT_ERR_BAD_FORMAT)
			clean_errors++;
		free(p);
	}
	CHECKF(bad == 0, "%d truncations gave an error without a message", bad);
	/* A file cut anywhere loses its feature table: the reader must say so. */
	CHECK(clean_errors > 100);
	free(full);
}

static void t_bitflip(void)
{
	char path[256];
	path_of(path, sizeof(path), "ref.data");
	size_t n;
	uint8_t *full = t_slurp(path, &n);
	CHECK(full != NULL);
	if (!full)
		return;
	int bad = 0;
	uint8_t *p = malloc(n);
	/* Flip each bit of everything but the big payload (every 61st byte there). */
	for (size_t i = 0; i < n; i += (i > 2200 && i < n - 2500) ? 61 : 1) {
		for (int b = 0; b < 8; b++) {
			memcpy(p, full, n);
			p[i] ^= (uint8_t)(1 << b);
			int oe;
			if (drain(p, n, &oe) == -1000)
				bad++;
		}
	}
	CHECKF(bad == 0, "%d flips gave an error without a message", bad);
	free(p);
	free(full);
}

static void t_open_errors(void)
{
	struct hwt_perf_reader *r = (void *)1;
	char why[256];
	CHECK_EQ(hwt_perf_reader_open(&r, "/nonexistent/x.data", why, sizeof(why)), HWT_ERR_IO);
	CHECK(r == NULL);
	CHECK(why[0] != 0);
	uint8_t junk[200];
	memset(junk, 'x', sizeof(junk));
	CHECK_EQ(hwt_perf_reader_open_mem(&r, junk, sizeof(junk), why, sizeof(why)),
		 HWT_ERR_BAD_FORMAT);
	CHECK(strstr(why, "not a perf.data") != NULL);
	/* a pipe-mode header alone: an empty stream */
	uint64_t pipe[2] = {HWT_PERF_MAGIC2, 16};
	CHECK_EQ(hwt_perf_reader_open_mem(&r, pipe, sizeof(pipe), why, sizeof(why)), 0);
	if (r) {
		struct hwt_perf_record rec;
		CHECK_EQ(hwt_perf_reader_is_pipe(r), 1);
		CHECK_EQ(hwt_perf_reader_next(r, &rec), 0);
		CHECK_EQ(hwt_perf_reader_nr_attrs(r), 0);
		hwt_perf_reader_free(r);
		r = NULL;
	}
	uint64_t swapped[13] = {__builtin_bswap64(HWT_PERF_MAGIC2)};
	CHECK_EQ(hwt_perf_reader_open_mem(&r, swapped, sizeof(swapped), why, sizeof(why)),
		 HWT_ERR_NOT_SUPPORTED);
	CHECK_EQ(hwt_perf_reader_open_mem(&r, NULL, 0, why, sizeof(why)), HWT_ERR_BAD_FORMAT);
	/* writer misuse */
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	CHECK(w != NULL);
	struct perf_event_attr a;
	attr_init(&a, 1, 9, ST_ALL);
	CHECK_EQ(hwt_perf_writer_write_finished_round(w), HWT_ERR_INVALID); /* not open */
	CHECK_EQ(hwt_perf_writer_open(w, "/nonexistent/dir/x.data"), HWT_ERR_IO);
	hwt_perf_writer_free(w);
	w = hwt_perf_writer_alloc(NULL);
	char path[256];
	path_of(path, sizeof(path), "misuse.data");
	CHECK_EQ(hwt_perf_writer_open(w, path), 0);
	CHECK_EQ(hwt_perf_writer_add_attr(w, &a, "x", NULL, 0), 0);
	CHECK_EQ(hwt_perf_writer_write_finished_round(w), 0);
	CHECK_EQ(hwt_perf_writer_add_attr(w, &a, "late", NULL, 0), HWT_ERR_INVALID);
	uint8_t odd[12] = {0};
	CHECK_EQ(hwt_perf_writer_write_raw(w, odd, 12, NULL, 0), HWT_ERR_INVALID);
	CHECK_EQ(hwt_perf_writer_write_task(w, PERF_RECORD_COMM, 1, 1, 1, 1, 0, NULL),
		 HWT_ERR_INVALID);
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	CHECK_EQ(hwt_perf_writer_finish(w), HWT_ERR_INVALID);
	hwt_perf_writer_free(w);
	/* that file is valid, with one record and no ids */
	int e = hwt_perf_reader_open(&r, path, why, sizeof(why));
	CHECKF(e == 0, "%s", why);
	if (!e) {
		struct hwt_perf_record rec;
		CHECK_EQ(hwt_perf_reader_next(r, &rec), 1);
		CHECK_EQ(rec.type, HWT_PERF_RECORD_FINISHED_ROUND);
		CHECK_EQ(hwt_perf_reader_next(r, &rec), 0);
		CHECK_EQ(hwt_perf_reader_attr(r, 0)->nr_ids, 0);
		hwt_perf_reader_free(r);
	}
}

/* Many records through the buffer (and direct writes between them) on a
 * caller's fd: all come back in order and intact. */
static void t_many_records_fd(void)
{
	char path[256];
	path_of(path, sizeof(path), "many.data");
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	struct perf_event_attr a;
	hwt_perf_attr_sideband(&a, 0);
	CHECK_EQ(hwt_perf_writer_open_fd(w, fd), 0);
	CHECK_EQ(hwt_perf_writer_add_attr(w, &a, "dummy:u", NULL, 0), 0);
	const int n = 20000;
	char name[64];
	int e = 0;
	for (int i = 0; i < n && !e; i++) {
		struct hwt_perf_sample_id sid = {
		    .pid = (uint32_t)i, .tid = (uint32_t)i + 1, .time = (uint64_t)i * 3};
		snprintf(name, sizeof(name), "t%0*d", i % 40, i);
		e = hwt_perf_writer_write_comm(w, (uint32_t)i, (uint32_t)i + 1, name, 0, &sid);
		if (!e && i % 1000 == 999) {
			struct hwt_perf_auxtrace_desc d = {.offset = (uint64_t)i,
							   .tid = (uint32_t)i};
			e = hwt_perf_writer_write_auxtrace(w, &d, big, 30000, NULL, 0);
		}
	}
	CHECK_EQ(e, 0);
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	hwt_perf_writer_free(w);
	CHECK_EQ(close(fd), 0); /* the writer did not close it */
	struct hwt_perf_reader *r;
	char why[256];
	e = hwt_perf_reader_open(&r, path, why, sizeof(why));
	CHECKF(e == 0, "%s", why);
	if (e)
		return;
	struct hwt_perf_record rec;
	int i = 0, bad = 0, aux = 0;
	while (hwt_perf_reader_next(r, &rec) > 0) {
		if (rec.type == HWT_PERF_RECORD_AUXTRACE) {
			aux++;
			bad += rec.aux_size != 30000 || memcmp(rec.aux_data, big, 30000) ||
			       rec.sid.tid != (uint32_t)i - 1;
			continue;
		}
		snprintf(name, sizeof(name), "t%0*d", i % 40, i);
		bad += rec.type != PERF_RECORD_COMM || strcmp((const char *)rec.hdr + 16, name) ||
		       !rec.have_sid || rec.sid.pid != (uint32_t)i ||
		       rec.sid.tid != (uint32_t)i + 1 || rec.sid.time != (uint64_t)i * 3;
		i++;
	}
	CHECK_EQ(i, n);
	CHECK_EQ(aux, n / 1000);
	CHECK_EQ(bad, 0);
	hwt_perf_reader_free(r);
}

/* Count lines of a command's output that contain needle. */
static long count_lines(const char *cmd, const char *needle)
{
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	char line[4096];
	long n = 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	return pclose(f) == 0 ? n : -1;
}

/* perf's own files: record counts per type must equal perf's dump. */
static int perf_record(const char *event)
{
	char path[256], cmd[1024];
	path_of(path, sizeof(path), "perf.data");
	snprintf(cmd, sizeof(cmd), "perf record -q -o %s -e %s -- /bin/true >/dev/null 2>&1", path,
		 event);
	return system(cmd) == 0;
}

static void check_perf_file(const char *event)
{
	char path[256], cmd[1024];
	path_of(path, sizeof(path), "perf.data");
	struct hwt_perf_reader *r;
	char why[256];
	int e = hwt_perf_reader_open(&r, path, why, sizeof(why));
	CHECKF(e == 0, "open perf's file: %s", why);
	if (e)
		return;
	const struct hwt_perf_attr_info *a = hwt_perf_reader_attr(r, 0);
	CHECK(a && a->name && !strcmp(a->name, event));
	CHECK(hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID) != NULL);
	CHECK(hwt_perf_reader_cmdline(r) && strstr(hwt_perf_reader_cmdline(r), "/bin/true"));
	long n_comm = 0, n_mmap2 = 0, n_sample = 0, n_total = 0, comm_true = 0;
	struct hwt_perf_record rec;
	while ((e = hwt_perf_reader_next(r, &rec)) > 0) {
		n_total++;
		n_comm += rec.type == PERF_RECORD_COMM;
		n_mmap2 += rec.type == PERF_RECORD_MMAP2;
		n_sample += rec.type == PERF_RECORD_SAMPLE;
		if (rec.type == PERF_RECORD_COMM && !strcmp((const char *)rec.hdr + 16, "true")) {
			comm_true++;
			if (a && a->attr.sample_id_all && (a->attr.sample_type & PERF_SAMPLE_TID))
				CHECK(rec.have_sid &&
				      rec.sid.pid ==
					  *(const uint32_t *)((const char *)rec.hdr + 8));
		}
		if (rec.type == PERF_RECORD_SAMPLE)
			CHECK(rec.have_sid && rec.sid.time != 0);
	}
	CHECK_EQ(e, 0);
	snprintf(cmd, sizeof(cmd), "perf report -D -i %s 2>/dev/null", path);
	CHECK_EQ(n_comm, count_lines(cmd, "PERF_RECORD_COMM"));
	CHECK_EQ(n_mmap2, count_lines(cmd, "PERF_RECORD_MMAP2"));
	CHECK_EQ(n_sample, count_lines(cmd, "PERF_RECORD_SAMPLE"));
	CHECK_EQ(n_total, count_lines(cmd, "perf.data [0x"));
	CHECK_EQ(comm_true, 1);
	hwt_perf_reader_free(r);
}

static void t_perf_dummy(void)
{
	check_perf_file("dummy");
}

static void t_perf_cpu_clock(void)
{
	check_perf_file("cpu-clock");
}

/* hwt's own features (HWT_FEAT_HWT_FIRST on): written after perf's, read
 * back as given; perf's features stay where the reader finds them; misuse
 * (a perf feature number, the same one twice, after finish) is refused. */
static void t_hwt_features(void)
{
	char path[256];
	path_of(path, sizeof(path), "xfeat.data");
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	struct perf_event_attr a;
	hwt_perf_attr_sideband(&a, 0);
	CHECK_EQ(hwt_perf_writer_open(w, path), 0);
	CHECK_EQ(hwt_perf_writer_add_attr(w, &a, "dummy:u", NULL, 0), 0);
	static const char fatal[] = "fatal pid=7 tid=9 signal=11\n";
	CHECK_EQ(hwt_perf_writer_add_feature(w, HWT_FEAT_HWT_FIRST + 3, "xyz", 3), 0);
	CHECK_EQ(hwt_perf_writer_add_feature(w, HWT_FEAT_HWT_FATAL, fatal, strlen(fatal)), 0);
	CHECK_EQ(hwt_perf_writer_add_feature(w, HWT_FEAT_HWT_FATAL, "x", 1), HWT_ERR_INVALID);
	CHECK_EQ(hwt_perf_writer_add_feature(w, HWT_FEAT_HOSTNAME, "x", 1), HWT_ERR_INVALID);
	CHECK_EQ(hwt_perf_writer_add_feature(w, HWT_FEAT_BITS, "x", 1), HWT_ERR_INVALID);
	CHECK_EQ(hwt_perf_writer_finish(w), 0);
	CHECK_EQ(hwt_perf_writer_add_feature(w, HWT_FEAT_HWT_FIRST + 4, "x", 1), HWT_ERR_INVALID);
	hwt_perf_writer_free(w);
	struct hwt_perf_reader *r;
	char why[256];
	int e = hwt_perf_reader_open(&r, path, why, sizeof(why));
	CHECKF(e == 0, "%s", why);
	if (e)
		return;
	size_t n = 0;
	const char *f = hwt_perf_reader_feature(r, HWT_FEAT_HWT_FATAL, &n);
	CHECK(f != NULL && n == strlen(fatal) && !memcmp(f, fatal, n));
	f = hwt_perf_reader_feature(r, HWT_FEAT_HWT_FIRST + 3, &n);
	CHECK(f != NULL && n == 3 && !memcmp(f, "xyz", 3));
	CHECK(hwt_perf_reader_feature(r, HWT_FEAT_HWT_FIRST + 1, NULL) == NULL);
	CHECK(hwt_perf_reader_feature_string(r, HWT_FEAT_HOSTNAME) != NULL);
	CHECK(hwt_perf_reader_cmdline(r) != NULL);
	hwt_perf_reader_free(r);
}

/* Resident memory of this process in KiB (/proc/self/statm), -1 if unknown. */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = -1, res = -1;
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = -1;
		fclose(f);
	}
	return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A file larger than the reader keeps mapped: one pass, then a rewind and
 * a second pass, every payload (also the first record's, kept from before
 * its pages were given back) byte for byte; the pass's resident memory
 * stays well below the file's size. */
static void t_large_file(void)
{
	enum { N = 48, CHUNK = 1 << 20 };
	char path[256];
	path_of(path, sizeof(path), "large.data");
	uint8_t *buf = malloc(CHUNK);
	CHECK(buf != NULL);
	if (!buf)
		return;
	struct hwt_perf_writer *w = hwt_perf_writer_alloc(NULL);
	struct perf_event_attr a;
	attr_init(&a, 8, 0x2001, ST_ALL);
	uint64_t id = 7;
	int e = hwt_perf_writer_open(w, path);
	if (!e)
		e = hwt_perf_writer_add_attr(w, &a, "intel_pt//u", &id, 1) == 0 ? 0 : -1;
	struct hwt_perf_auxtrace_desc d = {.tid = 1, .cpu = 0};
	for (unsigned k = 0; k < N && !e; k++) {
		for (size_t i = 0; i < CHUNK; i++)
			buf[i] = (uint8_t)(i * 13 + k * 7 + (i >> 12));
		e = hwt_perf_writer_write_auxtrace(w, &d, buf, CHUNK, NULL, 0);
		d.offset += CHUNK;
	}
	if (!e)
		e = hwt_perf_writer_finish(w);
	hwt_perf_writer_free(w);
	CHECK_EQ(e, 0);
	struct hwt_perf_reader *r;
	char why[256];
	if (e || hwt_perf_reader_open(&r, path, why, sizeof(why))) {
		CHECKF(0, "cannot write or open %s", path);
		free(buf);
		return;
	}
	const uint8_t *first = NULL;
	for (int pass = 0; pass < 2; pass++) {
		long rss0 = rss_kib(), peak = rss0;
		unsigned k = 0;
		size_t bad = 0;
		struct hwt_perf_record rec;
		while (hwt_perf_reader_next(r, &rec) == 1) {
			if (rec.type != HWT_PERF_RECORD_AUXTRACE)
				continue;
			CHECK_EQ(rec.aux_size, CHUNK);
			if (rec.aux_size != CHUNK)
				break;
			if (!first)
				first = rec.aux_data;
			for (size_t i = 0; i < CHUNK; i++)
				bad += rec.aux_data[i] != (uint8_t)(i * 13 + k * 7 + (i >> 12));
			k++;
			long now = rss_kib();
			if (now > peak)
				peak = now;
		}
		CHECKF(k == N && !bad, "pass %d: %u records, %zu bytes differ", pass, k, bad);
		/* the file is 48 MiB; the reader keeps at most 16 MiB of it */
		CHECKF(rss0 < 0 || peak - rss0 < 32 * 1024,
		       "pass %d: resident memory grew by %ld KiB over a 48 MiB file", pass,
		       peak - rss0);
		for (size_t i = 0; first && i < CHUNK; i += 4096)
			bad += first[i] != (uint8_t)(i * 13 + (i >> 12));
		CHECKF(!bad, "pass %d: the first payload changed after its pages were given back",
		       pass);
		CHECK_EQ(hwt_perf_reader_rewind(r), 0);
	}
	hwt_perf_reader_free(r);
	free(buf);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("FAIL setup: mkdtemp\n");
		return 1;
	}
	RUN(t_roundtrip);
	RUN(t_truncated);
	RUN(t_bitflip);
	RUN(t_open_errors);
	RUN(t_many_records_fd);
	RUN(t_hwt_features);
	RUN(t_large_file);
	if (perf_record("dummy"))
		RUN(t_perf_dummy);
	else
		printf("SKIP t_perf_dummy: perf record cannot run here\n");
	if (perf_record("cpu-clock"))
		RUN(t_perf_cpu_clock);
	else
		printf("SKIP t_perf_cpu_clock: perf record cannot run here\n");
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		printf("FAIL cleanup: %s\n", cmd);
	return t_done();
}
