#!/bin/bash
# tests/e2e/views_report.sh - the file outputs of `hwt report` on a
# recording (hwt record --emulate) of a small two-threaded C program built
# with -g (tests/e2e/progs/views_prog.c), checked by tests/e2e/views_check.py
# against `hwt script` and `hwt report` text:
#   - --flamegraph / --flame-chart: well-formed XML (xmllint), the frames'
#     own counts sum to the instruction total of `hwt report`;
#   - --lcov: every DA line equals the highest per-instruction count of
#     that line in `hwt script --insn --srcline` (0 only for lines never
#     executed; the program's line that never runs is there with 0), FNDA
#     the rows at the function's +0x0; genhtml renders it, and the counts it shows for
#     the program's source equal the same; libc's lines come from Debian's
#     separate debug files (libc6-dbg) when installed;
#   - --drcov: header, module table, blocks that start at executed
#     instructions and cover every executed instruction of the files;
#   - option errors exit 2.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")
CHECK=$PWD/tests/e2e/views_check.py

require views_report qemu-x86_64 cc python3 xmllint
require_built views_report "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
cp tests/e2e/progs/views_prog.c "$T/"
SRC=$T/views_prog.c
if ! cc -g -O0 -pthread -o "$T/prog" "$SRC" 2>"$T/cc.err"; then
	fail views_report "cc: $(head -c 200 "$T/cc.err")"
	exit 0
fi
if ! "$HWT" record --emulate -o "$T/p.data" -- "$T/prog" >"$T/rec.out" 2>"$T/rec.err"; then
	fail views_report "hwt record: $(tail -c 300 "$T/rec.err")"
	exit 0
fi
"$HWT" script --insn --srcline --no-time "$T/p.data" >"$T/insn.txt" 2>/dev/null
TOTAL=$("$HWT" report "$T/p.data" | awk 'NR == 1 { print $2 }')

# flame graph and flame chart
for k in flamegraph flame-chart; do
	name=views_report_$k
	if ! "$HWT" report --$k -o "$T/$k.svg" "$T/p.data" 2>"$T/$k.err"; then
		fail $name "hwt report --$k: $(head -c 300 "$T/$k.err")"
	elif ! xmllint --noout "$T/$k.svg" 2>"$T/$k.xml"; then
		fail $name "not well-formed XML: $(head -c 300 "$T/$k.xml")"
	elif ! why=$(python3 "$CHECK" flame "$T/$k.svg" "$TOTAL" 2>/dev/null); then
		fail $name "$why"
	elif ! grep -q 'data-name="worker_main"' "$T/$k.svg" || ! grep -q '<script' "$T/$k.svg"; then
		fail $name "no worker_main frame or no script in the SVG"
	else
		pass $name
	fi
done

# lcov, and genhtml's rendering of it
name=views_report_lcov
if ! "$HWT" report --lcov -o "$T/p.info" "$T/p.data" 2>"$T/lcov.err"; then
	fail $name "hwt report --lcov: $(head -c 300 "$T/lcov.err")"
elif ! why=$(python3 "$CHECK" lcov "$T/p.info" "$T/insn.txt" 2>/dev/null); then
	fail $name "$why"
elif ! grep -q "^SF:$SRC\$" "$T/p.info"; then
	fail $name "no record for $SRC"
elif nr=$(grep -n 'not reached' "$SRC" | cut -d: -f1) &&
	! sed -n "\|^SF:$SRC\$|,/^end_of_record/p" "$T/p.info" | grep -q "^DA:$nr,0\$"; then
	fail $name "the line that never runs ($nr) is not listed with 0"
else
	pass $name
fi
name=views_report_genhtml
if ! command -v genhtml >/dev/null; then
	skip $name "genhtml not installed (Debian lcov)"
elif ! genhtml --branch-coverage --ignore-errors source -o "$T/html" "$T/p.info" >"$T/gh.out" 2>&1; then
	fail $name "genhtml: $(tail -c 300 "$T/gh.out")"
elif ! html=$(find "$T/html" -name 'views_prog.c.gcov.html' | head -1) || [ -z "$html" ]; then
	fail $name "genhtml wrote no page for views_prog.c"
elif ! why=$(python3 "$CHECK" genhtml "$html" "$T/insn.txt" "$SRC" 2>/dev/null); then
	fail $name "$why"
else
	pass $name
fi
name=views_report_lcov_dbg
if [ ! -d /usr/lib/debug/.build-id ] || ! grep -q '^SF:.*libc-start.c$' "$T/p.info"; then
	skip $name "no separate debug info for libc here (Debian libc6-dbg)"
else
	pass $name
fi

# drcov
name=views_report_drcov
if ! "$HWT" report --drcov -o "$T/p.drcov" "$T/p.data" 2>"$T/drcov.err"; then
	fail $name "hwt report --drcov: $(head -c 300 "$T/drcov.err")"
elif ! why=$(python3 "$CHECK" drcov "$T/p.drcov" "$T/insn.txt" 2>/dev/null); then
	fail $name "$why"
elif ! grep -aq ", $T/prog\$" "$T/p.drcov"; then
	fail $name "the program is not in the module table"
else
	pass $name
fi

# usage errors
name=views_report_usage
"$HWT" report --lcov --folded "$T/p.data" >/dev/null 2>&1
r1=$?
"$HWT" report -o "$T/x" "$T/p.data" >/dev/null 2>&1
r2=$?
"$HWT" report --lcov -o "$T/nodir/x.info" "$T/p.data" >/dev/null 2>"$T/u.err"
r3=$?
if [ $r1 = 2 ] && [ $r2 = 2 ] && [ $r3 = 2 ] && grep -q "cannot write" "$T/u.err"; then
	pass $name
else
	fail $name "exit $r1 $r2 $r3 (want 2 2 2): $(head -c 200 "$T/u.err")"
fi
