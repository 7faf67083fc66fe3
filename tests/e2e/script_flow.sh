#!/bin/bash
# hwt script on recordings of real programs (Debian's gzip, sha256sum)
# made with the emulated Intel PT unit, checked against oracles:
#   - the unit's branch ground truth (--truth; async rows left out on both
#     sides) for default terms, noretcomp, a small psb_period and timing
#     packets on;
#   - libipt (bench_flow branches: pt_insn over the same perf.data);
#   - perf script --itrace=b -F tid,ip,addr on the same file;
#   - --calls rows against truth calls, --insn line count against libipt's
#     instruction count;
#   - flipped / zeroed / truncated traces: no crash or hang, every gap has
#     an offset, and after the last gap the branches are the truth's tail.
# Recordings come from "hwt record --emulate --truth" when it works, else
# from the plugin's raw per-thread streams packed by script_mkdata.c (which
# also splits them into small AUXTRACE chunks to test chunk joining).
set -u
H=$HWT_BUILD/hwt
PLUGIN=$HWT_BUILD/hwt-pt-plugin.so
BF=$HWT_BUILD/bench/bench_flow
. "$(dirname "$0")/lib.bash"
W=$T
[ -n "${SCRIPT_KEEP:-}" ] && trap - EXIT; echo "workdir $W" >&2
TO="timeout 120"

if ! command -v qemu-x86_64 >/dev/null || [ ! -f "$PLUGIN" ]; then
	echo "SKIP script_flow: no qemu-x86_64 or no $PLUGIN"
	exit 0
fi
if ! hwt_cc "$W/mkdata" tests/e2e/script_mkdata.c 2>"$W/cc.err"; then
	echo "FAIL script_mkdata: does not build: $(head -c 300 "$W/cc.err")"
	exit 0
fi
seq 1 2500 >"$W/input.txt"

nonasync() { grep -v 'async' "$1" | cut -f1-3; }

# raw NAME TERMS CHUNK CMD...: record with the plugin, pack into NAME.data
raw() {
	local name=$1 terms=$2 chunk=$3
	shift 3
	rm -f "$W/$name".raw.*
	qemu-x86_64 -plugin "$PLUGIN,raw=$W/$name.raw,truth=$W/$name.truth${terms:+,$terms}" "$@" \
		>/dev/null 2>"$W/$name.qemu.err" || return 1
	local args=() f
	for f in "$W/$name".raw.[0-9]*; do
		args+=("${f##*.}:$f")
	done
	"$W/mkdata" "$W/$name.data" "$W/$name.raw.maps" "$chunk" "${args[@]}"
}

# rec NAME TERMS CMD...: hwt record if it can, else raw
REC_MODE=raw
if $TO "$H" record --emulate --truth "$W/probe.truth" -o "$W/probe.data" -- /bin/true \
	>/dev/null 2>&1 && [ -s "$W/probe.truth" ]; then
	REC_MODE=hwt
fi
rec() {
	local name=$1 terms=$2
	shift 2
	if [ $REC_MODE = hwt ]; then
		$TO "$H" record --emulate -e "intel_pt/${terms}/u" --truth "$W/$name.truth" \
			-o "$W/$name.data" -- "$@" >/dev/null 2>"$W/$name.rec.err"
		return
	fi
	raw "$name" "$terms" 65536 "$@"
}

check_truth() { # NAME
	local n=$1
	$TO "$H" script -i "$W/$n.data" --branches --format tsv >"$W/$n.tsv" 2>"$W/$n.err"
	local rc=$?
	if [ $rc -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$W/$n.err"; then
		echo "FAIL script_truth_$n: hwt script exit $rc $(head -c 200 "$W/$n.err")"
		return
	fi
	nonasync "$W/$n.truth" >"$W/$n.t"
	grep -v '^ *[0-9]* *\[' "$W/$n.tsv" | nonasync /dev/stdin >"$W/$n.h"
	if cmp -s "$W/$n.t" "$W/$n.h"; then
		echo "PASS script_truth_$n ($(wc -l <"$W/$n.t") branches)"
	else
		echo "FAIL script_truth_$n: $(grep -c 'error' "$W/$n.tsv") gaps; first difference: $(diff "$W/$n.t" "$W/$n.h" | head -3 | tr '\n\t' '  ')"
	fi
}

progs() { # TAG -> command line
	case $1 in
	gzip) echo "/usr/bin/gzip -c -6 $W/input.txt" ;;
	sha) echo "/usr/bin/sha256sum $W/input.txt" ;;
	esac
}

for p in gzip sha; do
	for cfg in default noretcomp psb timing; do
		case $cfg in
		default) terms="" ;;
		noretcomp) terms="noretcomp=1" ;;
		psb) terms="psb_period=0" ;;
		timing) terms="tsc=1,mtc=1,cyc=1" ;;
		esac
		n=${p}_$cfg
		# shellcheck disable=SC2046
		if ! rec "$n" "$terms" $(progs $p); then
			echo "FAIL script_truth_$n: recording failed ($REC_MODE): $(head -c 200 "$W/$n".*.err)"
			continue
		fi
		check_truth "$n"
	done
done

# libipt over the same file: an oracle for the recording itself
n=gzip_default
if [ -f "$W/$n.data" ] && [ -x "$BF" ]; then
	# to a file, and its exit status checked: a leak report in a sanitizer
	# build once cut the output short
	$TO "$BF" branches "$W/$n.data" >"$W/$n.iptall" 2>"$W/$n.ipterr"
	rc=$?
	nonasync "$W/$n.iptall" >"$W/$n.ipt"
	if [ $rc != 0 ]; then
		echo "FAIL script_libipt_$n: the oracle, bench_flow branches, exited with $rc: $(head -c 300 "$W/$n.ipterr" | tr '\n' ' ')"
	elif cmp -s "$W/$n.ipt" "$W/$n.h"; then echo "PASS script_libipt_$n"; else
		echo "FAIL script_libipt_$n: hwt and libipt differ: $(diff "$W/$n.ipt" "$W/$n.h" | head -3 | tr '\n\t' '  ') (libipt vs truth: $(cmp -s "$W/$n.ipt" "$W/$n.t" && echo same || echo differs))"
	fi
fi

# perf script on the same file
if command -v perf >/dev/null && [ -f "$W/sha_default.data" ]; then
	n=sha_default
	$TO perf script --itrace=b -F tid,ip,addr -i "$W/$n.data" 2>/dev/null |
		awk '$2 != "0" && $4 != "0" { printf "%s\t0x%s\t0x%s\n", $1, $2, $4 }' >"$W/$n.perf"
	grep -v '^ *[0-9]* *\[' "$W/$n.tsv" | grep -v -w far | cut -f1-3 >"$W/$n.hall"
	if [ ! -s "$W/$n.perf" ]; then
		echo "FAIL script_perf_$n: perf script decodes no branches from this file ($(perf script --itrace=b -i "$W/$n.data" 2>&1 | head -c 200))"
	elif cmp -s "$W/$n.perf" "$W/$n.hall"; then
		echo "PASS script_perf_$n"
	else
		echo "FAIL script_perf_$n: $(diff "$W/$n.perf" "$W/$n.hall" | head -3 | tr '\n\t' '  ')"
	fi
fi

# small AUXTRACE chunks: the regions that straddle chunks
n=gzip_chunks
if raw "$n" "psb_period=0" 777 $(progs gzip); then check_truth "$n"; fi

# chunking must not matter: chunks smaller than the PSB period always give
# PSB-to-PSB regions, whatever the chunk size (carry, padding, offsets)
n=gzip_chunks
if [ -f "$W/$n.data" ]; then
	f=$(ls "$W/$n".raw.[0-9]* | head -1)
	same=1
	for c in 1000 1999; do
		"$W/mkdata" "$W/rc.data" "$W/$n.raw.maps" $c "${f##*.}:$f"
		$TO "$H" script -i "$W/rc.data" --branches --format tsv >"$W/rc.tsv" 2>/dev/null
		cmp -s "$W/rc.tsv" "$W/$n.tsv" || same=0
	done
	if [ $same = 1 ]; then echo "PASS script_chunking_invariance"; else
		echo "FAIL script_chunking_invariance: output depends on the AUXTRACE chunk size"
	fi
fi

# --calls: every call row is a truth branch; as many as tsv call rows
n=sha_default
if [ -f "$W/$n.data" ]; then
	$TO "$H" script -i "$W/$n.data" --calls --no-time >"$W/$n.calls" 2>/dev/null
	awk '$2 == "call" { printf "%s\t%s\t%s\n", $1, $3, $5 }' "$W/$n.calls" | sort -u >"$W/$n.callrows"
	sort -u "$W/$n.t" >"$W/$n.tset"
	missing=$(comm -23 "$W/$n.callrows" "$W/$n.tset" | wc -l)
	ncalls=$(grep -c ' call 0x' "$W/$n.calls")
	ntsv=$(awk -F'\t' '$4 == "call" || $4 == "icall"' "$W/$n.tsv" | wc -l)
	if [ "$missing" = 0 ] && [ "$ncalls" = "$ntsv" ] && [ "$ncalls" -gt 0 ]; then
		echo "PASS script_calls_$n ($ncalls calls)"
	else
		echo "FAIL script_calls_$n: $missing call rows not in the truth; $ncalls calls vs $ntsv in --branches"
	fi
	# --insn: as many instructions as libipt's block decoder counts
	$TO "$H" script -i "$W/$n.data" --insn --no-time >"$W/$n.insn" 2>/dev/null
	ni=$(grep -vc ': error: ' "$W/$n.insn")
	nl=$($TO "$BF" time "$W/$n.data" | awk '{ print $5 }')
	if [ "$ni" = "$nl" ]; then echo "PASS script_insn_count_$n ($ni)"; else
		echo "FAIL script_insn_count_$n: hwt $ni instructions, libipt blocks hold $nl"
	fi
	$TO "$H" script -i "$W/$n.data" --insn --disasm --no-time 2>/dev/null | head -1000 >"$W/$n.dis"
	if [ "$(grep -c $'\t' "$W/$n.dis")" = 1000 ]; then echo "PASS script_disasm"; else
		echo "FAIL script_disasm: lines without disassembly"
	fi
	$TO "$H" report -i "$W/$n.data" >"$W/$n.rep" 2>&1
	tot=$(awk 'NR == 1 { print $2 }' "$W/$n.rep")
	if [ "$tot" = "$ni" ]; then echo "PASS script_report_total"; else
		echo "FAIL script_report_total: report counts $tot, --insn $ni"
	fi
	$TO "$H" report -i "$W/$n.data" --folded >"$W/$n.fold" 2>&1
	fsum=$(awk '{ s += $NF } END { print s + 0 }' "$W/$n.fold")
	if [ "$fsum" = "$ni" ]; then echo "PASS script_report_folded_sum"; else
		echo "FAIL script_report_folded_sum: folded counts sum to $fsum, --insn $ni"
	fi
fi

# corrupted traces: flip / zero / truncate the raw stream, then pack
n=gzip_corrupt
if raw "$n" "psb_period=0" 65536 $(progs gzip); then
	nonasync "$W/$n.truth" >"$W/$n.t"
	f=$(ls "$W/$n".raw.[0-9]* | head -1)
	size=$(stat -c %s "$f")
	for kind in flip zero trunc; do
		cp "$f" "$W/c.raw"
		case $kind in
		flip) printf '\x55\xaa\x13\x77' | dd of="$W/c.raw" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null ;;
		zero) dd if=/dev/zero of="$W/c.raw" bs=1 seek=$((size / 2)) count=512 conv=notrunc 2>/dev/null ;;
		trunc) truncate -s $((size * 3 / 5)) "$W/c.raw" ;;
		esac
		"$W/mkdata" "$W/c.data" "$W/$n.raw.maps" 4096 "${f##*.}:$W/c.raw"
		timeout 60 "$H" script -i "$W/c.data" --branches --format tsv >"$W/c.tsv" 2>"$W/c.err"
		rc=$?
		if [ $rc -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$W/c.err"; then
			echo "FAIL script_corrupt_$kind: exit $rc (crash, hang or sanitizer report) $(head -c 200 "$W/c.err")"
			continue
		fi
		bad=$(grep '\[' "$W/c.tsv" | grep -vc '\[0x[0-9a-f]*, 0x[0-9a-f]*: error: ')
		if [ "$bad" != 0 ]; then
			echo "FAIL script_corrupt_$kind: $bad gap lines without offset"
			continue
		fi
		if [ $kind = trunc ]; then # up to the first gap: a prefix of the truth
			awk '/\[/ { exit } { print }' "$W/c.tsv" | nonasync /dev/stdin >"$W/c.h"
			k=$(wc -l <"$W/c.h")
			if [ "$k" -gt 0 ] && head -n "$k" "$W/$n.t" | cmp -s - "$W/c.h"; then
				echo "PASS script_corrupt_$kind ($k branches before the cut)"
			else
				echo "FAIL script_corrupt_$kind: the $k branches are not the truth's first"
			fi
			continue
		fi
		# Flipped or zeroed bytes need not show: zeros are PAD packets and
		# a lost stretch of TNT bits can still fit the code.  What must
		# hold: from the first PSB after the damage on, the output is the
		# truth.  Its length comes from decoding the stream from that PSB
		# alone (rows after its last gap, if any).
		if [ $kind = flip ]; then cend=$((size / 3 + 4)); else cend=$((size / 2 + 512)); fi
		rel=$("$H" dump "$f:$cend" 2>/dev/null | awk '$2 == "psb" { print strtonum("0x" $1); exit }')
		if [ -z "$rel" ]; then
			echo "FAIL script_corrupt_$kind: no PSB after the damage at $cend"
			continue
		fi
		tail -c +$((cend + rel + 1)) "$f" >"$W/s.raw"
		"$W/mkdata" "$W/s.data" "$W/$n.raw.maps" 4096 "${f##*.}:$W/s.raw"
		"$H" script -i "$W/s.data" --branches --format tsv 2>/dev/null |
			awk '/\[/ { n = 0; delete a; next } { a[n++] = $0 } END { for (i = 0; i < n; i++) print a[i] }' |
			nonasync /dev/stdin >"$W/s.t"
		k=$(wc -l <"$W/s.t")
		ngaps=$(grep -c '\[' "$W/c.tsv")
		nonasync "$W/c.tsv" | tail -n "$k" >"$W/c.h"
		if [ "$k" -gt 1000 ] && tail -n "$k" "$W/$n.t" | cmp -s - "$W/s.t" && cmp -s "$W/s.t" "$W/c.h"; then
			echo "PASS script_corrupt_$kind ($ngaps gaps; the $k branches from the next PSB on match the truth)"
		else
			echo "FAIL script_corrupt_$kind: $ngaps gaps; the $k branches from the PSB at $((cend + rel)) on are not the truth's tail"
		fi
	done
fi
