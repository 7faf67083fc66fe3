#!/bin/bash
# make bench: every benchmark of one build, one result line per section.
#
# usage: scripts/bench.sh BUILD   (BUILD: a folder made by `make build`)
#
# Layout: a sequence of independent sections.  Each section checks that
# its program exists, runs it, and prints exactly one result line on
# stdout ("<name>: ..."), or "<name>: SKIP (<why>)" / "<name>: FAIL (<why>)".
# A failing section does not stop the others; the script exits non-zero
# if any section failed.  To add a benchmark, append a section below.
set -u
cd "$(dirname "$0")/.." || exit 1
B=${1:?usage: scripts/bench.sh BUILD}
export CORPUS=${CORPUS:-$(cd .. && pwd)/shared/corpus/libipt-ptt}
status=0

# run_section NAME PROGRAM [ARGS...]: the program prints its own one line.
run_section() {
	local name=$1 prog=$2
	shift 2
	if [ ! -x "$prog" ]; then
		echo "$name: SKIP ($prog not built)"
		return
	fi
	local out rc
	out=$("$prog" "$@" 2>/tmp/hwt-bench-$$.err)
	rc=$?
	if [ $rc -ne 0 ] || [ -z "$out" ]; then
		echo "$name: FAIL (exit $rc: $(tail -n 1 /tmp/hwt-bench-$$.err))"
		status=1
	else
		echo "$out"
	fi
	rm -f /tmp/hwt-bench-$$.err
}

# --- section: flow decoding, hwt vs libipt vs perf script (helper "script") ---
# >= 100 MB gzip trace from the emulated unit, cached in $B/bench-cache/;
# prints "flow-decode: hwt X MB/s, libipt-blk Y MB/s, perf-script Z MB/s, ...",
# and script-tsv, flow-parallel, script-rss, script-fmt and report lines.
out=$(bench/bench_flow.sh "$B") || status=1
echo "$out"

# --- section: packet decoding, hwt vs libipt (bench/bench_pkt.c) -------
# After the flow section: the same real-program trace, the AUXTRACE data
# of its gzip recording ($B/bench-cache/flow.data, made there), with a
# synthetic stream of HWT_BENCH_PKT_MIB MiB (default 64) as a diagnostic
# (the whole line on the synthetic stream when the recording is missing);
# prints "pkt-decode: hwt X MB/s, libipt Y MB/s, ratio R (...)".
if [ -s "$B/bench-cache/flow.data" ]; then
	run_section pkt-decode "$B/bench/bench_pkt" "$B/bench-cache/flow.data" "${HWT_BENCH_PKT_MIB:-64}"
else
	run_section pkt-decode "$B/bench/bench_pkt" "${HWT_BENCH_PKT_MIB:-256}"
fi

# --- section: emulated Intel PT unit cost (bench/bench_emu.sh, helper emu) ---
# CPU and wall time of gzip -6 of 20 MB natively, under qemu-x86_64 and
# under `hwt record --emulate`; prints "emu-record: native A s, qemu B s,
# hwt C s, overhead-vs-qemu C/B (cpu time)" and the same for wall time.
run_section emu-record bench/bench_emu.sh "$B"
# --- section: Intel BTS decoding, hwt vs perf script (bench/bench_bts.sh) ---
# one gzip recording of the emulated intel_bts unit; prints
# "bts-decode: hwt X MB/s, perf-script Y MB/s, ratio X/Y".
run_section bts-decode bench/bench_bts.sh "$B"
# --- section: CoreSight ETM decoding, hwt vs perf script (bench/bench_etm.sh) ---
# one bzip2 recording of the emulated cs_etm unit; prints
# "etm-decode: hwt X MB/s, perf-script Y MB/s, ratio X/Y".
run_section etm-decode bench/bench_etm.sh "$B"
# --- section: emulated CoreSight ETM unit cost (bench/bench_emu_arm.sh) ---
# CPU time of a bzip2 run under qemu-aarch64 and under `hwt record -e
# cs_etm`; prints "emu-record-arm: qemu A s, hwt B s, overhead-vs-qemu B/A".
run_section emu-record-arm bench/bench_emu_arm.sh "$B"
# --- section: emulated Arm SPE unit cost (bench/bench_emu_spe.sh) ---
# CPU time of a bzip2 run under qemu-aarch64 and under `hwt record -e
# arm_spe` at the default interval; prints
# "emu-record-spe: qemu A s, hwt B s (N records), overhead-vs-qemu B/A".
run_section emu-record-spe bench/bench_emu_spe.sh "$B"
# --- section: emulated Intel PEBS unit cost (bench/bench_emu_pebs.sh) ---
# CPU time of a gzip run under qemu-x86_64 and under `hwt record -e
# mem-loads` / `-e mem-stores` at the default period; prints
# "emu-record-pebs: qemu A s, mem-loads B s (N samples), mem-stores C s, ...".
run_section emu-record-pebs bench/bench_emu_pebs.sh "$B"

exit $status
