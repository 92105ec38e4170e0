#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/unit/reach.sh [-v] - the files of src/ that no unit test reaches.
#
# Every unit test links all of src/ but main.c (the Makefile's LIBOBJ), so
# linking says nothing: a test reaches a file when it calls a function the
# file defines (an undefined symbol of the test's own object that the
# file's object defines) or #includes it. Reads the sanitizer objects of
# `make unit` (build/asan/); compiles each tests/unit/test_*.c once more,
# into a temporary directory. -v: each file a test reaches, with the tests.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
[ -d build/asan ] || { echo "$0: no build/asan (make unit first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# symbol -> the source that defines it
declare -A def
while read -r o; do
	src=src/${o#build/asan/}
	src=${src%.o}.c
	while read -r s; do
		def[$s]=$src
	done < <(nm --defined-only -g "$o" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }')
done < <(find build/asan -name '*.o' ! -path build/asan/main.o)

for t in tests/unit/test_*.c; do
	n=$(basename "$t" .c)
	if ! ${CC:-cc} -Isrc -Itests/unit -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
		-DRAMBOOT_VERSION='"reach"' -std=c11 -pthread -c -o "$tmp/$n.o" "$t"; then
		echo "$0: $t does not compile" >&2
		exit 1
	fi
	while read -r s; do
		[ -n "${def[$s]:-}" ] && echo "${def[$s]} $n"
	done < <(nm -u "$tmp/$n.o" | awk '{ print $2 }')
	sed -n 's|^#include "\(.*\.c\)".*|src/\1 '"$n"'|p' "$t"
done | sort -u >"$tmp/reach"

if [ "${1:-}" = -v ]; then
	awk '{ t[$1] = t[$1] " " $2 } END { for (f in t) print f ":" t[f] }' "$tmp/reach" | sort
	exit 0
fi
cut -d' ' -f1 "$tmp/reach" | sort -u >"$tmp/reached"
find src -name '*.c' | sort | comm -23 - "$tmp/reached"
