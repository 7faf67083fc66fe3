#!/bin/bash
# tests/e2e/record_dummy.sh - `hwt record -e dummy` (sideband only: runs on
# every machine) checked with Linux perf as the oracle.
#
#   cmd_sideband      hwt record -e dummy -- /bin/ls: perf script reads the
#                     file; its COMM exec, EXIT and the MMAP2 list (size,
#                     pgoff, prot, path) equal those of perf's own
#                     `perf record -e dummy -- /bin/ls`
#   attach_pid        -p PID of a running `sleep`: COMM, MMAP2 of every
#                     executable mapping in /proc/PID/maps, and its EXIT
#   attach_tid        the same with -t TID
#   exit_status       the program's exit status; 128+N when killed by N
#   stdio_env_cwd     the program keeps stdin/stdout, environment and cwd
#   output_mode_old   the file is 0600; an existing one becomes FILE.old
#   errors_before_run command not found / unwritable output: one line,
#                     exit 2, the program never ran
#   sigint_complete   SIGINT during a recording: status 130 and a file perf
#                     reads completely (COMM and EXIT of the program)
#   cpu_mode          -a (root) records context switches, or without the
#                     privilege fails with a message naming perf_event_paranoid
set -u
. "$(dirname "$0")/lib.bash"
HWT=$PWD/$B/hwt

require record_dummy perf
if ! perf record -q -e dummy -o "$T/probe.data" -- true >/dev/null 2>&1; then
	skip record_dummy "perf cannot record a dummy event here"
	exit 0
fi
PS() { perf script -i "$1" --show-mmap-events --show-task-events "${@:2}" 2>/dev/null; }
# "(size) @ pgoff ... prot path" of every MMAP2, sorted
mmaps() { PS "$1" | grep 'PERF_RECORD_MMAP2' | sed -E 's/.*: \[0x[0-9a-f]+(\(0x[0-9a-f]+\)) @ (0x[0-9a-f]+|0) [^]]*\]: (\S+) (.*)/\1 @ \2 \3 \4/' | sort; }

# --- cmd_sideband
perf record -q -e dummy -o "$T/perf.data" -- /bin/ls / >/dev/null 2>&1
"$HWT" record -e dummy -o "$T/hwt.data" -- /bin/ls / >/dev/null 2>"$T/err"
rc=$?
mh=$(mmaps "$T/hwt.data")
mp=$(mmaps "$T/perf.data")
comm=$(PS "$T/hwt.data" | grep -c 'PERF_RECORD_COMM exec: ls:')
pid=$(PS "$T/hwt.data" | grep 'PERF_RECORD_COMM exec: ls:' | head -1 | sed -E 's/.*ls:([0-9]+)\/.*/\1/')
ex=$(PS "$T/hwt.data" | grep -c "PERF_RECORD_EXIT($pid:$pid)")
if [ $rc -ne 0 ]; then
	fail cmd_sideband "exit $rc: $(cat "$T/err")"
elif [ -z "$mh" ] || [ "$mh" != "$mp" ]; then
	fail cmd_sideband "MMAP2 differ from perf's: hwt [$mh] perf [$mp]"
elif ! grep -q '/usr/bin/ls\|/bin/ls' <<<"$mh" || ! grep -q 'libc\.so' <<<"$mh" || ! grep -q 'ld-linux' <<<"$mh"; then
	fail cmd_sideband "no MMAP2 for ls, ld.so and libc: $mh"
elif [ "$comm" -ne 1 ] || [ "$ex" -ne 1 ]; then
	fail cmd_sideband "COMM exec $comm, EXIT $ex (want 1, 1)"
elif ! grep -q 'hwt record: Wrote .* streams\?, .* lost 0, truncated 0' "$T/err"; then
	fail cmd_sideband "no summary line: $(cat "$T/err")"
else
	pass cmd_sideband
fi

# --- attach_pid / attach_tid
attach() {
	local name=$1 flag=$2
	sleep 1.5 &
	local sp=$!
	sleep 0.3
	local want
	want=$(awk '$2 ~ /x/ && $6 != "" {print $6}' /proc/$sp/maps | sort -u)
	"$HWT" record -e dummy -o "$T/$name.data" $flag $sp 2>"$T/err"
	local rc=$?
	wait $sp
	local got
	got=$(PS "$T/$name.data" | grep "PERF_RECORD_MMAP2 $sp/$sp" | awk '{print $NF}' | sort -u)
	local c e
	c=$(PS "$T/$name.data" | grep -c "PERF_RECORD_COMM: sleep:$sp/$sp")
	e=$(PS "$T/$name.data" | grep -c "PERF_RECORD_EXIT($sp:$sp)")
	if [ $rc -ne 0 ]; then
		fail $name "exit $rc: $(cat "$T/err")"
	elif [ -z "$want" ] || [ "$got" != "$want" ]; then
		fail $name "MMAP2 paths [$got] != /proc maps [$want]"
	elif [ "$c" -ne 1 ] || [ "$e" -ne 1 ]; then
		fail $name "COMM $c EXIT $e (want 1, 1)"
	else
		pass $name
	fi
}
attach attach_pid -p
attach attach_tid -t

# --- exit_status
"$HWT" record -e dummy -o "$T/x.data" -- sh -c 'exit 7' 2>/dev/null
r1=$?
"$HWT" record -e dummy -o "$T/x.data" -- sh -c 'kill -TERM $$' 2>/dev/null
r2=$?
"$HWT" record -e dummy -o "$T/x.data" -- true 2>/dev/null
r3=$?
if [ $r1 -eq 7 ] && [ $r2 -eq 143 ] && [ $r3 -eq 0 ]; then
	pass exit_status
else
	fail exit_status "got $r1 $r2 $r3, want 7 143 0"
fi

# --- stdio_env_cwd
mkdir -p "$T/wd"
out=$(cd "$T/wd" && echo hello | HWT_TEST_VAR=xyz "$HWT" record -e dummy -o "$T/s.data" -- \
	sh -c 'read a; echo "$a $HWT_TEST_VAR $(pwd)"; echo err >&2' 2>"$T/err2")
if [ "$out" = "hello xyz $T/wd" ] && grep -qx err "$T/err2"; then
	pass stdio_env_cwd
else
	fail stdio_env_cwd "stdout '$out', stderr '$(head -2 "$T/err2")'"
fi

# --- output_mode_old
rm -f "$T/m.data" "$T/m.data.old"
"$HWT" record -e dummy -o "$T/m.data" -- true 2>/dev/null
ino1=$(stat -c %i "$T/m.data")
"$HWT" record -e dummy -o "$T/m.data" -- true 2>/dev/null
mode=$(stat -c %a "$T/m.data")
ino_old=$(stat -c %i "$T/m.data.old" 2>/dev/null)
if [ "$mode" = 600 ] && [ "$ino_old" = "$ino1" ] && PS "$T/m.data.old" | grep -q COMM; then
	pass output_mode_old
else
	fail output_mode_old "mode $mode, old inode '$ino_old' vs $ino1"
fi

# --- errors_before_run
mkdir -p "$T/nf"
( cd "$T/nf" && "$HWT" record -e dummy -- no-such-cmd-hwt 2>"$T/e1" )
r1=$?
"$HWT" record -e dummy -o /proc/hwt-no/x.data -- touch "$T/ran" 2>"$T/e2"
r2=$?
if [ $r1 -eq 2 ] && [ $r2 -eq 2 ] && [ ! -e "$T/ran" ] && [ ! -e "$T/nf/hwt.data" ] &&
	[ "$(wc -l <"$T/e1")" -eq 1 ] && [ "$(wc -l <"$T/e2")" -eq 1 ] &&
	grep -q 'not found' "$T/e1" && grep -q "cannot write '/proc/hwt-no/x.data'" "$T/e2"; then
	pass errors_before_run
else
	fail errors_before_run "rc $r1 $r2, msgs: $(cat "$T/e1" "$T/e2")"
fi

# --- sigint_complete
"$HWT" record -e dummy -o "$T/i.data" -- sleep 20 2>/dev/null &
hp=$!
sleep 0.5
kill -INT $hp
wait $hp
rc=$?
c=$(PS "$T/i.data" | grep -c 'PERF_RECORD_COMM exec: sleep:')
e=$(PS "$T/i.data" | grep -c 'PERF_RECORD_EXIT')
if [ $rc -eq 130 ] && [ "$c" -eq 1 ] && [ "$e" -ge 1 ] && perf script -i "$T/i.data" >/dev/null 2>&1; then
	pass sigint_complete
else
	fail sigint_complete "rc $rc, COMM $c, EXIT $e"
fi

# --- cpu_mode
par=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ] || [ "$par" -le 0 ]; then
	"$HWT" record -e dummy -a -o "$T/a.data" -- sleep 0.2 2>"$T/err"
	rc=$?
	sw=$(perf script -i "$T/a.data" --show-switch-events 2>/dev/null | grep -c PERF_RECORD_SWITCH)
	if [ $rc -eq 0 ] && [ "$sw" -gt 0 ]; then
		pass cpu_mode
	else
		fail cpu_mode "rc $rc, $sw switch records: $(cat "$T/err")"
	fi
else
	"$HWT" record -e dummy -a -o "$T/a.data" -- true 2>"$T/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q 'perf_event_paranoid' "$T/err"; then
		pass cpu_mode
	else
		fail cpu_mode "rc $rc: $(cat "$T/err")"
	fi
fi
