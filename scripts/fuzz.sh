#!/bin/bash
# Runs every libFuzzer target in FUZZ_BUILD/fuzz for FUZZ_SECONDS each,
# seeded from fuzz/seeds/<target>/, from what fuzz/<target>.seeds.sh makes
# out of the PT corpus, or else (PT targets) from the corpus .pt files.
# FUZZ_JOBS targets (default: the number of CPUs) run at the same time;
# results are printed in the targets' order.
# A crash, leak, timeout or sanitizer report is a failure.
set -u
B=${1:?usage: scripts/fuzz.sh FUZZ_BUILD}
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
CORPUS=${CORPUS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/corpus/libipt-ptt}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# fuzz_one TARGET RESULT: runs one target, writes "PASS ..." or "FAIL ..."
# and the log's tail into RESULT
fuzz_one() {
	local f=$1 res=$2 name work
	name=$(basename "$f")
	work=$(mktemp -d)
	local seeds=()
	[ -d "fuzz/seeds/$name" ] && seeds+=("fuzz/seeds/$name")
	if [ -x "fuzz/$name.seeds.sh" ] && [ -d "$CORPUS" ]; then
		"fuzz/$name.seeds.sh" "$CORPUS" "$work/gen" && seeds+=("$work/gen")
	elif [[ "$name" == *pt* ]] && [ -d "$CORPUS" ]; then
		mkdir -p "$work/ptt"
		cp "$CORPUS"/*/*.pt "$work/ptt/" 2>/dev/null
		seeds+=("$work/ptt")
	fi
	if "$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
		-artifact_prefix="$work/" "$work" "${seeds[@]}" >"$work/log" 2>&1; then
		echo "PASS fuzz-$name ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | awk '{print $2}') runs)" >"$res"
	else
		{
			echo "FAIL fuzz-$name: see below"
			tail -n 30 "$work/log"
		} >"$res"
		mkdir -p fuzz-artifacts && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* fuzz-artifacts/ 2>/dev/null
	fi
	rm -rf "$work"
}

targets=()
for f in "$B"/fuzz/*; do
	[ -x "$f" ] && targets+=("$f")
done
running=0
for i in "${!targets[@]}"; do
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "${targets[$i]}" "$out/$i" &
	running=$((running + 1))
done
wait
pass=0 fail=0
for i in "${!targets[@]}"; do
	if [ -s "$out/$i" ]; then
		cat "$out/$i"
		grep -q '^PASS ' "$out/$i" && pass=$((pass + 1)) || fail=$((fail + 1))
	else
		echo "FAIL fuzz-$(basename "${targets[$i]}"): no result"
		fail=$((fail + 1))
	fi
done
[ -n "${HWT_COUNTS:-}" ] && echo "$pass $fail 0" >"$HWT_COUNTS"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
