/* lib/unit/emu_abi.h - the stream file of the emulated unit, shared by the
 * QEMU plugin (emu/stream.c, the producer) and the recorder
 * (lib/unit/emu_pt.c).
 *
 * Layout: control page (4096 bytes, struct perf_event_mmap_page) | data
 * ring | AUX ring | box (HWT_EMU_BOX_BYTES).  The box holds what the plugin
 * generated but has not yet written into the rings: packet bytes, TNT bits
 * not yet packed into a packet, truth lines.  The plugin keeps these
 * buffers in the box itself and publishes their lengths at the end of every
 * callback, so nothing is lost when the thread dies of a fatal signal
 * (QEMU 7.2 calls no plugin callback then): once every traced process is
 * gone, the recorder appends each unfinished stream's box to its AUX ring
 * and to the truth file, and ends an Intel PT stream that was tracing with
 * FUP(end_ip) + TIP.PGD (an asynchronous disable where the thread stopped,
 * as hardware writes when the kernel takes the thread away), so decoders
 * walk the direct branches up to it.  Threads that end normally empty
 * their box first.
 */
#ifndef HWT_UNIT_EMU_ABI_H
#define HWT_UNIT_EMU_ABI_H

#include <stdint.h>

#define HWT_EMU_BOX_MAGIC 0x31786f6274776868ull /* "hhwtbox1" */
#define HWT_EMU_BOX_HDR 4096u
#define HWT_EMU_BOX_PKT (256u * 1024u)	/* the packet generator's buffer */
#define HWT_EMU_BOX_TRUTH (64u * 1024u) /* the truth lines' buffer */
#define HWT_EMU_BOX_BYTES (HWT_EMU_BOX_HDR + HWT_EMU_BOX_PKT + HWT_EMU_BOX_TRUTH)

struct hwt_emu_box {
	uint64_t magic;
	uint64_t pkt_len;   /* packet bytes at HWT_EMU_BOX_HDR not yet in the AUX ring */
	uint64_t tnt, ntnt; /* conditional branch outcomes not yet in a TNT packet */
	uint64_t truth_len; /* truth bytes at HDR + PKT not yet in the truth file */
	uint64_t end_ip;    /* Intel PT, tracing on: the start of the block the thread
			     * runs (it ends there if it dies: FUP + TIP.PGD), else 0 */
};

/* The short TNT packet of n (1..6) pending bits (oldest in the highest
 * bit): payload, stop bit, header bit 0 = 0 (Intel SDM, "TNT-8"). */
static inline uint8_t hwt_emu_tnt_byte(uint64_t tnt, uint64_t n)
{
	return (uint8_t)((tnt | (1ull << n)) << 1);
}

#endif
