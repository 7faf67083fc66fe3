/* tools/cmd_script.c - "hwt script" (not implemented yet). */
#include <string.h>

#include "cli.h"

static const char usage_text[] = "usage: hwt script [--help]\n";

int hwt_cmd_script(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	cli_err("script", "not implemented yet");
	return 2;
}
