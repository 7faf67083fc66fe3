#!/bin/bash
# tests/e2e/pebs_record.sh - `hwt record -e mem-loads / mem-stores --truth`
# (the emulated Intel PEBS unit) on real programs (Debian packages),
# checked against Linux perf (the oracle) and the unit's truth:
#   perf script -F tid,ip,addr,weight,data_src gives exactly the truth's
#   samples per thread (ip, data address, latency, data source);
#   hwt script --format tsv gives them too, the same at -j4;
#   the program's stdout and exit status equal those of an untraced run;
#   perf mem report reads the recording.
# Programs: ls, sort, sed, gzip, zstd -T2 (threads), bash (fork), perl,
# gawk; loads and stores, with and without ldlat, model terms.
# Model checks (tests/e2e/progs/pebs_walk.c, built with gcc): loads at
# random lines of a 256 MiB buffer (32 x the model's 8 MiB LLC) miss the
# LLC on >= 90% of the samples perf attributes to walk_random; a loop over
# a 16 KiB buffer (half of the 32 KiB L1D) hits L1 on >= 95% of those in
# walk_small.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require pebs_record qemu-x86_64 perf
require_built pebs_record "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
head -c 200000 /dev/urandom | base64 >"$T/data.txt"
head -c 600000 /dev/urandom | base64 >"$T/big.txt" # zstd -T2 uses its threads
seq 1 3000 | sed 's/1/x/g' >"$T/lines.txt"

# perf script -F tid,ip,addr,weight,data_src prints
#   tid addr data_src |OP ...|...| weight ip
# -> the truth's "tid<TAB>0xip<TAB>0xaddr<TAB>weight<TAB>0xdata_src"
perf_samples() {
	awk '{ print $1 "\t0x" $NF "\t0x" $2 "\t" $(NF-1) "\t0x" $3 }' "$1"
}

# check NAME EVENT CMD...
check() {
	local name=$1 ev=$2
	shift 2
	local d=$T/$name
	mkdir -p "$d"
	(cd "$T" && "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$HWT" record -e "$ev" --truth "$d/truth" -o "$d/perf.data" \
		-- "$@" >"$d/out" 2>"$d/err")
	same_run "$name" "$d" "$ref_rc" $? || return
	perf script -i "$d/perf.data" -F tid,ip,addr,weight,data_src >"$d/ps" 2>"$d/ps.err"
	local prc=$?
	if [ $prc != 0 ]; then
		fail "$name" "perf script failed ($prc): $(head -2 "$d/ps.err")"
		return
	fi
	perf_samples "$d/ps" | sort -s -k1,1n >"$d/p"
	sort -s -k1,1n "$d/truth" >"$d/t"
	local threads
	threads=$(cut -f1 "$d/t" | sort -u | wc -l)
	if [ "$(wc -l <"$d/t")" -lt 50 ]; then
		fail "$name" "only $(wc -l <"$d/t") samples in the truth"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail "$name" "perf's samples differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "$name ($(wc -l <"$d/t") samples, $threads thread(s))"
	fi
	"$HWT" script -i "$d/perf.data" --format tsv 2>"$d/hs.err" | cut -f1-5 |
		sort -s -k1,1n >"$d/h"
	if cmp -s "$d/h" "$d/t"; then
		pass "${name}_script ($(wc -l <"$d/h") samples, as the truth)"
	else
		fail "${name}_script" "hwt script's samples differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ') $(head -c 200 "$d/hs.err")"
	fi
	jobs_same "${name}_jobs" "$d/perf.data" "--format tsv" "-j4"
	if [ "${MIN_THREADS:-1}" -gt "$threads" ]; then
		fail "${name}_threads" "$threads thread(s) sampled, expected ${MIN_THREADS}"
	fi
	rm -rf "$d"
}

check pebs_rec_ls mem-loads/ldlat=0/ ls -la /etc
check pebs_rec_sort mem-loads/period=53/ sort -n lines.txt
check pebs_rec_sed_stores mem-stores/period=41/ sed -e 's/x/y/g' lines.txt
check pebs_rec_gzip mem-loads/ldlat=0,period=301/ gzip -c data.txt
MIN_THREADS=2 check pebs_rec_zstd_threads mem-loads/ldlat=0,period=211/ zstd -T2 -B65536 -q -c big.txt
MIN_THREADS=2 check pebs_rec_bash_fork mem-loads/ldlat=0,period=50/ bash -c '(echo sub; true); echo "n=$(echo x)"; echo done'
check pebs_rec_perl mem-stores/period=97,l1_size=16K,llc_size=1M/ perl -e 'my %h; $h{$_ % 7}++ for 1..5000; print join(",", map { "$_=$h{$_}" } sort keys %h), "\n"'
check pebs_rec_gawk mem-loads gawk 'BEGIN { for (i = 0; i < 20000; i++) a[i] = i * 3; s = 0; for (k in a) s += a[k]; print s }'

# perf mem report on a recording
d=$T/memrep
mkdir -p "$d"
if ! (cd "$T" && "$HWT" record -e mem-loads -c 20 -o "$d/perf.data" -- ls -la /etc >/dev/null 2>&1); then
	fail pebs_perf_mem_report "hwt record failed"
elif ! perf mem report -i "$d/perf.data" --stdio >"$d/rep" 2>"$d/rep.err"; then
	fail pebs_perf_mem_report "perf mem report failed: $(head -2 "$d/rep.err")"
elif ! grep -q '^# Samples: .* of event' "$d/rep" || ! grep -q 'RAM hit\|L3 hit\|L1 hit' "$d/rep"; then
	fail pebs_perf_mem_report "no samples or data sources in perf mem report: $(head -c 300 "$d/rep")"
else
	pass "pebs_perf_mem_report ($(grep -m1 '^# Samples' "$d/rep"))"
fi
rm -rf "$d"

# The model on programs of known behaviour.
require pebs_model gcc
if ! gcc -O2 -o "$T/walk" tests/e2e/progs/pebs_walk.c 2>"$T/cc.err"; then
	fail pebs_model "cannot build pebs_walk.c: $(head -2 "$T/cc.err")"
	exit 0
fi
# model NAME FUNC WANT MIN_PERCENT ARGS...: of the samples perf attributes
# to FUNC, at least MIN_PERCENT% have a data source matching WANT
model() {
	local name=$1 func=$2 want=$3 min=$4
	shift 4
	local d=$T/$name
	mkdir -p "$d"
	if ! "$HWT" record -e mem-loads/ldlat=0/ -c 101 -o "$d/perf.data" -- "$T/walk" "$@" \
		>/dev/null 2>"$d/err"; then
		fail "$name" "hwt record failed: $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	perf script -i "$d/perf.data" -F ip,sym,data_src 2>/dev/null | grep " $func\$" >"$d/s"
	local n m
	n=$(wc -l <"$d/s")
	m=$(grep -c "$want" "$d/s")
	if [ "$n" -lt 500 ]; then
		fail "$name" "only $n samples in $func"
	elif [ $((m * 100)) -lt $((n * min)) ]; then
		fail "$name" "$m of $n samples in $func match '$want' (want >= $min%)"
	else
		pass "$name ($m of $n samples in $func: $want)"
	fi
	# hwt report --mem: FUNC's samples as perf counts them
	local hr
	hr=$("$HWT" report --mem -n 0 "$d/perf.data" 2>"$d/rep.err" | awk -v f="$func" \
		'/^# code symbols/ { c = 1; next } /^#/ && !/^# +samples/ { c = 0 } c && $NF == f { print $1 }')
	if [ "$hr" = "$n" ]; then
		pass "${name}_report_mem ($n samples in $func, as perf)"
	else
		fail "${name}_report_mem" "hwt report --mem has '$hr' samples in $func, perf $n $(head -c 200 "$d/rep.err")"
	fi
	rm -rf "$d"
}
model pebs_model_random_llc_miss walk_random 'LVL Local RAM or RAM hit' 90 random 256 200000
model pebs_model_small_l1_hit walk_small 'LVL L1 or L1 hit' 95 small 16 1000
