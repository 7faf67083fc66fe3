#!/bin/bash
# CLI conventions every subcommand follows: --help on stdout with exit 0,
# unknown commands and options print usage on stderr with exit 2.
set -u
H=$HWT_BUILD/hwt
t() { # name, expected rc, expect-stdout(0/1), expect-stderr(0/1), args...
	local name=$1 want=$2 so=$3 se=$4
	shift 4
	local o e rc
	o=$(mktemp) e=$(mktemp)
	"$H" "$@" >"$o" 2>"$e" </dev/null
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, want $want ($(head -c 200 "$e"))"
	elif [ "$so" = 1 ] && [ ! -s "$o" ]; then
		echo "FAIL $name: nothing on stdout"
	elif [ "$so" = 0 ] && [ -s "$o" ]; then
		echo "FAIL $name: unexpected stdout: $(head -c 200 "$o")"
	elif [ "$se" = 1 ] && [ ! -s "$e" ]; then
		echo "FAIL $name: nothing on stderr"
	elif [ "$se" = 0 ] && [ -s "$e" ]; then
		echo "FAIL $name: unexpected stderr: $(head -c 200 "$e")"
	else
		echo "PASS $name"
	fi
	rm -f "$o" "$e"
}
t help 0 1 0 --help
t version 0 1 0 --version
if "$H" --version | grep -Eq '^hwt [0-9]+\.[0-9]+\.[0-9]+$'; then echo "PASS version-format"; else echo "FAIL version-format: $("$H" --version)"; fi
t no-args 2 0 1
t unknown-command 2 0 1 frobnicate
for c in record script report dump info list; do
	t "$c-help" 0 1 0 "$c" --help
	t "$c-unknown-option" 2 0 1 "$c" --no-such-option
	if "$H" "$c" --help | grep -q "hwt $c"; then echo "PASS $c-help-names-command"; else echo "FAIL $c-help-names-command"; fi
done
