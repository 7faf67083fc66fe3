/* hwt/pt_config.h - what a PT decoder needs to know about the recording CPU.
 *
 * Size-versioned: set .size = sizeof(struct hwt_pt_config) (use
 * hwt_pt_config_init) so that fields can be appended later without
 * breaking callers.  Errata follow the CPU (hwt_pt_cpu_errata), as libipt
 * applies them for a given family/model.
 */
#ifndef HWT_PT_CONFIG_H
#define HWT_PT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/pt_packet.h"

#ifdef __cplusplus
extern "C" {
#endif

enum hwt_cpu_vendor { HWT_CPU_UNKNOWN = 0, HWT_CPU_INTEL = 1 };

struct hwt_cpu {
	uint8_t vendor; /* enum hwt_cpu_vendor */
	uint16_t family;
	uint8_t model;
	uint8_t stepping;
};

/* Errata workarounds, named by Intel's specification-update ids. */
struct hwt_pt_errata {
	unsigned bdm70 : 1;
	unsigned bdm64 : 1;
	unsigned skd007 : 1;
	unsigned skd022 : 1;
	unsigned skd010 : 1;
	unsigned skl014 : 1;
	unsigned apl12 : 1;
	unsigned apl11 : 1;
	unsigned skl168 : 1;
	unsigned skz84 : 1;
};

#define HWT_PT_MAX_ADDR_RANGES 4

struct hwt_pt_addr_filter {
	/* IA32_RTIT_CTL.ADDRn_CFG: 0 off, 1 filter (trace inside), 2 stop. */
	uint8_t cfg[HWT_PT_MAX_ADDR_RANGES];
	uint64_t a[HWT_PT_MAX_ADDR_RANGES], b[HWT_PT_MAX_ADDR_RANGES];
};

struct hwt_pt_config {
	size_t size;	   /* sizeof(struct hwt_pt_config) */
	struct hwt_pt_buf buf; /* the trace */
	struct hwt_cpu cpu;
	struct hwt_pt_errata errata;
	uint32_t cpuid_0x15_eax, cpuid_0x15_ebx; /* TSC : crystal ratio */
	uint8_t nom_freq;			 /* MSR_PLATFORM_INFO[15:8] */
	uint8_t mtc_freq;			 /* IA32_RTIT_CTL.MTCFreq */
	struct hwt_pt_addr_filter addr_filter;
};

void hwt_pt_config_init(struct hwt_pt_config *cfg);
/* Fill errata for cfg->cpu.  HWT_ERR_BAD_CPU for an unknown (e.g. 0/0) cpu. */
int hwt_pt_cpu_errata(struct hwt_pt_errata *errata, const struct hwt_cpu *cpu);
/* Parse "F/M" or "F/M/S" (decimal) into cpu (vendor Intel). */
int hwt_pt_cpu_parse(struct hwt_cpu *cpu, const char *text);

struct hwt_pt_pkt_decoder;
/* Apply the packet-level errata workarounds (SKD007, SKZ84) in a packet
 * decoder, as libipt's packet decoder does for the configured cpu. */
void hwt_pt_pkt_set_errata(struct hwt_pt_pkt_decoder *dec, const struct hwt_pt_errata *errata);

#ifdef __cplusplus
}
#endif
#endif /* HWT_PT_CONFIG_H */
