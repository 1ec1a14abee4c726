#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The Debian packages that make deb built (scripts/build-deb.sh), unpacked
# with dpkg-deb -x into a staging root of the test's, never installed on
# the host (docs/packaging.md):
# - each package holds its files: shmchand the daemon, shmchanctl,
#   ping2_perf, the unit, the options file and the man pages; each library
#   package its library under its soname, with a symbols file; the
#   development package the headers, both .so links and static libraries,
#   the .pc files, gr_api_client(3) and gr_api_server(3); python3-shmchan
#   the package and its C module;
# - the dependencies dpkg-shlibdeps found: the client library needs libc
#   alone, the server library DPDK, liburcu and libevent, the daemon the
#   server library, the Python package the client library of its version;
# - a client built with pkg-config gr_api_client from the staging root
#   alone (PKG_CONFIG_SYSROOT_DIR and PKG_CONFIG_LIBDIR: no .pc file of the
#   host), and examples/embed_table.c with pkg-config gr_api_server
#   (PKG_CONFIG_PATH into the staging root: DPDK's and libevent's .pc
#   files are the host's);
# - the staged shmchand (LD_LIBRARY_PATH into the staging root) serves the
#   client on its channel, the staged shmchanctl and the staged Python
#   package (with _shmchan_fast); the embedding application serves the
#   client too.
#
#   deb_packages.sh DEBDIR     (make check-deb: DEBDIR build-deb)
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 DEBDIR" >&2
	exit 2
fi
debdir=$(cd "$1" && pwd)
src_root=$(cd "$(dirname "$0")/.." && pwd)
for tool in dpkg-deb dpkg-architecture dpkg-parsechangelog pkg-config cc; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: no $tool (scripts/deps.sh deb)"
		exit 77
	fi
done
version=$(dpkg-parsechangelog -l "$src_root/debian/changelog" -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
PACKAGES="shmchand libgr-api-client0 libgr-api-server0 libgr-api-dev python3-shmchan"
CTL_TIMEOUT_S=10
PYTHON_TIMEOUT_S=30

SHMT_NAME=deb_packages
# shellcheck source=test/lib.sh
. "$src_root/test/lib.sh"
SHMT_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/shmt-$SHMT_NAME.XXXXXX")
root=$SHMT_TMPDIR/root
libdir=$root/usr/lib/$multiarch
mkdir "$root"

deb_of() {
	local f=$debdir/${1}_${version}_$arch.deb
	[ -f "$f" ] || shmt_fail "no $f: make deb first"
	echo "$f"
}

# The files each package must hold, relative to the root.
expect_files() {
	local pkg=$1 listing f
	shift
	listing=$(dpkg-deb -c "$(deb_of "$pkg")" | awk '{ print $6 }' | sed 's|^\./|/|')
	for f in "$@"; do
		echo "$listing" | grep -qx "$f" || shmt_fail "$pkg has no $f: $listing"
	done
}

for pkg in $PACKAGES; do
	dpkg-deb -x "$(deb_of "$pkg")" "$root"
done
echo "unpacked into $root: $PACKAGES"

expect_files shmchand /usr/sbin/shmchand /usr/bin/shmchanctl /usr/bin/ping2_perf \
	/lib/systemd/system/shmchand.service /etc/default/shmchand \
	/usr/share/man/man8/shmchand.8.gz /usr/share/man/man1/shmchanctl.1.gz \
	/usr/share/man/man1/ping2_perf.1.gz
for lib in client server; do
	pkg=libgr-api-${lib}0
	expect_files "$pkg" "/usr/lib/$multiarch/libgr_api_$lib.so.0"
	dpkg-deb --ctrl-tarfile "$(deb_of "$pkg")" | tar -t | grep -qx './symbols' ||
		shmt_fail "$pkg has no symbols file"
	soname=$(readelf -d "$libdir/libgr_api_$lib.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$soname" = "libgr_api_$lib.so.0" ] || shmt_fail "$pkg: soname $soname"
done
expect_files libgr-api-dev /usr/include/shmchan/gr_api.h /usr/include/shmchan/gr_api_client.h \
	/usr/include/shmchan/gr_api_client_impl.h /usr/include/shmchan/gr_clock.h \
	/usr/include/shmchan/gr_shm.h /usr/include/shmchan/gr_api_server.h \
	"/usr/lib/$multiarch/libgr_api_client.so" "/usr/lib/$multiarch/libgr_api_server.so" \
	"/usr/lib/$multiarch/libgr_api_client.a" "/usr/lib/$multiarch/libgr_api_server.a" \
	"/usr/lib/$multiarch/pkgconfig/gr_api_client.pc" "/usr/lib/$multiarch/pkgconfig/gr_api_server.pc" \
	/usr/share/man/man3/gr_api_client.3.gz /usr/share/man/man3/gr_api_server.3.gz
expect_files python3-shmchan /usr/lib/python3/dist-packages/shmchan/__init__.py
ls "$root"/usr/lib/python3/dist-packages/_shmchan_fast.*.so >/dev/null 2>&1 ||
	shmt_fail "python3-shmchan has no _shmchan_fast"
echo "files: ok"

depends() {
	dpkg-deb -f "$(deb_of "$1")" Depends
}
dep=$(depends libgr-api-client0)
case $dep in
*librte* | *liburcu* | *libevent*) shmt_fail "libgr-api-client0 depends on more than libc: $dep" ;;
*libc6*) ;;
*) shmt_fail "libgr-api-client0: Depends $dep" ;;
esac
dep=$(depends libgr-api-server0)
for d in librte-eal liburcu libevent-core libc6; do
	echo "$dep" | grep -q "$d" || shmt_fail "libgr-api-server0 does not depend on $d: $dep"
done
depends shmchand | grep -q "libgr-api-server0 (>= " ||
	shmt_fail "shmchand does not depend on libgr-api-server0: $(depends shmchand)"
depends python3-shmchan | grep -q "libgr-api-client0 (= $version)" ||
	shmt_fail "python3-shmchan does not depend on libgr-api-client0 $version: $(depends python3-shmchan)"
echo "dependencies: ok"

# A client of the staging root alone: a sysroot, and no .pc file of the host.
cat >"$SHMT_TMPDIR/consumer.c" <<'C'
// A program of a user: the headers and library of the packages only.
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
	struct gr_api_client *c = gr_api_client_connect(argc > 1 ? argv[1] : NULL);
	struct gr_ping2 req, resp;
	long id;

	if (c == NULL) {
		fprintf(stderr, "connect: %s\n", gr_api_client_last_error());
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
# The folders of the -I and -L flags of pkg-config's output $1, resolved,
# are the staging root's.
check_flags() {
	local flags=$1 inc lib
	# shellcheck disable=SC2086
	inc=$(printf '%s\n' $flags | sed -n 's/^-I//p' | head -n1)
	# shellcheck disable=SC2086
	lib=$(printf '%s\n' $flags | sed -n 's/^-L//p' | head -n1)
	[ -n "$inc" ] && [ "$(realpath -m "$inc")" = "$root/usr/include/shmchan" ] &&
		[ -n "$lib" ] && [ "$(realpath -m "$lib")" = "$libdir" ]
}
flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$libdir/pkgconfig PKG_CONFIG_PATH='' \
	pkg-config --cflags --libs gr_api_client) || shmt_fail "pkg-config gr_api_client in $root failed"
check_flags "$flags" || shmt_fail "pkg-config gr_api_client: not the staging root's paths: $flags"
# shellcheck disable=SC2086
cc -Wall -Werror -o "$SHMT_TMPDIR/consumer" "$SHMT_TMPDIR/consumer.c" $flags ||
	shmt_fail "the client does not build with: $flags"
echo "client built with: $flags"

server_flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs gr_api_server) ||
	shmt_fail "pkg-config gr_api_server in $root failed"
check_flags "$server_flags" ||
	shmt_fail "pkg-config gr_api_server: not the staging root's paths: $server_flags"
# shellcheck disable=SC2086
cc -Wall -Werror -I"$src_root/examples" -o "$SHMT_TMPDIR/embed_table" \
	"$src_root/examples/embed_table.c" $server_flags ||
	shmt_fail "examples/embed_table.c does not build with: $server_flags"
echo "embedding application built with: $server_flags"

export LD_LIBRARY_PATH=$libdir
loaded=$(ldd "$SHMT_TMPDIR/consumer" | awk '$1 == "libgr_api_client.so.0" { print $3 }')
[ "$loaded" = "$libdir/libgr_api_client.so.0" ] ||
	shmt_fail "the client would load libgr_api_client from '$loaded', not $libdir"

SHMT_DAEMON=$root/usr/sbin/shmchand
start_daemon
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$SHMT_TMPDIR/consumer" "$SHMT_SOCK") ||
	shmt_fail "client: $out"
[ "$out" = "echo ok over shm" ] || shmt_fail "client of the staged shmchand: '$out'"
echo "client of the staged shmchand: $out"
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$root/usr/bin/shmchanctl" -s "$SHMT_SOCK" info) ||
	shmt_fail "staged shmchanctl info: $out"
echo "$out" | grep -Eq "^pid +$SHMT_PID$" || shmt_fail "staged shmchanctl info: $out"
echo "staged shmchanctl info: ok"
cat >"$SHMT_TMPDIR/python_client.py" <<'PY'
import os
import sys

import shmchan
import shmchan.client

sock, root = sys.argv[1:3]
assert os.path.realpath(shmchan.__file__).startswith(os.path.realpath(root) + "/"), shmchan.__file__
assert shmchan.client._cfast is not None, "no _shmchan_fast"
with shmchan.connect(sock) as c:
    payload = bytes(range(64))
    assert c.ping2(payload) == payload
    print(f"python3-shmchan: ping2 over {c.transport}, through _shmchan_fast")
PY
# Debian's Python, for which python3-shmchan is built.
out=$(shmt_run_bounded "$PYTHON_TIMEOUT_S" env -u SHMCHAN_LIBRARY \
	PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 "$SHMT_TMPDIR/python_client.py" \
	"$SHMT_SOCK" "$root" 2>&1) || shmt_fail "staged python3-shmchan: $out"
[ "$out" = "python3-shmchan: ping2 over shm, through _shmchan_fast" ] ||
	shmt_fail "staged python3-shmchan: $out"
echo "$out"
stop_daemon

SHMT_DAEMON=$SHMT_TMPDIR/embed_table
start_daemon
out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$SHMT_TMPDIR/consumer" "$SHMT_SOCK") ||
	shmt_fail "client of embed_table: $out"
[ "$out" = "echo ok over shm" ] || shmt_fail "client of the embedding application: '$out'"
echo "client of the embedding application: $out"
stop_daemon
echo "deb_packages: the packages work from $root: $PACKAGES"
