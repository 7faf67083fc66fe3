#!/bin/sh
# tests/debian/fetch.sh - a packaged Debian program and its -dbgsym package.
#
# The program is Debian's `hello`, built from its Debian source the way the
# archive builds it (dpkg-buildpackage: optimised, stripped by dh_strip,
# whose debug info goes to the hello-dbgsym package under
# usr/lib/debug/.build-id/xx/yyyy.debug).  The debian-debug archive, where
# the archive's own -dbgsym packages live, is not reachable from every
# machine (it answered HTTP 400 here), so the package is built locally
# from deb-src instead: same tools, same flags, same layout.
#
# Private apt configuration (a deb-src line for bookworm, lists and cache
# under CACHE/apt): the system's apt sources are never changed.  Both .debs
# are unpacked with dpkg-deb -x into CACHE/VERSION/root; nothing is
# installed.  Cached per version: once CACHE/VERSION/done exists, a run
# does nothing (no network).  Concurrent runs wait on a lock.
#
# Usage: tests/debian/fetch.sh [CACHE]   (default: build-debian-cache/ in
# the repository).  Needs dpkg-dev, debhelper and hello's build
# dependencies (help2man, texinfo; scripts/deps.sh installs them).  On
# success prints two lines: the unpacked root (usr/bin/hello and
# usr/lib/debug/ under it) and the built source tree (the lines' sources).
# Exit 1 with the reason on stderr otherwise; exit 3 if something is
# missing that a download would bring (no network, build-deps missing): a
# test may SKIP for that.
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${1:-$top/build-debian-cache}
SRC=hello
# bookworm's version (the archive keeps it for the release's life); another
# one is taken if the archive has moved on
VER=${HWT_DEBIAN_HELLO_VERSION:-2.10-3}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

done_dir()
{
	for d in "$cache/$VER" "$cache"/*/; do
		d=${d%/}
		if [ -e "$d/done" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}
report()
{
	echo "$1/root"
	cat "$1/srcdir"
}

if d=$(done_dir); then
	report "$d"
	exit 0
fi

exec 9>"$cache/lock"
flock 9
if d=$(done_dir); then
	report "$d"
	exit 0
fi

for t in apt-get dpkg-source dpkg-buildpackage dpkg-checkbuilddeps dpkg-deb dh; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "fetch.sh: $t not installed (apt install dpkg-dev debhelper, or make deps)" >&2
		exit 3
	fi
done

# private apt configuration: bookworm's deb-src only
apt=$cache/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
key=/usr/share/keyrings/debian-archive-keyring.gpg
opt=""
[ -r "$key" ] && opt="[signed-by=$key] "
echo "deb-src ${opt}http://deb.debian.org/debian bookworm main" >"$apt/sources.list"
APT="-o Dir::Etc::sourcelist=$apt/sources.list -o Dir::Etc::sourceparts=/nonexistent
 -o Dir::State::Lists=$apt/lists -o Dir::Cache=$apt/cache -o Debug::NoLocking=1"
if ! apt-get $APT -q update >"$apt/update.log" 2>&1 || grep -q '^[EW]: Failed' "$apt/update.log"; then
	echo "fetch.sh: apt-get update of deb-src bookworm failed (no network?):" \
		"$(grep -m1 -E '^(E|W|Err)' "$apt/update.log")" >&2
	exit 3
fi
if ! apt-cache $APT showsrc "$SRC=$VER" 2>/dev/null | grep -q "^Version: $VER\$"; then
	VER=$(apt-cache $APT showsrc "$SRC" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)
	[ -n "$VER" ] || { echo "fetch.sh: no source package $SRC in deb-src bookworm" >&2; exit 1; }
fi
w=$cache/$VER
rm -rf "$w"
mkdir -p "$w"
if ! (cd "$w" && apt-get $APT -q source "$SRC=$VER") >"$w/source.log" 2>&1; then
	echo "fetch.sh: apt-get source $SRC=$VER failed: $(tail -n2 "$w/source.log")" >&2
	exit 3
fi
sd=$(find "$w" -mindepth 1 -maxdepth 1 -type d -name "$SRC-*" | head -n1)
[ -n "$sd" ] || { echo "fetch.sh: apt-get source unpacked no $SRC-* folder in $w" >&2; exit 1; }
if ! (cd "$sd" && dpkg-checkbuilddeps) >"$w/deps.log" 2>&1; then
	echo "fetch.sh: build dependencies of $SRC missing: $(tail -n1 "$w/deps.log")" \
		"(apt install them, or make deps)" >&2
	exit 3
fi
# the archive's build: default flags (-g -O2 ...), stripped into -dbgsym;
# nocheck only skips the package's own test suite
if ! (cd "$sd" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -b -uc -us) \
	>"$w/build.log" 2>&1; then
	echo "fetch.sh: dpkg-buildpackage of $SRC $VER failed (see $w/build.log):" \
		"$(tail -n3 "$w/build.log")" >&2
	exit 1
fi
mkdir -p "$w/root"
for p in "$SRC" "$SRC-dbgsym"; do
	deb=$(ls "$w/${p}_"*.deb 2>/dev/null | head -n1)
	[ -n "$deb" ] || { echo "fetch.sh: dpkg-buildpackage made no ${p}_*.deb in $w" >&2; exit 1; }
	dpkg-deb -x "$deb" "$w/root"
done
echo "$sd" >"$w/srcdir"
: >"$w/done"
report "$w"
