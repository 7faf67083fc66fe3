#!/bin/bash
# tests/e2e/etm_corrupt.sh - hwt script on damaged cs_etm recordings (the
# emulated ETM, frames and raw; hwt's decoder on OpenCSD), the program's
# truth as the oracle:
#   flipped bytes, a zeroed block (in the middle AUXTRACE chunk) and a
#   truncated file: no crash, no hang, no sanitizer report; every gap line
#   carries its stream offset;
#   flip / zero: decoding resumes at the first A-sync after the damage and
#   everything from there on equals the truth.  What "from there on" holds
#   comes from a reference copy where the whole stream before that A-sync
#   is replaced by bytes a decoder skips while it looks for a sync (raw:
#   0x80; frames: frames of that trace ID carrying 0x80 bytes): its rows
#   must be the truth's tail, and the damaged recording's last rows;
#   truncated (the file ends 3 bytes into an 8-byte group of the middle
#   chunk, header and record sizes rewritten to match): the rows before
#   the first gap are the truth's first rows.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")
require etm_corrupt qemu-aarch64 perf aarch64-linux-gnu-gcc python3
ROOT=$(tests/arm64/fetch.sh 2>"$T/fetch.err")
if [ -z "$ROOT" ] || [ ! -d "$ROOT" ]; then
	skip etm_corrupt "no arm64 program cache: $(head -c 200 "$T/fetch.err")"
	exit 0
fi
PROG=$(dirname "$ROOT")/progs/branches
export HWT_SYSROOT=$ROOT LC_ALL=C

rows() { # non-asynchronous branch rows of a tsv
	awk -F'\t' 'NF == 4 && $4 != "async"' "$1" | cut -f1-3
}

# overwrite stream bytes [0, END) of perf.data FILE (AUXTRACE table TAB:
# filepos offset size per line) with filler MODE (raw | frames)
fill() {
	python3 - "$1" "$2" "$3" "$4" <<'PY'
import sys
f, tab, end, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
data = bytearray(open(f, 'rb').read())
frame = bytes([0x21] + [0x80] * 14 + [0])
for line in open(tab):
    pos, off, size = (int(x, 0) for x in line.split())
    for i in range(size):
        s = off + i
        if s >= end:
            break
        data[pos + i] = 0x80 if mode == 'raw' else frame[s % 16]
open(f, 'wb').write(data)
PY
}

for mode in frames raw; do
	ev=cs_etm
	[ $mode = raw ] && ev=cs_etm/raw/
	d=$T/$mode
	mkdir -p "$d"
	"$HWT" record -e $ev --emulate --truth "$d/truth" -o "$d/orig.data" -- "$PROG" 3000 >/dev/null 2>"$d/err"
	awk -F'\t' 'NF == 3' "$d/truth" >"$d/t"
	# AUXTRACE payloads: file position, stream offset, size
	perf report -D -i "$d/orig.data" 2>/dev/null |
		awk '$4 == "PERF_RECORD_AUXTRACE" { printf "%d %d %d\n", strtonum($2) + 48, strtonum($8), strtonum($6) }' >"$d/tab"
	if [ "$(wc -l <"$d/tab")" -lt 3 ] || [ ! -s "$d/t" ]; then
		fail etm_corrupt_$mode "expected a recording in 3 or more chunks and a truth: $(wc -l <"$d/tab") chunks"
		continue
	fi
	"$HWT" dump "$d/orig.data" | awk '$3 ~ /^I_ASYNC/ { print strtonum("0x" $1) }' >"$d/asyncs"
	read -r pos off size < <(sed -n 2p "$d/tab")
	for kind in flip zero trunc; do
		name=etm_corrupt_${mode}_$kind
		cp "$d/orig.data" "$d/c.data"
		case $kind in
		flip)
			at=$((size / 3))
			dend=$((at + 4))
			printf '\x55\xaa\x13\x77' | dd of="$d/c.data" bs=1 seek=$((pos + at)) conv=notrunc 2>/dev/null ;;
		zero)
			at=$((size / 2))
			dend=$((at + 512))
			dd if=/dev/zero of="$d/c.data" bs=1 seek=$((pos + at)) count=512 conv=notrunc 2>/dev/null ;;
		trunc) # the file ends inside the middle chunk (header and record say so)
			python3 - "$d/c.data" $pos $((size * 3 / 5 / 8 * 8 + 3)) <<'PY'
import struct, sys
f, pos, cut = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = bytearray(open(f, 'rb').read()[:pos + cut])
struct.pack_into('<Q', data, pos - 40, cut)         # AUXTRACE payload size
doff = struct.unpack_from('<Q', data, 40)[0]
struct.pack_into('<Q', data, 48, pos + cut - doff)  # data section size
data[72:104] = bytes(32)                            # no features
open(f, 'wb').write(data)
PY
			;;
		esac
		timeout 120 "$HWT" script -i "$d/c.data" --branches --format tsv >"$d/c.tsv" 2>"$d/c.err"
		rc=$?
		if [ $rc -ge 2 ] && [ $kind != trunc ] || [ $rc -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$d/c.err"; then
			fail $name "exit $rc (crash, hang or sanitizer report): $(head -c 200 "$d/c.err")"
			continue
		fi
		bad=$(grep '\[' "$d/c.tsv" | grep -vc '\[0x[0-9a-f]*, 0x[0-9a-f]*: error: ')
		ngaps=$(grep -c '\[' "$d/c.tsv")
		if [ "$bad" != 0 ]; then
			fail $name "$bad gap lines without an offset: $(grep '\[' "$d/c.tsv" | head -1)"
			continue
		fi
		if [ $kind = trunc ]; then
			awk '/\[/ { exit } { print }' "$d/c.tsv" >"$d/c.pre"
			rows "$d/c.pre" >"$d/c.h"
			k=$(wc -l <"$d/c.h")
			if [ "$k" -gt 1000 ] && head -n "$k" "$d/t" | cmp -s - "$d/c.h"; then
				pass "$name ($k branches before the cut, as the truth's first)"
			else
				fail $name "the $k branches before the cut are not the truth's first"
			fi
			continue
		fi
		sync=$(awk -v e=$((off + dend)) '$1 >= e { print; exit }' "$d/asyncs")
		if [ -z "$sync" ]; then
			fail $name "no A-sync after the damage at stream offset $((off + dend))"
			continue
		fi
		[ $mode = frames ] && sync=$((sync - sync % 16))
		cp "$d/orig.data" "$d/r.data"
		fill "$d/r.data" "$d/tab" "$sync" $mode
		"$HWT" script -i "$d/r.data" --branches --format tsv 2>/dev/null >"$d/r.tsv"
		rows "$d/r.tsv" >"$d/r.h"
		k=$(wc -l <"$d/r.h")
		rows "$d/c.tsv" | tail -n "$k" >"$d/c.h"
		if [ "$k" -lt 1000 ]; then
			fail $name "the reference from the A-sync at $sync decodes only $k branches"
		elif ! tail -n "$k" "$d/t" | cmp -s - "$d/r.h"; then
			fail $name "the reference's $k branches from the A-sync at $sync are not the truth's last"
		elif ! cmp -s "$d/c.h" "$d/r.h"; then
			fail $name "$ngaps gaps; the damaged recording's last $k branches differ from the truth's tail (did decoding resume at the A-sync at $sync?)"
		else
			pass "$name ($ngaps gaps; the $k branches from the A-sync at $sync on equal the truth)"
		fi
	done
done
