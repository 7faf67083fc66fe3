#!/bin/sh
# Installs the Debian packages hwt needs to build, test and bench, only the
# missing ones.  Needs root (or sudo) only when something is missing.
# Also: arm64 as a dpkg architecture (the emulated ETM unit's tests fetch
# Debian arm64 programs into build-arm64-cache/ with tests/arm64/fetch.sh;
# nothing arm64 is installed system-wide), and the tools that build Debian's
# hello and hello-dbgsym from deb-src into build-debian-cache/ (when
# tests/e2e/views_dbgsym.sh first runs)
# (tests/debian/fetch.sh: dpkg-dev, debhelper, fakeroot, and hello's
# build dependencies help2man and texinfo).
set -e
PKGS="gcc make clang libc6-dev libelf-dev libdw-dev libzydis-dev libipt-dev qemu-user linux-perf zlib1g-dev gawk
libopencsd-dev libcapstone-dev gcc-aarch64-linux-gnu libc6-dev-arm64-cross pkg-config
chromium lcov libxml2-utils python3 tmux iproute2 luajit
dpkg-dev debhelper fakeroot help2man texinfo"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
updated=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	echo "hwt: adding arm64 as a dpkg architecture (for tests/arm64/fetch.sh)" >&2
	$SUDO dpkg --add-architecture arm64
	$SUDO apt-get update -qq
	updated=1
fi
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "hwt: installing missing Debian packages:$missing" >&2
	[ $updated = 1 ] || $SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# the arm64 program cache (downloads once; quick when present)
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/tests/arm64/fetch.sh" >/dev/null || echo "hwt: tests/arm64/fetch.sh failed; the ETM tests will SKIP" >&2
# (the packaged Debian program and its -dbgsym are built by the test that
# needs them, views_dbgsym, once per machine: make and make demo do not wait
# for it)
