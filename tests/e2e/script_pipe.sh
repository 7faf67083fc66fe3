#!/bin/bash
# tests/e2e/script_pipe.sh - hwt script / hwt report on pipe-mode perf.data
# read from standard input: the recording decoder reads the records once,
# front to back, so a stream decodes exactly as the file does.
#
#   script_pipe_inject  a hwt recording (emulated intel_pt, per-thread)
#                       converted by `perf inject -i REC -o -` (pipe mode)
#                       and piped into `hwt script -i -`: --format tsv,
#                       --insn and --calls output, and `hwt report -i -`,
#                       byte for byte what they print on REC itself (the
#                       oracle: the file-mode decoder, itself checked
#                       against the emulator's truth by script_flow)
#   script_pipe_stdin   `cat REC | hwt script -i -` (file mode on a pipe):
#                       the same as on REC
set -u
. "$(dirname "$0")/lib.bash"
H=$B/hwt

if ! command -v qemu-x86_64 >/dev/null || [ ! -f "$B/hwt-pt-plugin.so" ]; then
	skip script_pipe_inject "no qemu-x86_64 or no $B/hwt-pt-plugin.so"
	skip script_pipe_stdin "no qemu-x86_64 or no $B/hwt-pt-plugin.so"
	exit 0
fi
seq 1 300 >"$T/in.txt"
if ! timeout 120 "$H" record --emulate -o "$T/rec.data" -- sha256sum "$T/in.txt" \
	>/dev/null 2>"$T/rec.err"; then
	fail script_pipe_inject "hwt record: $(head -c 300 "$T/rec.err")"
	exit 0
fi
"$H" script -i "$T/rec.data" --format tsv >"$T/file.tsv" 2>"$T/file.err"
if [ ! -s "$T/file.tsv" ]; then
	fail script_pipe_inject "hwt script on the file prints no branches: $(head -c 300 "$T/file.err")"
	exit 0
fi

# ---- pipe mode (perf inject -o -) ----
if ! command -v perf >/dev/null; then
	skip script_pipe_inject "perf not installed (apt install linux-perf)"
elif ! perf inject -i "$T/rec.data" -o - >"$T/rec.pipe" 2>"$T/inj.err" ||
	[ "$(head -c 16 "$T/rec.pipe" | od -An -tx1 | tr -d ' \n')" != "50455246494c45321000000000000000" ]; then
	skip script_pipe_inject "perf inject -o - gives no pipe-mode stream here: $(head -c 200 "$T/inj.err")"
else
	why=""
	for m in "script --format tsv" "script --insn" "script --calls" "report"; do
		$H $m -i "$T/rec.data" >"$T/f.out" 2>"$T/f.err"
		rf=$?
		cat "$T/rec.pipe" | $H $m -i - >"$T/p.out" 2>"$T/p.err"
		rp=$?
		if [ $rf != $rp ] || ! cmp -s "$T/f.out" "$T/p.out"; then
			why="$why; '$m': exit $rp vs $rf, $(wc -l <"$T/p.out") vs $(wc -l <"$T/f.out") lines: $(head -c 200 "$T/p.err")"
		fi
	done
	if [ -z "$why" ]; then
		pass script_pipe_inject
	else
		fail script_pipe_inject "pipe mode differs from the file${why}"
	fi
fi

# ---- file mode on a pipe ----
cat "$T/rec.data" | "$H" script -i - --format tsv >"$T/stdin.tsv" 2>"$T/stdin.err"
if cmp -s "$T/file.tsv" "$T/stdin.tsv"; then
	pass script_pipe_stdin
else
	fail script_pipe_stdin "$(wc -l <"$T/stdin.tsv") rows vs $(wc -l <"$T/file.tsv"): $(head -c 200 "$T/stdin.err")"
fi

# ---- Intel BTS in pipe mode, the input named as a plain `-` ----
#   script_pipe_bts     an emulated intel_bts recording through
#                       `perf inject -o -` into `hwt script -` and
#                       `hwt report -`: the same as on the file
if ! command -v perf >/dev/null; then
	skip script_pipe_bts "perf not installed (apt install linux-perf)"
elif ! timeout 120 "$H" record -e intel_bts -o "$T/bts.data" -- sha256sum "$T/in.txt" \
	>/dev/null 2>"$T/bts.err"; then
	fail script_pipe_bts "hwt record -e intel_bts: $(head -c 300 "$T/bts.err")"
else
	why=""
	for m in "script --format tsv" "report"; do
		$H $m "$T/bts.data" >"$T/f.out" 2>"$T/f.err"
		rf=$?
		perf inject -i "$T/bts.data" -o - 2>/dev/null | $H $m - >"$T/p.out" 2>"$T/p.err"
		rp=$?
		if [ $rf != $rp ] || [ ! -s "$T/f.out" ] || ! cmp -s "$T/f.out" "$T/p.out"; then
			why="$why; '$m': exit $rp vs $rf, $(wc -l <"$T/p.out") vs $(wc -l <"$T/f.out") lines: $(head -c 200 "$T/p.err")"
		fi
	done
	if [ -z "$why" ]; then
		pass script_pipe_bts
	else
		fail script_pipe_bts "pipe mode differs from the file${why}"
	fi
fi
