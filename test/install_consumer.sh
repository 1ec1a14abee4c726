#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# meson install into a DESTDIR puts the daemon, the CLI, the client and
# server libraries, their headers in include/shmchan/, their pkg-config
# files, the man pages (when scdoc built them), the systemd unit and the
# Python package in place;
# a program built with pkg-config alone against them talks to the installed
# daemon, and the installed shmchanctl lists it; examples/embed_table, built
# with pkg-config gr_api_server alone, serves that program too. The three
# ways of docs/building.md, each run here as the page writes it:
# - the installed tree: PKG_CONFIG_PATH into the DESTDIR alone (the .pc file
#   finds its prefix from its own folder, as it does in /usr/local);
# - a DESTDIR as a sysroot: PKG_CONFIG_SYSROOT_DIR too, the same flags;
# - the build tree: the uninstalled .pc file (build/meson-uninstalled)
#   builds examples/, which run with LD_LIBRARY_PATH=build/client.
#
# A Grout program too: a ping2_perf of the RFC's shape (rfc_ping2_perf.c:
# gr_api_client_impl.h, gr_api.h, Grout's calls and clock, GROUT_SOCK_PATH)
# builds unchanged the same way, and runs on the channel (the daemon's
# channel counters see its calls), then on the socket with
# GR_API_TRANSPORT=socket (they see none); the ratio of their calls/s is
# printed, not checked: the tenfold and more of a quiet machine
# (docs/performance.md) falls to less than one on a loaded one, or under
# the sanitizers, where a spinning client competes with the daemon for CPUs.
#
#   install_consumer.sh DAEMON_BIN MESON BUILD_ROOT CC
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN MESON BUILD_ROOT CC" "$@"
meson=$2
build_root=$3
cc=$4
CTL_TIMEOUT_S=10
PERF_TIMEOUT_S=20
# Calls of each run: a few hundredths of a second on a quiet machine, a few
# seconds on a loaded one under the sanitizers.
PERF_CALLS_SHM=50000
PERF_CALLS_SOCKET=5000

SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
dest=$SHMT_TMPDIR/dest
"$meson" install -C "$build_root" --no-rebuild --quiet --destdir "$dest" >"$SHMT_TMPDIR/install.log" 2>&1 ||
	shmt_fail "meson install failed: $(cat "$SHMT_TMPDIR/install.log")"

# The build's option $1.
build_option() {
	"$meson" introspect --buildoptions "$build_root" | python3 -c '
import json, sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}
prefix=$(build_option prefix)
# A library built with sanitizers needs their runtime first in the program.
sanitize=$(build_option b_sanitize)
sanitize_flags=
if [ "$sanitize" != none ] && [ -n "$sanitize" ]; then
	sanitize_flags=-fsanitize=$sanitize
fi
root=$dest$prefix
pc=$(find "$root" -name gr_api_client.pc)
[ -n "$pc" ] || shmt_fail "no gr_api_client.pc under $root"
for f in sbin/shmchand bin/shmchanctl include/shmchan/gr_api.h include/shmchan/gr_api_client.h \
	include/shmchan/gr_api_client_impl.h include/shmchan/gr_clock.h include/shmchan/gr_shm.h \
	include/shmchan/gr_api_server.h lib/systemd/system/shmchand.service; do
	[ -e "$root/$f" ] || shmt_fail "not installed: $f"
done
if [ -e "$build_root/docs/man/shmchand.8" ]; then
	for f in man8/shmchand.8 man1/shmchanctl.1 man1/ping2_perf.1 man3/gr_api_client.3 \
		man3/gr_api_server.3; do
		[ -s "$root/share/man/$f" ] || shmt_fail "not installed: share/man/$f"
	done
fi
# The Python package, from its own meson project (python/meson.build, a
# subproject of this one), into a site directory of the prefix.
[ -n "$(find "$root" -path '*-packages/shmchan/__init__.py')" ] ||
	shmt_fail "not installed: the Python package shmchan"
libdir=$(dirname "$(dirname "$pc")")
for f in libgr_api_client.so libgr_api_server.so libgr_api_server.a pkgconfig/gr_api_server.pc; do
	[ -e "$libdir/$f" ] || shmt_fail "no $f in $libdir"
done
echo "installed files: ok"

# pkg-config alone: the .pc file's paths follow it into the DESTDIR.
# docs/building.md: export PKG_CONFIG_PATH=$DESTDIR/usr/local/lib/x86_64-linux-gnu/pkgconfig
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir_real=$(cd "$libdir" && pwd -P)
include_real=$(cd "$root/include/shmchan" && pwd -P)
# The folders of the -I and -L flags of pkg-config's output, resolved.
check_flags() {
	local flags=$1 how=$2 inc lib
	inc=$(printf '%s\n' $flags | sed -n 's/^-I//p')
	lib=$(printf '%s\n' $flags | sed -n 's/^-L//p')
	[ -n "$inc" ] && [ "$(cd "$inc" 2>/dev/null && pwd -P)" = "$include_real" ] ||
		shmt_fail "$how: -I is not $root/include/shmchan: $flags"
	[ -n "$lib" ] && [ "$(cd "$lib" 2>/dev/null && pwd -P)" = "$libdir_real" ] ||
		shmt_fail "$how: -L is not $libdir: $flags"
}
flags=$(pkg-config --cflags --libs gr_api_client) || shmt_fail "pkg-config gr_api_client failed"
check_flags "$flags" "PKG_CONFIG_PATH alone"
echo "PKG_CONFIG_PATH alone: $flags"
# docs/building.md: PKG_CONFIG_SYSROOT_DIR=$DESTDIR, for a .pc file of a sysroot.
flags=$(PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs gr_api_client) ||
	shmt_fail "pkg-config gr_api_client with PKG_CONFIG_SYSROOT_DIR failed"
check_flags "$flags" "PKG_CONFIG_SYSROOT_DIR"
echo "PKG_CONFIG_SYSROOT_DIR: $flags"
cat >"$SHMT_TMPDIR/consumer.c" <<'C'
// A program of a user: the installed headers and library only.
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
	struct gr_api_client *c = gr_api_client_connect(argc > 1 ? argv[1] : NULL);
	struct gr_ping2 req, resp;
	long id;

	if (c == NULL) {
		perror("connect");
		return 1;
	}
	memset(&req, 0x5a, sizeof(req));
	id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	if (id < 0 || gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp)) < 0) {
		perror("ping2");
		return 1;
	}
	printf("echo %s over %s\n",
	       memcmp(&req, &resp, sizeof(req)) == 0 ? "ok" : "wrong",
	       gr_api_client_transport(c) == GR_API_TRANSPORT_SHM ? "shm" : "socket");
	return gr_api_client_disconnect(c) == 0 ? 0 : 1;
}
C
# shellcheck disable=SC2086
"$cc" -Wall -Werror $sanitize_flags -o "$SHMT_TMPDIR/consumer" "$SHMT_TMPDIR/consumer.c" $flags ||
	shmt_fail "the consumer does not build with: $flags"
echo "consumer built with: $flags"
# shellcheck disable=SC2086
"$cc" -Wall -Werror $sanitize_flags -o "$SHMT_TMPDIR/ping2_perf" "$(dirname "$0")/rfc_ping2_perf.c" \
	$flags || shmt_fail "the RFC's ping2_perf does not build with: $flags"
echo "the RFC's ping2_perf built unchanged with: $flags"

# The server library the same way: its .pc file follows it into the DESTDIR
# too; DPDK's and libevent's are where the system has them.
server_flags=$(pkg-config --cflags --libs gr_api_server) || shmt_fail "pkg-config gr_api_server failed"
src=$(dirname "$0")/../examples
# shellcheck disable=SC2086
"$cc" -Wall -Werror $sanitize_flags -I"$src" -o "$SHMT_TMPDIR/embed_table" "$src/embed_table.c" \
	$server_flags || shmt_fail "embed_table does not build with: $server_flags"
echo "embed_table built with: $server_flags"

# The installed daemon, CLI and libraries together.
export LD_LIBRARY_PATH=$libdir
SHMT_DAEMON=$root/sbin/shmchand
start_daemon
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$SHMT_TMPDIR/consumer" "$SHMT_SOCK") ||
	shmt_fail "consumer: $out"
[ "$out" = "echo ok over shm" ] || shmt_fail "consumer: '$out'"
echo "consumer: $out"
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$root/bin/shmchanctl" -s "$SHMT_SOCK" info) ||
	shmt_fail "installed shmchanctl info: $out"
echo "$out" | grep -Eq "^pid +$SHMT_PID$" || shmt_fail "installed shmchanctl info: $out"
echo "installed shmchanctl: ok"

# The build tree: the uninstalled .pc file names the build's library and
# the source's headers; the programs find the library with LD_LIBRARY_PATH
# (the library and the .pc files carry no rpath: docs/building.md).
# docs/building.md: export PKG_CONFIG_PATH=$PWD/build/meson-uninstalled
src_root=$(cd "$(dirname "$0")/.." && pwd)
flags=$(PKG_CONFIG_PATH=$build_root/meson-uninstalled pkg-config --cflags --libs gr_api_client) ||
	shmt_fail "pkg-config gr_api_client from $build_root/meson-uninstalled failed"
for example in blocking_client epoll_controller; do
	# shellcheck disable=SC2086
	"$cc" -Wall -Werror $sanitize_flags -o "$SHMT_TMPDIR/$example" \
		"$src_root/examples/$example.c" $flags ||
		shmt_fail "examples/$example.c does not build from the uninstalled .pc: $flags"
	loaded=$(LD_LIBRARY_PATH=$build_root/client ldd "$SHMT_TMPDIR/$example" |
		awk '$1 ~ /^libgr_api_client/ { print $3 }')
	[ "$(cd "$(dirname "$loaded")" && pwd -P)" = "$(cd "$build_root/client" && pwd -P)" ] ||
		shmt_fail "$example would load libgr_api_client from '$loaded', not $build_root/client"
	out=$(LD_LIBRARY_PATH=$build_root/client shmt_run_bounded "$CTL_TIMEOUT_S" \
		"$SHMT_TMPDIR/$example" "$SHMT_SOCK") || shmt_fail "$example from the build tree: $out"
	echo "$example from the build tree: ${out%%$'\n'*}"
done
echo "examples built from the uninstalled .pc: $flags"

# Requests the daemon took on its channels so far.
channel_requests() {
	"$root/bin/shmchanctl" -s "$SHMT_SOCK" -j stats |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["requests"])'
}
# The calls/s of one ping2_perf run: its last word but one.
perf_rate() {
	local out
	out=$(shmt_run_bounded "$PERF_TIMEOUT_S" "$@") || shmt_fail "ping2_perf $*: $out"
	echo "ping2_perf: $out" >&2
	echo "$out" | awk '/ calls\/s$/ { print $(NF - 1) }'
}
before=$(channel_requests)
# No -s: GROUT_SOCK_PATH names the socket, as in the RFC's.
shm_rate=$(GROUT_SOCK_PATH=$SHMT_SOCK perf_rate "$SHMT_TMPDIR/ping2_perf" -n "$PERF_CALLS_SHM")
after=$(channel_requests)
[ $((after - before)) -ge "$PERF_CALLS_SHM" ] ||
	shmt_fail "ping2_perf was not on the channel: $((after - before)) channel requests"
socket_rate=$(GR_API_TRANSPORT=socket perf_rate "$SHMT_TMPDIR/ping2_perf" -s "$SHMT_SOCK" \
	-n "$PERF_CALLS_SOCKET")
[ "$(channel_requests)" = "$after" ] || shmt_fail "ping2_perf forced to the socket used a channel"
[ -n "$shm_rate" ] && [ -n "$socket_rate" ] || shmt_fail "ping2_perf printed no calls/s"
python3 -c '
import sys
shm, sock = float(sys.argv[1]), float(sys.argv[2])
print(f"the RFC ping2_perf: {shm:.0f} calls/s on the channel, {sock:.0f} on the socket: {shm / sock:.1f}x")
' "$shm_rate" "$socket_rate"
stop_daemon

SHMT_DAEMON=$SHMT_TMPDIR/embed_table
start_daemon
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$SHMT_TMPDIR/consumer" "$SHMT_SOCK") ||
	shmt_fail "consumer of embed_table: $out"
[ "$out" = "echo ok over shm" ] || shmt_fail "consumer of embed_table: '$out'"
echo "embed_table on the installed library: $out"
stop_daemon
