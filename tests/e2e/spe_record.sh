#!/bin/bash
# tests/e2e/spe_record.sh - `hwt record -e arm_spe --truth` (the emulated
# Arm SPE, qemu-aarch64) on real aarch64 programs (Debian's arm64 packages,
# tests/arm64/fetch.sh, and small programs built with aarch64-linux-gnu-gcc),
# checked against the emulator's truth (every operation the unit sampled, as
# it saw it) by two decoders:
#   - Linux perf 6.1 (the oracle): perf script --itrace=i1ifmtb gives per
#     record one sample per event and one "instructions" sample; per thread
#     the same records as the truth: pc, data address (branch target for
#     branch-miss), total latency, and the L1D / LLC / TLB / mispredict
#     events (tests/e2e/spe_check.py);
#   - hwt's own decoder (lib/spe through the recording decoder,
#     tests/e2e/spe_samples.c): per thread pc, operation, address, total /
#     issue / translation latency and all event bits, no gap;
#   - hwt script --format tsv: per thread pc, address, latency, data source
#     (perf's encoding of the events) and operation, the same at -j4;
# the program's stdout and exit status equal those of an untraced run.
# Also: the terms (filters, min_latency, jitter, ts_enable=0), hwt dump,
# and the cache model on programs with known behaviour (memwalk: a random
# walk over 256 MiB misses the LLC on >= 90% of its sampled loads, a loop
# over 16 KiB hits L1D on >= 95%).
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require spe_record qemu-aarch64 perf aarch64-linux-gnu-gcc python3
if [ ! -x "$HWT" ] || [ ! -f "$B/hwt-etm-plugin.so" ] || [ ! -f "$B/libhwt.a" ]; then
	fail spe_record "$B/hwt, $B/hwt-etm-plugin.so or $B/libhwt.a not built"
	exit 0
fi
ROOT=$(tests/arm64/fetch.sh 2>"$T/fetch.err")
if [ -z "$ROOT" ] || [ ! -d "$ROOT" ]; then
	skip spe_record "no arm64 program cache: $(head -c 200 "$T/fetch.err")"
	exit 0
fi
PROGS=$(dirname "$ROOT")/progs
if ! hwt_cc "$T/spe_samples" tests/e2e/spe_samples.c 2>"$T/cc.err" ||
	! aarch64-linux-gnu-gcc -O2 -pthread -o "$T/memwalk" tests/arm64/progs/memwalk.c 2>>"$T/cc.err"; then
	fail spe_record "cannot build the helpers: $(head -c 300 "$T/cc.err")"
	exit 0
fi
CHECK="python3 tests/e2e/spe_check.py"
export HWT_SYSROOT=$ROOT LC_ALL=C
head -c 100000 /dev/zero | tr '\0' 'a' | fold -w 60 >"$T/data.txt"
seq 1 3000 | sed 's/1/x/g' >"$T/lines.txt"

# check NAME EVENT CMD...: record, then perf and hwt against the truth
check() {
	local name=$1 ev=$2
	shift 2
	local d=$T/$name
	mkdir -p "$d"
	(cd "$T" && qemu-aarch64 -L "$ROOT" "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$HWT" record -e "$ev" --emulate --truth "$d/truth" -o "$d/perf.data" -- "$@" \
		>"$d/out" 2>"$d/err")
	same_run "$name" "$d" "$ref_rc" $? || return
	if ! perf script -i "$d/perf.data" --itrace=i1ifmtb -F tid,ip,addr,event,weight \
		>"$d/ps" 2>"$d/ps.err"; then
		fail "$name" "perf script failed: $(head -2 "$d/ps.err")"
		return
	fi
	if grep -qi "error\|Couldn't find" "$d/ps.err"; then
		fail "$name" "perf: $(grep -i -m1 "error\|Couldn't find" "$d/ps.err")"
		return
	fi
	local pm hm
	pm=$($CHECK perf "$d/truth" "$d/ps")
	if [[ "$pm" != ok* ]]; then
		fail "$name" "perf script differs from the truth: $pm"
		return
	fi
	if ! "$T/spe_samples" "$d/perf.data" >"$d/hs" 2>"$d/hs.err"; then
		fail "$name" "hwt's decoder failed: $(head -c 300 "$d/hs.err")"
		return
	fi
	if grep -q '^gap' "$d/hs"; then
		fail "$name" "hwt's decoder: $(grep -m1 '^gap' "$d/hs")"
		return
	fi
	hm=$($CHECK hwt "$d/truth" "$d/hs")
	if [[ "$hm" != ok* ]]; then
		fail "$name" "hwt's decoder differs from the truth: $hm"
		return
	fi
	if ! "$HWT" script --format tsv "$d/perf.data" >"$d/st" 2>"$d/st.err"; then
		fail "$name" "hwt script failed: $(head -c 300 "$d/st.err")"
		return
	fi
	hm=$($CHECK script "$d/truth" "$d/st")
	if [[ "$hm" != ok* ]]; then
		fail "$name" "hwt script differs from the truth: $hm"
		return
	fi
	pass "$name (${pm#ok }; perf script, hwt's decoder and hwt script equal the truth)"
	jobs_same "${name}_jobs" "$d/perf.data" "--format tsv" "-j4"
	[ "${KEEP:-}" ] || rm -rf "$d/ps" "$d/hs" "$d/st" "$d/perf.data"
}

check spe_rec_memwalk arm_spe "$T/memwalk" walk 300000
check spe_rec_memloop arm_spe/jitter=1/ "$T/memwalk" loop 200
check spe_rec_threads arm_spe "$PROGS/threads"
check spe_rec_memthreads arm_spe/period=512/ "$T/memwalk" threads 20000
check spe_rec_forker arm_spe "$PROGS/forker"
check spe_rec_sig arm_spe "$PROGS/sig"
check spe_rec_ls arm_spe "$ROOT/bin/ls" -la /etc
check spe_rec_sed arm_spe "$ROOT/bin/sed" -e 's/x/y/g' lines.txt
check spe_rec_sort_loads arm_spe/load_filter=1,period=256/ "$ROOT/usr/bin/sort" -n lines.txt
check spe_rec_gawk_minlat arm_spe/min_latency=20/ "$ROOT/usr/bin/gawk" -M 'BEGIN { print 2^200; exit 3 }'
check spe_rec_zstd_threads arm_spe "$ROOT/usr/bin/zstd" -T2 -q -c data.txt
check spe_rec_bzip2_branches arm_spe/branch_filter=1,store_filter=1/ "$ROOT/bin/bzip2" -c data.txt
check spe_rec_grep_nots arm_spe/ts_enable=0/ "$ROOT/bin/grep" -c 9 lines.txt

# the filters keep only what they select (the truth marks the others)
f=$T/spe_rec_sort_loads/truth
if [ -s "$f" ] && ! awk -F'\t' 'NF == 9 && $4 != "ld" { bad = 1 } END { exit bad }' "$f"; then
	fail spe_rec_filter_loads "a recorded operation that is not a load"
elif [ -s "$f" ] && grep -q filtered "$f"; then
	pass spe_rec_filter_loads
else
	fail spe_rec_filter_loads "no truth, or nothing filtered out"
fi
f=$T/spe_rec_gawk_minlat/truth
if [ -s "$f" ] && awk -F'\t' 'NF == 9 && strtonum($6) < 20 { bad = 1 } END { exit bad }' "$f" &&
	grep -q filtered "$f"; then
	pass spe_rec_filter_min_latency
else
	fail spe_rec_filter_min_latency "a recorded operation below min_latency, or no truth"
fi

# the cache model on known access patterns (the truth's events)
model() {
	local name=$1 frac=$2 bit=$3 what=$4 clear=${5:-}
	local d=$T/$name
	local lo hi m
	read -r lo hi < <(sed -n 's/^range \(0x[0-9a-f]*\) \(0x[0-9a-f]*\)$/\1 \2/p' "$d/err")
	if [ -z "${lo:-}" ]; then
		fail "${name}_model" "no data range in the program's stderr"
		return
	fi
	m=$($CHECK model "$d/truth" "$lo" "$hi" "$frac" "$bit" $clear)
	if [[ "$m" == ok* ]]; then
		pass "${name}_model ($what: ${m#ok })"
	else
		fail "${name}_model" "$what: $m"
	fi
}
model spe_rec_memwalk 0.90 9 "LLC misses"
model spe_rec_memloop 0.95 3 "L1D hits (no refill)" clear

# hwt dump lists SPE records one packet a line
d=$T/spe_dump
mkdir -p "$d"
(cd "$T" && "$HWT" record -e arm_spe/period=4096/ --emulate -o "$d/perf.data" -- "$PROGS/branches" 300 \
	>/dev/null 2>&1)
"$HWT" dump "$d/perf.data" >"$d/dump" 2>"$d/dump.err"
npc=$(grep -c ' PC 0x' "$d/dump")
nend=$(grep -c ' TS [0-9]*$\| END$' "$d/dump")
nrec=$(perf script -i "$d/perf.data" --itrace=i1i 2>/dev/null | grep -c instructions)
if [ "$npc" -gt 0 ] && [ "$npc" = "$nend" ] && [ "$npc" = "$nrec" ] && ! grep -q "bad packet" "$d/dump"; then
	pass "spe_dump ($npc records)"
else
	fail spe_dump "PC packets $npc, record ends $nend, perf's records $nrec: $(head -c 200 "$d/dump.err")"
fi

# the wrong architecture: one clear line, exit 2
"$HWT" record -e arm_spe --emulate -o "$T/x.data" -- /bin/true >/dev/null 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -q "intel_pt" "$T/err"; then
	pass spe_rec_refuse_x86
else
	fail spe_rec_refuse_x86 "exit $rc: $(head -c 200 "$T/err")"
fi
"$HWT" record -e arm_spe/bogus=1/ --emulate -o "$T/x.data" -- "$PROGS/branches" >/dev/null 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -q "unknown term 'bogus'" "$T/err"; then
	pass spe_rec_bad_term
else
	fail spe_rec_bad_term "exit $rc: $(head -c 200 "$T/err")"
fi
