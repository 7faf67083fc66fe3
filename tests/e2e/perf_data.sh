#!/bin/bash
# tests/e2e/perf_data.sh - perf.data files written by libhwt, checked by
# Linux perf (the oracle), and `hwt info` on perf's own files.
#
#   sideband_mmap_task   perf script --show-mmap-events --show-task-events
#                        lists exactly the COMM/MMAP2/EXIT records written
#   intel_pt_branches    a hand-encoded Intel PT stream (hwt's packet
#                        encoder) for progs/pt_target.S, written as a
#                        per-thread intel_pt perf.data: perf script
#                        --itrace=be reports exactly the encoded branches
#                        and no decode error
#   intel_pt_percpu_tsc  the same as a per-CPU recording with TSC/TIME_CONV:
#                        perf also gives the right tid, CPU and times
#   info_perf_dummy      hwt info on `perf record -e dummy -- /bin/true`:
#                        its COMM, and --mmaps equals perf's MMAP2 list
#   info_perf_migrate    the same list when the records are out of time
#                        order in the file (the process moved between CPUs)
#   info_hwt_pt          hwt info on the intel_pt file: mode, thread, bytes
#   info_errors          missing / truncated / garbage file: exit 2 + message
set -u
. "$(dirname "$0")/lib.bash"
HWT=$B/hwt

if ! command -v perf >/dev/null; then
	for t in sideband_mmap_task intel_pt_branches info_perf_dummy info_perf_migrate; do skip $t "no perf"; done
	exit 0
fi

if ! hwt_cc "$T/pt_gen" tests/e2e/progs/pt_gen.c 2>"$T/cc.err"; then
	fail build_pt_gen "$(head -5 "$T/cc.err")"
	exit 1
fi

# ---- (a) sideband records round-trip through perf ----
cat >"$T/spec" <<'EOF'
comm 100 100 hello 1 1000
mmap2 100 100 0x400000 0x1000 0 5 /bin/true 2000
comm 100 101 worker 0 2500
mmap2 100 101 0x7f0000001000 0x3000 0x2000 7 /usr/lib/libfoo.so 3000
mmap2 100 101 0x7f0000100000 0x21000 0 1 /tmp/data.bin 3500
exit 100 1 101 100 4000
exit 100 1 100 1 5000
EOF
if ! "$T/pt_gen" sideband "$T/sb.data" <"$T/spec" 2>"$T/err"; then
	fail sideband_mmap_task "pt_gen: $(cat "$T/err")"
else
	# Expected, in perf's words, from the spec.
	awk '
	function prot(p) { return ((p%2)?"r":"-") (((int(p/2))%2)?"w":"-") (((int(p/4))%2)?"x":"-") "p" }
	function t(ns) { return sprintf("%d.%06d", int(ns / 1e9), int((ns % 1e9) / 1000)) }
	$1=="comm" { printf "%s COMM%s %s:%s/%s\n", t($6), ($5?" exec":""), $4, $2, $3 }
	$1=="mmap2" { printf "%s MMAP2 %s/%s: [%s(%s) @ %s] %s %s\n", t($9), $2, $3, $4, $5, $6, prot($7), $8 }
	$1=="exit" { printf "%s EXIT(%s:%s):(%s:%s)\n", t($6), $2, $4, $3, $5 }
	' "$T/spec" >"$T/exp"
	perf script -i "$T/sb.data" --show-mmap-events --show-task-events >"$T/out" 2>"$T/perr"
	# "  hello 100 [000] 0.000001: PERF_RECORD_COMM exec: hello:100/100"
	sed -E -e 's/^.* ([0-9]+\.[0-9]+): PERF_RECORD_/\1 /' \
		-e 's/^([0-9.]+) COMM( exec)?: /\1 COMM\2 /' \
		-e 's/ @ ([0-9a-fx]+) [0-9a-f]+:[0-9a-f]+ [0-9]+ [0-9]+\]: / @ \1] /' \
		-e 's/@ 0\]/@ 0x0]/' "$T/out" | sed -e 's/@ 0x0\]/@ 0]/' >"$T/got"
	sed -i -e 's/@ 0\]/@ 0]/' "$T/exp"
	if diff -u "$T/exp" "$T/got" >"$T/diff"; then
		pass sideband_mmap_task
	else
		fail sideband_mmap_task "perf script disagrees with what was written: $(head -20 "$T/diff" | tr '\n' '|') stderr: $(head -3 "$T/perr" | tr '\n' '|')"
	fi
fi

# ---- (b) hand-encoded Intel PT, decoded by perf ----
build_target() {
	[ -x "$T/pt_target" ] && return 0
	cc -nostdlib -static -no-pie -o "$T/pt_target" tests/e2e/progs/pt_target.S 2>"$T/err" || return 1
	"$T/pt_target"
}

# pt_test NAME MODE(pt|ptcpu) OUT: MODE's file must decode to the encoded branches.
pt_test() {
	local name=$1 mode=$2 out=$3
	if ! build_target; then
		skip $name "cannot build/run the x86-64 test program: $(head -2 "$T/err")"
		return
	fi
	local sym addr
	declare -A A
	while read -r addr _ sym; do A[$sym]=$((16#$addr)); done < <(nm "$T/pt_target")
	# The executable LOAD segment: offset vaddr filesz (page-aligned mapping).
	read -r off vaddr fsz < <(readelf -lW "$T/pt_target" |
		awk '$1=="LOAD" && / R?W?E / { print $2, $3, $5 }')
	local maddr=$(( vaddr & ~0xfff )) mpg=$(( off & ~0xfff ))
	local mlen=$(( ((vaddr + fsz + 0xfff) & ~0xfff) - maddr ))
	# pmu type: the real one if this machine has intel_pt, else an unused one.
	local ptype=50
	[ -r /sys/bus/event_source/devices/intel_pt/type ] &&
		ptype=$(cat /sys/bus/event_source/devices/intel_pt/type)
	if ! "$T/pt_gen" $mode "$out" "$T/pt_target" $maddr $mlen $mpg \
		${A[pt_start]} ${A[pt_tail]} $ptype 2>"$T/err"; then
		fail $name "pt_gen: $(cat "$T/err")"
		return
	fi
	# What the encoded trace means for pt_target.S (call rel32 is 5 bytes).
	# Per-CPU: tid 4242 on CPU 1, every branch at TSC 5000 == 5000 ns.
	local pre= fields=hw:ip,addr,flags
	[ $mode = ptcpu ] && pre='4242 [001] 0.000005: ' fields=hw:tid,cpu,time,ip,addr,flags
	local ret_to=$(( A[pt_call] + 5 ))
	{
		printf 'tr strt 0 => %x\n' ${A[pt_start]}
		for i in 1 2 3; do
			printf 'call %x => %x\n' ${A[pt_call]} ${A[pt_f]}
			printf 'return %x => %x\n' ${A[pt_f]} $ret_to
			[ $i -lt 3 ] && printf 'jcc %x => %x\n' ${A[pt_jnz]} ${A[pt_loop]}
		done
		printf 'jmp %x => %x\n' ${A[pt_jmp]} ${A[pt_tail]}
		printf 'tr end syscall %x => 0\n' ${A[pt_syscall]}
	} | sed "s/^/$pre/" >"$T/pt.exp"
	perf script -i "$out" --itrace=be -F $fields >"$T/pt.out" 2>"$T/pt.err"
	local rc=$?
	sed -E 's/^ +//; s/ +/ /g; s/ $//' "$T/pt.out" >"$T/pt.got"
	if [ $rc -ne 0 ]; then
		fail $name "perf script exited $rc: $(head -3 "$T/pt.err" | tr '\n' '|')"
	elif grep -qi error "$T/pt.out" "$T/pt.err"; then
		fail $name "decode errors: $(grep -i error "$T/pt.out" "$T/pt.err" | head -3 | tr '\n' '|')"
	elif ! diff -u "$T/pt.exp" "$T/pt.got" >"$T/diff"; then
		fail $name "perf's branches differ from the encoded ones: $(head -30 "$T/diff" | tr '\n' '|')"
	else
		# Instructions: mov; 3 x (call, ret, dec, jnz); lea, jmp; mov, xor, syscall.
		local ni
		ni=$(perf script -i "$out" --itrace=i1i -F hw:ip 2>/dev/null | wc -l)
		if [ "$ni" -ne 18 ]; then
			fail $name "perf decodes $ni instructions, the program executes 18 in the trace"
		else
			pass $name
		fi
	fi
}
pt_test intel_pt_branches pt "$T/pt.data"
pt_test intel_pt_percpu_tsc ptcpu "$T/ptcpu.data"

# perf script --show-mmap-events output FILE: its MMAP2 records as
# hwt info --mmaps prints them, in perf's (time) order
perf_mmaps() {
	sed -nE 's/.*PERF_RECORD_MMAP2 ([0-9]+)\/[0-9]+: \[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ ([0-9a-fx]+) .*\]: [rwxps-]+ (.*)$/\1 \2 \3 \4 \5/p' "$1" |
		while read -r pid start len pgoff path; do
			[ "$pgoff" = 0 ] && pgoff=0x0
			printf '%s 0x%x 0x%x %s %s\n' $pid $((start)) $((start + len)) $pgoff "$path"
		done
}

# ---- (c) hwt info on perf's own recording ----
if ! perf record -q -o "$T/dummy.data" -e dummy -- /bin/true >"$T/rec.out" 2>&1; then
	skip info_perf_dummy "perf record cannot run here: $(head -2 "$T/rec.out" | tr '\n' '|')"
else
	"$HWT" info "$T/dummy.data" >"$T/info.out" 2>"$T/info.err"
	rc=$?
	# Oracle: perf's own view of the COMM exec and the MMAP2 records.
	perf script -i "$T/dummy.data" --show-mmap-events --show-task-events >"$T/pd.out" 2>/dev/null
	comm=$(sed -nE 's/.*PERF_RECORD_COMM exec: ([^:]+):([0-9]+)\/([0-9]+).*/pid \2 tid \3  \1/p' "$T/pd.out" | head -1)
	perf_mmaps "$T/pd.out" >"$T/mm.exp"
	"$HWT" info --mmaps "$T/dummy.data" 2>&1 | awk '$1 != -1' >"$T/mm.got"
	if [ $rc -ne 0 ]; then
		fail info_perf_dummy "hwt info exited $rc: $(head -3 "$T/info.err")"
	elif [ -z "$comm" ] || ! grep -qF "$comm" "$T/info.out"; then
		fail info_perf_dummy "thread line '$comm' (from perf script) not in hwt info output: $(grep -A3 threads "$T/info.out" | tr '\n' '|')"
	elif [ ! -s "$T/mm.exp" ] || ! diff -u "$T/mm.exp" "$T/mm.got" >"$T/diff"; then
		fail info_perf_dummy "hwt info --mmaps differs from perf's MMAP2 list: $(head -20 "$T/diff" | tr '\n' '|')"
	else
		pass info_perf_dummy
	fi
fi

# ---- (c2) the same when the records are out of time order in the file:
# perf record runs on CPU 1, its child moves to CPU 0 before it execs,
# so the exec's MMAP2 records (CPU 0's buffer) come first in the file ----
if [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null; then
	skip info_perf_migrate "needs 2 CPUs and taskset"
elif ! taskset -c 1 perf record -q -o "$T/mig.data" -e dummy -- taskset -c 0 /bin/true >"$T/mig.out" 2>&1; then
	skip info_perf_migrate "perf record cannot run here: $(head -2 "$T/mig.out" | tr '\n' '|')"
else
	perf script -i "$T/mig.data" --show-mmap-events >"$T/pm.out" 2>/dev/null
	perf_mmaps "$T/pm.out" >"$T/mig.exp"
	"$HWT" info --mmaps "$T/mig.data" 2>&1 | awk '$1 != -1' >"$T/mig.got"
	if ! grep -q /usr/bin/true "$T/mig.exp" || ! grep -q taskset "$T/mig.exp"; then
		fail info_perf_migrate "perf script lists no MMAP2 of taskset and true: $(head -5 "$T/pm.out" | tr '\n' '|')"
	elif ! diff -u "$T/mig.exp" "$T/mig.got" >"$T/diff"; then
		fail info_perf_migrate "hwt info --mmaps is not in perf's (time) order: $(head -20 "$T/diff" | tr '\n' '|')"
	else
		pass info_perf_migrate
	fi
fi

# ---- (d) hwt info on hwt's intel_pt file ----
if [ -f "$T/pt.data" ]; then
	"$HWT" info "$T/pt.data" >"$T/pi.out" 2>&1
	n=$(perf script -i "$T/pt.data" -D 2>/dev/null | sed -nE 's/.*PERF_RECORD_AUXTRACE size: (0x[0-9a-f]+).*/\1/p' | head -1)
	if grep -q '^mode: *per-thread, intel_pt, full trace' "$T/pi.out" &&
		grep -q '^  pid 4242 tid 4242  pt_target (exited)' "$T/pi.out" &&
		[ -n "$n" ] && grep -q "^  tid 4242: $((n)) bytes in 1 records" "$T/pi.out"; then
		pass info_hwt_pt
	else
		fail info_hwt_pt "unexpected summary (perf says AUXTRACE size $n): $(tr '\n' '|' <"$T/pi.out")"
	fi
fi
if [ -f "$T/ptcpu.data" ]; then
	"$HWT" info "$T/ptcpu.data" >"$T/pc.out" 2>&1
	n=$(perf script -i "$T/ptcpu.data" -D 2>/dev/null | sed -nE 's/.*PERF_RECORD_AUXTRACE size: (0x[0-9a-f]+).*cpu: ([0-9]+).*/\1 \2/p' | head -1)
	if grep -q '^mode: *per-CPU, intel_pt, full trace' "$T/pc.out" &&
		[ -n "$n" ] && grep -q "^  cpu ${n#* }: $((${n% *})) bytes in 1 records" "$T/pc.out"; then
		pass info_hwt_pt_percpu
	else
		fail info_hwt_pt_percpu "unexpected summary (perf says AUXTRACE size/cpu $n): $(tr '\n' '|' <"$T/pc.out")"
	fi
fi

# ---- (e) errors: exit 2 and a message naming the file ----
ok=1 why=
"$HWT" info "$T/nonexistent.data" >/dev/null 2>"$T/e1"
[ $? -eq 2 ] && grep -q "nonexistent.data" "$T/e1" || { ok=0; why="missing file: $(cat "$T/e1")"; }
if [ -f "$T/pt.data" ]; then
	head -c 300 "$T/pt.data" >"$T/trunc.data"
	"$HWT" info "$T/trunc.data" >/dev/null 2>"$T/e2"
	[ $? -eq 2 ] && grep -q "truncated" "$T/e2" || { ok=0; why="truncated file: $(cat "$T/e2")"; }
fi
head -c 4096 /dev/urandom >"$T/garbage.data"
"$HWT" info "$T/garbage.data" >/dev/null 2>"$T/e3"
[ $? -eq 2 ] && grep -q "not a perf.data" "$T/e3" || { ok=0; why="garbage file: $(cat "$T/e3")"; }
"$HWT" info --bogus >/dev/null 2>&1
[ $? -eq 2 ] || { ok=0; why="bad option did not exit 2"; }
[ $ok = 1 ] && pass info_errors || fail info_errors "$why"
exit 0
