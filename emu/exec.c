/* emu/exec.c - the emulated units follow exec(): a program that a traced
 * program starts with execve/execveat is traced too, in the same process
 * (same pid) and in the same thread's stream, as perf shows an exec with a
 * hardware unit: a COMM record with PERF_RECORD_MISC_COMM_EXEC, the new
 * program's MMAP2 records, then its trace from its first instruction.
 * Shared by both plugins (qemu-x86_64 + PT/BTS, qemu-aarch64 + ETM).
 *
 * How: at the entry of execve/execveat (the plugin's syscall callback; the
 * plugin has already flushed the thread's trace and truth) we read the
 * path, argv and envp from guest memory (guest address + guest_base, read
 * with process_vm_readv so that a bad pointer cannot crash qemu), do what
 * the kernel would do to find the program (execveat's dirfd and flags,
 * `#!` lines up to 4 deep), and check that the kernel would run it and
 * that qemu can: a readable regular file with exec permission, an ELF of
 * the plugin's machine (or a `#!` script whose interpreter is one), not
 * setuid/setgid to someone else, no file capabilities.  Then qemu itself
 * is exec()ed (host execve: the process keeps its pid, parent and file
 * descriptors) with its own options (from /proc/self/cmdline), the guest
 * program, argv (argv[0] through qemu's -0) and the guest's envp as
 * qemu's environment, which qemu hands to the guest unchanged.  Our plugin
 * argument gets three more words: xtsc (the thread's time: the clock goes
 * on), xstream (the thread's stream file: the new plugin maps it again and
 * goes on writing where the old one stopped, with no new announcement, so
 * the recorder sees one stream) and xcomm (the kernel's new comm: the
 * basename of the path execve was given); fd= names the announce pipe
 * as it is now (kept open across the exec); the truth file is appended to.
 * qemu-aarch64 (the ETM plugin and its SPE mode) runs with a sysroot
 * (-L ROOT, kept with the other options): an absolute program path, and
 * a `#!` interpreter's, names the file under ROOT when there is one, as
 * qemu's open() finds it (qemu's own execve would run the host's file);
 * the new qemu loads that file (its MMAP2 records name it, a file the
 * decoders can open), with argv[0] and a script's argv naming the
 * programs as the guest does; --follow-exec globs match the guest's path.
 * An exec of /proc/self/exe runs the guest program again (qemu's own
 * execve does the same; the host's link names qemu).
 * When the program cannot be traced (another machine, setuid, unreadable)
 * the guest's exec goes on as qemu does it (the program runs natively,
 * untraced) after one warning naming it; when the checks say the exec
 * would fail, or the host execve of qemu fails, the guest's syscall runs
 * as usual and fails as it would have.  Options (plugin arguments):
 * nofollow=1 (no following: one warning per process tree, as before),
 * follow=GLOB (repeatable, %-encoded: follow only programs whose absolute
 * path matches one; the others run natively).
 * Limits: an exec from a thread other than the main one starts a new
 * stream for the process (the kernel gives the thread the pid as tid);
 * the process's other threads end without an EXIT record (qemu gets no
 * callback when the host exec ends them; the recorder appends their
 * boxes at the end); execveat of a file descriptor whose file has no path
 * (memfd, deleted) runs untraced.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "emu.h"
#include "qemu_plugin_api.h"

#define X_MAX_GLOBS 16
#define X_MAX_ARGS (1u << 16)	    /* argv + envp strings */
#define X_MAX_BYTES (8u << 20)	    /* their bytes */
#define X_MAX_DEPTH 4		    /* nested #! interpreters */
#define X_AT_EMPTY_PATH 0x1000	    /* linux/fcntl.h */
#define X_AT_SYMLINK_NOFOLLOW 0x100 /* linux/fcntl.h */

static struct {
	int off;
	char *globs[X_MAX_GLOBS];
	int nglobs;
	int cont;	  /* this qemu continues an exec()ing thread */
	char stream[600]; /* its stream file (taken once) */
	char comm[64];
	uint16_t machine;
	char qemu[PATH_MAX];
	char **opts; /* qemu's options, without -0/-E/-U */
	int nopts;
	int plugin_opt;	     /* index in opts of our -plugin value, -1 if unknown */
	const char *why_not; /* why following is impossible */
} X = {.plugin_opt = -1};

/* ---- %-encoding of plugin argument values (QEMU splits at ',') ---- */

static void pct_decode(const char *in, char *out, size_t outlen)
{
	size_t n = 0;
	while (*in && n + 1 < outlen) {
		unsigned v;
		if (in[0] == '%' && sscanf(in + 1, "%2x", &v) == 1) {
			out[n++] = (char)v;
			in += 3;
		} else {
			out[n++] = *in++;
		}
	}
	out[n] = 0;
}

static size_t pct_encode(const char *in, char *out, size_t outlen)
{
	size_t n = 0;
	for (const unsigned char *c = (const unsigned char *)in; *c; c++) {
		int plain = *c > 0x20 && *c < 0x7f && *c != ',' && *c != '%' && *c != '=';
		if (n + 4 >= outlen)
			break;
		n += plain ? (size_t)snprintf(out + n, outlen - n, "%c", *c)
			   : (size_t)snprintf(out + n, outlen - n, "%%%02x", *c);
	}
	if (outlen)
		out[n < outlen ? n : outlen - 1] = 0;
	return n;
}

int emu_exec_arg(const char *k, const char *v)
{
	char buf[4096];
	if (!strcmp(k, "nofollow")) {
		X.off = !!strtoul(v, NULL, 0);
	} else if (!strcmp(k, "follow")) {
		if (X.nglobs == X_MAX_GLOBS)
			return -1;
		pct_decode(v, buf, sizeof(buf));
		X.globs[X.nglobs] = strdup(buf);
		if (!X.globs[X.nglobs])
			return -1;
		X.nglobs++;
	} else if (!strcmp(k, "xtsc")) {
		emu.tsc0 = strtoull(v, NULL, 0);
		X.cont = 1;
	} else if (!strcmp(k, "xstream")) {
		pct_decode(v, X.stream, sizeof(X.stream));
		X.cont = 1;
	} else if (!strcmp(k, "xcomm")) {
		pct_decode(v, X.comm, sizeof(X.comm));
		X.cont = 1;
	} else {
		return 0;
	}
	return 1;
}

int emu_exec_continued(void)
{
	return X.cont;
}

const char *emu_exec_comm(void)
{
	return X.cont && X.comm[0] ? X.comm : NULL;
}

const char *emu_exec_take_stream(void)
{
	static int taken;
	if (taken || !X.stream[0])
		return NULL;
	taken = 1;
	return X.stream;
}

/* ---- qemu's own command line ---- */

/* qemu 7.2 linux-user options that take a value (qemu-x86_64 -h) */
static int opt_has_value(const char *o)
{
	static const char *const v[] = {"g",	   "L", "s",	"cpu",	 "E",	  "U",
					"0",	   "r", "B",	"R",	 "d",	  "D",
					"dfilter", "p", "seed", "trace", "plugin"};
	if (o[0] == '-')
		o++;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(o, v[i]))
			return 1;
	return 0;
}

/* Our -plugin value: "[file=]PATH[,args]" with PATH this very file. */
static int is_our_plugin(const char *val, const char *self)
{
	if (!strncmp(val, "file=", 5))
		val += 5;
	size_t n = strcspn(val, ",");
	char p[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	if (n >= sizeof(p))
		return 0;
	memcpy(p, val, n);
	p[n] = 0;
	return realpath(p, a) && realpath(self, b) && !strcmp(a, b);
}

void emu_exec_install(uint16_t machine)
{
	X.machine = machine;
	if (X.off)
		return;
	ssize_t n = readlink("/proc/self/exe", X.qemu, sizeof(X.qemu) - 1);
	if (n <= 0) {
		X.why_not = "cannot read /proc/self/exe";
		return;
	}
	X.qemu[n] = 0;
	Dl_info di;
	if (!dladdr((void *)emu_exec_install, &di) || !di.dli_fname) {
		X.why_not = "cannot find the plugin's own path";
		return;
	}
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		X.why_not = "cannot read /proc/self/cmdline";
		return;
	}
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	if (!buf) {
		X.why_not = "out of memory";
		return;
	}
	buf[len] = 0;
	size_t nargs = 0;
	for (size_t i = 0; i < len; i++)
		nargs += !buf[i];
	char **args = calloc(nargs + 1, sizeof(char *));
	X.opts = calloc(nargs + 1, sizeof(char *));
	if (!args || !X.opts) {
		free(args);
		free(buf);
		X.why_not = "out of memory";
		return;
	}
	size_t na = 0;
	for (size_t i = 0; i < len && na < nargs; i += strlen(buf + i) + 1)
		args[na++] = buf + i;
	/* options end at "--" or at the first word that is not an option */
	for (size_t i = 1; i < na;) {
		const char *a = args[i];
		if (!strcmp(a, "--") || a[0] != '-')
			break;
		int val = opt_has_value(a + 1) && i + 1 < na;
		const char *o = a[1] == '-' ? a + 2 : a + 1;
		int drop = !strcmp(o, "0") || !strcmp(o, "E") || !strcmp(o, "U");
		if (!drop) {
			X.opts[X.nopts++] = strdup(a);
			if (val) {
				if (!strcmp(o, "plugin") &&
				    is_our_plugin(args[i + 1], di.dli_fname))
					X.plugin_opt = X.nopts;
				X.opts[X.nopts++] = strdup(args[i + 1]);
			}
		}
		i += val ? 2 : 1;
	}
	free(args);
	free(buf);
	if (X.plugin_opt < 0)
		X.why_not = "the plugin is not given on qemu's command line (-plugin)";
}

/* ---- the guest's execve ---- */

static int guest_read(uint64_t addr, void *out, size_t n)
{
	struct iovec l = {out, n};
	struct iovec r = {(void *)(uintptr_t)(addr + (uint64_t)emu.guest_base), n};
	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* A NUL-terminated guest string (malloc()ed), NULL on a fault. */
static char *guest_str(uint64_t addr, size_t max)
{
	size_t cap = 256, len = 0;
	char *s = malloc(cap);
	while (s) {
		/* read up to the next page boundary at most */
		uint64_t a = addr + len;
		size_t chunk = 4096 - (size_t)((a + (uint64_t)emu.guest_base) & 4095);
		if (chunk > 256)
			chunk = 256;
		if (len + chunk + 1 > cap) {
			char *ns = realloc(s, cap * 2 + chunk);
			if (!ns)
				break;
			s = ns;
			cap = cap * 2 + chunk;
		}
		if (guest_read(a, s + len, chunk))
			break;
		char *z = memchr(s + len, 0, chunk);
		if (z)
			return s;
		len += chunk;
		if (len > max)
			break;
	}
	free(s);
	return NULL;
}

struct strv {
	char **v;
	size_t n, bytes;
};

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int strv_add(struct strv *s, const char *str)
{
	char **nv = realloc(s->v, (s->n + 2) * sizeof(char *));
	if (!nv)
		return -1;
	s->v = nv;
	if (!(s->v[s->n] = strdup(str)))
		return -1;
	s->n++;
	s->v[s->n] = NULL;
	return 0;
}

/* A guest char *[] (NULL-terminated); addr 0 is an empty vector. */
static int guest_strv(uint64_t addr, struct strv *out)
{
	memset(out, 0, sizeof(*out));
	out->v = calloc(1, sizeof(char *));
	if (!out->v)
		return -1;
	for (size_t i = 0; addr; i++) {
		uint64_t p;
		if (i >= X_MAX_ARGS || guest_read(addr + 8 * i, &p, 8))
			return -1;
		if (!p)
			break;
		char *s = guest_str(p, 128 * 1024);
		if (!s)
			return -1;
		out->bytes += strlen(s) + 1;
		int r = out->bytes > X_MAX_BYTES ? -1 : strv_add(out, s);
		free(s);
		if (r)
			return -1;
	}
	return 0;
}

static void warn_untraced(const char *path, const char *why)
{
	fprintf(stderr, "hwt: pid %d execs %s, which runs untraced: %s\n", (int)getpid(), path,
		why);
}

/* What the kernel would run: 1 follow (prog/argv set), 0 let the guest's
 * syscall run (exec fails, or a warning was printed). */
struct target {
	char prog[PATH_MAX]; /* the file qemu loads */
	struct strv argv;    /* the guest's argv[] (#! rewritten) */
	int set_argv0;	     /* argv[0] differs from prog: qemu -0 */
};

static const char *machine_name(uint16_t m)
{
	return m == EM_AARCH64 ? "aarch64" : m == EM_X86_64 ? "x86-64" : "this machine's";
}

/* Checks path as the kernel's exec would. 1: an ELF qemu runs, 2: a #!
 * script (interp/arg filled), 0: exec fails (silent), -1: untraceable
 * (warned). */
static int check_file(const char *path, const char *shown, char *interp, size_t ilen, char *iarg,
		      size_t alen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		if (errno == EACCES && !access(path, X_OK) && !stat(path, &st) &&
		    S_ISREG(st.st_mode)) {
			warn_untraced(shown, "it is not readable, so qemu cannot load it");
			return -1;
		}
		return 0;
	}
	unsigned char h[256] = {0};
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		n = pread(fd, h, sizeof(h) - 1, 0);
	if (n < 0 || faccessat(AT_FDCWD, path, X_OK, AT_EACCESS)) {
		close(fd);
		return 0;
	}
	int priv = ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
		   ((st.st_mode & S_ISGID) && st.st_gid != getegid()) ||
		   fgetxattr(fd, "security.capability", NULL, 0) > 0;
	if (n >= 2 && h[0] == '#' && h[1] == '!') {
		close(fd);
		char *l = (char *)h + 2, *nl = memchr(l, '\n', (size_t)n - 2);
		if (nl)
			*nl = 0;
		while (*l == ' ' || *l == '\t')
			l++;
		size_t e = strlen(l);
		while (e && (l[e - 1] == ' ' || l[e - 1] == '\t' || l[e - 1] == '\r'))
			l[--e] = 0;
		if (!*l)
			return 0;
		char *sp = strpbrk(l, " \t");
		iarg[0] = 0;
		if (sp) {
			*sp++ = 0;
			while (*sp == ' ' || *sp == '\t')
				sp++;
			snprintf(iarg, alen, "%s", sp);
		}
		snprintf(interp, ilen, "%s", l);
		return 2;
	}
	Elf64_Ehdr *eh = (Elf64_Ehdr *)h;
	if (n < (ssize_t)sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG)) {
		close(fd);
		return 0; /* ENOEXEC, unless binfmt_misc knows it: not ours */
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != X.machine ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)) {
		close(fd);
		char why[128];
		snprintf(why, sizeof(why), "not a 64-bit %s ELF program", machine_name(X.machine));
		warn_untraced(shown, why);
		return -1;
	}
	if (priv) {
		close(fd);
		warn_untraced(shown, "setuid, setgid or with file capabilities");
		return -1;
	}
	/* its interpreter must exist, else the kernel fails with ENOENT */
	int ok = 1;
	for (unsigned i = 0; i < eh->e_phnum && i < 256; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh->e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_INTERP || !ph.p_filesz || ph.p_filesz >= PATH_MAX)
			continue;
		char ip[PATH_MAX], rooted[PATH_MAX + 512];
		if (pread(fd, ip, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			break;
		ip[ph.p_filesz] = 0;
		snprintf(rooted, sizeof(rooted), "%s%s", emu.sysroot, ip);
		ok = !access(rooted, R_OK) || !access(ip, R_OK);
	}
	close(fd);
	return ok ? 1 : 0;
}

/* The file a guest path names as qemu opens it: an absolute path under
 * the -L prefix when the file is there (qemu's path(): an existence check
 * that follows links), else the path itself.  out is path when there is
 * no prefix (qemu-x86_64). */
static const char *sysroot_file(const char *path, char *out, size_t outlen)
{
	if (!emu.sysroot[0] || path[0] != '/')
		return path;
	int n = snprintf(out, outlen, "%s%s", emu.sysroot, path);
	return n > 0 && (size_t)n < outlen && !access(out, F_OK) ? out : path;
}

/* qemu runs its guest program for /proc/self/exe and /proc/<its pid>/exe
 * (the host's link names qemu itself) */
static const char *self_exe(const char *path)
{
	char mine[64];
	snprintf(mine, sizeof(mine), "/proc/%d/exe", (int)getpid());
	if (strcmp(path, "/proc/self/exe") && strcmp(path, mine))
		return NULL;
	return qemu_plugin_path_to_binary();
}

static int glob_ok(const char *abs)
{
	if (!X.nglobs)
		return 1;
	const char *base = strrchr(abs, '/');
	base = base ? base + 1 : abs;
	for (int i = 0; i < X.nglobs; i++)
		if (!fnmatch(X.globs[i], strchr(X.globs[i], '/') ? abs : base, 0))
			return 1;
	return 0;
}

/* path: the file to open; name: the program as the guest names it (in a
 * #! script's argv), path itself without a -L prefix. */
static int resolve(const char *path, const char *name, const struct strv *gargv, const char *shown,
		   struct target *tg)
{
	char interp[PATH_MAX], iarg[PATH_MAX], rooted[PATH_MAX + 512];
	char cur[PATH_MAX], curname[PATH_MAX];
	snprintf(cur, sizeof(cur), "%s", path);
	snprintf(curname, sizeof(curname), "%s", name);
	memset(&tg->argv, 0, sizeof(tg->argv));
	/* per #! level, the script and the interpreter's argument, pushed
	 * in reverse: argv = prog, then pre reversed, then argv[1..] */
	struct strv pre = {0};
	int r = 0;
	for (int depth = 0;; depth++) {
		r = check_file(cur, depth ? curname : shown, interp, sizeof(interp), iarg,
			       sizeof(iarg));
		if (r != 2)
			break;
		if (depth == X_MAX_DEPTH) {
			r = 0; /* ELOOP */
			break;
		}
		if (strv_add(&pre, curname) || (iarg[0] && strv_add(&pre, iarg))) {
			r = 0;
			break;
		}
		/* the interpreter as the guest names it, and its file */
		snprintf(curname, sizeof(curname), "%s", interp);
		snprintf(cur, sizeof(cur), "%s", sysroot_file(interp, rooted, sizeof(rooted)));
	}
	if (r != 1) {
		strv_free(&pre);
		return r;
	}
	snprintf(tg->prog, sizeof(tg->prog), "%s", cur);
	tg->argv.v = calloc(1, sizeof(char *));
	int bad = !tg->argv.v;
	if (pre.n && !bad)
		bad = strv_add(&tg->argv, curname);
	for (size_t i = pre.n; i-- > 0 && !bad;)
		bad = strv_add(&tg->argv, pre.v[i]);
	if (!pre.n && !bad && gargv->n)
		bad = strv_add(&tg->argv, gargv->v[0]);
	for (size_t i = 1; i < gargv->n && !bad; i++)
		bad = strv_add(&tg->argv, gargv->v[i]);
	/* qemu's argv[0] is the file it loads unless -0 says otherwise */
	tg->set_argv0 = (!pre.n && gargv->n) || (pre.n && strcmp(curname, cur));
	strv_free(&pre);
	if (bad) {
		strv_free(&tg->argv);
		return 0;
	}
	return 1;
}

/* The plugin argument of the new qemu: ours, without earlier x* words,
 * plus the continuation. */
static char *plugin_value(const struct emu_thr *t, const char *comm)
{
	const char *old = X.opts[X.plugin_opt];
	size_t cap = strlen(old) + 3 * (sizeof(X.stream) + 64) + 256;
	char *v = malloc(cap);
	if (!v)
		return NULL;
	size_t n = 0;
	for (const char *w = old; *w;) {
		size_t l = strcspn(w, ",");
		int x = !strncmp(w, "xtsc=", 5) || !strncmp(w, "xstream=", 8) ||
			!strncmp(w, "xcomm=", 6) || !strncmp(w, "fd=", 3);
		if (!x) {
			n += (size_t)snprintf(v + n, cap - n, "%s%.*s", n ? "," : "", (int)l, w);
		}
		w += l;
		if (*w == ',')
			w++;
	}
	/* the announce pipe as it is now (the plugin moved it out of the
	 * guest's way) */
	if (emu.announce_fd >= 0)
		n += (size_t)snprintf(v + n, cap - n, ",fd=%d", emu.announce_fd);
	n += (size_t)snprintf(v + n, cap - n, ",xtsc=%llu,xcomm=", (unsigned long long)emu_now(t));
	n += pct_encode(comm, v + n, cap - n);
	if (t->spath[0] && t->tid == t->pid && t->have_ring) {
		n += (size_t)snprintf(v + n, cap - n, ",xstream=");
		n += pct_encode(t->spath, v + n, cap - n);
	}
	return v;
}

void emu_exec_syscall(struct emu_thr *t, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
		      uint64_t a4, uint64_t a5)
{
	int at = num != 59 && num != 221; /* execve: x86-64 59, aarch64 221 */
	if (X.off) {
		if (emu.exec_warned && !__atomic_exchange_n(emu.exec_warned, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "hwt: pid %d calls exec(); the new program is not traced\n",
				(int)getpid());
		return;
	}
	uint64_t gpath = at ? a2 : a1, gargv = at ? a3 : a2, genv = at ? a4 : a3;
	int dirfd = at ? (int)a1 : AT_FDCWD, flags = at ? (int)a5 : 0;
	char *path = guest_str(gpath, PATH_MAX);
	struct strv argv = {0}, envp = {0};
	struct target tg = {0};
	char host[PATH_MAX], shown[PATH_MAX], comm[PATH_MAX];
	if (!path || guest_strv(gargv, &argv) || guest_strv(genv, &envp))
		goto out; /* EFAULT, E2BIG: the guest's syscall says so */
	/* the file as the host opens it, and the name the kernel gives it */
	char rooted[PATH_MAX + 512];
	const char *self = self_exe(path);
	if (self) {
		snprintf(host, sizeof(host), "%s", self);
		snprintf(comm, sizeof(comm), "exe");
	} else if (path[0] == '/' || (dirfd == AT_FDCWD && path[0])) {
		/* under qemu-aarch64's -L prefix when there, as qemu opens it */
		snprintf(host, sizeof(host), "%s", sysroot_file(path, rooted, sizeof(rooted)));
		const char *b = strrchr(path, '/');
		snprintf(comm, sizeof(comm), "%s", b ? b + 1 : path);
	} else {
		char l[64], dir[PATH_MAX];
		snprintf(l, sizeof(l), "/proc/self/fd/%d", dirfd);
		ssize_t n = dirfd >= 0 ? readlink(l, dir, sizeof(dir) - 1) : -1;
		if (n <= 0)
			goto out; /* EBADF / ENOENT */
		dir[n] = 0;
		if (!path[0] && !(flags & X_AT_EMPTY_PATH))
			goto out; /* ENOENT */
		if (dir[0] != '/' || strstr(dir, " (deleted)")) {
			warn_untraced(dir, "its file descriptor names no path qemu can open");
			goto out;
		}
		if (path[0])
			snprintf(host, sizeof(host), "%.2000s/%.2000s", dir, path);
		else
			snprintf(host, sizeof(host), "%s", dir);
		const char *b = strrchr(path, '/');
		if (path[0])
			snprintf(comm, sizeof(comm), "%s", b ? b + 1 : path);
		else
			snprintf(comm, sizeof(comm), "%d", dirfd);
	}
	if (flags & X_AT_SYMLINK_NOFOLLOW) {
		struct stat ls;
		if (!lstat(host, &ls) && S_ISLNK(ls.st_mode))
			goto out; /* ELOOP */
	}
	/* the program as the guest names it (its path under the -L prefix) */
	int in_root = path[0] == '/' && strcmp(host, path);
	snprintf(shown, sizeof(shown), "%s", in_root ? path : host);
	if (shown[0] != '/') {
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd)))
			snprintf(shown, sizeof(shown), "%.2000s/%.2000s", cwd, host);
	}
	if (!glob_ok(shown))
		goto out;
	if (X.why_not) {
		warn_untraced(shown, X.why_not);
		goto out;
	}
	if (resolve(host, in_root ? path : host, &argv, shown, &tg) != 1)
		goto out;
	/* qemu OPTS -plugin ours+x* [-0 ARGV0] -- PROG ARGS */
	char **qv = calloc((size_t)X.nopts + tg.argv.n + 8, sizeof(char *));
	char *pv = plugin_value(t, comm);
	if (!qv || !pv) {
		free(qv);
		free(pv);
		goto out;
	}
	size_t k = 0;
	qv[k++] = X.qemu;
	for (int i = 0; i < X.nopts; i++)
		qv[k++] = i == X.plugin_opt ? pv : X.opts[i];
	if (tg.set_argv0) {
		qv[k++] = "-0";
		qv[k++] = tg.argv.v[0];
	}
	qv[k++] = "--";
	qv[k++] = tg.prog;
	for (size_t i = 1; i < tg.argv.n; i++)
		qv[k++] = tg.argv.v[i];
	qv[k] = NULL;
	if (emu.announce_fd >= 0)
		fcntl(emu.announce_fd, F_SETFD, 0);
	execve(X.qemu, qv, envp.v);
	int e = errno;
	if (emu.announce_fd >= 0)
		fcntl(emu.announce_fd, F_SETFD, FD_CLOEXEC);
	char why[600];
	snprintf(why, sizeof(why), "cannot run %.400s: %s", X.qemu, strerror(e));
	warn_untraced(shown, why);
	free(qv);
	free(pv);
out:
	free(path);
	strv_free(&argv);
	strv_free(&envp);
	strv_free(&tg.argv);
}
