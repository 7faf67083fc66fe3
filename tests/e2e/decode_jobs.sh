#!/bin/bash
# Parallel decode (-j N), batches and the path cache change nothing in the
# output: on recordings like those of script_flow (gzip with default
# terms, noretcomp, timing packets on), script_cpu (a
# multi-threaded program per thread, and made per-CPU by script_mkcpu),
# emu_record (small AUX chunks through the plugin's raw stream and
# script_mkdata: regions joined across chunks), emu_signal (signals that
# land right after taken / not-taken jcc and ijmp: async rows, which the
# case requires), lone_jcc (jumps and calls to blocks of one instruction
# that read the trace, with CYC timing: the branch into such a block has
# the time after it, which batches get from their time entries) and
# corrupted traces (gaps), every output of hwt script
# (tsv, text with times, --calls; on the signal recording also --no-time
# text and calls; on the small recording also --insn and hwt report:
# default, --coverage, --folded, --flamegraph, --drcov; on the one with
# CYC timing also --flame-chart; hwt report and hwt timeline also on the
# per-CPU and corrupted ones, the timeline on the signal one: instruction
# ranges against the per-instruction callbacks of --no-batch) with
# -j 1 --no-batch (the block-by-block
# decode on one thread: the reference) equals, byte for byte and in exit
# status, the one of -j 1 (batches: the default), -j 2 --no-path-cache,
# -j 4 and -j 4 --no-batch.
set -u
. "$(dirname "$0")/lib.bash"
H=$B/hwt
PLUGIN=$B/hwt-pt-plugin.so
if ! command -v qemu-x86_64 >/dev/null || [ ! -f "$PLUGIN" ]; then
	skip decode_jobs "no qemu-x86_64 or no $PLUGIN"
	exit 0
fi
TO="timeout 300"
if ! hwt_cc "$T/mkdata" tests/e2e/script_mkdata.c 2>"$T/cc.err" ||
	! hwt_cc "$T/mkcpu" tests/e2e/script_mkcpu.c 2>>"$T/cc.err" ||
	! cc -O1 -pthread -o "$T/mt" tests/e2e/progs/mt_switch.c 2>>"$T/cc.err" ||
	! cc -O1 -o "$T/sb" tests/e2e/progs/sig_branch.c 2>>"$T/cc.err" ||
	! cc -O1 -o "$T/lj" tests/e2e/progs/lone_jcc.c 2>>"$T/cc.err"; then
	fail decode_jobs_build "$(head -c 300 "$T/cc.err")"
	exit 0
fi
seq 1 3000 >"$T/input.txt"
seq 1 300 >"$T/small.txt"
GZ="/usr/bin/gzip -c -1 $T/input.txt"

rec() { # NAME TERMS CMD...
	local n=$1 terms=$2
	shift 2
	$TO "$H" record --emulate -e "intel_pt/${terms}/u" -o "$T/$n.data" -- "$@" >/dev/null 2>"$T/$n.err"
}
raw() { # NAME CHUNK TERMS CMD...: the plugin's raw stream in CHUNK-byte AUXTRACE chunks
	local n=$1 chunk=$2 terms=$3 f args=()
	shift 3
	rm -f "$T/$n".raw.*
	qemu-x86_64 -plugin "$PLUGIN,raw=$T/$n.raw${terms:+,$terms}" "$@" >/dev/null 2>"$T/$n.err" || return 1
	for f in "$T/$n".raw.[0-9]*; do args+=("${f##*.}:$f"); done
	"$T/mkdata" "$T/$n.data" "$T/$n.raw.maps" "$chunk" "${args[@]}" 2>>"$T/$n.err"
}

names=()
try() { # NAME MAKER...: make a recording, or fail
	local n=$1
	shift
	if "$@" && [ -s "$T/$n.data" ]; then
		names+=("$n")
	else
		fail "decode_jobs_$n" "recording failed: $(head -c 200 "$T/$n.err")"
	fi
}
try gzip_default rec gzip_default "" $GZ
try gzip_noretcomp rec gzip_noretcomp "noretcomp=1" $GZ
try gzip_timing rec gzip_timing "tsc=1,mtc=1,cyc=1" $GZ
try gzip_chunk4k raw gzip_chunk4k 4096 "" $GZ
try mt rec mt "tsc,mtc" "$T/mt"
try sig rec sig "" "$T/sb" 1 200
try lone rec lone "tsc=1,mtc=1,cyc=1" "$T/lj" 3000
# (PSBs every 2 KiB: many segments in a small trace, for the instruction
# outputs, which are long)
try small_psb rec small_psb "psb_period=0,tsc=1,mtc=1" /usr/bin/gzip -c -1 "$T/small.txt"
if [ -s "$T/mt.data" ] && "$T/mkcpu" "$T/mt.data" "$T/mt_cpu.data" 2 300 early 2>"$T/mt_cpu.err"; then
	names+=(mt_cpu)
fi
# corrupted: bytes flipped and zeroed in the middle of the trace
if [ -s "$T/gzip_default.data" ]; then
	cp "$T/gzip_default.data" "$T/gzip_bad.data"
	size=$(stat -c %s "$T/gzip_bad.data")
	for k in 3 5 7; do
		printf '\x55\xaa\x13\x77' | dd of="$T/gzip_bad.data" bs=1 seek=$((size * k / 10)) conv=notrunc 2>/dev/null
	done
	dd if=/dev/zero of="$T/gzip_bad.data" bs=1 seek=$((size * 6 / 10)) count=300 conv=notrunc 2>/dev/null
	names+=(gzip_bad)
fi

# out NAME TAG CMD...: stdout digest and exit status of an hwt command
out() {
	local n=$1 tag=$2
	shift 2
	$TO "$H" "$@" --no-progress >"$T/o" 2>"$T/$n.$tag.err"
	local rc=$?
	if grep -q 'Sanitizer\|runtime error' "$T/$n.$tag.err"; then
		rc="sanitizer: $(grep -m1 'Sanitizer\|runtime error' "$T/$n.$tag.err")"
	fi
	echo "rc $rc $(wc -l <"$T/o") lines $(md5sum <"$T/o" | cut -c1-32)"
}

# the variants checked against -j1 --no-batch; under the sanitizers (each
# command pays their start-up) the two that run the most code beside the
# reference: batches with the path cache on 4 threads, without it on 2
variants=("-j1" "-j2 --no-path-cache" "-j4" "-j4 --no-batch")
[ "${HWT_SAN:-0}" = 1 ] && variants=("-j2 --no-path-cache" "-j4")
for n in "${names[@]}"; do
	f=$T/$n.data
	modes="tsv text calls"
	case $n in
	small_psb) modes="$modes insn report coverage folded flame drcov timeline" ;;
	sig) modes="$modes notime calls_nt timeline" ;;
	lone) modes="text calls report chart timeline" ;;
	mt_cpu) modes="$modes report timeline" ;;
	gzip_bad) modes="$modes coverage timeline" ;;
	esac
	# (under the sanitizers: hwt report on the one with CYC timing and
	# per-CPU, the timeline on the small one)
	if [ "${HWT_SAN:-0}" = 1 ]; then
		case $n in
		lone) modes="text calls report" ;;
		small_psb) modes="tsv text calls insn report coverage folded timeline" ;;
		mt_cpu) modes="tsv text calls report" ;;
		gzip_bad | sig) modes=${modes% timeline} modes=${modes% coverage} ;;
		esac
	fi
	for m in $modes; do
		case $m in
		tsv) a=(script -i "$f" --branches --format tsv) ;;
		text) a=(script -i "$f" --branches) ;;
		calls) a=(script -i "$f" --calls) ;;
		notime) a=(script -i "$f" --branches --no-time) ;;
		calls_nt) a=(script -i "$f" --calls --no-time) ;;
		insn) a=(script -i "$f" --insn) ;;
		report) a=(report -i "$f") ;;
		coverage) a=(report -i "$f" --coverage) ;;
		folded) a=(report -i "$f" --folded) ;;
		flame) a=(report -i "$f" --flamegraph) ;;
		chart) a=(report -i "$f" --flame-chart) ;;
		drcov) a=(report -i "$f" --drcov) ;;
		timeline) a=(timeline -i "$f" --format chrome) ;;
		esac
		ref=$(out "$n" ref "${a[@]}" -j1 --no-batch)
		bad=
		for v in "${variants[@]}"; do
			# shellcheck disable=SC2086
			got=$(out "$n" "${v// /}" "${a[@]}" $v)
			[ "$got" = "$ref" ] || bad="$bad; $v: $got (reference -j1 --no-batch: $ref)"
		done
		case $ref in
		"rc 0 "* | "rc 1 "*) ;;
		*) bad="reference failed: $ref $(head -c 200 "$T/$n.ref.err")$bad" ;;
		esac
		# (the signal recording must have async rows: $T/o is the
		# last variant's output, equal to the reference's if no bad)
		if [ $n = sig ] && [ $m = tsv ]; then
			na=$(grep -c 'async$' "$T/o")
			[ "$na" != 0 ] || bad="no async row in the signal recording$bad"
			ref="$ref, $na async"
		fi
		if [ -n "$bad" ]; then
			fail "decode_jobs_${n}_$m" "${bad#; }"
		else
			pass "decode_jobs_${n}_$m (${ref#rc * })"
		fi
	done
done
