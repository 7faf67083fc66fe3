#!/bin/bash
# make check: every test in the normal and the sanitizer build, then a
# bounded libFuzzer run per target.  Ends with one line "N passed, N failed".
# usage: scripts/check.sh BUILD ASAN_BUILD FUZZ_BUILD
set -u
cd "$(dirname "$0")/.."
total_p=0 total_f=0 total_s=0
counts=$(mktemp)
trap 'rm -f "$counts"' EXIT
for b in "$1" "$2"; do
	HWT_COUNTS=$counts tests/run.sh "$b" >&2 || true
	read -r p f s <"$counts"
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
done
echo "== fuzz (bounded)" >&2
FUZZ_SECONDS=${FUZZ_SECONDS:-20} HWT_COUNTS=$counts scripts/fuzz.sh "$3" >&2 || true
read -r p f s <"$counts"
total_p=$((total_p + p)) total_f=$((total_f + f))
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
