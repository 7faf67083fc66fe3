/* lib/pt/path.c - the path cache: the branches a TNT packet selects.
 *
 * Where the flow crosses cached runs (cache.c) that end in conditional
 * branches and direct jumps, the code and the TNT bits alone decide the
 * way: from a given ip, in a given mode, the same bits always take the
 * same branches.  A path caches that walk for one key (ip, mode, the TNT
 * bits not yet used: of the current packet, and of the TNT-8 packets
 * that follow it when the batch adds them): the taken branches as the
 * batch's entries (from, to, class, mode, instructions since the
 * previous one), the ip where the walk leaves off and whether a
 * conditional branch ends the run there (so another path may follow at
 * once), so the batch decoder (batch.c) delivers all the branches of
 * several TNT packets with one lookup.
 *
 * A path starts with a run that ends in a conditional branch, follows
 * runs that end in a conditional branch, a direct jump or call, no branch
 * (RUN_MAX), or a return from a call made in the path (compressed: it
 * takes a bit, which must say taken), and ends right after the branch
 * that uses its last bit: when the bits are used up, or before the first
 * run it cannot follow (a return to before the path, an indirect or far
 * branch, no code, calls PATH_MAXDEPTH deep), or at PATH_MAXBR branches /
 * PATH_MAXSTEPS runs.  The return stack operations (push at a call,
 * unless it calls the next instruction; pop at a return) go with the
 * branches and are done again, in order, where the path is used (so the
 * ring of RETSTACK_SIZE ends up as the flow engine leaves it).  Ending
 * after a bit keeps the flow engine's cycle check (flow_no_trace_cycle)
 * exact without calling it: every jump and call of a path follows a bit
 * and is followed by a bit taken in the path, so at the next jump after
 * the path the check starts over whether or not it saw those inside.
 *
 * Ownership and limits: the paths live in the decode cache and belong
 * to its image (hwt_pt_cache_clear drops them); fixed memory, allocated
 * with the first path: PATH_SLOTS paths (direct-mapped, a new path
 * replaces the one in its slot) and PATH_POOL branches, kept as the
 * batch's entries (a full pool drops every path and starts over), about
 * 13 MB.
 */
#include <stdlib.h>
#include <string.h>

#include "insn_int.h"

static void drop_all(struct hwt_pt_cache *c)
{
	c->pbr_used = 0;
	if (++c->path_epoch == 0)
		c->path_epoch = 1;
}

void path_clear(struct hwt_pt_cache *c)
{
	if (c->paths) {
		memset(c->paths, 0, PATH_SLOTS * sizeof(*c->paths));
		c->path_epoch = 1;
		c->pbr_used = 0;
	}
}

/* Walk the code from ip with the bits and store the path in slot p.
 * 0, or -1 when there is no path. */
static int build(struct hwt_pt_cache *c, struct path *p, uint64_t ip, int mode, uint64_t key)
{
	int n = 63 - __builtin_clzll(key);
	uint64_t bits = key & ~(1ull << n);
	struct path_br br[PATH_MAXBR];
	uint64_t cur = ip, stack[PATH_MAXDEPTH];
	uint32_t cnt = 0, nbr = 0;
	int used = 0, depth = 0;
	/* the state right after the last bit taken */
	uint64_t s_cur = 0;
	uint32_t s_cnt = 0, s_nbr = 0;
	int s_used = 0;

	for (int step = 0; step < PATH_MAXSTEPS && used < n && nbr < PATH_MAXBR; step++) {
		const struct run *r = cache_run(c, cur, mode);
		if (!r)
			break;
		uint64_t last = r->ip + r->last, next = last + r->size;
		if (r->iclass == HWT_INSN_OTHER) {
			cnt += r->n;
			cur = next;
			continue;
		}
		if (r->iclass == HWT_INSN_JMP) {
			if (!used)
				break; /* a path starts with a conditional branch */
			cnt += r->n;
			br[nbr++] = (struct path_br){last, r->target, cnt, HWT_INSN_JMP, 0};
			cnt = 0;
			cur = r->target;
			continue;
		}
		if (r->iclass == HWT_INSN_CALL) {
			if (!used || depth == PATH_MAXDEPTH)
				break;
			cnt += r->n;
			uint8_t rs = 0;
			if (r->target != next) {
				rs = r->size;
				stack[depth++] = next;
			}
			br[nbr++] = (struct path_br){last, r->target, cnt, HWT_INSN_CALL, rs};
			cnt = 0;
			cur = r->target;
			continue;
		}
		int taken = (int)((bits >> (n - 1 - used)) & 1);
		if (r->iclass == HWT_INSN_RET) {
			/* a compressed return to a call of the path */
			if (!depth || !taken)
				break;
			cnt += r->n;
			used++;
			cur = stack[--depth];
			br[nbr++] = (struct path_br){last, cur, cnt, HWT_INSN_RET, PATH_POP};
			cnt = 0;
		} else {
			if (r->iclass != HWT_INSN_JCC)
				break;
			cnt += r->n;
			used++;
			uint64_t to = taken ? r->target : next;
			if (to != next) { /* a taken branch to the next insn is no branch */
				br[nbr++] = (struct path_br){last, to, cnt, HWT_INSN_JCC, 0};
				cnt = 0;
			}
			cur = to;
		}
		s_cur = cur;
		s_cnt = cnt;
		s_nbr = nbr;
		s_used = used;
	}
	if (!s_used)
		return -1;
	if (c->pbr_used + s_nbr > PATH_POOL)
		drop_all(c);
	p->ip = ip;
	p->key = key;
	p->mode = (uint8_t)mode;
	p->end = s_cur;
	p->tail = s_cnt;
	p->used = (uint8_t)s_used;
	p->nbr = (uint8_t)s_nbr;
	p->br = c->pbr_used;
	p->flags = 0;
	/* the branches as the batch's entries, ready to copy */
	struct hwt_pt_entry *e = c->pent + c->pbr_used;
	uint8_t *rs = c->prs + c->pbr_used;
	memset(e, 0, s_nbr * sizeof(*e));
	for (uint32_t i = 0; i < s_nbr; i++) {
		e[i].type = HWT_PTE_BRANCH;
		e[i].iclass = br[i].iclass;
		e[i].mode = (uint8_t)mode;
		e[i].ninsn = br[i].ninsn;
		e[i].from = br[i].from;
		e[i].to = br[i].to;
		rs[i] = br[i].rs;
		if (br[i].rs)
			p->flags |= PATH_RS;
	}
	c->pbr_used += s_nbr;
	/* (the code does not change while the paths live: cache_bind drops
	 * them with the image) */
	const struct run *r = cache_run(c, s_cur, mode);
	if (r && r->iclass == HWT_INSN_JCC)
		p->flags |= PATH_END_JCC;
	p->epoch = c->path_epoch;
	return 0;
}

const struct path *path_get(struct hwt_pt_cache *c, uint64_t ip, int mode, uint64_t key)
{
	if (!c->paths) {
		c->paths = calloc(PATH_SLOTS, sizeof(*c->paths));
		c->pent = malloc(PATH_POOL * sizeof(*c->pent));
		c->prs = calloc(PATH_POOL + 8, 1); /* (8 to spare: read by words) */
		if (!c->paths || !c->pent || !c->prs) {
			free(c->paths);
			free(c->pent);
			free(c->prs);
			c->paths = NULL;
			c->pent = NULL;
			c->prs = NULL;
			return NULL;
		}
		c->path_epoch = 1;
		c->pbr_used = 0;
	}
	struct path *p = &c->paths[path_slot(ip, mode, key)];
	if (p->epoch == c->path_epoch && p->ip == ip && p->key == key && p->mode == mode)
		return p;
	p->epoch = 0;
	return build(c, p, ip, mode, key) ? NULL : p;
}
