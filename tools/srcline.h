/* tools/srcline.h - "file:line" texts of code addresses for the --srcline
 * options of "hwt script" and "hwt report" (srcline.c). */
#ifndef HWT_TOOLS_SRCLINE_H
#define HWT_TOOLS_SRCLINE_H

#include <stdint.h>

#include "hwt/image.h"

struct sl_cache;
struct sl_cache *sl_cache_alloc(void);
void sl_cache_free(struct sl_cache *c);
/* "file:line" of ip in img (hwt_image_srcline), or NULL when unknown.
 * The text lives as long as the cache (not the image). */
const char *sl_srcline(struct sl_cache *c, const struct hwt_image *img, uint64_t ip);

#endif
