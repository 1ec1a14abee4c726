#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The USDT probes (docs/tracing.md). Both libraries carry every probe of
# their list in their notes (readelf -n), and a build with -Dprobes=disabled
# none. As root with tracefs: a kernel uprobe on the server library's
# "request" probe (what bpftrace and perf attach, placed by
# probes_uprobe.py from the notes), its argument 4 the request's type,
# counts the GR_PING requests of `shmchanctl ping -c N` exactly, on the
# channel and on the socket (the daemon's threads only: other tests may
# run the same library); skipped (77) for that part only where it
# cannot be done.
#
#   probes.sh SHMCHAND SHMCHANCTL SERVER_LIB CLIENT_LIB enabled|disabled
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND SHMCHANCTL SERVER_LIB CLIENT_LIB enabled|disabled" "$@"
ctl=$2 server_lib=$3 client_lib=$4 mode=$5
uprobe=$(dirname "$0")/probes_uprobe.py
SERVER_PROBES="channel_attach channel_detach client_doorbell dispatch event_drop event_publish \
poller_nice poller_sleep poller_wake request response"
CLIENT_PROBES="daemon_doorbell request_send"
PINGS=50
GR_PING=0xcafe1987
CTL_TIMEOUT_S=60

# expect_probes LIB "NAMES": LIB's probes are exactly NAMES (sorted).
expect_probes() {
	local got
	got=$(python3 "$uprobe" list "$1" | tr '\n' ' ' | sed 's/ $//')
	[ "$got" = "$2" ] || shmt_fail "$(basename "$1"): probes '$got', expected '$2'"
	echo "$(basename "$1"): $got"
}

if [ "$mode" = disabled ]; then
	expect_probes "$server_lib" ""
	expect_probes "$client_lib" ""
	exit 0
fi
expect_probes "$server_lib" "$SERVER_PROBES"
expect_probes "$client_lib" "$CLIENT_PROBES"

tracefs=/sys/kernel/tracing
[ -d "$tracefs/events" ] || tracefs=/sys/kernel/debug/tracing
if [ "$(id -u)" != 0 ] || [ ! -w "$tracefs/uprobe_events" ]; then
	echo "SKIP: counting with a uprobe needs root and tracefs ($tracefs/uprobe_events)"
	exit 77
fi

group=shmt_$$
instance=$tracefs/instances/$group
# The uprobe and the tracing instance go with the test, whatever ends it.
eval "lib_$(declare -f shmt_cleanup)"
shmt_cleanup() {
	if [ -d "$instance" ]; then
		echo 0 >"$instance/events/$group/enable" 2>/dev/null || true
		rmdir "$instance" 2>/dev/null || true
	fi
	echo "-:$group/request" >>"$tracefs/uprobe_events" 2>/dev/null || true
	lib_shmt_cleanup
}

# The library that runs is the one in the daemon's maps: a uprobe is on a
# file, and fires in every process that maps it.
start_daemon -S 100 --hugepages off
lib=$(awk '$6 ~ /libgr_api_server\.so/ { print $6; exit }' "/proc/$SHMT_PID/maps")
[ -n "$lib" ] || shmt_fail "the daemon maps no libgr_api_server.so"
line=$(python3 "$uprobe" uprobe "$lib" request "$group/request" 4)
echo "$line" >>"$tracefs/uprobe_events" ||
	shmt_fail "the kernel refused the uprobe '$line'"
mkdir "$instance"
# The daemon's threads only: the uprobe fires in every process that maps the
# library, other tests' daemons among them.
tids=("/proc/$SHMT_PID/task"/*)
echo "${tids[@]##*/}" >"$instance/set_event_pid"
echo 1 >"$instance/events/$group/enable"

for transport in shm socket; do
	echo >"$instance/trace"
	shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" ping -c "$PINGS" -i 0 \
		-t "$transport" >/dev/null || shmt_fail "shmchanctl ping over $transport failed"
	got=$(grep -c "arg1=$((GR_PING))\b" "$instance/trace" || true)
	[ "$got" = "$PINGS" ] ||
		shmt_fail "$transport: the request probe saw $got GR_PING, expected $PINGS: $(tail -5 "$instance/trace")"
	echo "$transport: the request probe counted the $PINGS GR_PING of the run"
done
