#!/bin/bash
# Seeds for fuzz_pt_flow from libipt-ptt corpus tests whose code fits in
# 512 bytes: [selector][code length LE16][code][trace], once for the
# instruction and once for the block decoder.
# usage: fuzz/fuzz_pt_flow.seeds.sh CORPUS OUTDIR  (scripts/fuzz.sh runs it)
set -eu
C=$1 O=$2
mkdir -p "$O"
for d in "$C"/*/; do
	t=$(basename "$d")
	[ -f "$d/$t-ptxed.exp" ] || continue
	n=$(stat -c %s "$d/$t.bin")
	[ "$n" -gt 0 ] && [ "$n" -le 512 ] || continue
	for sel in 00 01; do
		{ printf "\\x$sel\\x$(printf %02x $((n & 255)))\\x$(printf %02x $((n >> 8)))"; cat "$d/$t.bin" "$d/$t.pt"; } >"$O/$t-$sel"
	done
done
