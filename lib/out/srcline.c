/* lib/out/srcline.c - the source-line suffix of "hwt script --srcline":
 * " file:line" after a location, as perf script's srcline field; the
 * caller looks the line up (tools/srcline.c) and passes it as text. */
#include "out/out.h"

void hwt_out_src(struct hwt_outbuf *o, const struct hwt_out_loc *l)
{
	if (!l->src)
		return;
	hwt_out_char(o, ' ');
	hwt_out_str(o, l->src);
}
