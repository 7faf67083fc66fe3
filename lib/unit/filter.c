/* lib/unit/filter.c - perf's --filter syntax to the kernel's address
 * filter string (PERF_EVENT_IOC_SET_FILTER).
 *
 * Input (perf-record(1)): filters separated by ',', each
 *     ACTION ADDR|SYM[/SIZE] [@FILE]
 * with ACTION one of filter, start, stop, tracestop.  Output (kernel,
 * kernel/events/core.c address filter parser): "ACTION OFF/SIZE@FILE"
 * joined by ',', where OFF is a file offset in FILE (the kernel maps it to
 * addresses through the file's mappings), FILE an absolute path, and
 * ACTION filter/start/stop (tracestop is the kernel's stop).  Symbols are
 * looked up in FILE's .symtab, then .dynsym (libelf); a symbol's size is
 * the default SIZE for filter.  Virtual addresses (symbols or numbers given
 * with a file) become file offsets through the PT_LOAD headers.  Without
 * any file the address is a kernel address and passed as is.
 * Pure functions: no state, every ELF handle closed before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/unit.h"

/* Resolve a program name like execvp would. */
static int resolve_path(const char *name, char *out, size_t outlen)
{
	char tmp[PATH_MAX];
	if (strchr(name, '/')) {
		if (!realpath(name, tmp))
			return -1;
	} else {
		const char *path = getenv("PATH");
		if (!path)
			path = "/usr/bin:/bin";
		int found = 0;
		while (*path && !found) {
			size_t n = strcspn(path, ":");
			char cand[PATH_MAX];
			snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, path, name);
			if (access(cand, X_OK) == 0 && realpath(cand, tmp))
				found = 1;
			path += n;
			if (*path == ':')
				path++;
		}
		if (!found)
			return -1;
	}
	if (strlen(tmp) >= outlen)
		return -1;
	strcpy(out, tmp);
	return 0;
}

struct elf_lookup {
	uint64_t vaddr, size, off;
};

/* Find sym (or, with sym NULL, take vaddr) in file and compute the file
 * offset of the address.  0 or -1 with err filled. */
static int elf_resolve(const char *file, const char *sym, struct elf_lookup *out, char *err,
		       size_t errlen)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "--filter: cannot open '%s': %s", file, strerror(errno));
		return -1;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int rc = -1;
	if (!e || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "--filter: '%s' is not an ELF file", file);
		goto out;
	}
	if (sym) {
		int found = 0;
		for (int pass = 0; pass < 2 && !found; pass++) {
			Elf_Scn *scn = NULL;
			while (!found && (scn = elf_nextscn(e, scn))) {
				GElf_Shdr sh;
				if (!gelf_getshdr(scn, &sh))
					continue;
				if (sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
				    !sh.sh_entsize)
					continue;
				Elf_Data *d = elf_getdata(scn, NULL);
				size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
				for (size_t i = 0; i < n; i++) {
					GElf_Sym s;
					if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
					    s.st_shndx == SHN_UNDEF)
						continue;
					const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
					if (nm && !strcmp(nm, sym)) {
						out->vaddr = s.st_value;
						out->size = s.st_size;
						found = 1;
						break;
					}
				}
			}
		}
		if (!found) {
			snprintf(err, errlen, "--filter: no symbol '%s' in '%s'", sym, file);
			goto out;
		}
	}
	size_t nph;
	if (elf_getphdrnum(e, &nph)) {
		snprintf(err, errlen, "--filter: '%s' has no program headers", file);
		goto out;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (out->vaddr >= ph.p_vaddr && out->vaddr < ph.p_vaddr + ph.p_memsz) {
			out->off = out->vaddr - ph.p_vaddr + ph.p_offset;
			rc = 0;
			goto out;
		}
	}
	snprintf(err, errlen, "--filter: address %#llx is not in a loadable segment of '%s'",
		 (unsigned long long)out->vaddr, file);
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

static int parse_one(char *item, const char *default_file, char *out, size_t outlen, char *err,
		     size_t errlen)
{
	char *save = NULL;
	char *act = strtok_r(item, " \t", &save);
	char *where = strtok_r(NULL, " \t", &save);
	char *file = strtok_r(NULL, " \t", &save);
	if (!act || !where) {
		snprintf(err, errlen, "--filter: expected 'ACTION ADDR|SYM[/SIZE] [@FILE]'");
		return HWT_ERR_INVALID;
	}
	if (strtok_r(NULL, " \t", &save)) {
		snprintf(err, errlen, "--filter: unexpected text after '%s'", file);
		return HWT_ERR_INVALID;
	}
	const char *kact;
	if (!strcmp(act, "filter"))
		kact = "filter";
	else if (!strcmp(act, "start"))
		kact = "start";
	else if (!strcmp(act, "stop") || !strcmp(act, "tracestop"))
		kact = "stop";
	else {
		snprintf(err, errlen,
			 "--filter: unknown action '%s' (filter, start, stop, tracestop)", act);
		return HWT_ERR_INVALID;
	}
	/* "ADDR@FILE" written without a space */
	char *at = strchr(where, '@');
	if (at) {
		if (file) {
			snprintf(err, errlen, "--filter: two files given");
			return HWT_ERR_INVALID;
		}
		*at = 0;
		file = at;
	}
	if (file) {
		if (file[0] != '@' || !file[1]) {
			snprintf(err, errlen, "--filter: expected @FILE, got '%s'", file);
			return HWT_ERR_INVALID;
		}
		file++;
	}
	uint64_t size = 0;
	int have_size = 0;
	char *slash = strchr(where, '/');
	if (slash) {
		*slash = 0;
		char *end;
		errno = 0;
		size = strtoull(slash + 1, &end, 0);
		if (*end || end == slash + 1 || errno) {
			snprintf(err, errlen, "--filter: bad size '%s'", slash + 1);
			return HWT_ERR_INVALID;
		}
		have_size = 1;
	}
	char *end;
	errno = 0;
	uint64_t addr = strtoull(where, &end, 0);
	int numeric = *where && !*end && !errno;
	char path[PATH_MAX] = "";
	const char *fname = file ? file : default_file;
	if (fname && resolve_path(fname, path, sizeof(path))) {
		snprintf(err, errlen, "--filter: cannot find file '%s'", fname);
		return HWT_ERR_INVALID;
	}
	uint64_t off = addr;
	if (path[0]) {
		struct elf_lookup lk = {.vaddr = addr};
		if (elf_resolve(path, numeric ? NULL : where, &lk, err, errlen))
			return HWT_ERR_INVALID;
		off = lk.off;
		if (!have_size && !numeric)
			size = lk.size;
	} else if (!numeric) {
		snprintf(err, errlen, "--filter: symbol '%s' needs @FILE (or a traced command)",
			 where);
		return HWT_ERR_INVALID;
	}
	if (!strcmp(kact, "filter") && !size) {
		snprintf(err, errlen, "--filter: 'filter %s' needs a size (ADDR/SIZE)", where);
		return HWT_ERR_INVALID;
	}
	int n;
	if (path[0])
		n = snprintf(out, outlen, "%s %#llx/%#llx@%s", kact, (unsigned long long)off,
			     (unsigned long long)size, path);
	else
		n = snprintf(out, outlen, "%s %#llx/%#llx", kact, (unsigned long long)off,
			     (unsigned long long)size);
	if (n < 0 || (size_t)n >= outlen) {
		snprintf(err, errlen, "--filter: too long");
		return HWT_ERR_INVALID;
	}
	return n;
}

int hwt_filter_translate(const char *spec, const char *default_file, char *out, size_t outlen,
			 char *err, size_t errlen)
{
	if (!spec || !out || !outlen)
		return HWT_ERR_INVALID;
	char *copy = strdup(spec);
	if (!copy)
		return HWT_ERR_NOMEM;
	size_t k = 0;
	int r = 0;
	out[0] = 0;
	char *save = NULL;
	for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		while (*it == ' ')
			it++;
		if (!*it)
			continue;
		if (k && k + 1 < outlen)
			out[k++] = ',';
		r = parse_one(it, default_file, out + k, outlen - k, err, errlen);
		if (r < 0)
			break;
		k += (size_t)r;
		r = 0;
	}
	free(copy);
	if (!r && !k) {
		snprintf(err, errlen, "--filter: empty filter");
		r = HWT_ERR_INVALID;
	}
	return r;
}
