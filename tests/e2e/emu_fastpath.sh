#!/bin/bash
# tests/e2e/emu_fastpath.sh - the emulated Intel PT unit's fast paths write
# exactly the bytes of the per-block reference path (plugin argument
# encoder=ref: step() for every block on the program's thread): the
# default encoder=sync (tb_fast takes the common blocks, emu/plugin.c) and
# the block log with its encoder (emu/fastpath.c: encoder=thread, inline).
# Oracle: the reference run of the same program with the same environment.
#   - plugin alone: the raw PT stream (raw=) and the truth lines are equal
#     byte for byte, for encoder=sync, thread and inline, with perf's
#     default terms and with CYC, no RET compression, frequent PSB+/MTC,
#     no timing; programs: gzip (~3x10^6 blocks, Jcc-dense: the block
#     log wraps ~25 times), sort and awk
#     (calls, returns, indirect branches);
#   - hwt record: the AUX stream (hwt dump) and the truth of programs that
#     die of SIGSEGV and of abort() are equal: the trace up to the fault is
#     in the stream (on the host fault the encoder drains the block log, and
#     encoder=sync publishes its last block).
# Only programs whose control flow does not depend on timing can be
# compared this way (threads and SIGCHLD make two encoder=ref runs
# differ); emu_plugin.sh, emu_record.sh, bts_record.sh and flight.sh check
# threads, forks, signals and a crash in a second thread against the
# truth with the default encoder.
# The guest sees the same environment in both runs: QEMU_UNSET_ENV keeps
# HWT_EMU_ENCODER out of it (its length would change the loader's loops),
# and the same 16 random bytes (AT_RANDOM, from QEMU_RAND_SEED): with the
# host's random bytes, about one gzip run in ten took other branches in
# the loader (two make checks saw a reference stream 8 and 40 bytes
# longer than the three encoders, which agreed with each other).
# Nor may a program read the host's state: GNU sort without -S sizes its
# buffer from sysinfo()'s free RAM (default_sort_size: a branch in its
# main, guest 0x400000593d, is taken when free RAM < 3/4 of the total,
# which page cache growth crosses on a 24 GiB machine now and then), so
# it runs with -S 8M (no sysinfo(), and the input fits: no temp files,
# whose names come from the clock).
set -u
. "$(dirname "$0")/lib.bash"
PLUGIN=$(realpath -m "$B/hwt-pt-plugin.so")
HWT=$(realpath -m "$B/hwt")
QEMU=$(command -v qemu-x86_64)
if [ -z "$QEMU" ]; then
	skip emu_fastpath "qemu-x86_64 not installed (apt install qemu-user)"
	exit 0
fi
if [ ! -f "$PLUGIN" ]; then
	fail emu_fastpath "$PLUGIN not built"
	exit 0
fi
export LC_ALL=C
export QEMU_RAND_SEED=1
export QEMU_UNSET_ENV=HWT_EMU_ENCODER,QEMU_RAND_SEED
head -c 100000 /dev/urandom | base64 >"$T/in.txt"

# same_streams NAME DIR_A DIR_B: raw.<pid>.<tid> files pairwise (threads
# and processes in creation order) and each thread's truth lines; NAME ""
# for no FAIL line.
same_streams() {
	local name=$1 a=$2 b=$3
	local ra rb
	ra=$(cd "$a" && ls raw.[0-9]*.[0-9]* 2>/dev/null | sort -t. -k2,2n -k3,3n)
	rb=$(cd "$b" && ls raw.[0-9]*.[0-9]* 2>/dev/null | sort -t. -k2,2n -k3,3n)
	local na nb
	na=$(echo "$ra" | grep -c .)
	nb=$(echo "$rb" | grep -c .)
	if [ "$na" != "$nb" ] || [ "$na" = 0 ]; then
		[ -n "$name" ] && fail "$name" "$nb streams, the reference has $na"
		return 1
	fi
	local i
	for i in $(seq 1 "$na"); do
		local fa fb
		fa=$(echo "$ra" | sed -n "${i}p")
		fb=$(echo "$rb" | sed -n "${i}p")
		if ! cmp -s "$a/$fa" "$b/$fb"; then
			[ -n "$name" ] && fail "$name" "stream $fb ($(stat -c %s "$b/$fb") bytes) differs from the reference's $fa ($(stat -c %s "$a/$fa") bytes): $(cmp "$a/$fa" "$b/$fb" 2>&1 | head -1)"
			return 1
		fi
	done
	# (equal files need no sorting: the truth of gzip has 2.7 M lines)
	if [ -e "$a/truth" ] && ! cmp -s "$a/truth" "$b/truth" &&
		! cmp -s <(per_thread "$a/truth") <(per_thread "$b/truth"); then
		[ -n "$name" ] && fail "$name" "truth differs from the reference's"
		return 1
	fi
	return 0
}

# each thread's truth lines (tid dropped), threads in tid order
per_thread() {
	[ -e "$1" ] || return 0
	sort -s -t"$(printf '\t')" -k1,1n "$1" | cut -f2-
}

# run_plugin NAME MODE TRUTH ARGS EXE ARGS...: one run under the plugin
# into $T/NAME.MODE/ (raw streams, truth if TRUTH, output, exit status);
# the reference run logs the guest's system calls (qemu -strace) into its
# err file
run_plugin() {
	local name=$1 m=$2 truth=$3 args=$4 exe=$5
	shift 5
	rm -rf "$T/$name.$m"
	mkdir -p "$T/$name.$m"
	local strace=
	[ "$m" = ref ] && strace=-strace
	(cd "$T" && "$QEMU" $strace -plugin "$PLUGIN,encoder=$m,raw=$T/$name.$m/raw${truth:+,truth=$T/$name.$m/truth}$args" \
		-- "$exe" "$@" >"$T/$name.$m/out" 2>"$T/$name.$m/err")
	echo $? >"$T/$name.$m/rc"
}

# host_reads FILE: the system calls of a qemu -strace log by which the
# guest reads host state that changes between two runs (free memory,
# clocks, CPU affinity, load), one per line; empty when there are none
host_reads() {
	grep -oE '^[0-9]+ (sysinfo|clock_gettime|gettimeofday|time|times|getrusage|sched_getaffinity)\(|"/(proc/(meminfo|stat|loadavg)|sys/devices/system/cpu)[^"]*"' "$1" |
		sed 's/^[0-9]* //; s/($//' | sort -u
}

# plugin NAME ARGS CMD...: encoder=ref vs sync, thread and inline (ARGS with
# truth=1: the truth lines too)
plugin() {
	local name=$1 args=$2
	shift 2
	local truth=
	case $args in *truth=1*) args=${args/,truth=1/} truth=1 ;; esac
	local exe
	exe=$(type -P "$1")
	local m
	for m in ref sync thread inline; do
		run_plugin "$name" "$m" "$truth" "$args" "$exe" "${@:2}"
	done
	local reads
	reads=$(host_reads "$T/$name.ref/err" | tr '\n' ' ')
	for m in sync thread inline; do
		if [ -n "$reads" ]; then
			fail "${name}_$m" "$1 reads the host's state (${reads% }): its control flow may differ between two runs; pin it (an argument, the environment)"
			continue
		fi
		if ! cmp -s "$T/$name.ref/out" "$T/$name.$m/out" ||
			! cmp -s "$T/$name.ref/rc" "$T/$name.$m/rc"; then
			fail "${name}_$m" "output or exit status differs from encoder=ref ($(head -2 "$T/$name.$m/err"))"
			continue
		fi
		same_streams "${name}_$m" "$T/$name.ref" "$T/$name.$m" || continue
		local bytes
		bytes=$(cat "$T/$name.ref"/raw.[0-9]*.[0-9]* | wc -c)
		pass "${name}_$m ($bytes trace bytes as encoder=ref${truth:+, and $(wc -l <"$T/$name.ref/truth") truth lines})"
	done
	rm -rf "$T/$name".*
}

GZ=$(type -P gzip)
plugin fp_gzip ",truth=1" "$GZ" -1 -c "$T/in.txt"
plugin fp_gzip_cyc ",cyc=1" "$GZ" -1 -c "$T/in.txt"
plugin fp_gzip_noretcomp ",noretcomp=1" "$GZ" -1 -c "$T/in.txt"
plugin fp_gzip_psb ",mtc_period=0,psb_period=0" "$GZ" -1 -c "$T/in.txt"
plugin fp_gzip_notime ",tsc=0,mtc=0" "$GZ" -1 -c "$T/in.txt"
seq 1 20000 | sed 's/1/x/g' | tac >"$T/lines.txt"
plugin fp_sort ",truth=1" sort -S 8M --parallel=1 "$T/lines.txt"
plugin fp_awk ",truth=1" awk '{ n[length($0)]++ } END { for (k in n) print k, n[k] }' "$T/lines.txt"

# record NAME PROG: hwt record with encoder=ref vs sync (the default) and
# thread
record() {
	local name=$1 prog=$2
	local m
	for m in ref sync thread; do
		mkdir -p "$T/$name.$m"
		HWT_EMU_ENCODER=$m "$HWT" record --emulate --truth "$T/$name.$m/truth" \
			-o "$T/$name.$m/rec.data" -- "$prog" >/dev/null 2>"$T/$name.$m/err"
		echo $? >"$T/$name.$m/rc"
		"$HWT" dump "$T/$name.$m/rec.data" 2>&1 | sed 's/^# stream \([0-9]*\): tid [0-9]*/# stream \1/' >"$T/$name.$m/dump"
	done
	for m in sync thread; do
		if ! cmp -s "$T/$name.ref/rc" "$T/$name.$m/rc"; then
			fail "${name}_$m" "exit status $(cat "$T/$name.$m/rc"), encoder=ref $(cat "$T/$name.ref/rc")"
		elif ! cmp -s "$T/$name.ref/dump" "$T/$name.$m/dump"; then
			fail "${name}_$m" "the AUX stream differs from encoder=ref's: $(diff "$T/$name.ref/dump" "$T/$name.$m/dump" | head -3 | tr '\n' ' ')"
		elif ! cmp -s "$T/$name.ref/truth" "$T/$name.$m/truth" &&
			! cmp -s <(per_thread "$T/$name.ref/truth") <(per_thread "$T/$name.$m/truth"); then
			fail "${name}_$m" "truth differs from encoder=ref's"
		else
			pass "${name}_$m (exit $(cat "$T/$name.ref/rc"), $(grep -c '^[0-9a-f]' "$T/$name.ref/dump") packets as encoder=ref)"
		fi
	done
}
for p in crash_chain crash_abort; do
	if ! cc -g -O1 -pthread -o "$T/$p" "tests/e2e/progs/$p.c" 2>"$T/cc.err"; then
		fail "fp_$p" "cannot build tests/e2e/progs/$p.c: $(head -2 "$T/cc.err")"
		continue
	fi
	record "fp_rec_$p" "$T/$p"
done
