/* lib/buf: the perf mmap ring protocol (see include/hwt/ring.h).
 *
 * Ownership: views only; memory belongs to whoever mapped it.  Ordering:
 * heads are loaded with acquire and published with release, tails are
 * stored with release, matching the kernel's smp_rmb()/smp_mb() pairing
 * described in linux/perf_event.h.
 */
#include <string.h>

#include "hwt/error.h"
#include "hwt/ring.h"

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint64_t load_acquire(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_release(__u64 *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static int set_view(struct hwt_ring *r, void *ctl, void *data, uint64_t data_size, void *aux,
		    uint64_t aux_size, int overwrite)
{
	if (!r || !ctl)
		return HWT_ERR_INVALID;
	if ((data && !is_pow2(data_size)) || (aux && !is_pow2(aux_size)))
		return HWT_ERR_INVALID;
	r->ctl = ctl;
	r->data = data;
	r->data_size = data ? data_size : 0;
	r->aux = aux;
	r->aux_size = aux ? aux_size : 0;
	r->overwrite = overwrite;
	return 0;
}

int hwt_ring_attach(struct hwt_ring *r, void *ctl, void *data, uint64_t data_size, void *aux,
		    uint64_t aux_size, int overwrite)
{
	return set_view(r, ctl, data, data_size, aux, aux_size, overwrite);
}

int hwt_ring_init_producer(struct hwt_ring *r, void *ctl, void *data, uint64_t data_size,
			   void *aux, uint64_t aux_size, int overwrite)
{
	int err = set_view(r, ctl, data, data_size, aux, aux_size, overwrite);
	if (err)
		return err;
	struct perf_event_mmap_page *pg = r->ctl;
	memset(pg, 0, sizeof(*pg));
	pg->version = 0;
	pg->compat_version = 0;
	pg->data_offset = data ? (uint64_t)((uint8_t *)data - (uint8_t *)ctl) : 0;
	pg->data_size = r->data_size;
	pg->aux_offset = aux ? (uint64_t)((uint8_t *)aux - (uint8_t *)ctl) : 0;
	pg->aux_size = r->aux_size;
	return 0;
}

/* Copy len bytes from ring position pos into out. */
static void ring_copy(const uint8_t *base, uint64_t size, uint64_t pos, void *out, size_t len)
{
	uint64_t off = pos & (size - 1);
	size_t first = len;
	if (off + len > size)
		first = (size_t)(size - off);
	memcpy(out, base + off, first);
	if (first < len)
		memcpy((uint8_t *)out + first, base, len - first);
}

int hwt_ring_read_records(struct hwt_ring *r,
			  int (*cb)(void *arg, const struct perf_event_header *rec), void *arg,
			  uint8_t *scratch, size_t scratch_size)
{
	if (!r || !r->data || !cb || !scratch || scratch_size < 65536)
		return HWT_ERR_INVALID;
	uint64_t head = load_acquire(&r->ctl->data_head);
	uint64_t tail = r->ctl->data_tail;
	int n = 0, err = 0;
	if (head - tail > r->data_size)
		return HWT_ERR_BAD_FORMAT;
	while (tail < head) {
		struct perf_event_header hdr;
		if (head - tail < sizeof(hdr)) {
			err = HWT_ERR_BAD_FORMAT;
			break;
		}
		ring_copy(r->data, r->data_size, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
			err = HWT_ERR_BAD_FORMAT;
			break;
		}
		uint64_t off = tail & (r->data_size - 1);
		const struct perf_event_header *rec;
		if (off + hdr.size <= r->data_size) {
			rec = (const void *)(r->data + off);
		} else {
			ring_copy(r->data, r->data_size, tail, scratch, hdr.size);
			rec = (const void *)scratch;
		}
		err = cb(arg, rec);
		tail += hdr.size;
		n++;
		if (err < 0)
			break;
	}
	store_release(&r->ctl->data_tail, tail);
	return err < 0 ? err : n;
}

void hwt_ring_aux_range(const struct hwt_ring *r, uint64_t pos, uint64_t len,
			struct hwt_ring_span *span)
{
	uint64_t off = pos & (r->aux_size - 1);
	span->pos = pos;
	span->p1 = r->aux + off;
	if (off + len <= r->aux_size) {
		span->n1 = (size_t)len;
		span->p2 = NULL;
		span->n2 = 0;
	} else {
		span->n1 = (size_t)(r->aux_size - off);
		span->p2 = r->aux;
		span->n2 = (size_t)(len - span->n1);
	}
}

size_t hwt_ring_aux_peek(struct hwt_ring *r, struct hwt_ring_span *span)
{
	uint64_t head = load_acquire(&r->ctl->aux_head);
	uint64_t tail = r->ctl->aux_tail;
	uint64_t len = head - tail;
	if (len > r->aux_size) /* producer overran us: keep the newest bytes */
		tail = head - r->aux_size, len = r->aux_size;
	hwt_ring_aux_range(r, tail, len, span);
	return (size_t)len;
}

void hwt_ring_aux_release(struct hwt_ring *r, uint64_t n)
{
	store_release(&r->ctl->aux_tail, r->ctl->aux_tail + n);
}

size_t hwt_ring_aux_snapshot(struct hwt_ring *r, struct hwt_ring_span *span)
{
	uint64_t head = load_acquire(&r->ctl->aux_head);
	uint64_t len = head < r->aux_size ? head : r->aux_size;
	hwt_ring_aux_range(r, head - len, len, span);
	return (size_t)len;
}

uint64_t hwt_ring_aux_space(const struct hwt_ring *r)
{
	if (r->overwrite)
		return r->aux_size;
	uint64_t tail = load_acquire(&r->ctl->aux_tail);
	return r->aux_size - (r->ctl->aux_head - tail);
}

int hwt_ring_aux_write(struct hwt_ring *r, const void *p, size_t n)
{
	if (!r->aux)
		return HWT_ERR_INVALID;
	if (!r->overwrite && n > hwt_ring_aux_space(r))
		return HWT_ERR_AGAIN;
	uint64_t head = r->ctl->aux_head;
	const uint8_t *src = p;
	if (n > r->aux_size) { /* overwrite mode: only the newest bytes survive */
		src += n - r->aux_size;
		head += n - r->aux_size;
		n = (size_t)r->aux_size;
	}
	uint64_t off = head & (r->aux_size - 1);
	size_t first = n;
	if (off + n > r->aux_size)
		first = (size_t)(r->aux_size - off);
	memcpy(r->aux + off, src, first);
	if (first < n)
		memcpy(r->aux, src + first, n - first);
	store_release(&r->ctl->aux_head, head + n);
	return 0;
}

int hwt_ring_write_record(struct hwt_ring *r, const struct perf_event_header *rec)
{
	if (!r->data || rec->size < sizeof(*rec) || (rec->size & 7))
		return HWT_ERR_INVALID;
	uint64_t tail = load_acquire(&r->ctl->data_tail);
	uint64_t head = r->ctl->data_head;
	if (rec->size > r->data_size - (head - tail))
		return HWT_ERR_AGAIN;
	uint64_t off = head & (r->data_size - 1);
	size_t first = rec->size;
	if (off + rec->size > r->data_size)
		first = (size_t)(r->data_size - off);
	memcpy(r->data + off, rec, first);
	if (first < rec->size)
		memcpy(r->data, (const uint8_t *)rec + first, rec->size - first);
	store_release(&r->ctl->data_head, head + rec->size);
	return 0;
}
