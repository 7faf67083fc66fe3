/* tests/e2e/progs/srcline_util.h - code from a second source file for
 * srcline_prog.c (inlined into it at -O2: its lines are this file's). */
static inline unsigned mix_step(unsigned h, unsigned c)
{
	h ^= c;
	h *= 16777619u;
	return h;
}
