/* tests/unit/test_pt_flow.c - hwt's instruction flow against libipt.
 *
 * Oracle: libipt 2.0.5's pt_insn decoder.  For every corpus test that
 * libipt 2.0.5 decodes without an error (tests with newer packets or
 * errata are then skipped), both decoders run over the whole trace (sync,
 * drain events, next, ...) and the executed instruction sequences
 * (ip, size, class) must be equal.  Also checks the block decoder yields
 * the same instructions.  One PASS/FAIL/SKIP line per corpus test.
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/image.h"
#include "hwt/pt_flow.h"
#include "t.h"

#define MAXI 200000

struct seq {
	uint64_t *ip;
	uint8_t *size, *cls;
	size_t n;
};

static int seq_add(struct seq *s, uint64_t ip, uint8_t size, uint8_t cls)
{
	if (s->n == MAXI)
		return -1;
	s->ip[s->n] = ip;
	s->size[s->n] = size;
	s->cls[s->n] = cls;
	s->n++;
	return 0;
}

static void seq_init(struct seq *s)
{
	s->ip = malloc(MAXI * sizeof(*s->ip));
	s->size = malloc(MAXI);
	s->cls = malloc(MAXI);
	s->n = 0;
	if (!s->ip || !s->size || !s->cls)
		abort();
}

static void seq_fini(struct seq *s)
{
	free(s->ip);
	free(s->size);
	free(s->cls);
}

/* libipt class families: 0 other, 1 cond, 2 jump, 3 call, 4 return, 5 far, 6 ptwrite */
static uint8_t ipt_family(enum pt_insn_class c)
{
	switch (c) {
	case ptic_cond_jump:
		return 1;
	case ptic_jump:
		return 2;
	case ptic_call:
		return 3;
	case ptic_return:
		return 4;
	case ptic_far_call:
	case ptic_far_return:
	case ptic_far_jump:
		return 5;
	case ptic_ptwrite:
		return 6;
	default:
		return 0;
	}
}

static uint8_t hwt_family(int c)
{
	switch (c) {
	case HWT_INSN_JCC:
		return 1;
	case HWT_INSN_JMP:
	case HWT_INSN_JMP_IND:
		return 2;
	case HWT_INSN_CALL:
	case HWT_INSN_CALL_IND:
		return 3;
	case HWT_INSN_RET:
		return 4;
	case HWT_INSN_PTWRITE:
		return 6;
	case HWT_INSN_OTHER:
		return 0;
	default:
		return 5;
	}
}

static uint8_t *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *d = malloc(sz > 0 ? (size_t)sz : 1);
	if (d && sz > 0 && fread(d, 1, (size_t)sz, f) != (size_t)sz) {
		free(d);
		d = NULL;
	}
	fclose(f);
	*n = (size_t)(sz > 0 ? sz : 0);
	return d;
}

/* Returns 0, or -1 if libipt met an error. */
static int run_libipt(uint8_t *pt, size_t ptn, const char *bin, size_t binsize, uint64_t org,
		      struct seq *s)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = pt;
	cfg.end = pt + ptn;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d)
		return -1;
	int bad = 0;
	if (binsize && pt_image_add_file(pt_insn_get_image(d), bin, 0, binsize, NULL, org) < 0)
		bad = 1;
	for (;;) {
		int st = pt_insn_sync_forward(d);
		if (st < 0) {
			if (st != -pte_eos)
				bad = 1;
			break;
		}
		for (;;) {
			while (st >= 0 && (st & pts_event_pending)) {
				struct pt_event ev;
				st = pt_insn_event(d, &ev, sizeof(ev));
			}
			if (st < 0 || (st & pts_eos))
				break;
			struct pt_insn in;
			memset(&in, 0, sizeof(in));
			st = pt_insn_next(d, &in, sizeof(in));
			if (in.iclass != ptic_error && in.size &&
			    seq_add(s, in.ip, in.size, ipt_family(in.iclass)))
				bad = 1;
			if (st < 0)
				break;
		}
		if (st < 0 && st != -pte_eos)
			bad = 1;
		if (bad)
			break;
	}
	pt_insn_free_decoder(d);
	return bad ? -1 : 0;
}

static int run_hwt(uint8_t *pt, size_t ptn, const char *bin, uint64_t org, int block, struct seq *s)
{
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	cfg.buf.begin = pt;
	cfg.buf.end = pt + ptn;
	struct hwt_image *img = hwt_image_alloc();
	if (!img)
		return -1;
	hwt_image_add_file(img, bin, 0, HWT_IMAGE_TO_END, org);
	struct hwt_pt_insn_decoder *di = block ? NULL : hwt_pt_insn_alloc(&cfg, img, NULL);
	struct hwt_pt_block_decoder *db = block ? hwt_pt_block_alloc(&cfg, img, NULL) : NULL;
	int bad = 0;
	if (!di && !db) {
		hwt_image_free(img);
		return -1;
	}
	for (;;) {
		int st = block ? hwt_pt_block_sync_forward(db) : hwt_pt_insn_sync_forward(di);
		if (st < 0) {
			if (st != HWT_ERR_EOS)
				bad = 1;
			break;
		}
		for (;;) {
			while (st >= 0 && (st & HWT_PTS_EVENT_PENDING)) {
				struct hwt_pt_event ev;
				st = block ? hwt_pt_block_event(db, &ev)
					   : hwt_pt_insn_event(di, &ev);
			}
			if (st < 0 || (st & HWT_PTS_EOS))
				break;
			if (block) {
				struct hwt_pt_block b;
				st = hwt_pt_block_next(db, &b);
				for (uint32_t i = 0; i < b.ninsn && !bad; i++)
					bad = seq_add(s, b.ips[i], 0, 0xff);
			} else {
				struct hwt_pt_insn in;
				st = hwt_pt_insn_next(di, &in);
				if (in.size)
					bad = seq_add(s, in.ip, in.size, hwt_family(in.iclass));
			}
			if (st < 0)
				break;
		}
		if (st < 0 && st != HWT_ERR_EOS)
			bad = 1;
		if (bad)
			break;
	}
	hwt_pt_insn_free(di);
	hwt_pt_block_free(db);
	hwt_image_free(img);
	return bad ? -1 : 0;
}

static int compare(const struct seq *a, const struct seq *b, int sizes, char *why, size_t wn)
{
	size_t n = a->n < b->n ? a->n : b->n;
	for (size_t i = 0; i < n; i++) {
		if (a->ip[i] != b->ip[i] ||
		    (sizes && (a->size[i] != b->size[i] || a->cls[i] != b->cls[i]))) {
			snprintf(why, wn, "insn %zu: hwt %llx/%u/%u, libipt %llx/%u/%u", i,
				 (unsigned long long)a->ip[i], a->size[i], a->cls[i],
				 (unsigned long long)b->ip[i], b->size[i], b->cls[i]);
			return -1;
		}
	}
	if (a->n != b->n) {
		snprintf(why, wn, "hwt has %zu instructions, libipt %zu", a->n, b->n);
		return -1;
	}
	return 0;
}

int main(void)
{
	const char *corpus = getenv("CORPUS");
	char path[512], line[4096];
	if (!corpus)
		corpus = "../shared/corpus/libipt-ptt";
	snprintf(path, sizeof(path), "%s/index.tsv", corpus);
	FILE *idx = fopen(path, "r");
	if (!idx) {
		printf("SKIP libipt-crosscheck: no corpus at %s\n", corpus);
		return 0;
	}
	struct seq ref, got;
	seq_init(&ref);
	seq_init(&got);
	int compared = 0;
	while (fgets(line, sizeof(line), idx)) {
		char *f[8] = {0};
		char *p = line;
		for (int i = 0; i < 8 && p; i++) {
			f[i] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = 0;
		}
		if (!f[6] || strcmp(f[5], "yes") || !strcmp(f[0], "name"))
			continue;
		if (*f[2] || strstr(f[6], "filter") || strstr(f[6], "--raw"))
			continue; /* errata and special images: not for 2.0.5 */
		const char *name = f[0];
		uint64_t org = strtoull(f[1], NULL, 0);
		char ptp[600], binp[600], cname[300];
		size_t ptn, binn;
		snprintf(ptp, sizeof(ptp), "%s/%s/%s.pt", corpus, name, name);
		snprintf(binp, sizeof(binp), "%s/%s/%s.bin", corpus, name, name);
		snprintf(cname, sizeof(cname), "libipt-crosscheck-%s", name);
		uint8_t *pt = read_all(ptp, &ptn);
		uint8_t *bin = read_all(binp, &binn);
		free(bin);
		ref.n = got.n = 0;
		if (!pt || run_libipt(pt, ptn, binp, binn, org, &ref) < 0 || !ref.n) {
			printf("SKIP %s: libipt 2.0.5 does not decode it cleanly\n", cname);
			free(pt);
			continue;
		}
		char why[256] = "";
		t_begin(cname);
		if (run_hwt(pt, ptn, binp, org, 0, &got) < 0)
			t_fail(__FILE__, __LINE__, "hwt insn decoder reported an error");
		else if (compare(&got, &ref, 1, why, sizeof(why)))
			t_fail(__FILE__, __LINE__, "insn decoder: %s", why);
		got.n = 0;
		if (run_hwt(pt, ptn, binp, org, 1, &got) < 0)
			t_fail(__FILE__, __LINE__, "hwt block decoder reported an error");
		else if (compare(&got, &ref, 0, why, sizeof(why)))
			t_fail(__FILE__, __LINE__, "block decoder: %s", why);
		t_end();
		compared++;
		free(pt);
	}
	fclose(idx);
	seq_fini(&ref);
	seq_fini(&got);
	t_begin("libipt-crosscheck-count");
	CHECKF(compared >= 50, "only %d corpus traces compared", compared);
	t_end();
	return t_done();
}
