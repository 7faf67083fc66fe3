#!/bin/sh
# Writes the linker version script of libhwt.so to stdout: the library's
# public API is every function declared in include/hwt/*.h and defined in
# the given objects; everything else is local (not exported).
#   usage: CC=cc scripts/libhwt_map.sh OBJ...
# The headers are preprocessed (comments and macros gone) and every
# "hwt_name(" kept; static inline functions drop out because they are not
# global symbols of the objects.
set -e
cd "$(dirname "$0")/.."
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for h in include/hwt/*.h; do
	echo "#include \"hwt/${h##*/}\""
done >"$tmp/all.c"
$CC -E -P -D_GNU_SOURCE -Iinclude "$tmp/all.c" |
	grep -oE '\bhwt_[A-Za-z0-9_]+[[:space:]]*\(' | tr -d ' \t(' | sort -u >"$tmp/decl"
nm -g --defined-only "$@" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def"
echo "{"
echo "global:"
comm -12 "$tmp/decl" "$tmp/def" | sed 's/.*/	&;/'
echo "local:"
echo "	*;"
echo "};"
