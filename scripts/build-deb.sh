#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make deb: the Debian packages of docs/packaging.md, built by
# dpkg-buildpackage -b -us -uc in a copy of the tree (the files git knows
# of, committed or new, not what .gitignore hides), so that the work tree
# and its parent folder stay as they are; then lintian, whose errors fail.
#
#   scripts/build-deb.sh [OUTDIR]     the .deb files in OUTDIR (default build-deb)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-deb}
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/src/shmchan-$version

rm -rf "$out"
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	# --ignore-failed-read: a file deleted but not yet committed.
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$src" -xf -
else
	(cd "$top" && tar --exclude='./build*' --exclude='./results' -cf - .) | tar -C "$src" -xf -
fi

echo "build-deb: dpkg-buildpackage -b -us -uc in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (scripts/deps.sh deb installs what it builds with)" >&2
	exit 1
fi
# dpkg-buildpackage writes into the parent of the tree it builds.
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out/"
rm -rf "$out/src"
ls -1 "$out"/*.deb

changes=$out/shmchan_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).changes
echo "build-deb: lintian $changes"
lintian --fail-on error --display-info "$changes" || {
	echo "build-deb: lintian found errors" >&2
	exit 1
}
