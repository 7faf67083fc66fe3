#!/bin/bash
# tests/e2e/etm_record.sh - `hwt record -e cs_etm --truth` (the emulated
# CoreSight ETM, qemu-aarch64) on real aarch64 programs from Debian's arm64
# packages (tests/arm64/fetch.sh) and small ones built with
# aarch64-linux-gnu-gcc, decoded by Linux perf 6.1 with OpenCSD (the oracle):
#   perf script --itrace=b -F tid,ip,addr reports no decode error and,
#   trace begin/end entries aside, exactly the truth's branches per thread
#   (the truth comes from QEMU's executed blocks, not from the encoder);
#   the program's stdout and exit status equal those of an untraced run
#   under plain qemu-aarch64 -L.
# Each program in CoreSight frames (default) and a few raw (ETE/TRBE style,
# AUX records flagged 0x100).  A signal handler returns through qemu's
# signal trampoline, a page no file backs (a real kernel's vDSO): perf
# cannot read it, so truth branches into code outside every MMAP2 range
# are left out (and counted).
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

for c in qemu-aarch64 perf aarch64-linux-gnu-gcc; do
	if ! command -v $c >/dev/null; then
		skip etm_record "$c not installed (make deps)"
		exit 0
	fi
done
if [ ! -x "$HWT" ] || [ ! -f "$B/hwt-etm-plugin.so" ]; then
	fail etm_record "$B/hwt or $B/hwt-etm-plugin.so not built"
	exit 0
fi
if ! perf report -D -i /dev/null 2>&1 | grep -q . || ! ldd "$(command -v perf)" | grep -q opencsd; then
	skip etm_record "perf is not linked with OpenCSD (no cs_etm decoding)"
	exit 0
fi
ROOT=$(tests/arm64/fetch.sh 2>"$T/fetch.err")
if [ -z "$ROOT" ] || [ ! -d "$ROOT" ]; then
	skip etm_record "no arm64 program cache: $(head -c 200 "$T/fetch.err")"
	exit 0
fi
PROGS=$(dirname "$ROOT")/progs
export HWT_SYSROOT=$ROOT LC_ALL=C
head -c 100000 /dev/zero | tr '\0' 'a' | fold -w 60 >"$T/data.txt"
seq 1 3000 | sed 's/1/x/g' >"$T/lines.txt"

# perf's branches (tid<TAB>from<TAB>to), trace begin/end entries removed
perf_branches() {
	awk '$3 == "=>" && $2 != "0" && $4 != "0" { print $1 "\t0x" $2 "\t0x" $4 }' "$1"
}

# the truth's branches whose target lies in a file mapping of DIR/perf.data
mapped_truth() {
	perf script -i "$1/perf.data" --show-mmap-events --no-itrace 2>/dev/null |
		sed -n 's/.*PERF_RECORD_MMAP2 [0-9/]*: \[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)).*/\1 \2/p' >"$1/maps"
	awk -F'\t' 'NR == FNR { lo[NR] = strtonum($1); hi[NR] = lo[NR] + strtonum($2); n = NR; next }
		NF == 3 { t = strtonum($3); for (i = 1; i <= n; i++) if (t >= lo[i] && t < hi[i]) { print; next }
			  out++ }
		END { print out + 0 > "/dev/stderr" }' <(tr ' ' '\t' <"$1/maps") "$1/truth" 2>"$1/unmapped"
}

# check NAME EVENT CMD...
check() {
	local name=$1 ev=$2
	shift 2
	local d=$T/$name
	mkdir -p "$d"
	(cd "$T" && qemu-aarch64 -L "$ROOT" "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$HWT" record -e "$ev" --emulate --truth "$d/truth" -o "$d/perf.data" -- "$@" \
		>"$d/out" 2>"$d/err")
	local rc=$?
	if [ $rc != $ref_rc ]; then
		fail "$name" "exit status $rc, untraced $ref_rc ($(grep -v '^\[' "$d/err" | head -2))"
		return
	fi
	if ! cmp -s "$d/out" "$d/ref.out"; then
		fail "$name" "stdout differs from the untraced run"
		return
	fi
	perf script -i "$d/perf.data" --itrace=b -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	local prc=$?
	if [ $prc != 0 ]; then
		fail "$name" "perf script failed ($prc): $(head -2 "$d/ps.err")"
		return
	fi
	if grep -qi "error\|Couldn't find" "$d/ps" "$d/ps.err"; then
		fail "$name" "perf: $(grep -i -m1 "error\|Couldn't find" "$d/ps" "$d/ps.err")"
		return
	fi
	perf_branches "$d/ps" | sort -s -k1,1n >"$d/p"
	mapped_truth "$d" | sort -s -k1,1n >"$d/t"
	local threads
	threads=$(cut -f1 "$d/t" | sort -u | wc -l)
	if [ ! -s "$d/t" ]; then
		fail "$name" "empty truth"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail "$name" "perf's branches differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	else
		local u
		u=$(cat "$d/unmapped")
		pass "$name ($(wc -l <"$d/t") branches, $threads thread(s)$([ "$u" != 0 ] && echo ", $u into the signal trampoline left out"))"
	fi
	rm -rf "$d"
}

check etm_rec_branches cs_etm "$PROGS/branches" 3000
check etm_rec_branches_raw cs_etm/raw/ "$PROGS/branches" 3000
check etm_rec_threads cs_etm "$PROGS/threads"
check etm_rec_forker cs_etm "$PROGS/forker"
check etm_rec_sig cs_etm "$PROGS/sig"
check etm_rec_ls cs_etm "$ROOT/bin/ls" -la /etc
check etm_rec_ls_raw cs_etm/raw/ "$ROOT/bin/ls" -la /etc
check etm_rec_sed cs_etm "$ROOT/bin/sed" -e 's/x/y/g' lines.txt
check etm_rec_grep cs_etm "$ROOT/bin/grep" -c 9 lines.txt
check etm_rec_sort cs_etm "$ROOT/usr/bin/sort" -n lines.txt
check etm_rec_gawk_libs cs_etm "$ROOT/usr/bin/gawk" -M 'BEGIN { print 2^200; exit 3 }'
check etm_rec_zstd_threads cs_etm "$ROOT/usr/bin/zstd" -T2 -q -c data.txt
check etm_rec_zstd_threads_raw cs_etm/raw/ "$ROOT/usr/bin/zstd" -T2 -q -c data.txt
check etm_rec_xz_threads cs_etm "$ROOT/usr/bin/xz" -T2 -q -c data.txt
check etm_rec_dash_fork cs_etm "$ROOT/bin/dash" -c 'echo a; (echo sub; exit 3); echo "sub=$?"'
check etm_rec_perl_signal cs_etm "$ROOT/usr/bin/perl" -e '$SIG{USR1} = sub { print "got usr1\n" }; kill "USR1", $$; my %h; $h{$_ % 7}++ for 1..500; print join(",", map { "$_=$h{$_}" } sort keys %h), "\n"'
check etm_rec_perl_signal_raw cs_etm/raw/ "$ROOT/usr/bin/perl" -e '$SIG{USR1} = sub { print "got usr1\n" }; kill "USR1", $$; print "done\n"'
check etm_rec_bzip2 cs_etm "$ROOT/bin/bzip2" -c data.txt

# the wrong unit for the program's architecture: one clear line, exit 2
"$HWT" record -e intel_pt --emulate -o "$T/x.data" -- "$PROGS/branches" >/dev/null 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -q "cs_etm" "$T/err"; then
	pass etm_rec_refuse_intel_pt
else
	fail etm_rec_refuse_intel_pt "exit $rc: $(head -c 200 "$T/err")"
fi
"$HWT" record -e cs_etm --emulate -o "$T/x.data" -- /bin/true >/dev/null 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -q "intel_pt" "$T/err"; then
	pass etm_rec_refuse_x86
else
	fail etm_rec_refuse_x86 "exit $rc: $(head -c 200 "$T/err")"
fi
