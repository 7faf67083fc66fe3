#!/bin/bash
# make demo: record a real program under the emulated Intel PT unit and show
# its control flow.  usage: scripts/demo.sh BUILD [PROGRAM ARGS...]
set -eu
B=$(cd "${1:-build}" && pwd)
shift || true
[ $# -gt 0 ] || set -- /usr/bin/expr 6 '*' 7
out=$(mktemp -d)/demo.data
echo "== hwt record --emulate -o $out -- $*"
"$B/hwt" record --emulate -o "$out" -- "$@"
echo
echo "== hwt info $out"
"$B/hwt" info "$out"
echo
echo "== hwt script --calls (first 40 lines of the call tree)"
"$B/hwt" script --calls -i "$out" | head -n 40 || true
echo
echo "== hwt script --branches (first 20 branches)"
"$B/hwt" script --branches -i "$out" | head -n 20 || true
echo
echo "The recording is $out; try: $B/hwt script --insn -i $out | less"
