#!/bin/bash
# tests/e2e/etm_dump.sh - hwt dump of ETMv4 trace (OpenCSD's packet
# printer behind hwt/etm.h):
#  - on cs_etm recordings of the emulated ETM (frames and raw): the same
#    packets, trace IDs and texts as perf report -D (perf 6.1 + OpenCSD);
#  - on plain trace files the plugin writes (raw=): frame-formatted with
#    --trace-id and unformatted with --etm-raw give the same packets;
#  - flipped, zeroed and truncated copies: no crash, no hang.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")
require etm_dump qemu-aarch64 perf aarch64-linux-gnu-gcc
ROOT=$(tests/arm64/fetch.sh 2>"$T/fetch.err")
if [ -z "$ROOT" ] || [ ! -d "$ROOT" ]; then
	skip etm_dump "no arm64 program cache: $(head -c 200 "$T/fetch.err")"
	exit 0
fi
PROG=$(dirname "$ROOT")/progs/branches
export HWT_SYSROOT=$ROOT

for mode in frames raw; do
	ev=cs_etm
	[ $mode = raw ] && ev=cs_etm/raw/
	name=etm_dump_perf_$mode
	"$HWT" record -e $ev --emulate -o "$T/$mode.data" -- "$PROG" 500 >/dev/null 2>"$T/err"
	if [ ! -s "$T/$mode.data" ]; then
		fail $name "hwt record failed: $(head -c 200 "$T/err")"
		continue
	fi
	perf report -D -i "$T/$mode.data" 2>/dev/null |
		sed -n 's/^\tIdx:[0-9]*; ID:\([0-9a-f]*\);\t\(I_.*\)$/\1  \2/p' | sed 's/ *$//' >"$T/perf.txt"
	"$HWT" dump "$T/$mode.data" | grep -v '^#' | sed 's/^[0-9a-f]*  //' | sed 's/ *$//' >"$T/hwt.txt"
	# perf shows the raw mode's padding (no-payload Context packets) too
	if [ ! -s "$T/perf.txt" ]; then
		fail $name "perf report -D shows no ETMv4 packets"
	elif ! diff -q "$T/perf.txt" "$T/hwt.txt" >/dev/null; then
		fail $name "packets differ from perf report -D: $(diff "$T/perf.txt" "$T/hwt.txt" | head -4 | tr '\n' ' ')"
	else
		pass "$name ($(wc -l <"$T/hwt.txt") packets)"
	fi
done

# plain trace files: frames with --trace-id, raw with --etm-raw
P=$(realpath -m "$B/hwt-etm-plugin.so")
qemu-aarch64 -L "$ROOT" -plugin "$P,raw=$T/f,formatted=1,sysroot=$ROOT" "$PROG" 300 >/dev/null
qemu-aarch64 -L "$ROOT" -plugin "$P,raw=$T/r,formatted=0,sysroot=$ROOT" "$PROG" 300 >/dev/null
F=$(ls "$T"/f.[0-9]* | head -1)
R=$(ls "$T"/r.[0-9]* | head -1)
"$HWT" dump --trace-id 0x10 "$F" >"$T/f.txt"
frc=$?
"$HWT" dump --etm-raw "$R" >"$T/r.txt"
rrc=$?
cut -c15- "$T/f.txt" | grep -v '^I_CTXT' >"$T/f2.txt"
cut -c15- "$T/r.txt" | grep -v '^I_CTXT' >"$T/r2.txt"
if [ $frc != 0 ] || [ $rrc != 0 ]; then
	fail etm_dump_files "hwt dump exit $frc (frames), $rrc (raw)"
elif [ ! -s "$T/f2.txt" ] || ! cmp -s "$T/f2.txt" "$T/r2.txt"; then
	fail etm_dump_files "frames and raw list different packets: $(diff "$T/f2.txt" "$T/r2.txt" | head -3 | tr '\n' ' ')"
elif grep -q "BAD\|RESERVED" "$T/f.txt"; then
	fail etm_dump_files "bad packets: $(grep -m1 "BAD\|RESERVED" "$T/f.txt")"
else
	pass "etm_dump_files ($(wc -l <"$T/f2.txt") packets, frames = raw)"
fi

# damaged copies: flipped bytes, a zeroed block, truncated; must end
ok=1
for kind in flip zero trunc; do
	for src in "$F" "$R"; do
		cp "$src" "$T/d"
		n=$(stat -c %s "$T/d")
		case $kind in
		flip) printf '\xff\x13\x85\x06' | dd of="$T/d" bs=1 seek=$((n / 3)) conv=notrunc 2>/dev/null ;;
		zero) dd if=/dev/zero of="$T/d" bs=1 count=300 seek=$((n / 2)) conv=notrunc 2>/dev/null ;;
		trunc) truncate -s $((n / 2 + 7)) "$T/d" ;;
		esac
		opt=--etm-raw
		[ "$src" = "$F" ] && opt="--trace-id 16"
		timeout 60 "$HWT" dump $opt "$T/d" >"$T/d.txt" 2>&1
		rc=$?
		if [ $rc -gt 1 ]; then
			fail etm_dump_damaged_$kind "hwt dump exit $rc on $(basename "$src")"
			ok=0
		elif ! tail -1 "$T/d.txt" | grep -q "I_"; then
			fail etm_dump_damaged_$kind "listing stops early on $(basename "$src")"
			ok=0
		fi
	done
done
[ $ok = 1 ] && pass "etm_dump_damaged (flipped, zeroed, truncated; frames and raw)"

# hwt script decodes a cs_etm recording (tests/e2e/etm_record*.sh compare
# its branches with the truth): exit 0 and branch rows
if [ -s "$T/frames.data" ]; then
	"$HWT" script "$T/frames.data" --branches --format tsv >"$T/s.out" 2>"$T/s.err"
	rc=$?
	if [ $rc = 0 ] && grep -q '^[0-9]*	0x' "$T/s.out"; then
		pass etm_script_decodes
	else
		fail etm_script_decodes "exit $rc: $(head -c 200 "$T/s.err")"
	fi
fi
