/* lib/out/flame.h - flame graphs and flame charts as one self-contained,
 * interactive SVG file (flame.c).
 *
 * Input: stacks, root first ("main", "f", "g"), each with a count (for
 * hwt: instructions) and a time (ns, 0 if unknown), the same stacks as
 * folded "main;f;g COUNT" lines.  A flame graph merges equal stacks
 * (siblings sorted by name); a flame chart (cfg.chart) keeps the order in
 * which stacks come (time order) and merges a stack only into the most
 * recent sibling of the same name.
 *
 * Output: SVG 1.1 (well-formed XML, UTF-8) with a small script: click a
 * frame to zoom to it, "Reset zoom", "Search" (a regular expression,
 * matches highlighted and their share shown), and a tooltip per frame
 * (<title>: name, count, share, time).  Every frame carries data-n (its
 * count with its children's), data-self (its own count) and data-pruned
 * (the counts of children too narrow to draw, left out of the file): the
 * data-self and data-pruned of all frames sum to the total count.
 *
 * Lifecycle: hwt_flame_alloc, hwt_flame_add any number of times,
 * hwt_flame_write, hwt_flame_free.  Memory: one node per distinct stack
 * prefix (flame chart: per run of a prefix in time); names are copied.
 */
#ifndef HWT_LIB_OUT_FLAME_H
#define HWT_LIB_OUT_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "out/out.h"

struct hwt_flame_config {
	size_t size;	   /* sizeof(struct hwt_flame_config) */
	int chart;	   /* 1: flame chart (time order) */
	const char *title; /* NULL: "Flame Graph" / "Flame Chart" */
	const char *unit;  /* what counts count; NULL: "instructions" */
	unsigned width;	   /* pixels; 0: 1200 */
};
void hwt_flame_config_init(struct hwt_flame_config *cfg);

struct hwt_flame;
struct hwt_flame *hwt_flame_alloc(const struct hwt_flame_config *cfg);
void hwt_flame_free(struct hwt_flame *f);

/* Add count (and time_ns) to the stack frames[0..n) (root first; n >= 1).
 * 0 or HWT_ERR_NOMEM / HWT_ERR_INVALID. */
int hwt_flame_add(struct hwt_flame *f, const char *const *frames, size_t n, uint64_t count,
		  uint64_t time_ns);

/* The same, for callers that follow a stack as it changes: node 0 is the
 * root; hwt_flame_child returns the child of node named name (made if
 * needed; a chart reuses only the most recent child), 0 when out of
 * memory; hwt_flame_parent returns the parent (0 for the root). */
uint32_t hwt_flame_child(struct hwt_flame *f, uint32_t node, const char *name);
uint32_t hwt_flame_parent(const struct hwt_flame *f, uint32_t node);
void hwt_flame_count(struct hwt_flame *f, uint32_t node, uint64_t count, uint64_t time_ns);

/* The sum of all counts added. */
uint64_t hwt_flame_total(const struct hwt_flame *f);

/* Write the SVG.  0, or HWT_ERR_NOMEM / HWT_ERR_IO (o->err). */
int hwt_flame_write(struct hwt_flame *f, struct hwt_outbuf *o);

/* Append s to o with XML escaping (&<>"'), bytes that are not valid UTF-8
 * and control characters written as '?' (shared by the SVG and HTML
 * writers). */
void hwt_out_xml(struct hwt_outbuf *o, const char *s);

#endif
