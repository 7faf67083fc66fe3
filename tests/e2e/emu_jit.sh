#!/bin/bash
# tests/e2e/emu_jit.sh - code generated at run time under the emulated
# Intel PT unit (`hwt record --emulate --truth`): `grep -P` on a file large
# enough for PCRE2's JIT, and LuaJIT loops (traces, side traces: code
# rewritten in place, one version per rewrite).  The plugin writes each
# version of each generated-code region as a small ELF file (under
# $PERF_BUILDID_DIR/jit, a scratch folder here) with an MMAP2 record naming
# it.  Oracles: perf script --itrace=be reports no error (no "no memory
# mapped" gap) and hwt script no gap, and both give exactly the truth's
# branches; the branches inside generated code (the jitted files' ranges)
# are counted and must be there.
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require emu_jit qemu-x86_64 perf
require_built emu_jit "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
export PERF_BUILDID_DIR=$T/debug

# jit NAME CMD...
jit() {
	local name=$1 d=$T/$1
	shift
	mkdir -p "$d"
	(cd "$T" && "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$HWT" record --emulate --truth "$d/truth" -o "$d/perf.data" -- "$@" \
		>"$d/out" 2>"$d/err")
	local rc=$?
	if [ $rc != $ref_rc ] || ! cmp -s "$d/out" "$d/ref.out"; then
		fail "$name" "exit status $rc (untraced $ref_rc) or output differs: $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	# the generated code's ranges: the MMAP2 records of jitted files
	perf script -i "$d/perf.data" --show-mmap-events --no-itrace 2>/dev/null |
		sed -n 's/.*\[\(0x[0-9a-f]*\)(\(0x[0-9a-f]*\)) @ .*jitted-.*/\1 \2/p' >"$d/ranges"
	local nver
	nver=$(wc -l <"$d/ranges")
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	local perr
	perr=$(grep -c "instruction trace error" "$d/ps")
	awk '$3 == "=>" && $2 != "0" && $4 != "0" { print $1 "\t0x" $2 "\t0x" $4 }' "$d/ps" |
		sort -s -k1,1n >"$d/p"
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/t"
	"$HWT" script -i "$d/perf.data" --branches --format tsv >"$d/hs" 2>"$d/hs.err"
	local herr
	herr=$(grep -vc '^[0-9]' "$d/hs")
	awk -F'\t' '$4 != "async"' "$d/hs" | grep '^[0-9]' | cut -f1-3 | sort -s -k1,1n >"$d/h"
	local injit
	injit=$(awk 'NR == FNR { lo[++n] = strtonum($1); hi[n] = lo[n] + strtonum($2); next }
		{ f = strtonum($2); t = strtonum($3)
		  for (i = 1; i <= n; i++)
			if ((f >= lo[i] && f < hi[i]) || (t >= lo[i] && t < hi[i])) { c++; break } }
		END { print c + 0 }' "$d/ranges" FS='\t' "$d/t")
	if [ "$nver" = 0 ]; then
		fail "$name" "no jitted code mapped (no MMAP2 naming a jitted file)"
	elif [ "$injit" = 0 ]; then
		fail "$name" "no branch of the truth inside generated code"
	elif [ "$perr" != 0 ]; then
		fail "$name" "perf: $perr errors: $(grep -m1 'instruction trace error' "$d/ps")"
	elif [ "$herr" != 0 ]; then
		fail "$name" "hwt script: $herr gaps: $(grep -m1 -v '^[0-9]' "$d/hs")"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail "$name" "perf's branches differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	elif ! cmp -s "$d/h" "$d/t"; then
		fail "$name" "hwt's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "$name ($nver jitted region versions, $injit of $(wc -l <"$d/t") branches in generated code; perf = hwt = truth, no error)"
	fi
	rm -rf "$d"
}

# A tiny JIT (progs/jit_gen.c): code generated, named in /tmp/perf-PID.map,
# run, rewritten in place and run again: several versions, both with the
# map file's symbol in perf's and hwt's output; hwt's branches equal the
# truth.  perf's are not compared here: its decoder maps the new version by
# time, from its estimate at the last timing packet, and decodes the last
# instructions of the older code (a few hundred cycles before the rewrite)
# with the new bytes (README, limits).
jit_gen() {
	local name=emu_jit_rewrite_symbols d=$T/gen
	mkdir -p "$d"
	if ! command -v gcc >/dev/null || ! gcc -O1 -o "$d/jg" tests/e2e/progs/jit_gen.c 2>"$d/cc.err"; then
		skip $name "cannot build progs/jit_gen.c: $(head -1 "$d/cc.err" 2>/dev/null)"
		return
	fi
	"$HWT" record --emulate --truth "$d/truth" -o "$d/perf.data" -- "$d/jg" >"$d/out" 2>"$d/err"
	local rc=$?
	local pid
	pid=$(perf script -i "$d/perf.data" --show-mmap-events --no-itrace 2>/dev/null |
		sed -n 's/.*PERF_RECORD_MMAP2 \([0-9]*\)\/.*jitted-.*/\1/p' | head -1)
	[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
	local nver
	nver=$(perf script -i "$d/perf.data" --show-mmap-events --no-itrace 2>/dev/null | grep -c 'jitted-')
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,sym,addr >"$d/ps" 2>"$d/ps.err"
	"$HWT" script -i "$d/perf.data" --branches >"$d/hs" 2>"$d/hs.err"
	local psym hsym
	psym=$(grep -c '=> .* gen_loop$' "$d/ps")
	hsym=$(grep -c '=> 0x[0-9a-f]* (gen_loop+0x' "$d/hs")
	awk '$4 == "=>" && $2 != "0" && $5 != "0" { print $1 "\t0x" $2 "\t0x" $5 }' "$d/ps" >"$d/p"
	awk -F'\t' 'NF == 3' "$d/truth" >"$d/t"
	"$HWT" script -i "$d/perf.data" --branches --format tsv 2>/dev/null |
		awk -F'\t' '$4 != "async"' | cut -f1-3 >"$d/h"
	if [ $rc != 0 ] || [ "$(cat "$d/out")" != "1 2" ]; then
		fail $name "exit status $rc, output '$(cat "$d/out")' (want '1 2'): $(head -2 "$d/err")"
	elif [ "$nver" -lt 2 ]; then
		fail $name "$nver versions of the rewritten code mapped (want 2 or more)"
	elif grep -q "instruction trace error" "$d/ps" || grep -qv '^ *[0-9]' "$d/hs"; then
		fail $name "decode errors: $(grep -m1 'instruction trace error' "$d/ps") $(grep -m1 -v '^ *[0-9]' "$d/hs")"
	elif ! cmp -s "$d/h" "$d/t"; then
		fail $name "hwt's branches differ from the truth: hwt $(wc -l <"$d/h"), truth $(wc -l <"$d/t")"
	elif [ "$psym" -lt 9 ] || [ "$hsym" -lt 9 ]; then
		fail $name "branches into gen_loop named: perf $psym, hwt $hsym (want at least 9 each)"
	else
		pass "$name ($nver versions; branches into gen_loop named: hwt $hsym, perf $psym; hwt = truth)"
	fi
	rm -rf "$d"
}

jit_gen
seq 1 60000 | sed 's/$/ foo bar baz/' >"$T/g.txt"
if grep -qP 'x' /dev/null 2>/dev/null || [ $? = 1 ]; then
	jit emu_jit_grep_pcre grep -P -c '([a-z]+) ba[rz]\d*$' g.txt
else
	skip emu_jit_grep_pcre "grep has no -P here"
fi
if command -v luajit >/dev/null; then
	cat >"$T/loop.lua" <<'LUA'
local t = {}
for i = 1, 3000 do
  local s = 0
  for j = 1, 50 do
    if (i + j) % 3 == 0 then s = s + j else s = s - 1 end
  end
  t[#t + 1] = s
end
local sum = 0
for i = 1, #t do sum = sum + t[i] end
print(sum)
LUA
	cat >"$T/calls.lua" <<'LUA'
local function f(x) if x % 7 == 0 then return x / 7 end return x * 3 + 1 end
local n, m = 0, 0
for i = 1, 20000 do
  local v = f(i)
  if v > 100 then n = n + 1 else m = m + v end
  if i % 1000 == 0 then n = n + #tostring(v) end
end
print(n, m)
LUA
	jit emu_jit_luajit_loop luajit loop.lua
	jit emu_jit_luajit_calls luajit calls.lua
else
	skip emu_jit_luajit "luajit not installed (apt install luajit; make deps)"
fi
