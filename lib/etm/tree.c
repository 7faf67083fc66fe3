/* lib/etm/tree.c - one OpenCSD decode tree (C API): the CoreSight frame
 * deformatter (memory-aligned 16-byte frames) or a single raw source, an
 * ETMv4 (or ETE) full decoder per source (packet processor + instruction
 * follower reading code through a callback), generic elements out
 * through a callback.
 *
 * Offsets: OpenCSD counts trace bytes with a 32-bit index; the tree
 * counts every byte fed (64-bit) and keeps the AUX stream offset of the
 * last chunks, so an element's index maps back to its offset in the
 * stream even when OpenCSD hands it out a few chunks later.  Frames are
 * fed whole (a frame split between chunks waits for the rest).  Damage
 * OpenCSD gives up on (a fatal response) is reported, the tree reset,
 * and feeding goes on at the next frame (raw: the next byte); the
 * decoders resynchronise at the next A-sync.
 *
 * Ownership: the caller owns the tree (etm_tree_free); OpenCSD's tree is
 * destroyed with it.  No global state (OpenCSD's default error logger is
 * left alone: it prints nothing unless configured).
 */
#include <stdlib.h>
#include <string.h>

#include "etm/etm_int.h"
#include "hwt/error.h"

#define NMARK 64 /* chunks whose offsets are remembered */

struct mark {
	uint64_t pos; /* bytes fed before the chunk */
	uint64_t off; /* its AUX stream offset */
};

struct etm_tree {
	dcd_tree_handle_t h;
	struct etm_tree_cbs cbs;
	int formatted;
	uint64_t pos; /* bytes fed so far */
	uint64_t hi;  /* during a feed: the end of the bytes being fed */
	struct mark marks[NMARK];
	unsigned nmarks, mhead;
	uint8_t known[128]; /* trace IDs of the sources (and 0, the null ID) */
	uint8_t cur_id;	    /* the frames' current ID (0: none yet) */
	uint8_t part[16];   /* a partial frame */
	size_t npart;
	uint64_t part_off;
};

static uint64_t pos_to_off(const struct etm_tree *t, uint64_t pos)
{
	for (unsigned i = 0; i < t->nmarks; i++) {
		const struct mark *m = &t->marks[(t->mhead + NMARK - 1 - i) % NMARK];
		if (m->pos <= pos)
			return m->off + (pos - m->pos);
	}
	return pos;
}

/* OpenCSD's 32-bit index -> AUX stream offset (the index is at most 4 GiB
 * behind the bytes fed). */
static uint64_t idx_to_off(const struct etm_tree *t, ocsd_trc_index_t idx)
{
	uint32_t behind = (uint32_t)t->hi - (uint32_t)idx;
	uint64_t pos = behind <= t->hi ? t->hi - behind : 0;
	return pos_to_off(t, pos);
}

static ocsd_datapath_resp_t on_elem(const void *ctx, const ocsd_trc_index_t idx, const uint8_t id,
				    const ocsd_generic_trace_elem *e)
{
	const struct etm_tree *t = ctx;
	t->cbs.elem(t->cbs.arg, idx_to_off(t, idx), id, e);
	return OCSD_RESP_CONT;
}

static uint32_t on_mem(const void *ctx, const ocsd_vaddr_t addr, const ocsd_mem_space_acc_t space,
		       const uint32_t n, uint8_t *buf)
{
	const struct etm_tree *t = ctx;
	(void)space;
	return t->cbs.mem(t->cbs.arg, addr, n, buf);
}

static int add_source(struct etm_tree *t, const struct etm_src *s)
{
	unsigned char csid = 0;
	ocsd_err_t e;
	if (s->ete) {
		ocsd_ete_cfg c;
		memset(&c, 0, sizeof(c));
		c.reg_idr0 = s->regs.idr0;
		c.reg_idr1 = s->regs.idr1;
		c.reg_idr2 = s->regs.idr2;
		c.reg_idr8 = s->regs.idr8;
		c.reg_configr = s->regs.configr;
		c.reg_traceidr = s->regs.trace_id;
		c.arch_ver = ARCH_AA64;
		c.core_prof = profile_CortexA;
		e = ocsd_dt_create_decoder(t->h, OCSD_BUILTIN_DCD_ETE, OCSD_CREATE_FLG_FULL_DECODER,
					   &c, &csid);
	} else {
		ocsd_etmv4_cfg c;
		memset(&c, 0, sizeof(c));
		c.reg_idr0 = s->regs.idr0;
		c.reg_idr1 = s->regs.idr1;
		c.reg_idr2 = s->regs.idr2;
		c.reg_idr8 = s->regs.idr8;
		c.reg_configr = s->regs.configr;
		c.reg_traceidr = s->regs.trace_id;
		c.arch_ver = ARCH_V8;
		c.core_prof = profile_CortexA;
		e = ocsd_dt_create_decoder(t->h, OCSD_BUILTIN_DCD_ETMV4I,
					   OCSD_CREATE_FLG_FULL_DECODER, &c, &csid);
	}
	return e == OCSD_OK ? 0 : HWT_ERR_BAD_CONFIG;
}

int etm_tree_alloc(struct etm_tree **out, const struct etm_meta *m, int formatted,
		   const struct etm_src *raw_src, const struct etm_tree_cbs *cbs)
{
	*out = NULL;
	if (!formatted && !raw_src)
		return HWT_ERR_INVALID;
	struct etm_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return HWT_ERR_NOMEM;
	t->cbs = *cbs;
	t->formatted = formatted;
	t->known[0] = 1;
	for (size_t i = 0; i < m->nsrc; i++)
		t->known[m->src[i].regs.trace_id & 0x7f] = 1;
	t->h = ocsd_create_dcd_tree(formatted ? OCSD_TRC_SRC_FRAME_FORMATTED : OCSD_TRC_SRC_SINGLE,
				    formatted ? OCSD_DFRMTR_FRAME_MEM_ALIGN : 0);
	if (t->h == C_API_INVALID_TREE_HANDLE) {
		free(t);
		return HWT_ERR_NOMEM;
	}
	int err = 0;
	if (formatted) {
		for (size_t i = 0; i < m->nsrc && !err; i++)
			err = add_source(t, &m->src[i]);
	} else {
		err = add_source(t, raw_src);
	}
	if (!err && (ocsd_dt_set_gen_elem_outfn(t->h, on_elem, t) != OCSD_OK ||
		     ocsd_dt_add_callback_mem_acc(t->h, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY,
						  on_mem, t) != OCSD_OK))
		err = HWT_ERR_INTERNAL;
	if (err) {
		etm_tree_free(t);
		return err;
	}
	*out = t;
	return 0;
}

void etm_tree_free(struct etm_tree *t)
{
	if (!t)
		return;
	ocsd_destroy_dcd_tree(t->h);
	free(t);
}

void etm_tree_mem_changed(struct etm_tree *t)
{
	ocsd_dt_remove_mem_acc(t->h, 0, OCSD_MEM_SPACE_ANY);
	ocsd_dt_add_callback_mem_acc(t->h, 0, ~(ocsd_vaddr_t)0, OCSD_MEM_SPACE_ANY, on_mem, t);
}

/* Feed bytes that start at t->pos (already marked). */
static void feed(struct etm_tree *t, const uint8_t *data, size_t size)
{
	size_t done = 0;
	while (done < size) {
		size_t n = size - done;
		if (n > 0x10000000)
			n = 0x10000000;
		uint32_t used = 0;
		t->hi = t->pos + n;
		ocsd_datapath_resp_t r = ocsd_dt_process_data(
		    t->h, OCSD_OP_DATA, (ocsd_trc_index_t)t->pos, (uint32_t)n, data + done, &used);
		if (used > n)
			used = (uint32_t)n;
		if (OCSD_DATA_RESP_IS_FATAL(r)) {
			t->cbs.fatal(t->cbs.arg, pos_to_off(t, t->pos + used));
			ocsd_dt_process_data(t->h, OCSD_OP_RESET, (ocsd_trc_index_t)t->pos, 0, NULL,
					     NULL);
			/* go on after the damage: the next frame (raw: byte) */
			used = t->formatted ? (used / 16 + 1) * 16 : used + 1;
			if (used > n)
				used = (uint32_t)n;
		} else if (!used) {
			used = (uint32_t)n; /* (OpenCSD took nothing: do not spin) */
		}
		t->pos += used;
		t->hi = t->pos;
		done += used;
	}
}

/* Frame f's ID bytes: 0 if all name known IDs (t->cur_id follows them),
 * else 1 and f repaired in fix. */
static int frame_check(struct etm_tree *t, const uint8_t *f, uint8_t *fix)
{
	int bad = 0;
	for (int i = 0; i < 15; i += 2) {
		if (!(f[i] & 1))
			continue;
		uint8_t id = f[i] >> 1;
		if (t->known[id]) {
			if (id)
				t->cur_id = id;
			continue;
		}
		if (!bad)
			memcpy(fix, f, 16);
		bad = 1;
		fix[i] = (uint8_t)((t->cur_id << 1) | 1);
	}
	return bad;
}

static void mark(struct etm_tree *t, uint64_t off)
{
	struct mark *m = &t->marks[t->mhead];
	m->pos = t->pos;
	m->off = off;
	t->mhead = (t->mhead + 1) % NMARK;
	if (t->nmarks < NMARK)
		t->nmarks++;
}

/* Whole frames at off: checked, then fed. */
static void feed_frames(struct etm_tree *t, const uint8_t *data, size_t size, uint64_t off)
{
	size_t start = 0;
	uint8_t fix[16];
	for (size_t i = 0; i + 16 <= size; i += 16) {
		if (!frame_check(t, data + i, fix))
			continue;
		if (i > start) {
			mark(t, off + start);
			feed(t, data + start, i - start);
		}
		t->cbs.fatal(t->cbs.arg, off + i);
		mark(t, off + i);
		feed(t, fix, 16);
		start = i + 16;
	}
	if (size > start) {
		mark(t, off + start);
		feed(t, data + start, size - start);
	}
}

int etm_tree_feed(struct etm_tree *t, const uint8_t *data, size_t size, uint64_t off)
{
	if (t->formatted && t->npart) { /* complete the frame split at the last chunk */
		size_t k = 16 - t->npart < size ? 16 - t->npart : size;
		memcpy(t->part + t->npart, data, k);
		t->npart += k;
		data += k;
		size -= k;
		off += k;
		if (t->npart < 16)
			return 0;
		t->npart = 0;
		feed_frames(t, t->part, 16, t->part_off);
	}
	size_t whole = t->formatted ? size - size % 16 : size;
	if (whole && t->formatted) {
		feed_frames(t, data, whole, off);
	} else if (whole) {
		mark(t, off);
		feed(t, data, whole);
	}
	if (size > whole) {
		t->npart = size - whole;
		t->part_off = off + whole;
		memcpy(t->part, data + whole, t->npart);
	}
	return 0;
}

void etm_tree_eot(struct etm_tree *t)
{
	if (t->npart) {
		t->cbs.fatal(t->cbs.arg, t->part_off);
		t->npart = 0;
	}
	ocsd_dt_process_data(t->h, OCSD_OP_EOT, (ocsd_trc_index_t)t->pos, 0, NULL, NULL);
}
