#!/bin/bash
# tests/e2e/pipe_mode.sh - pipe-mode perf.data (perf record -o -, perf
# inject -o -) read by `hwt info -` from standard input.
#
#   pipe_perf_record    `perf record -e dummy -o - -- ls | hwt info -`: reads
#                       to the end (exit 0), names the event, and its
#                       threads, commands and record counts equal perf's own
#                       dump of the same bytes (perf report -D -i -)
#   pipe_inject_hwt     a hwt recording (emulated intel_pt) converted by
#                       `perf inject -i REC -o - | hwt info -`: the same
#                       events, mode, threads, trace bytes per thread, AUX and
#                       lost counts and records (minus pipe mode's own
#                       HEADER_* records) as `hwt info REC`
#   pipe_file_on_stdin  `cat REC | hwt info -` (file mode on a pipe) prints
#                       exactly what `hwt info REC` prints (but the name)
#   pipe_truncated      a pipe-mode stream cut inside a record: what was read,
#                       then exit 1 with "truncated"; not perf.data: exit 2
#   pipe_record_hwt     `hwt record -o - -- /bin/true | perf script -i -
#                       --itrace=b` prints the branches (but the pid) that
#                       perf script prints for `hwt record -o FILE` (the
#                       emulated unit is deterministic); `hwt record -o - |
#                       hwt info -` reads it as pipe mode; the program's own
#                       output went to stderr
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(cd "$B" 2>/dev/null && pwd)/hwt

if ! command -v perf >/dev/null; then
	for t in pipe_perf_record pipe_inject_hwt pipe_file_on_stdin pipe_truncated pipe_record_hwt; do
		skip $t "perf not installed (apt install linux-perf)"
	done
	exit 0
fi

# ---- perf record -o - ----
if ! perf record -q -e dummy -o - -- ls >"$T/dummy.pipe" 2>"$T/rec.err" </dev/null; then
	skip pipe_perf_record "perf record -e dummy cannot run here: $(head -1 "$T/rec.err")"
	skip pipe_truncated "no pipe-mode recording"
else
	# the live pipe
	perf record -q -e dummy -o - -- ls 2>/dev/null </dev/null | "$HWT" info - >"$T/live.out" 2>"$T/live.err"
	rc=$?
	# the same saved bytes, checked against perf's own dump of them
	"$HWT" info - <"$T/dummy.pipe" >"$T/info.out" 2>"$T/info.err"
	rc2=$?
	perf report -D -i - <"$T/dummy.pipe" >"$T/dump" 2>/dev/null
	why=
	[ $rc -eq 0 ] || why="live pipe: exit $rc: $(head -2 "$T/live.err")"
	[ -z "$why" ] && [ $rc2 -ne 0 ] && why="saved stream: exit $rc2: $(head -2 "$T/info.err")"
	[ -z "$why" ] && ! grep -q '^  dummy ' "$T/live.out" && why="live pipe: no dummy event: $(cat "$T/live.out")"
	[ -z "$why" ] && ! grep -q 'pipe mode' "$T/live.out" && why="live pipe: not read as pipe mode"
	[ -z "$why" ] && ! grep -qE 'tid [0-9]+  ls' "$T/live.out" && why="live pipe: no 'ls' thread: $(grep -A3 threads: "$T/live.out")"
	if [ -z "$why" ]; then
		# record counts by type: hwt's "records:" line vs perf's dump lines
		for pair in COMM:PERF_RECORD_COMM MMAP2:PERF_RECORD_MMAP2 EXIT:PERF_RECORD_EXIT \
			HEADER_ATTR:PERF_RECORD_ATTR HEADER_FEATURE:PERF_RECORD_FEATURE \
			THREAD_MAP:PERF_RECORD_THREAD_MAP ID_INDEX:PERF_RECORD_ID_INDEX; do
			h=$(sed -n 's/^records: *//p' "$T/info.out" | tr ' ' '\n' | grep -A1 -x "${pair%%:*}" | tail -1)
			p=$(grep -cE "\[0x[0-9a-f]+\]: ${pair#*:}([ :(]|$)" "$T/dump")
			[ "${h:-0}" = "$p" ] || { why="${pair%%:*}: hwt counts ${h:-0}, perf's dump $p"; break; }
		done
		# threads: each thread's last COMM in perf's dump is one of hwt's threads
		if [ -z "$why" ]; then
			grep -oE 'PERF_RECORD_COMM( exec)?: [^:]+:[0-9]+/[0-9]+' "$T/dump" |
				sed -E 's/.*: ([^:]+):([0-9]+)\/([0-9]+)/pid \2 tid \3  \1/' |
				awk '{ last[$2 " " $4] = $0 } END { for (k in last) print last[k] }' >"$T/comm.perf"
			while read -r l; do
				grep -qF "$l" "$T/info.out" || { why="thread '$l' (perf) missing"; break; }
			done <"$T/comm.perf"
			[ -s "$T/comm.perf" ] || why="perf's dump shows no COMM"
		fi
	fi
	if [ -z "$why" ]; then pass pipe_perf_record; else fail pipe_perf_record "$why"; fi

	# ---- truncated stream and garbage ----
	n=$(stat -c %s "$T/dummy.pipe")
	head -c $((n - 5)) "$T/dummy.pipe" | "$HWT" info - >"$T/tr.out" 2>"$T/tr.err"
	rc=$?
	printf 'not a perf.data file at all' | "$HWT" info - >/dev/null 2>"$T/garbage.err"
	rc2=$?
	if [ $rc -ne 1 ] || ! grep -q truncated "$T/tr.err" || ! grep -q '^records:' "$T/tr.out"; then
		fail pipe_truncated "cut stream: exit $rc: $(cat "$T/tr.err")"
	elif [ $rc2 -ne 2 ] || ! grep -q 'not a perf.data' "$T/garbage.err"; then
		fail pipe_truncated "garbage: exit $rc2: $(cat "$T/garbage.err")"
	else
		pass pipe_truncated
	fi
fi

# ---- a hwt recording: perf inject -o -, and cat ----
if [ ! -x "$HWT" ] || [ ! -f "$B/hwt-pt-plugin.so" ] || ! command -v qemu-x86_64 >/dev/null; then
	for t in pipe_inject_hwt pipe_file_on_stdin pipe_record_hwt; do
		skip $t "needs $B/hwt, $B/hwt-pt-plugin.so and qemu-x86_64"
	done
	exit 0
fi
if ! (cd "$T" && "$HWT" record -o rec.data -- /bin/ls >/dev/null 2>rec2.err); then
	fail pipe_inject_hwt "hwt record failed: $(grep -v '^\[' "$T/rec2.err" | head -2)"
	exit 0
fi
"$HWT" info "$T/rec.data" >"$T/file.out" 2>&1
cat "$T/rec.data" | "$HWT" info - >"$T/cat.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && diff <(sed 1d "$T/file.out") <(sed 1d "$T/cat.out") >"$T/cat.diff" &&
	sed -n 1p "$T/cat.out" | grep -q "^file: *- ($(sed -n 's/^file: .* (\([0-9]*\) bytes.*/\1/p' "$T/file.out") bytes of records)$"; then
	pass pipe_file_on_stdin
else
	fail pipe_file_on_stdin "exit $rc; $(head -5 "$T/cat.diff")"
fi

# ---- hwt record -o - ----
(cd "$T" && "$HWT" record -o true.data -- /bin/true 2>/dev/null)
perf script -i "$T/true.data" --itrace=b 2>/dev/null | awk '{ $2 = ""; print }' >"$T/true.file"
(cd "$T" && "$HWT" record -o - -- /bin/echo pipe-out 2>"$T/echo.err") | "$HWT" info - >"$T/echo.out" 2>&1
rc=$?
(cd "$T" && "$HWT" record -o - -- /bin/true 2>/dev/null) | perf script -i - --itrace=b 2>/dev/null |
	awk '{ $2 = ""; print }' >"$T/true.pipe"
if [ $rc -ne 0 ] || ! grep -q 'pipe mode' "$T/echo.out" || ! grep -qE 'tid [0-9]+  echo' "$T/echo.out"; then
	fail pipe_record_hwt "hwt record -o - | hwt info -: exit $rc: $(head -3 "$T/echo.out")"
elif ! grep -qx pipe-out "$T/echo.err"; then
	fail pipe_record_hwt "the program's output is not on stderr: $(head -3 "$T/echo.err")"
elif [ "$(wc -l <"$T/true.file")" -lt 100 ]; then
	fail pipe_record_hwt "perf script of the file: $(wc -l <"$T/true.file") lines"
elif ! diff "$T/true.file" "$T/true.pipe" >"$T/true.diff"; then
	fail pipe_record_hwt "perf script differs, file vs pipe: $(head -4 "$T/true.diff" | tr '\n' '|')"
else
	pass pipe_record_hwt
fi

if ! perf inject -i "$T/rec.data" -o - 2>"$T/inj.err" | "$HWT" info - >"$T/inj.out" 2>"$T/inj2.err"; then
	fail pipe_inject_hwt "perf inject | hwt info -: $(head -2 "$T/inj.err" "$T/inj2.err")"
	exit 0
fi
# What perf inject writes anew (its own version, command line, PMU names of
# this machine, the HEADER_* records of pipe mode) is left out.
norm() {
	grep -vE '^(file|writer|command|host|cpu):' "$1" |
		sed -E -e 's/ type ([0-9]+) \([^)]*\)/ type \1/' \
			-e '/^records:/{s/ HEADER_(ATTR|FEATURE|BUILD_ID|TRACING_DATA|EVENT_TYPE) [0-9]+//g;s/ FINISHED_INIT [0-9]+//}'
}
if ! grep -q 'pipe mode' "$T/inj.out"; then
	fail pipe_inject_hwt "perf inject's output not read as pipe mode: $(head -1 "$T/inj.out")"
elif ! grep -q 'AUXTRACE [1-9]' "$T/inj.out"; then
	fail pipe_inject_hwt "no AUXTRACE records: $(grep records: "$T/inj.out")"
elif ! diff <(norm "$T/file.out") <(norm "$T/inj.out") >"$T/inj.diff"; then
	fail pipe_inject_hwt "differs from hwt info REC: $(head -6 "$T/inj.diff" | tr '\n' '|')"
else
	pass pipe_inject_hwt
fi
