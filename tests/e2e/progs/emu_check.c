/* emu_check - decode a raw Intel PT stream with libipt (the oracle) and print
 * the taken branches as "from<TAB>to" lines (0x-prefixed lowercase hex).
 *
 *   emu_check RAW MAPS PID[,PID...]
 *
 * MAPS lines: "pid addr len pgoff path" (the plugin's raw=P debug output,
 * P.maps); only lines of the given PIDs are loaded (a forked child: its
 * own pid and its ancestors').  A branch is a jcc that was taken
 * or any jmp/call/ret (direct or indirect), as in the plugin's truth file.
 * Decode errors are printed to stderr ("error ...") and counted; the exit
 * status is 1 if there was any.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "../../unit/t_util.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: emu_check RAW MAPS PID[,PID...]\n");
		return 2;
	}
	size_t len;
	uint8_t *buf = t_slurp(argv[1], &len);
	if (!buf || !len) {
		fprintf(stderr, "emu_check: cannot read %s\n", argv[1]);
		return 2;
	}
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + len;
	struct pt_insn_decoder *dec = pt_insn_alloc_decoder(&cfg);
	struct pt_image *img = pt_insn_get_image(dec);
	FILE *m = fopen(argv[2], "r");
	if (!m) {
		fprintf(stderr, "emu_check: cannot read %s\n", argv[2]);
		return 2;
	}
	char pids[256];
	snprintf(pids, sizeof(pids), ",%s,", argv[3]);
	char line[4400];
	while (fgets(line, sizeof(line), m)) {
		int pid;
		unsigned long long a, l, off;
		char path[4200];
		if (sscanf(line, "%d %llx %llx %llx %4199[^\n]", &pid, &a, &l, &off, path) != 5)
			continue;
		char key[32];
		snprintf(key, sizeof(key), ",%d,", pid);
		if (!strstr(pids, key))
			continue;
		int e = pt_image_add_file(img, path, off, l, NULL, a);
		if (e < 0)
			fprintf(stderr, "emu_check: add %s: %s\n", path, pt_errstr(pt_errcode(e)));
	}
	fclose(m);

	int errors = 0;
	int status = pt_insn_sync_forward(dec);
	struct pt_insn prev;
	int have_prev = 0;
	for (;;) {
		if (status < 0) {
			if (status == -pte_eos)
				break;
			uint64_t off = 0;
			pt_insn_get_offset(dec, &off);
			fprintf(stderr, "error at 0x%" PRIx64 ": %s\n", off,
				pt_errstr(pt_errcode(status)));
			errors++;
			have_prev = 0;
			status = pt_insn_sync_forward(dec);
			if (status < 0)
				break;
			continue;
		}
		while (status & pts_event_pending) {
			struct pt_event ev;
			status = pt_insn_event(dec, &ev, sizeof(ev));
			if (status < 0)
				break;
			if (ev.type == ptev_disabled || ev.type == ptev_async_disabled ||
			    ev.type == ptev_async_branch || ev.type == ptev_overflow)
				have_prev = 0;
		}
		if (status < 0)
			continue;
		struct pt_insn insn;
		status = pt_insn_next(dec, &insn, sizeof(insn));
		if (status < 0)
			continue;
		if (have_prev) {
			int taken = 0;
			switch (prev.iclass) {
			case ptic_cond_jump:
				taken = insn.ip != prev.ip + prev.size;
				break;
			case ptic_jump:
			case ptic_call:
			case ptic_return:
				taken = 1;
				break;
			default:
				break;
			}
			if (taken)
				printf("0x%" PRIx64 "\t0x%" PRIx64 "\n", prev.ip, insn.ip);
		}
		prev = insn;
		have_prev = 1;
	}
	pt_insn_free_decoder(dec);
	free(buf);
	return errors ? 1 : 0;
}
