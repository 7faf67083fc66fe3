/* lib/pt/retstack.c - the return stack for return compression.
 *
 * A fixed ring of RETSTACK_SIZE entries: when full, the oldest entry is
 * dropped (as the hardware's return compression only guarantees a bounded
 * depth; deeper returns are sent as TIPs).  No allocation.
 */
#include "hwt/error.h"
#include "insn_int.h"

void retstack_clear(struct retstack *rs)
{
	rs->top = 0;
	rs->n = 0;
}

void retstack_push(struct retstack *rs, uint64_t ip)
{
	rs->ip[rs->top] = ip;
	rs->top = (uint8_t)((rs->top + 1) % RETSTACK_SIZE);
	if (rs->n < RETSTACK_SIZE)
		rs->n++;
}

int retstack_pop(struct retstack *rs, uint64_t *ip)
{
	if (!rs->n)
		return HWT_ERR_RETSTACK_EMPTY;
	rs->top = (uint8_t)((rs->top + RETSTACK_SIZE - 1) % RETSTACK_SIZE);
	rs->n--;
	*ip = rs->ip[rs->top];
	return 0;
}
