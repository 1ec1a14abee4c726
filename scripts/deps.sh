#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian packages shmchan needs, when they are missing.
# Idempotent; does nothing when all are there.
#
#   scripts/deps.sh [base] [fuzz] [bench] [deb]
#
#   base   (the default) build, make run, make test, the man pages
#   fuzz   make fuzz: clang and its libFuzzer runtime (base too)
#   bench  make bench: gnuplot for the plots of docs/performance.md (base too)
#   deb    make deb: the Debian packaging tools and lintian (base too;
#          docs/packaging.md)
set -eu

# make: a bare image may lack it, and `make` is how the README starts
# (apt-get install make first, then make). dpdk-dev: dpdk-telemetry.py,
# which a test runs. A test checks the systemd unit with systemd-analyze
# where systemd is installed, and skips that check elsewhere: a container
# needs no init system to build and test. python3-pytest: the tests of the
# Python package (python/tests); python3-dev: the headers its C module
# (python/shmchan_fast.c) is built with; python3-mesonpy and python3-venv:
# the test that installs the package with pip into a virtual environment.
# abigail-tools: abidw and abidiff, of scripts/check-abi.sh and its test.
# systemtap-sdt-dev: sys/sdt.h, the USDT probes (docs/tracing.md).
base="make libdpdk-dev dpdk-dev liburcu-dev libevent-dev libcmocka-dev meson ninja-build \
pkg-config gcc g++ strace procps util-linux python3 python3-dev python3-pytest scdoc \
python3-mesonpy python3-venv abigail-tools systemtap-sdt-dev"
fuzz="clang libclang-rt-14-dev"
bench="gnuplot-nox"
# dpkg-buildpackage and what debian/control builds with beyond base
# (build-essential: dpkg-checkbuilddeps asks for it; dh-python: the Python
# package's dependencies), and lintian to check the result.
deb="build-essential dpkg-dev debhelper dh-python lintian"

pkgs=$base
for target in "$@"; do
	case $target in
	base) ;;
	fuzz) pkgs="$pkgs $fuzz" ;;
	bench) pkgs="$pkgs $bench" ;;
	deb) pkgs="$pkgs $deb" ;;
	*)
		echo "usage: $0 [base] [fuzz] [bench] [deb]" >&2
		exit 2
		;;
	esac
done

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
