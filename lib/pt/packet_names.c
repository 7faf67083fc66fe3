/* lib/pt/packet_names.c - packet mnemonics as libipt's ptdump prints them.
 *
 * Design: one constant table indexed by enum hwt_pt_pkt_type; unknown or
 * out-of-range types give "<invalid>" (ptdump's text for a byte that is
 * not a packet).  BBP/BIP/BEP, which ptdump does not know, get their SDM
 * names in lower case.
 */
#include "hwt/pt_packet.h"

static const char *const names[HWT_PKT_NTYPES] = {
    [HWT_PKT_INVALID] = "<invalid>", [HWT_PKT_PAD] = "pad",
    [HWT_PKT_PSB] = "psb",	     [HWT_PKT_PSBEND] = "psbend",
    [HWT_PKT_TNT8] = "tnt.8",	     [HWT_PKT_TNT64] = "tnt.64",
    [HWT_PKT_TIP] = "tip",	     [HWT_PKT_TIP_PGE] = "tip.pge",
    [HWT_PKT_TIP_PGD] = "tip.pgd",   [HWT_PKT_FUP] = "fup",
    [HWT_PKT_PIP] = "pip",	     [HWT_PKT_MODE_EXEC] = "mode.exec",
    [HWT_PKT_MODE_TSX] = "mode.tsx", [HWT_PKT_TRACESTOP] = "stop",
    [HWT_PKT_CBR] = "cbr",	     [HWT_PKT_TSC] = "tsc",
    [HWT_PKT_MTC] = "mtc",	     [HWT_PKT_TMA] = "tma",
    [HWT_PKT_CYC] = "cyc",	     [HWT_PKT_VMCS] = "vmcs",
    [HWT_PKT_OVF] = "ovf",	     [HWT_PKT_MNT] = "mnt",
    [HWT_PKT_EXSTOP] = "exstop",     [HWT_PKT_MWAIT] = "mwait",
    [HWT_PKT_PWRE] = "pwre",	     [HWT_PKT_PWRX] = "pwrx",
    [HWT_PKT_PTW] = "ptw",	     [HWT_PKT_BBP] = "bbp",
    [HWT_PKT_BIP] = "bip",	     [HWT_PKT_BEP] = "bep",
    [HWT_PKT_CFE] = "cfe",	     [HWT_PKT_EVD] = "evd",
    [HWT_PKT_TRIG] = "trig",
};

const char *hwt_pt_pkt_name(enum hwt_pt_pkt_type type)
{
	if ((unsigned)type >= HWT_PKT_NTYPES || !names[type])
		return "<invalid>";
	return names[type];
}
