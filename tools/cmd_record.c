/* tools/cmd_record.c - "hwt record" (not implemented yet). */
#include <string.h>

#include "cli.h"

static const char usage_text[] = "usage: hwt record [--help]\n";

int hwt_cmd_record(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	cli_err("record", "not implemented yet");
	return 2;
}
