/* emu/emu.h - shared state of the hwt QEMU plugin (emulated Intel PT).
 *
 * plugin.c: QEMU callbacks, control-flow reconstruction per translated
 * block, filters, syscalls.  stream.c: per-thread output (AUX ring in a
 * shared file announced to the recorder over a pipe, sideband records,
 * raw debug files, the truth file).  ptgen.h: PT packet generation;
 * btsgen.h: BTS records (plugin argument fmt=bts), written into the same
 * per-thread buffer, so everything but the byte writer is shared.
 * fastpath.c: the block log (the hot callback only appends the block) and
 * the encoder thread that runs the per-block code on it.
 *
 * The plugin is a process-wide singleton inside qemu-x86_64, so its state
 * is global (struct emu_global); each guest thread has one struct emu_thr
 * that only that thread touches, except at exit/fork where every other
 * vCPU is stopped, and the encoder thread, which runs its per-block code
 * under its log's lock (fastpath.c).
 */
#ifndef HWT_EMU_EMU_H
#define HWT_EMU_EMU_H

#include <stdint.h>
#include <sys/types.h>

#include "btsgen.h"
#include "ptgen.h"
#include "hwt/ring.h"
#include "unit/emu_abi.h"

#define EMU_MAX_VCPUS 4096
#define EMU_BUF_SIZE HWT_EMU_BOX_PKT
#define EMU_TRUTH_BUF HWT_EMU_BOX_TRUTH
#define EMU_MAX_FILTERS 4

struct emu_filter {
	int cfg;       /* 1 filter, 2 stop */
	int active;    /* a, b known (file mapped, or absolute) */
	uint64_t a, b; /* inclusive guest range */
	uint64_t off, size;
	char path[512]; /* "" for absolute addresses */
};

struct emu_global {
	struct ptg_cfg ptg;
	int bts;	 /* fmt=bts: Intel BTS records (btsgen.h) instead of PT */
	int pebs;	 /* fmt=pebs: memory samples (pebs.c), no trace bytes */
	char dir[512];	 /* stream files (recorder), "" for none */
	int announce_fd; /* pipe to the recorder, -1 for none */
	char raw[512];	 /* debug: raw PT per thread to raw.<tid> */
	char truth[512]; /* truth file path */
	int truth_fd;
	uint64_t aux_size, data_size;
	int snapshot;
	uint64_t sample_type; /* sample_id_all trailer of records */
	uint64_t sample_id;   /* trace event: AUX, ITRACE_START */
	uint64_t sb_id;	      /* sideband event: MMAP2, COMM, FORK, EXIT */
	uint64_t flush_at;    /* bytes in the per-thread buffer before a flush */
	struct emu_filter filt[EMU_MAX_FILTERS];
	int nfilt, have_filter_ranges;
	pid_t pid;
	int *exec_warned; /* shared by forked children */
	int64_t guest_base;
	uint64_t handlers[65]; /* signal handlers installed (guest addresses) */
	uint64_t tsc0;	       /* TSC at process start */
	char sysroot[512];     /* qemu -L prefix (the ETM plugin), "" for none */
	uint64_t aux_flags;    /* PERF_RECORD_AUX flags of every piece (ETM raw: 0x100) */
	int sync;	       /* encoder=sync|ref: packets built at every block (no log) */
	int ref;	       /* encoder=ref: step() for every block (no tb_fast) */
	int none;	       /* encoder=none: an empty callback per block, no trace */
	int encoder_inline;    /* encoder=inline: block log encoded on the thread itself */
	int truth_box;	       /* truthbox=1: a truth file per stream (the recorder joins them) */
	int fast;	       /* plain branch tracing: tb_fast may take a block (plugin.c) */
};

extern struct emu_global emu;

struct emu_thr {
	pid_t pid, tid, ppid, ptid;
	int vcpu;
	struct ptgen g;	 /* PT packets; in BTS mode only its byte buffer */
	struct btsgen b; /* BTS mode: the branch predictor model */
	const struct emu_tb *prev;
	uint64_t icount, tbase;
	int stopped; /* TraceStop hit */
	int in_step; /* encoder=sync: inside step() (the fault hook must not publish) */
	uint64_t sys_args[6];
	int64_t sys_num;
	/* stream */
	int sfd;
	void *map;
	size_t map_len;
	struct hwt_ring ring;
	int have_ring;
	int raw_fd;
	uint64_t wait_ns;
	char *tbuf;
	size_t tlen;
	char tid_txt[16]; /* "tid<TAB>" of the truth lines (emu_truth_line) */
	uint8_t tid_len;
	uint8_t *buf;
	/* the box of the stream file (unit/emu_abi.h): buf and tbuf live in
	 * it when there is one (else they are malloc()ed) */
	struct hwt_emu_box *box;
	size_t box_sent;    /* packet bytes at buf already in the AUX ring (aux_out) */
	int tfd;	    /* the stream's own truth file (truthbox=1), else -1 */
	uint64_t truth_off; /* truth file offset of tbuf[0] */
	/* the block log (fastpath.c): tb_log appends at lpos up to lend */
	const struct emu_tb **lpos, **lend;
	struct emu_fp *fp;
	/* a sampling unit's per-thread state (pebs.c), freed with
	 * unit_free by emu_thr_free */
	void *unit;
	void (*unit_free)(void *unit);
	char spath[600]; /* the stream file, "" for none */
};

/* One translated block; immutable, never freed (threads keep pointers).
 * What the per-block hot paths read (tb_fast, fastpath.c's encode) comes
 * first, in one cache line when the block is 64-byte aligned (tb_trans). */
struct emu_tb {
	uint64_t start;
	/* emu_fp_tb: the next block's address is fa (not taken or
	 * fall-through) or fb (taken), ~0 for none; fbit: a Jcc (one TNT bit);
	 * fcall: push next on the RET compression stack; sigh: start's bit in
	 * the signal handler filter (emu_sig_hash) */
	uint64_t fa, fb, next;
	uint32_t n;
	uint16_t sigh;
	uint8_t fbit, fcall;
	uint8_t cls; /* enum emu_cls */
	uint8_t zero_call;
	uint64_t last, target;
};

enum emu_cls {
	EMU_OTHER,
	EMU_JCC,
	EMU_JMP,
	EMU_CALL,
	EMU_JMP_IND,
	EMU_CALL_IND,
	EMU_RET,
	EMU_KERNEL, /* syscall, int n, far transfers: leaves user mode */
};

static inline uint64_t emu_now(const struct emu_thr *t)
{
	return t->tbase + t->icount;
}

/* Publish a state in the box: a fatal signal may stop the thread (any
 * thread) between any two instructions; the recorder reads st[seq & 1]. */
static inline void emu_box_publish(struct hwt_emu_box *b, const struct hwt_emu_box_state *s)
{
	uint64_t n = b->seq + 1;
	b->st[n & 1] = *s;
	__atomic_store_n(&b->seq, n, __ATOMIC_RELEASE);
}

/* Publish the generator's pending state and the truth lines in the box
 * (after every callback that changed them, at block boundaries: the
 * truth and the trace at the same block). */
static inline void emu_box_sync(struct emu_thr *t)
{
	struct hwt_emu_box *b = t->box;
	if (b) {
		struct hwt_emu_box_state s;
		s.pkt_off = t->box_sent;
		s.pkt_len = t->g.len - t->box_sent;
		s.aux_base = t->ring.ctl->aux_head;
		s.tnt = t->g.tnt;
		s.ntnt = t->g.ntnt;
		s.end_ip = t->g.en && t->prev && !emu.bts ? t->prev->start : 0;
		s.truth_base = t->truth_off;
		s.truth_end = t->truth_off + t->tlen;
		emu_box_publish(b, &s);
	}
}

/* stream.c */
/* after the plugin's arguments: the exec() warning flag, the truth file,
 * the announce pipe moved to a high fd (who: the plugin's name for
 * messages); -1 when the truth file cannot be made (said on stderr) */
int emu_open_outputs(const char *who);
/* free a thread's state (not its stream mapping) */
void emu_thr_free(struct emu_thr *t);
struct emu_thr *emu_thr_new(int vcpu, pid_t ppid, pid_t ptid, int forked);
/* FORK (if fork_rec) and ITRACE_START records of a new stream */
void emu_thr_start_records(struct emu_thr *t, int fork_rec);
/* force: 0 only when above the flush threshold, else now */
void emu_thr_flush(struct emu_thr *t, int force);
void emu_thr_end(struct emu_thr *t, int exited);
void emu_truth_line(struct emu_thr *t, uint64_t from, uint64_t to, int async);
static inline void emu_truth(struct emu_thr *t, uint64_t from, uint64_t to, int async)
{
	if (emu.truth_fd >= 0)
		emu_truth_line(t, from, to, async);
}
void emu_truth_flush(struct emu_thr *t);
void emu_sb_mmap(struct emu_thr *t, uint64_t addr, uint64_t len, uint64_t pgoff, int prot,
		 int flags, const char *path, int fd);
void emu_sb_initial_maps(struct emu_thr *t);
/* The plugin arguments of the streams, the same for every plugin (the
 * recorder's lib/unit/emu_link.c writes them): dir, fd, raw, truth,
 * truthbox, aux, data, snapshot, st, trid, sbid.  emu_stream_arg: 1 when
 * k was one (into emu), else 0; emu_stream_check: -1 with a message
 * (who: the plugin's name) when the ring sizes are not powers of two of
 * at least a page. */
int emu_stream_arg(const char *k, const char *v);
int emu_stream_check(const char *who);
/* At the return of a system call (t->sys_args: its arguments), the
 * sideband of what it did: mmap's new mapping at addr (path: the mapped
 * file's name, or "//anon", "[stack]" with name_stack; cap >= 64),
 * mprotect's new executable range; and whether a clone (clone3: the
 * clone3 call) that returned 0 made a new process, not a thread. */
void emu_sys_mmapped(struct emu_thr *t, uint64_t addr, char *path, size_t cap, int name_stack);
void emu_sys_mprotected(struct emu_thr *t);
int emu_sys_forked(const struct emu_thr *t, int clone3);
/* a new thread's first sideband (COMM + maps for the main thread) */
void emu_thr_announce(struct emu_thr *t, int main_thread);
void emu_sb_comm(struct emu_thr *t, const char *comm, int exec);
/* fastpath.c: the block log and the encoder thread (no-ops with encoder=sync) */
struct emu_fp;
void emu_fp_tb(struct emu_tb *e);      /* at translation: the fa/fb fields */
int emu_fp_attach(struct emu_thr *t);  /* on t's thread, before its first block */
void emu_fp_full(struct emu_thr *t);   /* tb_log: the current chunk is full */
void emu_fp_sync(struct emu_thr *t);   /* on t's thread: every logged block encoded */
void emu_fp_detach(struct emu_thr *t); /* sync, then forget t's log */
void emu_fp_drop(struct emu_thr *t);   /* forked child: free a copied log */
void emu_fp_child(void);	       /* forked child: no encoder thread yet */
void emu_fp_stop(void);		       /* process exit: stop the encoder thread */
/* plugin.c: one block of thread t (the whole per-block work of encoder=sync) */
void emu_step1(struct emu_thr *t, const struct emu_tb *cur);
/* a whole record (PERF_RECORD_SAMPLE with its fields) into the data ring */
void emu_put_sample(struct emu_thr *t, const void *rec, size_t len);
/* plugin.c: the thread state of a vCPU (created on first use), NULL if none */
struct emu_thr *emu_thr_of(unsigned vcpu);
/* pebs.c (fmt=pebs): plugin arguments (1 taken, 0 not ours, -1 bad),
 * checks after parsing, per-TB memory callbacks, syscall results (data
 * mappings: mmap, brk) */
int pebs_arg(const char *k, const char *v);
int pebs_setup(void);
struct qemu_plugin_tb;
void pebs_tb_trans(struct qemu_plugin_tb *tb, const struct emu_tb *e);
void pebs_syscall_ret(struct emu_thr *t, int64_t num, int64_t ret);
/* exec.c: following exec() (see there) */
/* a plugin argument of exec.c's: 1 taken, 0 not ours, -1 bad */
int emu_exec_arg(const char *k, const char *v);
/* after the arguments: the plugin's machine (EM_X86_64, EM_AARCH64) */
void emu_exec_install(uint16_t machine);
/* 1 when this qemu continues a thread that called exec() */
int emu_exec_continued(void);
/* the COMM of a continued thread (NULL: the binary's basename) */
const char *emu_exec_comm(void);
/* the stream file a continued main thread goes on writing (once) */
const char *emu_exec_take_stream(void);
/* execve/execveat entry (after the thread's trace and truth are flushed):
 * does not return when the new program is followed */
void emu_exec_syscall(struct emu_thr *t, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
		      uint64_t a4, uint64_t a5);
/* plugin.c: a file was mapped executable (activates address filters). */
void emu_filter_mapped(const char *path, uint64_t addr, uint64_t len, uint64_t pgoff);

#endif /* HWT_EMU_EMU_H */
