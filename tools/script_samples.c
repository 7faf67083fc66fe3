/* tools/script_samples.c - the lines "hwt script" prints for the samples
 * of a sampling recording (Intel PEBS mem-loads/mem-stores, Arm SPE): one
 * struct hwt_dec_sample (hwt/decode.h) a line, text or tsv, and the data
 * object an address falls in (shared with "hwt report --mem").
 *
 * Text: "TID TIME OP IP SYM+OFF => ADDR OBJECT+OFF lat N SOURCE"
 * tsv:  "tid ip addr weight data_src op time symbol object" (tab-separated;
 *       ip, addr, data_src in hex; the first five columns are the emulated
 *       units' --truth lines).
 * Stateless apart from the caller's symbol cache.
 */
#include <stdio.h>
#include <string.h>

#include "out/out.h"
#include "script_perf.h"
#include "script_samples.h"

const char *ss_data_object(const struct hwt_dec_sample *s, char *buf, size_t len, uint64_t *off)
{
	const char *name;
	*off = 0;
	if (!(s->flags & HWT_DSF_HAVE_ADDR))
		return NULL;
	if (s->img && !hwt_image_data_symbol(s->img, s->addr, &name, off))
		return name;
	if (s->data_map) {
		const char *m = s->data_map;
		*off = s->addr - s->data_map_start;
		if (!strcmp(m, "//anon") || !strncmp(m, "//anon", 6))
			return "[anon]";
		if (m[0] == '[')
			return m;
		const char *base = strrchr(m, '/');
		snprintf(buf, len, "[%s]", base ? base + 1 : m);
		return buf;
	}
	return NULL;
}

void ss_print_sample(struct hwt_outbuf *o, struct sp_symcache *sc, const struct hwt_dec_thread *t,
		     const struct hwt_dec_sample *s, int tsv, int time)
{
	char obuf[300], src[96];
	uint64_t soff = 0, doff = 0;
	const char *sym = sp_symbol(sc, s->img, s->ip, &soff);
	const char *obj = ss_data_object(s, obuf, sizeof(obuf), &doff);
	uint32_t tid = t ? t->tid : s->tid;
	if (tsv) {
		hwt_out_dec(o, tid, 0);
		hwt_out_char(o, '\t');
		hwt_out_hex(o, s->ip);
		hwt_out_char(o, '\t');
		hwt_out_hex(o, s->addr);
		hwt_out_char(o, '\t');
		hwt_out_dec(o, s->weight, 0);
		hwt_out_char(o, '\t');
		hwt_out_hex(o, s->data_src);
		hwt_out_char(o, '\t');
		hwt_out_str(o, hwt_dec_sample_op_name(s));
		hwt_out_char(o, '\t');
		if (s->flags & HWT_DSF_HAVE_TIME)
			hwt_out_time_ns(o, s->time_ns);
		hwt_out_char(o, '\t');
		hwt_out_sym(o, sym, soff);
		hwt_out_char(o, '\t');
		if (obj)
			hwt_out_sym(o, obj, doff);
		hwt_out_char(o, '\n');
		return;
	}
	hwt_out_dec(o, tid, 7);
	hwt_out_char(o, ' ');
	if (time && (s->flags & HWT_DSF_HAVE_TIME)) {
		hwt_out_time_ns(o, s->time_ns);
		hwt_out_char(o, ' ');
	}
	const char *op = hwt_dec_sample_op_name(s);
	hwt_out_str(o, op);
	for (size_t i = strlen(op); i < 7; i++)
		hwt_out_char(o, ' ');
	hwt_out_hex(o, s->ip);
	hwt_out_char(o, ' ');
	hwt_out_sym(o, sym, soff);
	if (s->flags & HWT_DSF_HAVE_ADDR) {
		hwt_out_mem(o, " => ", 4);
		hwt_out_hex(o, s->addr);
		hwt_out_char(o, ' ');
		hwt_out_sym(o, obj, doff);
	}
	hwt_out_mem(o, " lat ", 5);
	hwt_out_dec(o, s->weight, 0);
	hwt_dec_sample_source(s, src, sizeof(src));
	if (src[0]) {
		hwt_out_char(o, ' ');
		hwt_out_str(o, src);
	}
	hwt_out_char(o, '\n');
}
