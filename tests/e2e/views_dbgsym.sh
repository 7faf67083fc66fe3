#!/bin/bash
# tests/e2e/views_dbgsym.sh - exact coverage of a packaged Debian program
# whose debug info is only in its -dbgsym package: Debian's `hello`, built
# from its Debian source with dpkg-buildpackage (stripped by dh_strip; the
# symbols and DWARF go to hello-dbgsym under
# usr/lib/debug/.build-id/xx/yyyy.debug), both unpacked into
# build-debian-cache/ by tests/debian/fetch.sh (once per machine; SKIP if
# that needs a download that cannot happen), nothing installed.
# Recorded with the emulated PT unit; the debug folder is given with
# `--debug-dir` to `hwt report` and with $HWT_DEBUG_DIR to `hwt script`.
# The checks are tests/e2e/views_check.py's, as in views_report.sh:
#   - the packaged binary has no symbols and no DWARF of its own, and
#     without the debug folder hwt has no line of hello.c;
#   - --lcov: every DA line equals the highest per-instruction count of
#     that line in `hwt script --insn --srcline` (0 only for lines never
#     executed; hello.c's call of print_help, --help only, is there with 0), FNDA the
#     rows at the function's +0x0 (names from the -dbgsym's .symtab);
#   - genhtml renders it (from the source tree: the DWARF paths are
#     relative, dpkg's -ffile-prefix-map), and the counts its hello.c page
#     shows equal the same.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")
CHECK=$PWD/tests/e2e/views_check.py

for t in qemu-x86_64 python3 readelf; do
	if ! command -v $t >/dev/null; then
		skip views_dbgsym "$t not installed (qemu-user, python3, binutils)"
		exit 0
	fi
done
if [ ! -x "$HWT" ] || [ ! -f "$B/hwt-pt-plugin.so" ]; then
	fail views_dbgsym "$B/hwt or $B/hwt-pt-plugin.so not built"
	exit 0
fi
export LC_ALL=C
out=$(tests/debian/fetch.sh 2>"$T/fetch.err")
rc=$?
if [ $rc = 3 ]; then
	skip views_dbgsym "$(head -c 300 "$T/fetch.err")"
	exit 0
elif [ $rc != 0 ]; then
	fail views_dbgsym "tests/debian/fetch.sh: $(head -c 300 "$T/fetch.err")"
	exit 0
fi
ROOT=$(echo "$out" | sed -n 1p)
SRCDIR=$(echo "$out" | sed -n 2p)
PROG=$ROOT/usr/bin/hello
DBG=$ROOT/usr/lib/debug
SRC=src/hello.c

name=views_dbgsym_stripped
if [ ! -x "$PROG" ] || [ ! -f "$SRCDIR/$SRC" ] || [ ! -d "$DBG/.build-id" ]; then
	fail $name "no $PROG, $SRCDIR/$SRC or $DBG/.build-id (rm -rf build-debian-cache and rerun)"
	exit 0
elif readelf -S "$PROG" | grep -qE ' \.(symtab|debug_info|debug_line) '; then
	fail $name "$PROG has its own symbols or DWARF (not the packaged, stripped binary)"
else
	pass $name
fi

if ! "$HWT" record --emulate -o "$T/h.data" -- "$PROG" >"$T/rec.out" 2>"$T/rec.err"; then
	fail views_dbgsym "hwt record: $(tail -c 300 "$T/rec.err")"
	exit 0
fi
if [ "$(cat "$T/rec.out")" != "Hello, world!" ]; then
	fail views_dbgsym "hello printed '$(head -c 100 "$T/rec.out")'"
	exit 0
fi
HWT_DEBUG_DIR=$DBG "$HWT" script --insn --srcline --no-time "$T/h.data" >"$T/insn.txt" 2>/dev/null
"$HWT" report --lcov -o "$T/nodbg.info" "$T/h.data" 2>/dev/null

name=views_dbgsym_lcov
if ! "$HWT" report --lcov --debug-dir "$DBG" -o "$T/h.info" "$T/h.data" 2>"$T/lcov.err"; then
	fail $name "hwt report --lcov: $(head -c 300 "$T/lcov.err")"
elif ! grep -q "^SF:$SRC\$" "$T/h.info"; then
	fail $name "no record for $SRC (the -dbgsym's lines were not found)"
elif grep -q "^SF:$SRC\$" "$T/nodbg.info"; then
	fail $name "lines of $SRC without --debug-dir: not from the -dbgsym package"
elif ! why=$(python3 "$CHECK" lcov "$T/h.info" "$T/insn.txt" 2>/dev/null); then
	fail $name "$why"
elif ! sed -n "\|^SF:$SRC\$|,/^end_of_record/p" "$T/h.info" | grep -q '^FNDA:1,main$'; then
	fail $name "no FNDA:1,main for $SRC (symbols from the -dbgsym)"
elif ! nr=$(grep -n 'print_help ();' "$SRCDIR/$SRC" | head -n1 | cut -d: -f1) || [ -z "$nr" ] ||
	! sed -n "\|^SF:$SRC\$|,/^end_of_record/p" "$T/h.info" | grep -q "^DA:$nr,0\$"; then
	fail $name "the print_help call (line ${nr:-?}: only with --help) is not listed with 0"
else
	pass $name
fi

name=views_dbgsym_genhtml
if ! command -v genhtml >/dev/null; then
	skip $name "genhtml not installed (Debian lcov)"
elif ! (cd "$SRCDIR" && genhtml --branch-coverage --ignore-errors source -o "$T/html" \
	"$T/h.info") >"$T/gh.out" 2>&1; then
	fail $name "genhtml: $(tail -c 300 "$T/gh.out")"
elif ! html=$(find "$T/html" -path '*/src/hello.c.gcov.html' | head -1) || [ -z "$html" ]; then
	fail $name "genhtml wrote no page for $SRC"
elif ! why=$(python3 "$CHECK" genhtml "$html" "$T/insn.txt" "$SRC" 2>/dev/null); then
	fail $name "$why"
else
	pass $name
fi
