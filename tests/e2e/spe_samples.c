/* tests/e2e/spe_samples.c - print the samples hwt's recording decoder
 * (hwt/decode.h with the arm_spe format, lib/spe) gives for a perf.data, one
 * a line: tid, pc, op, addr, total, issue, xlat, events (tab-separated; pc,
 * addr and events hex), and gaps as "gap OFFSET ERROR".  Used by
 * spe_record.sh to compare hwt's decoding with the emulator's truth.
 * usage: spe_samples FILE */
#include <stdio.h>

#include "hwt/decode.h"
#include "hwt/spe.h"

static void on_sample(void *arg, struct hwt_dec_thread *t, const struct hwt_dec_sample *s)
{
	(void)arg;
	(void)t;
	const struct hwt_spe_record *r = s->raw;
	if (!r || s->raw_size != sizeof(*r))
		return;
	const char *op = hwt_spe_op_name(r);
	unsigned long long addr = op[0] == 'l' || op[0] == 's' || op[0] == 'b' ? s->addr : 0;
	printf("%u\t%llx\t%s\t%llx\t%llu\t%llu\t%llu\t%x\n", s->tid, (unsigned long long)s->ip, op,
	       addr, (unsigned long long)s->weight, (unsigned long long)s->lat_issue,
	       (unsigned long long)s->lat_xlat, r->events);
}

static void on_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	(void)arg, (void)t, (void)ip;
	printf("gap %llu %s\n", (unsigned long long)offset, hwt_errstr(err));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: spe_samples FILE\n");
		return 2;
	}
	struct hwt_decode_consumer c = {
	    .size = sizeof(c), .flags = HWT_DEC_WANT_TIME, .sample = on_sample, .gap = on_gap};
	struct hwt_decoder_config cfg;
	char err[512] = "";
	hwt_decoder_config_init(&cfg);
	cfg.path = argv[1];
	cfg.consumer = &c;
	cfg.errbuf = err;
	cfg.errlen = sizeof(err);
	struct hwt_decoder *dec;
	if (hwt_decoder_alloc(&dec, &cfg)) {
		fprintf(stderr, "spe_samples: %s\n", err);
		return 1;
	}
	int r = hwt_decoder_run(dec);
	if (r < 0)
		fprintf(stderr, "spe_samples: %s\n", hwt_decoder_errmsg(dec));
	hwt_decoder_free(dec);
	return r < 0;
}
