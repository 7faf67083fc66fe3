/* lib/image/elf.c - loading ELF files into an image (libelf).
 *
 * hwt_image_add_elf maps every PT_LOAD segment's file-backed bytes
 * (p_filesz; the zero-filled rest holds no code) at p_vaddr + bias and
 * reads the symbol table once (.symtab, or .dynsym when stripped) into a
 * sorted array owned by the image's file entry.  Names are copied into
 * one block per file.  Only function and object symbols with an address
 * are kept.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "image_int.h"

static int sym_cmp(const void *a, const void *b)
{
	const struct img_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* prefer sized symbols last so that lookups pick them */
	return (x->size > y->size) - (x->size < y->size);
}

/* Entry i of a symbol table if it names a defined function, object or
 * untyped symbol: its name (in the string table), else NULL. */
static const char *table_sym(Elf *elf, Elf_Data *d, const GElf_Shdr *sh, size_t i, GElf_Sym *s)
{
	if (!gelf_getsym(d, (int)i, s) || !s->st_value || s->st_shndx == SHN_UNDEF)
		return NULL;
	int t = GELF_ST_TYPE(s->st_info);
	if (t != STT_FUNC && t != STT_OBJECT && t != STT_NOTYPE)
		return NULL;
	const char *nm = elf_strptr(elf, sh->sh_link, s->st_name);
	return nm && *nm ? nm : NULL;
}

static void load_table(struct img_file *f, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return;
	size_t n = sh->sh_size / sh->sh_entsize, names = 0, k = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *nm = table_sym(elf, d, sh, i, &s);
		if (!nm)
			continue;
		names += strlen(nm) + 1;
		k++;
	}
	if (!k)
		return;
	struct img_sym *syms = malloc(k * sizeof(*syms) + names);
	if (!syms)
		return;
	char *pool = (char *)(syms + k);
	k = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *nm = table_sym(elf, d, sh, i, &s);
		if (!nm)
			continue;
		size_t l = strlen(nm) + 1;
		memcpy(pool, nm, l);
		syms[k++] = (struct img_sym){.addr = s.st_value, .size = s.st_size, .name = pool};
		pool += l;
	}
	qsort(syms, k, sizeof(*syms), sym_cmp);
	f->syms = syms;
	f->nsyms = k;
}

/* The first section of the given type, or NULL. */
static Elf_Scn *find_table(Elf *elf, unsigned type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

/* A separate debug file's .symtab (names are copied: the file closes). */
static int take_debug_syms(void *arg, Elf *dbg)
{
	struct img_file *f = arg;
	GElf_Shdr sh;
	Elf_Scn *scn = find_table(dbg, SHT_SYMTAB, &sh);
	if (scn)
		load_table(f, dbg, scn, &sh);
	return f->nsyms != 0;
}

/* Symbols: the file's .symtab, else that of its separate debug file
 * (debugfile.c), else its .dynsym. */
static void load_syms(struct img_file *f, Elf *elf, const char *dirs)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	f->syms_loaded = 1;
	if ((scn = find_table(elf, SHT_SYMTAB, &sh)))
		load_table(f, elf, scn, &sh);
	if (!f->nsyms)
		img_debug_each(dirs, f->path, elf, take_debug_syms, f);
	if (!f->nsyms && (scn = find_table(elf, SHT_DYNSYM, &sh)))
		load_table(f, elf, scn, &sh);
}

int hwt_image_add_elf(struct hwt_image *img, const char *path, uint64_t bias)
{
	if (!img || !path)
		return HWT_ERR_INVALID;
	int fi = img_file_get(img, path);
	if (fi < 0)
		return fi;
	struct img_file *f = &img->files[fi];
	if (!f->map)
		return HWT_ERR_BAD_FILE;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)f->map, f->size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		return HWT_ERR_BAD_FILE;
	}
	size_t nph;
	int err = 0;
	if (elf_getphdrnum(elf, &nph)) {
		elf_end(elf);
		return HWT_ERR_BAD_FILE;
	}
	for (size_t i = 0; i < nph && !err; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (ph.p_offset > f->size || ph.p_filesz > f->size - ph.p_offset) {
			err = HWT_ERR_BAD_FILE;
			break;
		}
		err =
		    img_insert(img, ph.p_vaddr + bias, ph.p_filesz, f->map + ph.p_offset, fi, bias);
		f = &img->files[fi];
	}
	if (!err && !f->syms_loaded)
		load_syms(f, elf, img->debug_dirs);
	elf_end(elf);
	return err;
}
