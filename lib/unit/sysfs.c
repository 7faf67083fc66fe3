/* lib/unit/sysfs.c - PMU descriptions from /sys/bus/event_source/devices.
 *
 * The kernel describes each PMU in sysfs (Documentation/ABI/testing/
 * sysfs-bus-event_source-devices-*): "type" is perf_event_attr.type,
 * "format/TERM" holds "config:LO-HI[,BIT...]" (also config1/config2) saying
 * where a term's value goes, "caps/NAME" holds capability values (hex or
 * decimal), "nr_addr_filters" the number of address filter ranges.
 *
 * hwt_pmu_read() fills a struct hwt_pmu by value (no allocation); the root
 * is a parameter so that tests point it at a fake tree (hwt_sysfs_root()
 * reads $HWT_SYSFS_ROOT).  Limits: HWT_PMU_MAX_FORMATS terms and
 * HWT_PMU_MAX_CAPS caps; names longer than 31 bytes are skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwt/error.h"
#include "hwt/unit.h"

const char *hwt_sysfs_root(void)
{
	const char *r = getenv("HWT_SYSFS_ROOT");
	return r && *r ? r : HWT_SYSFS_DEFAULT;
}

/* Read a small text file, trailing newline stripped.  0 or -errno. */
static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

int hwt_pmu_format_parse(const char *text, unsigned *word, uint64_t *mask)
{
	const char *p = text;
	if (!strncmp(p, "config1:", 8))
		*word = 1, p += 8;
	else if (!strncmp(p, "config2:", 8))
		*word = 2, p += 8;
	else if (!strncmp(p, "config:", 7))
		*word = 0, p += 7;
	else
		return HWT_ERR_BAD_FORMAT;
	uint64_t m = 0;
	for (;;) {
		char *end;
		errno = 0;
		unsigned long lo = strtoul(p, &end, 10), hi;
		if (end == p || errno || lo > 63)
			return HWT_ERR_BAD_FORMAT;
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			hi = strtoul(p, &end, 10);
			if (end == p || hi > 63 || hi < lo)
				return HWT_ERR_BAD_FORMAT;
			p = end;
		}
		for (unsigned long b = lo; b <= hi; b++)
			m |= 1ULL << b;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == 0 || *p == '\n')
			break;
		return HWT_ERR_BAD_FORMAT;
	}
	*mask = m;
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (end == s || errno || (*end && *end != '\n'))
		return -1;
	*v = x;
	return 0;
}

static int by_name_fmt(const void *a, const void *b)
{
	return strcmp(((const struct hwt_pmu_format *)a)->name,
		      ((const struct hwt_pmu_format *)b)->name);
}

static int by_name_cap(const void *a, const void *b)
{
	return strcmp(((const struct hwt_pmu_cap *)a)->name, ((const struct hwt_pmu_cap *)b)->name);
}

int hwt_pmu_read(const char *root, const char *name, struct hwt_pmu *pmu, char *why, size_t whylen)
{
	char path[4096], buf[256];
	memset(pmu, 0, sizeof(*pmu));
	pmu->nr_addr_filters = -1;
	if (!root)
		root = hwt_sysfs_root();
	if (strlen(name) >= sizeof(pmu->name)) {
		snprintf(why, whylen, "PMU name '%s' too long", name);
		return HWT_ERR_INVALID;
	}
	snprintf(pmu->name, sizeof(pmu->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s/type", root, name);
	int e = read_text(path, buf, sizeof(buf));
	if (e) {
		snprintf(why, whylen, "no %s/%s", root, name);
		return HWT_ERR_NOT_PRESENT;
	}
	uint64_t v;
	if (parse_u64(buf, &v) || v > 0xffffffffu) {
		snprintf(why, whylen, "%s: bad type '%s'", path, buf);
		return HWT_ERR_BAD_FORMAT;
	}
	pmu->type = (uint32_t)v;
	snprintf(path, sizeof(path), "%s/%s/nr_addr_filters", root, name);
	if (!read_text(path, buf, sizeof(buf)) && !parse_u64(buf, &v) && v < 1024)
		pmu->nr_addr_filters = (int)v;

	snprintf(path, sizeof(path), "%s/%s/format", root, name);
	DIR *d = opendir(path);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' || strlen(de->d_name) >= 32)
				continue;
			if (pmu->nr_formats >= HWT_PMU_MAX_FORMATS)
				break;
			char fp[4096 + 512];
			snprintf(fp, sizeof(fp), "%s/%s", path, de->d_name);
			struct hwt_pmu_format *f = &pmu->formats[pmu->nr_formats];
			if (read_text(fp, buf, sizeof(buf)) ||
			    hwt_pmu_format_parse(buf, &f->word, &f->mask)) {
				closedir(d);
				snprintf(why, whylen, "%s: cannot parse '%s'", fp, buf);
				return HWT_ERR_BAD_FORMAT;
			}
			memcpy(f->name, de->d_name, strlen(de->d_name) + 1);
			pmu->nr_formats++;
		}
		closedir(d);
		qsort(pmu->formats, pmu->nr_formats, sizeof(pmu->formats[0]), by_name_fmt);
	}

	int hex_caps = !strcmp(name, "intel_pt");
	snprintf(path, sizeof(path), "%s/%s/caps", root, name);
	d = opendir(path);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' || strlen(de->d_name) >= 32)
				continue;
			if (pmu->nr_caps >= HWT_PMU_MAX_CAPS)
				break;
			char fp[4096 + 512];
			snprintf(fp, sizeof(fp), "%s/%s", path, de->d_name);
			struct hwt_pmu_cap *c = &pmu->caps[pmu->nr_caps];
			/* Intel PT's driver prints caps with %x (mtc_periods
			 * "249" is the bitmap 0x249); others (arm_spe) print
			 * decimal. */
			if (read_text(fp, buf, sizeof(buf)))
				continue;
			char *end;
			errno = 0;
			/* ... except max_nonturbo_ratio, printed with %u */
			int hex = hex_caps && strcmp(de->d_name, "max_nonturbo_ratio");
			unsigned long long x = strtoull(buf, &end, hex ? 16 : 10);
			if (*end || end == buf || errno)
				continue;
			c->value = x;
			memcpy(c->name, de->d_name, strlen(de->d_name) + 1);
			pmu->nr_caps++;
		}
		closedir(d);
		qsort(pmu->caps, pmu->nr_caps, sizeof(pmu->caps[0]), by_name_cap);
	}
	return 0;
}

const struct hwt_pmu_format *hwt_pmu_find_format(const struct hwt_pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->nr_formats; i++)
		if (!strcmp(pmu->formats[i].name, name))
			return &pmu->formats[i];
	return NULL;
}

int hwt_pmu_get_cap(const struct hwt_pmu *pmu, const char *name, uint64_t *value)
{
	for (size_t i = 0; i < pmu->nr_caps; i++)
		if (!strcmp(pmu->caps[i].name, name)) {
			if (value)
				*value = pmu->caps[i].value;
			return 0;
		}
	return HWT_ERR_NOT_PRESENT;
}

int hwt_pmu_set_term(const struct hwt_pmu *pmu, struct perf_event_attr *attr, const char *name,
		     uint64_t value)
{
	const struct hwt_pmu_format *f = hwt_pmu_find_format(pmu, name);
	if (!f)
		return HWT_ERR_INVALID;
	__u64 *w = f->word == 0 ? &attr->config : f->word == 1 ? &attr->config1 : &attr->config2;
	uint64_t bits = 0, v = value;
	for (int b = 0; b < 64; b++) {
		if (!(f->mask & (1ULL << b)))
			continue;
		if (v & 1)
			bits |= 1ULL << b;
		v >>= 1;
	}
	if (v)
		return HWT_ERR_INVALID; /* value wider than the field */
	*w = (*w & ~f->mask) | bits;
	return 0;
}

int hwt_pmu_apply_terms(const struct hwt_pmu *pmu, struct perf_event_attr *attr, const char *terms,
			char *err, size_t errlen)
{
	if (!terms)
		return 0;
	const char *p = terms;
	while (*p) {
		while (*p == ',' || *p == ' ')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, ",");
		char term[128];
		if (n >= sizeof(term)) {
			snprintf(err, errlen, "event term too long: '%.*s'", (int)n, p);
			return HWT_ERR_INVALID;
		}
		memcpy(term, p, n);
		term[n] = 0;
		p += n;
		uint64_t value = 1;
		char *eq = strchr(term, '=');
		if (eq) {
			*eq = 0;
			if (parse_u64(eq + 1, &value)) {
				snprintf(err, errlen, "bad value '%s' for term '%s'", eq + 1, term);
				return HWT_ERR_INVALID;
			}
		}
		const struct hwt_pmu_format *f = hwt_pmu_find_format(pmu, term);
		if (!f) {
			char known[512] = "";
			size_t k = 0;
			for (size_t i = 0; i < pmu->nr_formats && k + 34 < sizeof(known); i++)
				k += (size_t)snprintf(known + k, sizeof(known) - k, "%s%s",
						      i ? " " : "", pmu->formats[i].name);
			snprintf(err, errlen, "%s has no term '%s' (its terms: %s)", pmu->name,
				 term, known);
			return HWT_ERR_INVALID;
		}
		if (hwt_pmu_set_term(pmu, attr, term, value)) {
			snprintf(err, errlen, "value %llu does not fit term '%s' of %s",
				 (unsigned long long)value, term, pmu->name);
			return HWT_ERR_INVALID;
		}
	}
	return 0;
}

int hwt_event_split(const char *spec, char *name, size_t namelen, char *terms, size_t termslen,
		    char *mods, size_t modslen)
{
	if (!spec || !*spec)
		return HWT_ERR_INVALID;
	const char *slash = strchr(spec, '/');
	const char *colon = strchr(spec, ':');
	size_t n;
	terms[0] = mods[0] = 0;
	if (slash) {
		n = (size_t)(slash - spec);
		const char *t = slash + 1, *close = strchr(t, '/');
		if (!close)
			return HWT_ERR_INVALID;
		if ((size_t)(close - t) >= termslen || strlen(close + 1) >= modslen)
			return HWT_ERR_INVALID;
		memcpy(terms, t, (size_t)(close - t));
		terms[close - t] = 0;
		snprintf(mods, modslen, "%s", close + 1);
	} else if (colon) {
		n = (size_t)(colon - spec);
		if (strlen(colon + 1) >= modslen)
			return HWT_ERR_INVALID;
		snprintf(mods, modslen, "%s", colon + 1);
	} else {
		n = strlen(spec);
	}
	if (!n || n >= namelen)
		return HWT_ERR_INVALID;
	memcpy(name, spec, n);
	name[n] = 0;
	for (const char *m = mods; *m; m++)
		if (!strchr("ukhHGp", *m))
			return HWT_ERR_INVALID;
	return 0;
}
