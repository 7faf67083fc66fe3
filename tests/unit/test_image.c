/* tests/unit/test_image.c - image sections, overrides, reads, ELF.
 *
 * Oracles: the bytes of the files written here, and for ELF loading the
 * test program's own code as mapped by the dynamic loader (the bytes at
 * &main in memory) and its load bias from dl_iterate_phdr.
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwt/error.h"
#include "hwt/image.h"
#include "t.h"

static char path_a[64], path_b[64];
int main(void);

static void write_file(char *path, const char *tmpl, uint8_t fill, size_t n)
{
	strcpy(path, tmpl);
	int fd = mkstemp(path);
	uint8_t buf[256];
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(fill + i);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
		abort();
	close(fd);
}

static void t_file_sections(void)
{
	struct hwt_image *img = hwt_image_alloc();
	uint8_t buf[64];
	struct hwt_image_span sp;
	CHECK(img);
	CHECK_EQ(hwt_image_add_file(img, path_a, 0, HWT_IMAGE_TO_END, 0x1000), 0);
	CHECK_EQ(hwt_image_read(img, 0x1000, buf, 4), 4);
	CHECK(buf[0] == 0x10 && buf[3] == 0x13);
	CHECK_EQ(hwt_image_read(img, 0x1000 + 60, buf, 8), 4); /* file is 64 bytes */
	CHECK_EQ(hwt_image_read(img, 0xfff, buf, 1), HWT_ERR_NOMAP);
	CHECK_EQ(hwt_image_read(img, 0x1040, buf, 1), HWT_ERR_NOMAP);
	CHECK_EQ(hwt_image_lookup(img, 0x1010, &sp), 0);
	CHECK(sp.avail == 48 && sp.data[0] == 0x20);
	/* override the middle with file b (from offset 4, 8 bytes) */
	uint32_t old_id = sp.id;
	CHECK_EQ(hwt_image_add_file(img, path_b, 4, 8, 0x1010), 0);
	CHECK_EQ(hwt_image_npieces(img), 3);
	CHECK_EQ(hwt_image_read(img, 0x100e, buf, 12), 12);
	CHECK(buf[0] == 0x1e && buf[1] == 0x1f);   /* a */
	CHECK(buf[2] == 0x84 && buf[9] == 0x8b);   /* b[4..11] */
	CHECK(buf[10] == 0x28 && buf[11] == 0x29); /* a again */
	/* which file and offset: b from 4 at 0x1010, a around it */
	const char *path;
	uint64_t off;
	CHECK_EQ(hwt_image_where(img, 0x1013, &path, &off), 0);
	CHECK(!strcmp(path, path_b) && off == 7);
	CHECK_EQ(hwt_image_where(img, 0x1019, &path, &off), 0);
	CHECK(!strcmp(path, path_a) && off == 0x19);
	CHECK_EQ(hwt_image_where(img, 0x1040, &path, &off), HWT_ERR_NOMAP);
	CHECK_EQ(hwt_image_lookup(img, 0x1000, &sp), 0);
	CHECK(sp.avail == 0x10 && sp.id != old_id);
	/* a later section covering everything wins everywhere */
	CHECK_EQ(hwt_image_add_file(img, path_b, 0, HWT_IMAGE_TO_END, 0xff0), 0);
	CHECK_EQ(hwt_image_npieces(img), 2);
	CHECK_EQ(hwt_image_read(img, 0x1000, buf, 1), 1);
	CHECK(buf[0] == 0x90);
	CHECK_EQ(hwt_image_add_file(img, path_b, 65, 1, 0), HWT_ERR_INVALID);
	CHECK_EQ(hwt_image_add_file(img, "/nonexistent/x", 0, 1, 0), HWT_ERR_IO);
	hwt_image_free(img);
}

static void t_cross_boundary(void)
{
	/* the corpus test 'truncated': one file mapped twice, split */
	struct hwt_image *img = hwt_image_alloc();
	uint8_t buf[15];
	CHECK_EQ(hwt_image_add_file(img, path_a, 0, HWT_IMAGE_TO_END, 0x1000), 0);
	CHECK_EQ(hwt_image_add_file(img, path_a, 2, HWT_IMAGE_TO_END, 0x1002), 0);
	CHECK_EQ(hwt_image_npieces(img), 2);
	CHECK_EQ(hwt_image_read(img, 0x1001, buf, sizeof(buf)), 15);
	for (int i = 0; i < 15; i++)
		CHECK(buf[i] == (uint8_t)(0x11 + i));
	hwt_image_free(img);
}

static void t_mem(void)
{
	struct hwt_image *img = hwt_image_alloc();
	uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, buf[8];
	CHECK_EQ(hwt_image_add_mem(img, data, sizeof(data), 0x5000), 0);
	data[0] = 99; /* copied */
	CHECK_EQ(hwt_image_read(img, 0x5000, buf, 8), 8);
	CHECK(buf[0] == 1 && buf[7] == 8);
	CHECK_EQ(hwt_image_add_mem(img, data, 2, 0x4fff), 0);
	CHECK_EQ(hwt_image_read(img, 0x4fff, buf, 4), 4);
	CHECK(buf[0] == 99 && buf[1] == 2 && buf[2] == 2 && buf[3] == 3);
	const char *path;
	uint64_t off;
	CHECK_EQ(hwt_image_where(img, 0x5001, &path, &off), HWT_ERR_NOMAP); /* not a file */
	hwt_image_free(img);
}

static uint64_t exe_bias;
static int find_exe(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	exe_bias = info->dlpi_addr; /* the first entry is the executable */
	return 1;
}

static void t_elf_self(void)
{
	struct hwt_image *img = hwt_image_alloc();
	uint8_t buf[32];
	const char *name = NULL;
	uint64_t off = 1;
	dl_iterate_phdr(find_exe, NULL);
	CHECK_EQ(hwt_image_add_elf(img, "/proc/self/exe", exe_bias), 0);
	uint64_t at = (uint64_t)(uintptr_t)&main;
	CHECK_EQ(hwt_image_read(img, at, buf, sizeof(buf)), (int)sizeof(buf));
	CHECK(!memcmp(buf, (const void *)(uintptr_t)at, sizeof(buf)));
	CHECK_EQ(hwt_image_symbol(img, at, &name, &off), 0);
	CHECK(name && !strcmp(name, "main") && off == 0);
	CHECK_EQ(hwt_image_symbol(img, (uint64_t)(uintptr_t)&t_mem + 3, &name, &off), 0);
	CHECK(name && !strcmp(name, "t_mem") && off == 3);
	CHECK_EQ(hwt_image_add_elf(img, path_a, 0), HWT_ERR_BAD_FILE);
	/* hwt_image_symbol_end: hwt_image_symbol answers the same (name,
	 * offset moving along, or no symbol) up to it, across main's
	 * neighbours; symbols start at main and t_mem */
	int changes = 0;
	for (uint64_t a = at - 2048; a < at + 2048; a += 7) {
		uint64_t end = 0;
		const char *n0 = NULL, *n1 = NULL;
		uint64_t o0 = 0, o1 = 0;
		CHECK_EQ(hwt_image_symbol_end(img, a, &end), 0);
		CHECK(end > a);
		int r0 = hwt_image_symbol(img, a, &n0, &o0);
		for (uint64_t b = a + 1; b < end && b < a + 512; b++) {
			int r1 = hwt_image_symbol(img, b, &n1, &o1);
			if (r1 != r0 || (!r0 && (n1 != n0 || o1 != o0 + (b - a)))) {
				CHECK(!"symbol changes before hwt_image_symbol_end");
				break;
			}
		}
		changes += end <= a + 7;
	}
	CHECK(changes > 0); /* (it does stop at the symbols' starts) */
	uint64_t end = 0;
	CHECK_EQ(hwt_image_symbol_end(img, at, &end), 0);
	CHECK(end > at);
	CHECK_EQ(hwt_image_symbol(img, end - 1, &name, &off), 0);
	CHECK(name && !strcmp(name, "main") && off == end - 1 - at);
	CHECK(hwt_image_symbol(img, end, &name, &off) || strcmp(name, "main") || off != end - at);
	CHECK_EQ(hwt_image_symbol_end(NULL, at, &end), HWT_ERR_INVALID);
	hwt_image_free(img);
}

int main(void)
{
	write_file(path_a, "/tmp/hwt-img-a-XXXXXX", 0x10, 64);
	write_file(path_b, "/tmp/hwt-img-b-XXXXXX", 0x80, 64);
	RUN(t_file_sections);
	RUN(t_cross_boundary);
	RUN(t_mem);
	RUN(t_elf_self);
	unlink(path_a);
	unlink(path_b);
	return t_done();
}
