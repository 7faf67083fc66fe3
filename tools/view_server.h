/* tools/view_server.h - the local HTTP server of "hwt view"
 * (view_server.c). */
#ifndef HWT_TOOLS_VIEW_SERVER_H
#define HWT_TOOLS_VIEW_SERVER_H

/* Is name one of the files the server may serve: a plain file name of
 * letters, digits, '.', '_', '-', not starting with '.', at most 64
 * bytes (so never a path, never "..")? */
int view_name_ok(const char *name);

/* Serve the regular files of the folder dirfd on 127.0.0.1:port (0: a free
 * port) until SIGINT or SIGTERM; "/" is index.html, and nothing else than
 * "/NAME" with view_name_ok(NAME) is served (no listing, no paths, no
 * percent-escapes).  Prints the URL on stdout once listening.  0 when
 * stopped by a signal, 2 if it cannot listen (message printed). */
int view_serve(int dirfd, unsigned port);

#endif
