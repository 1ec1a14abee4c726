#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Make 2 MB hugepages available to DPDK when running as root: reserve
# SHMCHAN_HUGEPAGES pages (default 512, 1 GB: two daemons of 128 MB side by
# side in the tests, their secondaries and the benchmarks) if fewer are reserved, and
# mount hugetlbfs on /dev/hugepages if no hugetlbfs is mounted. It only adds:
# a larger reservation or an existing mount of the user's is left as it is.
# Never fails: without hugepages, shmchand runs in --no-huge mode (memfd only)
# and the tests that need hugepages report SKIP.
want=${SHMCHAN_HUGEPAGES:-512}
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages

if [ "$(id -u)" != 0 ]; then
	echo "hugepages: not root, leaving hugepages as they are" >&2
	exit 0
fi
if [ ! -w "$nr" ]; then
	echo "hugepages: $nr not writable, no 2 MB hugepages here" >&2
	exit 0
fi
have=$(cat "$nr")
if [ "$have" -lt "$want" ]; then
	echo "$want" > "$nr" 2>/dev/null || true
	have=$(cat "$nr")
	echo "hugepages: reserved $have pages of 2 MB (asked $want)" >&2
fi
if ! grep -q '^[^ ]* [^ ]* hugetlbfs ' /proc/mounts; then
	mkdir -p /dev/hugepages
	if mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages 2>/dev/null; then
		echo "hugepages: mounted hugetlbfs on /dev/hugepages" >&2
	else
		echo "hugepages: cannot mount hugetlbfs" >&2
	fi
fi
exit 0
