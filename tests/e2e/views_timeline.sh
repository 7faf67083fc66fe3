#!/bin/bash
# tests/e2e/views_timeline.sh - `hwt timeline` on a recording (hwt record
# --emulate) of a two-threaded C program (tests/e2e/progs/views_prog.c):
#   - Perfetto protobuf: decoded by the wire-format reader of
#     tests/e2e/views_check.py (written from Perfetto's schema): every event
#     on a described thread track, begins and ends nested and in time
#     order per track, slices per thread and function equal to the calls of
#     `hwt script --calls`, two thread tracks;
#   - Chrome JSON: valid JSON, the same slices, every thread named;
#   - --min-duration, --max-depth, --time: every slice left is as long,
#     as shallow and inside the window as asked;
#   - no -o with stdout a terminal, bad options: exit 2.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")
CHECK=$PWD/tests/e2e/views_check.py

require views_timeline qemu-x86_64 cc python3
require_built views_timeline "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
if ! cc -g -O0 -pthread -o "$T/prog" tests/e2e/progs/views_prog.c 2>"$T/cc.err"; then
	fail views_timeline "cc: $(head -c 200 "$T/cc.err")"
	exit 0
fi
if ! "$HWT" record --emulate -o "$T/p.data" -- "$T/prog" >"$T/rec.out" 2>"$T/rec.err"; then
	fail views_timeline "hwt record: $(tail -c 300 "$T/rec.err")"
	exit 0
fi
"$HWT" script --calls --no-time "$T/p.data" >"$T/calls.txt" 2>/dev/null

for f in perfetto chrome; do
	name=views_timeline_$f
	if ! "$HWT" timeline --format $f -o "$T/p.$f" "$T/p.data" 2>"$T/$f.err"; then
		fail $name "hwt timeline: $(head -c 300 "$T/$f.err")"
	elif ! why=$(python3 "$CHECK" $f "$T/p.$f" "$T/calls.txt" 2>/dev/null); then
		fail $name "$why"
	else
		pass $name
	fi
done

# filters: times from the recording (the first and last call)
name=views_timeline_filters
first=$("$HWT" script --calls "$T/p.data" | awk '$3 == "call" || $3 ~ /^ *call/ { print $2; exit }')
last=$("$HWT" script --calls "$T/p.data" | awk '{ t = $2 } END { print t }')
ns() { awk -v s="$1" 'BEGIN { split(s, a, "."); printf "%d\n", a[1] * 1000000000 + substr(a[2] "000000000", 1, 9) }'; }
fns=$(ns "$first")
lns=$(ns "$last")
mid=$(((fns + lns) / 2))
start=$((fns + (lns - fns) / 4))
sec() { printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }
ok=1
why=""
if ! "$HWT" timeline --format chrome --min-duration 2us -o "$T/m.json" "$T/p.data" 2>"$T/m.err" ||
	! why=$(python3 "$CHECK" chrome_filters "$T/m.json" 2000 0 0 0 2>/dev/null); then
	ok=0
	why="--min-duration: $why $(head -c 200 "$T/m.err")"
elif ! "$HWT" timeline --format chrome --max-depth 3 -o "$T/d.json" "$T/p.data" 2>"$T/d.err" ||
	! why=$(python3 "$CHECK" chrome_filters "$T/d.json" 0 3 0 0 2>/dev/null); then
	ok=0
	why="--max-depth: $why $(head -c 200 "$T/d.err")"
elif ! "$HWT" timeline --format chrome --time "$(sec $start),$(sec $mid)" -o "$T/w.json" \
	"$T/p.data" 2>"$T/w.err" ||
	! why=$(python3 "$CHECK" chrome_filters "$T/w.json" 0 0 $start $mid 2>/dev/null); then
	ok=0
	why="--time $(sec $start),$(sec $mid): $why $(head -c 200 "$T/w.err")"
fi
if [ $ok = 1 ]; then
	pass $name
else
	fail $name "$why"
fi

name=views_timeline_usage
"$HWT" timeline --format svg -o "$T/x" "$T/p.data" >/dev/null 2>&1
r1=$?
"$HWT" timeline --time 5 -o "$T/x" "$T/p.data" >/dev/null 2>&1
r2=$?
r3=2
if command -v script >/dev/null; then
	# stdout a terminal (script(1) gives one): refused without -o
	script -qec "$HWT timeline $T/p.data" /dev/null >"$T/tty.out" 2>&1
	r3=$?
fi
if [ $r1 = 2 ] && [ $r2 = 2 ] && [ $r3 = 2 ]; then
	pass $name
else
	fail $name "exit $r1 $r2 $r3 (want 2 2 2)"
fi
