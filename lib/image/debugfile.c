/* lib/image/debugfile.c - separate debug files of an ELF file.
 *
 * Distributions strip binaries and ship their symbols and DWARF in
 * separate files: by build-id (/usr/lib/debug/.build-id/xx/yyyy.debug,
 * Debian's *-dbgsym and libc6-dbg), else by the .gnu_debuglink name, next
 * to the file, in its .debug/ folder, or under /usr/lib/debug/<folder>/.
 * The image's debug folders (hwt_image_set_debug_dirs: a -dbgsym package
 * unpacked somewhere, gdb's debug-file-directory) are searched like
 * /usr/lib/debug, before it, in their order.
 * img_debug_each opens the candidates in that order (one at a time, each
 * closed before the next; a candidate whose build-id differs from the
 * file's is skipped) until the callback takes one.  No state is kept.
 */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image_int.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

/* Offer the debug file at path to fn if it belongs to build-id bid
 * (nbid bytes; 0: unknown).  fn's answer, or 0. */
static int offer(const char *path, const void *bid, size_t nbid, img_debug_fn fn, void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int took = 0;
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		const void *id;
		ssize_t nid = dwelf_elf_gnu_build_id(elf, &id);
		if (!nbid || nid <= 0 || ((size_t)nid == nbid && !memcmp(id, bid, nbid)))
			took = fn(arg, elf);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return took;
}

/* The next folder of the colon-separated list at *dirs, then
 * /usr/lib/debug (*dirs NULL after it): its length and *dir, or -1 at the
 * end.  Empty entries are skipped. */
static int next_dir(const char **dirs, int *last, const char **dir)
{
	while (*dirs && **dirs) {
		const char *d = *dirs, *c = strchr(d, ':');
		int n = c ? (int)(c - d) : (int)strlen(d);
		*dirs = c ? c + 1 : NULL;
		if (n) {
			*dir = d;
			return n;
		}
	}
	*dirs = NULL;
	if (*last)
		return -1;
	*last = 1;
	*dir = SYSTEM_DEBUG_DIR;
	return (int)strlen(SYSTEM_DEBUG_DIR);
}

int img_debug_each(const char *dirs, const char *path, Elf *elf, img_debug_fn fn, void *arg)
{
	const void *bid = NULL;
	ssize_t nbid = dwelf_elf_gnu_build_id(elf, &bid);
	char buf[4096];
	const char *dir, *list = dirs;
	int dn, last = 0;
	if (nbid > 1 && nbid < 256)
		while ((dn = next_dir(&list, &last, &dir)) >= 0) {
			const uint8_t *p = bid;
			int n = snprintf(buf, sizeof(buf), "%.*s/.build-id/%02x/", dn, dir, p[0]);
			for (ssize_t i = 1; i < nbid && n > 0 && (size_t)n < sizeof(buf); i++)
				n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%02x", p[i]);
			if (n <= 0 || (size_t)n >= sizeof(buf) ||
			    (size_t)snprintf(buf + n, sizeof(buf) - (size_t)n, ".debug") >=
				sizeof(buf) - (size_t)n)
				continue;
			if (offer(buf, bid, (size_t)nbid, fn, arg))
				return 1;
		}
	GElf_Word crc;
	const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (!link || !*link || strchr(link, '/'))
		return 0;
	const char *slash = strrchr(path, '/');
	int flen = slash ? (int)(slash - path) : 1;
	const char *fdir = slash ? path : ".";
	const void *want = nbid > 0 ? bid : NULL;
	size_t nwant = nbid > 0 ? (size_t)nbid : 0;
	/* next to the file, in its .debug/ folder, then under each debug
	 * folder (absolute paths only) */
	static const char *const fmts[] = {"%.*s/%s", "%.*s/.debug/%s"};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		int n = snprintf(buf, sizeof(buf), fmts[i], flen, fdir, link);
		if (n <= 0 || (size_t)n >= sizeof(buf) || !strcmp(buf, path))
			continue;
		if (offer(buf, want, nwant, fn, arg))
			return 1;
	}
	if (fdir[0] != '/')
		return 0;
	list = dirs;
	last = 0;
	while ((dn = next_dir(&list, &last, &dir)) >= 0) {
		int n = snprintf(buf, sizeof(buf), "%.*s%.*s/%s", dn, dir, flen, fdir, link);
		if (n <= 0 || (size_t)n >= sizeof(buf) || !strcmp(buf, path))
			continue;
		if (offer(buf, want, nwant, fn, arg))
			return 1;
	}
	return 0;
}
