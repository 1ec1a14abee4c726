#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian packages shmchan needs to build, test and benchmark,
# when they are missing. Idempotent; does nothing when all are there.
set -eu

pkgs="libdpdk-dev liburcu-dev libevent-dev libcmocka-dev meson ninja-build pkg-config \
gcc g++ strace procps util-linux clang libclang-rt-14-dev gnuplot-nox python3"

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root, or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
