/* emu/stream.c - per-thread output of the emulated Intel PT unit.
 *
 * Each guest thread owns one stream: a file <dir>/s.<tid> holding a perf
 * control page, a data ring (sideband records) and an AUX ring (trace
 * bytes) in the perf mmap layout, produced through hwt/ring.h.  The
 * recorder learns about it from a line on the announce pipe:
 *   "S <pid> <tid> <ppid> <ptid> <path>\n"   stream created
 *   "E <tid> <wait_ns>\n"                    stream finished (all data written)
 * Lines are shorter than PIPE_BUF, so writes from several threads and
 * forked children never interleave.  Full mode waits (sleeps) while the
 * AUX or data ring has no room; overwrite (snapshot) mode never waits.
 * Also: raw PT per thread (<raw>.<tid>, debugging) and the truth file.
 * The file ends with the thread's box (unit/emu_abi.h): the packet and
 * truth buffers live there, their state published after every callback,
 * so that the recorder can finish the stream of a thread a fatal signal
 * killed (QEMU calls no plugin callback then).  With truthbox=1 (the
 * recorder) the thread's truth goes to its stream's own file,
 * <stream>.truth, so that the recorder knows how much of the box's truth
 * reached it (see emu_abi.h); else every thread appends to truth=FILE.
 * Ownership: the thread's buffers and mapping are freed by emu_thr_end.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "emu.h"
#include "qemu_plugin_api.h"
#include "hwt/perf_records.h"

static void write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		c += w;
		n -= (size_t)w;
	}
}

static void nap(struct emu_thr *t)
{
	struct timespec ts = {0, 50000};
	nanosleep(&ts, NULL);
	t->wait_ns += 50000;
}

/* Append the sample_id trailer selected by emu.sample_type. */
static size_t trailer(uint8_t *p, const struct emu_thr *t, uint64_t id)
{
	size_t n = 0;
	uint64_t st = emu.sample_type;
	if (st & PERF_SAMPLE_TID) {
		uint32_t v[2] = {(uint32_t)t->pid, (uint32_t)t->tid};
		memcpy(p + n, v, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		uint64_t v = emu_now(t);
		memcpy(p + n, &v, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		memcpy(p + n, &id, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		memcpy(p + n, &id, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		uint32_t v[2] = {0, 0};
		memcpy(p + n, v, 8);
		n += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		memcpy(p + n, &id, 8);
		n += 8;
	}
	return n;
}

/* rec: fixed part of fixed bytes; tail: optional string (padded to 8). */
static void put_record_id(struct emu_thr *t, const void *fixed, size_t fixed_len, const char *str,
			  uint64_t id)
{
	if (!t->have_ring)
		return;
	uint8_t rec[4096 + 128];
	size_t n = fixed_len;
	memcpy(rec, fixed, fixed_len);
	if (str) {
		size_t l = strlen(str);
		if (l > 4000)
			l = 4000;
		memcpy(rec + n, str, l);
		size_t padded = (l + 1 + 7) & ~(size_t)7;
		memset(rec + n + l, 0, padded - l);
		n += padded;
	}
	n += trailer(rec + n, t, id);
	struct perf_event_header *h = (void *)rec;
	h->size = (uint16_t)n;
	while (hwt_ring_write_record(&t->ring, h) == HWT_ERR_AGAIN) {
		if (emu.snapshot && t->ring.data_size < n)
			return;
		nap(t);
	}
}

static void put_record(struct emu_thr *t, const void *fixed, size_t fixed_len, const char *str)
{
	const struct perf_event_header *h = fixed;
	int trace = h->type == PERF_RECORD_AUX || h->type == PERF_RECORD_ITRACE_START;
	put_record_id(t, fixed, fixed_len, str, trace ? emu.sample_id : emu.sb_id);
}

void emu_put_sample(struct emu_thr *t, const void *rec, size_t len)
{
	const struct perf_event_header *h = rec;
	if (!t->have_ring || len != h->size)
		return;
	while (hwt_ring_write_record(&t->ring, h) == HWT_ERR_AGAIN) {
		if (emu.snapshot && t->ring.data_size < len)
			return;
		nap(t);
	}
}

static void announce(const char *line)
{
	if (emu.announce_fd >= 0)
		write_all(emu.announce_fd, line, strlen(line));
}

/* The box of a mapped stream (t->map), and with truthbox=1 the stream's
 * truth file (appended to when an exec() continues the stream). */
static void box_init(struct emu_thr *t, int cont)
{
	if (emu.truth_box && emu.truth_fd >= 0) {
		char p[620];
		struct stat sb;
		snprintf(p, sizeof(p), "%s.truth", t->spath);
		t->tfd =
		    open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (cont ? 0 : O_TRUNC), 0600);
		if (t->tfd >= 0 && fstat(t->tfd, &sb) == 0)
			t->truth_off = (uint64_t)sb.st_size;
	}
	t->box = (struct hwt_emu_box *)((uint8_t *)t->map + 4096 + emu.data_size + emu.aux_size);
	struct hwt_emu_box_state st = {0};
	st.aux_base = t->ring.ctl->aux_head;
	st.truth_base = st.truth_end = t->truth_off;
	t->box->seq = 0;
	t->box->st[0] = st;
	__atomic_store_n(&t->box->magic, HWT_EMU_BOX_MAGIC, __ATOMIC_RELEASE);
}

static int open_ring(struct emu_thr *t)
{
	char path[600];
	size_t len = 4096 + emu.data_size + emu.aux_size + HWT_EMU_BOX_BYTES;
	/* a program exec() started goes on in its thread's stream (exec.c) */
	const char *cont = emu_exec_take_stream();
	int fd = cont ? open(cont, O_RDWR | O_CLOEXEC) : -1;
	struct stat sb;
	if (fd >= 0 && (fstat(fd, &sb) || (size_t)sb.st_size != len)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		snprintf(path, sizeof(path), "%s", cont);
	} else {
		/* a new file: s.<tid>, or s.<tid>.<n> when an exec() left one */
		snprintf(path, sizeof(path), "%s/s.%d", emu.dir, (int)t->tid);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		for (int i = 1; fd < 0 && errno == EEXIST && i < 1000; i++) {
			snprintf(path, sizeof(path), "%s/s.%d.%d", emu.dir, (int)t->tid, i);
			fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		}
		if (fd < 0)
			return -1;
		if (ftruncate(fd, (off_t)len) < 0) {
			close(fd);
			return -1;
		}
		cont = NULL;
	}
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	snprintf(t->spath, sizeof(t->spath), "%s", path);
	if (cont) {
		uint8_t *b = m;
		hwt_ring_attach(&t->ring, b, b + 4096, emu.data_size, b + 4096 + emu.data_size,
				emu.aux_size, emu.snapshot);
		t->map = m;
		t->map_len = len;
		t->have_ring = 1;
		box_init(t, 1);
		return 0; /* the recorder has it already */
	}
	uint8_t *b = m;
	if (hwt_ring_init_producer(&t->ring, b, b + 4096, emu.data_size, b + 4096 + emu.data_size,
				   emu.aux_size, emu.snapshot) < 0) {
		munmap(m, len);
		return -1;
	}
	/* time conversion as the kernel publishes it: 1 TSC tick = 1 ns */
	t->ring.ctl->cap_user_time_zero = 1;
	t->ring.ctl->time_shift = 0;
	t->ring.ctl->time_mult = 1;
	t->ring.ctl->time_zero = 0;
	t->map = m;
	t->map_len = len;
	t->have_ring = 1;
	box_init(t, 0);
	char line[800];
	snprintf(line, sizeof(line), "S %d %d %d %d %s\n", (int)t->pid, (int)t->tid, (int)t->ppid,
		 (int)t->ptid, path);
	announce(line);
	return 0;
}

struct emu_thr *emu_thr_new(int vcpu, pid_t ppid, pid_t ptid, int forked)
{
	struct emu_thr *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->vcpu = vcpu;
	t->pid = getpid();
	t->tid = (pid_t)syscall(SYS_gettid);
	t->ppid = ppid;
	t->ptid = ptid;
	t->raw_fd = -1;
	t->sfd = -1;
	t->tfd = -1;
	if (emu.raw[0]) {
		char path[600];
		snprintf(path, sizeof(path), "%s.%d.%d", emu.raw, (int)t->pid, (int)t->tid);
		t->raw_fd = open(path,
				 O_WRONLY | O_CREAT | O_CLOEXEC |
				     (emu_exec_continued() ? O_APPEND : O_TRUNC),
				 0600);
		snprintf(path, sizeof(path), "%s.tasks", emu.raw);
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (fd >= 0) {
			char line[96];
			int n = snprintf(line, sizeof(line), "%d %d %d %d\n", (int)t->pid,
					 (int)t->tid, (int)ppid, (int)ptid);
			write_all(fd, line, (size_t)n);
			close(fd);
		}
	}
	if (emu.dir[0])
		open_ring(t);
	if (t->box) {
		t->buf = (uint8_t *)t->box + HWT_EMU_BOX_HDR;
		t->tbuf = (char *)t->box + HWT_EMU_BOX_HDR + HWT_EMU_BOX_PKT;
	} else {
		t->buf = malloc(EMU_BUF_SIZE);
		t->tbuf = malloc(EMU_TRUTH_BUF);
	}
	if (!t->buf || !t->tbuf) {
		if (t->have_ring)
			munmap(t->map, t->map_len);
		if (t->raw_fd >= 0)
			close(t->raw_fd);
		t->box = NULL;
		emu_thr_free(t);
		return NULL;
	}
	(void)forked;
	return t;
}

void emu_thr_free(struct emu_thr *t)
{
	if (t->unit && t->unit_free)
		t->unit_free(t->unit);
	if (t->tfd >= 0)
		close(t->tfd);
	if (!t->box) {
		free(t->buf);
		free(t->tbuf);
	}
	free(t);
}

/* A FORK or EXIT record of thread t (parent / exiting pid and tid as
 * given), stamped now. */
static void put_task(struct emu_thr *t, uint32_t type, pid_t ppid, pid_t ptid)
{
	struct hwt_perf_rec_fork r = {.header = {.type = type}};
	r.pid = (uint32_t)t->pid;
	r.ppid = (uint32_t)ppid;
	r.tid = (uint32_t)t->tid;
	r.ptid = (uint32_t)ptid;
	r.time = emu_now(t);
	put_record(t, &r, sizeof(r), NULL);
}

void emu_thr_start_records(struct emu_thr *t, int fork_rec)
{
	if (fork_rec)
		put_task(t, PERF_RECORD_FORK, t->ppid, t->ptid);
	struct hwt_perf_rec_itrace_start it = {.header = {.type = PERF_RECORD_ITRACE_START}};
	it.pid = (uint32_t)t->pid;
	it.tid = (uint32_t)t->tid;
	put_record(t, &it, sizeof(it), NULL);
}

void emu_sb_comm(struct emu_thr *t, const char *comm, int exec)
{
	struct hwt_perf_rec_comm r = {.header = {.type = PERF_RECORD_COMM}};
	r.header.misc = exec ? PERF_RECORD_MISC_COMM_EXEC : 0;
	r.pid = (uint32_t)t->pid;
	r.tid = (uint32_t)t->tid;
	char c[16];
	snprintf(c, sizeof(c), "%s", comm);
	put_record(t, &r, sizeof(r), c);
}

void emu_sb_mmap(struct emu_thr *t, uint64_t addr, uint64_t len, uint64_t pgoff, int prot,
		 int flags, const char *path, int fd)
{
	struct hwt_perf_rec_mmap2 r = {.header = {.type = PERF_RECORD_MMAP2}};
	struct stat st;
	int ok = fd >= 0 ? fstat(fd, &st) == 0 : (path && stat(path, &st) == 0);
	r.pid = (uint32_t)t->pid;
	r.tid = (uint32_t)t->tid;
	r.addr = addr;
	r.len = len;
	r.pgoff = pgoff;
	if (ok) {
		r.maj = major(st.st_dev);
		r.min = minor(st.st_dev);
		r.ino = st.st_ino;
	}
	r.prot = (uint32_t)prot;
	r.flags = (uint32_t)flags;
	put_record(t, &r, sizeof(r), path ? path : "//anon");
	if (path && path[0] == '/')
		emu_filter_mapped(path, addr, len, pgoff);
	if (emu.raw[0] && path && path[0] == '/') { /* debug: the image, for checkers */
		char mp[600], line[4300];
		snprintf(mp, sizeof(mp), "%s.maps", emu.raw);
		int mfd = open(mp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (mfd >= 0) {
			int n = snprintf(line, sizeof(line), "%d 0x%llx 0x%llx 0x%llx %s\n",
					 (int)t->pid, (unsigned long long)addr,
					 (unsigned long long)len, (unsigned long long)pgoff, path);
			if (n > 0 && (size_t)n < sizeof(line))
				write_all(mfd, line, (size_t)n);
			close(mfd);
		}
	}
}

int emu_stream_arg(const char *k, const char *v)
{
	unsigned long long n = strtoull(v, NULL, 0);
	if (!strcmp(k, "dir"))
		snprintf(emu.dir, sizeof(emu.dir), "%s", v);
	else if (!strcmp(k, "fd"))
		emu.announce_fd = (int)n;
	else if (!strcmp(k, "raw"))
		snprintf(emu.raw, sizeof(emu.raw), "%s", v);
	else if (!strcmp(k, "truth"))
		snprintf(emu.truth, sizeof(emu.truth), "%s", v);
	else if (!strcmp(k, "truthbox")) /* the recorder joins per-stream files */
		emu.truth_box = !!n;
	else if (!strcmp(k, "aux"))
		emu.aux_size = n;
	else if (!strcmp(k, "data"))
		emu.data_size = n;
	else if (!strcmp(k, "snapshot"))
		emu.snapshot = !!n;
	else if (!strcmp(k, "st"))
		emu.sample_type = n;
	else if (!strcmp(k, "trid"))
		emu.sample_id = n;
	else if (!strcmp(k, "sbid"))
		emu.sb_id = n;
	else
		return 0;
	return 1;
}

int emu_stream_check(const char *who)
{
	if (emu.aux_size & (emu.aux_size - 1) || emu.aux_size < 4096 ||
	    emu.data_size & (emu.data_size - 1) || emu.data_size < 4096) {
		fprintf(stderr, "%s: aux/data sizes must be powers of two >= 4096\n", who);
		return -1;
	}
	return 0;
}

void emu_sys_mmapped(struct emu_thr *t, uint64_t addr, char *path, size_t cap, int name_stack)
{
	const uint64_t *a = t->sys_args; /* addr, len, prot, flags, fd, offset */
	int fd = (int)a[4];
	snprintf(path, cap, "//anon");
	if (!(a[3] & MAP_ANONYMOUS) && fd >= 0) {
		char l[64];
		snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(l, path, cap - 1);
		path[n > 0 ? n : 0] = 0;
	} else {
		fd = -1;
		if (name_stack && (a[3] & MAP_STACK))
			snprintf(path, cap, "[stack]");
	}
	emu_sb_mmap(t, addr, a[1], fd >= 0 ? a[5] : 0, (int)a[2], (int)a[3], path, fd);
}

void emu_sys_mprotected(struct emu_thr *t)
{
	emu_sb_mmap(t, t->sys_args[0], t->sys_args[1], 0, (int)t->sys_args[2],
		    MAP_PRIVATE | MAP_ANONYMOUS, "//anon", -1);
}

int emu_sys_forked(const struct emu_thr *t, int clone3)
{
	uint64_t fl = t->sys_args[0];
	if (clone3) { /* struct clone_args in guest memory; its first field: the flags */
		if (!fl)
			return 0;
		fl = *(const uint64_t *)(uintptr_t)(fl + (uint64_t)emu.guest_base);
	}
	return !(fl & CLONE_THREAD);
}

/* PT_INTERP of an ELF file (out, or "") and its executable PT_LOADs. */
struct elf_info {
	char interp[1024];
	uint64_t first_vaddr; /* lowest PT_LOAD vaddr, page aligned */
	int nx;
	uint64_t xv[8], xlen[8], xoff[8];
};

static int elf_read(const char *path, struct elf_info *ei)
{
	memset(ei, 0, sizeof(*ei));
	ei->first_vaddr = UINT64_MAX;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return -1;
	}
	for (unsigned i = 0; i < eh.e_phnum && i < 128; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP && ph.p_filesz < sizeof(ei->interp)) {
			if (pread(fd, ei->interp, ph.p_filesz, (off_t)ph.p_offset) !=
			    (ssize_t)ph.p_filesz)
				ei->interp[0] = 0;
			ei->interp[ph.p_filesz] = 0;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		uint64_t v = ph.p_vaddr & ~0xfffull;
		if (v < ei->first_vaddr)
			ei->first_vaddr = v;
		if ((ph.p_flags & PF_X) && ei->nx < 8) {
			ei->xv[ei->nx] = v;
			ei->xlen[ei->nx] = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull) - v;
			ei->xoff[ei->nx] = ph.p_offset & ~0xfffull;
			ei->nx++;
		}
	}
	close(fd);
	return 0;
}

/* The guest load address of path: its offset-0 mapping that is not the
 * host's own copy (qemu's dynamic loader is the same file as the guest's). */
static int guest_load_base(const char *path, uint64_t *base)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	uint64_t host_ld = getauxval(AT_BASE);
	char line[4600];
	int found = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perm[8], p[4200];
		p[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4199[^\n]", &lo, &hi, perm, &off, p) < 5)
			continue;
		if (off || strcmp(p, path) || lo == host_ld)
			continue;
		*base = (uint64_t)((int64_t)lo - emu.guest_base);
		found = 0;
		break;
	}
	fclose(f);
	return found;
}

static void initial_file(struct emu_thr *t, const char *path, struct elf_info *ei)
{
	uint64_t base;
	if (guest_load_base(path, &base) < 0)
		return;
	uint64_t bias = base - ei->first_vaddr;
	for (int i = 0; i < ei->nx; i++)
		emu_sb_mmap(t, bias + ei->xv[i], ei->xlen[i], ei->xoff[i], PROT_READ | PROT_EXEC,
			    MAP_PRIVATE, path, -1);
}

void emu_sb_initial_maps(struct emu_thr *t)
{
	const char *exe = qemu_plugin_path_to_binary();
	char exe_real[4096], interp_real[4096];
	struct elf_info ei, ii;
	if (!exe || !realpath(exe, exe_real) || elf_read(exe_real, &ei) < 0)
		return;
	initial_file(t, exe_real, &ei);
	/* the interpreter as qemu opened it: under the -L prefix if there */
	char rooted[4096 + 512];
	snprintf(rooted, sizeof(rooted), "%s%s", emu.sysroot, ei.interp);
	if (ei.interp[0] && emu.sysroot[0] && realpath(rooted, interp_real) &&
	    elf_read(interp_real, &ii) == 0)
		initial_file(t, interp_real, &ii);
	else if (ei.interp[0] && realpath(ei.interp, interp_real) &&
		 elf_read(interp_real, &ii) == 0)
		initial_file(t, interp_real, &ii);
}

static char *hex(char *p, uint64_t v)
{
	static const char dig[] = "0123456789abcdef";
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = dig[v & 15];
		v >>= 4;
	} while (v);
	*p++ = '0';
	*p++ = 'x';
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* The truth buffer out.  The published state is not changed but for the
 * buffer's file offset: lines written ahead of it (this block's, say)
 * are cut off again by the recorder if the thread dies before the next
 * emu_box_sync. */
void emu_truth_flush(struct emu_thr *t)
{
	if (!t->tlen)
		return;
	int fd = t->tfd >= 0 ? t->tfd : emu.truth_fd;
	if (fd >= 0)
		write_all(fd, t->tbuf, t->tlen);
	t->truth_off += t->tlen;
	t->tlen = 0;
	if (t->box) {
		struct hwt_emu_box_state st = t->box->st[t->box->seq & 1];
		st.truth_base = t->truth_off;
		emu_box_publish(t->box, &st);
	}
}

void emu_truth_line(struct emu_thr *t, uint64_t from, uint64_t to, int async)
{
	if (t->tlen > EMU_TRUTH_BUF - 128)
		emu_truth_flush(t);
	char *p = t->tbuf + t->tlen;
	if (!t->tid_len) /* the line's "tid<TAB>", once */
		t->tid_len = (uint8_t)snprintf(t->tid_txt, sizeof(t->tid_txt), "%d\t", (int)t->tid);
	memcpy(p, t->tid_txt, t->tid_len);
	p += t->tid_len;
	p = hex(p, from);
	*p++ = '\t';
	p = hex(p, to);
	if (async) {
		memcpy(p, "\tasync", 6);
		p += 6;
	}
	*p++ = '\n';
	t->tlen = (size_t)(p - t->tbuf);
	/* the truth's end is published with the packets (emu_box_sync): a
	 * thread that dies leaves the truth and the trace at one block */
}

/* The first n pending bytes of the generator into the AUX ring, then out
 * of the generator.  The box says after every piece how much of the
 * buffer the ring has (box_sent): a thread killed at any point, also
 * while it waits for room, leaves the recorder exactly what the ring does
 * not have yet. */
static void aux_out(struct emu_thr *t, size_t n)
{
	size_t done = 0;
	while (done < n) {
		size_t left = n - done;
		uint64_t space = hwt_ring_aux_space(&t->ring);
		/* whole pieces (packet boundaries) unless larger than the ring */
		if (!space || (space < left && left <= t->ring.aux_size && !emu.snapshot)) {
			nap(t);
			continue;
		}
		size_t chunk = left < space ? left : (size_t)space;
		uint64_t off = t->ring.ctl->aux_head;
		hwt_ring_aux_write(&t->ring, t->g.buf + done, chunk);
		if (!emu.snapshot) {
			struct hwt_perf_rec_aux r = {.header = {.type = PERF_RECORD_AUX}};
			r.aux_offset = off;
			r.aux_size = chunk;
			r.flags = emu.aux_flags;
			put_record(t, &r, sizeof(r), NULL);
		}
		done += chunk;
		t->box_sent = done;
		emu_box_sync(t);
	}
	ptg_consume(&t->g, n);
	t->box_sent = 0;
	emu_box_sync(t);
}

void emu_thr_flush(struct emu_thr *t, int force)
{
	size_t n = ptg_pending(&t->g);
	if (!n || (!force && n < emu.flush_at))
		return;
	if (emu.bts) { /* BTS: each piece ends with a zero record (btsgen.h) */
		btg_end_piece(&t->g);
		n = ptg_pending(&t->g);
	}
	/* Each AUX piece ends at a packet boundary and is a multiple of 8
	 * bytes (PAD packets fill up, as hardware pads): perf.data pads every
	 * AUXTRACE payload to 8 with zeros that decoders read as stream
	 * bytes, and perf 6.1 does not join a packet split between two
	 * AUXTRACE records. */
	size_t pad = (8 - (n & 7)) & 7;
	if (pad && t->g.cap - t->g.len >= pad) {
		memset(t->g.buf + t->g.len, 0, pad);
		t->g.len += pad;
		n += pad;
	}
	(void)force;
	if (t->raw_fd >= 0)
		write_all(t->raw_fd, t->g.buf, n);
	if (t->have_ring)
		aux_out(t, n);
	else
		ptg_consume(&t->g, n);
	emu_box_sync(t);
}

void emu_thr_end(struct emu_thr *t, int exited)
{
	ptg_flush_tnt(&t->g);
	emu_thr_flush(t, 2);
	emu_truth_flush(t);
	if (t->tfd >= 0)
		close(t->tfd);
	t->tfd = -1;
	if (exited && t->have_ring)
		put_task(t, PERF_RECORD_EXIT, t->pid, t->tid);
	if (t->have_ring) {
		char line[64];
		snprintf(line, sizeof(line), "E %d %llu\n", (int)t->tid,
			 (unsigned long long)t->wait_ns);
		munmap(t->map, t->map_len);
		t->have_ring = 0;
		t->box = NULL; /* buf and tbuf were in it: the thread is done */
		t->buf = NULL;
		t->tbuf = NULL;
		announce(line);
	}
	if (t->raw_fd >= 0)
		close(t->raw_fd);
	t->raw_fd = -1;
}

/* A new thread's first sideband: the main thread's COMM (the binary's
 * name, or the name exec() gave it) and initial mappings, then its start
 * records (none for a program exec() started: its stream goes on);
 * another thread only its start records. */
void emu_thr_announce(struct emu_thr *t, int main_thread)
{
	if (main_thread) {
		const char *exe = qemu_plugin_path_to_binary();
		const char *base = exe ? strrchr(exe, '/') : NULL;
		const char *comm = emu_exec_comm();
		emu_sb_comm(t, comm ? comm : base ? base + 1 : (exe ? exe : "?"), 1);
		emu_sb_initial_maps(t);
		if (emu_exec_continued())
			return;
	}
	emu_thr_start_records(t, !main_thread);
}

int emu_open_outputs(const char *who)
{
	/* one warning about exec() for the whole process tree (forks share it) */
	void *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	emu.exec_warned = sh == MAP_FAILED ? NULL : sh;
	if (emu.truth[0]) {
		emu.truth_fd = open(emu.truth,
				    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
					(emu_exec_continued() ? 0 : O_TRUNC),
				    0644);
		if (emu.truth_fd < 0) {
			fprintf(
			    stderr,
			    "%s: cannot create %s: %s (check the folder exists and is writable)\n",
			    who, emu.truth, strerror(errno));
			return -1;
		}
	}
	if (emu.announce_fd >= 0) {
		/* out of the guest's way (programs close or reuse low fds) */
		int hi = fcntl(emu.announce_fd, F_DUPFD_CLOEXEC, 900);
		if (hi >= 0) {
			close(emu.announce_fd);
			emu.announce_fd = hi;
		} else {
			fcntl(emu.announce_fd, F_SETFD, FD_CLOEXEC);
		}
	}
	return 0;
}
