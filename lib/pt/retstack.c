/* lib/pt/retstack.c - the return stack for return compression.
 *
 * A fixed ring of RETSTACK_SIZE entries: when full, the oldest entry is
 * dropped (as the hardware's return compression only guarantees a bounded
 * depth; deeper returns are sent as TIPs).  No allocation.  Push and pop
 * are inline (insn_int.h).
 */
#include "insn_int.h"

void retstack_clear(struct retstack *rs)
{
	rs->top = 0;
	rs->n = 0;
}
