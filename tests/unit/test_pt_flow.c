/* tests/unit/test_pt_flow.c - hwt's instruction flow against libipt.
 *
 * Oracle: libipt 2.0.5's pt_insn decoder.  For every corpus test that
 * libipt 2.0.5 decodes without an error (tests with newer packets or
 * errata are then skipped), both decoders run over the whole trace (sync,
 * drain events, next, ...) and the executed instruction sequences
 * (ip, size, class) must be equal.  Also checks the block decoder yields
 * the same instructions.  One PASS/FAIL/SKIP line per corpus test.
 *
 * Also synthetic streams made with the packet encoder over a small
 * hand-assembled loop (a conditional branch, a call, a return, a backward
 * conditional branch) in a memory image: TNT bits right before the end of
 * the buffer and right before a PSB+, with and without return
 * compression, TNT-8 and TNT-64; both decoders against libipt.
 */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/image.h"
#include "hwt/pt_flow.h"
#include "hwt/pt_packet.h"
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

/* A code image in memory (the synthetic tests). */
struct mem_image {
	const uint8_t *code;
	size_t size;
	uint64_t org;
};

static int ipt_read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip,
			void *ctx)
{
	const struct mem_image *m = ctx;
	(void)asid;
	if (ip < m->org || ip >= m->org + m->size)
		return -pte_nomap;
	size_t n = (size_t)(m->org + m->size - ip);
	if (n > size)
		n = size;
	memcpy(buf, m->code + (ip - m->org), n);
	return (int)n;
}

/* Returns 0, or -1 if libipt met an error.  The image: bin at org, or mem
 * if not NULL. */
static int run_libipt(uint8_t *pt, size_t ptn, const char *bin, size_t binsize, uint64_t org,
		      const struct mem_image *mem, int past_eos, struct seq *s)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = pt;
	cfg.end = pt + ptn;
	struct pt_insn_decoder *d = pt_insn_alloc_decoder(&cfg);
	if (!d)
		return -1;
	int bad = 0;
	if (mem && pt_image_set_callback(pt_insn_get_image(d), ipt_read_mem, (void *)mem) < 0)
		bad = 1;
	if (!mem && binsize &&
	    pt_image_add_file(pt_insn_get_image(d), bin, 0, binsize, NULL, org) < 0)
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
			if (st < 0 || (!past_eos && (st & pts_eos)))
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

/* past_eos: go on calling next() after HWT_PTS_EOS until HWT_ERR_EOS. */
/* Decode with hwt's insn (block 0) or block decoder (block 1), the
 * latter with its own decode cache or, if cache is set, that one (shared
 * across calls and images, as hwt script shares it across regions). */
static int run_hwt(uint8_t *pt, size_t ptn, const char *bin, uint64_t org,
		   const struct mem_image *mem, int block, int past_eos, struct seq *s,
		   struct hwt_pt_cache *cache)
{
	struct hwt_pt_config cfg;
	hwt_pt_config_init(&cfg);
	cfg.buf.begin = pt;
	cfg.buf.end = pt + ptn;
	struct hwt_image *img = hwt_image_alloc();
	if (!img)
		return -1;
	if (mem)
		hwt_image_add_mem(img, mem->code, mem->size, mem->org);
	else
		hwt_image_add_file(img, bin, 0, HWT_IMAGE_TO_END, org);
	struct hwt_pt_flow_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.size = sizeof(opt);
	opt.query.size = sizeof(opt.query);
	opt.cache = cache;
	struct hwt_pt_insn_decoder *di = block ? NULL : hwt_pt_insn_alloc(&cfg, img, &opt);
	struct hwt_pt_block_decoder *db = block ? hwt_pt_block_alloc(&cfg, img, &opt) : NULL;
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
			if (st < 0 || (!past_eos && (st & HWT_PTS_EOS)))
				break;
			int got = 0;
			if (block) {
				struct hwt_pt_block b;
				st = hwt_pt_block_next(db, &b);
				for (uint32_t i = 0; i < b.ninsn && !bad; i++)
					bad = seq_add(s, b.ips[i], b.sizes[i], 0xff);
				got = b.ninsn != 0;
			} else {
				struct hwt_pt_insn in;
				st = hwt_pt_insn_next(di, &in);
				if (in.size)
					bad = seq_add(s, in.ip, in.size, hwt_family(in.iclass));
				got = in.size != 0;
			}
			if (st < 0 || (past_eos && !got && (st & HWT_PTS_EOS)))
				break; /* (the second: no progress past the end) */
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

/* sizes: 0 compare addresses, 1 also sizes and classes, 2 also sizes. */
static int compare(const struct seq *a, const struct seq *b, int sizes, char *why, size_t wn)
{
	size_t n = a->n < b->n ? a->n : b->n;
	for (size_t i = 0; i < n; i++) {
		if (a->ip[i] != b->ip[i] || (sizes && a->size[i] != b->size[i]) ||
		    (sizes == 1 && a->cls[i] != b->cls[i])) {
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

/* ---- synthetic streams ---- */

#include "t_syn.h"

static void t_synthetic(struct seq *ref, struct seq *got, struct hwt_pt_cache *shared,
			struct hwt_pt_cache *shared2, struct hwt_pt_cache *tiny)
{
	static const int maxbits[2] = {6, 47};
	const struct mem_image mem = {syn_code, sizeof(syn_code), SYN_ORG};
	struct syn e;
	char name[96], why[256];
	for (int rc = 0; rc < 2; rc++)
		for (int tb = 0; tb < 4; tb++) {
			int past = tb >= 2; /* decode on after the end of the trace */
			snprintf(name, sizeof(name), "synthetic-tnt%d-%sretcomp-eob-psb%s",
				 tb & 1 ? 64 : 8, rc ? "" : "no", past ? "-past-eos" : "");
			t_begin(name);
			int cases = 0;
			for (int nans = 1; nans <= 40 && !t_case_failed; nans++)
				for (int psb_at = -1; psb_at < nans && !t_case_failed; psb_at++) {
					if (psb_at == 0)
						continue;
					syn_build(&e, rc, maxbits[tb & 1], nans, psb_at,
						  0x9a3c5e71u);
					CHECK(e.err == 0);
					ref->n = got->n = 0;
					const char *where = psb_at < 0 ? "end of buffer" : "psb";
					if (run_libipt(e.buf, e.n, NULL, 0, 0, &mem, past, ref) <
					    0) {
						t_fail(__FILE__, __LINE__,
						       "libipt: error (%d answers, %s after %d)",
						       nans, where, psb_at);
						break;
					}
					/* insn decoder, block decoder, block decoder
					 * with the shared cache, with a tiny one; the
					 * first two with a cache of their own on every
					 * fifth stream (a new cache costs a lot under
					 * ASan), else with a second shared one */
					int own = cases % 5 == 0;
					for (int k = 0; k < 4 && !t_case_failed; k++) {
						int block = k > 0;
						got->n = 0;
						if (run_hwt(e.buf, e.n, NULL, 0, &mem, block, past,
							    got,
							    k == 2   ? shared
							    : k == 3 ? tiny
							    : own    ? NULL
								     : shared2) < 0)
							t_fail(__FILE__, __LINE__,
							       "hwt %s decoder: error (%d answers, "
							       "%s after %d)",
							       block ? "block" : "insn", nans,
							       where, psb_at);
						else if (compare(got, ref, block ? 2 : 1, why,
								 sizeof(why)))
							t_fail(__FILE__, __LINE__,
							       "%s decoder, %d answers, %s after "
							       "%d: %s",
							       block ? "block" : "insn", nans,
							       where, psb_at, why);
					}
					cases++;
				}
			CHECKF(t_case_failed || cases > 500, "only %d streams", cases);
			t_end();
		}
}

int main(void)
{
	const char *corpus = getenv("CORPUS");
	char path[512], line[4096];
	if (!corpus)
		corpus = "../shared/corpus/libipt-ptt";
	snprintf(path, sizeof(path), "%s/index.tsv", corpus);
	struct seq ref, got;
	seq_init(&ref);
	seq_init(&got);
	/* one decode cache for every block decoder below: it must start over
	 * by itself whenever the image changes */
	struct hwt_pt_cache *shared = hwt_pt_cache_alloc();
	/* and one so small that it starts over all the time (a run pool
	 * of 300 instructions: blocks of several runs see their first run's
	 * pool slots reused while they grow) */
	struct hwt_pt_cache_config tc = {sizeof(tc), 300};
	struct hwt_pt_cache *tiny = hwt_pt_cache_alloc_cfg(&tc);
	if (!shared || !tiny) {
		printf("FAIL libipt-crosscheck: out of memory\n");
		return 1;
	}
	struct hwt_pt_cache *shared2 = hwt_pt_cache_alloc();
	if (!shared2) {
		printf("FAIL libipt-crosscheck: out of memory\n");
		return 1;
	}
	t_synthetic(&ref, &got, shared, shared2, tiny);
	hwt_pt_cache_free(shared2);
	FILE *idx = fopen(path, "r");
	if (!idx) {
		printf("SKIP libipt-crosscheck: no corpus at %s\n", corpus);
		hwt_pt_cache_free(shared);
		hwt_pt_cache_free(tiny);
		seq_fini(&ref);
		seq_fini(&got);
		return t_done();
	}
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
		if (!pt || run_libipt(pt, ptn, binp, binn, org, NULL, 0, &ref) < 0 || !ref.n) {
			printf("SKIP %s: libipt 2.0.5 does not decode it cleanly\n", cname);
			free(pt);
			continue;
		}
		char why[256] = "";
		t_begin(cname);
		if (run_hwt(pt, ptn, binp, org, NULL, 0, 0, &got, NULL) < 0)
			t_fail(__FILE__, __LINE__, "hwt insn decoder reported an error");
		else if (compare(&got, &ref, 1, why, sizeof(why)))
			t_fail(__FILE__, __LINE__, "insn decoder: %s", why);
		got.n = 0;
		if (run_hwt(pt, ptn, binp, org, NULL, 0, 0, &got, tiny) < 0)
			t_fail(__FILE__, __LINE__,
			       "hwt insn decoder (tiny cache) reported an error");
		else if (compare(&got, &ref, 1, why, sizeof(why)))
			t_fail(__FILE__, __LINE__, "insn decoder (tiny cache): %s", why);
		static const char *const cname_k[3] = {"", " (shared cache)", " (tiny cache)"};
		for (int k = 0; k < 3; k++) {
			got.n = 0;
			struct hwt_pt_cache *kc = k == 1 ? shared : k == 2 ? tiny : NULL;
			if (run_hwt(pt, ptn, binp, org, NULL, 1, 0, &got, kc) < 0)
				t_fail(__FILE__, __LINE__, "hwt block decoder%s reported an error",
				       cname_k[k]);
			else if (compare(&got, &ref, 2, why, sizeof(why)))
				t_fail(__FILE__, __LINE__, "block decoder%s: %s", cname_k[k], why);
		}
		t_end();
		compared++;
		free(pt);
	}
	fclose(idx);
	seq_fini(&ref);
	seq_fini(&got);
	hwt_pt_cache_free(shared);
	hwt_pt_cache_free(tiny);
	t_begin("libipt-crosscheck-count");
	CHECKF(compared >= 50, "only %d corpus traces compared", compared);
	t_end();
	return t_done();
}
