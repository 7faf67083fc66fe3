#!/bin/bash
# bench/bench_emu_spe.sh BUILD - cost of the emulated Arm SPE unit.
#
# One CPU-bound aarch64 workload (Debian arm64 bzip2 of 1 MB of base64
# text, from the tests/arm64/fetch.sh cache), timed under plain
# qemu-aarch64 -L and under `hwt record -e arm_spe --emulate` at the
# default interval (1024 operations; every guest memory access goes through
# the cache model, every branch through the predictor model).  CPU time
# (user+sys of the process tree), best of 3.  Prints one line:
#   emu-record-spe: qemu A s, hwt B s (N records), overhead-vs-qemu B/A
set -u
B=${1:?usage: bench/bench_emu_spe.sh BUILD}
HWT=$(realpath -m "$B/hwt")
command -v qemu-aarch64 >/dev/null || { echo "emu-record-spe: SKIP (no qemu-aarch64)"; exit 0; }
[ -x "$HWT" ] || { echo "emu-record-spe: SKIP ($HWT not built)"; exit 0; }
ROOT=$(tests/arm64/fetch.sh 2>/dev/null) || { echo "emu-record-spe: SKIP (no arm64 cache)"; exit 0; }
LABEL=emu-record-spe
. "$(dirname "$0")/lib.bash"
head -c 750000 /dev/urandom | base64 >"$T/in.txt"
q=$(best qemu-aarch64 -L "$ROOT" "$ROOT/bin/bzip2" -c "$T/in.txt")
h=$(HWT_SYSROOT=$ROOT best "$HWT" record -e arm_spe --emulate -o "$T/out.data" -- "$ROOT/bin/bzip2" -c "$T/in.txt")
n=$("$HWT" script --format tsv "$T/out.data" 2>/dev/null | wc -l)
awk -v q="$q" -v h="$h" -v n="$n" \
	'BEGIN { printf "emu-record-spe: qemu %.2f s, hwt %.2f s (%d records), overhead-vs-qemu %.2f\n", q, h, n, (q > 0 ? h / q : 0) }'
