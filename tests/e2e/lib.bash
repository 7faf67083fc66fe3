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
