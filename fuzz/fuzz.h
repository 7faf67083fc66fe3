/* fuzz/fuzz.h - what the libFuzzer targets share: ENSURE(c), which aborts
 * (a crash libFuzzer reports) when an invariant of the code under test does
 * not hold, and the prototype of the entry point each target defines.
 * Header-only; included by every target in fuzz/. */
#ifndef HWT_FUZZ_H
#define HWT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define ENSURE(c)                                                                                  \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
