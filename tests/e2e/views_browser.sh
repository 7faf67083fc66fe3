#!/bin/bash
# tests/e2e/views_browser.sh - `hwt view` in a real browser, and its
# server's limits.  A recording (hwt record --emulate) of a two-threaded C
# program (tests/e2e/progs/views_prog.c) is served by `hwt view`:
#   - the server listens on 127.0.0.1 only (ss), not on the machine's other
#     addresses, and refuses '..', absolute paths, percent-escapes, absolute
#     URLs and hidden names (raw requests over /dev/tcp: 4xx, never the
#     file), while its own files are served;
#   - headless Chromium (Debian chromium) loads the page: the DOM it
#     renders (--dump-dom) names every thread of the recording (comm and
#     tid, as `hwt script --calls` lists them), draws calls of the
#     program's functions, says how many calls there are (as many as
#     `hwt script --calls` prints) and holds the flame graph; a screenshot
#     is a PNG;
#   - the flame-graph SVG opened by itself in Chromium has its frames;
#   - SIGINT stops the server (exit 0) and removes its folder.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require views_browser qemu-x86_64 cc ss timeout
require_built views_browser "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
if ! cc -g -O0 -pthread -o "$T/prog" tests/e2e/progs/views_prog.c 2>"$T/cc.err"; then
	fail views_browser "cc: $(head -c 200 "$T/cc.err")"
	exit 0
fi
if ! "$HWT" record --emulate -o "$T/p.data" -- "$T/prog" >"$T/rec.out" 2>"$T/rec.err"; then
	fail views_browser "hwt record: $(tail -c 300 "$T/rec.err")"
	exit 0
fi
"$HWT" script --calls --no-time "$T/p.data" >"$T/calls.txt" 2>/dev/null
ncalls=$(awk '$2 == "call"' "$T/calls.txt" | wc -l)
tids=$(awk '$2 == "call" { print $1 }' "$T/calls.txt" | sort -u)

mkdir -p "$T/tmp"
TMPDIR=$T/tmp "$HWT" view "$T/p.data" >"$T/view.out" 2>"$T/view.err" &
vpid=$!
stop_view() { kill -INT $vpid 2>/dev/null; }
trap 'stop_view; rm -rf "$T"' EXIT
url=""
for _ in $(seq 1 600); do
	url=$(awk '/^hwt view: http/ { print $3 }' "$T/view.out")
	[ -n "$url" ] && break
	kill -0 $vpid 2>/dev/null || break
	sleep 0.2
done
if [ -z "$url" ]; then
	fail views_browser "hwt view printed no URL: $(head -c 300 "$T/view.err")"
	exit 0
fi
port=${url#http://127.0.0.1:}
port=${port%/}

# --- the server: loopback only, its own files only
name=views_view_loopback
listen=$(ss -Htln "sport = :$port" | awk '{ print $4 }')
other=$(hostname -I 2>/dev/null | awk '{ print $1 }')
if [ "$listen" != "127.0.0.1:$port" ]; then
	fail $name "listening on '$listen', want 127.0.0.1:$port only"
elif [ -n "$other" ] && (exec 3<>/dev/tcp/$other/$port) 2>/dev/null; then
	fail $name "reachable on $other:$port"
else
	pass $name
fi

# one raw request; prints the status code, and "LEAK" if /etc/passwd came back
req() {
	local out
	out=$(
		exec 3<>/dev/tcp/127.0.0.1/$port || exit 1
		printf '%s\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&3
		timeout 10 cat <&3
	)
	printf '%s' "$out" | head -1 | awk '{ print $2 }'
	case $out in *root:*) echo LEAK ;; esac
}
name=views_view_paths
bad=""
for r in "GET /../etc/passwd HTTP/1.0" "GET /../../../../etc/passwd HTTP/1.0" \
	"GET //etc/passwd HTTP/1.0" "GET /etc/passwd HTTP/1.0" "GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.0" \
	"GET /..%2f..%2fetc%2fpasswd HTTP/1.0" "GET http://127.0.0.1:$port/../../etc/passwd HTTP/1.0" \
	"GET /$T/p.data HTTP/1.0" "GET /.. HTTP/1.0" "GET /. HTTP/1.0" "GET /.hidden HTTP/1.0" \
	"POST /index.html HTTP/1.0"; do
	code=$(req "$r")
	case $code in 4??) ;; *) bad="$bad [$r -> $code]" ;; esac
done
for r in "GET / HTTP/1.0" "GET /index.html HTTP/1.0" "GET /timeline.json HTTP/1.0" "GET /flame.svg HTTP/1.0"; do
	code=$(req "$r")
	[ "$code" = 200 ] || bad="$bad [$r -> $code, want 200]"
done
if [ -z "$bad" ]; then
	pass $name
else
	fail $name "$bad"
fi

# --- the browser
CHROME=$(command -v chromium || command -v chromium-browser || true)
chrome() {
	timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --disable-extensions \
		--user-data-dir="$(mktemp -d "$T/ud.XXXXXX")" --window-size=1300,900 \
		--virtual-time-budget=15000 "$@" 2>>"$T/chrome.err"
}
name=views_browser_page
if [ -z "$CHROME" ]; then
	skip $name "chromium not installed (Debian chromium; scripts/deps.sh installs it)"
	skip views_browser_flame "chromium not installed"
else
	chrome --dump-dom "$url" >"$T/dom.html"
	chrome --screenshot="$T/shot.png" "$url" >/dev/null
	why=""
	[ -s "$T/dom.html" ] || why="no DOM (chromium: $(tail -c 200 "$T/chrome.err"))"
	for tid in $tids; do
		grep -q "class=\"tlabel\" title=\"prog (tid $tid)\"" "$T/dom.html" ||
			why="$why no lane for thread prog (tid $tid);"
	done
	for f in main worker_main crunch fib_rec; do
		grep -q "class=\"slice\"[^>]*>$f<" "$T/dom.html" || why="$why no call of $f drawn;"
	done
	grep -q "id=\"status\">$(echo "$tids" | wc -w) threads, $ncalls calls<" "$T/dom.html" ||
		why="$why status is '$(grep -o 'id="status">[^<]*' "$T/dom.html")', want $ncalls calls;"
	grep -q 'data-name="worker_main"' "$T/dom.html" || why="$why no flame graph;"
	[ "$(head -c 4 "$T/shot.png" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e47 ] ||
		why="$why no PNG screenshot;"
	if [ -z "$why" ]; then
		pass $name
	else
		fail $name "$why"
	fi
	name=views_browser_flame
	"$HWT" report --flamegraph -o "$T/f.svg" "$T/p.data" 2>/dev/null
	chrome --dump-dom "file://$T/f.svg" >"$T/fdom.html"
	n=$(grep -o '<g class="f"' "$T/fdom.html" | wc -l)
	want=$(grep -o '<g class="f"' "$T/f.svg" | wc -l)
	if [ "$n" -gt 0 ] && [ "$n" = "$want" ] && grep -q 'data-name="crunch"' "$T/fdom.html"; then
		pass $name
	else
		fail $name "chromium shows $n frames of $want"
	fi
fi

# --- Ctrl-C
name=views_view_stop
kill -INT $vpid
rc=0
wait $vpid || rc=$?
left=$(find "$T/tmp" -mindepth 1 | head -1)
if [ $rc = 0 ] && [ -z "$left" ]; then
	pass $name
else
	fail $name "exit $rc after SIGINT, left behind: $left"
fi
