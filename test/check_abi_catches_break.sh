#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# scripts/check-abi.sh tells a compatible library from a broken one. From
# the objects of the client library the build made, relinked with the
# build's own link command, into a folder of the test's:
# - the same library passes, and so does one whose private handle struct
#   (opaque in the headers) changed;
# - without one exported function (removed from a copy of the version
#   script) it fails, naming the function;
# - with one function's parameter widened (gr_api_message_name() takes a
#   uint64_t: a copy of gr_api.h and of message.c, recompiled with the
#   build's own compile command) it fails, naming the function;
# - broken, but with its soname moved to libgr_api_client.so.1, it passes
#   and says the soname moved.
# The baseline is made by check-abi.sh --update from the build's library,
# into folders of the test's, so the test judges the checker whatever the
# state of the committed abi/ (which .ci/run checks).
#
#   check_abi_catches_break.sh CHECK_ABI BUILD_ROOT LIBGR_API_CLIENT.so SOURCE_ROOT
set -eu

if [ $# -ne 4 ]; then
	echo "usage: $0 CHECK_ABI BUILD_ROOT LIBGR_API_CLIENT.so SOURCE_ROOT" >&2
	exit 2
fi
check_abi=$1
build_root=$(cd "$2" && pwd)
lib=$3
src_root=$(cd "$4" && pwd)

if ! command -v abidiff >/dev/null || ! command -v abidw >/dev/null; then
	echo "SKIP: abidiff and abidw missing (scripts/deps.sh installs abigail-tools)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shmt-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export SHMCHAN_ABI_DIR=$tmp/abi SHMCHAN_DEBIAN_DIR=$tmp/debian

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

lib_rel=$(realpath --relative-to="$build_root" "$lib")
lib_file=$(basename "$lib_rel")
# The build's link command of the library (ninja's, run in the build folder).
link_cmd=$(ninja -C "$build_root" -t commands "$lib_rel" | tail -n1)
case $link_cmd in
*" -o $lib_rel "*) ;;
*) fail "no link command of $lib_rel: $link_cmd" ;;
esac
map=$(echo "$link_cmd" | sed -n 's/.*--version-script=\([^ ]*\).*/\1/p')
[ -f "$map" ] || fail "no version script in the link command: $link_cmd"

# relink OUT_DIR OUT_FILE [sed expressions on the command...]: the library,
# linked again from the build's objects into OUT_DIR/OUT_FILE. Without
# link-time optimisation (-fno-lto last): the objects keep machine code
# beside their LTO bytecode (-ffat-lto-objects, meson.build), and the ABI
# is in their debugging information and the version script, which the
# optimisation does not change; an LTO link takes seconds, this one a tenth
# of a second.
relink() {
	local out=$1/$2 cmd
	shift 2
	mkdir -p "$(dirname "$out")"
	cmd="$(echo "$link_cmd" | sed -e "s| -o $lib_rel | -o $out |" "$@") -fno-lto"
	(cd "$build_root" && eval "$cmd") >"$tmp/link.log" 2>&1 ||
		fail "relinking failed: $cmd: $(cat "$tmp/link.log")"
}

# recompile NAME SRC_DIR INCLUDE_DIR: SRC_DIR/NAME.c compiled as the build
# compiles client/NAME.c, with INCLUDE_DIR first on the include path, into
# SRC_DIR/NAME.c.o, without LTO bytecode (relink does not use it); prints
# the build's object it replaces. A header beside
# it in SRC_DIR takes the place of the build's for #include "...".
recompile() {
	local name=$1 dir=$2 inc=$3 obj cmd
	obj=$(echo "$link_cmd" | grep -oE "[^ ]*/$name\.c\.o")
	[ -n "$obj" ] || fail "no $name.c.o in the link command"
	cmd=$(python3 - "$build_root/compile_commands.json" "$obj" "$dir/$name.c" "$inc" <<'PY'
import json, shlex, sys
db, obj, src, inc = sys.argv[1:5]
entry = next(e for e in json.load(open(db)) if e["output"] == obj)
args = shlex.split(entry["command"])
out, skip = [args[0], "-I" + inc], 0
for a in args[1:]:
    if skip:
        skip -= 1
    elif a in ("-MD", "-MMD"):
        pass
    elif a in ("-MQ", "-MF", "-MT", "-o"):
        skip = 1
    else:
        out.append(src if a == entry["file"] else a)
print(shlex.join(out + ["-fno-lto", "-o", src + ".o"]))
PY
	) || fail "no compile command of $obj"
	(cd "$build_root" && eval "$cmd") >"$tmp/cc.log" 2>&1 ||
		fail "compiling $dir/$name.c failed: $cmd: $(cat "$tmp/cc.log")"
	echo "$obj"
}

# check LABEL EXPECTED_STATUS LIBRARY: run check-abi.sh, keep its output.
check() {
	local label=$1 expected=$2 rc=0
	"$check_abi" "$3" >"$tmp/$label.out" 2>&1 || rc=$?
	sed "s/^/  $label: /" "$tmp/$label.out"
	[ "$rc" = "$expected" ] ||
		fail "$label: check-abi.sh exited $rc, not $expected"
}

"$check_abi" --update "$lib" >"$tmp/update.out" 2>&1 ||
	fail "check-abi.sh --update $lib: $(cat "$tmp/update.out")"

relink "$tmp/same" "$lib_file"
check same 0 "$tmp/same/$lib_file"
echo "the library relinked as it was: compatible"

# A private change: the handle's struct (client_priv.h, opaque in the
# headers) grows a member at its start, in client.c's copy. The private
# header client.c includes beside it (shm_fast.h) is copied too, so that
# its own #include "client_priv.h" finds the changed copy.
mkdir -p "$tmp/private"
cp "$src_root/client/client.c" "$src_root/client/shm_fast.h" "$tmp/private/"
sed 's/^struct gr_api_client {$/&\n\tlong test_member;/' "$src_root/client/client_priv.h" \
	>"$tmp/private/client_priv.h"
grep -q "test_member" "$tmp/private/client_priv.h" || fail "no struct gr_api_client in client_priv.h"
obj=$(recompile client "$tmp/private" "$src_root/api")
relink "$tmp/private" "$lib_file" -e "s| $obj | $tmp/private/client.c.o |"
# Its debugging information (the build's -g) describes the new member.
grep -q test_member "$tmp/private/$lib_file" || fail "the relinked library does not have the change"
check private 0 "$tmp/private/$lib_file"
echo "a private struct changed: compatible"

# A removed function: gr_api_client_fd (a line of its own in the map).
removed=gr_api_client_fd
grep -q "^[[:space:]]*$removed;" "$map" || fail "$map does not export $removed"
sed "/^[[:space:]]*$removed;/d" "$map" >"$tmp/removed.map"
relink "$tmp/removed" "$lib_file" -e "s|--version-script=$map|--version-script=$tmp/removed.map|"
check removed 1 "$tmp/removed/$lib_file"
grep -q "$removed" "$tmp/removed.out" || fail "removed: the report does not name $removed"
echo "without $removed: incompatible, and said so"

# A changed signature: gr_api_message_name(uint32_t) -> (uint64_t), in a
# copy of the public headers and of the file that defines it.
changed=gr_api_message_name
mkdir -p "$tmp/api" "$tmp/src"
cp "$src_root"/api/*.h "$tmp/api/"
sed -i "s/\b$changed(uint32_t type)/$changed(uint64_t type)/" "$tmp/api/gr_api.h"
grep -q "$changed(uint64_t type)" "$tmp/api/gr_api.h" || fail "no $changed(uint32_t type) in gr_api.h"
sed "s/\b$changed(uint32_t type)/$changed(uint64_t type)/" "$src_root/client/message.c" >"$tmp/src/message.c"
grep -q "$changed(uint64_t type)" "$tmp/src/message.c" || fail "no $changed(uint32_t type) in message.c"
obj=$(recompile message "$tmp/src" "$tmp/api")
relink "$tmp/changed" "$lib_file" -e "s| $obj | $tmp/src/message.c.o |"
check changed 1 "$tmp/changed/$lib_file"
grep -q "$changed" "$tmp/changed.out" || fail "changed: the report does not name $changed"
echo "with $changed(uint64_t): incompatible, and said so"

# The same break with the soname moved on.
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
moved=${soname%.so.*}.so.1
relink "$tmp/moved" "$moved.0.0" -e "s| $obj | $tmp/src/message.c.o |" \
	-e "s|-soname,$soname|-soname,$moved|" \
	-e "s|--version-script=$map|--version-script=$tmp/removed.map|"
check moved 0 "$tmp/moved/$moved.0.0"
grep -q "soname moved from $soname to $moved" "$tmp/moved.out" || fail "moved: the move is not said"
echo "the same breaks with the soname $moved: allowed, and said so"
