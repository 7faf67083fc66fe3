/* tools/script_samples.h - printing the samples of sampling recordings
 * (PEBS, SPE) in "hwt script", and naming the data object of an address
 * (also "hwt report --mem").  See script_samples.c. */
#ifndef HWT_TOOLS_SCRIPT_SAMPLES_H
#define HWT_TOOLS_SCRIPT_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "hwt/decode.h"

struct hwt_outbuf;
struct sp_symcache;

/* The data object s->addr falls in: a data symbol of the image, else the
 * sideband mapping ("[heap]", "[stack]", "[anon]", "[file]"); NULL if
 * none.  *off: addr's offset in it.  buf holds the "[file]" text. */
const char *ss_data_object(const struct hwt_dec_sample *s, char *buf, size_t len, uint64_t *off);
/* One line for s (tsv or text; time: print the time in text). */
void ss_print_sample(struct hwt_outbuf *o, struct sp_symcache *sc, const struct hwt_dec_thread *t,
		     const struct hwt_dec_sample *s, int tsv, int time);

#endif
