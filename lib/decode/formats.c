/* lib/decode/formats.c - the trace formats the recording decoder knows:
 * one ops table per AUXTRACE_INFO type (hwt/decode.h, "Trace formats").
 * Adding a format: its ops in its own file (lib/<fmt>/ or lib/decode/),
 * then here its extern and one line in `formats`. */
#include <stdio.h>
#include <string.h>

#include "decode/decode_int.h"

extern const struct hwt_decoder_ops hwt_decoder_intel_pt;  /* pt.c */
extern const struct hwt_decoder_ops hwt_decoder_intel_bts; /* lib/bts/decode.c */
extern const struct hwt_decoder_ops hwt_decoder_cs_etm;	   /* lib/etm/decode.c */
extern const struct hwt_decoder_ops hwt_decoder_arm_spe;   /* lib/spe/decode.c */

static const struct hwt_decoder_ops *const formats[] = {
    &hwt_decoder_intel_pt,
    &hwt_decoder_intel_bts,
    &hwt_decoder_cs_etm,
    &hwt_decoder_arm_spe,
};

const struct hwt_decoder_ops *hwt_decoder_ops_find(uint32_t type)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i]->auxtrace_type == type)
			return formats[i];
	return NULL;
}

void hwt_decoder_ops_names(char *buf, size_t n)
{
	size_t len = 0;
	if (n)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]) && len < n; i++) {
		int k = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", formats[i]->name);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

const char *hwt_decoder_format_name(uint32_t type)
{
	/* perf's enum auxtrace_type */
	static const char *const names[] = {"none",    "intel_pt",    "intel_bts", "cs_etm",
					    "arm_spe", "s390_cpumsf", "hisi_ptt"};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}
