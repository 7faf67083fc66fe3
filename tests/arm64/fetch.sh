#!/bin/sh
# tests/arm64/fetch.sh - real aarch64 programs for the emulated ETM unit.
#
# Downloads Debian arm64 packages (apt-get download PKG:arm64) and unpacks
# them with dpkg-deb -x into a cache folder, a sysroot for qemu-aarch64 -L.
# Nothing is installed system-wide.  Also builds the small test programs of
# tests/arm64/progs/ with aarch64-linux-gnu-gcc into <cache>/progs/.
#
# Usage: tests/arm64/fetch.sh [CACHE]   (default: build-arm64-cache/ in the
# repository).  Idempotent: packages already unpacked are skipped (a
# stamp file per package).  Needs arm64 as a dpkg architecture
# (scripts/deps.sh adds it).  Prints the sysroot path on success.
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${1:-$top/build-arm64-cache}
root=$cache/root
mkdir -p "$cache/debs" "$root" "$cache/stamps" "$cache/progs"

# Programs (and what they cover) and their library closure (apt-cache
# depends of the programs, the arm64 library packages only).
PKGS="coreutils gawk sed grep zstd xz-utils bzip2 dash perl-base python3.11-minimal
libc6 libgcc-s1 gcc-12-base libstdc++6 libacl1 libattr1 libbz2-1.0 libcrypt1 libexpat1
libgmp10 liblz4-1 liblzma5 libmd0 libmpfr6 libpcre2-8-0 libpython3.11-minimal
libreadline8 libselinux1 libsigsegv2 libssl3 libtinfo6 libzstd1 zlib1g"

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	echo "fetch.sh: arm64 is not a dpkg architecture here (run: dpkg --add-architecture arm64;" \
		"apt-get update, or make deps)" >&2
	exit 1
fi
need=""
for p in $PKGS; do
	[ -e "$cache/stamps/$p" ] || need="$need $p"
done
if [ -n "$need" ]; then
	get=""
	for p in $need; do
		ls "$cache/debs/${p}_"*.deb >/dev/null 2>&1 || get="$get $p:arm64"
	done
	if [ -n "$get" ]; then
		(cd "$cache/debs" && apt-get download -q $get >/dev/null 2>&1) ||
			{ echo "fetch.sh: apt-get download$get failed (try apt-get update)" >&2; exit 1; }
	fi
	for p in $need; do
		deb=$(ls "$cache/debs/${p}_"*_arm64.deb 2>/dev/null | head -n1)
		[ -n "$deb" ] || { echo "fetch.sh: no .deb for $p in $cache/debs" >&2; exit 1; }
		dpkg-deb -x "$deb" "$root"
		: >"$cache/stamps/$p"
	done
fi
# merged /usr, as on a Debian 12 system: /bin, /sbin and /lib are links to
# usr/bin, usr/sbin, usr/lib (the programs' PT_INTERP is
# /lib/ld-linux-aarch64.so.1; a shell's PATH search finds /usr/bin/ls and
# qemu-aarch64 -L resolves that path in ROOT).  What a package unpacked at
# the top moves into usr/ (mv only: the cache may share files by hard
# link with another copy).
merge() { # merge SRC DST: move SRC's entries into DST, recursively
	for e in "$1"/* "$1"/.[!.]*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		b=${e##*/}
		if [ ! -e "$2/$b" ] && [ ! -L "$2/$b" ]; then
			mv "$e" "$2/$b"
		elif [ -d "$e" ] && [ ! -L "$e" ] && [ -d "$2/$b" ] && [ ! -L "$2/$b" ]; then
			merge "$e" "$2/$b"
		fi
	done
}
for d in lib bin sbin; do
	if [ -d "$root/$d" ] && [ ! -L "$root/$d" ]; then
		mkdir -p "$root/usr/$d"
		merge "$root/$d" "$root/usr/$d"
		rm -rf "$root/$d"
	fi
	[ -e "$root/$d" ] || ln -s "usr/$d" "$root/$d"
done

# the small programs
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
	for c in "$here"/progs/*.c; do
		[ -e "$c" ] || continue
		b=$cache/progs/$(basename "$c" .c)
		if [ ! -e "$b" ] || [ "$c" -nt "$b" ]; then
			aarch64-linux-gnu-gcc -O1 -g -pthread -o "$b" "$c"
		fi
	done
else
	echo "fetch.sh: aarch64-linux-gnu-gcc missing (apt install gcc-aarch64-linux-gnu)" >&2
	exit 1
fi
echo "$root"
