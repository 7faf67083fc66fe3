/* examples/ptdump_mini.c - list the Intel PT packets of a recording with
 * libhwt: the perf.data reader and the packet decoder.
 *
 *   usage: ptdump_mini [FILE]          (default hwt.data)
 *
 * A recording (hwt record, or perf record -e intel_pt//u) holds the trace
 * in AUXTRACE records: pieces of the AUX stream of one thread (per-thread
 * mode) or one CPU (per-CPU mode).  The pieces of one stream share an mmap
 * index (aux_idx) and follow each other in the file, so this program
 * glues the pieces of each stream together and walks the packets of each
 * stream in turn, printing
 *
 *   # stream IDX: tid TID, cpu CPU, SIZE bytes
 *   OFFSET  NAME                       (one line per packet)
 *
 * which is the first two columns of `hwt dump FILE` (hwt dump also prints
 * each packet's payload, and applies the errata of the recorded CPU).
 *
 * Build: cc ptdump_mini.c $(pkg-config --cflags --libs hwt)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/perf_data.h>
#include <hwt/pt_packet.h>

/* The trace bytes of one stream, in AUX stream order. */
struct stream {
	uint32_t idx;	  /* mmap index: one per thread or CPU */
	int32_t tid, cpu; /* -1 where not applicable */
	uint8_t *data;
	size_t size;
};

/* The stream with mmap index idx, added if new; NULL when out of memory. */
static struct stream *stream_get(struct stream **v, size_t *n, uint32_t idx)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].idx == idx)
			return &(*v)[i];
	struct stream *nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return NULL;
	*v = nv;
	nv[*n] = (struct stream){.idx = idx};
	return &nv[(*n)++];
}

/* Print every packet of one stream.  The decoder works on memory we own
 * (it never reads files); it starts at the first PSB (sync_forward) and,
 * after a broken packet, goes on at the next PSB. */
static int dump_stream(const struct stream *st)
{
	struct hwt_pt_buf buf = {.begin = st->data, .end = st->data + st->size};
	struct hwt_pt_pkt_decoder *dec = hwt_pt_pkt_alloc(&buf);
	int errors = 0;
	if (!dec)
		return -1;
	printf("# stream %u: tid %d, cpu %d, %zu bytes\n", st->idx, st->tid, st->cpu, st->size);
	int r = hwt_pt_pkt_sync_forward(dec); /* HWT_ERR_EOS: no PSB at all */
	while (r >= 0) {
		struct hwt_pt_packet pkt;
		uint64_t offset = 0;
		hwt_pt_pkt_offset(dec, &offset); /* where the next packet starts */
		r = hwt_pt_pkt_next(dec, &pkt);
		if (r == HWT_ERR_EOS)
			break;
		if (r < 0) {
			printf("[%016llx: %s]\n", (unsigned long long)offset, hwt_errstr(r));
			errors++;
			/* resync past the bad spot (sync_forward from a PSB
			 * would find that same PSB again) */
			r = hwt_pt_pkt_sync_set(dec, offset + 1);
			if (r >= 0)
				r = hwt_pt_pkt_sync_forward(dec);
			continue;
		}
		printf("%016llx  %s\n", (unsigned long long)offset, hwt_pt_pkt_name(pkt.type));
	}
	hwt_pt_pkt_free(dec);
	return errors;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "hwt.data";
	struct hwt_perf_reader *r;
	char err[256];

	/* The reader maps the file; records point into the mapping and stay
	 * valid until hwt_perf_reader_free(). */
	if (hwt_perf_reader_open(&r, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "ptdump_mini: cannot read '%s': %s\n", path, err);
		return 2;
	}

	/* Collect the AUXTRACE payloads, stream by stream. */
	struct stream *v = NULL;
	size_t nv = 0;
	struct hwt_perf_record rec;
	int ret;
	while ((ret = hwt_perf_reader_next(r, &rec)) == 1) {
		if (rec.type != HWT_PERF_RECORD_AUXTRACE || !rec.aux_data)
			continue;
		struct stream *st = stream_get(&v, &nv, rec.aux_idx);
		uint8_t *d = st ? realloc(st->data, st->size + rec.aux_size) : NULL;
		if (!d) {
			fprintf(stderr, "ptdump_mini: out of memory\n");
			return 2;
		}
		memcpy(d + st->size, rec.aux_data, rec.aux_size);
		st->data = d;
		st->size += rec.aux_size;
		st->tid = (int32_t)rec.sid.tid; /* the record's tid and cpu */
		st->cpu = (int32_t)rec.sid.cpu;
	}
	if (ret < 0)
		fprintf(stderr, "ptdump_mini: '%s' is damaged: %s\n", path,
			hwt_perf_reader_errmsg(r));

	int errors = 0;
	for (size_t i = 0; i < nv; i++) {
		errors += dump_stream(&v[i]) != 0;
		free(v[i].data);
	}
	free(v);
	hwt_perf_reader_free(r);
	return errors || ret < 0 ? 1 : 0;
}
