#!/bin/bash
# tests/e2e/flight.sh - `hwt record --flight-recorder` and `hwt script
# --last` on programs that crash (tests/e2e/progs/crash_*.c, built with -g):
# a null dereference below main -> fr_a -> fr_b -> fr_c, an abort() below
# main -> ab_a -> ab_b, a SIGSEGV in a second thread (worker -> th_a -> th_b)
# while the main thread spins.  Recorded with --truth (the complete ground
# truth; the flight recorder keeps the newest part of each thread's trace):
#   - the exit status is the one of the untraced run under plain
#     qemu-x86_64 (128 + the signal);
#   - the thread the report names is the one that crashed (the main thread;
#     for the threaded program the truth's other thread);
#   - the printed last N branches are the last N lines of that thread's
#     truth, and the call stack names the known chain, innermost first;
#   - `hwt script --last N --tid T` on the file prints the same report, and
#     `hwt script --last N` (every thread) contains it;
#   - perf reads the file (hwt's own HWT_FATAL header feature included);
#   - a ring smaller than the trace (--flight-recorder=4K) still gives the
#     truth's last branches; a program that exits normally gets no report.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require flight qemu-x86_64
require_built flight "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
ulimit -c 0 # neither qemu nor the program leaves a core file behind
for p in crash_chain crash_abort crash_thread; do
	if ! cc -g -O1 -pthread -o "$T/$p" "tests/e2e/progs/$p.c" 2>"$T/cc.err"; then
		fail flight "cannot build $p: $(head -2 "$T/cc.err")"
		exit 0
	fi
done

N=24

# flight NAME PROG SIG CHAIN [SIZE]: CHAIN is the expected call chain,
# innermost first, space-separated (function names of the program).
flight() {
	local name=$1 prog=$2 sig=$3 chain=$4 size=${5:-}
	local d=$T/$name
	mkdir -p "$d"
	(cd "$d" && qemu-x86_64 "$T/$prog" >/dev/null 2>&1; exit $?) 2>/dev/null
	local ref=$?
	(cd "$d" && "$HWT" record --emulate --flight-recorder${size:+=$size} --last $N \
		--truth "$d/truth" -o "$d/rec.data" -- "$T/$prog" >/dev/null 2>"$d/err")
	local rc=$?
	if [ $rc != $ref ] || [ $rc != $((128 + sig)) ]; then
		fail "$name" "exit status $rc, untraced under qemu $ref, expected $((128 + sig)) ($(grep -v '^\[' "$d/err" | head -2 | tr '\n' ' '))"
		return
	fi
	local tid pid
	read -r tid pid < <(sed -n 's/^thread \([0-9]*\) (pid \([0-9]*\)) died of SIG.*/\1 \2/p' "$d/err")
	if [ -z "${tid:-}" ]; then
		fail "$name" "no 'thread T (pid P) died of' line: $(grep -v '^\[' "$d/err" | head -3 | tr '\n' ' ')"
		return
	fi
	# which thread crashed, by the truth: the main thread (tid = pid), or
	# the one thread of the threaded program that is not the main thread
	local want=$pid
	[ "$prog" = crash_thread ] && want=$(cut -f1 "$d/truth" | sort -u | grep -vx "$pid" | head -1)
	if [ "$tid" != "$want" ]; then
		fail "$name" "the report names thread $tid, the crashing thread is $want"
		return
	fi
	if ! grep -q "^hwt record: the flight recorder's report (again: hwt script -i .* --tid $tid)" "$d/err"; then
		fail "$name" "no 'hwt record: the flight recorder's report' line for thread $tid"
		return
	fi
	# the report (from its first line on) and its branch lines
	sed -n "/^thread $tid (pid $pid) died of/,\$p" "$d/err" | grep -v '^\[ hwt record' >"$d/rep"
	awk -v t="$tid" '$1 == t && $4 == "=>" || ($1 == t && $0 ~ / => /) {
		n = 0
		for (i = 2; i <= NF; i++) if ($i ~ /^0x/) a[++n] = $i
		if (n >= 2) print t "\t" a[1] "\t" a[2]
	}' "$d/rep" >"$d/last"
	awk -F'\t' -v t="$tid" '$1 == t { print $1 "\t" $2 "\t" $3 }' "$d/truth" | tail -n $N >"$d/want"
	if [ "$(wc -l <"$d/last")" != $N ]; then
		fail "$name" "$(wc -l <"$d/last") branch lines in the report, expected $N"
		return
	elif ! cmp -s "$d/last" "$d/want"; then
		fail "$name" "the last $N branches are not the truth's last $N: $(diff "$d/last" "$d/want" | head -3 | tr '\n' ' ')"
		return
	fi
	# the call stack: the chain's functions in this order, innermost first
	sed -n '/^call stack of thread/,$p' "$d/rep" | awk '$1 ~ /^#/ { sub(/\+0x.*/, "", $3); print $3 }' >"$d/stack"
	local got
	got=$(grep -xE "$(echo "$chain" | tr ' ' '|')" "$d/stack" | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" != "$chain" ]; then
		fail "$name" "call stack '$(tr '\n' ' ' <"$d/stack")' does not name '$chain' in order"
		return
	fi
	pass "$name (signal $sig in thread $tid: last $N branches = the truth's, stack $chain)"

	# the same report from the file
	"$HWT" script -i "$d/rec.data" --last $N --tid "$tid" >"$d/script" 2>"$d/script.err"
	if cmp -s "$d/script" "$d/rep"; then
		pass "${name}_script (hwt script --last $N --tid $tid prints the same report)"
	else
		fail "${name}_script" "hwt script --last differs from the recorder's report: $(diff "$d/script" "$d/rep" | head -3 | tr '\n' ' ')"
	fi
	"$HWT" script -i "$d/rec.data" --last $N >"$d/all" 2>/dev/null
	if grep -qxFf "$d/rep" "$d/all" && [ "$(grep -cxFf "$d/rep" "$d/all")" -ge "$(wc -l <"$d/rep")" ] &&
		[ "$(grep -c '^last .* taken branch' "$d/all")" = "$(cut -f1 "$d/truth" | sort -u | wc -l)" ]; then
		pass "${name}_script_all (every thread's report, the fatal one included)"
	else
		fail "${name}_script_all" "hwt script --last $N (all threads) lacks the fatal thread's report or a thread"
	fi
	if command -v perf >/dev/null; then
		if perf script -i "$d/rec.data" --itrace=be -F tid,ip,addr >/dev/null 2>"$d/ps.err"; then
			pass "${name}_perf (perf reads the file)"
		else
			fail "${name}_perf" "perf script failed: $(head -2 "$d/ps.err" | tr '\n' ' ')"
		fi
	fi
}

flight flight_segv crash_chain 11 "fr_c fr_b fr_a main"
flight flight_abort crash_abort 6 "abort ab_b ab_a main"
flight flight_thread crash_thread 11 "th_b th_a worker"

# A ring smaller than the trace: the newest 4 KiB still end with the
# truth's last branches (the stack is not checked: its calls may lie before
# the window).
small() {
	local name=flight_small d=$T/flight_small
	mkdir -p "$d"
	(cd "$d" && "$HWT" record --emulate --flight-recorder=4K --last $N --truth "$d/truth" \
		-o "$d/rec.data" -- "$T/crash_chain" >/dev/null 2>"$d/err")
	local rc=$?
	local tid
	tid=$(sed -n 's/^thread \([0-9]*\) (pid [0-9]*) died of SIG.*/\1/p' "$d/err")
	awk -v t="$tid" '$1 == t && / => / {
		n = 0
		for (i = 2; i <= NF; i++) if ($i ~ /^0x/) a[++n] = $i
		if (n >= 2) print t "\t" a[1] "\t" a[2]
	}' "$d/err" >"$d/last"
	awk -F'\t' -v t="$tid" '$1 == t { print $1 "\t" $2 "\t" $3 }' "$d/truth" >"$d/t"
	local dec
	dec=$(sed -n 's/.*oldest first (of \([0-9]*\) decoded.*/\1/p' "$d/err")
	if [ $rc != 139 ] || [ -z "$tid" ]; then
		fail $name "exit status $rc or no fatal thread: $(grep -v '^\[' "$d/err" | head -2 | tr '\n' ' ')"
	elif [ -z "$dec" ] || [ "$dec" -ge "$(wc -l <"$d/t")" ]; then
		fail $name "expected a partial window: ${dec:-?} of $(wc -l <"$d/t") branches decoded"
	elif ! tail -n $N "$d/t" | cmp -s - "$d/last"; then
		fail $name "the last $N branches are not the truth's last $N"
	else
		pass "$name ($dec of $(wc -l <"$d/t") branches in the 4 KiB window, the last $N = the truth's)"
	fi
}
small

# A program that ends normally: status 0, no report.
normal() {
	local d=$T/flight_normal
	mkdir -p "$d"
	"$HWT" record --emulate --flight-recorder -o "$d/rec.data" -- /bin/true >/dev/null 2>"$d/err"
	local rc=$?
	if [ $rc != 0 ] || grep -q 'died of' "$d/err"; then
		fail flight_normal "exit status $rc, or a report: $(grep -v '^\[' "$d/err" | head -2 | tr '\n' ' ')"
	else
		pass "flight_normal (exit 0, no report)"
	fi
}
normal
