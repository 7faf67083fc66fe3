/* tools/srcline.c - "file:line" texts of code addresses, cached.
 *
 * Design: a direct-mapped cache from an address to its text, emptied when
 * the image changes (another image, or its version: sections added), in
 * front of hwt_image_srcline (a binary search in the file's line table).
 * Texts are interned in a hash table owned by the cache, so they outlive
 * the images (hwt report keeps them as keys) and every distinct line is
 * one pointer.  Memory grows with the distinct lines met, not with the
 * trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srcline.h"

#define SL_SIZE 8192
#define SL_BUCKETS 4096

struct sl_text {
	struct sl_text *next;
	size_t flen; /* the file name's length in text */
	unsigned line;
	char text[];
};

struct sl_entry {
	uint64_t ip;
	const char *text;
	int valid;
};

struct sl_cache {
	const struct hwt_image *img;
	uint32_t version;
	struct sl_entry e[SL_SIZE];
	struct sl_text *b[SL_BUCKETS];
};

struct sl_cache *sl_cache_alloc(void)
{
	return calloc(1, sizeof(struct sl_cache));
}

void sl_cache_free(struct sl_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < SL_BUCKETS; i++)
		for (struct sl_text *n = c->b[i], *nx; n; n = nx) {
			nx = n->next;
			free(n);
		}
	free(c);
}

/* The interned "file:line" (by content: images come and go). */
static const char *intern(struct sl_cache *c, const char *file, unsigned line)
{
	uint64_t h = 1469598103934665603ull ^ line;
	for (const char *p = file; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	size_t flen = strlen(file);
	struct sl_text **b = &c->b[h % SL_BUCKETS];
	for (struct sl_text *n = *b; n; n = n->next)
		if (n->line == line && n->flen == flen && !memcmp(n->text, file, flen))
			return n->text;
	size_t len = flen + 12;
	struct sl_text *n = malloc(sizeof(*n) + len);
	if (!n)
		return NULL;
	snprintf(n->text, len, "%s:%u", file, line);
	n->flen = flen;
	n->line = line;
	n->next = *b;
	*b = n;
	return n->text;
}

const char *sl_srcline(struct sl_cache *c, const struct hwt_image *img, uint64_t ip)
{
	if (!img)
		return NULL;
	uint32_t v = hwt_image_version(img);
	if (c->img != img || c->version != v) {
		memset(c->e, 0, sizeof(c->e));
		c->img = img;
		c->version = v;
	}
	struct sl_entry *e = &c->e[(ip ^ (ip >> 13)) % SL_SIZE];
	if (!e->valid || e->ip != ip) {
		const char *file;
		unsigned line;
		e->ip = ip;
		e->valid = 1;
		e->text = NULL;
		if (!hwt_image_srcline(img, ip, &file, &line))
			e->text = intern(c, file, line);
	}
	return e->text;
}
