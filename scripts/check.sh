#!/bin/bash
# make check: every test in the normal and the sanitizer build, then a
# bounded libFuzzer run per target.  Ends with one line "N passed, N failed".
# The two builds' tests run at the same time (most tests are one process
# at a time: two cores are used), each into its own log, printed in order.
# usage: scripts/check.sh BUILD ASAN_BUILD FUZZ_BUILD
set -u
cd "$(dirname "$0")/.."
total_p=0 total_f=0 total_s=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
for b in "$1" "$2"; do
	HWT_COUNTS=$work/$b.counts tests/run.sh "$b" >"$work/$b.log" 2>&1 &
	pids+=($!)
done
for i in 0 1; do
	wait "${pids[$i]}"
done
for b in "$1" "$2"; do
	echo "== tests: $b" >&2
	cat "$work/$b.log" >&2
	if [ -s "$work/$b.counts" ]; then
		read -r p f s <"$work/$b.counts"
	else
		p=0 f=1 s=0
		echo "FAIL tests/run.sh $b: wrote no counts" >&2
	fi
	total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
done
echo "== fuzz (bounded)" >&2
FUZZ_SECONDS=${FUZZ_SECONDS:-20} HWT_COUNTS=$work/fuzz.counts scripts/fuzz.sh "$3" >&2 || true
read -r p f s <"$work/fuzz.counts"
total_p=$((total_p + p)) total_f=$((total_f + f))
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
