# tests/e2e/lib.bash - the common prologue of the e2e scripts, sourced (not
# run) as `. "$(dirname "$0")/lib.bash"` right after `set -u`: it moves to
# the repository root, sets B (the build folder, $HWT_BUILD or build) and T
# (a scratch folder removed on exit), and defines the printers of the test
# protocol (pass NAME / fail NAME WHY / skip NAME WHY).  Not named *.sh, so
# tests/run.sh does not run it as a test of its own.
cd "$(dirname "$0")/../.." || exit 1
B=${HWT_BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }

# hwt_cc OUT SRC...: a helper program against this build's libhwt.a, with
# the sanitizers of a sanitizer build and every library libhwt.a needs
# (kept equal to the Makefile's LDLIBS_LIB); compiler errors on stderr
hwt_cc() {
	local out=$1
	shift
	local san=
	[ "${HWT_SAN:-0}" = 1 ] && san="-fsanitize=address,undefined"
	cc -std=c11 -D_GNU_SOURCE -O1 -Iinclude $san -o "$out" "$@" "${HWT_BUILD:-build}/libhwt.a" \
		-lelf -ldw -lZydis -lopencsd_c_api -lopencsd -lcapstone -lpthread
}

# require SUITE CMD...: the suite needs these commands; SKIP it (and exit)
# when one is missing
require() {
	local suite=$1 c
	shift
	for c; do
		if ! command -v "$c" >/dev/null; then
			skip "$suite" "$c not installed (make deps installs it)"
			exit 0
		fi
	done
}

# require_built SUITE FILE...: the suite needs these files of the build;
# FAIL it (and exit) when one is missing
require_built() {
	local suite=$1 f
	shift
	for f; do
		if [ ! -e "$f" ]; then
			fail "$suite" "$f not built (make BUILD=$B)"
			exit 0
		fi
	done
}
