/* tests/unit/test_process.c - lib/image/process.c: mmap replacement,
 * munmap splitting, exec, fork copies, and the image built from the maps
 * (checked against the bytes of the mapped file, read with stdio). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/process.h"
#include "t.h"

static int maps_are(const struct hwt_process *p, size_t n, const uint64_t *se)
{
	if (hwt_process_nmaps(p) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct hwt_process_map *m = hwt_process_map_at(p, i);
		if (m->start != se[2 * i] || m->end != se[2 * i + 1])
			return 0;
	}
	return 1;
}

static void t_mmap_replace(void)
{
	struct hwt_process *p = hwt_process_alloc(7);
	CHECK(p);
	CHECK_EQ(hwt_process_mmap(p, 0x1000, 0x3000, 0, PROT_EXEC, "/a"), 0);
	CHECK_EQ(hwt_process_mmap(p, 0x10000, 0x1000, 0, PROT_EXEC, "/c"), 0);
	/* covers the middle of /a: /a is split, the new map sits between */
	CHECK_EQ(hwt_process_mmap(p, 0x2000, 0x1000, 0x5000, PROT_EXEC, "/b"), 0);
	static const uint64_t want[] = {0x1000, 0x2000, 0x2000,	 0x3000,
					0x3000, 0x4000, 0x10000, 0x11000};
	CHECK(maps_are(p, 4, want));
	const struct hwt_process_map *m = hwt_process_find(p, 0x3800);
	CHECK(m && !strcmp(m->path, "/a") && m->pgoff == 0x2000);
	m = hwt_process_find(p, 0x2fff);
	CHECK(m && !strcmp(m->path, "/b") && m->pgoff == 0x5000);
	CHECK(!hwt_process_find(p, 0x4000));
	CHECK(!hwt_process_find(p, 0xfff));
	/* a map over everything replaces everything */
	CHECK_EQ(hwt_process_mmap(p, 0, 0x20000, 0, 0, "/d"), 0);
	CHECK_EQ(hwt_process_nmaps(p), 1);
	hwt_process_free(p);
}

static void t_munmap(void)
{
	struct hwt_process *p = hwt_process_alloc(1);
	CHECK_EQ(hwt_process_mmap(p, 0x1000, 0x4000, 0x100000, PROT_EXEC, "/a"), 0);
	uint64_t g0 = hwt_process_generation(p);
	CHECK_EQ(hwt_process_munmap(p, 0x2000, 0x1000), 0);
	CHECK(hwt_process_generation(p) != g0);
	static const uint64_t want[] = {0x1000, 0x2000, 0x3000, 0x5000};
	CHECK(maps_are(p, 2, want));
	CHECK_EQ(hwt_process_map_at(p, 1)->pgoff, 0x102000);
	CHECK_EQ(hwt_process_munmap(p, 0x0, 0x1800), 0); /* head cut */
	static const uint64_t want2[] = {0x1800, 0x2000, 0x3000, 0x5000};
	CHECK(maps_are(p, 2, want2));
	CHECK_EQ(hwt_process_map_at(p, 0)->pgoff, 0x100800);
	CHECK_EQ(hwt_process_munmap(p, 0x4000, 0x10000), 0); /* tail cut */
	static const uint64_t want3[] = {0x1800, 0x2000, 0x3000, 0x4000};
	CHECK(maps_are(p, 2, want3));
	CHECK_EQ(hwt_process_munmap(p, 0, 0x100000), 0);
	CHECK_EQ(hwt_process_nmaps(p), 0);
	hwt_process_free(p);
}

static void t_exec_fork(void)
{
	struct hwt_process *p = hwt_process_alloc(10);
	CHECK_EQ(hwt_process_mmap(p, 0x1000, 0x1000, 0, PROT_EXEC, "/old"), 0);
	struct hwt_process *c = hwt_process_fork(p, 11);
	CHECK(c && hwt_process_pid(c) == 11);
	hwt_process_exec(p);
	CHECK_EQ(hwt_process_nmaps(p), 0);
	CHECK_EQ(hwt_process_nmaps(c), 1); /* the child keeps its copy */
	CHECK(!strcmp(hwt_process_map_at(c, 0)->path, "/old"));
	CHECK_EQ(hwt_process_mmap(c, 0x1000, 0x1000, 0, PROT_EXEC, "/new"), 0);
	CHECK_EQ(hwt_process_nmaps(c), 1);
	CHECK(!strcmp(hwt_process_map_at(c, 0)->path, "/new"));
	hwt_process_free(p);
	hwt_process_free(c);
}

/* The image built from the maps reads the same bytes as the file. */
static void t_image(void)
{
	const char *path = "/proc/self/exe";
	FILE *f = fopen(path, "rb");
	CHECK(f);
	if (!f)
		return;
	static uint8_t want[0x2000];
	size_t n = fread(want, 1, sizeof(want), f);
	fclose(f);
	CHECK_EQ(n, sizeof(want));
	struct hwt_process *p = hwt_process_alloc(1);
	/* map a non-ELF-looking view: offset 0x1000 of the file, not exec */
	char real[4096];
	ssize_t rl = readlink(path, real, sizeof(real) - 1);
	CHECK(rl > 0);
	real[rl > 0 ? rl : 0] = 0;
	CHECK_EQ(hwt_process_mmap(p, 0x7000000, 0x1000, 0x1000, PROT_READ, real), 0);
	size_t missing = 99;
	const struct hwt_image *img = hwt_process_image(p, &missing);
	CHECK(img);
	uint8_t got[16];
	CHECK(hwt_image_read(img, 0x7000000, got, sizeof(got)) == HWT_ERR_NOMAP); /* not exec */
	/* a memory blob with exec rights, split by munmap */
	static const uint8_t blob[32] = {0x90, 0x90, 0xc3, 1, 2, 3, 4, 5, 6, 7, 8, 9};
	CHECK_EQ(hwt_process_map_mem(p, 0x9000000, blob, sizeof(blob), "[vdso]"), 0);
	CHECK_EQ(hwt_process_munmap(p, 0x9000004, 4), 0);
	img = hwt_process_image(p, &missing);
	CHECK(img);
	CHECK_EQ(hwt_image_read(img, 0x9000000, got, 4), 4);
	CHECK(!memcmp(got, blob, 4));
	CHECK(hwt_image_read(img, 0x9000004, got, 1) == HWT_ERR_NOMAP);
	CHECK(hwt_image_read(img, 0x9000008, got, 4) > 0);
	CHECK(!memcmp(got, blob + 8, 4));
	/* an unreadable file counts as missing */
	CHECK_EQ(hwt_process_mmap(p, 0x5000000, 0x1000, 0, PROT_EXEC, "/nonexistent/x"), 0);
	img = hwt_process_image(p, &missing);
	CHECK(img);
	CHECK_EQ(missing, 1);
	hwt_process_free(p);
}

int main(void)
{
	RUN(t_mmap_replace);
	RUN(t_munmap);
	RUN(t_exec_fork);
	RUN(t_image);
	return t_done();
}
