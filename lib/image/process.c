/* lib/image/process.c - a process's address space from sideband records.
 *
 * Design: a sorted array of non-overlapping mappings; mmap cuts the range
 * it covers out of existing mappings (splitting one if needed) and
 * inserts itself, munmap only cuts, exec clears, fork deep-copies.  Every
 * change bumps the generation and drops the cached image; the image is
 * rebuilt on demand: ELF files once per path at the bias implied by their
 * lowest executable mapping (hwt_image_add_elf: code + symbols), other
 * files per mapping (hwt_image_add_file), blobs per mapping
 * (hwt_image_add_mem).  Mappings known not to be executable are left out
 * of the image.  Paths and blobs are owned by their mapping.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/process.h"

struct pmap {
	struct hwt_process_map m;
	char *path;
	void *blob;
	size_t blob_size;
};

struct hwt_process {
	uint32_t pid;
	struct pmap *v;
	size_t n, cap;
	uint64_t gen;
	struct hwt_image *img;
	size_t missing;
	char *debug_dirs; /* hwt_process_set_debug_dirs (NULL: none) */
};

struct hwt_process *hwt_process_alloc(uint32_t pid)
{
	struct hwt_process *p = calloc(1, sizeof(*p));
	if (p)
		p->pid = pid;
	return p;
}

static void pmap_fini(struct pmap *m)
{
	free(m->path);
	free(m->blob);
}

static void drop_image(struct hwt_process *p)
{
	hwt_image_free(p->img);
	p->img = NULL;
	p->gen++;
}

void hwt_process_free(struct hwt_process *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		pmap_fini(&p->v[i]);
	free(p->v);
	hwt_image_free(p->img);
	free(p->debug_dirs);
	free(p);
}

int hwt_process_set_debug_dirs(struct hwt_process *p, const char *dirs)
{
	char *d = NULL;
	if (dirs && *dirs && !(d = strdup(dirs)))
		return HWT_ERR_NOMEM;
	free(p->debug_dirs);
	p->debug_dirs = d;
	drop_image(p);
	return 0;
}

uint32_t hwt_process_pid(const struct hwt_process *p)
{
	return p->pid;
}

static int pmap_copy(struct pmap *dst, const struct pmap *src)
{
	*dst = *src;
	dst->path = NULL;
	dst->blob = NULL;
	if (src->path && !(dst->path = strdup(src->path)))
		return HWT_ERR_NOMEM;
	if (src->blob) {
		dst->blob = malloc(src->blob_size ? src->blob_size : 1);
		if (!dst->blob) {
			free(dst->path);
			dst->path = NULL;
			return HWT_ERR_NOMEM;
		}
		memcpy(dst->blob, src->blob, src->blob_size);
	}
	dst->m.path = dst->path;
	dst->m.data = dst->blob;
	return 0;
}

static int reserve(struct hwt_process *p, size_t more)
{
	if (p->n + more <= p->cap)
		return 0;
	size_t nc = p->cap ? p->cap * 2 : 16;
	while (nc < p->n + more)
		nc *= 2;
	struct pmap *nv = realloc(p->v, nc * sizeof(*nv));
	if (!nv)
		return HWT_ERR_NOMEM;
	p->v = nv;
	p->cap = nc;
	return 0;
}

struct hwt_process *hwt_process_fork(const struct hwt_process *parent, uint32_t pid)
{
	struct hwt_process *p = hwt_process_alloc(pid);
	if (!p)
		return NULL;
	if (reserve(p, parent->n) || hwt_process_set_debug_dirs(p, parent->debug_dirs)) {
		hwt_process_free(p);
		return NULL;
	}
	for (size_t i = 0; i < parent->n; i++) {
		if (pmap_copy(&p->v[i], &parent->v[i])) {
			hwt_process_free(p);
			return NULL;
		}
		p->n = i + 1;
	}
	return p;
}

/* Remove [a, b) from every mapping. */
static int cut(struct hwt_process *p, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < p->n; i++) {
		struct pmap *m = &p->v[i];
		if (m->m.end <= a || m->m.start >= b)
			continue;
		if (m->m.start < a && m->m.end > b) { /* split in two */
			if (reserve(p, 1))
				return HWT_ERR_NOMEM;
			m = &p->v[i];
			struct pmap hi;
			if (pmap_copy(&hi, m))
				return HWT_ERR_NOMEM;
			uint64_t d = b - m->m.start;
			hi.m.start = b;
			hi.m.pgoff += d;
			if (hi.blob) {
				memmove(hi.blob, (char *)hi.blob + d, hi.blob_size - d);
				hi.blob_size -= d;
			}
			m->m.end = a;
			if (m->blob)
				m->blob_size = a - m->m.start;
			memmove(&p->v[i + 2], &p->v[i + 1], (p->n - i - 1) * sizeof(*p->v));
			p->v[i + 1] = hi;
			p->n++;
			return 0;
		}
		if (m->m.start >= a && m->m.end <= b) { /* all of it */
			pmap_fini(m);
			memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof(*p->v));
			p->n--;
			i--;
			continue;
		}
		if (m->m.start < a) { /* keep the low part */
			m->m.end = a;
			if (m->blob)
				m->blob_size = a - m->m.start;
		} else { /* keep the high part */
			uint64_t d = b - m->m.start;
			m->m.start = b;
			m->m.pgoff += d;
			if (m->blob) {
				memmove(m->blob, (char *)m->blob + d, m->blob_size - d);
				m->blob_size -= d;
			}
		}
	}
	return 0;
}

static int insert(struct hwt_process *p, struct pmap *nm)
{
	int err = cut(p, nm->m.start, nm->m.end);
	if (!err)
		err = reserve(p, 1);
	if (err) {
		pmap_fini(nm);
		return err;
	}
	size_t i = 0;
	while (i < p->n && p->v[i].m.start < nm->m.start)
		i++;
	memmove(&p->v[i + 1], &p->v[i], (p->n - i) * sizeof(*p->v));
	nm->m.path = nm->path;
	nm->m.data = nm->blob;
	p->v[i] = *nm;
	p->n++;
	drop_image(p);
	return 0;
}

int hwt_process_mmap(struct hwt_process *p, uint64_t addr, uint64_t len, uint64_t pgoff,
		     uint32_t prot, const char *path)
{
	if (!p || !len || addr + len < addr || !path)
		return HWT_ERR_INVALID;
	struct pmap nm = {.m = {.start = addr, .end = addr + len, .pgoff = pgoff, .prot = prot}};
	if (!(nm.path = strdup(path)))
		return HWT_ERR_NOMEM;
	return insert(p, &nm);
}

int hwt_process_map_mem(struct hwt_process *p, uint64_t addr, const void *data, size_t size,
			const char *name)
{
	if (!p || !size || addr + size < addr || !data)
		return HWT_ERR_INVALID;
	struct pmap nm = {.m = {.start = addr, .end = addr + size, .prot = PROT_EXEC | PROT_READ}};
	nm.path = strdup(name ? name : "[mem]");
	nm.blob = malloc(size);
	nm.blob_size = size;
	if (!nm.path || !nm.blob) {
		pmap_fini(&nm);
		return HWT_ERR_NOMEM;
	}
	memcpy(nm.blob, data, size);
	return insert(p, &nm);
}

int hwt_process_munmap(struct hwt_process *p, uint64_t addr, uint64_t len)
{
	if (!p || addr + len < addr)
		return HWT_ERR_INVALID;
	int err = cut(p, addr, addr + len);
	drop_image(p);
	return err;
}

void hwt_process_exec(struct hwt_process *p)
{
	for (size_t i = 0; i < p->n; i++)
		pmap_fini(&p->v[i]);
	p->n = 0;
	drop_image(p);
}

size_t hwt_process_nmaps(const struct hwt_process *p)
{
	return p->n;
}

const struct hwt_process_map *hwt_process_map_at(const struct hwt_process *p, size_t i)
{
	return i < p->n ? &p->v[i].m : NULL;
}

const struct hwt_process_map *hwt_process_find(const struct hwt_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->v[mid].m.end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->n && p->v[lo].m.start <= addr && addr < p->v[lo].m.end)
		return &p->v[lo].m;
	return NULL;
}

uint64_t hwt_process_generation(const struct hwt_process *p)
{
	return p->gen;
}

static int is_exec(const struct pmap *m)
{
	return !m->m.prot || (m->m.prot & PROT_EXEC);
}

/* Bias at which the ELF file at path must be loaded so that file offset
 * pgoff lands at start.  0 and *bias, or an error (not ELF, no segment). */
static int elf_bias(const char *path, uint64_t pgoff, uint64_t start, uint64_t *bias)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return HWT_ERR_IO;
	int err = HWT_ERR_BAD_FILE;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n;
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			uint64_t lo = ph.p_offset & ~(uint64_t)0xfff;
			if (pgoff >= lo && pgoff < ph.p_offset + ph.p_filesz) {
				*bias = start - (ph.p_vaddr + pgoff - ph.p_offset);
				err = 0;
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

const struct hwt_image *hwt_process_image(struct hwt_process *p, size_t *missing)
{
	if (p->img) {
		if (missing)
			*missing = p->missing;
		return p->img;
	}
	struct hwt_image *img = hwt_image_alloc();
	if (!img || hwt_image_set_debug_dirs(img, p->debug_dirs)) {
		hwt_image_free(img);
		return NULL;
	}
	p->missing = 0;
	uint8_t *done = calloc(p->n ? p->n : 1, 1);
	if (!done) {
		hwt_image_free(img);
		return NULL;
	}
	for (size_t i = 0; i < p->n; i++) {
		struct pmap *m = &p->v[i];
		if (done[i] || !is_exec(m))
			continue;
		if (m->blob) {
			hwt_image_add_mem(img, m->blob, m->blob_size, m->m.start);
			continue;
		}
		uint64_t bias;
		int err = elf_bias(m->path, m->m.pgoff, m->m.start, &bias);
		if (!err && !hwt_image_add_elf(img, m->path, bias)) {
			/* every executable mapping of this file is covered */
			for (size_t j = i; j < p->n; j++)
				if (!p->v[j].blob && !strcmp(p->v[j].path, m->path))
					done[j] = 1;
			continue;
		}
		if (err == HWT_ERR_IO ||
		    hwt_image_add_file(img, m->path, m->m.pgoff, m->m.end - m->m.start, m->m.start))
			p->missing++;
	}
	free(done);
	p->img = img;
	if (missing)
		*missing = p->missing;
	return img;
}
