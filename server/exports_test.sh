#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors

# The shared server library exports exactly the functions declared in
# gr_api_server.h (its static inline helpers are no symbols), each with a
# comment above its declaration, and no symbol of the code it links in.
# Each is exported by name from the version script, in one of its version
# nodes (GR_API_SERVER_*), and the script exports by name only: a pattern
# could export a private function that happens to match it.
# usage: exports_test.sh NM LIBGR_API_SERVER.so GR_API_SERVER.h GR_API_SERVER.MAP

set -eu
nm_prog=$1
lib=$2
header=$3
map=$4

# Declarations start a line with their return type (or, wrapped, with the
# name after it), a struct pointer too; macros, typedefs, struct
# definitions and static inline helpers do not count.
declared=$(awk '
	/^[a-z_]/ && !/^(static|typedef)/ && !/^struct [a-z_]+ *[{;]/ && prev !~ /^static/ { print }
	{ prev = $0 }
' "$header" | grep -oE '\b(__)?gr_api_[a-z_]+\(' | tr -d '(' | sort -u)
# nm -D prints a versioned symbol as NAME@@NODE.
symbols=$("$nm_prog" -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u)
exported=$(printf '%s\n' "$symbols" | sed 's/@.*//' | sort -u)
if [ -z "$declared" ] || [ "$declared" != "$exported" ]; then
	echo "exported symbols differ from the header's functions (a new one goes into $map):" >&2
	printf 'declared:\n%s\nexported:\n%s\n' "$declared" "$exported" >&2
	exit 1
fi
unversioned=$(printf '%s\n' "$symbols" | grep -v '@@GR_API_SERVER_' || true)
if [ -n "$unversioned" ]; then
	printf 'exported outside a GR_API_SERVER_ version node:\n%s\n' "$unversioned" >&2
	exit 1
fi
patterns=$(sed -e 's/#.*//' "$map" | grep -E '[*?[]' | grep -vE '^[[:space:]]*\*;[[:space:]]*$' || true)
if [ -n "$patterns" ]; then
	printf '%s exports by pattern, not by name:\n%s\n' "$map" "$patterns" >&2
	exit 1
fi

# Every declaration has a comment right above it, or follows one that has
# (a group, as gr_api_server_lock() and gr_api_server_unlock()).
undocumented=$(awk '
	/^[a-z_].*[ *](__)?gr_api_[a-z_]+\(/ && !/^(static|typedef)/ && !/^struct [a-z_]+ *[{;]/ {
		if (prev !~ /^\/\// && !prev_decl)
			print
		prev = $0
		prev_decl = /;$/
		next
	}
	{ prev = $0; prev_decl = 0 }
' "$header")
if [ -n "$undocumented" ]; then
	printf 'declared without a comment:\n%s\n' "$undocumented" >&2
	exit 1
fi
echo "$lib exports the $(printf '%s\n' "$exported" | wc -l) documented functions of the header"
