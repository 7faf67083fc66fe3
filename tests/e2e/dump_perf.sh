#!/bin/bash
# hwt dump on a recording: every AUX stream of a perf.data file is dumped,
# and the packets equal those that perf's own Intel PT packet dumper
# (perf report -D) finds in the same file: same offsets, same kinds, same
# bytes.  Recorded with the emulated unit, so this runs on every machine.
set -u
H=$HWT_BUILD/hwt
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# perf report -D: ". ... Intel Processor Trace data: size N bytes" starts a
# chunk; ".  OFFSET:  BYTES  NAME ..." lines are packets.  Print
# "<global offset> <name> <first byte>" with ptdump's names.  PADs are
# left out on both sides: perf shows the zero padding that ends an AUXTRACE
# record as part of the packet before it.
perf_packets() {
	perf report -D -i "$1" 2>/dev/null | awk '
	/Intel Processor Trace data: size/ { base += size; size = $(NF-1); next }
	/^\.  [0-9a-f]{8}:  / {
		off = strtonum("0x" substr($2, 1, 8)) + base
		line = substr($0, 15)
		bytes = substr(line, 1, 48); name = substr(line, 49)
		gsub(/ +$/, "", bytes); gsub(/ /, "", bytes)
		split(name, w, " ")
		n = tolower(w[1])
		if (n == "tnt") n = (length(bytes) > 2 ? "tnt.64" : "tnt.8")
		if (n == "tracestop") n = "stop"
		if (n != "pad") printf "%x %s %s\n", off, n, substr(bytes, 1, 2)
	}'
}

# hwt dump --raw: "OFFSET  BYTES  name ..." per packet, streams one after
# the other (their offsets restart at 0 per stream, like perf's chunks do
# not: add up the sizes from the "# stream" lines).
hwt_packets() {
	"$H" dump --raw "$1" | awk '
	/^# stream/ { base += size; size = $(NF-1); next }
	/^\[/ { print "error " $0; next }
	$3 != "pad" { printf "%x %s %s\n", strtonum("0x" $1) + base, $3, substr($2, 1, 2) }'
}

check() {
	local name=$1
	shift
	if ! "$H" record --emulate -o "$W/$name.data" "$@" -- /usr/bin/expr 6 '*' 7 >/dev/null 2>"$W/err"; then
		echo "FAIL dump-perf-$name: hwt record failed: $(head -c 300 "$W/err")"
		return
	fi
	perf_packets "$W/$name.data" >"$W/perf.txt"
	hwt_packets "$W/$name.data" >"$W/hwt.txt"
	if [ ! -s "$W/perf.txt" ]; then
		echo "FAIL dump-perf-$name: perf report -D shows no Intel PT packets"
	elif ! "$H" dump "$W/$name.data" | grep -q '^# stream 0: tid [0-9]*, cpu -1'; then
		echo "FAIL dump-perf-$name: no per-thread stream header"
	elif ! diff -q "$W/perf.txt" "$W/hwt.txt" >/dev/null; then
		echo "FAIL dump-perf-$name: packets differ from perf report -D: $(diff "$W/perf.txt" "$W/hwt.txt" | head -n 6 | tr '\n' ' ')"
	else
		echo "PASS dump-perf-$name ($(wc -l <"$W/hwt.txt") packets)"
	fi
}

check default
check timing -e 'intel_pt/tsc,mtc,mtc_period=0,cyc/u'

# a file that is not a recording nor a trace, and a damaged recording
printf 'PERFILE2garbage' >"$W/bad.data"
if "$H" dump "$W/bad.data" >/dev/null 2>"$W/err"; then
	echo "FAIL dump-perf-garbage: accepted a damaged perf.data"
elif grep -q "bad.data" "$W/err"; then
	echo "PASS dump-perf-garbage"
else
	echo "FAIL dump-perf-garbage: error does not name the file: $(cat "$W/err")"
fi
