#!/bin/bash
# Runs every test of one build and counts results.
#
# A test is a program in $BUILD/tests/ (from tests/unit/*.c) or a script
# tests/corpus/*.sh, tests/e2e/*.sh.  Each prints one line per case:
#   PASS <name>     FAIL <name>: <why>     SKIP <name>: <why>
# A test that exits non-zero without printing FAIL counts as one failure.
# Scripts get HWT_BUILD (the build folder), HWT_SAN (1 in a sanitizer build)
# and CORPUS (the libipt-ptt corpus).  Writes "<pass> <fail> <skip>" to the
# file named by $HWT_COUNTS if set, and ends with the summary line.
#
# usage: tests/run.sh BUILD [FILTER]   (FILTER: substring of test names)
set -u
BUILD=${1:?usage: tests/run.sh BUILD [FILTER]}
FILTER=${2:-}
export HWT_BUILD=$BUILD
export CORPUS=${CORPUS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/corpus/libipt-ptt}
case "$BUILD" in *asan*) export HWT_SAN=1 ;; *) export HWT_SAN=${HWT_SAN:-0} ;; esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0 fail=0 skip=0
log=$(mktemp)
known=$(dirname "$0")/known-failures.txt
# hwt record and perf record save the vdso into a build-id cache: keep the
# tests' copies out of the user's ~/.debug
bidc=$(mktemp -d)
export PERF_BUILDID_DIR=${HWT_TEST_BUILDID_DIR:-$bidc}
trap 'rm -rf "$log" "$log.k" "$bidc"' EXIT

run_one() {
	local name=$1
	shift
	[ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && return
	local t0=$SECONDS
	# A runaway test must not fill the disk or hang the run: cap its
	# output and its time (HWT_TEST_TIMEOUT seconds, default 900).
	timeout -k 10 "${HWT_TEST_TIMEOUT:-900}" "$@" 2>&1 | head -c 64M >"$log"
	local rc=${PIPESTATUS[0]}
	[ "$rc" -eq 124 ] && echo "FAIL $name: timed out after ${HWT_TEST_TIMEOUT:-900} s" >>"$log"
	local p f s
	# Known failures (tests/known-failures.txt: "<case> <why>") are reported
	# as skipped with their reason, so that open bugs stay visible without
	# failing the run; a known failure that passes is announced.
	if [ -s "$known" ]; then
		awk -v kf="$known" 'BEGIN { while ((getline l < kf) > 0) { if (l ~ /^[^#]/ && split(l, w, " ") > 0) { why[w[1]] = substr(l, length(w[1]) + 2) } } }
			/^FAIL / { n = $2; sub(/:$/, "", n); if (n in why) { print "SKIP " n ": known failure: " why[n] " (was: " substr($0, 6) ")"; next } }
			/^PASS / { if ($2 in why) print "NOTE " $2 " is listed in tests/known-failures.txt but passed this run (remove it once it passes reliably)" }
			{ print }' "$log" >"$log.k" && mv "$log.k" "$log"
	fi
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	s=$(grep -c '^SKIP ' "$log")
	local k
	k=$(grep -c '^SKIP .*: known failure: ' "$log")
	# a C test exits 1 when any case failed, known failures included
	[ "$rc" -eq 1 ] && [ "$k" -gt 0 ] && [ "$f" -eq 0 ] && rc=0
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "FAIL $name: exited with status $rc; last output:"
		tail -n 15 "$log" | sed 's/^/    /'
	fi
	grep -E '^(FAIL|NOTE) ' "$log" | head -n 40
	grep '^SKIP .*: known failure: ' "$log" | cut -c1-160
	[ "$f" -gt 40 ] && echo "    ... $((f - 40)) more failures in $name"
	printf '  %-28s %5d passed %4d failed %4d skipped  (%ds)\n' "$name" "$p" "$f" "$s" $((SECONDS - t0))
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
}

echo "== tests in $BUILD"
for t in "$BUILD"/tests/*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/corpus/*.sh tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" bash "$t"
done
[ -n "${HWT_COUNTS:-}" ] && echo "$pass $fail $skip" >"$HWT_COUNTS"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
