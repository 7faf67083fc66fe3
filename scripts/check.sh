#!/bin/bash
# make check: every test in the normal and the sanitizer build, then a
# bounded libFuzzer run per target.  Ends with one line "N passed, N failed".
# The two builds' tests run together, one test per CPU, the longest first
# (tests/run.sh: HWT_JOBS), and print in order at the end.
# usage: scripts/check.sh BUILD ASAN_BUILD FUZZ_BUILD
set -u
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
t0=$SECONDS
HWT_JOBS=${HWT_JOBS:-$(nproc 2>/dev/null || echo 2)} HWT_COUNTS=$work/tests.counts \
	tests/run.sh "$1,$2" >&2
if [ -s "$work/tests.counts" ]; then
	read -r total_p total_f total_s <"$work/tests.counts"
else
	total_p=0 total_f=1 total_s=0
	echo "FAIL tests/run.sh $1,$2: wrote no counts" >&2
fi
echo "== tests took $((SECONDS - t0)) s" >&2
echo "== fuzz (bounded)" >&2
FUZZ_SECONDS=${FUZZ_SECONDS:-10} HWT_COUNTS=$work/fuzz.counts scripts/fuzz.sh "$3" >&2 || true
read -r p f s <"$work/fuzz.counts"
total_p=$((total_p + p)) total_f=$((total_f + f))
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
