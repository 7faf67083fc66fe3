/* hwt/pt_packet.h - Intel PT packets: one struct, an encoder, a decoder.
 *
 * Layer: lib/pt (packets).  Facts come from the Intel SDM vol. 3,
 * chapter "Intel Processor Trace", packet definitions.
 *
 * - hwt_pt_pkt_parse() is a pure function: bytes in, one packet out.
 * - struct hwt_pt_pkt_decoder walks a trace held in memory (one contiguous
 *   buffer, or the two halves of a wrapped ring: see hwt_pt_buf), with the
 *   verbs every hwt decoder has: sync_forward, sync_backward, sync_set,
 *   next, offset, sync_offset.  It never reads files; the caller owns the
 *   memory, which must outlive the decoder.
 * - hwt_pt_pkt_encode() writes one packet; the encoder object tracks the
 *   last IP so callers can ask for the best IP compression.
 * - struct hwt_pt_last_ip reconstructs full IPs from compressed payloads.
 */
#ifndef HWT_PT_PACKET_H
#define HWT_PT_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum hwt_pt_pkt_type {
	HWT_PKT_INVALID = 0,
	HWT_PKT_PAD,
	HWT_PKT_PSB,
	HWT_PKT_PSBEND,
	HWT_PKT_TNT8,
	HWT_PKT_TNT64,
	HWT_PKT_TIP,
	HWT_PKT_TIP_PGE,
	HWT_PKT_TIP_PGD,
	HWT_PKT_FUP,
	HWT_PKT_PIP,
	HWT_PKT_MODE_EXEC,
	HWT_PKT_MODE_TSX,
	HWT_PKT_TRACESTOP,
	HWT_PKT_CBR,
	HWT_PKT_TSC,
	HWT_PKT_MTC,
	HWT_PKT_TMA,
	HWT_PKT_CYC,
	HWT_PKT_VMCS,
	HWT_PKT_OVF,
	HWT_PKT_MNT,
	HWT_PKT_EXSTOP,
	HWT_PKT_MWAIT,
	HWT_PKT_PWRE,
	HWT_PKT_PWRX,
	HWT_PKT_PTW,
	HWT_PKT_BBP,
	HWT_PKT_BIP,
	HWT_PKT_BEP,
	HWT_PKT_CFE,
	HWT_PKT_EVD,
	HWT_PKT_TRIG,
	HWT_PKT_NTYPES
};

/* IP compression (the IPBytes field of TIP/TIP.PGE/TIP.PGD/FUP). */
enum hwt_pt_ipc {
	HWT_IPC_SUPPRESSED = 0, /* no payload */
	HWT_IPC_UPDATE_16 = 1,	/* 2 bytes, upper 48 bits from last IP */
	HWT_IPC_UPDATE_32 = 2,	/* 4 bytes, upper 32 bits from last IP */
	HWT_IPC_SEXT_48 = 3,	/* 6 bytes, sign-extended from bit 47 */
	HWT_IPC_UPDATE_48 = 4,	/* 6 bytes, upper 16 bits from last IP */
	HWT_IPC_FULL = 6,	/* 8 bytes */
};

/* MODE.Exec addressing mode as decoded from CS.L / CS.D. */
enum hwt_pt_exec_mode {
	HWT_EXEC_UNKNOWN = 0,
	HWT_EXEC_16 = 16,
	HWT_EXEC_32 = 32,
	HWT_EXEC_64 = 64,
};

struct hwt_pt_packet {
	uint8_t type; /* enum hwt_pt_pkt_type */
	uint8_t size; /* bytes in the stream, 1..16 (PSB: 16) */
	union {
		struct {
			uint8_t ipc;  /* enum hwt_pt_ipc (raw field value) */
			uint64_t ip;  /* the payload bytes as carried, zero-extended */
		} ip;		      /* TIP, TIP.PGE, TIP.PGD, FUP */
		struct {
			uint8_t bits;	  /* number of TNT bits, 1..47 */
			uint64_t payload; /* bit (bits-1) is the oldest branch */
		} tnt;			  /* TNT8, TNT64 */
		struct {
			uint8_t csl, csd, iflag;
		} mode_exec;
		struct {
			uint8_t intx, abrt;
		} mode_tsx;
		struct {
			uint64_t cr3; /* CR3[51:5] << 5 as carried */
			uint8_t nr;
		} pip;
		struct {
			uint64_t tsc; /* 56-bit value */
		} tsc;
		struct {
			uint8_t ratio;
		} cbr;
		struct {
			uint16_t ctc; /* CTC[15:0] */
			uint16_t fc;  /* fast counter, 9 bits */
		} tma;
		struct {
			uint8_t ctc;
		} mtc;
		struct {
			uint64_t value;
		} cyc;
		struct {
			uint64_t base; /* VMCS base address (payload << 12) */
		} vmcs;
		struct {
			uint64_t payload;
		} mnt;
		struct {
			uint8_t ip;
		} exstop;
		struct {
			uint32_t hints, ext;
		} mwait;
		struct {
			/* raw 4-bit MWAIT-hint encodings: C-state n is
			 * shown as c((n + 1) & 0xf) */
			uint8_t state, sub_state, hw;
		} pwre;
		struct {
			uint8_t last, deepest; /* raw, as pwre.state */
			uint8_t interrupt, store, autonomous; /* wake reasons */
		} pwrx;
		struct {
			uint8_t plc; /* payload size code: 0 = 4 bytes, 1 = 8 bytes */
			uint8_t ip;
			uint64_t payload;
		} ptw;
		struct {
			uint8_t sz, type;
		} bbp;
		struct {
			uint8_t id;
			uint64_t payload;
		} bip;
		struct {
			uint8_t ip;
		} bep;
		struct {
			uint8_t type, ip, vector;
		} cfe;
		struct {
			uint8_t type;
			uint64_t payload;
		} evd;
		struct {
			uint8_t trbv, ip, mult, icntv;
			uint16_t icnt;
		} trig;
	} u;
};

/* A trace in memory: [begin, end) then, if begin2 != NULL, [begin2, end2).
 * The second part is for a wrapped ring buffer: the stream's logical
 * offsets run on from the first part into the second, and a packet may be
 * split across the two. */
struct hwt_pt_buf {
	const uint8_t *begin, *end;
	const uint8_t *begin2, *end2;
};

/* Parse one packet at p (avail bytes readable).  Returns the packet size
 * (> 0), or HWT_ERR_EOS if the packet is truncated by avail,
 * HWT_ERR_BAD_OPC / HWT_ERR_BAD_PACKET for invalid bytes.  pkt is always
 * written (type HWT_PKT_INVALID on error). */
int hwt_pt_pkt_parse(const uint8_t *p, size_t avail, struct hwt_pt_packet *pkt);

/* The longest packet (PSB) in bytes. */
#define HWT_PT_PKT_MAX_SIZE 16

/* Block context for BIP packets (their header byte collides with TNT-8):
 * after a BBP with sz=1 the items are 4 bytes, with sz=0 8 bytes; a BEP (or
 * any packet other than BIP, PAD and timing packets) ends the block. */
enum hwt_pt_pkt_ctx {
	HWT_PKT_CTX_NONE = 0,
	HWT_PKT_CTX_BIP4 = 4,
	HWT_PKT_CTX_BIP8 = 8,
};
/* hwt_pt_pkt_parse() inside a block context (enum hwt_pt_pkt_ctx). */
int hwt_pt_pkt_parse_ctx(const uint8_t *p, size_t avail, int ctx, struct hwt_pt_packet *pkt);
/* The block context after pkt, given the context before it. */
int hwt_pt_pkt_ctx_after(int ctx, const struct hwt_pt_packet *pkt);

/* Encode one packet into out (room bytes).  Returns bytes written, or
 * HWT_ERR_NOMEM if room is too small, HWT_ERR_INVALID for a bad field.
 * For BIP, pkt->size (5 or 9) selects the payload size. */
int hwt_pt_pkt_encode(uint8_t *out, size_t room, const struct hwt_pt_packet *pkt);

/* Last-IP tracking (SDM "IP compression"). */
struct hwt_pt_last_ip {
	uint64_t ip;
	uint8_t have_ip;    /* an IP update (any ipc but 0) has been seen */
	uint8_t suppressed; /* the last update was suppressed */
};
void hwt_pt_last_ip_init(struct hwt_pt_last_ip *lip);
/* Apply a TIP/TIP.PGE/TIP.PGD/FUP payload.  Returns 0, or HWT_ERR_BAD_PACKET
 * for a reserved ipc. */
int hwt_pt_last_ip_update(struct hwt_pt_last_ip *lip, uint8_t ipc, uint64_t payload);
/* The current IP: 0 and *ip set, HWT_ERR_IP_SUPPRESSED, or HWT_ERR_NOIP. */
int hwt_pt_last_ip_query(const struct hwt_pt_last_ip *lip, uint64_t *ip);
/* Pick the shortest ipc that encodes ip given the last IP (encoders). */
uint8_t hwt_pt_ipc_for(const struct hwt_pt_last_ip *lip, uint64_t ip);

/* Packet decoder over a hwt_pt_buf. */
struct hwt_pt_pkt_decoder;

struct hwt_pt_pkt_decoder *hwt_pt_pkt_alloc(const struct hwt_pt_buf *buf);
void hwt_pt_pkt_free(struct hwt_pt_pkt_decoder *dec);
/* Move to the next PSB at or after the current position (0, HWT_ERR_EOS).
 * Like libipt, a PSB starting up to 15 bytes before the position counts
 * (one partly consumed by a bad packet); the current sync point never. */
int hwt_pt_pkt_sync_forward(struct hwt_pt_pkt_decoder *dec);
/* Move to the last PSB before the current sync point. */
int hwt_pt_pkt_sync_backward(struct hwt_pt_pkt_decoder *dec);
/* Position at an absolute offset (no PSB search). */
int hwt_pt_pkt_sync_set(struct hwt_pt_pkt_decoder *dec, uint64_t offset);
/* Decode the packet at the current position and advance past it.
 * Returns the packet size, HWT_ERR_EOS at the end, or a decode error (the
 * position is then unchanged: sync forward to go on).  With the SKD007
 * workaround (hwt_pt_pkt_set_errata) an OVF of size 2 may consume 3 bytes,
 * so take positions from hwt_pt_pkt_offset().  HWT_ERR_NOSYNC before the
 * first sync. */
int hwt_pt_pkt_next(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkt);
/* Decode up to n packets into pkts[] (the hot loop for bulk decoding).
 * Returns the number decoded (>= 1), or, if the very first packet fails,
 * the error hwt_pt_pkt_next() would give; an error after k packets
 * returns k and is reported by the next call.  Within one batch each
 * packet starts where the previous one ended.  pkts[r, n) past the r
 * packets returned may be overwritten (scratch). */
int hwt_pt_pkt_next_batch(struct hwt_pt_pkt_decoder *dec, struct hwt_pt_packet *pkts, int n);
/* Current position / last sync point, as logical stream offsets. */
int hwt_pt_pkt_offset(const struct hwt_pt_pkt_decoder *dec, uint64_t *offset);
int hwt_pt_pkt_sync_offset(const struct hwt_pt_pkt_decoder *dec, uint64_t *offset);
/* Total stream length. */
uint64_t hwt_pt_pkt_size(const struct hwt_pt_pkt_decoder *dec);

/* Mnemonic as ptdump prints it ("tip.pge", "tnt.8", ...). */
const char *hwt_pt_pkt_name(enum hwt_pt_pkt_type type);

#ifdef __cplusplus
}
#endif
#endif /* HWT_PT_PACKET_H */
