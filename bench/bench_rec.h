/* bench/bench_rec.h - what the flow benches (bench_flow.c: libipt,
 * bench_hwt_flow.c: hwt) read from a recording, in the same way: each
 * AUXTRACE queue's chunks concatenated in memory, each file mapping
 * (MMAP/MMAP2 of an absolute path) handed to a callback, and the Intel
 * family/model/stepping of the CPUID feature.  Header-only (static
 * functions): every bench is one .c file. */
#ifndef HWT_BENCH_REC_H
#define HWT_BENCH_REC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/perf_data.h"

struct bench_q {
	uint32_t idx, tid;
	uint8_t *d;
	size_t n, cap;
};

struct bench_rec {
	struct bench_q *qs;
	size_t nq;
	int intel; /* cpu[] holds family, model, stepping */
	unsigned cpu[3];
};

typedef void (*bench_map_fn)(void *arg, const char *path, uint64_t pgoff, uint64_t len,
			     uint64_t addr);

static int bench_q_add(struct bench_rec *br, uint32_t idx, uint32_t tid, const void *data, size_t n)
{
	struct bench_q *q = NULL;
	for (size_t i = 0; i < br->nq; i++)
		if (br->qs[i].idx == idx)
			q = &br->qs[i];
	if (!q) {
		struct bench_q *nv = realloc(br->qs, (br->nq + 1) * sizeof(*nv));
		if (!nv)
			return -1;
		br->qs = nv;
		q = &br->qs[br->nq++];
		memset(q, 0, sizeof(*q));
		q->idx = idx;
		q->tid = tid;
	}
	if (q->n + n > q->cap) {
		size_t cap = (q->n + n) * 2;
		uint8_t *nd = realloc(q->d, cap);
		if (!nd)
			return -1;
		q->d = nd;
		q->cap = cap;
	}
	memcpy(q->d + q->n, data, n);
	q->n += n;
	return 0;
}

/* Read the recording at path (who: the bench's name for messages).
 * 0, or -1 after a message on stderr. */
static int bench_rec_load(struct bench_rec *br, const char *who, const char *path, bench_map_fn map,
			  void *arg)
{
	char eb[256];
	struct hwt_perf_reader *r;
	memset(br, 0, sizeof(*br));
	if (hwt_perf_reader_open(&r, path, eb, sizeof(eb))) {
		fprintf(stderr, "%s: %s: %s\n", who, path, eb);
		return -1;
	}
	const char *cpuid = hwt_perf_reader_feature_string(r, HWT_FEAT_CPUID);
	br->intel = cpuid && !strncmp(cpuid, "GenuineIntel,", 13) &&
		    sscanf(cpuid + 13, "%u,%u,%u", &br->cpu[0], &br->cpu[1], &br->cpu[2]) >= 2;
	struct hwt_perf_record rec;
	int err = 0;
	while (!err && hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_MMAP2 || rec.type == PERF_RECORD_MMAP) {
			size_t fix = rec.type == PERF_RECORD_MMAP2
					 ? sizeof(struct hwt_perf_rec_mmap2)
					 : sizeof(struct hwt_perf_rec_mmap);
			const struct hwt_perf_rec_mmap *m = (const void *)rec.hdr;
			const char *p = (const char *)rec.hdr + fix;
			if (rec.size <= fix || !memchr(p, 0, rec.size - fix) || p[0] != '/')
				continue;
			map(arg, p, m->pgoff, m->len, m->addr);
		} else if (rec.type == HWT_PERF_RECORD_AUXTRACE && rec.aux_data) {
			err = bench_q_add(br, rec.aux_idx, rec.sid.tid, rec.aux_data, rec.aux_size);
			if (err)
				fprintf(stderr, "%s: %s: out of memory\n", who, path);
		}
	}
	hwt_perf_reader_free(r);
	return err;
}

static void bench_rec_free(struct bench_rec *br)
{
	for (size_t i = 0; i < br->nq; i++)
		free(br->qs[i].d);
	free(br->qs);
	br->qs = NULL;
	br->nq = 0;
}

#endif
