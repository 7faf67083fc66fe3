/* lib/unit/emu_link.h - the recorder's end of an emulated unit: the qemu
 * child it launched and the pipe on which the plugin announces streams
 * (emu/stream.c: "S pid tid ppid ptid path" for a new stream file, "E tid
 * wait_ns" for its end).  Shared by the x86-64 units (emu_pt.c: intel_pt,
 * intel_bts, PEBS) and the aarch64 ones (emu_etm.c: cs_etm, arm_spe).
 * Lifecycle: hwt_emu_link_init when the unit's private state is made; the
 * unit's launch fills dir, rfd and child; hwt_emu_link_poll from the
 * unit's poll maps each announced stream file into a session stream; at
 * close hwt_emu_link_stop (a child still running is killed and reaped),
 * then hwt_emu_link_free (unmaps, removes the stream files and the folder,
 * closes the pipe).  Ownership: the link belongs to the unit's private
 * state; the streams belong to the session, their mappings to the link.
 * Not installed. */
#ifndef HWT_LIB_UNIT_EMU_LINK_H
#define HWT_LIB_UNIT_EMU_LINK_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "hwt/unit.h"

struct hwt_emu_box;

/* One stream file: [4096 control page][data ring][AUX ring][box]. */
struct hwt_emu_map {
	struct hwt_stream *st;
	void *map;
	size_t len;
	struct hwt_emu_box *box; /* NULL when the unit has none */
	char path[PATH_MAX];
};

struct hwt_emu_link {
	char dir[PATH_MAX]; /* the private folder of the stream files, "" for none */
	int rfd;	    /* the announce pipe's read end, -1 for none */
	int wfd;	    /* its write end until the child has it, -1 for none */
	pid_t child;	    /* the launched qemu, -1 for none */
	int reaped, eof;
	size_t box_bytes; /* bytes after the rings (the box, unit/emu_abi.h), 0 for none */
	char line[8192];
	size_t llen;
	struct hwt_emu_map *maps;
	size_t nmaps, capmaps;
};

void hwt_emu_link_init(struct hwt_emu_link *l, size_t box_bytes);
/* The AUX and data ring sizes of an emulated stream: the session's, or
 * 4 MiB / 512 KiB by default, at least a page each. */
void hwt_emu_ring_sizes(const struct hwt_session_config *cfg, uint64_t *aux, uint64_t *data);
/* Before a launch: the private folder (in $TMPDIR, else /tmp) and the
 * announce pipe.  0, or a negative error with the session's message set. */
int hwt_emu_link_open(struct hwt_emu_link *l, struct hwt_session *s);
/* The plugin arguments every emulated unit gives (the folder, the pipe,
 * the sample type, the ids, the ring sizes, snapshot mode), comma
 * separated, into out; returns their length (>= cap: cut). */
int hwt_emu_link_args(const struct hwt_emu_link *l, struct hwt_session *s, char *out, size_t cap);
/* Runs qv[0] (qemu) with qv, the plugin inheriting the pipe's write end
 * (unset_ld_prefix: without $QEMU_LD_PREFIX, when qv has -L).  0 and
 * *pid, or a negative error with the session's message set. */
int hwt_emu_link_spawn(struct hwt_emu_link *l, struct hwt_session *s, char *const qv[],
		       int unset_ld_prefix, pid_t *pid);
/* Reads what the pipe has (waiting up to timeout_ms for it): new streams
 * become session streams (fd -1, unit_priv: their struct hwt_emu_map),
 * ended ones get hup and wait_ns.  Once the pipe is closed, reaps the
 * child (waiting at most 20 ms a call) and gives the session its exit
 * status.  Returns 1 when both happened, else 0. */
int hwt_emu_link_poll(struct hwt_emu_link *l, struct hwt_session *s, int timeout_ms);
/* A child not reaped yet is killed (SIGKILL) and reaped. */
void hwt_emu_link_stop(struct hwt_emu_link *l);
/* Unmaps the streams (their rings emptied), removes the stream files, the
 * files named prefix* in dir (prefix NULL for none) and dir, closes the
 * pipe; the link can be freed after. */
void hwt_emu_link_free(struct hwt_emu_link *l, const char *prefix);

#endif
