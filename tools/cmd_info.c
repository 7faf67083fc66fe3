/* tools/cmd_info.c - "hwt info" (not implemented yet). */
#include <string.h>

#include "cli.h"

static const char usage_text[] = "usage: hwt info [--help]\n";

int hwt_cmd_info(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	cli_err("info", "not implemented yet");
	return 2;
}
