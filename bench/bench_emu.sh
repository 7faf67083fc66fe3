#!/bin/bash
# bench/bench_emu.sh BUILD - cost of the emulated Intel PT unit.
#
# One CPU-bound workload (gzip -1 of 4 MB of base64 text, from coreutils
# and gzip), timed three ways in one run: natively, under plain
# qemu-x86_64, and under `hwt record --emulate` (plugin + recorder writing
# perf.data with perf's default intel_pt terms).  CPU time (user+sys of
# the process tree) is used so that other load on the machine does not
# distort the ratio; each variant runs 3 times and the best is kept.
# Prints one line:
#   emu-record: native A s, qemu B s, hwt C s, overhead-vs-qemu C/B
set -u
B=${1:?usage: bench/bench_emu.sh BUILD}
HWT=$(realpath -m "$B/hwt")
command -v qemu-x86_64 >/dev/null || { echo "emu-record: SKIP (no qemu-x86_64)"; exit 0; }
[ -x "$HWT" ] || { echo "emu-record: SKIP ($HWT not built)"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -c 3000000 /dev/urandom | base64 >"$T/in.txt"
GZ=$(type -P gzip)

# cpu seconds (user+sys, children included) of one command
cpu() {
	/usr/bin/time -f '%U %S' -o "$T/t" "$@" >/dev/null 2>"$T/err" || {
		echo "emu-record: FAIL ($* failed: $(tail -1 "$T/err"))" >&2
		exit 1
	}
	awk '{ printf "%.3f\n", $1 + $2 }' "$T/t"
}
best() {
	local b=
	for _ in 1 2 3; do
		local v
		v=$(cpu "$@") || exit 1
		if [ -z "$b" ] || awk -v a="$v" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$v; fi
	done
	echo "$b"
}
n=$(best "$GZ" -1 -c "$T/in.txt")
q=$(best qemu-x86_64 "$GZ" -1 -c "$T/in.txt")
h=$(best "$HWT" record --emulate -o "$T/out.data" -- "$GZ" -1 -c "$T/in.txt")
awk -v n="$n" -v q="$q" -v h="$h" \
	'BEGIN { printf "emu-record: native %.2f s, qemu %.2f s, hwt %.2f s, overhead-vs-qemu %.2f\n", n, q, h, (q > 0 ? h / q : 0) }'
