/* tools/view_server.c - a minimal HTTP/1.0 server for "hwt view".
 *
 * Design: one listening socket bound to 127.0.0.1 only (never a wildcard
 * address); one request per connection, handled in turn (the page loads
 * three files: no need for more).  Requests are "GET /NAME" or "HEAD
 * /NAME" with NAME a plain file name (view_name_ok); anything else -- a
 * path with '/', "..", a '%' escape, an absolute URL, a name starting
 * with '.' -- is refused with 400/404 before the file system is looked at.
 * Files are opened relative to the served folder's descriptor with
 * O_NOFOLLOW and must be regular files.  A client that stalls is dropped
 * after 10 s (SO_RCVTIMEO/SO_SNDTIMEO).  SIGINT/SIGTERM end the loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"
#include "view_server.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int view_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (!n || n > 64 || name[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return strstr(name, "..") == NULL;
}

static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');
	if (!dot)
		return "application/octet-stream";
	if (!strcmp(dot, ".html"))
		return "text/html; charset=utf-8";
	if (!strcmp(dot, ".json"))
		return "application/json";
	if (!strcmp(dot, ".svg"))
		return "image/svg+xml";
	if (!strcmp(dot, ".js"))
		return "text/javascript";
	if (!strcmp(dot, ".css"))
		return "text/css";
	return "application/octet-stream";
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static void respond_error(int fd, int code, const char *text)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.0 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s\n",
			 code, text, strlen(text) + 1, text);
	write_all(fd, buf, (size_t)n);
}

static void handle(int dirfd, int fd)
{
	char req[4096];
	size_t n = 0;
	while (n < sizeof(req) - 1) {
		ssize_t r = recv(fd, req + n, sizeof(req) - 1 - n, 0);
		if (r < 0 && errno == EINTR && !stop)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		req[n] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[n] = 0;
	char method[8], target[512];
	if (sscanf(req, "%7s %511s", method, target) != 2) {
		respond_error(fd, 400, "Bad Request");
		return;
	}
	int head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET")) {
		respond_error(fd, 405, "Method Not Allowed");
		return;
	}
	char *q = strchr(target, '?'); /* a query string is ignored */
	if (q)
		*q = 0;
	if (target[0] != '/') { /* absolute URLs, '*', ... */
		respond_error(fd, 400, "Bad Request");
		return;
	}
	const char *name = target[1] ? target + 1 : "index.html";
	if (!view_name_ok(name)) {
		respond_error(fd, 404, "Not Found");
		return;
	}
	int f = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (f < 0 || fstat(f, &st) || !S_ISREG(st.st_mode)) {
		if (f >= 0)
			close(f);
		respond_error(fd, 404, "Not Found");
		return;
	}
	char hdr[256];
	int hn = snprintf(hdr, sizeof(hdr),
			  "HTTP/1.0 200 OK\r\nContent-Type: %s\r\nContent-Length: %lld\r\n"
			  "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
			  "Connection: close\r\n\r\n",
			  content_type(name), (long long)st.st_size);
	if (write_all(fd, hdr, (size_t)hn) || head) {
		close(f);
		return;
	}
	char buf[65536];
	for (;;) {
		ssize_t r = read(f, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || write_all(fd, buf, (size_t)r))
			break;
	}
	close(f);
}

int view_serve(int dirfd, unsigned port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		cli_err("view", "cannot make a socket: %m");
		return 2;
	}
	int one = 1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 16)) {
		cli_err("view", "cannot listen on 127.0.0.1:%u: %m (another port: --port N)", port);
		close(s);
		return 2;
	}
	socklen_t al = sizeof(a);
	getsockname(s, (struct sockaddr *)&a, &al);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: accept() returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("hwt view: http://127.0.0.1:%u/  (Ctrl-C stops)\n", ntohs(a.sin_port));
	fflush(stdout);
	while (!stop) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			cli_err("view", "accept failed: %m");
			break;
		}
		struct timeval tv = {10, 0};
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		handle(dirfd, c);
		shutdown(c, SHUT_WR);
		close(c);
	}
	close(s);
	return 0;
}
