#!/bin/bash
# tests/e2e/emu_record.sh - `hwt record --emulate --truth` on real programs
# (Debian packages), decoded by Linux perf (the oracle):
#   perf script --itrace=be -F tid,ip,addr must report no decode error and,
#   trace begin/end entries aside, exactly the truth's branches per thread
#   (the truth comes from QEMU's executed blocks, not from the encoder);
#   the program's stdout and exit status equal those of an untraced run.
# Events: perf's default intel_pt config (tsc and mtc on: perf decodes by
# time, interleaving trace and sideband), timing variants (tsc,mtc,cyc;
# fast MTC), a timeless one (tsc=0,mtc=0: perf's timeless path);
# noretcomp, small/large psb_period, a 16 KiB AUX ring (full mode waits),
# snapshot mode, an address filter on one libc function (only its
# branches appear).
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require emu_record qemu-x86_64 perf
require_built emu_record "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
head -c 200000 /dev/zero | tr '\0' 'a' | fold -w 60 >"$T/data.txt"
seq 1 3000 | sed 's/1/x/g' >"$T/lines.txt"

# hwt script's branches of DIR/perf.data (tid<TAB>from<TAB>to; async rows
# left out as the truth leaves them out; gap lines kept, so they show)
hwt_branches() {
	"$HWT" script -i "$1/perf.data" --branches --format tsv 2>"$1/hs.err" |
		awk -F'\t' '$4 != "async"' | cut -f1-3
}

# perf's branches (tid<TAB>from<TAB>to), trace begin/end entries removed
perf_branches() {
	awk '$3 == "=>" && $2 != "0" && $4 != "0" { print $1 "\t0x" $2 "\t0x" $4 }' "$1"
}

# rec NAME EVENT CMD...
rec() {
	local name=$1 ev=$2 opt=()
	shift 2
	if [ "$1" = -m ]; then
		opt=(-m "$2")
		shift 2
	fi
	local d=$T/$name
	mkdir -p "$d"
	(cd "$T" && "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$HWT" record -e "$ev" "${opt[@]}" --emulate --truth "$d/truth" -o "$d/perf.data" -- "$@" \
		>"$d/out" 2>"$d/err")
	local rc=$?
	if [ $rc != $ref_rc ]; then
		fail "$name" "exit status $rc, untraced $ref_rc ($(grep -v '^\[' "$d/err" | head -2))"
		return 1
	fi
	if ! cmp -s "$d/out" "$d/ref.out"; then
		fail "$name" "stdout differs from the untraced run"
		return 1
	fi
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	local prc=$?
	if [ $prc != 0 ]; then
		fail "$name" "perf script failed ($prc): $(head -2 "$d/ps.err")"
		return 1
	fi
	if grep -q "instruction trace error" "$d/ps" "$d/ps.err"; then
		fail "$name" "perf: $(grep -m1 'instruction trace error' "$d/ps" "$d/ps.err")"
		return 1
	fi
	return 0
}

check() {
	local name=$1 ev=$2
	shift 2
	rec "$name" "$ev" "$@" || return
	local d=$T/$name
	perf_branches "$d/ps" | sort -s -k1,1n >"$d/p"
	awk -F'\t' 'NF == 3' "$d/truth" | sort -s -k1,1n >"$d/t"
	local threads
	threads=$(cut -f1 "$d/t" | sort -u | wc -l)
	if [ ! -s "$d/t" ]; then
		fail "$name" "empty truth"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail "$name" "perf's branches differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t")): $(diff "$d/p" "$d/t" | head -3 | tr '\n' ' ')"
	else
		pass "$name ($(wc -l <"$d/t") branches, $threads thread(s))"
	fi
	# hwt script on the same file: the truth, and so perf's branches too
	hwt_branches "$d" | sort -s -k1,1n >"$d/h"
	if [ ! -s "$d/t" ]; then
		fail "${name}_script" "empty truth"
	elif ! cmp -s "$d/h" "$d/t"; then
		fail "${name}_script" "hwt script's branches differ from the truth ($(wc -l <"$d/h") vs $(wc -l <"$d/t")): $(diff "$d/h" "$d/t" | head -3 | tr '\n' ' ') $(head -c 200 "$d/hs.err")"
	elif ! cmp -s "$d/h" "$d/p"; then
		fail "${name}_script" "hwt script's branches differ from perf's"
	else
		pass "${name}_script ($(wc -l <"$d/h") branches, as the truth and perf)"
	fi
	rm -rf "$d"
}

DEF='intel_pt//u'
TIM='intel_pt/tsc,mtc,cyc/u'
NT='intel_pt/tsc=0,mtc=0/u'
check emu_rec_echo "$DEF" echo hello world
check emu_rec_echo_timing "$TIM" echo hello world
check emu_rec_expr_notime "$NT" expr 6 '*' 7
check emu_rec_ls "$DEF" ls -la /etc
check emu_rec_ls_timing "$TIM" ls -la /etc
check emu_rec_ls_mtc_fast 'intel_pt/tsc,mtc,mtc_period=0,cyc,cyc_thresh=1/u' ls -la /etc
check emu_rec_ls_noretcomp 'intel_pt/noretcomp/u' ls -la /etc
check emu_rec_ls_psb_small 'intel_pt/psb_period=0/u' ls -la /etc
check emu_rec_ls_psb_large 'intel_pt/psb_period=15/u' ls -la /etc
check emu_rec_sort "$DEF" sort -n lines.txt
# full mode with a 16 KiB AUX ring: the emulated CPU waits for the recorder
check emu_rec_small_ring "$DEF" -m 16K,16K ls -la /etc
check emu_rec_sed "$DEF" sed -e 's/x/y/g' lines.txt
check emu_rec_grep "$DEF" grep -c 9 lines.txt
check emu_rec_bash_signal_fork "$DEF" bash -c 'trap "echo got usr1" USR1; kill -USR1 $$; echo after; (echo subshell; exit 3); echo "sub=$?"'
check emu_rec_zstd_threads "$DEF" zstd -T2 -q -c data.txt
check emu_rec_zstd_threads_timing "$TIM" zstd -T2 -q -c data.txt
check emu_rec_perl "$DEF" perl -e 'my %h; $h{$_ % 7}++ for 1..2000; print join(",", map { "$_=$h{$_}" } sort keys %h), "\n"'
check emu_rec_gawk_libs "$DEF" gawk -M 'BEGIN { print 2^200; exit 3 }'
check emu_rec_python_thread "$DEF" /usr/bin/python3 -S -c 'import threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join()'

# Address filter on one libc function: only branches inside it appear.
filter_test() {
	local name=emu_rec_filter_getenv
	local libc=/usr/lib/x86_64-linux-gnu/libc.so.6
	local d=$T/$name
	mkdir -p "$d"
	if ! "$HWT" record -e "$DEF" --emulate --truth "$d/truth" -o "$d/perf.data" \
		--filter "filter getenv @$libc" -- ls -la / >/dev/null 2>"$d/err"; then
		fail $name "hwt record failed: $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	local sym size
	read -r sym size < <(nm -D -S "$libc" | awk '$4 ~ /^getenv(@|$)/ { print $1, $2; exit }')
	local map
	map=$(perf script -i "$d/perf.data" --show-mmap-events --no-itrace 2>/dev/null |
		grep -m1 'r-xp .*libc.so.6')
	local base pgoff
	base=$(echo "$map" | sed -n 's/.*\[\(0x[0-9a-f]*\)(.*/\1/p')
	pgoff=$(echo "$map" | sed -n 's/.*@ \(0x[0-9a-f]*\) .*/\1/p')
	if [ -z "$sym" ] || [ -z "$base" ]; then
		fail $name "cannot locate getenv ($sym) or libc's mapping ($map)"
		return
	fi
	local a b
	a=$((base + 0x$sym - pgoff))
	b=$((a + 0x$size - 1))
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	if grep -q "instruction trace error" "$d/ps" "$d/ps.err"; then
		fail $name "perf: $(grep -m1 'instruction trace error' "$d/ps" "$d/ps.err")"
		return
	fi
	perf_branches "$d/ps" >"$d/p"
	awk -F'\t' -v a=$a -v b=$b 'NF == 3 { f = strtonum($2); t = strtonum($3);
		if (f >= a && f <= b && t >= a && t <= b) print }' "$d/truth" >"$d/t"
	local outside
	outside=$(awk -F'\t' -v a=$a -v b=$b '{ f = strtonum($2);
		if (f < a || f > b) n++ } END { print n + 0 }' "$d/p")
	# branches leaving the function (calls out, returns) are its own too;
	# compare those with both ends inside exactly
	awk -F'\t' -v a=$a -v b=$b '{ f = strtonum($2); t = strtonum($3);
		if (t >= a && t <= b) print }' "$d/p" >"$d/p.in"
	mv "$d/p.in" "$d/p"
	if [ "$outside" != 0 ]; then
		fail $name "$outside branches from outside getenv: $(head -2 "$d/p" | tr '\n' ' ')"
	elif [ ! -s "$d/t" ]; then
		fail $name "no branch inside getenv in the truth"
	elif ! cmp -s "$d/p" "$d/t"; then
		fail $name "branches inside getenv differ from the truth ($(wc -l <"$d/p") vs $(wc -l <"$d/t"))"
	else
		pass "$name ($(wc -l <"$d/t") branches)"
	fi
	# hwt script: the same rule
	hwt_branches "$d" >"$d/h"
	outside=$(awk -F'\t' -v a=$a -v b=$b '{ f = strtonum($2);
		if (f < a || f > b) n++ } END { print n + 0 }' "$d/h")
	awk -F'\t' -v a=$a -v b=$b '{ f = strtonum($2); t = strtonum($3);
		if (t >= a && t <= b) print }' "$d/h" >"$d/h.in"
	if [ "$outside" != 0 ]; then
		fail ${name}_script "$outside rows from outside getenv: $(grep -v '^[0-9]' "$d/h" | head -2 | tr '\n' ' ')"
	elif [ ! -s "$d/t" ] || ! cmp -s "$d/h.in" "$d/t"; then
		fail ${name}_script "hwt script's branches inside getenv differ from the truth ($(wc -l <"$d/h.in") vs $(wc -l <"$d/t"))"
	else
		pass "${name}_script ($(wc -l <"$d/h.in") branches)"
	fi
}
filter_test

# Snapshot mode with a 64 KiB AUX ring: the ring is overwritten many times;
# what perf decodes must be exactly the last branches of the truth.
snapshot_test() {
	local name=emu_rec_snapshot
	local d=$T/$name
	mkdir -p "$d"
	if ! "$HWT" record -e "$DEF" --emulate -m 8,16 -S --truth "$d/truth" -o "$d/perf.data" \
		-- ls -la /etc >/dev/null 2>"$d/err"; then
		fail $name "hwt record failed: $(grep -v '^\[' "$d/err" | head -2)"
		return
	fi
	perf script -i "$d/perf.data" --itrace=be -F tid,ip,addr >"$d/ps" 2>"$d/ps.err"
	if grep -q "instruction trace error" "$d/ps" "$d/ps.err"; then
		fail $name "perf: $(grep -m1 'instruction trace error' "$d/ps" "$d/ps.err")"
		return
	fi
	perf_branches "$d/ps" >"$d/p"
	local n
	n=$(wc -l <"$d/p")
	awk -F'\t' 'NF == 3' "$d/truth" >"$d/t"
	if [ "$n" -lt 1000 ] || [ "$n" -ge "$(wc -l <"$d/t")" ]; then
		fail $name "expected a partial trace: $n of $(wc -l <"$d/t") branches"
	elif ! tail -n "$n" "$d/t" | cmp -s - "$d/p"; then
		fail $name "the snapshot's $n branches are not the truth's last $n"
	else
		pass "$name ($n of $(wc -l <"$d/t") branches)"
	fi
	hwt_branches "$d" >"$d/h"
	if cmp -s "$d/h" "$d/p"; then
		pass "${name}_script ($n branches, as perf)"
	else
		fail ${name}_script "hwt script's snapshot branches differ from perf's ($(wc -l <"$d/h") vs $n): $(diff "$d/h" "$d/p" | head -3 | tr '\n' ' ')"
	fi
}
snapshot_test
