#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The ABI of the shared libraries against the committed baseline (abi/,
# docs/packaging.md "ABI policy"), with abidiff of Debian's abigail-tools:
#
#   scripts/check-abi.sh [BUILDDIR]          build the two libraries in BUILDDIR
#                                            (default build) and check them
#   scripts/check-abi.sh LIBRARY.so...       check these files, each against the
#                                            baseline of its name
#   scripts/check-abi.sh --update [BUILDDIR | LIBRARY.so...]
#                                            rewrite the baseline from them
#
# A library fails when abidiff finds a change in the ABI of its public
# headers (a function or variable gone, a type or a signature changed) and
# its soname is the baseline's; added functions are compatible and pass. A
# library whose soname moved passes whatever changed, and says that its
# baseline is to be rewritten. The Debian symbols files
# (debian/libgr-api-*.symbols) must list exactly the symbols each library
# exports, each with the version that first had it; --update rewrites them
# too, keeping the version of every symbol they already list.
#
# SHMCHAN_ABI_DIR and SHMCHAN_DEBIAN_DIR put the baseline and the symbols
# files elsewhere than abi/ and debian/ (the test check_abi_catches_break
# works on copies).
#
# Exit status: 0 compatible, 1 an incompatible change (or a symbols file
# that does not match), 2 a usage or tool error.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
abi_dir=${SHMCHAN_ABI_DIR:-$top/abi}
debian_dir=${SHMCHAN_DEBIAN_DIR:-$top/debian}

# The installed headers: abidw and abidiff treat every type declared
# elsewhere as private, so that the client's opaque handle, or any other
# type the headers only name, changes at will. They take a folder of
# headers, and the server's sits among private ones: a folder of copies.
PUBLIC_HEADERS="$top/api/gr_api.h $top/api/gr_api_client.h $top/api/gr_api_client_impl.h
$top/api/gr_clock.h $top/api/gr_shm.h $top/server/gr_api_server.h"
LIBRARIES="libgr_api_client libgr_api_server"
# abidiff's exit status: bits 1 and 2 are its own errors, 4 an ABI change,
# 8 an incompatible one (libabigail's abidiff(1)).
ABIDIFF_TOOL_ERROR=3
ABIDIFF_ANY_CHANGE=12

die() {
	echo "check-abi: $*" >&2
	exit 2
}

usage() {
	sed -n '5,13s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/headers"
# shellcheck disable=SC2086
cp $PUBLIC_HEADERS "$tmp/headers/"

update=0
case ${1:-} in
--update)
	update=1
	shift
	;;
-h | --help) usage ;;
esac

if ! command -v abidiff >/dev/null || ! command -v abidw >/dev/null; then
	die "abidiff and abidw are missing: scripts/deps.sh installs abigail-tools"
fi

# The shared libraries of a meson build folder, built if needed.
build_libraries() {
	local builddir=$1 files
	[ -f "$builddir/build.ninja" ] || die "$builddir is not a meson build folder (meson setup $builddir)"
	files=$(meson introspect --targets "$builddir" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["type"] == "shared library" and t["name"] in ("gr_api_client", "gr_api_server"):
        print(t["filename"][0])')
	[ "$(echo "$files" | wc -l)" = 2 ] || die "$builddir has no gr_api_client and gr_api_server shared libraries"
	# shellcheck disable=SC2046
	ninja -C "$builddir" $(for f in $files; do realpath --relative-to="$builddir" "$f"; done) >&2 ||
		die "ninja -C $builddir failed"
	echo "$files"
}

# libgr_api_client.so.0.1.0 -> libgr_api_client
name_of() {
	basename "$1" | sed 's/\.so.*//'
}

soname_of() {
	readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'
}

# The symbols a library exports, NAME@VERSION_NODE, one a line, sorted.
exported_symbols() {
	nm -D --defined-only "$1" | awk '$2 == "A" { print $3 "@" $3; next } { sub(/@@/, "@", $3); print $3 }' | sort
}


# The package of library $1: libgr_api_client.so.0 -> libgr-api-client0.
package_of() {
	echo "$1" | sed 's/\.so\./-/; s/\.so$//; s/_/-/g; s/-\([0-9]*\)$/\1/'
}

# debian/PACKAGE.symbols for library $1 with soname $2, keeping the
# versions the current file gives.
write_symbols() {
	local lib=$1 soname=$2 pkg file version
	pkg=$(package_of "$soname")
	file=$debian_dir/$pkg.symbols
	version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$top/meson.build" | head -n1)
	exported_symbols "$lib" | python3 -c '
import os, re, sys
path, soname, pkg, version = sys.argv[1:5]
old = {}
if os.path.exists(path):
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^ (\S+) (\S+)", line)
        if m:
            old[m.group(1)] = m.group(2)
with open(path, "w", encoding="utf-8") as f:
    f.write(f"{soname} {pkg} #MINVER#\n")
    f.write("* Build-Depends-Package: libgr-api-dev\n")
    for sym in sys.stdin.read().split():
        f.write(f" {sym} {old.get(sym, version)}\n")
' "$file" "$soname" "$pkg" "$version"
	echo "check-abi: wrote $file"
}

# The symbols a symbols file lists, NAME@VERSION_NODE, sorted.
listed_symbols() {
	sed -n 's/^ \([^ ]*\) .*/\1/p' "$1" | sort
}

if [ $# = 0 ]; then
	libs=$(build_libraries "$top/build")
elif [ $# = 1 ] && [ -d "$1" ]; then
	libs=$(build_libraries "$1")
else
	libs=$*
fi

if [ $update = 1 ]; then
	mkdir -p "$abi_dir" "$debian_dir"
	for lib in $libs; do
		name=$(name_of "$lib")
		# No paths of this machine in the file (the build folder, the
		# sources' locations): it is committed.
		abidw --no-corpus-path --no-comp-dir-path --no-show-locs --drop-undefined-syms \
			--headers-dir "$tmp/headers" --drop-private-types \
			--out-file "$abi_dir/$name.abi" "$lib" || die "abidw $lib failed"
		echo "check-abi: wrote $abi_dir/$name.abi ($(soname_of "$lib"))"
		write_symbols "$lib" "$(soname_of "$lib")"
	done
	exit 0
fi

failed=0
for lib in $libs; do
	[ -f "$lib" ] || die "no library $lib"
	name=$(name_of "$lib")
	case " $LIBRARIES " in
	*" $name "*) ;;
	*) die "$lib is none of: $LIBRARIES" ;;
	esac
	baseline=$abi_dir/$name.abi
	[ -f "$baseline" ] || die "no baseline $baseline: scripts/check-abi.sh --update writes it"
	soname=$(soname_of "$lib")
	base_soname=$(sed -n "s/.*<abi-corpus[^>]* soname='\([^']*\)'.*/\1/p" "$baseline" | head -n1)
	rc=0
	abidiff --no-added-syms --headers-dir1 "$tmp/headers" --headers-dir2 "$tmp/headers" \
		"$baseline" "$lib" >"$tmp/report" 2>&1 || rc=$?
	report=$(cat "$tmp/report")
	if [ $((rc & ABIDIFF_TOOL_ERROR)) != 0 ]; then
		printf '%s\n' "$report" >&2
		die "abidiff $baseline $lib failed (status $rc)"
	fi
	if [ $((rc & ABIDIFF_ANY_CHANGE)) = 0 ]; then
		echo "check-abi: $lib ($soname): compatible with $baseline"
	elif [ "$soname" != "$base_soname" ]; then
		printf '%s\n' "$report"
		echo "check-abi: $lib: the soname moved from $base_soname to $soname: the changes" \
			"above are allowed; run scripts/check-abi.sh --update to make this the baseline"
		continue
	else
		printf '%s\n' "$report" >&2
		echo "check-abi: $lib: incompatible with $baseline, and the soname is still $soname:" \
			"undo the change, or move the soname (docs/packaging.md)" >&2
		failed=1
		continue
	fi
	symbols=$debian_dir/$(package_of "$soname").symbols
	if [ ! -f "$symbols" ]; then
		echo "check-abi: no $symbols: scripts/check-abi.sh --update writes it" >&2
		failed=1
	elif listed_symbols "$symbols" >"$tmp/listed" && exported_symbols "$lib" >"$tmp/exported" &&
		! cmp -s "$tmp/listed" "$tmp/exported"; then
		echo "check-abi: $symbols does not list what $lib exports (scripts/check-abi.sh --update):" >&2
		diff -u --label "$symbols" --label "$lib" "$tmp/listed" "$tmp/exported" >&2 || true
		failed=1
	else
		echo "check-abi: $symbols lists the $(exported_symbols "$lib" | wc -l) symbols of $lib"
	fi
done
exit $failed
