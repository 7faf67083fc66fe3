#!/bin/bash
# tests/e2e/install.sh - `make install` of the build under test into a
# DESTDIR (PREFIX=/usr), then the installed copy used as a user would:
#
#   install_files     every artifact lands where the README says (binary,
#                     libhwt.a, libhwt.so.VERSION + its two links, each
#                     public header, hwt.pc, every built plugin, each man page)
#   install_soname    readelf -d: SONAME libhwt.so.0 (VERSION's major)
#   install_exports   nm -D: libhwt.so defines only hwt_* symbols, each one
#                     declared as a function in an installed header, none
#                     of the library's internals (lib/*/ *.h names), and
#                     every declared function (not static inline) exported
#   install_man       every page renders without a groff warning (-ww), and
#                     mandoc -T lint (if installed) finds no warning
#   install_plugin    the installed hwt, moved elsewhere, names the compiled-in
#                     plugin folder /usr/lib/hwt when it finds no plugin, and
#                     finds it through HWT_PLUGIN_DIR
#   install_examples  examples/ builds against the installed copy with
#                     pkg-config (PKG_CONFIG_PATH/PKG_CONFIG_SYSROOT_DIR into
#                     DESTDIR), linked shared (NEEDED libhwt.so.0) and static
#   install_ptdump_mini  the installed hwt records a threaded program under
#                     the emulated unit (plugin found through ../lib/hwt);
#                     examples/ptdump_mini (shared and static) prints the
#                     offset and name columns of `hwt dump` (the oracle)
#   install_branches  examples/branches (shared and static) prints, thread
#                     by thread, the rows of `hwt script --branches --format
#                     tsv` (the oracle); only once examples/branches.c exists
#   install_uninstall `make uninstall` leaves no file behind
#
# Installs from the already-built folder $HWT_BUILD (make rebuilds only
# lib/unit/plugin_path.o, as PLUGINDIR changes, and relinks).  In the
# sanitizer build the examples are compiled with the same sanitizers (the
# installed library is instrumented).
set -u
. "$(dirname "$0")/lib.bash"
export LC_ALL=C
# a make above us (make check) must not pass its variables down
unset MAKEFLAGS MFLAGS MAKELEVEL
SAN=${HWT_SAN:-0}
R=$T/root
VERSION=$(sed -n 's/^VERSION := *//p' Makefile)
MAJOR=${VERSION%%.*}

require install make pkg-config readelf nm
if [ ! -x "$B/hwt" ] || [ ! -f "$B/libhwt.so" ]; then
	fail install "$B/hwt or $B/libhwt.so not built (make BUILD=$B)"
	exit 0
fi

# the plugins are installed as built (-o: never remade here; a sanitizer
# build's plugin objects may live in another build, see the Makefile)
old=()
for p in "$B"/hwt-*-plugin.so; do
	[ -f "$p" ] && old+=(-o "$p")
done
if ! make -s install BUILD="$B" SAN="$SAN" "${old[@]}" DESTDIR="$R" PREFIX=/usr >"$T/install.out" 2>&1; then
	fail install_files "make install failed: $(tail -n 5 "$T/install.out" | tr '\n' ' ')"
	exit 0
fi

# ---- files ----
missing=""
need=(usr/bin/hwt usr/lib/libhwt.a "usr/lib/libhwt.so.$VERSION" usr/lib/pkgconfig/hwt.pc)
for h in include/hwt/*.h; do need+=("usr/include/hwt/${h##*/}"); done
for m in man/*.1; do need+=("usr/share/man/man1/${m##*/}"); done
for p in "$B"/hwt-*-plugin.so; do [ -e "$p" ] && need+=("usr/lib/hwt/${p##*/}"); done
for f in "${need[@]}"; do
	[ -f "$R/$f" ] || missing="$missing $f"
done
[ "$(readlink "$R/usr/lib/libhwt.so.$MAJOR")" = "libhwt.so.$VERSION" ] || missing="$missing libhwt.so.$MAJOR->libhwt.so.$VERSION"
[ "$(readlink -f "$R/usr/lib/libhwt.so")" = "$(readlink -f "$R/usr/lib/libhwt.so.$VERSION")" ] || missing="$missing libhwt.so->libhwt.so.$VERSION"
[ -x "$R/usr/bin/hwt" ] || missing="$missing usr/bin/hwt(executable)"
if [ -z "$missing" ]; then
	pass install_files
else
	fail install_files "missing in DESTDIR:$missing"
fi

# ---- soname ----
so=$(readelf -d "$R/usr/lib/libhwt.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$so" = "libhwt.so.$MAJOR" ]; then
	pass install_soname
else
	fail install_soname "SONAME is '$so', want libhwt.so.$MAJOR"
fi

# ---- exports ----
nm -D --defined-only "$R/usr/lib/libhwt.so.$VERSION" | awk '{ print $NF }' | sort -u >"$T/exports"
# declared functions of the installed headers (comments stripped by cpp)
for h in "$R"/usr/include/hwt/*.h; do echo "#include <hwt/${h##*/}>"; done >"$T/all.c"
cc -E -P -I"$R/usr/include" "$T/all.c" | grep -oE '\bhwt_[A-Za-z0-9_]+[[:space:]]*\(' |
	tr -d ' \t(' | sort -u >"$T/declared"
# names the library declares in its internal headers only
grep -ohE '\bhwt_[A-Za-z0-9_]+[[:space:]]*\(' $(find lib -name '*.h') | tr -d ' \t(' | sort -u |
	comm -23 - "$T/declared" >"$T/internal"
# declared, not inline, yet not exported: a public function users cannot link
cc -E -P -I"$R/usr/include" "$T/all.c" | grep -oE 'static inline[^(]*\bhwt_[A-Za-z0-9_]+[[:space:]]*\(' |
	grep -oE 'hwt_[A-Za-z0-9_]+' | sort -u >"$T/inline"
unexported=$(comm -23 "$T/declared" "$T/exports" | comm -23 - "$T/inline" | head -n 5 | tr '\n' ' ')
bad_prefix=$(grep -v '^hwt_' "$T/exports" | head -n 5 | tr '\n' ' ')
undeclared=$(comm -23 "$T/exports" "$T/declared" | head -n 5 | tr '\n' ' ')
leaked=$(comm -12 "$T/exports" "$T/internal" | head -n 5 | tr '\n' ' ')
if [ ! -s "$T/exports" ]; then
	fail install_exports "libhwt.so exports nothing"
elif [ -n "$bad_prefix$undeclared$leaked$unexported" ]; then
	fail install_exports "not hwt_: [$bad_prefix] not in a public header: [$undeclared] internal: [$leaked] declared but not exported: [$unexported]"
else
	pass install_exports
fi

# ---- man pages ----
if ! command -v groff >/dev/null; then
	skip install_man "groff not installed (apt install groff-base)"
else
	bad=""
	for m in "$R"/usr/share/man/man1/hwt*.1; do
		w=$(groff -man -Tutf8 -ww -z "$m" 2>&1)
		[ -n "$w" ] && bad="$bad ${m##*/}: $w"
		if command -v mandoc >/dev/null; then
			w=$(mandoc -T lint -W warning "$m" 2>&1)
			[ -n "$w" ] && bad="$bad ${m##*/}: $w"
		fi
	done
	n=$(ls "$R"/usr/share/man/man1/hwt*.1 2>/dev/null | wc -l)
	if [ -n "$bad" ]; then
		fail install_man "$(head -c 600 <<<"$bad")"
	elif [ "$n" -lt 7 ]; then
		fail install_man "only $n man pages installed"
	else
		pass install_man
	fi
fi

# ---- plugin search ----
mkdir -p "$T/lonely"
cp "$R/usr/bin/hwt" "$T/lonely/hwt"
if [ -e /usr/lib/hwt/hwt-pt-plugin.so ]; then
	skip install_plugin "a plugin is installed in /usr/lib/hwt on this machine"
elif ! command -v qemu-x86_64 >/dev/null; then
	skip install_plugin "qemu-x86_64 not installed (apt install qemu-user)"
else
	no=$(env -u HWT_PLUGIN_DIR "$T/lonely/hwt" list 2>&1 | grep '(emulated)')
	yes=$(HWT_PLUGIN_DIR="$R/usr/lib/hwt" "$T/lonely/hwt" list 2>&1 | grep '(emulated)')
	if [[ "$no" != *"not found"*"/usr/lib/hwt"* ]]; then
		fail install_plugin "without a plugin: '$no' (want the compiled-in /usr/lib/hwt named)"
	elif [[ "$yes" != *": present"* ]]; then
		fail install_plugin "with HWT_PLUGIN_DIR: '$yes'"
	else
		pass install_plugin
	fi
fi

# ---- examples ----
export PKG_CONFIG_PATH=$R/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R
XCFLAGS="-O2 -g -std=c11 -Wall -Wextra -Werror"
[ "$SAN" = 1 ] && XCFLAGS="$XCFLAGS -fsanitize=address,undefined -fno-omit-frame-pointer"
if ! make -C examples O="$T/ex" CFLAGS="$XCFLAGS" >"$T/ex.out" 2>&1; then
	fail install_examples "make -C examples failed: $(tail -n 8 "$T/ex.out" | tr '\n' ' ')"
	exit 0
fi
bad=""
for c in examples/*.c; do
	n=$(basename "$c" .c)
	[ -x "$T/ex/$n" ] && [ -x "$T/ex/$n-static" ] || bad="$bad $n:not-built"
	readelf -d "$T/ex/$n" | grep -q "NEEDED.*\[libhwt.so.$MAJOR\]" || bad="$bad $n:no-NEEDED-libhwt.so.$MAJOR"
	! readelf -d "$T/ex/$n-static" | grep -q 'NEEDED.*libhwt' || bad="$bad $n-static:needs-libhwt.so"
	grep -q -- "-I$R/usr/include" "$T/ex.out" || bad="$bad cflags-not-from-DESTDIR"
done
if [ -z "$bad" ]; then
	pass install_examples
else
	fail install_examples "$bad"
fi

# ---- a recording by the installed hwt ----
if ! command -v qemu-x86_64 >/dev/null; then
	skip install_ptdump_mini "qemu-x86_64 not installed (apt install qemu-user)"
	skip install_branches "qemu-x86_64 not installed (apt install qemu-user)"
else
	cat >"$T/mt.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
static void *work(void *arg)
{
	unsigned long n = (unsigned long)arg, s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i % 7 ? i : 3 * i;
	return (void *)s;
}
int main(void)
{
	pthread_t t[2];
	void *r[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, (void *)(1000UL * (i + 1)));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &r[i]);
	printf("%lu\n", (unsigned long)r[0] + (unsigned long)r[1] + (unsigned long)work((void *)500));
	return 0;
}
EOF
	cc -O1 -pthread -o "$T/mt" "$T/mt.c" || {
		fail install_ptdump_mini "cannot build the test program"
		exit 0
	}
	if ! (cd "$T" && env -u HWT_PLUGIN_DIR "$R/usr/bin/hwt" record -o "$T/rec" -- "$T/mt" >"$T/rec.out" 2>"$T/rec.err"); then
		fail install_ptdump_mini "installed hwt record failed: $(tail -n 3 "$T/rec.err" | tr '\n' ' ')"
		exit 0
	fi
	export LD_LIBRARY_PATH=$R/usr/lib
	# oracle: hwt dump's offset and name columns, stream headers as they are
	"$B/hwt" dump "$T/rec" 2>/dev/null | awk '/^#/ { print; next } { print $1 "  " $2 }' >"$T/dump.exp"
	nstreams=$(grep -c '^# stream' "$T/dump.exp")
	bad=""
	for v in ptdump_mini ptdump_mini-static; do
		"$T/ex/$v" "$T/rec" >"$T/$v.out" 2>"$T/$v.err" || bad="$bad $v:exit$?"
		cmp -s "$T/dump.exp" "$T/$v.out" ||
			bad="$bad $v:differs($(diff "$T/dump.exp" "$T/$v.out" | head -n 3 | tr '\n' ' '))"
	done
	if [ "$nstreams" -lt 3 ]; then
		fail install_ptdump_mini "the recording has $nstreams streams, want 3 (main + 2 threads)"
	elif [ -n "$bad" ]; then
		fail install_ptdump_mini "$bad"
	else
		pass install_ptdump_mini
	fi

	if [ ! -f examples/branches.c ]; then
		skip install_branches "examples/branches.c not written yet"
	else
		# oracle: hwt script's tsv rows, split by thread (column 1)
		"$B/hwt" script --branches --format tsv "$T/rec" >"$T/br.exp" 2>/dev/null
		mkdir -p "$T/exp"
		awk -F'\t' -v d="$T/exp" '{ print > (d "/" $1) }' "$T/br.exp"
		bad=""
		for v in branches branches-static; do
			mkdir -p "$T/$v"
			"$T/ex/$v" "$T/rec" >"$T/$v.out" 2>"$T/$v.err" || bad="$bad $v:exit$?"
			awk -F'\t' -v d="$T/$v" '{ print > (d "/" $1) }' "$T/$v.out"
			diff -r "$T/exp" "$T/$v" >"$T/$v.diff" ||
				bad="$bad $v:differs($(head -n 4 "$T/$v.diff" | tr '\n' ' '))"
		done
		nt=$(ls "$T/exp" | wc -l)
		if [ "$nt" -lt 3 ]; then
			fail install_branches "hwt script shows $nt threads, want 3"
		elif [ -n "$bad" ]; then
			fail install_branches "$bad"
		else
			pass install_branches
		fi
	fi
	unset LD_LIBRARY_PATH
fi

# ---- uninstall ----
make -s uninstall BUILD="$B" SAN="$SAN" DESTDIR="$R" PREFIX=/usr >"$T/uninstall.out" 2>&1
left=$(find "$R" ! -type d | head -n 5 | tr '\n' ' ')
if [ -n "$left" ]; then
	fail install_uninstall "left behind: $left"
else
	pass install_uninstall
fi
