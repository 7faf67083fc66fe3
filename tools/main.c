/* tools/main.c - "hwt CMD ...": dispatch to the subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "cli.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"record", hwt_cmd_record, "run a program under a trace unit and write a perf.data file"},
    {"script", hwt_cmd_script, "decode a recording: instructions, branches, calls"},
    {"report", hwt_cmd_report, "summaries of a recording: hot functions, coverage"},
    {"timeline", hwt_cmd_timeline, "a recording's calls as a timeline (Perfetto, Chrome JSON)"},
    {"view", hwt_cmd_view, "look at a recording's timeline and flame graph in a browser"},
    {"dump", hwt_cmd_dump, "dump the packets of a raw Intel PT stream or a recording"},
    {"info", hwt_cmd_info, "what a recording holds: events, threads, trace bytes, maps"},
    {"list", hwt_cmd_list, "list trace units (hardware and emulated) and their state"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hwt [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'hwt COMMAND --help' describes one command.\n");
}

void cli_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "hwt %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *text)
{
	fputs(text, stderr);
	return 2;
}

int cli_parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	double mul = 1;
	if (!*end || !strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "us"))
		mul = 1e3;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "s"))
		mul = 1e9;
	else
		return -1;
	*ns = (uint64_t)(v * mul + 0.5);
	return 0;
}

int cli_parse_u64(const char *s, unsigned long long *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("hwt %s\n", HWT_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "hwt: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
