/* lib/unit/emu_abi.h - the stream file of the emulated unit, shared by the
 * QEMU plugin (emu/stream.c, the producer) and the recorder
 * (lib/unit/emu_pt.c).
 *
 * Layout: control page (4096 bytes, struct perf_event_mmap_page) | data
 * ring | AUX ring | box (HWT_EMU_BOX_BYTES).  The box holds what the plugin
 * generated but has not yet written out: packet bytes, TNT bits not yet
 * packed into a packet, truth lines.  The plugin keeps these buffers in
 * the box itself, so nothing is lost when the process dies of a signal
 * (SIGKILL, or any fatal signal: QEMU 7.2 calls no plugin callback then,
 * and every thread, the encoder thread too, stops at an arbitrary
 * instruction).  Once every traced process is gone, the recorder finishes
 * each unfinished stream from its box: the AUX ring and the stream's truth
 * file get exactly what the published state says, and an Intel PT stream
 * that was tracing ends with FUP(end_ip) + TIP.PGD (an asynchronous
 * disable where the thread stopped, as hardware writes when the kernel
 * takes the thread away), so decoders walk the direct branches up to it.
 *
 * Kill safety: the state is published as a whole (the plugin fills the
 * slot st[(seq + 1) & 1], then stores seq + 1), so a thread stopped at any
 * instruction leaves one consistent state: the trace and the truth at the
 * same block.  Output already written is never appended twice and never
 * torn: the state says where the box's bytes go (aux_base: the AUX head
 * where packet byte pkt_off goes; truth_base: the truth file offset of the
 * truth buffer's first byte), and the recorder writes only what the ring
 * or the file does not have yet (a write the kill cut short left a
 * prefix), and cuts the stream's truth file back to truth_end (lines
 * written ahead of the published state).  With the recorder (plugin
 * argument truthbox=1) each stream has its own truth file, <stream>.truth,
 * that only its thread appends to; the recorder concatenates them into
 * the --truth file at the end.  Threads that end normally empty their box
 * first.
 */
#ifndef HWT_UNIT_EMU_ABI_H
#define HWT_UNIT_EMU_ABI_H

#include <stdint.h>

#define HWT_EMU_BOX_MAGIC 0x32786f6274776868ull /* "hhwtbox2" */
#define HWT_EMU_BOX_HDR 4096u
#define HWT_EMU_BOX_PKT (256u * 1024u)	/* the packet generator's buffer */
#define HWT_EMU_BOX_TRUTH (64u * 1024u) /* the truth lines' buffer */
#define HWT_EMU_BOX_BYTES (HWT_EMU_BOX_HDR + HWT_EMU_BOX_PKT + HWT_EMU_BOX_TRUTH)

/* What the recorder appends for a stream the plugin did not finish. */
struct hwt_emu_box_state {
	uint64_t pkt_off, pkt_len; /* packet bytes at HWT_EMU_BOX_HDR + pkt_off ... */
	uint64_t aux_base;	   /* ... that go at this AUX head (some may be there) */
	uint64_t tnt, ntnt;	   /* conditional branch outcomes not yet in a TNT packet */
	uint64_t end_ip;	   /* Intel PT, tracing on: the start of the block the thread
				    * runs (it ends there if it dies: FUP + TIP.PGD), else 0 */
	uint64_t truth_base;	   /* the stream's truth file offset of the truth buffer */
	uint64_t truth_end;	   /* the truth file's length that matches the trace */
};

struct hwt_emu_box {
	uint64_t magic;
	uint64_t seq; /* st[seq & 1] is the published state */
	struct hwt_emu_box_state st[2];
};

/* The short TNT packet of n (1..6) pending bits (oldest in the highest
 * bit): payload, stop bit, header bit 0 = 0 (Intel SDM, "TNT-8"). */
static inline uint8_t hwt_emu_tnt_byte(uint64_t tnt, uint64_t n)
{
	return (uint8_t)((tnt | (1ull << n)) << 1);
}

#endif
