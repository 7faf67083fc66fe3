/* lib/pt/last_ip.c - IP reconstruction from compressed TIP/FUP payloads.
 *
 * Design (SDM "IP compression"): the decoder keeps the last IP; IPBytes 1,
 * 2 and 4 replace its low 16, 32 or 48 bits, 3 sign-extends a 48-bit
 * payload, 6 carries all 64 bits, 0 suppresses the IP (the last IP is
 * kept, but queries report HWT_ERR_IP_SUPPRESSED until the next update).
 * Plain value type, no allocation.  hwt_pt_ipc_for() is the encoder side:
 * the shortest IPBytes value that reproduces an IP given the last IP.
 */
#include "hwt/pt_packet.h"

void hwt_pt_last_ip_init(struct hwt_pt_last_ip *lip)
{
	lip->ip = 0;
	lip->have_ip = 0;
	lip->suppressed = 0;
}

static uint64_t sext48(uint64_t v)
{
	v &= 0xffffffffffffull;
	return (v & (1ull << 47)) ? v | 0xffff000000000000ull : v;
}

int hwt_pt_last_ip_update(struct hwt_pt_last_ip *lip, uint8_t ipc, uint64_t payload)
{
	switch (ipc) {
	case HWT_IPC_SUPPRESSED:
		lip->suppressed = 1;
		return 0;
	case HWT_IPC_UPDATE_16:
		lip->ip = (lip->ip & ~0xffffull) | (payload & 0xffffull);
		break;
	case HWT_IPC_UPDATE_32:
		lip->ip = (lip->ip & ~0xffffffffull) | (payload & 0xffffffffull);
		break;
	case HWT_IPC_SEXT_48:
		lip->ip = sext48(payload);
		break;
	case HWT_IPC_UPDATE_48:
		lip->ip = (lip->ip & ~0xffffffffffffull) | (payload & 0xffffffffffffull);
		break;
	case HWT_IPC_FULL:
		lip->ip = payload;
		break;
	default:
		return HWT_ERR_BAD_PACKET;
	}
	lip->have_ip = 1;
	lip->suppressed = 0;
	return 0;
}

int hwt_pt_last_ip_query(const struct hwt_pt_last_ip *lip, uint64_t *ip)
{
	if (!lip->have_ip) {
		if (ip)
			*ip = 0;
		return HWT_ERR_NOIP;
	}
	if (lip->suppressed) {
		if (ip)
			*ip = 0;
		return HWT_ERR_IP_SUPPRESSED;
	}
	if (ip)
		*ip = lip->ip;
	return 0;
}

uint8_t hwt_pt_ipc_for(const struct hwt_pt_last_ip *lip, uint64_t ip)
{
	if (lip->have_ip) {
		uint64_t diff = ip ^ lip->ip;
		if (!(diff >> 16))
			return HWT_IPC_UPDATE_16;
		if (!(diff >> 32))
			return HWT_IPC_UPDATE_32;
	}
	if (sext48(ip) == ip)
		return HWT_IPC_SEXT_48;
	if (lip->have_ip && !((ip ^ lip->ip) >> 48))
		return HWT_IPC_UPDATE_48;
	return HWT_IPC_FULL;
}
