#!/bin/bash
# tests/e2e/bts_record.sh - `hwt record -e intel_bts --truth` (the emulated
# Intel BTS unit) on real programs (Debian packages), decoded by Linux perf
# (the oracle):
#   perf script --itrace=be -F tid,ip,addr must report no decode error and
#   exactly the truth's branches per thread (asynchronous transfers aside:
#   a user-only BTS trace does not see signal delivery);
#   hwt dump must list as many branch records per thread as the truth;
#   hwt script --branches --format tsv must equal the truth too (when this
#   build's hwt script decodes intel_bts), and the same at -j4 and with
#   --no-batch as at -j1 (jobs_same, also for --calls and text);
#   the program's stdout and exit status equal those of an untraced run.
# Programs: single- and multi-threaded (zstd -T2), fork + signal (bash),
# many shared libraries (gawk -M with libmpfr/libgmp, perl); small inputs
# (BTS writes 24 bytes per branch, perf script reads them all);
# full mode with a small ring (the emulated CPU waits), snapshot mode.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require bts_record qemu-x86_64 perf
require_built bts_record "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
head -c 100000 /dev/zero | tr '\0' 'a' | fold -w 60 >"$T/data.txt"
seq 1 600 | sed 's/1/x/g' >"$T/lines.txt"

# Does this build's hwt script decode intel_bts?  (Probed once, below.)
SCRIPT_BTS=

perf_branches() {
	awk '$3 == "=>" && $2 != "0" && $4 != "0" { print $1 "\t0x" $2 "\t0x" $4 }' "$1"
}

# hwt dump's branch records per thread: "tid count" lines
dump_counts() {
	awk '/^# stream/ { tid = $5; sub(",", "", tid); next }
	     / -> / { n[tid]++ } END { for (t in n) print t, n[t] }' "$1" | sort
}

# check NAME [-m SIZE] CMD...
check() {
	local name=$1 opt=()
	shift
	if [ "$1" = -m ]; then
		opt=(-m "$2")
		shift 2
	fi
	local d=$T/$name
	mkdir -p "$d"
	(cd "$T" && "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$HWT" record -e intel_bts "${opt[@]}" --truth "$d/truth" -o "$d/perf.data" \
		-- "$@" >"$d/out" 2>"$d/err")
	local rc=$?
	if [ $rc != $ref_rc ]; then
		fail "$name" "exit status $rc, untraced $ref_rc ($(grep -v '^\[' "$d/err" | head -2))"
		return
	fi
	if ! grep -q "emulated intel_bts" "$d/err"; then
		fail "$name" "no notice of the fallback to the emulated unit: $(head -2 "$d/err")"
		return
	fi
	if ! cmp -s "$d/out" "$d/ref.out"; then
		fail "$name" "stdout differs from the untraced run"
		return
	fi
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	local prc=$?
	if [ $prc != 0 ]; then
		fail "$name" "perf script failed ($prc): $(head -2 "$d/ps.err")"
		return
	fi
	if grep -q "trace error" "$d/ps" "$d/ps.err"; then
		fail "$name" "perf: $(grep -m1 'trace error' "$d/ps" "$d/ps.err")"
		return
	fi
	perf_branches "$d/ps" | sort -s -k1,1n >"$d/p"
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/t"
	local threads
	threads=$(cut -f1 "$d/t" | sort -u | wc -l)
	if [ ! -s "$d/t" ]; then
		fail "$name" "empty truth"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail "$name" "perf's branches differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "$name ($(wc -l <"$d/t") branches, $threads thread(s))"
	fi
	"$HWT" dump "$d/perf.data" >"$d/dump" 2>"$d/dump.err"
	dump_counts "$d/dump" >"$d/dc"
	cut -f1 "$d/t" | uniq -c | awk '{ print $2, $1 }' | sort >"$d/tc"
	if cmp -s "$d/dc" "$d/tc"; then
		pass "${name}_dump ($threads thread(s))"
	else
		fail "${name}_dump" "hwt dump's records per thread differ from the truth: $(tr '\n' ' ' <"$d/dc") vs $(tr '\n' ' ' <"$d/tc")"
	fi
	if [ -z "$SCRIPT_BTS" ]; then
		if [ -n "$("$HWT" script -i "$d/perf.data" --branches --format tsv 2>/dev/null | head -1)" ]; then
			SCRIPT_BTS=yes
		else
			SCRIPT_BTS=no
		fi
	fi
	if [ "$SCRIPT_BTS" = yes ]; then
		"$HWT" script -i "$d/perf.data" --branches --format tsv 2>"$d/hs.err" |
			awk -F'\t' '$4 != "async"' | cut -f1-3 | sort -s -k1,1n >"$d/h"
		if cmp -s "$d/h" "$d/t"; then
			pass "${name}_script ($(wc -l <"$d/h") branches, as the truth)"
		else
			fail "${name}_script" "hwt script's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ') $(head -c 200 "$d/hs.err")"
		fi
		jobs_same "${name}_jobs" "$d/perf.data"
	fi
	rm -rf "$d"
}

check bts_rec_echo echo hello world
check bts_rec_ls ls -la /etc
check bts_rec_sort sort -n lines.txt
check bts_rec_sed sed -e 's/x/y/g' lines.txt
check bts_rec_small_ring -m 16K,64K grep -c 9 lines.txt
check bts_rec_bash_signal_fork bash -c 'trap "echo got usr1" USR1; kill -USR1 $$; echo after; (echo subshell; exit 3); echo "sub=$?"'
check bts_rec_zstd_threads zstd -T2 -q -c data.txt
check bts_rec_perl perl -e 'my %h; $h{$_ % 7}++ for 1..500; print join(",", map { "$_=$h{$_}" } sort keys %h), "\n"'
check bts_rec_gawk_libs gawk -M 'BEGIN { print 2^200; exit 3 }'
[ "$SCRIPT_BTS" = no ] && skip bts_rec_script "this hwt script does not decode intel_bts recordings yet"

# hwt script --insn on BTS (the exact walk between branches) against the
# same program recorded with the emulated Intel PT unit (its instructions
# checked against libipt elsewhere): the BTS instructions are PT's, from
# the first branch on, in one piece (execution under qemu is deterministic).
insn_vs_pt() {
	local name=$1
	shift
	local d=$T/$name
	mkdir -p "$d"
	(cd "$T" && "$HWT" record -e intel_pt -o "$d/pt.data" -- "$@" >/dev/null 2>&1 &&
		"$HWT" record -e intel_bts -o "$d/bts.data" -- "$@" >/dev/null 2>&1)
	local ip='{ for (i = 2; i <= NF; i++) if ($i ~ /^0x/) { print $i; break } }'
	"$HWT" script -i "$d/pt.data" --insn 2>&1 | awk "$ip" >"$d/pi"
	"$HWT" script -i "$d/bts.data" --insn 2>&1 | awk "$ip" >"$d/bi"
	local first k n
	first=$(head -1 "$d/bi")
	n=$(wc -l <"$d/bi")
	k=$(grep -n -m1 -x -- "$first" "$d/pi" | cut -d: -f1)
	if [ "$n" -lt 1000 ] || [ -z "$k" ]; then
		fail "$name" "no BTS instructions ($n) or its first ($first) is not in PT's"
	elif ! tail -n +"$k" "$d/pi" | head -n "$n" | cmp -s - "$d/bi"; then
		fail "$name" "BTS's $n instructions differ from PT's from line $k"
	else
		pass "$name ($n instructions, as PT's from its instruction $k)"
	fi
	rm -rf "$d"
}
if [ "$SCRIPT_BTS" = yes ]; then
	insn_vs_pt bts_rec_insn_ls ls -la /etc
	insn_vs_pt bts_rec_insn_gawk gawk -M 'BEGIN { print 2^200 }'
fi

# Snapshot mode with a 16 KiB AUX ring: the ring is overwritten many times
# (and 16 KiB is no multiple of a record); what perf decodes must be
# exactly the last branches of the truth.
snapshot_test() {
	local name=bts_rec_snapshot
	local d=$T/$name
	mkdir -p "$d"
	if ! "$HWT" record -e intel_bts -m 8,16 -S --truth "$d/truth" -o "$d/perf.data" \
		-- ls -la /etc >/dev/null 2>"$d/err"; then
		fail $name "hwt record failed: $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	if grep -q "trace error" "$d/ps" "$d/ps.err"; then
		fail $name "perf: $(grep -m1 'trace error' "$d/ps" "$d/ps.err")"
		return
	fi
	perf_branches "$d/ps" >"$d/p"
	local n
	n=$(wc -l <"$d/p")
	awk -F'\t' 'NF == 3' "$d/truth" >"$d/t"
	if [ "$n" -lt 300 ] || [ "$n" -ge "$(wc -l <"$d/t")" ]; then
		fail $name "expected a partial trace: $n of $(wc -l <"$d/t") branches"
	elif ! tail -n "$n" "$d/t" | cmp -s - "$d/p"; then
		fail $name "the snapshot's $n branches are not the truth's last $n"
	else
		pass "$name ($n of $(wc -l <"$d/t") branches)"
	fi
	if [ "$SCRIPT_BTS" = yes ]; then
		"$HWT" script -i "$d/perf.data" --branches --format tsv 2>/dev/null |
			awk -F'\t' '$4 != "async"' | cut -f1-3 >"$d/h"
		if cmp -s "$d/h" "$d/p"; then
			pass "${name}_script ($n branches, as perf)"
		else
			fail ${name}_script "hwt script's snapshot branches differ from perf's ($(wc -l <"$d/h") vs $n)"
		fi
	fi
}
snapshot_test

# No emulated unit for terms or filters BTS does not have: one line, exit 2.
if "$HWT" record -e intel_bts/tsc/ -o "$T/x.data" -- true 2>"$T/e1"; then
	fail bts_rec_bad_term "a term was accepted"
elif [ "$(grep -c . "$T/e1")" != 1 ] || ! grep -q "term" "$T/e1"; then
	fail bts_rec_bad_term "want one line naming the term: $(head -2 "$T/e1")"
else
	pass bts_rec_bad_term
fi
if [ -e /sys/bus/event_source/devices/intel_bts ]; then
	skip bts_rec_no_emulate "this machine has intel_bts hardware"
elif "$HWT" record -e intel_bts --no-emulate -o "$T/x.data" -- true 2>"$T/e2"; then
	fail bts_rec_no_emulate "recorded without intel_bts hardware"
else
	pass bts_rec_no_emulate
fi
