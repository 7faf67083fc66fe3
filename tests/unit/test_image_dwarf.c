/* tests/unit/test_image_dwarf.c - source lines (hwt_image_srcline).
 *
 * Oracles: the compiler's own line numbers (__LINE__ at call sites, whose
 * return addresses are found with __builtin_return_address), and binutils
 * addr2line on the test program itself (built with -g) for a sample of
 * addresses across its code, looked up at the program's load bias
 * (dl_iterate_phdr).  The same sample through a stripped copy whose
 * lines are in a separate file named by .gnu_debuglink (objcopy) must
 * give the same answers, and a copy stripped of its symbols too must name
 * a static function from the debug file's .symtab.  A copy stripped of
 * both whose debug file is only under DIR/.build-id/xx/yyyy.debug (a
 * -dbgsym package unpacked somewhere) has its lines and symbols with DIR
 * among the image's debug folders (hwt_image_set_debug_dirs), none
 * without.  Addresses not mapped from a file, files that
 * are not ELF, and code without lines answer HWT_ERR_NOMAP.
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/image.h"
#include "t.h"

int main(void);

static char exe[4096]; /* this program's path (not /proc/self/exe: tools run on it) */
static uint64_t exe_bias, code_lo, code_hi; /* runtime [lo, hi) of the code */
static int find_exe(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	exe_bias = info->dlpi_addr; /* the first entry is the executable */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			code_lo = exe_bias + ph->p_vaddr;
			code_hi = code_lo + ph->p_filesz;
		}
	}
	return 1;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

__attribute__((noinline)) static uint64_t ret_addr(void)
{
	uint64_t a = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return a;
}

static void t_callsite(void)
{
	struct hwt_image *img = hwt_image_alloc();
	CHECK_EQ(hwt_image_add_elf(img, "/proc/self/exe", exe_bias), 0);
	/* the call instruction ends just before its return address */
	uint64_t a1 = ret_addr();
	unsigned l1 = __LINE__ - 1;
	uint64_t a2 = ret_addr();
	unsigned l2 = __LINE__ - 1;
	const char *file = NULL;
	unsigned line = 0;
	CHECK_EQ(hwt_image_srcline(img, a1 - 1, &file, &line), 0);
	CHECKF(file && !strcmp(base(file), "test_image_dwarf.c") && line == l1, "%s:%u, want :%u",
	       file ? file : "-", line, l1);
	CHECK_EQ(hwt_image_srcline(img, a2 - 1, &file, &line), 0);
	CHECKF(line == l2, "line %u, want %u", line, l2);
	/* again (the table is loaded now) */
	CHECK_EQ(hwt_image_srcline(img, a1 - 1, &file, &line), 0);
	CHECK_EQ(line, l1);
	CHECK(file[0] == '/'); /* joined with the compilation folder */
	hwt_image_free(img);
}

#define NSAMPLE 600

/* addr2line's answer for each link-time address: "file:line" or "" when
 * it knows no line ("??:?", "??:0", "file:?"). */
static int addr2line(const char *elf, const uint64_t *a, size_t n, char (*out)[512])
{
	char in[] = "/tmp/hwt-a2l-XXXXXX";
	int fd = mkstemp(in);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%llx\n", (unsigned long long)a[i]);
	fclose(f);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "addr2line -e %s <%s", elf, in);
	FILE *p = popen(cmd, "r");
	size_t k = 0;
	if (p) {
		while (k < n && fgets(out[k], sizeof(out[k]), p)) {
			char *s = strstr(out[k], " (discriminator");
			if (s)
				*s = 0;
			out[k][strcspn(out[k], "\n")] = 0;
			size_t l = strlen(out[k]);
			if (!strncmp(out[k], "??:", 3) ||
			    (l >= 2 && !strcmp(out[k] + l - 2, ":?")) ||
			    (l >= 2 && !strcmp(out[k] + l - 2, ":0")))
				out[k][0] = 0;
			k++;
		}
		pclose(p);
	}
	unlink(in);
	return k == n ? 0 : -1;
}

/* Compare hwt_image_srcline on image addresses with want (addr2line). */
static void compare(struct hwt_image *img, const uint64_t *addr, char (*want)[512], size_t n,
		    size_t *known)
{
	*known = 0;
	for (size_t i = 0; i < n; i++) {
		const char *file;
		unsigned line;
		char got[512] = "";
		if (!hwt_image_srcline(img, addr[i], &file, &line))
			snprintf(got, sizeof(got), "%s:%u", file, line);
		CHECKF(!strcmp(got, want[i]), "at 0x%llx: '%s', addr2line '%s'",
		       (unsigned long long)(addr[i] - exe_bias), got, want[i]);
		*known += got[0] != 0;
	}
}

static uint64_t sample[NSAMPLE];
static char want[NSAMPLE][512];
static int have_want;

static void t_addr2line(void)
{
	uint64_t link[NSAMPLE];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < NSAMPLE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sample[i] = code_lo + x % (code_hi - code_lo);
		link[i] = sample[i] - exe_bias;
	}
	CHECK(code_hi > code_lo);
	CHECK_EQ(addr2line(exe, link, NSAMPLE, want), 0);
	struct hwt_image *img = hwt_image_alloc();
	CHECK_EQ(hwt_image_add_elf(img, "/proc/self/exe", exe_bias), 0);
	size_t known;
	compare(img, sample, want, NSAMPLE, &known);
	CHECKF(known > NSAMPLE / 2, "only %zu of %d addresses have lines", known, NSAMPLE);
	have_want = !t_case_failed;
	hwt_image_free(img);
}

/* The same through a file mapping (hwt_image_add_file): the offsets of
 * the file go through its program headers. */
static void t_file_mapping(void)
{
	struct hwt_image *img = hwt_image_alloc();
	/* the whole file at the bias: link-time address = file offset + bias
	 * only for segments with p_vaddr == p_offset, so map the code segment
	 * by its own offset instead */
	FILE *m = fopen("/proc/self/maps", "r");
	char line[1024];
	int mapped = 0;
	while (m && fgets(line, sizeof(line), m)) {
		unsigned long long lo, hi, off;
		char perm[8], path[512] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &lo, &hi, perm, &off, path) <
		    4)
			continue;
		if (perm[2] == 'x' && lo <= (uint64_t)(uintptr_t)&main &&
		    (uint64_t)(uintptr_t)&main < hi) {
			CHECK_EQ(hwt_image_add_file(img, "/proc/self/exe", off, hi - lo, lo), 0);
			mapped = 1;
		}
	}
	if (m)
		fclose(m);
	CHECK(mapped);
	size_t known;
	if (have_want)
		compare(img, sample, want, NSAMPLE, &known);
	hwt_image_free(img);
}

static void t_debuglink(void)
{
	char dir[] = "/tmp/hwt-dbg-XXXXXX";
	CHECK(mkdtemp(dir));
	char cmd[10000];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug %s prog.debug && "
		 "objcopy --strip-debug --add-gnu-debuglink=prog.debug %s prog && "
		 "mkdir .debug && mv prog.debug .debug/",
		 dir, exe, exe);
	CHECK_EQ(system(cmd), 0);
	char prog[64];
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	struct hwt_image *img = hwt_image_alloc();
	CHECK_EQ(hwt_image_add_elf(img, prog, exe_bias), 0);
	size_t known;
	if (have_want)
		compare(img, sample, want, NSAMPLE, &known);
	hwt_image_free(img);
	/* without the debug file: no lines */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/.debug", dir);
	CHECK_EQ(system(cmd), 0);
	img = hwt_image_alloc();
	CHECK_EQ(hwt_image_add_elf(img, prog, exe_bias), 0);
	const char *file;
	unsigned line;
	CHECK_EQ(hwt_image_srcline(img, (uint64_t)(uintptr_t)&main, &file, &line), HWT_ERR_NOMAP);
	hwt_image_free(img);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

/* Symbols too come from the debug file when the file has no .symtab:
 * ret_addr is static (in .symtab, not in .dynsym). */
static void t_debug_syms(void)
{
	char dir[] = "/tmp/hwt-dbgsym-XXXXXX";
	CHECK(mkdtemp(dir));
	char cmd[10000], prog[64];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && objcopy --only-keep-debug %s prog.debug && "
		 "objcopy --strip-all --add-gnu-debuglink=prog.debug %s prog",
		 dir, exe, exe);
	CHECK_EQ(system(cmd), 0);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	uint64_t at = (uint64_t)(uintptr_t)&ret_addr;
	const char *name = NULL;
	uint64_t off = 1;
	struct hwt_image *img = hwt_image_alloc();
	CHECK_EQ(hwt_image_add_elf(img, prog, exe_bias), 0);
	CHECK_EQ(hwt_image_symbol(img, at, &name, &off), 0);
	CHECKF(name && !strcmp(name, "ret_addr") && off == 0, "got %s+%llu", name ? name : "-",
	       (unsigned long long)off);
	hwt_image_free(img);
	/* without the debug file the stripped copy does not know it */
	snprintf(cmd, sizeof(cmd), "rm -f %s/prog.debug", dir);
	CHECK_EQ(system(cmd), 0);
	img = hwt_image_alloc();
	CHECK_EQ(hwt_image_add_elf(img, prog, exe_bias), 0);
	name = NULL;
	int r = hwt_image_symbol(img, at, &name, &off);
	CHECK(r == HWT_ERR_NOMAP || (name && strcmp(name, "ret_addr")));
	hwt_image_free(img);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

/* A debug file found by build-id under a folder of
 * hwt_image_set_debug_dirs (the copy has no .gnu_debuglink). */
static void t_debug_dir(void)
{
	char dir[] = "/tmp/hwt-dbgdir-XXXXXX";
	CHECK(mkdtemp(dir));
	char cmd[20000], prog[64], dirs[256];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && id=$(readelf -n %s | sed -n 's/.*Build ID: *//p') && [ -n \"$id\" ] && "
		 "mkdir -p dbg/.build-id/$(echo $id | cut -c1-2) && "
		 "objcopy --only-keep-debug %s dbg/.build-id/$(echo $id | cut -c1-2)/$(echo $id | "
		 "cut -c3-).debug && objcopy --strip-all %s prog",
		 dir, exe, exe, exe);
	if (system(cmd)) {
		printf("SKIP t_debug_dir: %s has no build-id note\n", exe);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK_EQ(system(cmd), 0);
		return;
	}
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	/* an empty entry and a folder without it come first */
	snprintf(dirs, sizeof(dirs), "::%s/none:%s/dbg", dir, dir);
	uint64_t at = (uint64_t)(uintptr_t)&ret_addr;
	const char *name = NULL, *file;
	uint64_t off = 1;
	unsigned line;
	struct hwt_image *img = hwt_image_alloc();
	CHECK_EQ(hwt_image_set_debug_dirs(img, dirs), 0);
	CHECK_EQ(hwt_image_add_elf(img, prog, exe_bias), 0);
	CHECK_EQ(hwt_image_symbol(img, at, &name, &off), 0);
	CHECKF(name && !strcmp(name, "ret_addr") && off == 0, "got %s+%llu", name ? name : "-",
	       (unsigned long long)off);
	size_t known;
	if (have_want)
		compare(img, sample, want, NSAMPLE, &known);
	hwt_image_free(img);
	/* not without the folder */
	img = hwt_image_alloc();
	CHECK_EQ(hwt_image_set_debug_dirs(img, NULL), 0);
	CHECK_EQ(hwt_image_add_elf(img, prog, exe_bias), 0);
	CHECK_EQ(hwt_image_srcline(img, (uint64_t)(uintptr_t)&main, &file, &line), HWT_ERR_NOMAP);
	name = NULL;
	int r = hwt_image_symbol(img, at, &name, &off);
	CHECK(r == HWT_ERR_NOMAP || (name && strcmp(name, "ret_addr")));
	hwt_image_free(img);
	CHECK_EQ(hwt_image_set_debug_dirs(NULL, dirs), HWT_ERR_INVALID);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

static void t_nomap(void)
{
	struct hwt_image *img = hwt_image_alloc();
	static const uint8_t code[16] = {0x90};
	const char *file;
	unsigned line;
	CHECK_EQ(hwt_image_add_mem(img, code, sizeof(code), 0x1000), 0);
	CHECK_EQ(hwt_image_srcline(img, 0x1000, &file, &line), HWT_ERR_NOMAP); /* memory */
	CHECK_EQ(hwt_image_srcline(img, 0x9000, &file, &line), HWT_ERR_NOMAP); /* unmapped */
	char path[] = "/tmp/hwt-notelf-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, "not an ELF file\n", 16) == 16);
	close(fd);
	CHECK_EQ(hwt_image_add_file(img, path, 0, HWT_IMAGE_TO_END, 0x2000), 0);
	CHECK_EQ(hwt_image_srcline(img, 0x2004, &file, &line), HWT_ERR_NOMAP); /* not ELF */
	CHECK_EQ(hwt_image_srcline(img, 0x2005, &file, &line), HWT_ERR_NOMAP); /* cached */
	unlink(path);
	hwt_image_free(img);
	CHECK_EQ(hwt_image_srcline(NULL, 0x1000, &file, &line), HWT_ERR_NOMAP);
}

int main(void)
{
	dl_iterate_phdr(find_exe, NULL);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	RUN(t_callsite);
	RUN(t_nomap);
	if (system("addr2line --version >/dev/null 2>&1 && objcopy --version >/dev/null 2>&1")) {
		printf("SKIP t_addr2line: binutils (addr2line, objcopy) not installed\n");
		return t_done();
	}
	RUN(t_addr2line);
	RUN(t_file_mapping);
	RUN(t_debuglink);
	RUN(t_debug_syms);
	RUN(t_debug_dir);
	return t_done();
}
