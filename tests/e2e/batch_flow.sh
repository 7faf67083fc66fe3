#!/bin/bash
# The batch decoder (hwt_pt_block_batch) on recordings of a real program
# (Debian's gzip) made with the emulated Intel PT unit, for default terms,
# noretcomp, psb_period=0 and timing packets on (tsc, mtc, cyc):
#   - test_pt_batch FILE: every trace queue, intact and with bytes flipped
#     or zeroed, the batch (path cache on and off, batches of 2, 3 and 4096
#     entries) against the block decoder: every entry (branches, their
#     instruction counts and times, events, errors and their offsets);
#   - bench_hwt_batch branches (path cache on and off) against the unit's
#     branch ground truth (--truth, async rows left out) and libipt's
#     branches (bench_flow branches over the same file);
#   - signals (tests/e2e/progs/sig_branch.c: a timer signal lands right
#     after taken and not-taken jcc and after an ijmp, as in emu_signal.sh;
#     default terms and timing packets on): test_pt_batch as above, and
#     hwt script --branches --format tsv (batches: the default) equals,
#     byte for byte, hwt script --no-batch (block by block), with async
#     rows, and its other rows are the truth's branches.
set -u
H=$HWT_BUILD/hwt
TB=$HWT_BUILD/tests/test_pt_batch
HB=$HWT_BUILD/bench/bench_hwt_batch
BF=$HWT_BUILD/bench/bench_flow
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
TO="timeout 300"

if ! command -v qemu-x86_64 >/dev/null || [ ! -f "$HWT_BUILD/hwt-pt-plugin.so" ]; then
	echo "SKIP batch_flow: no qemu-x86_64 or no $HWT_BUILD/hwt-pt-plugin.so"
	exit 0
fi
for f in "$TB" "$HB" "$BF"; do
	[ -x "$f" ] || { echo "FAIL batch_flow: $f missing (build it with make)"; exit 0; }
done
seq 1 4000 >"$W/input.txt"
nonasync() { grep -v 'async' "$1" | cut -f1-3; }
S=
if ! command -v gcc >/dev/null; then
	echo "SKIP batch_signal: gcc not installed"
elif ! gcc -O1 -o "$W/sb" "$(dirname "$0")/progs/sig_branch.c" 2>"$W/sb.err"; then
	echo "FAIL batch_signal: gcc: $(head -c 200 "$W/sb.err")"
else
	S=$W/sb
fi

for cfg in default noretcomp psb timing sig sig_timing; do
	# the sanitizer build decodes the default, timing and signal recordings
	if [ "${HWT_SAN:-0}" = 1 ] && { [ $cfg = noretcomp ] || [ $cfg = psb ]; }; then
		echo "SKIP batch_block_gzip_$cfg: sanitizer build (default, timing and signal recordings run there)"
		continue
	fi
	case $cfg in
	sig*)
		[ -n "$S" ] || continue
		terms=""
		[ $cfg = sig_timing ] && terms="tsc=1,mtc=1,cyc=1"
		n=$cfg
		if ! $TO "$H" record --emulate -e "intel_pt/${terms}/u" --truth "$W/$n.truth" \
			-o "$W/$n.data" -- "$S" 1 200 >/dev/null 2>"$W/$n.err" || [ ! -s "$W/$n.truth" ]; then
			echo "FAIL batch_$n: recording failed: $(head -c 200 "$W/$n.err")"
			continue
		fi
		$TO "$TB" "$W/$n.data" | sed "s|batch-recording-$W/$n.data|batch_block_$n|"
		$TO "$H" script -i "$W/$n.data" --branches --format tsv >"$W/$n.b" 2>"$W/$n.berr"
		rb=$?
		$TO "$H" script -i "$W/$n.data" --branches --format tsv --no-batch >"$W/$n.nb" \
			2>"$W/$n.nberr"
		rn=$?
		na=$(grep -c 'async$' "$W/$n.nb")
		nonasync "$W/$n.truth" | sort -s -k1,1n >"$W/$n.t"
		grep -v 'async$' "$W/$n.b" | cut -f1-3 | sort -s -k1,1n >"$W/$n.h"
		if [ $rb != 0 ] || [ $rn != 0 ]; then
			echo "FAIL batch_$n: hwt script exit status $rb (batches), $rn (--no-batch): $(head -c 200 "$W/$n.berr" "$W/$n.nberr")"
		elif ! cmp -s "$W/$n.b" "$W/$n.nb"; then
			echo "FAIL batch_$n: batches ($(wc -l <"$W/$n.b") rows) differ from --no-batch ($(wc -l <"$W/$n.nb")): $(diff "$W/$n.nb" "$W/$n.b" | head -3 | tr '\n\t' '  ')"
		elif [ "$na" = 0 ]; then
			echo "FAIL batch_$n: no async row (the signals landed at system calls only?)"
		elif ! cmp -s "$W/$n.t" "$W/$n.h"; then
			echo "FAIL batch_$n: branches differ from the truth ($(wc -l <"$W/$n.h") vs $(wc -l <"$W/$n.t")): $(diff "$W/$n.t" "$W/$n.h" | head -3 | tr '\n\t' '  ')"
		else
			echo "PASS batch_$n (batches = --no-batch: $(wc -l <"$W/$n.b") rows, $na async; = truth)"
		fi
		continue
		;;
	default) terms="" ;;
	noretcomp) terms="noretcomp=1" ;;
	psb) terms="psb_period=0" ;;
	timing) terms="tsc=1,mtc=1,cyc=1" ;;
	esac
	n=gzip_$cfg
	if ! $TO "$H" record --emulate -e "intel_pt/${terms}/u" --truth "$W/$n.truth" \
		-o "$W/$n.data" -- /usr/bin/gzip -c -1 "$W/input.txt" >/dev/null 2>"$W/$n.err" ||
		[ ! -s "$W/$n.truth" ]; then
		echo "FAIL batch_block_$n: recording failed: $(head -c 200 "$W/$n.err")"
		continue
	fi
	$TO "$TB" "$W/$n.data" | sed "s|batch-recording-$W/$n.data|batch_block_$n|"
	nonasync "$W/$n.truth" >"$W/$n.t"
	$TO "$BF" branches "$W/$n.data" >"$W/$n.iall" 2>"$W/$n.ierr" ||
		echo "FAIL batch_libipt_$n: bench_flow branches failed: $(head -c 200 "$W/$n.ierr")"
	nonasync "$W/$n.iall" >"$W/$n.i"
	for pc in on off; do
		opt=
		[ $pc = off ] && opt=--no-path-cache
		if ! $TO "$HB" $opt branches "$W/$n.data" >"$W/$n.hall" 2>"$W/$n.herr"; then
			echo "FAIL batch_truth_${n}_paths_$pc: bench_hwt_batch failed: $(head -c 200 "$W/$n.herr")"
			continue
		fi
		nonasync "$W/$n.hall" >"$W/$n.h"
		if cmp -s "$W/$n.t" "$W/$n.h"; then
			echo "PASS batch_truth_${n}_paths_$pc ($(wc -l <"$W/$n.h") branches)"
		else
			echo "FAIL batch_truth_${n}_paths_$pc: first difference: $(diff "$W/$n.t" "$W/$n.h" | head -3 | tr '\n\t' '  ')"
		fi
		if cmp -s "$W/$n.i" "$W/$n.h"; then
			echo "PASS batch_libipt_${n}_paths_$pc"
		else
			echo "FAIL batch_libipt_${n}_paths_$pc: first difference: $(diff "$W/$n.i" "$W/$n.h" | head -3 | tr '\n\t' '  ')"
		fi
	done
done
