/* lib/decode/pebs.c - memory samples from PERF_RECORD_SAMPLE records (Intel
 * PEBS mem-loads / mem-stores, as perf record writes them and as hwt's
 * emulated PEBS unit does) into struct hwt_dec_sample, and the words
 * shared by every sampling format (operation, data source).
 *
 * A sample is a memory sample when its attr's sample_type has ADDR and
 * WEIGHT (or WEIGHT_STRUCT) or DATA_SRC; its fields are read in the
 * order of linux/perf_event.h's PERF_RECORD_SAMPLE layout, skipping
 * READ, CALLCHAIN, RAW, BRANCH_STACK, REGS_USER and STACK_USER.  The
 * operation and the flags come from DATA_SRC (perf's union
 * perf_mem_data_src: mem_op, mem_lvl / mem_lvl_num, mem_dtlb); an event
 * without DATA_SRC is a load unless its config is a store event's.
 * Stateless: everything comes from the record and its attr.
 */
#include <string.h>
#include <stdio.h>

#include "decode/decode_int.h"
#include "hwt/perf_data.h"

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd64(struct rd *r)
{
	uint64_t v = 0;
	if (r->end - r->p < 8) {
		r->bad = 1;
		r->p = r->end;
		return 0;
	}
	memcpy(&v, r->p, 8);
	r->p += 8;
	return v;
}

static void skip(struct rd *r, uint64_t n)
{
	if ((uint64_t)(r->end - r->p) < n) {
		r->bad = 1;
		r->p = r->end;
		return;
	}
	r->p += n;
}

/* flags from perf's data source encoding */
static uint32_t src_flags(uint64_t ds)
{
	uint32_t f = 0;
	uint64_t op = (ds >> PERF_MEM_OP_SHIFT) & 0x1f;
	uint64_t lvl = (ds >> PERF_MEM_LVL_SHIFT) & 0x3fff;
	uint64_t num = (ds >> PERF_MEM_LVLNUM_SHIFT) & 0xf;
	uint64_t tlb = (ds >> PERF_MEM_TLB_SHIFT) & 0x7f;
	if (op & PERF_MEM_OP_LOAD)
		f |= HWT_DSF_LOAD;
	if (op & PERF_MEM_OP_STORE)
		f |= HWT_DSF_STORE;
	int l1_hit = (num == PERF_MEM_LVLNUM_L1) ||
		     (!num && (lvl & PERF_MEM_LVL_L1) && (lvl & PERF_MEM_LVL_HIT));
	int in_cache = num == PERF_MEM_LVLNUM_L2 || num == PERF_MEM_LVLNUM_L3 ||
		       num == PERF_MEM_LVLNUM_L4 || num == PERF_MEM_LVLNUM_LFB ||
		       num == PERF_MEM_LVLNUM_ANY_CACHE ||
		       (!num && (lvl & (PERF_MEM_LVL_L2 | PERF_MEM_LVL_L3 | PERF_MEM_LVL_LFB)) &&
			(lvl & PERF_MEM_LVL_HIT));
	int llc_miss =
	    num == PERF_MEM_LVLNUM_RAM || num == PERF_MEM_LVLNUM_PMEM ||
	    (!num &&
	     (lvl & (PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2)));
	if ((lvl || num) && !(lvl & PERF_MEM_LVL_NA) && num != PERF_MEM_LVLNUM_NA && !l1_hit)
		f |= HWT_DSF_L1_MISS;
	if (llc_miss && !in_cache)
		f |= HWT_DSF_LLC_MISS;
	if ((tlb & PERF_MEM_TLB_MISS) && !(tlb & PERF_MEM_TLB_NA))
		f |= HWT_DSF_TLB_MISS;
	if ((ds >> PERF_MEM_REMOTE_SHIFT) & 1)
		f |= HWT_DSF_REMOTE;
	if (((ds >> PERF_MEM_LOCK_SHIFT) & 3) == PERF_MEM_LOCK_LOCKED)
		f |= HWT_DSF_ATOMIC;
	return f;
}

int hwt_dec_pebs_sample(struct hwt_decoder *d, const struct hwt_perf_record *rec)
{
	struct hwt_perf_reader *r = hwt_dec_reader(d);
	if (!r || rec->attr_index < 0)
		return 0;
	const struct hwt_perf_attr_info *ai = hwt_perf_reader_attr(r, (size_t)rec->attr_index);
	if (!ai)
		return 0;
	const struct perf_event_attr *a = &ai->attr;
	uint64_t st = a->sample_type;
	if (!(st & PERF_SAMPLE_ADDR) ||
	    !(st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC)))
		return 0;
	/* a copy: pipe-mode records may be unaligned (and are read as bytes) */
	struct rd q = {(const uint8_t *)rec->hdr + sizeof(struct perf_event_header),
		       (const uint8_t *)rec->hdr + rec->size, 0};
	struct hwt_dec_sample s;
	memset(&s, 0, sizeof(s));
	uint64_t tid_pid = 0;
	if (st & PERF_SAMPLE_IDENTIFIER)
		rd64(&q);
	if (st & PERF_SAMPLE_IP)
		s.ip = rd64(&q);
	if (st & PERF_SAMPLE_TID)
		tid_pid = rd64(&q);
	if (st & PERF_SAMPLE_TIME) {
		s.time_ns = rd64(&q);
		s.flags |= HWT_DSF_HAVE_TIME;
	}
	s.addr = rd64(&q);
	s.flags |= HWT_DSF_HAVE_ADDR;
	if (st & PERF_SAMPLE_ID)
		rd64(&q);
	if (st & PERF_SAMPLE_STREAM_ID)
		rd64(&q);
	if (st & PERF_SAMPLE_CPU)
		s.cpu = (uint32_t)rd64(&q);
	if (st & PERF_SAMPLE_PERIOD)
		rd64(&q);
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = a->read_format;
		uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		if (rf & PERF_FORMAT_GROUP) {
			uint64_t nr = rd64(&q);
			skip(&q, 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				      !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING)));
			skip(&q, nr < 4096 ? nr * per * 8 : UINT64_MAX);
		} else {
			skip(&q, 8 * (per + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				      !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING)));
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = rd64(&q);
		skip(&q, nr < 65536 ? nr * 8 : UINT64_MAX);
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t n = 0;
		if (q.end - q.p >= 4)
			memcpy(&n, q.p, 4);
		skip(&q, ((uint64_t)n + 4 + 7) & ~7ull);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = rd64(&q);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			rd64(&q);
		skip(&q, nr < 65536 ? nr * 24 : UINT64_MAX);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		if (rd64(&q))
			skip(&q, 8 * (uint64_t)__builtin_popcountll(a->sample_regs_user));
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t n = rd64(&q);
		skip(&q, n);
		if (n)
			rd64(&q);
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		uint64_t w = rd64(&q);
		/* WEIGHT_STRUCT: var1_dw is the latency */
		s.weight = (st & PERF_SAMPLE_WEIGHT_STRUCT) ? (w & 0xffffffffu) : w;
	}
	if (st & PERF_SAMPLE_DATA_SRC)
		s.data_src = rd64(&q);
	if (st & PERF_SAMPLE_TRANSACTION)
		rd64(&q);
	if (st & PERF_SAMPLE_REGS_INTR) {
		if (rd64(&q))
			skip(&q, 8 * (uint64_t)__builtin_popcountll(a->sample_regs_intr));
	}
	if (st & PERF_SAMPLE_PHYS_ADDR) {
		s.phys_addr = rd64(&q);
		s.flags |= HWT_DSF_HAVE_PHYS;
	}
	if (q.bad)
		return 0; /* a short record: not a sample we can read */
	s.pid = (uint32_t)tid_pid;
	s.tid = (uint32_t)(tid_pid >> 32);
	if (st & PERF_SAMPLE_DATA_SRC)
		s.flags |= src_flags(s.data_src);
	if (!(s.flags & (HWT_DSF_LOAD | HWT_DSF_STORE))) {
		/* no operation in the data source: by the event (Intel's
		 * store event MEM_INST_RETIRED.ALL_STORES is event 0xd0,
		 * umask 0x82; everything else is taken as a load) */
		s.flags |= ((a->config & 0xffff) == 0x82d0) ? HWT_DSF_STORE : HWT_DSF_LOAD;
	}
	s.op = s.flags & HWT_DSF_STORE ? 2 : 1;
	s.format = 0;
	s.raw = rec->hdr;
	s.raw_size = rec->size;
	struct hwt_dec_thread *t =
	    hwt_dec_thread_get(d, s.tid, (st & PERF_SAMPLE_TID) ? s.pid : -1u);
	if (!t)
		return HWT_ERR_NOMEM;
	hwt_dec_emit_sample(d, t, &s);
	return 0;
}

const char *hwt_dec_sample_op_name(const struct hwt_dec_sample *s)
{
	if (s->flags & HWT_DSF_LOAD)
		return "load";
	if (s->flags & HWT_DSF_STORE)
		return "store";
	if (s->flags & HWT_DSF_BRANCH)
		return "branch";
	return "other";
}

const char *hwt_dec_sample_source(const struct hwt_dec_sample *s, char *buf, size_t len)
{
	if (s->flags & HWT_DSF_BRANCH) { /* SPE branch records */
		snprintf(buf, len, "%s%s", s->flags & HWT_DSF_TAKEN ? "taken" : "not taken",
			 s->flags & HWT_DSF_MISPRED ? ", mispredicted" : "");
		return buf;
	}
	const char *lvl = "";
	uint64_t ds = s->data_src;
	uint64_t num = (ds >> PERF_MEM_LVLNUM_SHIFT) & 0xf;
	uint64_t lv = (ds >> PERF_MEM_LVL_SHIFT) & 0x3fff;
	if (num == PERF_MEM_LVLNUM_L1)
		lvl = "L1 hit";
	else if (num == PERF_MEM_LVLNUM_L2)
		lvl = "L2 hit";
	else if (num == PERF_MEM_LVLNUM_L3)
		lvl = "LLC hit";
	else if (num == PERF_MEM_LVLNUM_LFB)
		lvl = "LFB hit";
	else if (num == PERF_MEM_LVLNUM_ANY_CACHE)
		lvl = "cache hit";
	else if (num == PERF_MEM_LVLNUM_RAM)
		lvl = "memory";
	else if (!num && lv && !(lv & PERF_MEM_LVL_NA)) {
		if (lv & PERF_MEM_LVL_L1)
			lvl = lv & PERF_MEM_LVL_HIT ? "L1 hit" : "L1 miss";
		else if (lv & PERF_MEM_LVL_L3)
			lvl = lv & PERF_MEM_LVL_HIT ? "LLC hit" : "LLC miss";
		else if (lv &
			 (PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2))
			lvl = "memory";
	} else if (!ds && (s->flags & (HWT_DSF_LOAD | HWT_DSF_STORE))) {
		/* formats with events only (SPE) */
		lvl = s->flags & HWT_DSF_LLC_MISS  ? "memory"
		      : s->flags & HWT_DSF_L1_MISS ? "L1 miss"
						   : "L1 hit";
	}
	snprintf(buf, len, "%s%s%s", lvl, (s->flags & HWT_DSF_TLB_MISS) && lvl[0] ? ", " : "",
		 (s->flags & HWT_DSF_TLB_MISS) ? "TLB walk" : "");
	return buf;
}
