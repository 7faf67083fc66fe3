#!/bin/sh
# Installs the Debian packages hwt needs to build, test and bench, only the
# missing ones.  Needs root (or sudo) only when something is missing.
set -e
PKGS="gcc make clang libc6-dev libelf-dev libdw-dev libzydis-dev libipt-dev qemu-user linux-perf zlib1g-dev gawk chromium lcov libxml2-utils python3 tmux iproute2"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "hwt: installing missing Debian packages:$missing" >&2
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
