#!/bin/bash
# hwt script on per-CPU recordings.  No machine here has Intel PT, and the
# emulated unit records per thread, so the per-CPU file is made from a real
# emulated recording of a multi-threaded program (tests/e2e/progs/
# mt_switch.c, with TSC and MTC) by script_mkcpu.c: each thread's stream
# is cut where it re-enters user mode, the pieces are scheduled onto 1-3
# "CPUs" by time, with ITRACE_START and CPU-wide switch records.  Oracles:
#   - perf script --itrace=be decodes the file without a trace error (the
#     file is a valid per-CPU recording) and gives the truth's branches;
#   - hwt script --branches --format tsv gives the emulator's ground truth
#     (--truth), each thread's rows in order, and equals perf script;
#   - hwt script --insn prints as many instructions as libipt's block
#     decoder finds in the per-thread recording it was made from.
# Variants: CPUs 1/2/3, small and large pieces (regions with several
# PSBs), switch records before or after the AUXTRACE data they describe.
set -u
. "$(dirname "$0")/lib.bash"
H=$B/hwt
if ! command -v qemu-x86_64 >/dev/null || [ ! -f "$B/hwt-pt-plugin.so" ]; then
	skip script_cpu "no qemu-x86_64 or no $B/hwt-pt-plugin.so"
	exit 0
fi
if ! hwt_cc "$T/mkcpu" tests/e2e/script_mkcpu.c 2>"$T/cc.err" ||
	! cc -O1 -pthread -o "$T/mt" tests/e2e/progs/mt_switch.c 2>>"$T/cc.err"; then
	fail script_cpu_build "$(head -c 300 "$T/cc.err")"
	exit 0
fi
if ! timeout 120 "$H" record --emulate -e intel_pt/tsc,mtc,psb_period=0/u --truth "$T/mt.truth" \
	-o "$T/mt.data" -- "$T/mt" >/dev/null 2>"$T/rec.err"; then
	fail script_cpu_record "hwt record: $(head -c 300 "$T/rec.err")"
	exit 0
fi
# the truth, each thread's rows in order (async rows left out)
grep -v async "$T/mt.truth" | cut -f1-3 | sort -s -k1,1 >"$T/truth"
have_perf=0
command -v perf >/dev/null && have_perf=1

# case NAME NCPU MINLEN ORDER
case_cpu() {
	local n=$1 f=$T/$1.data
	if ! "$T/mkcpu" "$T/mt.data" "$f" "$2" "$3" "$4" 2>"$T/$n.mk"; then
		fail "script_cpu_$n" "script_mkcpu: $(head -c 300 "$T/$n.mk")"
		return
	fi
	if [ $have_perf = 1 ]; then
		timeout 120 perf script --itrace=be -F tid,ip,addr -i "$f" >"$T/$n.perf" 2>"$T/$n.perr"
		local prc=$?
		local perr=$(grep -c 'error' "$T/$n.perf")
		awk '$2 != "0" && $4 != "0" { printf "%s\t0x%s\t0x%s\n", $1, $2, $4 }' "$T/$n.perf" |
			sort -s -k1,1 >"$T/$n.p"
		if [ $prc != 0 ] || [ "$perr" != 0 ]; then
			fail "script_cpu_perf_$n" "perf script exit $prc, $perr trace errors: $(grep -m1 error "$T/$n.perf") $(head -c 200 "$T/$n.perr")"
		elif ! cmp -s "$T/$n.p" "$T/truth"; then
			fail "script_cpu_perf_$n" "perf script differs from the truth: $(diff "$T/$n.p" "$T/truth" | head -3 | tr '\n\t' '  ')"
		else
			pass "script_cpu_perf_$n"
		fi
	fi
	timeout 120 "$H" script -i "$f" --branches --format tsv >"$T/$n.tsv" 2>"$T/$n.err"
	local rc=$?
	if [ $rc -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$T/$n.err"; then
		fail "script_cpu_$n" "hwt script exit $rc $(head -c 200 "$T/$n.err")"
		return
	fi
	grep -v '^ *[0-9]* *\[' "$T/$n.tsv" | grep -v async | cut -f1-3 | sort -s -k1,1 >"$T/$n.h"
	if [ $rc != 0 ] || ! cmp -s "$T/$n.h" "$T/truth"; then
		fail "script_cpu_$n" "exit $rc, $(grep -c '\[' "$T/$n.tsv") gaps; first difference: $(diff "$T/$n.h" "$T/truth" | head -3 | tr '\n\t' '  ')"
	elif [ $have_perf = 1 ] && ! cmp -s "$T/$n.h" "$T/$n.p"; then
		fail "script_cpu_$n" "hwt script and perf script differ: $(diff "$T/$n.h" "$T/$n.p" | head -3 | tr '\n\t' '  ')"
	else
		pass "script_cpu_$n ($(wc -l <"$T/$n.h") branches, $(sed -n 's/.*threads, \([0-9]*\) pieces.*/\1/p' "$T/$n.mk") pieces)"
	fi
}
case_cpu cpu2_small 2 300 early
case_cpu cpu2_large 2 4096 early
case_cpu cpu2_late 2 300 late
case_cpu cpu3_late_large 3 4096 late
case_cpu cpu1 1 300 early

BF=$B/bench/bench_flow
if [ -x "$BF" ] && [ -f "$T/cpu2_small.data" ]; then
	nl=$(timeout 120 "$BF" time "$T/mt.data" | awk '{ print $5 }')
	ni=$(timeout 120 "$H" script -i "$T/cpu2_small.data" --insn --no-time 2>/dev/null | grep -vc ': error: ')
	if [ -n "$nl" ] && [ "$ni" = "$nl" ]; then pass "script_cpu_insn_count ($ni)"; else
		fail script_cpu_insn_count "hwt --insn on the per-CPU file: $ni instructions, libipt on the per-thread one: $nl"
	fi
fi
