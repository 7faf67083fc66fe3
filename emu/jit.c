/* emu/jit.c - code generated at run time (regular-expression JITs,
 * LuaJIT, ...), captured at translation time for the decoders.
 *
 * Anonymous executable mappings (mmap/mprotect with PROT_EXEC and no file,
 * a memfd or a deleted file) are where code can be generated.  A region is
 * such a mapping (or a 1 MiB piece of a larger one).  Each block QEMU
 * translates there has its bytes copied into the region's shadow; bytes
 * that differ from bytes seen before mean the code was rewritten (QEMU
 * retranslates after a write to a page with translated code) and start a
 * new version of the region: the shadow, with the new bytes, goes into a
 * new file.  Each version is one small ELF file (as `perf inject --jit`
 * writes: ET_EXEC, one PT_LOAD at the region's address, file offset 0x1000,
 * a .text section, .symtab), in
 *   ${PERF_BUILDID_DIR:-$HOME/.debug}/jit/hwt-<pid>-<ns>/jitted-<pid>-<region>-<version>.so
 * and kept up to date as blocks are translated (so a killed process leaves
 * its code).  The first block of a version to execute on a thread announces
 * it: the pending trace is flushed (so a one-pass decoder has decoded the
 * older code), then an MMAP2 record naming the file, stamped with the time
 * of the last timing packet (what perf's decoder knows at the branch into
 * the block), so decoders map the new version from that point on.
 * When the process exits, the runtime's perf map file (/tmp/perf-PID.map,
 * "START SIZE NAME" lines) gives the versions their symbols.
 * Limits: jitdump files are not read; a block that crosses a region's end
 * keeps only its bytes inside; regions are never freed (blocks point to
 * them); the files stay after the recording (they are its code).
 */
#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jit.h"
#include "qemu_plugin_api.h"

#define JIT_HDR 0x1000ull
#define JIT_MAX_REGION (4ull << 20)
#define JIT_CHUNK (1ull << 20)
#define JIT_MAX_ANON 1024

struct jit_region {
	uint64_t start, len;
	uint8_t *shadow, *known; /* len bytes; known: one bit per byte */
	int id, ver, announced;
	int fd; /* the current version's file */
	int dead;
	struct jit_region *next;
};

struct jit_version {
	char path[700];
	struct jit_region *r;
	struct jit_version *next;
};

static struct {
	uint64_t anon_lo[JIT_MAX_ANON], anon_hi[JIT_MAX_ANON];
	int nanon;
	struct jit_region *regions;
	struct jit_version *versions;
	int nregions;
	char dir[600];
	int announcing;
} jit;

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

static void kill_regions(uint64_t addr, uint64_t len)
{
	for (struct jit_region *r = jit.regions; r; r = r->next)
		if (!r->dead && overlaps(addr, len, r->start, r->len)) {
			r->dead = 1;
			if (r->fd >= 0)
				close(r->fd);
			r->fd = -1;
		}
}

void emu_jit_map(uint64_t addr, uint64_t len, const char *path)
{
	if (jit.announcing || !len)
		return;
	int anon = !path || !strcmp(path, "//anon") || !strncmp(path, "/memfd:", 7) ||
		   (strlen(path) > 10 && !strcmp(path + strlen(path) - 10, " (deleted)"));
	/* the range is new: drop what overlapped it */
	int j = 0;
	for (int i = 0; i < jit.nanon; i++)
		if (!overlaps(addr, len, jit.anon_lo[i], jit.anon_hi[i] - jit.anon_lo[i])) {
			jit.anon_lo[j] = jit.anon_lo[i];
			jit.anon_hi[j++] = jit.anon_hi[i];
		}
	jit.nanon = j;
	kill_regions(addr, len);
	if (anon && jit.nanon < JIT_MAX_ANON) {
		jit.anon_lo[jit.nanon] = addr;
		jit.anon_hi[jit.nanon++] = addr + len;
	}
}

int emu_jit_protect(uint64_t addr, uint64_t len)
{
	if (!len)
		return 1;
	for (int i = 0; i < jit.nanon; i++)
		if (addr >= jit.anon_lo[i] && addr + len <= jit.anon_hi[i])
			return 1; /* announced already (as //anon or its versions) */
	emu_jit_map(addr, len, "//anon");
	return 0;
}

static int make_dir(void)
{
	if (jit.dir[0])
		return 0;
	const char *base = getenv("PERF_BUILDID_DIR");
	char b[512];
	if (!base || !*base) {
		const char *home = getenv("HOME");
		snprintf(b, sizeof(b), "%s/.debug", home && *home ? home : "/tmp");
		base = b;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char d[600];
	snprintf(d, sizeof(d), "%s", base);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/jit", base);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/jit/hwt-%d-%lld%09ld", base, (int)getpid(), (long long)ts.tv_sec,
		 ts.tv_nsec);
	if (mkdir(d, 0755) && errno != EEXIST) {
		fprintf(stderr, "hwt-pt-plugin: cannot create %s for generated code: %s\n", d,
			strerror(errno));
		return -1;
	}
	snprintf(jit.dir, sizeof(jit.dir), "%s", d);
	return 0;
}

static void pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	const char *c = p;
	while (n) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return;
		}
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
}

struct jit_sym {
	uint64_t addr, size;
	char *name;
};

/* Everything but the code: ELF header, program header, and after the code
 * .shstrtab, .symtab, .strtab and the section headers. */
static void write_elf(int fd, const struct jit_region *r, const struct jit_sym *syms, size_t nsyms)
{
	static const char shstr[] = "\0.text\0.shstrtab\0.symtab\0.strtab";
	uint64_t off = (JIT_HDR + r->len + 7) & ~7ull;
	uint64_t shstr_off = off;
	off += sizeof(shstr);
	off = (off + 7) & ~7ull;
	uint64_t sym_off = off, sym_size = (nsyms + 1) * sizeof(Elf64_Sym);
	off += sym_size;
	uint64_t str_off = off, str_size = 1;
	for (size_t i = 0; i < nsyms; i++)
		str_size += strlen(syms[i].name) + 1;
	off += str_size;
	off = (off + 7) & ~7ull;
	uint64_t sh_off = off;

	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = r->start;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 2;
	Elf64_Phdr ph = {.p_type = PT_LOAD,
			 .p_flags = PF_R | PF_X,
			 .p_offset = JIT_HDR,
			 .p_vaddr = r->start,
			 .p_paddr = r->start,
			 .p_filesz = r->len,
			 .p_memsz = r->len,
			 .p_align = 0x1000};
	pwrite_all(fd, &eh, sizeof(eh), 0);
	pwrite_all(fd, &ph, sizeof(ph), sizeof(eh));
	pwrite_all(fd, shstr, sizeof(shstr), shstr_off);

	size_t tlen = (nsyms + 1) * sizeof(Elf64_Sym);
	Elf64_Sym *st = calloc(1, tlen);
	char *str = calloc(1, str_size);
	if (st && str) {
		size_t so = 1;
		for (size_t i = 0; i < nsyms; i++) {
			Elf64_Sym *s = &st[i + 1];
			s->st_name = (uint32_t)so;
			s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
			s->st_shndx = 1;
			s->st_value = syms[i].addr;
			s->st_size = syms[i].size;
			size_t l = strlen(syms[i].name) + 1;
			memcpy(str + so, syms[i].name, l);
			so += l;
		}
		pwrite_all(fd, st, tlen, sym_off);
		pwrite_all(fd, str, str_size, str_off);
	}
	free(st);
	free(str);

	Elf64_Shdr sh[5];
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_PROGBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_addr = r->start,
			     .sh_offset = JIT_HDR,
			     .sh_size = r->len,
			     .sh_addralign = 16};
	sh[2] = (Elf64_Shdr){.sh_name = 7,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = shstr_off,
			     .sh_size = sizeof(shstr),
			     .sh_addralign = 1};
	sh[3] = (Elf64_Shdr){.sh_name = 17,
			     .sh_type = SHT_SYMTAB,
			     .sh_offset = sym_off,
			     .sh_size = sym_size,
			     .sh_link = 4,
			     .sh_info = 1,
			     .sh_addralign = 8,
			     .sh_entsize = sizeof(Elf64_Sym)};
	sh[4] = (Elf64_Shdr){.sh_name = 25,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = str_off,
			     .sh_size = str_size,
			     .sh_addralign = 1};
	pwrite_all(fd, sh, sizeof(sh), sh_off);
}

/* A new version of r: a new file with the shadow's bytes. */
static int new_version(struct jit_region *r)
{
	if (make_dir() < 0)
		return -1;
	struct jit_version *v = calloc(1, sizeof(*v));
	if (!v)
		return -1;
	snprintf(v->path, sizeof(v->path), "%s/jitted-%d-%d-%d.so", jit.dir, (int)getpid(), r->id,
		 r->ver + 1);
	int fd = open(v->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(v);
		return -1;
	}
	if (r->fd >= 0)
		close(r->fd);
	r->fd = fd;
	r->ver++;
	write_elf(fd, r, NULL, 0);
	pwrite_all(fd, r->shadow, r->len, JIT_HDR);
	v->r = r;
	v->next = jit.versions;
	jit.versions = v;
	return 0;
}

static struct jit_region *region_for(uint64_t ip)
{
	for (struct jit_region *r = jit.regions; r; r = r->next)
		if (!r->dead && ip >= r->start && ip < r->start + r->len)
			return r;
	for (int i = 0; i < jit.nanon; i++) {
		if (ip < jit.anon_lo[i] || ip >= jit.anon_hi[i])
			continue;
		uint64_t lo = jit.anon_lo[i], hi = jit.anon_hi[i];
		if (hi - lo > JIT_MAX_REGION) {
			uint64_t c = ip & ~(JIT_CHUNK - 1);
			lo = c > lo ? c : lo;
			hi = c + JIT_CHUNK < hi ? c + JIT_CHUNK : hi;
		}
		struct jit_region *r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		r->start = lo;
		r->len = hi - lo;
		r->shadow = calloc(1, r->len);
		r->known = calloc(1, r->len / 8 + 1);
		r->fd = -1;
		r->id = ++jit.nregions;
		if (!r->shadow || !r->known) {
			free(r->shadow);
			free(r->known);
			free(r);
			return NULL;
		}
		r->next = jit.regions;
		jit.regions = r;
		return r;
	}
	return NULL;
}

struct emu_jit_tb *emu_jit_capture(struct qemu_plugin_tb *tb, uint64_t start)
{
	if (!jit.nanon)
		return NULL;
	struct jit_region *r = region_for(start);
	if (!r)
		return NULL;
	uint8_t code[4096];
	size_t n = 0, ni = qemu_plugin_tb_n_insns(tb);
	for (size_t i = 0; i < ni; i++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
		size_t sz = qemu_plugin_insn_size(in);
		if (n + sz > sizeof(code))
			break;
		memcpy(code + n, qemu_plugin_insn_data(in), sz);
		n += sz;
	}
	uint64_t off = start - r->start;
	if (off + n > r->len)
		n = (size_t)(r->len - off);
	int conflict = 0, fresh = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t o = off + i;
		int k = (r->known[o >> 3] >> (o & 7)) & 1;
		if (k && r->shadow[o] != code[i])
			conflict = 1;
		if (!k)
			fresh = 1;
	}
	memcpy(r->shadow + off, code, n);
	for (size_t i = 0; i < n; i++)
		r->known[(off + i) >> 3] |= (uint8_t)(1u << ((off + i) & 7));
	if (!r->ver || conflict) {
		if (new_version(r) < 0)
			return NULL;
	} else if (fresh && r->fd >= 0) {
		pwrite_all(r->fd, code, n, JIT_HDR + off);
	}
	struct emu_jit_tb *jt = calloc(1, sizeof(*jt));
	if (!jt)
		return NULL;
	jt->r = r;
	jt->ver = r->ver;
	return jt;
}

static const char *version_path(const struct jit_region *r)
{
	for (struct jit_version *v = jit.versions; v; v = v->next)
		if (v->r == r)
			return v->path; /* newest first */
	return NULL;
}

void emu_jit_exec(struct emu_thr *t, const struct emu_jit_tb *jt)
{
	struct jit_region *r = jt->r;
	if (jt->ver <= r->announced)
		return;
	const char *path = version_path(r);
	if (!path)
		return;
	/* The trace so far belongs to the older code: it ends with a PSB+
	 * whose FUP is where the flow stands (the previous block's branch,
	 * its outcome still to come, or its end), so that decoders that cut
	 * the trace at PSBs decode it all before the new mapping; then out. */
	const struct emu_tb *p = t->prev;
	if (!emu.bts && t->g.en && p)
		ptg_psb(&t->g, p->cls == EMU_OTHER ? p->next : p->last);
	ptg_flush_tnt(&t->g);
	emu_thr_flush(t, 1);
	/* Stamped no later than the last timing packet: perf applies a
	 * sideband record once its decoder's time (from the last MTC or TSC)
	 * passes the record's, and the branch into this block carries the
	 * time of the last MTC. */
	uint64_t now = emu_now(t), ts = now;
	if (emu.ptg.mtc) {
		uint64_t m = (t->g.mtc_last << emu.ptg.mtc_period) * PTG_TSC_CTC_RATIO;
		if (m < ts)
			ts = m;
	}
	if (ts > t->tbase)
		ts--;
	if (ts < t->tbase)
		ts = t->tbase;
	uint64_t icount = t->icount;
	t->icount = ts - t->tbase;
	jit.announcing = 1;
	emu_sb_mmap(t, r->start, r->len, JIT_HDR, PROT_READ | PROT_EXEC, MAP_PRIVATE, path, -1);
	jit.announcing = 0;
	t->icount = icount;
	r->announced = r->ver;
	emu_box_sync(t);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void emu_jit_finish(void)
{
	if (!jit.versions)
		return;
	char mp[64];
	snprintf(mp, sizeof(mp), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(mp, "re");
	if (!f)
		return;
	struct jit_sym *syms = NULL;
	size_t n = 0, cap = 0;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, sz;
		int used = 0;
		if (sscanf(line, "%llx %llx %n", &a, &sz, &used) != 2 || !used)
			continue;
		char *name = line + used;
		name[strcspn(name, "\n")] = 0;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			struct jit_sym *ns = realloc(syms, nc * sizeof(*ns));
			if (!ns)
				break;
			syms = ns;
			cap = nc;
		}
		syms[n].addr = a;
		syms[n].size = sz;
		syms[n].name = strdup(*name ? name : "jit");
		if (syms[n].name)
			n++;
	}
	fclose(f);
	if (n)
		qsort(syms, n, sizeof(*syms), sym_cmp);
	for (struct jit_version *v = jit.versions; v; v = v->next) {
		const struct jit_region *r = v->r;
		size_t lo = 0, cnt = 0;
		while (lo < n && syms[lo].addr < r->start)
			lo++;
		while (lo + cnt < n && syms[lo + cnt].addr < r->start + r->len)
			cnt++;
		if (!cnt)
			continue;
		int fd = open(v->path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			write_elf(fd, r, syms + lo, cnt);
			close(fd);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(syms[i].name);
	free(syms);
}
