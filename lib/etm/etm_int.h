/* lib/etm/etm_int.h - internals of the cs_etm decoder (lib/etm/decode.c,
 * the hwt_decoder_ops of AUXTRACE type 3): the recording's ETM sources
 * (info.c), OpenCSD decode trees (tree.c) and the element-to-flow step
 * (flow.c).  Not installed. */
#ifndef HWT_LIB_ETM_INT_H
#define HWT_LIB_ETM_INT_H

#include <stddef.h>
#include <stdint.h>

#include <opencsd/c_api/opencsd_c_api.h>

#include "hwt/decode.h"
#include "hwt/etm.h"

/* ---- info.c: perf's cs_etm AUXTRACE_INFO ---- */
#define HWT_ETM_MAX_SRC 128

struct etm_src {
	uint32_t cpu;
	int ete; /* ETE (magic 0x5050...) rather than ETMv4 */
	struct hwt_etm_source regs;
};

struct etm_meta {
	uint64_t version;
	uint32_t ncpu;
	size_t nsrc;
	struct etm_src src[HWT_ETM_MAX_SRC];
};

/* Parse the private words of a cs_etm AUXTRACE_INFO (perf metadata
 * versions 0 and 1; ETMv4 and ETE blocks; ETMv3/PTM blocks are skipped):
 * 0, or HWT_ERR_BAD_CONFIG (then err says what is wrong). */
int etm_meta_parse(const uint64_t *w, size_t n, struct etm_meta *m, char *err, size_t errlen);
/* The source of a CPU (NULL if none). */
const struct etm_src *etm_meta_cpu(const struct etm_meta *m, uint32_t cpu);

/* ---- tree.c: one OpenCSD decode tree ---- */
struct etm_tree;

struct etm_tree_cbs {
	void *arg;
	/* a generic element of trace ID id; off: the AUX stream offset of the
	 * packet that produced it */
	void (*elem)(void *arg, uint64_t off, uint8_t id, const ocsd_generic_trace_elem *e);
	/* OpenCSD gave up on the data at off (damage it cannot get past): the
	 * tree was reset, decoding resumes at the next sync */
	void (*fatal)(void *arg, uint64_t off);
	/* code bytes for the instruction walk: bytes copied (0: none) */
	uint32_t (*mem)(void *arg, uint64_t addr, uint32_t n, uint8_t *buf);
};

/* formatted: CoreSight frames (every source of m), else raw bytes of
 * source raw_src. */
int etm_tree_alloc(struct etm_tree **out, const struct etm_meta *m, int formatted,
		   const struct etm_src *raw_src, const struct etm_tree_cbs *cbs);
void etm_tree_free(struct etm_tree *t);
/* Decode size bytes at AUX stream offset off. */
int etm_tree_feed(struct etm_tree *t, const uint8_t *data, size_t size, uint64_t off);
/* End of trace: what OpenCSD holds comes out. */
void etm_tree_eot(struct etm_tree *t);
/* The code changed (the process image is another one): drop OpenCSD's
 * cached code bytes. */
void etm_tree_mem_changed(struct etm_tree *t);

/* ---- flow.c: elements -> insns, branches, events, gaps ---- */
struct etm_flow {
	struct hwt_decoder *dec;
	struct hwt_dec_thread *t;
	const struct hwt_image *img;
	const struct hwt_decode_consumer *c;
	int want_insn, want_raw;
	uint64_t br_from; /* a taken branch whose target is the next range */
	uint8_t br_kind;
	uint8_t have_br;
	uint8_t have_exc; /* an exception: exc_ret is where it was taken */
	uint8_t trace_on; /* tracing (re)started: an enabled event at the next range */
	uint64_t exc_ret;
	int have_time;
	uint64_t time_ns;
};

void etm_flow_elem(struct etm_flow *f, uint64_t off, const ocsd_generic_trace_elem *e);
/* The trace broke at off (the pending branch is dropped). */
void etm_flow_gap(struct etm_flow *f, uint64_t off, uint64_t ip, int err);

#endif
