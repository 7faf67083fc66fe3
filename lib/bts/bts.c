/* lib/bts/bts.c - the Intel BTS decoder (hwt/bts.h).
 *
 * Design: a cursor over 24-byte records.  Each record's `from` is
 * classified once per address through a small direct-mapped cache of
 * decoded instructions (address, image version) -> (class, size), so the
 * branch view costs one image lookup and one Zydis decode per distinct
 * branch instruction.  With walking on, the instructions between the
 * previous target and `from` are decoded one by one from the image (a
 * contiguous piece at a time): conditional branches fell through, far
 * transfers (syscall, int n) return to the next instruction in user-mode
 * traces, and any other branch before `from` is a mismatch.
 *
 * Ownership: the decoder owns its cache and its instruction list (bounded
 * by HWT_BTS_MAX_WALK); it borrows the records and the image.  No global
 * state.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/bts.h"
#include "hwt/x86.h"
#include "out/out.h"

#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(HWT_BTS_JCC, HWT_BR_JCC) && SAME(HWT_BTS_JMP, HWT_BR_JMP) &&
		   SAME(HWT_BTS_IJMP, HWT_BR_IJMP) && SAME(HWT_BTS_CALL, HWT_BR_CALL) &&
		   SAME(HWT_BTS_ICALL, HWT_BR_ICALL) && SAME(HWT_BTS_RET, HWT_BR_RET) &&
		   SAME(HWT_BTS_FAR, HWT_BR_FAR) && SAME(HWT_BTS_ASYNC, HWT_BR_ASYNC),
	       "BTS kinds are hwt script's branch kinds");
#undef SAME
_Static_assert(sizeof(struct hwt_bts_record) == HWT_BTS_RECORD_SIZE, "bts record");

#define CACHE_SIZE 4096 /* power of two */
#define KERNEL_START 0xffff800000000000ull

struct cache_ent {
	uint64_t ip;
	uint32_t version;
	uint8_t valid, iclass, size, ok;
};

struct hwt_bts_decoder {
	struct hwt_bts_config cfg;
	const struct hwt_image *img;
	size_t pos; /* byte offset of the next record in cfg.begin */
	uint64_t last_off;
	uint64_t ip; /* error ip, else the last target */
	int have_prev;
	uint64_t prev_to;
	int nowalk_once; /* the record at pos failed its walk: return it unwalked */
	int started;	 /* next was called */
	uint64_t *ips;
	uint8_t *sizes;
	uint32_t cap;
	struct cache_ent cache[CACHE_SIZE];
};

void hwt_bts_config_init(struct hwt_bts_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}

int hwt_bts_record_at(const uint8_t *begin, const uint8_t *end, size_t i, struct hwt_bts_record *r)
{
	if (!begin || end < begin || (size_t)(end - begin) / HWT_BTS_RECORD_SIZE <= i)
		return HWT_ERR_EOS;
	memcpy(r, begin + i * HWT_BTS_RECORD_SIZE, sizeof(*r));
	return 0;
}

struct hwt_bts_decoder *hwt_bts_alloc(const struct hwt_bts_config *cfg, const struct hwt_image *img)
{
	if (!cfg || !img || cfg->size < offsetof(struct hwt_bts_config, walk) ||
	    (cfg->begin && cfg->end < cfg->begin) || (!cfg->begin && cfg->end))
		return NULL;
	struct hwt_bts_decoder *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	memcpy(&d->cfg, cfg, cfg->size < sizeof(d->cfg) ? cfg->size : sizeof(d->cfg));
	d->cfg.size = sizeof(d->cfg);
	d->img = img;
	d->have_prev = d->cfg.have_prev != 0;
	d->prev_to = d->cfg.prev_to;
	return d;
}

void hwt_bts_free(struct hwt_bts_decoder *d)
{
	if (!d)
		return;
	free(d->ips);
	free(d->sizes);
	free(d);
}

static size_t buf_len(const struct hwt_bts_decoder *d)
{
	return d->cfg.begin ? (size_t)(d->cfg.end - d->cfg.begin) : 0;
}

/* Decode the instruction at ip: 0 with class and size, or an error. */
static int decode_at(const struct hwt_image *img, uint64_t ip, uint8_t *iclass, uint8_t *size)
{
	struct hwt_image_span sp;
	uint8_t tmp[15];
	const uint8_t *bytes;
	size_t avail;
	if (hwt_image_lookup(img, ip, &sp) < 0)
		return HWT_ERR_NOMAP;
	if (sp.avail >= 15) {
		bytes = sp.data;
		avail = 15;
	} else { /* the instruction may continue in the next piece */
		int n = hwt_image_read(img, ip, tmp, sizeof(tmp));
		if (n <= 0)
			return HWT_ERR_NOMAP;
		bytes = tmp;
		avail = (size_t)n;
	}
	struct hwt_x86_insn in;
	int r = hwt_x86_decode(bytes, avail, ip, 64, &in);
	if (r < 0)
		return r == HWT_ERR_NOMAP ? HWT_ERR_NOMAP : HWT_ERR_BAD_INSN;
	*iclass = in.iclass;
	*size = in.size;
	return 0;
}

static int classify(struct hwt_bts_decoder *d, uint64_t ip, uint8_t *iclass, uint8_t *size)
{
	uint32_t ver = hwt_image_version(d->img);
	struct cache_ent *e = &d->cache[(ip ^ (ip >> 13)) & (CACHE_SIZE - 1)];
	if (e->valid && e->ip == ip && e->version == ver) {
		*iclass = e->iclass;
		*size = e->size;
		return e->ok ? 0 : HWT_ERR_BAD_INSN;
	}
	int r = decode_at(d->img, ip, iclass, size);
	if (r == HWT_ERR_NOMAP)
		return r; /* not cached: the image may grow */
	e->valid = 1;
	e->ip = ip;
	e->version = ver;
	e->ok = r == 0;
	e->iclass = r == 0 ? *iclass : 0;
	e->size = r == 0 ? *size : 0;
	return r;
}

static int kind_of(uint8_t iclass, uint64_t to)
{
	switch (iclass) {
	case HWT_INSN_OTHER:
	case HWT_INSN_PTWRITE:
		return HWT_BTS_ASYNC;
	case HWT_INSN_JCC:
	case HWT_INSN_JMP:
	case HWT_INSN_JMP_IND:
	case HWT_INSN_CALL:
	case HWT_INSN_CALL_IND:
	case HWT_INSN_RET:
		if (to >= KERNEL_START) /* a user branch cannot go there: an interrupt */
			return HWT_BTS_ASYNC;
		return hwt_branch_kind_of(iclass);
	default:
		return HWT_BTS_FAR;
	}
}

static int push_insn(struct hwt_bts_decoder *d, uint32_t n, uint64_t ip, uint8_t size)
{
	if (n == d->cap) {
		uint32_t cap = d->cap ? 2 * d->cap : 256;
		if (cap > HWT_BTS_MAX_WALK + 1)
			cap = HWT_BTS_MAX_WALK + 1;
		if (cap <= n)
			return HWT_ERR_BAD_QUERY;
		uint64_t *ips = realloc(d->ips, cap * sizeof(*ips));
		if (!ips)
			return HWT_ERR_NOMEM;
		d->ips = ips;
		uint8_t *sizes = realloc(d->sizes, cap);
		if (!sizes)
			return HWT_ERR_NOMEM;
		d->sizes = sizes;
		d->cap = cap;
	}
	d->ips[n] = ip;
	d->sizes[n] = size;
	return 0;
}

/* Walk from ip up to the branch at `from`: 0 with *n instructions (the
 * last one at from), or an error with d->ip where the walk stopped. */
static int walk(struct hwt_bts_decoder *d, uint64_t ip, uint64_t from, uint8_t from_size,
		uint32_t *n)
{
	uint32_t k = 0;
	for (;;) {
		if (ip == from) {
			int r = push_insn(d, k, ip, from_size);
			if (r < 0)
				return r;
			*n = k + 1;
			return 0;
		}
		if (k >= HWT_BTS_MAX_WALK) {
			d->ip = ip;
			return HWT_ERR_BAD_QUERY;
		}
		uint8_t iclass, size;
		int r = classify(d, ip, &iclass, &size);
		if (r < 0) {
			d->ip = ip;
			return r;
		}
		switch (iclass) {
		case HWT_INSN_OTHER:
		case HWT_INSN_PTWRITE:
		case HWT_INSN_JCC:     /* not taken: BTS would have recorded it */
		case HWT_INSN_SYSCALL: /* user-only: the kernel returns after it */
		case HWT_INSN_INT:
			break;
		default: /* an unrecorded taken branch: the trace does not match */
			d->ip = ip;
			return HWT_ERR_BAD_QUERY;
		}
		r = push_insn(d, k++, ip, size);
		if (r < 0) {
			d->ip = ip;
			return r;
		}
		if (ip < from && ip + size > from) {
			d->ip = ip; /* stepped over from: it is not an instruction boundary */
			return HWT_ERR_BAD_QUERY;
		}
		ip += size;
	}
}

static void skip_padding(struct hwt_bts_decoder *d)
{
	size_t len = buf_len(d);
	while (d->pos + HWT_BTS_RECORD_SIZE <= len) {
		struct hwt_bts_record r;
		memcpy(&r, d->cfg.begin + d->pos, sizeof(r));
		if (r.from || r.to)
			break;
		d->pos += HWT_BTS_RECORD_SIZE;
	}
}

int hwt_bts_sync_forward(struct hwt_bts_decoder *d)
{
	if (!d)
		return HWT_ERR_INVALID;
	if (d->started) /* the first sync keeps the config's previous target */
		d->have_prev = 0;
	skip_padding(d);
	return d->pos < buf_len(d) ? 0 : HWT_ERR_EOS;
}

int hwt_bts_next(struct hwt_bts_decoder *d, struct hwt_bts_branch *br)
{
	if (!d || !br)
		return HWT_ERR_INVALID;
	size_t len = buf_len(d);
	d->started = 1;
	skip_padding(d);
	if (d->pos >= len)
		return HWT_ERR_EOS;
	d->last_off = d->cfg.offset + d->pos;
	if (len - d->pos < HWT_BTS_RECORD_SIZE) { /* a partial record */
		d->pos = len;
		d->have_prev = 0;
		d->ip = 0;
		return HWT_ERR_BAD_PACKET;
	}
	struct hwt_bts_record rec;
	memcpy(&rec, d->cfg.begin + d->pos, sizeof(rec));
	uint8_t iclass = 0, size = 0;
	int r = rec.from ? classify(d, rec.from, &iclass, &size) : HWT_ERR_NOMAP;
	struct hwt_image_span sp;
	if (r < 0 || !rec.to ||
	    (rec.to < KERNEL_START && hwt_image_lookup(d->img, rec.to, &sp) < 0)) {
		d->ip = r < 0 ? rec.from : rec.to;
		d->pos += HWT_BTS_RECORD_SIZE;
		d->have_prev = 0;
		d->nowalk_once = 0;
		return r < 0 ? r : HWT_ERR_NOMAP;
	}
	memset(br, 0, sizeof(*br));
	br->from = rec.from;
	br->to = rec.to;
	br->flags = rec.flags;
	br->offset = d->last_off;
	br->iclass = iclass;
	br->size = size;
	br->predicted = (rec.flags & HWT_BTS_FLAG_PREDICTED) != 0;
	br->kind = (uint8_t)kind_of(iclass, rec.to);
	if (d->cfg.walk) {
		uint32_t n = 0;
		if (d->have_prev && !d->nowalk_once) {
			r = walk(d, d->prev_to, rec.from, size, &n);
			if (r < 0) { /* keep the record: returned unwalked next time */
				d->have_prev = 0;
				d->nowalk_once = 1;
				return r;
			}
			br->walked = 1;
		} else {
			r = push_insn(d, 0, rec.from, size);
			if (r < 0)
				return r;
			n = 1;
		}
		br->ninsn = n;
		br->ips = d->ips;
		br->sizes = d->sizes;
	}
	d->nowalk_once = 0;
	d->pos += HWT_BTS_RECORD_SIZE;
	d->have_prev = rec.to < KERNEL_START; /* the kernel's code is not walked */
	d->prev_to = rec.to;
	d->ip = rec.to;
	return 0;
}

int hwt_bts_offset(const struct hwt_bts_decoder *d, uint64_t *offset)
{
	if (!d || !offset)
		return HWT_ERR_INVALID;
	*offset = d->last_off;
	return 0;
}

int hwt_bts_prev(const struct hwt_bts_decoder *d, uint64_t *to)
{
	if (!d || !d->have_prev)
		return 0;
	*to = d->prev_to;
	return 1;
}

uint64_t hwt_bts_ip(const struct hwt_bts_decoder *d)
{
	return d ? d->ip : 0;
}
