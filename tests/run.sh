#!/bin/bash
# Runs every test of one or more builds and counts results.
#
# A test is a program in $BUILD/tests/ (from tests/unit/*.c) or a script
# tests/corpus/*.sh, tests/e2e/*.sh.  Each prints one line per case:
#   PASS <name>     FAIL <name>: <why>     SKIP <name>: <why>
# A test that exits non-zero without printing FAIL counts as one failure.
# Scripts get HWT_BUILD (the build folder), HWT_SAN (1 in a sanitizer build)
# and CORPUS (the libipt-ptt corpus).  Writes "<pass> <fail> <skip>" (all
# builds together) to the file named by $HWT_COUNTS if set, and ends with
# the summary line.
#
# HWT_JOBS=N runs N tests at a time (default 1; make check: one per CPU),
# the longest first (HEAVY below), so that two builds' tests share the
# CPUs evenly; each test's lines are printed together, in the usual order,
# when all have run.  A sanitizer build skips the suites in SAN_SKIP; the
# suites in ALONE run last, by themselves.
#
# usage: tests/run.sh BUILD[,BUILD...] [FILTER]   (FILTER: substring of test names)
set -u
BUILDS=${1:?usage: tests/run.sh BUILD[,BUILD...] [FILTER]}
FILTER=${2:-}
JOBS=${HWT_JOBS:-1}
export CORPUS=${CORPUS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/corpus/libipt-ptt}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
known=$(dirname "$0")/known-failures.txt
work=$(mktemp -d)
# hwt record and perf record save the vdso into a build-id cache: keep the
# tests' copies out of the user's ~/.debug
bidc=$(mktemp -d)
export PERF_BUILDID_DIR=${HWT_TEST_BUILDID_DIR:-$bidc}
trap 'rm -rf "$work" "$bidc"' EXIT

# The longest suites (a few minutes each on CI's 2 cores), started first.
# views_dbgsym builds Debian's hello once per machine (tests/debian/fetch.sh).
HEAVY="emu_signal views_dbgsym etm_record etm_record_raw spe_record exec_follow ptxed emu_plugin
	emu_fastpath emu_record exec_follow_a64 test_pt_batch test_pt_flow decode_jobs batch_flow test_decode emu_jit bts_record"
# Suites whose time goes to QEMU and perf (neither built with sanitizers)
# and whose hwt side the sanitizer build runs in other suites
# (etm_record_b / etm_record_raw_b decode the same kind of recordings,
# emu_record and exec_follow the emulated PT unit's): the sanitizer build
# reports them skipped.
SAN_SKIP="emu_plugin emu_fastpath etm_record etm_record_raw"
# Suites that change the build under test (install: `make install` relinks
# hwt with the install's PLUGINDIR): they run after all the others, one at
# a time, so that no other test runs a binary while it is rewritten.
ALONE="install"

# run_one OUT NAME CMD...: the test's result lines into OUT.log, its
# counts ("pass fail skip") into OUT.cnt
run_one() {
	local out=$1 name=$2
	shift 2
	local log=$out.raw
	local t0=$SECONDS
	# A runaway test must not fill the disk or hang the run: cap its
	# output and its time (HWT_TEST_TIMEOUT seconds, default 900).
	# The CPU time of the test and its processes is printed too: it tells
	# what a test costs whatever else the machine runs.
	local TIMEFORMAT='%U %S' rc
	{ time {
		timeout -k 10 "${HWT_TEST_TIMEOUT:-900}" "$@" 2>&1 | head -c 64M >"$log"
		echo "${PIPESTATUS[0]}" >"$out.rc"
	}; } 2>"$out.time"
	rc=$(cat "$out.rc")
	local cpu
	cpu=$(awk '{ printf "%d", $1 + $2 + 0.5 }' "$out.time")
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
	{
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
			echo "FAIL $name: exited with status $rc; last output:"
			tail -n 15 "$log" | sed 's/^/    /'
		fi
		grep -E '^(FAIL|NOTE) ' "$log" | head -n 40
		grep '^SKIP .*: known failure: ' "$log" | cut -c1-160
		[ "$f" -gt 40 ] && echo "    ... $((f - 40)) more failures in $name"
		printf '  %-28s %5d passed %4d failed %4d skipped  (%ds, cpu %ss)\n' "$name" "$p" "$f" "$s" $((SECONDS - t0)) "$cpu"
	} >"$out.log"
	echo "$p $f $s" >"$out.cnt"
	rm -f "$log" "$out.rc" "$out.time"
}

# run_job I: job I of the lists below, in its build's environment
run_job() {
	local i=$1 b=${JOB_BUILD[$1]} name=${JOB_NAME[$1]}
	export HWT_BUILD=$b
	case "$b" in *asan*) export HWT_SAN=1 ;; *) export HWT_SAN=${HWT_SAN_DEFAULT:-0} ;; esac
	if [ "$HWT_SAN" = 1 ] && [[ " $SAN_SKIP " == *" $name "* ]]; then
		echo "SKIP $name: not in a sanitizer build (its time is QEMU's and perf's; other suites run its hwt side)" >"$work/$i.raw"
		printf '  %-28s %5d passed %4d failed %4d skipped  (0s)\n' "$name" 0 0 1 >"$work/$i.log"
		echo "0 0 1" >"$work/$i.cnt"
		return
	fi
	# shellcheck disable=SC2086
	run_one "$work/$i" "$name" ${JOB_CMD[$i]}
	# on a terminal, each test's line as it ends (the full report follows)
	[ -t 2 ] && sed -n "s|^  |  [$b] |p" "$work/$i.log" | tail -n 1 >&2
}

export HWT_SAN_DEFAULT=${HWT_SAN:-0}
JOB_BUILD=() JOB_NAME=() JOB_CMD=()
IFS=, read -r -a builds <<<"$BUILDS"
for b in "${builds[@]}"; do
	for t in "$b"/tests/*; do
		[ -x "$t" ] || continue
		n=$(basename "$t")
		[ -n "$FILTER" ] && [[ "$n" != *"$FILTER"* ]] && continue
		JOB_BUILD+=("$b") JOB_NAME+=("$n") JOB_CMD+=("$t")
	done
	for t in tests/corpus/*.sh tests/e2e/*.sh; do
		[ -f "$t" ] || continue
		n=$(basename "$t" .sh)
		[ -n "$FILTER" ] && [[ "$n" != *"$FILTER"* ]] && continue
		JOB_BUILD+=("$b") JOB_NAME+=("$n") JOB_CMD+=("bash $t")
	done
done
# the order of running: the heavy suites first (each in every build),
# then the rest as listed
order=()
for h in $HEAVY; do
	for i in "${!JOB_NAME[@]}"; do
		[ "${JOB_NAME[$i]}" = "$h" ] && order+=("$i")
	done
done
alone=()
for i in "${!JOB_NAME[@]}"; do
	if [[ " $ALONE " == *" ${JOB_NAME[$i]} "* ]]; then
		alone+=("$i")
	elif [[ " $(echo $HEAVY) " != *" ${JOB_NAME[$i]} "* ]]; then
		order+=("$i")
	fi
done
for i in "${order[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	run_job "$i" &
done
wait
for i in "${alone[@]}"; do
	run_job "$i"
done

pass=0 fail=0 skip=0
for b in "${builds[@]}"; do
	echo "== tests in $b"
	bp=0 bf=0 bs=0
	for i in "${!JOB_NAME[@]}"; do
		[ "${JOB_BUILD[$i]}" = "$b" ] || continue
		if [ -s "$work/$i.cnt" ]; then
			cat "$work/$i.log"
			read -r p f s <"$work/$i.cnt"
		else
			echo "FAIL ${JOB_NAME[$i]}: the runner got no result"
			p=0 f=1 s=0
		fi
		bp=$((bp + p)) bf=$((bf + f)) bs=$((bs + s))
	done
	[ ${#builds[@]} -gt 1 ] && echo "$b: $bp passed, $bf failed, $bs skipped"
	pass=$((pass + bp)) fail=$((fail + bf)) skip=$((skip + bs))
done
[ -n "${HWT_COUNTS:-}" ] && echo "$pass $fail $skip" >"$HWT_COUNTS"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
