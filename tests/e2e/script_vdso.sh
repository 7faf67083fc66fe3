#!/bin/bash
# The vdso of a recording:
#   record_vdso_buildid  hwt record -e dummy -- true names the vdso in its
#                        BUILD_ID feature: perf buildid-list -i FILE shows
#                        [vdso] with the build-id perf record itself finds
#                        (perf record --buildid-all, its own cache in
#                        $HOME/.debug); the cache file hwt wrote under
#                        PERF_BUILDID_DIR is byte for byte perf's copy;
#                        -N writes no cache.
#   script_vdso_insn     hwt script --insn on a recording whose thread runs
#                        vdso code (script_mkvdso.c: [vdso] MMAP2, the
#                        BUILD_ID entry, PSB..TIP.PGE(vdso function)): the
#                        instructions are objdump's, from the function's
#                        entry to its first branch, read from the cached
#                        vdso; with an empty cache: "no memory mapped".
set -u
. "$(dirname "$0")/lib.bash"
H=$B/hwt
if ! command -v perf >/dev/null || ! command -v objdump >/dev/null; then
	skip record_vdso_buildid "no perf or no objdump"
	exit 0
fi
if ! PERF_BUILDID_DIR=$T/bc "$H" record -e dummy -o "$T/d.data" -- true >/dev/null 2>"$T/rec.err"; then
	skip record_vdso_buildid "hwt record -e dummy cannot run here: $(head -c 200 "$T/rec.err")"
	exit 0
fi
bid=$(perf buildid-list -i "$T/d.data" 2>/dev/null | awk '$2 == "[vdso]" { print $1 }')
mkdir -p "$T/home"
HOME=$T/home perf record -q --buildid-all -e dummy -o "$T/p.data" -- true >/dev/null 2>&1
pbid=$(HOME=$T/home perf buildid-list -i "$T/p.data" 2>/dev/null | awk '$2 == "[vdso]" { print $1 }')
cached=$T/bc/[vdso]/$bid/vdso
if [ -z "$bid" ]; then
	fail record_vdso_buildid "perf buildid-list shows no [vdso] in hwt's file: $(perf buildid-list -i "$T/d.data" 2>&1 | head -3 | tr '\n' '|')"
elif [ -z "$pbid" ] || [ ! -f "$T/home/.debug/[vdso]/$pbid/vdso" ]; then
	skip record_vdso_buildid "perf record --buildid-all does not cache the vdso here"
elif [ "$bid" != "$pbid" ]; then
	fail record_vdso_buildid "hwt names vdso $bid, perf finds $pbid"
elif ! cmp -s "$cached" "$T/home/.debug/[vdso]/$pbid/vdso"; then
	fail record_vdso_buildid "the cached vdso '$cached' is not perf's copy of this machine's vdso"
else
	rm -rf "$T/bc2"
	PERF_BUILDID_DIR=$T/bc2 "$H" record -N -e dummy -o "$T/n.data" -- true >/dev/null 2>&1
	if [ -e "$T/bc2" ]; then
		fail record_vdso_buildid "-N still wrote the build-id cache"
	else
		pass record_vdso_buildid
	fi
fi

# ---- hwt script reads vdso code from the cache ----
if [ -z "$bid" ] || [ ! -f "$cached" ]; then
	skip script_vdso_insn "no cached vdso"
	exit 0
fi
if ! hwt_cc "$T/mkvdso" tests/e2e/script_mkvdso.c 2>"$T/cc.err"; then
	fail script_vdso_insn "script_mkvdso does not build: $(head -c 300 "$T/cc.err")"
	exit 0
fi
base=0x7fff12340000
nok=0 nfn=0
for fn in __vdso_time __vdso_getcpu __vdso_clock_gettime; do
	ent=$(nm -D --defined-only "$cached" 2>/dev/null | awk -v f="$fn" '$3 ~ "^" f "(@|$)" { print $1; exit }')
	[ -n "$ent" ] || continue
	nfn=$((nfn + 1))
	# objdump: addresses from the entry to the first control transfer
	objdump -d --no-show-raw-insn --start-address=0x$ent "$cached" 2>/dev/null |
		awk '/^ *[0-9a-f]+:\t/ { a = $1; sub(":", "", a); print a, $2; if ($2 ~ /^(j|call|ret|syscall|sysenter)/) exit }' >"$T/$fn.obj"
	last=$(tail -1 "$T/$fn.obj" | awk '{ print $2 }')
	awk '{ printf "%x\n", strtonum("0x" $1) }' "$T/$fn.obj" >"$T/$fn.exp"
	"$T/mkvdso" "$T/$fn.data" $base 0x$ent "$bid" || { fail script_vdso_insn "script_mkvdso failed"; continue; }
	PERF_BUILDID_DIR=$T/bc "$H" script -i "$T/$fn.data" --insn --no-time >"$T/$fn.out" 2>"$T/$fn.err"
	awk -v b=$((base)) '$2 ~ /^0x/ { printf "%x\n", strtonum($2) - b }' "$T/$fn.out" >"$T/$fn.got"
	case $last in
	jmp | call*) # the flow leaves the linear listing: compare up to it
		head -n "$(wc -l <"$T/$fn.exp")" "$T/$fn.got" >"$T/$fn.g2" ;;
	*) cp "$T/$fn.got" "$T/$fn.g2" ;;
	esac
	if grep -q 'error' "$T/$fn.out" || ! cmp -s "$T/$fn.exp" "$T/$fn.g2"; then
		fail script_vdso_insn "$fn: hwt script $(head -3 "$T/$fn.out" | tr '\n\t' '  ') vs objdump $(head -3 "$T/$fn.exp" | tr '\n' ' ')"
		continue
	fi
	PERF_BUILDID_DIR=$T/empty "$H" script -i "$T/$fn.data" --insn --no-time >"$T/$fn.none" 2>&1
	if ! grep -q 'no memory mapped' "$T/$fn.none"; then
		fail script_vdso_insn "$fn: without the cache hwt still decodes: $(head -2 "$T/$fn.none" | tr '\n' ' ')"
		continue
	fi
	nok=$((nok + 1))
done
if [ $nfn -eq 0 ]; then
	fail script_vdso_insn "none of __vdso_time, __vdso_getcpu, __vdso_clock_gettime in $cached"
elif [ $nok -eq $nfn ]; then
	pass "script_vdso_insn ($nok vdso functions)"
fi
exit 0
