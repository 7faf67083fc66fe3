/* lib/out/drcov.c - the DynamoRIO drcov log writer (cover.h).
 *
 * Format (version 2, flavor "drcov"): a text header, a module table
 * ("id, base, end, entry, checksum, timestamp, path" per module), then
 * "BB Table: N bbs" and N binary entries of 8 bytes, little endian:
 * uint32 offset of the block from its module's base, uint16 size, uint16
 * module id.  Blocks are deduplicated by (start, size); modules by (path,
 * base).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "out/addrmap.h"
#include "out/cover.h"

struct dmod {
	const char *path;
	uint64_t base, end;
};

struct dblock {
	uint32_t off;
	uint16_t size, mod;
};

struct hwt_drcov {
	struct dmod *m;
	size_t nm, capm;
	struct dblock *b;
	size_t nb, capb;
	struct hwt_amap seen; /* hash of (start, size) -> 1 */
	struct hwt_strtab str;
};

struct hwt_drcov *hwt_drcov_alloc(void)
{
	return calloc(1, sizeof(struct hwt_drcov));
}

void hwt_drcov_free(struct hwt_drcov *d)
{
	if (!d)
		return;
	free(d->m);
	free(d->b);
	hwt_amap_fini(&d->seen);
	hwt_strtab_fini(&d->str);
	free(d);
}

int hwt_drcov_module(struct hwt_drcov *d, const struct hwt_image *img, uint64_t addr)
{
	const char *path;
	uint64_t foff;
	if (!img || hwt_image_where(img, addr, &path, &foff) || foff > addr)
		return -1;
	uint64_t base = addr - foff;
	for (size_t i = d->nm; i-- > 0;) /* recent modules first */
		if (d->m[i].base == base && !strcmp(d->m[i].path, path))
			return (int)i;
	if (d->nm >= UINT16_MAX)
		return -1;
	path = hwt_strtab_intern(&d->str, path);
	if (!path)
		return HWT_ERR_NOMEM;
	if (d->nm == d->capm) {
		size_t nc = d->capm ? 2 * d->capm : 16;
		struct dmod *nv = realloc(d->m, nc * sizeof(*nv));
		if (!nv)
			return HWT_ERR_NOMEM;
		d->m = nv;
		d->capm = nc;
	}
	d->m[d->nm++] = (struct dmod){path, base, addr};
	return (int)(d->nm - 1);
}

int hwt_drcov_add(struct hwt_drcov *d, int module, uint64_t start, uint64_t size)
{
	if (module < 0 || (size_t)module >= d->nm || !size || size > UINT16_MAX)
		return 1;
	struct dmod *m = &d->m[module];
	if (start < m->base || start - m->base > UINT32_MAX)
		return 1;
	/* one entry per (start, size): the map is keyed by start and holds
	 * the first block there; other sizes at the same start are
	 * searched in the blocks list (rare: a block cut by a gap) */
	uint32_t *slot = hwt_amap_slot(&d->seen, start);
	if (!slot)
		return HWT_ERR_NOMEM;
	uint32_t off = (uint32_t)(start - m->base);
	if (*slot) {
		const struct dblock *b = &d->b[*slot - 1];
		if (b->size == size && b->mod == module)
			return 0;
		for (size_t i = 0; i < d->nb; i++)
			if (d->b[i].off == off && d->b[i].size == size && d->b[i].mod == module)
				return 0;
	}
	if (d->nb == d->capb) {
		size_t nc = d->capb ? 2 * d->capb : 1024;
		struct dblock *nv = realloc(d->b, nc * sizeof(*nv));
		if (!nv)
			return HWT_ERR_NOMEM;
		d->b = nv;
		d->capb = nc;
	}
	d->b[d->nb++] = (struct dblock){off, (uint16_t)size, (uint16_t)module};
	if (!*slot) {
		*slot = (uint32_t)d->nb;
		hwt_amap_added(&d->seen);
	}
	if (m->end < start + size)
		m->end = start + size;
	return 0;
}

int hwt_drcov_block(struct hwt_drcov *d, const struct hwt_image *img, uint64_t start, uint64_t size)
{
	if (!size || size > UINT16_MAX)
		return 1;
	int m = hwt_drcov_module(d, img, start);
	if (m < 0)
		return m == -1 ? 1 : m;
	return hwt_drcov_add(d, m, start, size);
}

int hwt_drcov_write(struct hwt_drcov *d, struct hwt_outbuf *o)
{
	char buf[256];
	snprintf(buf, sizeof(buf),
		 "DRCOV VERSION: 2\nDRCOV FLAVOR: drcov\nModule Table: version 2, count %zu\n"
		 "Columns: id, base, end, entry, checksum, timestamp, path\n",
		 d->nm);
	hwt_out_str(o, buf);
	for (size_t i = 0; i < d->nm; i++) {
		/* end: rounded up to a page, as a mapping's end would be */
		uint64_t end = (d->m[i].end + 0xfff) & ~0xfffull;
		snprintf(buf, sizeof(buf),
			 "%3zu, 0x%016llx, 0x%016llx, 0x0000000000000000, 0x00000000, "
			 "0x00000000, ",
			 i, (unsigned long long)d->m[i].base, (unsigned long long)end);
		hwt_out_str(o, buf);
		hwt_out_str(o, d->m[i].path);
		hwt_out_char(o, '\n');
	}
	snprintf(buf, sizeof(buf), "BB Table: %zu bbs\n", d->nb);
	hwt_out_str(o, buf);
	for (size_t i = 0; i < d->nb; i++) {
		uint8_t e[8];
		uint32_t off = d->b[i].off;
		e[0] = (uint8_t)off;
		e[1] = (uint8_t)(off >> 8);
		e[2] = (uint8_t)(off >> 16);
		e[3] = (uint8_t)(off >> 24);
		e[4] = (uint8_t)d->b[i].size;
		e[5] = (uint8_t)(d->b[i].size >> 8);
		e[6] = (uint8_t)d->b[i].mod;
		e[7] = (uint8_t)(d->b[i].mod >> 8);
		hwt_out_mem(o, (const char *)e, 8);
	}
	hwt_outbuf_flush(o);
	return o->err ? HWT_ERR_IO : 0;
}
