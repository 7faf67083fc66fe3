#!/bin/bash
# tests/e2e/emu_plugin.sh - the emulated Intel PT unit (QEMU plugin) on real
# programs, checked against two oracles:
#   - libipt (tests/e2e/progs/emu_check.c) decodes each thread's raw PT
#     stream (plugin debug arg raw=) with the program's image (raw.maps)
#     and must report zero decode errors and exactly the taken branches of
#     the plugin's ground truth (truth=, from QEMU's executed blocks, not
#     from the packet generator), per thread;
#   - an untraced run: the traced program's stdout and exit status equal.
# Timing variants (tsc/mtc/cyc on and off), return compression, PSB
# periods, a signal handler + forked subshell (bash), threads (zstd), an
# address filter.  More programs go through hwt record in emu_record.sh.
set -u
. "$(dirname "$0")/lib.bash"
PLUGIN=$(realpath -m "$B/hwt-pt-plugin.so")

QEMU=$(command -v qemu-x86_64)
if [ -z "$QEMU" ]; then
	skip emu_plugin "qemu-x86_64 not installed (apt install qemu-user)"
	exit 0
fi
if [ ! -f "$PLUGIN" ]; then
	fail emu_plugin "$PLUGIN not built"
	exit 0
fi
if ! cc -std=c11 -O2 -o "$T/emu_check" tests/e2e/progs/emu_check.c -lipt 2>"$T/cc.err"; then
	fail emu_plugin_build_check "$(head -3 "$T/cc.err")"
	exit 0
fi
export LC_ALL=C
head -c 200000 /dev/zero | tr '\0' 'a' | fold -w 60 >"$T/data.txt"
seq 1 3000 | sed 's/1/x/g' >"$T/lines.txt"

# check NAME ARGS CMD...: run traced and untraced, compare everything.
check() {
	local name=$1 args=$2
	shift 2
	local d=$T/$name
	mkdir -p "$d"
	local exe
	exe=$(type -P "$1")
	(cd "$T" && "$@" >"$d/ref.out" 2>/dev/null)
	local ref_rc=$?
	(cd "$T" && "$QEMU" -plugin "$PLUGIN,raw=$d/raw,truth=$d/truth$args" -- "$exe" "${@:2}" \
		>"$d/out" 2>"$d/err")
	local rc=$?
	if [ $rc != $ref_rc ]; then
		fail "$name" "exit status $rc, untraced $ref_rc ($(head -2 "$d/err"))"
		return
	fi
	if ! cmp -s "$d/out" "$d/ref.out"; then
		fail "$name" "stdout differs from the untraced run"
		return
	fi
	local n=0 bad=""
	for r in "$d"/raw.[0-9]*.[0-9]*; do
		[ -e "$r" ] || continue
		local pid tid pids
		tid=${r##*.}
		pid=${r%.*}
		pid=${pid##*.}
		# this process and its ancestors (a forked child inherits the image)
		pids=$pid
		local p=$pid
		while :; do
			p=$(awk -v p="$p" '$1 == p && $3 != 0 && $3 != p { print $3; exit }' "$d/raw.tasks")
			[ -n "$p" ] || break
			pids="$pids,$p"
		done
		"$T/emu_check" "$r" "$d/raw.maps" "$pids" >"$d/dec.$tid" 2>"$d/derr.$tid"
		if [ -s "$d/derr.$tid" ]; then
			bad="tid $tid: libipt: $(head -1 "$d/derr.$tid")"
			break
		fi
		awk -F'\t' -v t="$tid" '$1 == t && NF == 3 { print $2 "\t" $3 }' "$d/truth" >"$d/tr.$tid"
		if ! cmp -s "$d/dec.$tid" "$d/tr.$tid"; then
			bad="tid $tid: decoded branches differ from the truth ($(wc -l <"$d/dec.$tid") vs $(wc -l <"$d/tr.$tid")): $(diff "$d/dec.$tid" "$d/tr.$tid" | head -3 | tr '\n' ' ')"
			break
		fi
		n=$((n + $(wc -l <"$d/tr.$tid")))
	done
	if [ -n "$bad" ]; then
		fail "$name" "$bad"
	elif [ $n = 0 ]; then
		fail "$name" "no branches traced"
	else
		pass "$name"
	fi
	rm -rf "$d"
}

# check_filter: only the branches of one function may appear.
check_filter() {
	local name=emu_filter_function
	local exe=/usr/bin/ls
	local d=$T/$name
	mkdir -p "$d"
	# range of a function of ls: the biggest FUNC symbol of libc is not
	# exported by ls, so take the entry function of the dynamic loader's
	# own image: use a libc symbol through the truth instead: run once,
	# pick the most frequent branch source page of the main executable.
	"$QEMU" -plugin "$PLUGIN,truth=$d/t0" -- "$exe" -la "$T" >/dev/null 2>&1
	local lo
	lo=$(awk -F'\t' 'NF == 3 && $2 ~ /^0x40000/ { c[$2]++ } END { for (k in c) print c[k], k }' \
		"$d/t0" | sort -rn | head -1 | cut -d' ' -f2)
	if [ -z "$lo" ]; then
		fail $name "no branch in the executable"
		return
	fi
	# a 256-byte window around the hottest branch
	local a b
	a=$(printf '0x%x' $(((lo & ~0xff))))
	b=$(printf '0x%x' $(((lo & ~0xff) + 0xff)))
	"$QEMU" -plugin "$PLUGIN,raw=$d/raw,truth=$d/truth,filter=filter $a/256" -- "$exe" -la "$T" \
		>/dev/null 2>&1
	local r
	r=$(ls "$d"/raw.[0-9]*.[0-9]* | head -1)
	local tid=${r##*.} pid=${r%.*}
	pid=${pid##*.}
	"$T/emu_check" "$r" "$d/raw.maps" "$pid" >"$d/dec" 2>"$d/derr"
	if [ -s "$d/derr" ]; then
		fail $name "libipt: $(head -1 "$d/derr")"
		return
	fi
	awk -F'\t' -v a=$((a)) -v b=$((b)) 'NF == 3 { f = strtonum($2); t = strtonum($3);
		if (f >= a && f <= b && t >= a && t <= b) print $2 "\t" $3 }' "$d/truth" >"$d/tr"
	# decoded: branches with both ends inside (entries into and out of
	# the range are trace begin/end)
	awk -F'\t' -v a=$((a)) -v b=$((b)) '{ f = strtonum($1); t = strtonum($2);
		if (f >= a && f <= b && t >= a && t <= b) print }' "$d/dec" >"$d/dec.in"
	local outside
	outside=$(awk -F'\t' -v a=$((a)) -v b=$((b)) '{ f = strtonum($1);
		if (f < a || f > b) n++ } END { print n + 0 }' "$d/dec")
	if [ "$outside" != 0 ]; then
		fail $name "$outside decoded branches from outside $a-$b"
	elif [ ! -s "$d/tr" ]; then
		fail $name "no branches inside $a-$b"
	elif ! cmp -s "$d/dec.in" "$d/tr"; then
		fail $name "branches inside $a-$b differ from the truth ($(wc -l <"$d/dec.in") vs $(wc -l <"$d/tr"))"
	else
		pass $name
	fi
}

check emu_echo "" echo hello world
check emu_ls "" ls -la /etc
check emu_ls_noretcomp ",noretcomp=1" ls -la /etc
check emu_ls_psb_small ",psb_period=0" ls -la /etc
check emu_ls_psb_large ",psb_period=15" ls -la /etc
check emu_ls_notiming ",tsc=0,mtc=0" ls -la /etc
check emu_ls_cyc ",cyc=1,mtc_period=0" ls -la /etc
check emu_bash_signal_fork "" bash -c 'trap "echo got usr1" USR1; kill -USR1 $$; echo after; (echo subshell; exit 3); echo "sub=$?"'
check emu_zstd_threads "" zstd -T2 -q -c data.txt
check_filter

# Same program, same input: the same trace bytes (time comes from the guest
# instruction count, never from the host clock).  The input includes what
# the guest reads of the host: the same AT_RANDOM/getrandom bytes
# (QEMU_RAND_SEED), and sort -S (without it GNU sort sizes its buffer from
# sysinfo()'s free RAM, and one branch of its main follows whether that is
# below 3/4 of the total; see emu_fastpath.sh).
det() {
	local d=$T/det
	mkdir -p "$d/1" "$d/2"
	for i in 1 2; do
		QEMU_RAND_SEED=1 "$QEMU" -plugin "$PLUGIN,raw=$d/$i/raw" -- "$(type -P sort)" -n -S 8M "$T/lines.txt" >/dev/null 2>&1
	done
	local a b
	a=$(ls "$d"/1/raw.[0-9]*.[0-9]* 2>/dev/null | head -1)
	b=$(ls "$d"/2/raw.[0-9]*.[0-9]* 2>/dev/null | head -1)
	if [ -z "$a" ] || [ -z "$b" ] || [ ! -s "$a" ]; then
		fail emu_deterministic "no trace written"
	elif ! cmp -s "$a" "$b"; then
		fail emu_deterministic "two runs of sort gave different trace bytes"
	else
		pass emu_deterministic
	fi
}
det
