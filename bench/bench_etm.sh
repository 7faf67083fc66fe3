#!/bin/bash
# bench/bench_etm.sh BUILD - CoreSight ETM (cs_etm) decoding: hwt vs perf
# script (both on OpenCSD).
#
# Records one real aarch64 program (Debian arm64 bzip2 of 300 KB of
# base64 text, tests/arm64/fetch.sh cache) with the emulated ETM unit
# (CoreSight frames), then, in the same run, times `hwt script --branches
# --format tsv` and `perf script --itrace=b -F tid,ip,addr`, both into
# /dev/null, on that file; each twice, the faster kept.  Speeds are trace
# (AUX) megabytes per CPU second (user + sys: robust on a shared machine).  Prints one line:
#   etm-decode: hwt X MB/s, perf-script Y MB/s, ratio X/Y
set -u
B=${1:?usage: bench/bench_etm.sh BUILD}
HWT=$(realpath -m "$B/hwt")
command -v qemu-aarch64 >/dev/null || { echo "etm-decode: SKIP (no qemu-aarch64)"; exit 0; }
command -v perf >/dev/null || { echo "etm-decode: SKIP (no perf)"; exit 0; }
[ -x "$HWT" ] || { echo "etm-decode: SKIP ($HWT not built)"; exit 0; }
ROOT=$(tests/arm64/fetch.sh 2>/dev/null) || { echo "etm-decode: SKIP (no arm64 cache)"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -c 225000 /dev/urandom | base64 >"$T/in.txt"
if ! HWT_SYSROOT=$ROOT "$HWT" record -e cs_etm --emulate -o "$T/etm.data" -- "$ROOT/bin/bzip2" -c "$T/in.txt" \
	>/dev/null 2>"$T/err"; then
	echo "etm-decode: FAIL (hwt record: $(tail -1 "$T/err"))"
	exit 1
fi
bytes=$(sed -n 's/.* \([0-9]*\) trace bytes.*/\1/p' "$T/err" | tail -1)
[ -n "$bytes" ] && [ "$bytes" -gt 0 ] || { echo "etm-decode: FAIL (no trace bytes: $(tail -1 "$T/err"))"; exit 1; }
secs() { # best CPU time (user + sys) of two runs of "$@"
	local best=
	for _ in 1 2; do
		/usr/bin/time -f '%U %S' -o "$T/t" "$@" >/dev/null 2>&1
		best=$(awk -v c="$best" '{ t = $1 + $2; if (c != "" && c < t) t = c; print t }' "$T/t")
	done
	echo "$best"
}
h=$(secs "$HWT" script -i "$T/etm.data" --branches --format tsv)
p=$(secs perf script -i "$T/etm.data" --itrace=b -F tid,ip,addr)
awk -v b="$bytes" -v h="$h" -v p="$p" 'BEGIN {
	hm = b / 1e6 / (h > 0 ? h : 1e-9); pm = b / 1e6 / (p > 0 ? p : 1e-9)
	printf "etm-decode: hwt %.1f MB/s, perf-script %.1f MB/s, ratio %.1f\n", hm, pm, hm / pm }'
