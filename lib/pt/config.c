/* lib/pt/config.c - decoder configuration defaults (errata: cpu.c). */
#include <string.h>

#include "hwt/pt_config.h"

void hwt_pt_config_init(struct hwt_pt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
}
