/* lib/decode/vdso.c - the vdso of a recording: "hwt record" saves the running
 * vdso into perf's build-id cache and names its build-id in the file's
 * HEADER_BUILD_ID feature; "hwt script" loads it back from there for the
 * [vdso] mappings of the MMAP2 records.
 *
 * The vdso is read from this process's own mapping (AT_SYSINFO_EHDR; its
 * extent from /proc/self/maps): the kernel maps the same vdso into every
 * process.  The cache layout is perf's: DIR/[vdso]/<build-id>/vdso, DIR
 * from PERF_BUILDID_DIR or $HOME/.debug.  The build-id is read from the
 * ELF image's PT_NOTE segments (ELF gABI: note header namesz, descsz,
 * type; name and desc padded to 4 bytes; GNU build-id: name "GNU", type
 * NT_GNU_BUILD_ID).  No state.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwt/error.h"
#include "decode/vdso.h"

int hwt_vdso_self(const uint8_t **data, size_t *size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return HWT_ERR_NOMAP;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return HWT_ERR_NOMAP;
	char line[512];
	int r = HWT_ERR_NOMAP;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base && hi > lo &&
		    strstr(line, "[vdso]")) {
			*data = (const uint8_t *)base;
			*size = hi - lo;
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

int hwt_elf_mem_build_id(const uint8_t *elf, size_t n, uint8_t id[20], size_t *len)
{
	Elf64_Ehdr eh;
	if (n < sizeof(eh))
		return HWT_ERR_BAD_FILE;
	memcpy(&eh, elf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > n ||
	    eh.e_phnum > (n - eh.e_phoff) / sizeof(Elf64_Phdr))
		return HWT_ERR_BAD_FILE;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, elf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > n || ph.p_filesz > n - ph.p_offset)
			continue;
		const uint8_t *p = elf + ph.p_offset, *end = p + ph.p_filesz;
		while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			memcpy(&nh, p, sizeof(nh));
			size_t nsz = (nh.n_namesz + 3u) & ~3u, dsz = (nh.n_descsz + 3u) & ~3u;
			p += sizeof(nh);
			if (nsz > (size_t)(end - p) || dsz > (size_t)(end - p) - nsz)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(p, "GNU", 4) && nh.n_descsz && nh.n_descsz <= 20) {
				memcpy(id, p + nsz, nh.n_descsz);
				*len = nh.n_descsz;
				return 0;
			}
			p += nsz + dsz;
		}
	}
	return HWT_ERR_BAD_FILE;
}

int hwt_buildid_dir(char *buf, size_t n)
{
	const char *d = getenv("PERF_BUILDID_DIR");
	if (d && *d) {
		snprintf(buf, n, "%s", d);
		return 0;
	}
	const char *home = getenv("HOME");
	if (!home || !*home)
		return HWT_ERR_INVALID;
	snprintf(buf, n, "%s/.debug", home);
	return 0;
}

static void hex(char *out, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = 0;
}

void hwt_vdso_cache_path(char *buf, size_t n, const char *dir, const uint8_t *id, size_t len)
{
	char h[41];
	hex(h, id, len > 20 ? 20 : len);
	snprintf(buf, n, "%s/[vdso]/%s/vdso", dir, h);
}

/* mkdir -p of the folder holding path (path itself is a file). */
static int mkdirs_for(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return HWT_ERR_IO;
		*s = '/';
	}
	return 0;
}

int hwt_vdso_cache_save(const char *dir, const uint8_t *id, size_t len, const uint8_t *data,
			size_t size)
{
	char path[4096], h[41];
	hwt_vdso_cache_path(path, sizeof(path), dir, id, len);
	struct stat sb;
	if (!stat(path, &sb))
		return 0;
	if (mkdirs_for(path))
		return HWT_ERR_IO;
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return HWT_ERR_IO;
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0) {
			close(fd);
			unlink(tmp);
			return HWT_ERR_IO;
		}
		off += (size_t)w;
	}
	if (close(fd) || rename(tmp, path)) {
		unlink(tmp);
		return HWT_ERR_IO;
	}
	/* perf finds cached objects through DIR/.build-id/ab/cdef... */
	hex(h, id, len > 20 ? 20 : len);
	char link[4200], target[128];
	snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, h, h + 2);
	snprintf(target, sizeof(target), "../../[vdso]/%s", h);
	if (!mkdirs_for(link))
		(void)symlink(target, link); /* only a convenience for perf */
	return 0;
}

int hwt_vdso_cache_load(const char *dir, const uint8_t *id, size_t len, uint8_t **data,
			size_t *size)
{
	char path[4096];
	hwt_vdso_cache_path(path, sizeof(path), dir, id, len);
	FILE *f = fopen(path, "rb");
	if (!f)
		return HWT_ERR_IO;
	uint8_t *d = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 16384;
			uint8_t *nv = nc <= (64u << 20) ? realloc(d, nc) : NULL;
			if (!nv) {
				free(d);
				fclose(f);
				return HWT_ERR_NOMEM;
			}
			d = nv;
			cap = nc;
		}
		size_t k = fread(d + n, 1, cap - n, f);
		n += k;
		if (!k)
			break;
	}
	fclose(f);
	*data = d;
	*size = n;
	return 0;
}
