/* Unit tests: the session feeding hwt record's perf.data sink
 * (tools/record_sink.c, compiled in here) with a fake emulated unit whose
 * rings this test produces into.
 *
 * Oracle: the bytes and records produced.  The file is read back with
 * lib/perf's reader: the AUXTRACE payloads, in file order, at their
 * offsets, are exactly the AUX bytes written (across ring wraps); every
 * sideband record written to the data ring is in the file unchanged; the
 * attrs carry the emulated unit's ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/record_sink.c"
#include "hwt/perf_records.h"
#include "t.h"

#define AUX_SIZE 512
#define DATA_SIZE 4096

struct area {
	struct perf_event_mmap_page ctl;
	uint8_t data[DATA_SIZE];
	uint8_t aux[AUX_SIZE];
};

static struct area *g_area;
static struct hwt_ring g_prod;
static int g_done, g_streams_seen;

static int f_launch(struct hwt_session *s, char *const argv[], pid_t *pid)
{
	struct hwt_stream *st = hwt_session_add_stream(s);
	if (!st)
		return HWT_ERR_NOMEM;
	st->pid = st->tid = 4242;
	st->id = HWT_EMU_ID_TRACE;
	hwt_ring_init_producer(&g_prod, &g_area->ctl, g_area->data, DATA_SIZE, g_area->aux,
			       AUX_SIZE, 0);
	hwt_ring_attach(&st->ring, &g_area->ctl, g_area->data, DATA_SIZE, g_area->aux, AUX_SIZE, 0);
	*pid = 4242;
	return 0;
}

/* what an emulated Intel PT unit does: perf's intel_pt attr */
static int f_configure(struct hwt_session *s, const char *terms, char *err, size_t errlen)
{
	hwt_perf_attr_intel_pt(hwt_session_attr(s), 99, 0);
	return 0;
}

static int f_poll(struct hwt_session *s, int timeout_ms)
{
	return g_done;
}

static const struct hwt_unit_ops fake_unit = {
    .name = "intel_pt",
    .emulated = 1,
    .configure = f_configure,
    .launch = f_launch,
    .poll = f_poll,
};

static int count_stream(void *arg, struct hwt_stream *st)
{
	g_streams_seen++;
	return 0;
}

/* A COMM record with the sideband attr's sample_id trailer
 * (TID, TIME, CPU, IDENTIFIER per hwt_perf_attr_sideband). */
static void produce_comm(const char *name, uint64_t time)
{
	uint8_t buf[128];
	memset(buf, 0, sizeof(buf));
	struct hwt_perf_rec_comm *c = (void *)buf;
	size_t nl = (strlen(name) + 1 + 7) & ~(size_t)7;
	c->header.type = PERF_RECORD_COMM;
	c->header.misc = PERF_RECORD_MISC_COMM_EXEC;
	c->pid = c->tid = 4242;
	memcpy(buf + sizeof(*c), name, strlen(name));
	uint8_t *t = buf + sizeof(*c) + nl;
	uint32_t pt[2] = {4242, 4242};
	memcpy(t, pt, 8);
	memcpy(t + 8, &time, 8);
	uint32_t cpu[2] = {0, 0};
	memcpy(t + 16, cpu, 8);
	uint64_t id = HWT_EMU_ID_SIDEBAND;
	memcpy(t + 24, &id, 8);
	c->header.size = (uint16_t)(sizeof(*c) + nl + 32);
	CHECK_EQ(hwt_ring_write_record(&g_prod, &c->header), 0);
}

static void t_record_file(void)
{
	char dir[] = "/tmp/hwt-test-sessrec-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char path[128];
	snprintf(path, sizeof(path), "%s/out.data", dir);
	g_area = calloc(1, sizeof(*g_area));

	struct hwt_record rec;
	memset(&rec, 0, sizeof(rec));
	struct hwt_sink sink;
	hwt_record_sink(&rec, &sink);
	sink.stream = count_stream;
	struct hwt_session_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.event = "intel_pt";
	cfg.unit = &fake_unit;
	struct hwt_session *s = NULL;
	char err[512] = "";
	CHECKF(hwt_session_open(&s, &cfg, &sink, err, sizeof(err)) == 0, "%s", err);
	if (!s)
		return;
	char *argv[] = {"hwt", "record", NULL};
	CHECKF(hwt_record_open_output(&rec, path, 2, argv, err, sizeof(err)) == 0, "%s", err);
	pid_t pid;
	CHECK_EQ(hwt_session_start_cmd(s, argv, &pid, err, sizeof(err)), 0);
	CHECKF(hwt_record_begin(&rec, s, "intel_pt", -1, err, sizeof(err)) == 0, "%s", err);

	static uint8_t src[3000];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 29 + 1);
	produce_comm("prog", 100);
	size_t w = 0;
	while (w < sizeof(src)) {
		size_t n = 50 + (w % 170);
		if (n > sizeof(src) - w)
			n = sizeof(src) - w;
		if (hwt_ring_aux_space(&g_prod) < n) {
			CHECK_EQ(hwt_session_pump(s, 0), 0);
			hwt_record_round(&rec);
			continue;
		}
		uint64_t head = g_prod.ctl->aux_head;
		CHECK_EQ(hwt_ring_aux_write(&g_prod, src + w, n), 0);
		struct hwt_perf_rec_aux a = {{PERF_RECORD_AUX, 0, sizeof(a)}, head, n, 0};
		CHECK_EQ(hwt_ring_write_record(&g_prod, &a.header), 0);
		w += n;
	}
	g_done = 1;
	CHECK_EQ(hwt_session_pump(s, 0), 1);
	CHECK_EQ(hwt_session_stop(s), 0);
	CHECKF(hwt_record_finish(&rec, s, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ(g_streams_seen, 1);
	hwt_session_close(s);

	struct hwt_perf_reader *r = NULL;
	CHECKF(hwt_perf_reader_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	if (r) {
		CHECK_EQ(hwt_perf_reader_nr_attrs(r), 2);
		const struct hwt_perf_attr_info *a0 = hwt_perf_reader_attr(r, 0);
		const struct hwt_perf_attr_info *a1 = hwt_perf_reader_attr(r, 1);
		CHECK(a0 && a0->nr_ids == 1 && a0->ids[0] == HWT_EMU_ID_TRACE);
		CHECK(a1 && a1->nr_ids == 1 && a1->ids[0] == HWT_EMU_ID_SIDEBAND);
		static uint8_t got[sizeof(src) + 64];
		uint64_t n = 0, prev = 0;
		int comm = 0, aux_recs = 0, bad_off = 0;
		struct hwt_perf_record pr;
		while (hwt_perf_reader_next(r, &pr) == 1) {
			if (pr.type == HWT_PERF_RECORD_AUXTRACE) {
				const struct hwt_perf_rec_auxtrace *at = (const void *)pr.hdr;
				/* payloads are zero-padded to 8: place each at its
				 * offset; the next one overwrites the padding */
				if ((n && at->offset <= prev) || at->tid != 4242 ||
				    at->offset + at->size > sizeof(got))
					bad_off++;
				else
					memcpy(got + at->offset, pr.aux_data, at->size);
				prev = at->offset;
				n = at->offset + at->size;
			} else if (pr.type == PERF_RECORD_COMM) {
				comm++;
				CHECKF(pr.have_sid && pr.sid.identifier == HWT_EMU_ID_SIDEBAND &&
					   pr.attr_index == 1,
				       "sid %d id %llu ident %llu attr %d", pr.have_sid,
				       (unsigned long long)pr.sid.id,
				       (unsigned long long)pr.sid.identifier, pr.attr_index);
				CHECK(!strcmp((const char *)pr.hdr + 16, "prog"));
			} else if (pr.type == PERF_RECORD_AUX) {
				aux_recs++;
			}
		}
		CHECK_EQ(comm, 1);
		CHECK(aux_recs > 10);
		CHECK_EQ(bad_off, 0);
		CHECK(n >= sizeof(src));
		CHECK(memcmp(got, src, sizeof(src)) == 0);
		hwt_perf_reader_free(r);
	}
	unlink(path);
	rmdir(dir);
	free(g_area);
}

int main(void)
{
	RUN(t_record_file);
	return t_done();
}
