/* tools/script_perf.c - what "hwt script" and "hwt report" share around
 * the library's recording decoder (hwt/decode.h): running it on a file
 * with the CLI's messages, and a symbol cache for the printers.
 *
 * The engine itself (sideband, queues, the formats' decoders) is in
 * lib/decode/; this file only opens the file and turns the decoder's
 * errors into the CLI's messages.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "hwt/decode.h"
#include "hwt/error.h"
#include "hwt/perf_data.h"
#include "hwt/x86.h"
#include "script_perf.h"

/* ---------------- symbol cache ---------------- */
#define SC_SIZE 8192
#define INTERN_BUCKETS 4096

struct intern {
	struct intern *next;
	char name[];
};

struct sc_entry {
	uint64_t ip;
	const char *name;
	uint64_t off;
	uint64_t end; /* have_end: where the name may change */
	uint8_t valid, have_end;
};

struct sp_symcache {
	const struct hwt_image *img;
	struct sc_entry e[SC_SIZE];
	struct intern *b[INTERN_BUCKETS];
};

struct sp_symcache *sp_symcache_alloc(void)
{
	return calloc(1, sizeof(struct sp_symcache));
}

void sp_symcache_free(struct sp_symcache *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < INTERN_BUCKETS; i++)
		for (struct intern *n = sc->b[i], *nx; n; n = nx) {
			nx = n->next;
			free(n);
		}
	free(sc);
}

static const char *intern(struct sp_symcache *sc, const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = s; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	struct intern **b = &sc->b[h % INTERN_BUCKETS];
	for (struct intern *n = *b; n; n = n->next)
		if (!strcmp(n->name, s))
			return n->name;
	size_t len = strlen(s);
	struct intern *n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return NULL;
	memcpy(n->name, s, len + 1);
	n->next = *b;
	*b = n;
	return n->name;
}

const char *sp_symbol(struct sp_symcache *sc, const struct hwt_image *img, uint64_t ip,
		      uint64_t *off)
{
	if (sc->img != img) {
		memset(sc->e, 0, sizeof(sc->e));
		sc->img = img;
	}
	struct sc_entry *e = &sc->e[(ip ^ (ip >> 13)) % SC_SIZE];
	if (!e->valid || e->ip != ip) {
		const char *name = NULL;
		uint64_t o = 0;
		e->ip = ip;
		e->valid = 1;
		e->have_end = 0;
		e->name = NULL;
		e->off = 0;
		const char *path;
		if (img && !hwt_image_symbol(img, ip, &name, &o) && name) {
			e->name = intern(sc, name);
			e->off = o;
		} else if (img && !hwt_image_where(img, ip, &path, &o)) {
			/* no symbol: "[file]+0xoffset", the offset in the file */
			char buf[256];
			const char *base = strrchr(path, '/');
			snprintf(buf, sizeof(buf), "[%s]", base ? base + 1 : path);
			e->name = intern(sc, buf);
			e->off = o;
		}
	}
	*off = e->off;
	return e->name;
}

const char *sp_symbol_end(struct sp_symcache *sc, const struct hwt_image *img, uint64_t ip,
			  uint64_t *end)
{
	uint64_t off;
	const char *name = sp_symbol(sc, img, ip, &off);
	struct sc_entry *e = &sc->e[(ip ^ (ip >> 13)) % SC_SIZE];
	if (!e->have_end) {
		if (!img || hwt_image_symbol_end(img, ip, &e->end))
			e->end = ip + 1; /* (no image: one address at a time) */
		e->have_end = 1;
	}
	*end = e->end;
	return name;
}

unsigned sp_insn_size(const struct hwt_image *img, uint64_t ip, int mode)
{
	uint8_t buf[15];
	int n = img ? hwt_image_read(img, ip, buf, sizeof(buf)) : -1;
	struct hwt_x86_insn in;
	if (n <= 0 || hwt_x86_decode(buf, (size_t)n, ip, mode ? mode : 64, &in))
		return 0;
	return in.size;
}

uint32_t sp_range_piece(struct sp_symcache *sc, const struct hwt_image *img,
			const struct hwt_dec_range *r, uint64_t *ip, uint32_t left,
			const char **name)
{
	uint64_t end;
	*name = sp_symbol_end(sc, img, *ip, &end);
	if (r->last < end || left <= 1)
		return left; /* (the last instruction is at r->last) */
	uint32_t k = 0;
	uint64_t at = *ip;
	while (k < left && at < end) {
		unsigned sz = sp_insn_size(img, at, r->mode);
		if (!sz)
			return left; /* (cannot happen: the decoder read them) */
		at += sz;
		k++;
	}
	*ip = at;
	return k;
}

/* Progress: the file offset where each AUXTRACE chunk ends (a first pass
 * over the records; files only), so "chunks decoded so far" (the
 * decoder's nr_aux) gives the bytes behind us. */
static uint64_t *chunk_ends(struct hwt_perf_reader *r, size_t *n)
{
	uint64_t *ends = NULL;
	size_t cap = 0;
	struct hwt_perf_record rec;
	*n = 0;
	while (hwt_perf_reader_next(r, &rec) == 1) {
		if (rec.type != HWT_PERF_RECORD_AUXTRACE)
			continue;
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 256;
			uint64_t *nv = realloc(ends, nc * sizeof(*nv));
			if (!nv)
				break;
			ends = nv;
			cap = nc;
		}
		ends[(*n)++] = rec.file_offset + rec.size + rec.aux_size;
	}
	hwt_perf_reader_rewind(r);
	return ends;
}

/* the CLI's choice (one run per process): -j, --no-batch,
 * --no-path-cache (--batch: the default, as in the library's config) */
static unsigned dec_jobs, dec_flags;
/* --debug-dir folders, colon-separated ("": $HWT_DEBUG_DIR) */
static char dec_debug_dirs[8192];

int sp_no_batch(void)
{
	return !!(dec_flags & HWT_DECODER_NO_BATCH);
}

void sp_set_decode(unsigned jobs, unsigned flags)
{
	dec_jobs = jobs;
	dec_flags = flags;
}

int sp_parse_decode_opt(const char *cmd, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = NULL;
	if (!strcmp(a, "--no-path-cache")) {
		dec_flags |= HWT_DECODER_NO_PATH_CACHE;
		return 1;
	}
	if (!strcmp(a, "--no-batch")) {
		dec_flags |= HWT_DECODER_NO_BATCH;
		return 1;
	}
	if (!strcmp(a, "--batch")) {
		dec_flags &= ~(unsigned)HWT_DECODER_NO_BATCH;
		return 1;
	}
	if (!strcmp(a, "--debug-dir") || !strncmp(a, "--debug-dir=", 12)) {
		if (a[11] == '=') {
			v = a + 12;
		} else if (*i + 1 < argc) {
			v = argv[++*i];
		} else {
			cli_err(
			    cmd,
			    "--debug-dir needs a folder (like /usr/lib/debug: with .build-id/)");
			return -1;
		}
		size_t n = strlen(dec_debug_dirs);
		if (!*v || n + strlen(v) + 2 > sizeof(dec_debug_dirs)) {
			cli_err(cmd, "--debug-dir '%s': %s", v,
				*v ? "too many or too long folders" : "empty folder name");
			return -1;
		}
		snprintf(dec_debug_dirs + n, sizeof(dec_debug_dirs) - n, "%s%s", n ? ":" : "", v);
		return 1;
	}
	if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
		if (*i + 1 >= argc) {
			cli_err(cmd, "%s needs a number of threads (1: no threads)", a);
			return -1;
		}
		v = argv[++*i];
	} else if (!strncmp(a, "--jobs=", 7)) {
		v = a + 7;
	} else if (!strncmp(a, "-j", 2) && a[2] >= '0' && a[2] <= '9') {
		v = a + 2;
	} else {
		return 0;
	}
	unsigned long long n;
	if (cli_parse_u64(v, &n) || !n || n > 256) {
		cli_err(cmd, "-j needs a number of threads from 1 to 256, not '%s'", v);
		return -1;
	}
	dec_jobs = (unsigned)n;
	return 1;
}

int sp_run(const char *path, const char *cmd, const struct hwt_decode_consumer *c)
{
	return sp_run_progress(path, cmd, c, NULL);
}

int sp_run_progress(const char *path, const char *cmd, const struct hwt_decode_consumer *c,
		    struct progress *pg)
{
	char errbuf[256] = "";
	struct hwt_perf_reader *r = NULL;
	int err = hwt_perf_reader_open(&r, path, errbuf, sizeof(errbuf));
	if (err) {
		if (err == HWT_ERR_IO)
			cli_err(cmd,
				"cannot open '%s': %s (record one with 'hwt record' or name the "
				"file with -i)",
				path, strerror(errno));
		else
			cli_err(cmd, "'%s' is not a valid perf.data file: %s", path, errbuf);
		return 2;
	}
	size_t nends = 0;
	uint64_t *ends = pg ? chunk_ends(r, &nends) : NULL;
	struct hwt_decoder_config cfg;
	hwt_decoder_config_init(&cfg);
	cfg.reader = r;
	cfg.consumer = c;
	cfg.jobs = dec_jobs;
	cfg.flags = dec_flags;
	cfg.debug_dirs = dec_debug_dirs[0] ? dec_debug_dirs : getenv("HWT_DEBUG_DIR");
	cfg.errbuf = errbuf;
	cfg.errlen = sizeof(errbuf);
	struct hwt_decoder *dec = NULL;
	err = hwt_decoder_alloc(&dec, &cfg);
	if (err) {
		cli_err(cmd, "cannot decode '%s': %s", path, errbuf[0] ? errbuf : hwt_errstr(err));
		free(ends);
		hwt_perf_reader_free(r);
		return 2;
	}
	int rc;
	if (!pg) {
		rc = hwt_decoder_run(dec);
	} else {
		unsigned k = 0;
		while ((rc = hwt_decoder_step(dec)) == 1) {
			if ((++k & 63) != 1) /* the first record, then every 64th */
				continue;
			struct hwt_decoder_info pi;
			memset(&pi, 0, sizeof(pi));
			pi.size = sizeof(pi);
			hwt_decoder_info(dec, &pi);
			progress_update(pg, pi.nr_aux && nends
						? ends[(pi.nr_aux < nends ? pi.nr_aux : nends) - 1]
						: 0);
		}
	}
	free(ends);
	struct hwt_decoder_info info;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	hwt_decoder_info(dec, &info);
	int ret = info.nr_gaps || rc < 0 ? 1 : 0;
	if (rc == HWT_ERR_BAD_FORMAT)
		cli_err(cmd, "'%s': %s (decoding what comes before)", path,
			hwt_decoder_errmsg(dec));
	else if (rc < 0)
		cli_err(cmd, "'%s': %s", path, hwt_decoder_errmsg(dec));
	if (rc == HWT_ERR_NOT_SUPPORTED) {
		if (info.format == HWT_PERF_AUXTRACE_CS_ETM)
			cli_err(cmd,
				"'%s' is a CoreSight recording hwt cannot decode (see above): try "
				"'perf script -i %s', or list its packets with 'hwt dump %s'",
				path, path, path);
		ret = 2;
	} else if (!info.nr_aux && !info.nr_samples) {
		cli_err(cmd, "'%s' holds no AUX trace data (record with an intel_pt event)", path);
		ret = 2;
	}
	hwt_decoder_free(dec);
	hwt_perf_reader_free(r);
	return ret;
}
