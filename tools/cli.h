/* tools/ - the hwt command-line tool.
 *
 * One file per subcommand (cmd_<name>.c), each exporting
 * int hwt_cmd_<name>(int argc, char **argv) with argv[0] = "<name>".
 * main.c dispatches.  Conventions for every subcommand:
 *   - "--help" / "-h" prints its usage on stdout, exit 0;
 *   - an unknown option or a bad argument prints the usage on stderr, exit 2;
 *   - errors say what failed, on what, and what to do:
 *       hwt dump: cannot open 'x.pt': No such file or directory
 *   - exit 0 on success, 1 when the work ran but found errors, 2 on usage
 *     or setup errors.
 */
#ifndef HWT_TOOLS_CLI_H
#define HWT_TOOLS_CLI_H

#include <stdint.h>
#include <stdio.h>

int hwt_cmd_record(int argc, char **argv);
int hwt_cmd_script(int argc, char **argv);
int hwt_cmd_report(int argc, char **argv);
int hwt_cmd_dump(int argc, char **argv);
int hwt_cmd_info(int argc, char **argv);
int hwt_cmd_list(int argc, char **argv);
int hwt_cmd_timeline(int argc, char **argv);
int hwt_cmd_view(int argc, char **argv);

/* Print "hwt <cmd>: <message>\n" on stderr. */
void cli_err(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a usage text to stderr and return 2 (for "return cli_usage(...)"). */
int cli_usage_error(const char *usage);
/* Parse an unsigned number (decimal, 0x hex, or 0 octal) strictly. */
int cli_parse_u64(const char *s, unsigned long long *out);
/* A duration, "1500", "1.5us", "2ms", "0.1s" (ns without a unit): 0 and *ns, or -1. */
int cli_parse_duration(const char *s, uint64_t *ns);

#endif
