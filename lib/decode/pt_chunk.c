/* lib/decode/pt_chunk.c - a queue's AUXTRACE chunks cut into regions
 * that start at a PSB and end at the next one (see pt.c): the
 * middle of a chunk is decoded in place, the piece that straddles two
 * chunks goes through the queue's carry buffer (at most CARRY_MAX, else
 * it is decoded as it stands).  A region ends at a PSB only once its PSB+
 * has come up to the FUP; a chunk's last zero bytes may be padding until
 * the next chunk's offset says.
 */
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "decode/pt_int.h"

#define CARRY_MAX (64u << 20)

int pt_carry_append(struct ptq *q, const uint8_t *p, size_t n)
{
	if (q->clen + n > q->ccap) {
		size_t nc = q->ccap ? q->ccap : 65536;
		while (nc < q->clen + n)
			nc *= 2;
		uint8_t *nv = realloc(q->carry, nc);
		if (!nv)
			return HWT_ERR_NOMEM;
		q->carry = nv;
		q->ccap = nc;
	}
	memcpy(q->carry + q->clen, p, n);
	q->clen += n;
	return 0;
}

void pt_flush_carry(struct pt *e, struct hwt_dec_queue *qq)
{
	struct ptq *q = qq->fmt;
	if (q->clen)
		pt_region(e, qq, q->carry, q->clen, q->carry_off, 0, 0);
	q->clen = 0;
	q->scan = 0;
}

/* The stream as the carry followed by a chunk's data d[0, dn): positions
 * below q->clen are in the carry, the others in d. */
static size_t joint_read(const struct ptq *q, const uint8_t *d, size_t dn, size_t pos, uint8_t *out,
			 size_t len)
{
	size_t k = 0;
	if (pos < q->clen) {
		k = q->clen - pos < len ? q->clen - pos : len;
		memcpy(out, q->carry + pos, k);
		pos = q->clen;
	}
	size_t dp = pos - q->clen;
	size_t m = dp < dn ? (dn - dp < len - k ? dn - dp : len - k) : 0;
	memcpy(out + k, d + dp, m);
	return k + m;
}

/* The PSB that ends the run of 02 82 pairs holding the PSB at c (as
 * pt_find_psb, across the carry and d). */
static size_t joint_psb_run_end(const struct ptq *q, const uint8_t *d, size_t dn, size_t c)
{
	uint8_t two[2];
	while (joint_read(q, d, dn, c + 16, two, 2) == 2 && two[0] == 0x02 && two[1] == 0x82)
		c += 2;
	return c;
}

/* The first PSB of carry + d at or after position from (SIZE_MAX: none). */
static size_t joint_find_psb(const struct ptq *q, const uint8_t *d, size_t dn, size_t from)
{
	const size_t w = sizeof(hwt_pt_psb_pat) - 1;
	if (from < q->clen) {
		const uint8_t *p = pt_find_psb(q->carry + from, q->clen - from);
		if (p)
			return joint_psb_run_end(q, d, dn, (size_t)(p - q->carry));
		/* one that straddles the carry and d */
		size_t s = q->clen - from > w ? q->clen - w : from;
		uint8_t tmp[2 * sizeof(hwt_pt_psb_pat)];
		size_t k = joint_read(q, d, dn, s, tmp, sizeof(tmp));
		p = pt_find_psb(tmp, k);
		if (p)
			return joint_psb_run_end(q, d, dn, s + (size_t)(p - tmp));
		from = q->clen;
	}
	size_t dp = from - q->clen;
	const uint8_t *p = dp < dn ? pt_find_psb(d + dp, dn - dp) : NULL;
	return p ? q->clen + (size_t)(p - d) : SIZE_MAX;
}

/* The next cut of carry + d, whose region starts at position 0 (a PSB
 * there is the region's own): a PSB whose PSB+ is complete (its FUP read
 * into *holding, *stop_ip), searched from position from.  last: the last
 * such cut (to decode many PSB periods at once), else the first.  Returns
 * SIZE_MAX when there is none yet; *scan: where to search again once more
 * data has come. */
static size_t next_cut(const struct ptq *q, const uint8_t *d, size_t dn, size_t from, int last,
		       int *holding, uint64_t *stop_ip, size_t *scan)
{
	size_t cut = SIZE_MAX, total = q->clen + dn;
	uint8_t tmp[PSBP_MAX_BYTES];
	*scan = from;
	for (size_t c = joint_find_psb(q, d, dn, from); c != SIZE_MAX;
	     c = joint_find_psb(q, d, dn, c + sizeof(hwt_pt_psb_pat))) {
		*scan = c;
		if (!c) /* the region's own PSB */
			continue;
		uint64_t ip = 0;
		int r;
		if (c >= q->clen) {
			r = pt_psb_fup_ip(d + (c - q->clen), total - c, &ip);
		} else {
			size_t k = joint_read(q, d, dn, c, tmp, sizeof(tmp));
			r = pt_psb_fup_ip(tmp, k, &ip);
			if (r == HWT_ERR_EOS && k == sizeof(tmp))
				r = 0; /* longer than pt_psb_fup_ip reads */
		}
		if (r < 0) /* the PSB+ goes on in the next chunk */
			return cut;
		cut = c;
		*holding = r;
		*stop_ip = ip;
		*scan = c + sizeof(hwt_pt_psb_pat);
		if (!last)
			return cut;
	}
	if (cut == SIZE_MAX)
		*scan = total > sizeof(hwt_pt_psb_pat) ? total - sizeof(hwt_pt_psb_pat) + 1 : 0;
	if (*scan < from)
		*scan = from;
	return cut;
}

/* A queue's trace is decoded in regions from a PSB (or the stream's start)
 * to a later PSB, once that PSB's PSB+ is complete (its FUP tells where
 * the region's flow stops).  A region inside one chunk is decoded in
 * place, and spans every complete PSB up to the last; the tail of a chunk
 * goes to the carry, which takes the next chunk's bytes up to the next
 * cut.  PSBs, PSB+ and padding may straddle chunks anywhere: the regions
 * and their stop IPs do not depend on the chunking. */
void pt_on_chunk(struct pt *e, struct hwt_dec_queue *qq, const uint8_t *data, size_t n,
		 uint64_t aux_off)
{
	struct ptq *q = qq->fmt;
	/* AUXTRACE payloads are zero-padded to 8 bytes: a chunk that starts
	 * inside the previous one's padding continues it. */
	if (q->clen && q->have_next && aux_off < q->next_off && q->next_off - aux_off < 8 &&
	    q->next_off - aux_off <= q->clen)
		q->clen -= (size_t)(q->next_off - aux_off);
	else if (q->clen && (!q->have_next || aux_off != q->next_off))
		pt_flush_carry(e, qq);
	q->next_off = aux_off + n;
	q->have_next = 1;
	if (q->scan > q->clen)
		q->scan = q->clen; /* padding dropped */
	/* Up to 7 zero bytes at the end may be padding or PAD packets: the
	 * next chunk's offset tells.  Cuts are looked for before them. */
	size_t tz = 0;
	while (tz < 7 && tz < n && !data[n - 1 - tz])
		tz++;
	const uint8_t *d = data;
	size_t dn = n - tz;
	int holding = 0;
	uint64_t stop_ip = 0;
	size_t scan, cut;
	/* the region in the carry: up to the first cut */
	while (q->clen) {
		cut = next_cut(q, d, dn, q->scan, 0, &holding, &stop_ip, &scan);
		q->scan = scan;
		if (cut == SIZE_MAX)
			break;
		size_t clen0 = q->clen;
		if (cut > clen0 && pt_carry_append(q, d, cut - clen0)) {
			pt_flush_carry(e, qq); /* out of memory: decode what there is */
			break;
		}
		pt_region(e, qq, q->carry, cut, q->carry_off, holding, stop_ip);
		if (cut >= clen0) { /* the next region starts in d */
			d += cut - clen0;
			dn -= cut - clen0;
			q->clen = 0;
			q->scan = 0;
			break;
		}
		memmove(q->carry, q->carry + cut, clen0 - cut);
		q->clen = clen0 - cut;
		q->carry_off += cut;
		q->scan = 0;
	}
	if (q->clen) { /* no cut yet: the whole chunk goes to the carry */
		if (pt_carry_append(q, d, dn + tz))
			pt_flush_carry(e, qq);
		else if (q->clen > CARRY_MAX)
			pt_flush_carry(e, qq);
		return;
	}
	/* in place: from the region's start to the last cut in d */
	uint64_t doff = aux_off + (uint64_t)(d - data);
	cut = next_cut(q, d, dn, 0, 1, &holding, &stop_ip, &scan);
	size_t rs = 0;
	if (cut != SIZE_MAX) {
		pt_region(e, qq, d, cut, doff, holding, stop_ip);
		rs = cut;
		scan = scan > cut ? scan - cut : 0;
	}
	q->carry_off = doff + rs;
	q->scan = scan;
	if (pt_carry_append(q, d + rs, dn + tz - rs))
		q->clen = 0;
}
