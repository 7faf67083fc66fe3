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
echo "== hwt report -n 15 (hot functions by instructions executed)"
"$B/hwt" report -n 15 -i "$out" || true
echo
echo "== hwt script --calls (the call tree from the first call into libc's getenv, 30 lines)"
"$B/hwt" script --calls -i "$out" | grep -A 29 -m 1 'getenv' || true
echo
echo "== hwt script --branches (first 20 branches)"
"$B/hwt" script --branches -i "$out" | head -n 20 || true
echo
echo "The recording is $out; try: $B/hwt script --insn -i $out | less"
