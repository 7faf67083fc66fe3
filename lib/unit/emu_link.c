/* lib/unit/emu_link.c - the recorder's end of an emulated unit (see
 * emu_link.h): the announce pipe's lines, the stream files' mappings, the
 * qemu child. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwt/error.h"
#include "unit/emu_abi.h"
#include "unit/emu_link.h"
#include "unit/unit_int.h"

void hwt_emu_link_init(struct hwt_emu_link *l, size_t box_bytes)
{
	memset(l, 0, sizeof(*l));
	l->rfd = l->wfd = -1;
	l->child = -1;
	l->box_bytes = box_bytes;
}

void hwt_emu_ring_sizes(const struct hwt_session_config *cfg, uint64_t *aux, uint64_t *data)
{
	*aux = cfg->aux_bytes ? cfg->aux_bytes : 4 << 20;
	*data = cfg->data_bytes ? cfg->data_bytes : 512 << 10;
	if (*aux < 4096)
		*aux = 4096;
	if (*data < 4096)
		*data = 4096;
}

int hwt_emu_link_open(struct hwt_emu_link *l, struct hwt_session *s)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(l->dir, sizeof(l->dir), "%s/hwt-emu-XXXXXX", tmp);
	if (!mkdtemp(l->dir)) {
		hwt_session_set_err(s, "cannot create a temporary directory in %s: %s (set TMPDIR)",
				    tmp, strerror(errno));
		l->dir[0] = 0;
		return HWT_ERR_IO;
	}
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		hwt_session_set_err(s, "cannot create the emulated unit's pipe: %s",
				    strerror(errno));
		return HWT_ERR_IO;
	}
	l->rfd = pfd[0];
	l->wfd = pfd[1];
	return 0;
}

int hwt_emu_link_args(const struct hwt_emu_link *l, struct hwt_session *s, char *out, size_t cap)
{
	uint64_t aux, data;
	hwt_emu_ring_sizes(hwt_session_config(s), &aux, &data);
	return snprintf(out, cap,
			"dir=%s,fd=%d,st=%llu,trid=%d,sbid=%d,aux=%llu,data=%llu,snapshot=%d",
			l->dir, l->wfd, (unsigned long long)hwt_session_attr(s)->sample_type,
			HWT_EMU_ID_TRACE, HWT_EMU_ID_SIDEBAND, (unsigned long long)aux,
			(unsigned long long)data, hwt_session_config(s)->snapshot ? 1 : 0);
}

int hwt_emu_link_spawn(struct hwt_emu_link *l, struct hwt_session *s, char *const qv[],
		       int unset_ld_prefix, pid_t *pid)
{
	pid_t ch = fork();
	if (ch < 0) {
		hwt_session_set_err(s, "cannot start %s: fork: %s", qv[0], strerror(errno));
		return HWT_ERR_IO;
	}
	if (ch == 0) {
		fcntl(l->wfd, F_SETFD, 0); /* the plugin inherits the write end */
		if (unset_ld_prefix)
			unsetenv(
			    "QEMU_LD_PREFIX"); /* given as -L: the program's environment stays */
		execv(qv[0], qv);
		fprintf(stderr, "hwt: cannot run %s: %s\n", qv[0], strerror(errno));
		_exit(127);
	}
	close(l->wfd);
	l->wfd = -1;
	fcntl(l->rfd, F_SETFL, O_NONBLOCK);
	l->child = ch;
	*pid = ch;
	return 0;
}

/* "S pid tid ppid ptid path": map the stream file, add a session stream */
static void new_stream(struct hwt_emu_link *l, struct hwt_session *s, const char *line)
{
	int pid, tid, ppid, ptid, used = 0;
	if (sscanf(line, "S %d %d %d %d %n", &pid, &tid, &ppid, &ptid, &used) != 4 || !used)
		return;
	const char *path = line + used;
	const struct hwt_session_config *cfg = hwt_session_config(s);
	uint64_t aux, data;
	hwt_emu_ring_sizes(cfg, &aux, &data);
	size_t len = 4096 + data + aux + l->box_bytes;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	if (l->nmaps == l->capmaps) {
		size_t cap = l->capmaps ? 2 * l->capmaps : 16;
		struct hwt_emu_map *v = realloc(l->maps, cap * sizeof(*v));
		if (!v) {
			munmap(m, len);
			return;
		}
		l->maps = v;
		l->capmaps = cap;
	}
	struct hwt_stream *st = hwt_session_add_stream(s);
	if (!st) {
		munmap(m, len);
		return;
	}
	uint8_t *b = m;
	hwt_ring_attach(&st->ring, b, b + 4096, data, b + 4096 + data, aux, cfg->snapshot);
	st->pid = pid;
	st->tid = tid;
	st->cpu = -1;
	st->fd = -1;
	st->id = HWT_EMU_ID_TRACE;
	st->sb_id = HWT_EMU_ID_SIDEBAND;
	struct hwt_emu_map *em = &l->maps[l->nmaps++];
	em->st = st;
	em->map = m;
	em->len = len;
	em->box = l->box_bytes ? (struct hwt_emu_box *)(b + 4096 + data + aux) : NULL;
	snprintf(em->path, sizeof(em->path), "%s", path);
	st->unit_priv = em;
}

/* "E tid wait_ns": the newest stream of tid has all its data written */
static void end_stream(struct hwt_emu_link *l, const char *line)
{
	int tid;
	unsigned long long wait;
	if (sscanf(line, "E %d %llu", &tid, &wait) != 2)
		return;
	for (size_t i = l->nmaps; i-- > 0;)
		if (l->maps[i].st->tid == tid) {
			l->maps[i].st->wait_ns = wait;
			l->maps[i].st->hup = 1;
			break;
		}
}

int hwt_emu_link_poll(struct hwt_emu_link *l, struct hwt_session *s, int timeout_ms)
{
	if (!l->eof) {
		struct pollfd pf = {.fd = l->rfd, .events = POLLIN};
		(void)poll(&pf, 1, timeout_ms);
		for (;;) {
			ssize_t n = read(l->rfd, l->line + l->llen, sizeof(l->line) - 1 - l->llen);
			if (n == 0) {
				l->eof = 1;
				break;
			}
			if (n < 0)
				break;
			l->llen += (size_t)n;
			l->line[l->llen] = 0;
			char *nl;
			while ((nl = memchr(l->line, '\n', l->llen))) {
				*nl = 0;
				if (l->line[0] == 'S')
					new_stream(l, s, l->line);
				else if (l->line[0] == 'E')
					end_stream(l, l->line);
				size_t used = (size_t)(nl + 1 - l->line);
				memmove(l->line, nl + 1, l->llen - used);
				l->llen -= used;
			}
			if (l->llen == sizeof(l->line) - 1)
				l->llen = 0; /* garbage: drop */
		}
	} else if (!l->reaped && timeout_ms > 0) {
		struct timespec ts = {0, 1000000L * (timeout_ms < 20 ? timeout_ms : 20)};
		nanosleep(&ts, NULL);
	}
	if (!l->reaped && l->child > 0) {
		int st;
		pid_t w = waitpid(l->child, &st, l->eof ? 0 : WNOHANG);
		if (w == l->child) {
			l->reaped = 1;
			hwt_session_set_exit_status(s, st);
		}
	}
	return l->eof && l->reaped;
}

void hwt_emu_link_stop(struct hwt_emu_link *l)
{
	if (l->child > 0 && !l->reaped) {
		kill(l->child, SIGKILL);
		int st;
		waitpid(l->child, &st, 0);
		l->reaped = 1;
	}
}

void hwt_emu_link_free(struct hwt_emu_link *l, const char *prefix)
{
	for (size_t i = 0; i < l->nmaps; i++) {
		struct hwt_stream *st = l->maps[i].st;
		munmap(l->maps[i].map, l->maps[i].len);
		memset(&st->ring, 0, sizeof(st->ring));
		unlink(l->maps[i].path);
	}
	if (l->dir[0]) { /* also streams announced after the last poll */
		DIR *d = opendir(l->dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (strncmp(de->d_name, "s.", 2) &&
			    (!prefix || strncmp(de->d_name, prefix, strlen(prefix))))
				continue;
			char f[PATH_MAX + 300];
			snprintf(f, sizeof(f), "%s/%s", l->dir, de->d_name);
			unlink(f);
		}
		if (d)
			closedir(d);
		rmdir(l->dir);
		l->dir[0] = 0;
	}
	if (l->rfd >= 0)
		close(l->rfd);
	if (l->wfd >= 0)
		close(l->wfd);
	l->rfd = l->wfd = -1;
	free(l->maps);
	l->maps = NULL;
	l->nmaps = l->capmaps = 0;
}
