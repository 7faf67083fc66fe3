#!/bin/bash
# tests/e2e/script_srcline.sh - `hwt script --srcline` and `hwt report
# --srcline` on a recording (hwt record --emulate) of a small C program
# built with -g (tests/e2e/progs/srcline_prog.c, at -O0 and -O2):
#   - every instruction of the program in `--insn --srcline` carries the
#     file:line that binutils addr2line gives for its link-time address
#     (the load bias from a symbol's runtime address and `nm`), or none
#     where addr2line knows no line;
#   - the program stripped, its lines in a separate file named by
#     .gnu_debuglink: the same output; without that file: no lines;
#   - --branches and --calls --srcline: each location's file:line is the
#     one --insn gives for that address;
#   - hwt report --srcline: the instructions per line of the program equal
#     the rows of --insn per line;
#   - --srcline with --format tsv is a usage error (exit 2).
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require script_srcline qemu-x86_64 addr2line objcopy nm readelf
require_built script_srcline "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C

# addr2line's answer normalized: no discriminator; "" when no line
a2l() {
	addr2line -e "$1" | sed -e 's/ (discriminator [0-9]*)$//' -e 's/^.*:[?0]$//'
}

# ip -> src of every instruction row ("tid ip sym+off [src]"; no time)
ipmap() {
	awk 'NF >= 3 && $2 ~ /^0x/ { print $2 "\t" (NF >= 4 ? $4 : "") }' "$1" | sort -u
}

check_level() {
	local o=$1 name=script_srcline_O$1
	local d=$T/O$o
	mkdir -p "$d"
	local prog=$d/srcline_prog
	if ! cc -g -O"$o" -o "$prog" tests/e2e/progs/srcline_prog.c 2>"$d/cc.err"; then
		fail "$name" "cc: $(head -c 200 "$d/cc.err")"
		return
	fi
	if ! "$HWT" record --emulate -o "$d/rec.data" -- "$prog" >"$d/out" 2>"$d/rec.err"; then
		fail "$name" "hwt record failed: $(grep -v '^\[' "$d/rec.err" | head -2)"
		return
	fi
	"$HWT" script -i "$d/rec.data" --insn --srcline --no-time >"$d/ins" 2>"$d/err"
	if grep -q 'Sanitizer\|runtime error' "$d/err"; then
		fail "$name" "$(grep -m1 'Sanitizer\|runtime error' "$d/err")"
		return
	fi
	# load bias: main's runtime address minus its link-time address
	local nm_main run_main bias lo hi
	nm_main=$(nm "$prog" | awk '$3 == "main" { print $1; exit }')
	run_main=$(awk '$3 ~ /^main\+0x/ { split($3, s, "+"); printf "%d\n", strtonum($2) - strtonum(s[2]); exit }' "$d/ins")
	if [ -z "$nm_main" ] || [ -z "$run_main" ]; then
		fail "$name" "main not found (nm: '$nm_main', trace: '$run_main')"
		return
	fi
	bias=$((run_main - 0x$nm_main))
	read -r lo hi < <(readelf -lW "$prog" | awk '$1 == "LOAD" && / R E / { printf "%d %d\n", strtonum($3), strtonum($3) + strtonum($5) }')
	# the program's instructions: link-time address, hwt's src
	ipmap "$d/ins" | awk -F'\t' -v b="$bias" -v lo="$lo" -v hi="$hi" '
		{ a = strtonum($1) - b; if (a >= lo && a < hi) printf "%x\t%s\n", a, $2 }' >"$d/hwt"
	cut -f1 "$d/hwt" | a2l "$prog" >"$d/a2l"
	cut -f2 "$d/hwt" >"$d/hwt.src"
	local n known diff
	n=$(wc -l <"$d/hwt")
	known=$(grep -c . "$d/a2l")
	diff=$(paste "$d/hwt" "$d/a2l" | awk -F'\t' '$2 != $3 { print "0x" $1 ": hwt \"" $2 "\" addr2line \"" $3 "\"" }')
	if [ "$n" -lt 20 ] || [ "$known" -lt 20 ]; then
		fail "$name" "only $n instructions of the program ($known with lines) in the trace"
		return
	elif [ -n "$diff" ]; then
		fail "$name" "$(echo "$diff" | wc -l) of $n addresses differ: $(echo "$diff" | head -3 | tr '\n' ' ')"
		return
	fi
	pass "$name ($n addresses, $known with lines, $(cut -f2 "$d/hwt" | grep . | sed 's/:[0-9]*$//' | sort -u | wc -l) files)"

	# branches and calls: each location's src is the one --insn gives
	ipmap "$d/ins" >"$d/map"
	"$HWT" script -i "$d/rec.data" --branches --srcline --no-time >"$d/br" 2>/dev/null
	"$HWT" script -i "$d/rec.data" --calls --srcline --no-time >"$d/calls" 2>/dev/null
	local bad
	bad=$(awk -F'\t' 'FNR == NR { src[$1] = $2; next }
		FILENAME ~ /br$/ && / => / {
			split($0, h, " => "); n = split(h[1], f, " "); m = split(h[2], t, " ")
			fs = (f[n] ~ /\)$/) ? "" : f[n]; ts = (t[m] ~ /\)$/) ? "" : t[m]
			if (src[f[3]] != fs || src[t[1]] != ts) { print FILENAME ": " $0; exit }
			nb++ }
		FILENAME ~ /calls$/ && / => / {
			split($0, h, " => "); m = split(h[2], t, " ")
			ts = (m >= 3) ? t[3] : ""
			if (src[t[1]] != ts) { print FILENAME ": " $0; exit }
			nc++ }
		END { if (nb < 10 || nc < 5) print "too few branches (" nb ") or calls (" nc ")" }' \
		"$d/map" "$d/br" "$d/calls")
	if [ -n "$bad" ]; then
		fail "script_srcline_flow_O$o" "$bad"
	else
		pass "script_srcline_flow_O$o"
	fi

	# report: instructions per source line of the program
	"$HWT" report -i "$d/rec.data" --srcline -n 0 2>/dev/null |
		awk '$NF ~ /srcline_prog\.c:|srcline_util\.h:/ { print $NF, $1 }' | sort >"$d/rep"
	awk 'NF == 4 && $4 ~ /srcline_prog\.c:|srcline_util\.h:/ { c[$4]++ }
		END { for (k in c) print k, c[k] }' "$d/ins" | sort >"$d/rep.want"
	if [ ! -s "$d/rep.want" ] || ! cmp -s "$d/rep" "$d/rep.want"; then
		fail "script_srcline_report_O$o" "report vs --insn rows per line: $(diff "$d/rep" "$d/rep.want" | head -3 | tr '\n' ' ')"
	else
		pass "script_srcline_report_O$o ($(wc -l <"$d/rep") lines)"
	fi

	[ "$o" = 2 ] || return
	# separate debug file by .gnu_debuglink (next to the program)
	objcopy --only-keep-debug "$prog" "$prog.debug" &&
		objcopy --strip-debug --add-gnu-debuglink="$prog.debug" "$prog" "$prog.s" &&
		mv "$prog.s" "$prog"
	"$HWT" script -i "$d/rec.data" --insn --srcline --no-time >"$d/ins.dbg" 2>/dev/null
	rm -f "$prog.debug"
	"$HWT" script -i "$d/rec.data" --insn --srcline --no-time >"$d/ins.none" 2>/dev/null
	if readelf -S "$prog" | grep -q debug_line; then
		fail script_srcline_debuglink "objcopy did not strip the program"
	elif ! cmp -s "$d/ins" "$d/ins.dbg"; then
		fail script_srcline_debuglink "lines differ with a separate debug file: $(diff "$d/ins" "$d/ins.dbg" | head -3 | tr '\n' ' ')"
	elif grep -q 'srcline_prog\.c:' "$d/ins.none"; then
		fail script_srcline_debuglink "lines of the program without any debug info"
	else
		pass script_srcline_debuglink
	fi
}

check_level 0
check_level 2

"$HWT" script -i "$T/O0/rec.data" --branches --format tsv --srcline >/dev/null 2>&1
rc=$?
if [ $rc = 2 ]; then pass script_srcline_tsv_usage; else fail script_srcline_tsv_usage "exit $rc, want 2"; fi
