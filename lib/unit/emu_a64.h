/* lib/unit/emu_a64.h - what the emulated aarch64 units share: cs_etm
 * (emu_etm.c) and arm_spe (emu_spe.c) both run the program under
 * qemu-aarch64 with hwt-etm-plugin.so; they differ in their terms, their
 * plugin arguments (extra) and their AUXTRACE_INFO.  emu_etm.c implements
 * probe (plugin and qemu found), launch, poll and close for both.  Not
 * installed. */
#ifndef HWT_LIB_UNIT_EMU_A64_H
#define HWT_LIB_UNIT_EMU_A64_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "hwt/unit.h"
#include "unit/emu_link.h"

/* The session's unit_priv of both units (calloc()ed by configure, freed by
 * hwt_emu_a64_close). */
struct emu_a64_priv {
	uint64_t config;
	int raw;
	char what[32];		/* unit name for messages: "cs_etm", "arm_spe" */
	char extra[512];	/* the unit's plugin arguments ("k=v,k=v") */
	struct hwt_emu_link ln; /* child, pipe, stream files */
};

/* Fills why/present of info (the caller sets name, pmu_type, formats). */
int hwt_emu_a64_probe(struct hwt_unit_info *info);
int hwt_emu_a64_launch(struct hwt_session *s, char *const argv[], pid_t *pid);
int hwt_emu_a64_poll(struct hwt_session *s, int timeout_ms);
void hwt_emu_a64_close(struct hwt_session *s);

#endif
