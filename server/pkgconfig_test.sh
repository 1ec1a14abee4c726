#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# pkg-config gr_api_server works from the build tree, uninstalled
# (meson-uninstalled/): every folder its Cflags and Libs name exists, and
# examples/embed_table builds and links with those flags alone.
# usage: pkgconfig_test.sh BUILD_ROOT EXAMPLES_DIR CC

set -eu
build=$1
examples=$2
cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export PKG_CONFIG_PATH="$build/meson-uninstalled"
flags=$(pkg-config --cflags --libs gr_api_server) || {
	echo "pkg-config gr_api_server failed from $PKG_CONFIG_PATH" >&2
	exit 1
}
for flag in $flags; do
	case $flag in
	-I* | -L*)
		dir=${flag#-?}
		if [ ! -d "$dir" ]; then
			echo "pkg-config gr_api_server names $dir, which does not exist: $flags" >&2
			exit 1
		fi
		;;
	esac
done
# shellcheck disable=SC2086
"$cc" -Wall -Werror -I"$examples" -o "$tmp/embed_table" "$examples/embed_table.c" $flags
echo "embed_table builds from the build tree with: $flags"
