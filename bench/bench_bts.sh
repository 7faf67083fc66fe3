#!/bin/bash
# bench/bench_bts.sh BUILD - Intel BTS decoding: hwt vs perf script.
#
# Records one real program (gzip -1 of 200 KB of base64 text) with the
# emulated intel_bts unit, then, in the same run, times `hwt script
# --branches --format tsv` (or, where hwt script does not decode BTS,
# bench_bts: the library decoder printing tsv) and `perf script --itrace=b
# -F tid,ip,addr`, both into /dev/null, on that file.
# Speeds are trace (AUX) megabytes per wall second.  Prints one line:
#   bts-decode: hwt X MB/s, perf-script Y MB/s, ratio X/Y
set -u
B=${1:?usage: bench/bench_bts.sh BUILD}
HWT=$(realpath -m "$B/hwt")
command -v qemu-x86_64 >/dev/null || { echo "bts-decode: SKIP (no qemu-x86_64)"; exit 0; }
command -v perf >/dev/null || { echo "bts-decode: SKIP (no perf)"; exit 0; }
[ -x "$HWT" ] && [ -x "$B/bench/bench_bts" ] || { echo "bts-decode: SKIP ($B not built)"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -c 150000 /dev/urandom | base64 >"$T/in.txt"
if ! "$HWT" record -e intel_bts -o "$T/bts.data" -- gzip -1 -c "$T/in.txt" >/dev/null 2>"$T/err"; then
	echo "bts-decode: FAIL (hwt record: $(tail -1 "$T/err"))"
	exit 1
fi
read -r _ mbs bytes _ < <("$B/bench/bench_bts" "$T/bts.data") || {
	echo "bts-decode: FAIL (bench_bts)"
	exit 1
}
# hwt script itself once it decodes BTS (the decoding engine), else the
# library decoder alone (bench_bts, above)
if [ -n "$("$HWT" script -i "$T/bts.data" --branches --format tsv 2>/dev/null | head -1)" ]; then
	t0=$(date +%s.%N)
	"$HWT" script -i "$T/bts.data" --branches --format tsv >/dev/null 2>&1
	t1=$(date +%s.%N)
	mbs=$(awk -v b="$bytes" -v t0="$t0" -v t1="$t1" 'BEGIN { t = t1 - t0; printf "%.1f", b / 1e6 / (t > 0 ? t : 1e-9) }')
fi
t0=$(date +%s.%N)
perf script -i "$T/bts.data" --itrace=b -F tid,ip,addr >/dev/null 2>&1
t1=$(date +%s.%N)
awk -v h="$mbs" -v b="$bytes" -v t0="$t0" -v t1="$t1" 'BEGIN {
	t = t1 - t0
	p = b / 1e6 / (t > 0 ? t : 1e-9)
	printf "bts-decode: hwt %.1f MB/s, perf-script %.1f MB/s, ratio %.1f\n", h, p, h / p }'
