/* lib/pt/packet_int.h - what the packet decoder offers the rest of lib/pt
 * beyond the public API: a shortcut for the query decoder's hot path. */
#ifndef HWT_LIB_PT_PACKET_INT_H
#define HWT_LIB_PT_PACKET_INT_H

#include <stdint.h>

#include "hwt/pt_packet.h"

/* If the next packet is a TNT-8 (one byte: bit 0 clear, not PAD or the
 * 0x02 extended-opcode byte) outside a block context, read it as
 * hwt_pt_pkt_next would: fill *pkt and *off (its offset) and return 1.
 * Otherwise return 0 and change nothing. */
int pkt_next_tnt8(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkt, uint64_t *off);

#endif
