/* lib/etm/info.c - perf's cs_etm AUXTRACE_INFO: which ETM source (trace
 * ID, ID registers) traces which CPU.
 *
 * Layout (perf's cs-etm.h, metadata versions 0 and 1): header words
 * version, (PMU type << 32 | CPU count), snapshot; then one block per
 * CPU: magic (ETMv3 0x3030..., ETMv4 0x4040..., ETE 0x5050...), CPU, [v1:
 * number of parameters], parameters.  ETMv4/ETE parameters start with
 * TRCCONFIGR, TRCTRACEIDR, TRCIDR0, TRCIDR1, TRCIDR2, TRCIDR8.  Version 0
 * has no parameter count (ETMv4: 7 words, ETMv3: 5).
 */
#include <stdio.h>
#include <string.h>

#include "etm/etm_int.h"
#include "hwt/error.h"

#define MAGIC_ETMV3 0x3030303030303030ull
#define MAGIC_ETMV4 0x4040404040404040ull
#define MAGIC_ETE 0x5050505050505050ull

int etm_meta_parse(const uint64_t *w, size_t n, struct etm_meta *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (n < 3) {
		snprintf(err, errlen,
			 "the cs_etm AUXTRACE_INFO has %zu words (at least 3 expected)", n);
		return HWT_ERR_BAD_CONFIG;
	}
	m->version = w[0];
	m->ncpu = (uint32_t)w[1];
	if (m->version > 1) {
		snprintf(err, errlen,
			 "cs_etm metadata version %llu is not known (hwt reads versions 0 and 1)",
			 (unsigned long long)m->version);
		return HWT_ERR_BAD_CONFIG;
	}
	size_t k = 3;
	for (uint32_t c = 0; c < m->ncpu; c++) {
		if (k + 2 > n)
			break;
		uint64_t magic = w[k];
		size_t np, base;
		if (m->version >= 1) {
			if (k + 3 > n)
				break;
			np = (size_t)w[k + 2];
			base = k + 3;
		} else {
			np = magic == MAGIC_ETMV3 ? 5 : 7;
			base = k + 2;
		}
		if (np > n || base + np > n) {
			snprintf(err, errlen,
				 "the cs_etm AUXTRACE_INFO block of CPU %u runs past its end", c);
			return HWT_ERR_BAD_CONFIG;
		}
		if ((magic == MAGIC_ETMV4 || magic == MAGIC_ETE) && np >= 6 &&
		    m->nsrc < HWT_ETM_MAX_SRC) {
			struct etm_src *s = &m->src[m->nsrc++];
			s->cpu = (uint32_t)w[k + 1];
			s->ete = magic == MAGIC_ETE;
			s->regs.configr = (uint32_t)w[base];
			s->regs.trace_id = (uint8_t)(w[base + 1] & 0x7f);
			s->regs.idr0 = (uint32_t)w[base + 2];
			s->regs.idr1 = (uint32_t)w[base + 3];
			s->regs.idr2 = (uint32_t)w[base + 4];
			s->regs.idr8 = (uint32_t)w[base + 5];
		} else if (magic != MAGIC_ETMV3 && magic != MAGIC_ETMV4 && magic != MAGIC_ETE) {
			snprintf(err, errlen,
				 "the cs_etm AUXTRACE_INFO block of CPU %u has an unknown magic "
				 "%#llx",
				 c, (unsigned long long)magic);
			return HWT_ERR_BAD_CONFIG;
		}
		k = base + np;
	}
	if (!m->nsrc) {
		snprintf(err, errlen,
			 "the cs_etm AUXTRACE_INFO names no ETMv4/ETE source (ETMv3/PTM trace is "
			 "not decoded)");
		return HWT_ERR_NOT_SUPPORTED;
	}
	return 0;
}

const struct etm_src *etm_meta_cpu(const struct etm_meta *m, uint32_t cpu)
{
	for (size_t i = 0; i < m->nsrc; i++)
		if (m->src[i].cpu == cpu)
			return &m->src[i];
	return NULL;
}
