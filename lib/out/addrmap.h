/* lib/out/addrmap.h - small helpers shared by the output writers of
 * lib/out (cover, timeline): an open-addressing map from a 64-bit key to
 * a 32-bit value (0 means "none", so values are index + 1), and a string
 * interner.  Internal to lib/out; header-only. */
#ifndef HWT_LIB_OUT_ADDRMAP_H
#define HWT_LIB_OUT_ADDRMAP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct hwt_amap {
	uint64_t *key;
	uint32_t *val;
	size_t cap, n;
};

static inline size_t hwt_amap_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

static inline int hwt_amap_grow(struct hwt_amap *m)
{
	size_t nc = m->cap ? 2 * m->cap : 1024;
	uint64_t *nk = calloc(nc, sizeof(*nk));
	uint32_t *nv = calloc(nc, sizeof(*nv));
	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->val[i])
			continue;
		size_t j = hwt_amap_hash(m->key[i]) & (nc - 1);
		while (nv[j])
			j = (j + 1) & (nc - 1);
		nk[j] = m->key[i];
		nv[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = nk;
	m->val = nv;
	m->cap = nc;
	return 0;
}

/* The slot of key (its value 0 if absent), or NULL when out of memory.
 * Set *slot to insert (then call hwt_amap_added). */
static inline uint32_t *hwt_amap_slot(struct hwt_amap *m, uint64_t key)
{
	if ((m->n + 1) * 2 > m->cap && hwt_amap_grow(m))
		return NULL;
	size_t j = hwt_amap_hash(key) & (m->cap - 1);
	while (m->val[j] && m->key[j] != key)
		j = (j + 1) & (m->cap - 1);
	m->key[j] = key;
	return &m->val[j];
}
static inline void hwt_amap_added(struct hwt_amap *m)
{
	m->n++;
}
static inline uint32_t hwt_amap_get(const struct hwt_amap *m, uint64_t key)
{
	if (!m->cap)
		return 0;
	size_t j = hwt_amap_hash(key) & (m->cap - 1);
	while (m->val[j]) {
		if (m->key[j] == key)
			return m->val[j];
		j = (j + 1) & (m->cap - 1);
	}
	return 0;
}
static inline void hwt_amap_fini(struct hwt_amap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

/* Interned strings: equal texts share one copy, freed by _fini. */
struct hwt_strtab {
	char **s;
	size_t cap, n;
};

static inline uint64_t hwt_str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static inline const char *hwt_strtab_intern(struct hwt_strtab *t, const char *s)
{
	if ((t->n + 1) * 2 > t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 256;
		char **ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->s[i])
				continue;
			size_t j = hwt_str_hash(t->s[i]) & (nc - 1);
			while (ns[j])
				j = (j + 1) & (nc - 1);
			ns[j] = t->s[i];
		}
		free(t->s);
		t->s = ns;
		t->cap = nc;
	}
	size_t j = hwt_str_hash(s) & (t->cap - 1);
	while (t->s[j]) {
		if (!strcmp(t->s[j], s))
			return t->s[j];
		j = (j + 1) & (t->cap - 1);
	}
	t->s[j] = strdup(s);
	if (!t->s[j])
		return NULL;
	t->n++;
	return t->s[j];
}

static inline void hwt_strtab_fini(struct hwt_strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->s[i]);
	free(t->s);
	memset(t, 0, sizeof(*t));
}

#endif
