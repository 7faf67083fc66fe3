/* emu/aarch64/spe.h - the emulated Arm SPE mode of the qemu-aarch64 plugin
 * (spe.c), as plugin.c calls it: plugin arguments, then installation of
 * SPE's own callbacks instead of the ETM's. */
#ifndef HWT_EMU_AARCH64_SPE_H
#define HWT_EMU_AARCH64_SPE_H

#include "../qemu_plugin_api.h"

/* 1 if k=v is an SPE argument (spe=1 turns the mode on), else 0. */
int spe_arg(const char *k, const char *v);
int spe_enabled(void);
/* Register SPE's callbacks (after the common arguments are set up). */
int spe_install(qemu_plugin_id_t id);

#endif
