/* hwt/ring.h - the perf mmap ring protocol, for kernel and emulated units.
 *
 * A trace stream (one thread or one CPU) has a control page laid out as the
 * kernel's struct perf_event_mmap_page, a data ring of perf records
 * (sideband: MMAP2, COMM, AUX, ...) and an AUX ring of raw trace bytes.
 * For a hardware unit the kernel produces and hwt consumes; the emulated
 * unit produces into memory with exactly the same layout and protocol, so
 * the consumer code below is the one reader for both.
 *
 * Protocol (linux/perf_event.h): heads only grow; the producer writes the
 * bytes, then publishes the head with release order; the consumer loads the
 * head with acquire order, copies [tail, head), then stores the tail with
 * release order.  Positions are byte counts since the start; the position
 * p lives at p % size (sizes are powers of two).
 *   - full mode: the producer never overwrites bytes the consumer has not
 *     released (the kernel truncates and flags PERF_AUX_FLAG_TRUNCATED; the
 *     emulated unit waits);
 *   - overwrite (snapshot) mode: the producer ignores the tail; the
 *     consumer takes the newest min(head, size) bytes on demand.
 *
 * struct hwt_ring is a view: it owns no memory.  Whoever mapped the pages
 * (the kernel unit via mmap of the perf fd, the emulated unit via a shared
 * file) unmaps them.  The view is not thread-safe on the consumer side:
 * one consumer per ring.
 */
#ifndef HWT_RING_H
#define HWT_RING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hwt_ring {
	struct perf_event_mmap_page *ctl;
	uint8_t *data;	    /* data ring base (NULL if none) */
	uint64_t data_size; /* power of two */
	uint8_t *aux;	    /* AUX ring base (NULL if none) */
	uint64_t aux_size;  /* power of two */
	int overwrite;	    /* snapshot mode for AUX */
};

/* Bytes of AUX data in two pieces (the second is non-empty when the range
 * wraps).  pos is the stream position of p1[0]. */
struct hwt_ring_span {
	uint64_t pos;
	const uint8_t *p1;
	size_t n1;
	const uint8_t *p2;
	size_t n2;
};

/* Set up a view.  ctl points at the control page; data/aux at their areas
 * (either may be NULL/0).  Sizes must be powers of two.  For a producer
 * (emulated unit) the control page is also initialised: offsets, sizes,
 * heads and tails zero.  Returns 0 or HWT_ERR_INVALID. */
int hwt_ring_init_producer(struct hwt_ring *r, void *ctl, void *data, uint64_t data_size,
			   void *aux, uint64_t aux_size, int overwrite);
int hwt_ring_attach(struct hwt_ring *r, void *ctl, void *data, uint64_t data_size, void *aux,
		    uint64_t aux_size, int overwrite);

/* --- consumer --- */

/* Call cb for each complete record in [data_tail, data_head), then release
 * them.  A record split by the wrap is copied into scratch (scratch_size
 * must be >= 65536, the largest record).  cb returns 0 to go on, negative
 * to stop (its records so far stay consumed).  Returns the number of
 * records, or a negative error (HWT_ERR_BAD_FORMAT for a corrupt size). */
int hwt_ring_read_records(struct hwt_ring *r,
			  int (*cb)(void *arg, const struct perf_event_header *rec), void *arg,
			  uint8_t *scratch, size_t scratch_size);

/* Full mode: the unread AUX bytes [aux_tail, aux_head).  Returns the byte
 * count (0 if none). */
size_t hwt_ring_aux_peek(struct hwt_ring *r, struct hwt_ring_span *span);
/* Full mode: release n bytes from aux_tail. */
void hwt_ring_aux_release(struct hwt_ring *r, uint64_t n);
/* Snapshot mode: the newest min(aux_head, aux_size) bytes ending at
 * aux_head (the caller pauses the producer first).  Returns the count. */
size_t hwt_ring_aux_snapshot(struct hwt_ring *r, struct hwt_ring_span *span);
/* A given range [pos, pos+len) of the AUX ring, as the kernel names it in
 * PERF_RECORD_AUX (aux_offset, aux_size); len must be <= aux_size. */
void hwt_ring_aux_range(const struct hwt_ring *r, uint64_t pos, uint64_t len,
			struct hwt_ring_span *span);

/* --- producer (emulated units) --- */

/* Free AUX bytes in full mode (aux_size - (head - tail)); aux_size in
 * overwrite mode. */
uint64_t hwt_ring_aux_space(const struct hwt_ring *r);
/* Copy n bytes at aux_head and publish the new head.  In full mode n must
 * be <= hwt_ring_aux_space() (HWT_ERR_AGAIN otherwise, nothing written). */
int hwt_ring_aux_write(struct hwt_ring *r, const void *p, size_t n);
/* Append one record (rec->size bytes, 8-byte multiple) to the data ring and
 * publish it.  HWT_ERR_AGAIN if it does not fit now (full). */
int hwt_ring_write_record(struct hwt_ring *r, const struct perf_event_header *rec);

#ifdef __cplusplus
}
#endif
#endif /* HWT_RING_H */
