# bench/lib.bash - the common part of the bench/bench_*.sh scripts, sourced
# (not run) after they set LABEL (the name their output line starts with):
# makes the scratch folder T (removed on exit) and defines
#   cpu CMD...   the CPU time (user+sys of the process tree) of one run of
#                CMD, stdout discarded; on failure prints "LABEL: FAIL" and
#                exits the script
#   best CMD...  the lowest of three cpu runs
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

cpu() {
	/usr/bin/time -f '%U %S' -o "$T/t" "$@" >/dev/null 2>"$T/err" || {
		echo "$LABEL: FAIL ($* failed: $(tail -1 "$T/err"))" >&2
		exit 1
	}
	awk '{ printf "%.3f\n", $1 + $2 }' "$T/t"
}

best() {
	local b=
	for _ in 1 2 3; do
		local v
		v=$(cpu "$@") || exit 1
		if [ -z "$b" ] || awk -v a="$v" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$v; fi
	done
	echo "$b"
}
