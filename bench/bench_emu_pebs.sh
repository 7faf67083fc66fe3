#!/bin/bash
# bench/bench_emu_pebs.sh BUILD - cost of the emulated Intel PEBS unit.
#
# One CPU-bound workload (gzip -1 of 4 MB of base64 text), timed under
# plain qemu-x86_64 and under `hwt record -e mem-loads` at its defaults
# (ldlat=30, period 1000: every guest memory access goes through the cache
# model, one sample per 1000 loads slower than 30 cycles), and under
# `hwt record -e mem-stores` (period 1000).  CPU time (user+sys of the process
# tree), best of 3.  Prints one line:
#   emu-record-pebs: qemu A s, mem-loads B s (N samples), mem-stores C s,
#   overhead-vs-qemu B/A, C/A
# BENCH_BYTES (default 3000000 random bytes, base64) sets the input size.
set -u
B=${1:?usage: bench/bench_emu_pebs.sh BUILD}
HWT=$(realpath -m "$B/hwt")
command -v qemu-x86_64 >/dev/null || { echo "emu-record-pebs: SKIP (no qemu-x86_64)"; exit 0; }
[ -x "$HWT" ] || { echo "emu-record-pebs: SKIP ($HWT not built)"; exit 0; }
LABEL=emu-record-pebs
. "$(dirname "$0")/lib.bash"
head -c "${BENCH_BYTES:-3000000}" /dev/urandom | base64 >"$T/in.txt"
GZ=$(type -P gzip)
q=$(best qemu-x86_64 "$GZ" -1 -c "$T/in.txt")
l=$(best "$HWT" record -e mem-loads -o "$T/l.data" -- "$GZ" -1 -c "$T/in.txt")
s=$(best "$HWT" record -e mem-stores -o "$T/s.data" -- "$GZ" -1 -c "$T/in.txt")
n=$("$HWT" script --format tsv "$T/l.data" 2>/dev/null | wc -l)
awk -v q="$q" -v l="$l" -v s="$s" -v n="$n" \
	'BEGIN { printf "emu-record-pebs: qemu %.2f s, mem-loads %.2f s (%d samples), mem-stores %.2f s, overhead-vs-qemu %.2f, %.2f\n", q, l, n, s, (q > 0 ? l / q : 0), (q > 0 ? s / q : 0) }'
