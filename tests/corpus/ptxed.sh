#!/bin/bash
# tests/corpus/ptxed.sh - hwt script --format ptxed against libipt's ptxed
# expectations in the libipt-ptt corpus.
#
# For every test with a <test>-ptxed.exp, decode <test>.pt with the image
# <test>.bin mapped at its org, once with --insn-decoder and once with
# --block-decoder (a test's own options come later and win), once per cpu
# listed for the test, and compare with `diff -b`.  One PASS/FAIL line per
# (test, decoder).
#
# env: HWT_BUILD (build folder), CORPUS (corpus folder), HWT_SAN (1: one
# decoder per file, alternating; the first and last cpu).  Optional filter:
# PTXED_ONLY=<substring of test names>.
set -u
BUILD=${HWT_BUILD:?HWT_BUILD not set}
CORPUS=${CORPUS:?CORPUS not set}
HWT=$(cd "$BUILD" && pwd)/hwt
if [ ! -x "$HWT" ]; then
	echo "FAIL ptxed: $HWT not built"
	exit 1
fi
if [ ! -f "$CORPUS/index.tsv" ]; then
	echo "SKIP ptxed: no corpus at $CORPUS"
	exit 0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT

while IFS=$'\x1f' read -r name org cpus _dexp _dopt xexp xopt _extra _desc; do
	[ "$name" = name ] && continue
	[ "$xexp" = yes ] || continue
	[ -n "${PTXED_ONLY:-}" ] && [[ "$name" != *"$PTXED_ONLY"* ]] && continue
	dir=$CORPUS/$name
	exp=$dir/$name-ptxed.exp
	IFS=',' read -r -a cpulist <<<"$cpus"
	[ ${#cpulist[@]} -eq 0 ] && cpulist=("")
	# a sanitizer build decodes with the first and the last cpu of the
	# list (the cpus of a list share the erratum the test is about; each
	# start of the sanitized hwt costs ~0.15 s of CPU), and checks for
	# leaks in the first run only
	if [ "${HWT_SAN:-0}" = 1 ] && [ ${#cpulist[@]} -gt 2 ]; then
		cpulist=("${cpulist[0]}" "${cpulist[-1]}")
	fi
	read -r -a opts <<<"$xopt"
	n=$((${n:-0} + 1))
	for dec in insn block; do
		# a sanitizer build runs every corpus file through one decoder,
		# the insn and the block decoder in turn (both: 3.5 minutes)
		if [ "${HWT_SAN:-0}" = 1 ] && [ $((n % 2)) = "$([ $dec = insn ] && echo 1 || echo 0)" ]; then
			echo "SKIP ptxed-$dec-$name: sanitizer build: this file runs through the other decoder"
			continue
		fi
		why=
		asan_opts=${ASAN_OPTIONS:-}
		for cpu in "${cpulist[@]}"; do
			cpuopt=()
			[ -n "$cpu" ] && cpuopt=(--cpu "$cpu")
			# (output capped: a decoder stuck in a loop must not fill the disk)
			(cd "$dir" && ASAN_OPTIONS=$asan_opts timeout 10 "$HWT" script --format ptxed --$dec-decoder \
				--raw "$name.bin:$org" "${cpuopt[@]}" "${opts[@]}" \
				--no-inst --check --pt "$name.pt" 2>&1 | head -c 4000000) >"$out"
			rc=${PIPESTATUS[0]}
			asan_opts=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
			if [ $rc -ne 0 ]; then
				why="exit status $rc${cpu:+ (cpu $cpu)}: $(head -c 200 "$out" | tr '\n' ' ')"
				break
			fi
			if ! d=$(diff -b "$exp" "$out"); then
				why="differs from $name-ptxed.exp${cpu:+ (cpu $cpu)}: $(echo "$d" | head -n 6 | tr '\n' ' ')"
				break
			fi
		done
		if [ -z "$why" ]; then
			echo "PASS ptxed-$dec-$name"
		else
			echo "FAIL ptxed-$dec-$name: $why"
		fi
	done
done < <(tr '\t' '\037' <"$CORPUS/index.tsv")
