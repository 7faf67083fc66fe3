/* tools/cmd_view.c - "hwt view": look at a recording in a browser.
 *
 * Writes the recording's timeline (Chrome JSON, as hwt timeline), its
 * flame graph (SVG, as hwt report --flamegraph) and hwt's page
 * (view_page.c) into a fresh private folder (mkdtemp, mode 0700), serves
 * that folder on 127.0.0.1 (view_server.c) and prints the URL; it opens
 * no browser.  Ctrl-C stops the server and removes the folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "out/out.h"
#include "report_views.h"
#include "timeline_int.h"
#include "view_page.h"
#include "view_server.h"

static const char usage_text[] =
    "usage: hwt view [-i FILE | FILE] [--port N] [--min-duration TIME] [--no-progress]\n"
    "\n"
    "Serve a page with the timeline and the flame graph of a recording (default\n"
    "hwt.data) on http://127.0.0.1:PORT/ (loopback only) and print its URL;\n"
    "open it in a browser.  Ctrl-C stops.\n"
    "\n"
    "  --port N            the port (default: a free one)\n"
    "  --min-duration TIME leave calls shorter than TIME out of the timeline (ns,\n"
    "                      or with a unit: ns, us, ms, s)\n";

static const char *const files[] = {"index.html", "info.json", "timeline.json", "flame.svg"};

static void cleanup(const char *dir, int dirfd)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlinkat(dirfd, files[i], 0);
	close(dirfd);
	rmdir(dir);
}

static int write_text(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	int bad = write(fd, text, n) != (ssize_t)n;
	return close(fd) || bad ? -1 : 0;
}

/* JSON string body of s (for info.json). */
static void json_str(char *out, size_t max, const char *s)
{
	size_t n = 0;
	for (; *s && n + 7 < max; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c < 0x20) {
			n += (size_t)snprintf(out + n, max - n, "\\u%04x", c);
		} else {
			out[n++] = (char)c;
		}
	}
	out[n] = 0;
}

int hwt_cmd_view(int argc, char **argv)
{
	const char *input = NULL;
	unsigned long long port = 0;
	struct hwt_timeline_config cfg;
	hwt_timeline_config_init(&cfg);
	cfg.format = HWT_TL_CHROME;
	int progress = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "-i") || !strcmp(a, "--input")) {
			if (!v) {
				cli_err("view", "%s needs a file", a);
				return cli_usage_error(usage_text);
			}
			input = v;
			i++;
		} else if (!strcmp(a, "--port")) {
			if (!v || cli_parse_u64(v, &port) || port > 65535) {
				cli_err("view", "--port needs a number from 0 to 65535");
				return cli_usage_error(usage_text);
			}
			i++;
		} else if (!strcmp(a, "--min-duration")) {
			if (!v || cli_parse_duration(v, &cfg.min_duration_ns)) {
				cli_err("view", "--min-duration needs a time (e.g. 500, 2us, 1ms)");
				return cli_usage_error(usage_text);
			}
			i++;
		} else if (!strcmp(a, "--no-progress")) {
			progress = 0;
		} else if ((a[0] != '-' || !strcmp(a, "-")) && !input) {
			input = a;
		} else {
			cli_err("view", "unknown option '%s'", a);
			return cli_usage_error(usage_text);
		}
	}
	if (!input)
		input = "hwt.data";
	if (access(input, R_OK)) {
		cli_err("view", "cannot read '%s': %m", input);
		return 2;
	}
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/hwt-view-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		cli_err("view", "cannot make a folder in %s: %m (set TMPDIR)",
			tmp && *tmp ? tmp : "/tmp");
		return 2;
	}
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		cli_err("view", "cannot open '%s': %m", dir);
		rmdir(dir);
		return 2;
	}
	int rc = 2;
	char info[8192], esc[4096];
	json_str(esc, sizeof(esc), input);
	snprintf(info, sizeof(info), "{\"file\":\"%s\"}\n", esc);
	if (write_text(dirfd, "index.html", view_page_html) ||
	    write_text(dirfd, "info.json", info)) {
		cli_err("view", "cannot write into '%s': %m", dir);
		goto out;
	}
	int fd = openat(dirfd, "timeline.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		cli_err("view", "cannot write into '%s': %m", dir);
		goto out;
	}
	rc = timeline_write(input, fd, "timeline.json", &cfg, progress);
	if (close(fd) || rc == 2) {
		rc = 2;
		goto out;
	}
	char svg[4200];
	snprintf(svg, sizeof(svg), "%s/flame.svg", dir);
	if (report_views(input, RV_FLAME, svg, progress) == 2) {
		rc = 2;
		goto out;
	}
	rc = view_serve(dirfd, (unsigned)port);
out:
	cleanup(dir, dirfd);
	return rc;
}
