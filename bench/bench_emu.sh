#!/bin/bash
# bench/bench_emu.sh BUILD - cost of the emulated Intel PT unit.
#
# One CPU-bound workload (gzip -6 of 20 MB of base64 text, from coreutils
# and gzip), timed three ways, interleaved: natively, under plain
# qemu-x86_64, and under `hwt record --emulate` (plugin + recorder writing
# perf.data with perf's default intel_pt terms).  Each variant runs
# $HWT_BENCH_RUNS times (default 3) and the best is kept, separately for
# CPU time (user+sys of the process tree: what the recording costs in
# total, whatever the machine's load) and wall time (what the user waits).
# HWT_EMU_ENCODER=sync|ref|thread|inline picks the plugin's encoder
# (emu/plugin.c; default sync: packets built on the program's thread, the
# common blocks in tb_fast).  Also timed: qemu with the plugin and
# encoder=none (an empty callback per executed block, nothing recorded),
# the floor of any per-block plugin on QEMU 7.2.  Prints three lines:
#   emu-record: native A s, qemu B s, hwt C s, overhead-vs-qemu C/B (cpu time)
#   emu-record: native A s, qemu B s, hwt C s, overhead-vs-qemu C/B (wall time)
#   emu-record-floor: qemu B s, empty per-block callback E s, ratio E/B (cpu time)
set -u
B=${1:?usage: bench/bench_emu.sh BUILD}
HWT=$(realpath -m "$B/hwt")
PLUGIN=$(realpath -m "$B/hwt-pt-plugin.so")
RUNS=${HWT_BENCH_RUNS:-3}
command -v qemu-x86_64 >/dev/null || { echo "emu-record: SKIP (no qemu-x86_64)"; exit 0; }
[ -x "$HWT" ] || { echo "emu-record: SKIP ($HWT not built)"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -c 15000000 /dev/urandom | base64 >"$T/in.txt" # 20 MB
GZ=$(type -P gzip)

# "cpu wall" seconds of one command (cpu: user+sys, children included)
run() {
	/usr/bin/time -f '%U %S %e' -o "$T/t" "$@" >/dev/null 2>"$T/err" || {
		echo "emu-record: FAIL ($* failed: $(tail -1 "$T/err"))" >&2
		exit 1
	}
	awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$T/t"
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }
nc= nw= qc= qw= hc= hw= ec=
for _ in $(seq "$RUNS"); do
	read -r c w < <(run "$GZ" -6 -c "$T/in.txt") || exit 1
	nc=$(min "$c" "$nc") nw=$(min "$w" "$nw")
	read -r c w < <(run qemu-x86_64 "$GZ" -6 -c "$T/in.txt") || exit 1
	qc=$(min "$c" "$qc") qw=$(min "$w" "$qw")
	read -r c w < <(run "$HWT" record --emulate -o "$T/out.data" -- "$GZ" -6 -c "$T/in.txt") || exit 1
	hc=$(min "$c" "$hc") hw=$(min "$w" "$hw")
	read -r c w < <(run qemu-x86_64 -plugin "$PLUGIN,encoder=none" "$GZ" -6 -c "$T/in.txt") || exit 1
	ec=$(min "$c" "$ec")
done
line() {
	awk -v n="$1" -v q="$2" -v h="$3" -v k="$4" \
		'BEGIN { printf "emu-record: native %.2f s, qemu %.2f s, hwt %.2f s, overhead-vs-qemu %.2f (%s)\n", n, q, h, (q > 0 ? h / q : 0), k }'
}
line "$nc" "$qc" "$hc" "cpu time"
line "$nw" "$qw" "$hw" "wall time"
awk -v q="$qc" -v e="$ec" \
	'BEGIN { printf "emu-record-floor: qemu %.2f s, empty per-block callback %.2f s, ratio %.2f (cpu time)\n", q, e, (q > 0 ? e / q : 0) }'
