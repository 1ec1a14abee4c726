#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# Run COMMAND only if DPDK can have hugepages here, else skip (exit 77) and
# say why. The tests of DPDK secondaries need a daemon with hugepages: a
# primary without them (--no-huge, --in-memory) accepts no secondary.
# `make test` reserves them as root (scripts/hugepages.sh); this script only
# looks.
#
#   need_hugepages.sh COMMAND [ARGS...]
set -eu

# Free 2 MB pages wanted: the daemon's own EAL memory takes a few, each
# memzone channel shares one, and tests run side by side (shmchand's
# --hugepages auto asks for the same).
min_free=16

if [ $# -lt 1 ]; then
	echo "usage: $0 COMMAND [ARGS...]" >&2
	exit 2
fi
free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
if [ -z "$free" ] || [ "$free" -lt "$min_free" ]; then
	echo "SKIP: ${free:-no} free hugepages (need $min_free): run scripts/hugepages.sh as root" >&2
	exit 77
fi
mount_dir=$(awk '$3 == "hugetlbfs" { print $2; exit }' /proc/mounts)
if [ -z "$mount_dir" ]; then
	echo "SKIP: no hugetlbfs mounted: run scripts/hugepages.sh as root" >&2
	exit 77
fi
# EAL creates its hugepage files there: root's mount refuses other users.
if [ ! -w "$mount_dir" ] || [ ! -x "$mount_dir" ]; then
	echo "SKIP: this user may not create files in $mount_dir (hugetlbfs)" >&2
	exit 77
fi
exec "$@"
