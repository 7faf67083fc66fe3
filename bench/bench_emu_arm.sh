#!/bin/bash
# bench/bench_emu_arm.sh BUILD - cost of the emulated CoreSight ETM unit.
#
# One CPU-bound aarch64 workload (Debian arm64 bzip2 of 1 MB of base64
# text, from the tests/arm64/fetch.sh cache), timed in one run under plain
# qemu-aarch64 -L and under `hwt record -e cs_etm --emulate` (plugin +
# recorder writing perf.data, frame-formatted).  CPU time (user+sys of the
# process tree); each variant runs 3 times and the best is kept.  Prints:
#   emu-record-arm: qemu A s, hwt B s, overhead-vs-qemu B/A
set -u
B=${1:?usage: bench/bench_emu_arm.sh BUILD}
HWT=$(realpath -m "$B/hwt")
command -v qemu-aarch64 >/dev/null || { echo "emu-record-arm: SKIP (no qemu-aarch64)"; exit 0; }
[ -x "$HWT" ] || { echo "emu-record-arm: SKIP ($HWT not built)"; exit 0; }
ROOT=$(tests/arm64/fetch.sh 2>/dev/null) || { echo "emu-record-arm: SKIP (no arm64 cache)"; exit 0; }
LABEL=emu-record-arm
. "$(dirname "$0")/lib.bash"
head -c 750000 /dev/urandom | base64 >"$T/in.txt"
q=$(best qemu-aarch64 -L "$ROOT" "$ROOT/bin/bzip2" -c "$T/in.txt")
h=$(HWT_SYSROOT=$ROOT best "$HWT" record -e cs_etm --emulate -o "$T/out.data" -- "$ROOT/bin/bzip2" -c "$T/in.txt")
awk -v q="$q" -v h="$h" \
	'BEGIN { printf "emu-record-arm: qemu %.2f s, hwt %.2f s, overhead-vs-qemu %.2f\n", q, h, (q > 0 ? h / q : 0) }'
