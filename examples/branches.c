/* examples/branches.c - decode a recording with libhwt's recording decoder
 * and print every taken branch, thread by thread.
 *
 *   usage: branches [FILE]          (default hwt.data)
 *
 * The recording decoder (hwt/decode.h) does all the work `hwt script`
 * does: it reads the perf.data front to back, rebuilds each traced
 * process from the sideband records (memory maps, forks, exec), decodes
 * the trace of each thread against the code of its process, and hands
 * the result to our callbacks, one thread at a time.  We only print.
 *
 * stdout: one line per taken branch, as `hwt script --branches --format
 * tsv FILE` prints it,
 *
 *   TID<TAB>FROM<TAB>TO<TAB>KIND     (KIND: jcc jmp ijmp call icall ret far async)
 *
 * each thread's branches in the order the thread took them (the rows of
 * different threads may interleave, as the recording interleaves them);
 * a trace error prints a "# gap" line where the flow is broken.
 * stderr: the number of branches of each thread, by kind.
 *
 * Build: cc branches.c $(pkg-config --cflags --libs hwt)
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hwt/decode.h>

/* What we keep per thread: the decoder gives each thread a `user`
 * pointer for us, and calls thread_free when it frees the thread. */
struct counts {
	uint64_t kind[HWT_BR_NKINDS];
	uint64_t total;
};

/* A taken branch of thread t, from -> to.  img (the process's code, for
 * symbol lookups: hwt/image.h) and the time are not needed here. */
static void on_branch(void *arg, struct hwt_dec_thread *t, uint64_t from, uint64_t to, int kind,
		      const struct hwt_image *img, int have_time, uint64_t time_ns)
{
	(void)arg, (void)img, (void)have_time, (void)time_ns;
	struct counts *c = t->user;
	if (!c)
		c = t->user = calloc(1, sizeof(*c)); /* the thread's first branch */
	if (c) {
		c->total++;
		if (kind >= 0 && kind < HWT_BR_NKINDS)
			c->kind[kind]++;
	}
	printf("%" PRIu32 "\t0x%" PRIx64 "\t0x%" PRIx64 "\t%s\n", t->tid, from, to,
	       hwt_branch_kind_name(kind));
}

/* A trace error: the flow of thread t (NULL if not known) is broken here;
 * decoding goes on at the next synchronization point of the trace. */
static void on_gap(void *arg, struct hwt_dec_thread *t, uint64_t offset, uint64_t ip, int err)
{
	(void)arg;
	printf("# gap: tid %" PRIu32 ", trace offset 0x%" PRIx64 ", ip 0x%" PRIx64 ": %s\n",
	       t ? t->tid : 0, offset, ip, hwt_errstr(err));
}

static void on_thread_free(void *arg, struct hwt_dec_thread *t)
{
	(void)arg;
	free(t->user);
	t->user = NULL;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "hwt.data";
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf)); /* one line per branch: buffer */

	/* The callbacks.  Only what is set is decoded: without .insn the
	 * decoder does not produce instructions at all (faster). */
	struct hwt_decode_consumer consumer = {
	    .size = sizeof(consumer),
	    .branch = on_branch,
	    .gap = on_gap,
	    .thread_free = on_thread_free,
	};

	/* Size-versioned config: init, then set what we need. */
	struct hwt_decoder_config cfg;
	char err[256] = "";
	hwt_decoder_config_init(&cfg);
	cfg.path = path;
	cfg.consumer = &consumer;
	cfg.errbuf = err;
	cfg.errlen = sizeof(err);

	struct hwt_decoder *dec;
	int r = hwt_decoder_alloc(&dec, &cfg);
	if (r < 0) {
		fprintf(stderr, "branches: cannot decode '%s': %s\n", path,
			err[0] ? err : hwt_errstr(r));
		return 2;
	}
	/* All records, front to back; the callbacks run from here. */
	r = hwt_decoder_run(dec);
	if (r < 0)
		fprintf(stderr, "branches: '%s': %s\n", path, hwt_decoder_errmsg(dec));
	fflush(stdout);

	/* The summary, per thread in order of appearance. */
	struct hwt_dec_thread *t;
	for (size_t i = 0; (t = hwt_decoder_thread_at(dec, i)); i++) {
		const struct counts *c = t->user;
		fprintf(stderr, "tid %" PRIu32 " (pid %" PRIu32 "): %" PRIu64 " branches", t->tid,
			t->pid, c ? c->total : 0);
		for (int k = 0; c && k < HWT_BR_NKINDS; k++)
			if (c->kind[k])
				fprintf(stderr, ", %s %" PRIu64, hwt_branch_kind_name(k),
					c->kind[k]);
		fputc('\n', stderr);
	}

	struct hwt_decoder_info info = {.size = sizeof(info)};
	int gaps = hwt_decoder_info(dec, &info) == 0 && info.nr_gaps > 0;
	hwt_decoder_free(dec); /* calls on_thread_free for every thread */
	return r < 0 ? 2 : gaps ? 1 : 0;
}
