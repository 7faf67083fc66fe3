#!/bin/bash
# tests/e2e/emu_signal.sh - signals and endings of the emulated Intel PT
# unit (`hwt record --emulate --truth`), decoded by Linux perf (the oracle)
# and by hwt script:
#  - a busy loop (progs/sig_branch.c) that a timer signal interrupts until it
#    has landed, at least 3 times each (a timer period of 200 us: a small
#    trace), right after a taken conditional
#    branch, a not-taken one and an indirect jump: the truth's async rows
#    name exactly the RIPs the program's handler read from its ucontext
#    (where sigreturn resumes), in order; perf's and hwt's async rows are
#    those rows (the signals delivered at a system call aside: user-only
#    tracing shows them as a syscall, no async row), and their branches
#    equal the truth's;
#  - 12 recordings stopped mid-run at varied moments (after a varied
#    amount of qemu's CPU time counted from the program's first stream, no
#    timing assertion; 8 under the sanitizers): SIGINT to hwt record (Ctrl-C) or SIGTERM / SIGKILL to the
#    program itself, over programs with and without a SIGINT handler and
#    with threads, two in three with the default encoder (sync) and the
#    others with the block log and its encoder thread (encoder=thread): the
#    program must not have finished by itself (exit status not 0), perf
#    script --itrace=be reports no error, hwt script no gap, and both give
#    exactly the truth's branches.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

for need in qemu-x86_64 perf gcc; do
	if ! command -v $need >/dev/null; then
		skip emu_signal "$need not installed"
		exit 0
	fi
done
if [ ! -x "$HWT" ] || [ ! -f "$B/hwt-pt-plugin.so" ]; then
	fail emu_signal "$B/hwt or $B/hwt-pt-plugin.so not built"
	exit 0
fi
export LC_ALL=C

# perf's taken branches (tid<TAB>from<TAB>to), trace begin/end rows removed
perf_branches() {
	awk '$3 == "=>" && $2 != "0" && $4 != "0" { print $1 "\t0x" $2 "\t0x" $4 }' "$1"
}

# ---- signals right after a taken / not-taken Jcc and an indirect jump ----
sig_branch() {
	local name=emu_signal_branch d=$T/sig
	mkdir -p "$d"
	if ! gcc -O1 -o "$d/sb" tests/e2e/progs/sig_branch.c 2>"$d/cc.err"; then
		fail $name "gcc: $(head -2 "$d/cc.err")"
		return
	fi
	"$HWT" record --emulate --truth "$d/truth" -o "$d/perf.data" -- "$d/sb" 3 200 \
		>"$d/out" 2>"$d/err"
	local rc=$?
	if [ $rc != 0 ]; then
		fail $name "exit status $rc: $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	# 1. the truth's async rows are the handler's RIPs
	awk -F'\t' '$4 == "async" { print $2 }' "$d/truth" >"$d/t.from"
	sed 's/^0x0*/0x/' "$d/out" >"$d/prog.rip"
	if [ ! -s "$d/t.from" ] || ! cmp -s "$d/t.from" "$d/prog.rip"; then
		fail $name "truth's async rows ($(wc -l <"$d/t.from")) differ from the interrupted RIPs ($(wc -l <"$d/prog.rip")): $(diff "$d/t.from" "$d/prog.rip" | head -3 | tr '\n' ' ')"
		return
	fi
	pass "$name ($(grep -v '^\[' "$d/err" | head -1); truth = handler's RIPs)"
	# 2. perf
	perf script -i "$d/perf.data" --itrace=be -F tid,flags,ip,addr >"$d/ps" 2>"$d/ps.err"
	if grep -q "instruction trace error" "$d/ps" "$d/ps.err"; then
		fail ${name}_perf "$(grep -m1 'instruction trace error' "$d/ps" "$d/ps.err")"
		return
	fi
	local handler
	handler=$(awk -F'\t' '$4 == "async" { print $3; exit }' "$d/truth")
	awk '/tr end +async/ { print "0x" $(NF - 2) }' "$d/ps" >"$d/p.from"
	local entries
	entries=$(awk -v h="$handler" '/tr strt/ && "0x" $NF == h { n++ } END { print n + 0 }' "$d/ps")
	perf_branches <(awk '!/tr end|tr strt/ { $2 = ""; print }' "$d/ps") | sort -s -k1,1n >"$d/p"
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/t"
	# async rows of the truth that perf has, in order; the rest must be
	# the handler entries perf shows after a system call
	local tn pn
	tn=$(wc -l <"$d/t.from")
	pn=$(wc -l <"$d/p.from")
	local subseq
	subseq=$(awk 'NR == FNR { p[++np] = $1; next } { if (i < np && $1 == p[i + 1]) i++ }
		END { print (i == np) ? "yes" : "no" }' "$d/p.from" "$d/t.from")
	if [ "$entries" != "$tn" ]; then
		fail ${name}_perf "perf enters the handler $entries times, the truth $tn"
	elif [ "$subseq" != yes ] || [ "$pn" -lt 1 ]; then
		fail ${name}_perf "perf's async rows ($pn) are not the truth's ($tn): $(diff "$d/p.from" "$d/t.from" | head -3 | tr '\n' ' ')"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail ${name}_perf "perf's branches differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "${name}_perf ($pn async rows as the truth's, $((tn - pn)) at system calls; $(wc -l <"$d/t") branches)"
	fi
	# 3. hwt script: the same async rows as perf, the truth's branches
	"$HWT" script -i "$d/perf.data" --branches --format tsv >"$d/hs" 2>"$d/hs.err"
	awk -F'\t' '$4 == "async" { print $2 }' "$d/hs" >"$d/h.from"
	awk -F'\t' '$4 != "async"' "$d/hs" | cut -f1-3 | sort -s -k1,1n >"$d/h"
	local hto
	hto=$(awk -F'\t' -v h="$handler" '$4 == "async" && $3 != h { n++ } END { print n + 0 }' "$d/hs")
	if ! cmp -s "$d/h.from" "$d/p.from" || [ "$hto" != 0 ]; then
		fail ${name}_script "hwt's async rows ($(wc -l <"$d/h.from"), $hto not to the handler) differ from perf's ($pn): $(diff "$d/h.from" "$d/p.from" | head -3 | tr '\n' ' ')"
	elif ! cmp -s "$d/h" "$d/t"; then
		fail ${name}_script "hwt script's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "${name}_script ($pn async rows as perf's, branches as the truth)"
	fi
	rm -rf "$d"
}

# ---- endings: stopped at varied moments ----
# The stop comes once the emulated program has used a varied amount of CPU
# time (qemu's utime + stime in /proc, not wall time: the same moments on
# a loaded machine), early enough that each run records ~0.3 to 1.5 M
# branches, and always mid-run: the inputs take far longer, and a run
# whose program exits with status 0 (it finished before the stop) fails.
head -c 30000000 /dev/urandom >"$T/big.bin"
# more than 128 Ki lines: GNU sort sorts them on 2 threads
seq 1 140000 | sed 's/1/x/g' >"$T/lines.txt"

# stop_run I: run I; program, stop way and moment chosen from I
stop_run() {
	local i=$1 d=$T/stop$1
	mkdir -p "$d"
	local ticks how cmd enc=sync
	[ $((i % 3)) = 2 ] && enc=thread
	ticks=$((2 + (i * 7 % 10) / 2)) # 2..6 ticks of qemu's CPU time after the first stream (the default encoder: 2-3x the blocks a tick of the encoder thread)
	case $((i % 4)) in
	0) cmd=(gzip -1 -c big.bin) ;;         # SIGINT handler: cleans up, exits
	1) cmd=(md5sum big.bin big.bin big.bin) ;; # no handler: SIGINT kills it
	2) cmd=(sort -r lines.txt) ;;          # handler, then re-raises; 2 threads
	3) cmd=(zstd -T2 -q -c big.bin) ;;     # threads
	esac
	case $((i % 5)) in
	3) how=TERM ;; # to the program (qemu) itself
	4) how=KILL ;;
	*) how=INT ;; # to hwt record: Ctrl-C
	esac
	# The ticks count from the program's first stream (its first block;
	# TMPDIR: the recorder's folder of stream files): qemu's start-up alone
	# took 5 ticks once on a loaded machine, and a stop then found nothing
	# to record.
	mkdir -p "$d/tmp"
	(cd "$T" && TMPDIR="$d/tmp" HWT_EMU_ENCODER=$enc exec "$HWT" record --emulate --truth "$d/truth" \
		-o "$d/perf.data" -- "${cmd[@]}" >/dev/null 2>"$d/err") &
	local rec=$! q t=0 t0= used=
	while [ -z "$used" ] && kill -0 $rec 2>/dev/null; do
		if [ -z "$t0" ] && ! compgen -G "$d/tmp/hwt-emu-*/s.*" >/dev/null; then
			sleep 0.01
			continue
		fi
		for q in $(pgrep -P $rec); do # qemu (a probe of hwt record's has ended by now)
			t=$(awk '{ print $14 + $15 }' "/proc/$q/stat" 2>/dev/null)
			[ -n "$t" ] || continue
			[ -n "$t0" ] || t0=$t
			if [ "$t" -ge $((t0 + ticks)) ]; then
				used=$t
				break
			fi
		done
		[ -z "$used" ] && sleep 0.02
	done
	if [ -n "$used" ]; then
		if [ $how = INT ]; then
			kill -INT $rec 2>/dev/null
		else
			kill -$how "$q" 2>/dev/null
		fi
	fi
	wait $rec
	local rc=$?
	local name="emu_signal_stop_$i (${cmd[0]}, SIG$how ${ticks} ticks of CPU into the trace, encoder=$enc)"
	if [ -z "$used" ] || [ $rc = 0 ]; then
		fail "$name" "the program ended by itself (status $rc) before the stop: not a stop mid-run; $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	if [ ! -s "$d/perf.data" ]; then
		fail "$name" "no recording: $(head -2 "$d/err")"
		return
	fi
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	local perr herr
	perr=$(grep -c "instruction trace error" "$d/ps")
	"$HWT" script -i "$d/perf.data" --branches --format tsv >"$d/hs" 2>"$d/hs.err"
	herr=$(grep -vc '^[0-9]' "$d/hs")
	perf_branches "$d/ps" | sort -s -k1,1n >"$d/p"
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/t"
	awk -F'\t' '$4 != "async"' "$d/hs" | grep '^[0-9]' | cut -f1-3 | sort -s -k1,1n >"$d/h"
	local threads
	threads=$(cut -f1 "$d/t" | uniq | wc -l)
	if [ "$perr" != 0 ]; then
		fail "$name" "perf: $perr errors: $(grep -m1 'instruction trace error' "$d/ps")"
	elif [ "$herr" != 0 ]; then
		fail "$name" "hwt script: $herr gaps: $(grep -m1 -v '^[0-9]' "$d/hs")"
	elif [ ! -s "$d/t" ]; then
		fail "$name" "empty truth: $(head -2 "$d/err")"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail "$name" "perf's branches differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	elif ! cmp -s "$d/h" "$d/t"; then
		fail "$name" "hwt's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "$name: status $rc, $(wc -l <"$d/t") branches in $threads threads, no error, perf = hwt = truth"
	fi
	rm -rf "$d"
}

sig_branch
# 12 runs (4 programs x 3 stop ways, the moments varied: every program
# meets SIGINT, and SIGTERM and SIGKILL each meet two programs); under the
# sanitizers (slow hwt side) 8 of them, still every program and stop way
runs=12
[ "${HWT_SAN:-0}" = 1 ] && runs=8
for i in $(seq 0 $((runs - 1))); do
	stop_run "$i"
done
