#!/bin/bash
# Runs every libFuzzer target in FUZZ_BUILD/fuzz for FUZZ_SECONDS each,
# seeded from fuzz/seeds/<target>/, from what fuzz/<target>.seeds.sh makes
# out of the PT corpus, or else (PT targets) from the corpus .pt files.
# A crash, leak, timeout or sanitizer report is a failure.
set -u
B=${1:?usage: scripts/fuzz.sh FUZZ_BUILD}
secs=${FUZZ_SECONDS:-60}
CORPUS=${CORPUS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/corpus/libipt-ptt}
pass=0 fail=0
for f in "$B"/fuzz/*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	work=$(mktemp -d)
	seeds=()
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
		echo "PASS fuzz-$name ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | awk '{print $2}') runs)"
		pass=$((pass + 1))
	else
		echo "FAIL fuzz-$name: see below"
		tail -n 30 "$work/log"
		mkdir -p fuzz-artifacts && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* fuzz-artifacts/ 2>/dev/null
		fail=$((fail + 1))
	fi
	rm -rf "$work"
done
[ -n "${HWT_COUNTS:-}" ] && echo "$pass $fail 0" >"$HWT_COUNTS"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
