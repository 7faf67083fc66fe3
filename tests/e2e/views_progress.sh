#!/bin/bash
# tests/e2e/views_progress.sh - the progress line of decoding commands, on
# a real terminal (a tmux pane, its output logged raw with pipe-pane):
#   - `hwt script` with stdout to a file and stderr on the terminal draws
#     "hwt script: X of Y (N%), R/s" (and erases it at the end);
#   - --no-progress draws nothing;
#   - the output file (and the output through a pipe) is byte-identical
#     with and without the progress line, and stderr to a file stays
#     empty (no line when stderr is not a terminal).
set -u
. "$(dirname "$0")/lib.bash"
HWT=$(realpath -m "$B/hwt")

require views_progress qemu-x86_64 cc tmux
require_built views_progress "$HWT" "$B/hwt-pt-plugin.so"
export LC_ALL=C
if ! cc -g -O0 -pthread -o "$T/prog" tests/e2e/progs/views_prog.c 2>"$T/cc.err"; then
	fail views_progress "cc: $(head -c 200 "$T/cc.err")"
	exit 0
fi
if ! "$HWT" record --emulate -o "$T/p.data" -- "$T/prog" >"$T/rec.out" 2>"$T/rec.err"; then
	fail views_progress "hwt record: $(tail -c 300 "$T/rec.err")"
	exit 0
fi

SOCK=hwt-progress-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$T"' EXIT
if ! tm new-session -d -s p -x 200 -y 40 "bash --norc --noprofile"; then
	skip views_progress "tmux cannot start a session here"
	exit 0
fi
# run one shell command line in the pane, its raw output logged to $1
run_in_pane() {
	local log=$1 cmd=$2
	: >"$log"
	tm pipe-pane -t p -o "cat >> '$log'"
	tm send-keys -t p "$cmd; echo D\"\"ONE" Enter
	for _ in $(seq 1 600); do
		grep -q DONE "$log" 2>/dev/null && break
		sleep 0.2
	done
	tm pipe-pane -t p
	grep -q DONE "$log"
}

name=views_progress_tty
if ! run_in_pane "$T/on.log" "'$HWT' script --insn '$T/p.data' > '$T/on.txt'"; then
	fail $name "the command did not finish in the pane"
elif ! grep -aqE 'hwt script: [0-9.]+ [kMG]B of [0-9.]+ [kMG]B \([0-9]+%\), [0-9.]+ [kMG]B/s' "$T/on.log"; then
	fail $name "no progress line on the terminal: $(head -c 300 "$T/on.log" | tr -c '[:print:]' '.')"
elif ! grep -aq $'\r\033\\[K' "$T/on.log"; then
	fail $name "the progress line is not erased"
else
	pass $name
fi

name=views_progress_off
if ! run_in_pane "$T/off.log" "'$HWT' script --insn --no-progress '$T/p.data' > '$T/off.txt'"; then
	fail $name "the command did not finish in the pane"
elif grep -aq 'hwt script: .* of ' "$T/off.log"; then
	fail $name "--no-progress drew a progress line"
else
	pass $name
fi
# stdout a pipe, stderr the terminal
run_in_pane "$T/pipe.log" "'$HWT' script --insn '$T/p.data' | cat > '$T/pipe.txt'"

name=views_progress_identical
"$HWT" script --insn "$T/p.data" >"$T/plain.txt" 2>"$T/plain.err"
if ! cmp -s "$T/on.txt" "$T/off.txt"; then
	fail $name "the output file differs with and without the progress line"
elif ! cmp -s "$T/on.txt" "$T/pipe.txt" || ! cmp -s "$T/on.txt" "$T/plain.txt"; then
	fail $name "the output through a pipe / without a terminal differs"
elif [ -s "$T/plain.err" ]; then
	fail $name "stderr not a terminal, yet: $(head -c 200 "$T/plain.err")"
elif [ ! -s "$T/on.txt" ]; then
	fail $name "no output"
else
	pass $name
fi
