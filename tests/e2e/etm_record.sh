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
# hwt script --branches --format tsv (hwt's cs_etm decoder, OpenCSD) must
# equal the truth per thread (asynchronous transfers aside; branches into
# the signal trampoline included: hwt knows where they went), and its
# branches into mapped code must equal perf's list.  Branch kinds: each
# tsv kind agrees with the instruction Capstone disassembles at its
# source (--insn --disasm; OpenCSD classifies, Capstone is independent).
# hwt script's output (tsv, --calls) is the same at -j4 as at -j1 (frames
# only; jobs_same in lib.bash).
# Each program in CoreSight frames (default) and raw (ETE/TRBE style,
# AUX records flagged 0x100).  A signal handler returns through qemu's
# signal trampoline, a page no file backs (a real kernel's vDSO): perf
# cannot read it, so truth branches into code outside every MMAP2 range
# are left out (and counted).
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require etm_record qemu-aarch64 perf aarch64-linux-gnu-gcc
require_built etm_record "$HWT" "$B/hwt-etm-plugin.so"
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

# the branches of FILE (tid<TAB>from<TAB>to) whose target lies in a file
# mapping of DIR/perf.data: mapped DIR FILE (count of the others: DIR/unmapped)
mapped() {
	[ -s "$1/maps" ] || perf script -i "$1/perf.data" --show-mmap-events --no-itrace 2>/dev/null |
		sed -n 's/.*PERF_RECORD_MMAP2 [0-9/]*: \[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)).*/\1 \2/p' >"$1/maps"
	awk -F'\t' 'NR == FNR { lo[NR] = strtonum($1); hi[NR] = lo[NR] + strtonum($2); n = NR; next }
		NF == 3 { t = strtonum($3); for (i = 1; i <= n; i++) if (t >= lo[i] && t < hi[i]) { print; next }
			  out++ }
		END { print out + 0 > "/dev/stderr" }' <(tr ' ' '\t' <"$1/maps") "$2" 2>"$1/unmapped"
}
mapped_truth() {
	mapped "$1" "$1/truth"
}

# hwt script's branches (tid<TAB>from<TAB>to), asynchronous ones and gap
# lines left out
hwt_branches() {
	"$HWT" script -i "$1" --branches --format tsv 2>"$2.err" |
		awk -F'\t' 'NF == 4 && $4 != "async"' | cut -f1-3 | sort -s -k1,1n
}

# each tsv kind against Capstone's mnemonic at the branch's source
kinds_check() {
	local name=$1 d=$2
	"$HWT" script -i "$d/perf.data" --insn --disasm --no-time 2>/dev/null |
		awk -F'\t' '{ split($1, a, " "); print a[2] "\t" $2 }' | sort -u >"$d/dis"
	local bad
	bad=$("$HWT" script -i "$d/perf.data" --branches --format tsv 2>/dev/null |
		awk -F'\t' 'NR == FNR { split($2, w, " "); m[$1] = w[1]; next }
		NF == 4 && $4 != "async" { k = $4; i = m[$2]; sub(/^b\.[a-z][a-z]$/, "b.cond", i)
			ok = (k == "jcc" && (i == "b.cond" || i ~ /^(cbz|cbnz|tbz|tbnz)$/)) ||
			     (k == "jmp" && i == "b") || (k == "call" && i == "bl") ||
			     (k == "icall" && i == "blr") || (k == "ijmp" && i == "br") ||
			     (k == "ret" && i == "ret")
			if (!ok) { print k, $2, i; exit } }' "$d/dis" -)
	if [ -z "$bad" ] && [ -s "$d/dis" ]; then
		pass "$name ($(wc -l <"$d/dis") instructions disassembled)"
	else
		fail "$name" "kind vs disassembly: ${bad:-no disassembly}"
	fi
}

# check NAME EVENT CMD...
check() {
	local name=$1 ev=$2 lost
	shift 2
	local d=$T/$name
	mkdir -p "$d"
	(cd "$T" && qemu-aarch64 -L "$ROOT" "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$HWT" record -e "$ev" --emulate --truth "$d/truth" -o "$d/perf.data" -- "$@" \
		>"$d/out" 2>"$d/err")
	same_run "$name" "$d" "$ref_rc" $? || return
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
	etm_perf_branches "$d/ps" | sort -s -k1,1n >"$d/p"
	mapped_truth "$d" | sort -s -k1,1n >"$d/t"
	local threads
	threads=$(cut -f1 "$d/t" | sort -u | wc -l)
	if [ ! -s "$d/t" ]; then
		fail "$name" "empty truth"
	elif ! lost=$(etm_perf_cmp "$d/p" "$d/t"); then
		fail "$name" "perf's branches differ from the truth ($(grep -vc '	0x0$' "$d/p") vs $(wc -l <"$d/t")): $lost"
	else
		local u
		u=$(cat "$d/unmapped")
		pass "$name ($(wc -l <"$d/t") branches, $threads thread(s)$([ "$u" != 0 ] && echo ", $u into the signal trampoline left out")$([ "$lost" != 0 ] && echo ", $lost lost by perf at an AUX buffer's end"))"
	fi
	# hwt's own decoder: the whole truth, and perf's list in mapped code
	hwt_branches "$d/perf.data" "$d/hs" >"$d/h"
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/ta"
	mapped "$d" "$d/h" | sort -s -k1,1n >"$d/hm"
	if [ ! -s "$d/h" ] || ! cmp -s "$d/h" "$d/ta"; then
		fail "${name}_script" "hwt script's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/ta")): $(diff "$d/h" "$d/ta" | head -3 | tr '\n' ' ') $(head -c 200 "$d/hs.err")"
	elif ! lost=$(etm_perf_cmp "$d/p" "$d/hm"); then
		fail "${name}_script" "hwt script's branches into mapped code differ from perf's ($(wc -l <"$d/hm") vs $(grep -vc '	0x0$' "$d/p")): $lost"
	else
		pass "${name}_script ($(wc -l <"$d/h") branches = truth, $(wc -l <"$d/hm") = perf)"
	fi
	[ -n "${KINDS:-}" ] && kinds_check "${name}_kinds" "$d"
	# (frames only, tsv and --calls at -j4: ETM decodes slowly)
	[ "$MODE" = frames ] && jobs_same "${name}_jobs" "$d/perf.data" "--branches --format tsv|--calls" "-j4"
	rm -rf "$d"
}

# each program in frames (this file) and raw (etm_record_raw.sh sets
# ETM_MODE=raw and runs this file); every other program in this file,
# the rest in etm_record_b.sh / etm_record_raw_b.sh (ETM_PART=b): four
# files, four time budgets
MODE=${ETM_MODE:-frames}
PART=${ETM_PART:-a}
NPROG=0
both() {
	local name=$1
	shift
	NPROG=$((NPROG + 1))
	local mine=a
	[ $((NPROG % 2)) = 0 ] && mine=b
	[ "$mine" = "$PART" ] || return 0
	if [ "$MODE" = raw ]; then
		check "${name}_raw" cs_etm/raw/ "$@"
	else
		check "$name" cs_etm "$@"
	fi
}
KINDS=1 both etm_rec_branches "$PROGS/branches" 3000
both etm_rec_threads "$PROGS/threads"
both etm_rec_forker "$PROGS/forker"
both etm_rec_sig "$PROGS/sig"
KINDS=1 both etm_rec_ls "$ROOT/bin/ls" -la /etc
both etm_rec_sed "$ROOT/bin/sed" -e 's/x/y/g' lines.txt
both etm_rec_grep "$ROOT/bin/grep" -c 9 lines.txt
both etm_rec_sort "$ROOT/usr/bin/sort" -n lines.txt
both etm_rec_gawk_libs "$ROOT/usr/bin/gawk" -M 'BEGIN { print 2^200; exit 3 }'
both etm_rec_zstd_threads "$ROOT/usr/bin/zstd" -T2 -q -c data.txt
both etm_rec_xz_threads "$ROOT/usr/bin/xz" -0 -T2 -q -c data.txt # -0: a small dictionary (-6 ran 14 M branches initialising its tables)
both etm_rec_dash_fork "$ROOT/bin/dash" -c 'echo a; (echo sub; exit 3); echo "sub=$?"'
[ "$MODE" = frames ] && [ "$PART" = b ] && PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 check etm_rec_perl_signal cs_etm "$ROOT/usr/bin/perl" -e '$SIG{USR1} = sub { print "got usr1\n" }; kill "USR1", $$; my %h; $h{$_ % 7}++ for 1..500; print join(",", map { "$_=$h{$_}" } sort keys %h), "\n"'
[ "$MODE" = raw ] && [ "$PART" = b ] && PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 check etm_rec_perl_signal_raw cs_etm/raw/ "$ROOT/usr/bin/perl" -e '$SIG{USR1} = sub { print "got usr1\n" }; kill "USR1", $$; print "done\n"'
both etm_rec_bzip2 "$ROOT/bin/bzip2" -c data.txt

# the wrong unit for the program's architecture: one clear line, exit 2
[ "$MODE" = raw ] || [ "$PART" = b ] && exit 0
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
