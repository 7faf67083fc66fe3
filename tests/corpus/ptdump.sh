#!/bin/bash
# tests/corpus/ptdump.sh - "hwt dump" against libipt's ptdump expectations.
#
# For each of the corpus tests (index.tsv): run "$HWT_BUILD/hwt dump" with
# the test's ptdump options on <test>.pt, once per cpu in its cpus column
# (with --cpu f/m; once without --cpu when the list is empty), and compare
# each output with <test>-ptdump.exp ignoring the amount of whitespace, as
# the libipt harness does (diff -b: blank runs compare equal, trailing
# blanks are ignored).  One PASS/FAIL line per test; a cpu test passes when
# every cpu run matches, and a failure names the cpu and the first
# differing line.  A run that writes to stderr (e.g. a sanitizer report)
# fails too.
#
# Speed: one hwt process per run, up to nproc (max 8) at a time; all
# comparisons happen in one awk.
set -u
HWT=${HWT_BUILD:?HWT_BUILD not set}/hwt
C=${CORPUS:?CORPUS not set}
if [ ! -x "$HWT" ]; then
	echo "SKIP ptdump: $HWT not built"
	exit 0
fi
if [ ! -f "$C/index.tsv" ]; then
	echo "SKIP ptdump: no corpus at $C"
	exit 0
fi
tmp=$(mktemp -d)
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 8 ] && jobs=8
trap 'rm -rf "$tmp"' EXIT

# index.tsv: name org cpus ptdump_exp ptdump_options ptxed_exp ...  (tabs
# become \037 so that empty columns survive "read")
n=0
running=0
while IFS=$'\037' read -r name _org cpus has_exp opts _rest; do
	[ "$name" = name ] && continue
	[ "$has_exp" = yes ] || continue
	IFS=, read -r -a cpu_list <<<"$cpus"
	[ ${#cpu_list[@]} -eq 0 ] && cpu_list=("")
	# a sanitizer build dumps with the first and the last cpu of the list
	# (each start of the sanitized hwt costs ~0.15 s of CPU)
	if [ "${HWT_SAN:-0}" = 1 ] && [ ${#cpu_list[@]} -gt 2 ]; then
		cpu_list=("${cpu_list[0]}" "${cpu_list[-1]}")
	fi
	asan_opts=${ASAN_OPTIONS:-}
	for cpu in "${cpu_list[@]}"; do
		n=$((n + 1))
		cpuopt=()
		[ -n "$cpu" ] && cpuopt=(--cpu "$cpu")
		# Keep up to $jobs runs going (the runs are independent).
		if [ "$running" -ge "$jobs" ]; then
			wait -n
			running=$((running - 1))
		fi
		running=$((running + 1))
		# shellcheck disable=SC2086 # options are whitespace-separated words
		ASAN_OPTIONS=$asan_opts "$HWT" dump "${cpuopt[@]}" $opts "$C/$name/$name.pt" \
			>"$tmp/$n.out" 2>"$tmp/$n.err" &
		# The leak check at exit is slow; once per test is enough.
		asan_opts=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
		printf '%s\t%s\t%s\t%s\n' "$name" "${cpu:--}" "$C/$name/$name-ptdump.exp" "$tmp/$n" \
			>>"$tmp/manifest"
	done
done < <(tr '\t' '\037' <"$C/index.tsv")
wait

if [ ! -s "$tmp/manifest" ]; then
	echo "FAIL ptdump: no test found in $C/index.tsv"
	exit 1
fi

awk -F'\t' '
function norm(s) {
	gsub(/[ \t]+/, " ", s)
	sub(/ $/, "", s)
	return s
}
# Compare one run; "" when equal, else why.
function compare(ef, of, errf,    a, b, ra, rb, line, e) {
	if ((getline e < errf) > 0) {
		close(errf)
		return "stderr: " substr(e, 1, 200)
	}
	close(errf)
	line = 0
	for (;;) {
		ra = (getline a < ef)
		rb = (getline b < of)
		line++
		if (ra < 0 || rb < 0) {
			close(ef); close(of)
			return "cannot read " (ra < 0 ? ef : of)
		}
		if (ra <= 0 && rb <= 0)
			break
		if (ra <= 0) {
			close(ef); close(of)
			return "line " line ": extra output \"" b "\""
		}
		if (rb <= 0) {
			close(ef); close(of)
			return "line " line ": missing \"" a "\""
		}
		if (norm(a) != norm(b)) {
			close(ef); close(of)
			return "line " line ": expected \"" norm(a) "\", got \"" norm(b) "\""
		}
	}
	close(ef); close(of)
	return ""
}
function report(name) {
	if (name == "")
		return
	if (why[name] == "") {
		print "PASS ptdump-" name
	} else {
		print "FAIL ptdump-" name ": " why[name]
		fails++
	}
}
{
	if ($1 != cur) {
		report(cur)
		cur = $1
		why[cur] = ""
	}
	if (why[cur] != "")
		next
	w = compare($3, $4 ".out", $4 ".err")
	if (w != "")
		why[cur] = ($2 == "-" ? "" : "cpu " $2 ": ") w
}
END {
	report(cur)
	exit fails ? 1 : 0
}' "$tmp/manifest"
