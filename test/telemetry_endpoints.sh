#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# DPDK telemetry endpoints of shmchand --telemetry, read on the EAL runtime
# directory's dpdk_telemetry.v2 socket as dpdk-telemetry.py reads it
# (SOCK_SEQPACKET, one command per message, one JSON answer each):
#   /shmchan/info     the daemon's pid and version;
#   /shmchan/clients  a live channel client (test/ping2_loop.c), with its
#                     pid and backing;
#   /shmchan/stats    one channel attached, requests counted;
#   /shmchan/types    GR_PING2 (the client's) counted; /shmchan/types,GR_PING2
#                     and /shmchan/types,0xcafe1988 its histograms, which
#                     add up to its count;
# and dpdk-telemetry.py itself, when installed, answers /shmchan/info. A
# daemon without --telemetry has no telemetry socket (the default).
#
#   telemetry_endpoints.sh DAEMON_BIN PING2_LOOP_BIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN PING2_LOOP_BIN" "$@"
ping2_loop=$2
READY_WAIT_S=10
QUERY_TIMEOUT_S=10

# Where EAL 22.11 puts the runtime directory of a file prefix.
runtime_dir() {
	if [ "$(id -u)" = 0 ]; then
		echo "/var/run/dpdk/$SHMT_PREFIX"
	else
		echo "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$SHMT_PREFIX"
	fi
}

start_daemon
[ ! -e "$(runtime_dir)/dpdk_telemetry.v2" ] ||
	shmt_fail "a daemon without --telemetry opened a telemetry socket"
stop_daemon

start_daemon --telemetry
shmt_client_start shm "$ping2_loop" "$SHMT_SOCK"
shmt_clients_wait_ready "$READY_WAIT_S"
shm_pid=${shmt_client_pid[shm]}
sock=$(runtime_dir)/dpdk_telemetry.v2
[ -S "$sock" ] || shmt_fail "no telemetry socket $sock"

shmt_run_bounded "$QUERY_TIMEOUT_S" python3 -c '
import json, os, socket, sys
path, daemon_pid, shm_pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
hello = json.loads(s.recv(1 << 16))
max_len = hello["max_output_len"]
assert hello["pid"] == daemon_pid, hello

def query(cmd):
    s.send(cmd.encode())
    return json.loads(s.recv(max_len))[cmd.split(",")[0]]

info = query("/shmchan/info")
assert info["pid"] == daemon_pid and info["version"] != "", info
assert info["max_msg_len"] == 128 * 1024 and info["pollers"] >= 1, info
# As root a poller may take any nice value: none was refused.
assert info["poller_nice_denied"] in ((0,) if os.geteuid() == 0 else (0, 1)), info
clients = query("/shmchan/clients")
assert clients["clients"] == clients["shown"] >= 1, clients
i = clients["pid"].index(shm_pid)
assert clients["transport"][i] == "memfd", clients
assert clients["channel"][i].startswith("shmc-"), clients
assert clients["requests"][i] > 0, clients
stats = query("/shmchan/stats")
assert stats["channels"] == 1 and stats["requests"] > 0, stats
types = query("/shmchan/types")
assert types["types"] == types["shown"] == len(types["name"]) > 0, types
i = types["name"].index("GR_PING2")
assert types["type"][i] == 0xcafe1988 and types["count"][i] > 0, types
for param in ("GR_PING2", "0xcafe1988"):
    one = query("/shmchan/types," + param)
    assert one["name"] == "GR_PING2" and one["count"] > 0, one
    assert len(one["handle_hist_log2_ns"]) == 32, one
    assert sum(one["handle_hist_log2_ns"]) == one["count"], one
    assert sum(one["queue_hist_log2_ns"]) == one["count"], one
print("telemetry endpoints: ok")
' "$sock" "$SHMT_PID" "$shm_pid" || shmt_fail "telemetry endpoints"

tool=$(command -v dpdk-telemetry.py || true)
if [ -n "$tool" ]; then
	out=$(echo /shmchan/info | shmt_run_bounded "$QUERY_TIMEOUT_S" "$tool" -f "$SHMT_PREFIX") ||
		shmt_fail "dpdk-telemetry.py -f $SHMT_PREFIX failed: $out"
	echo "$out" | grep -q "\"pid\": $SHMT_PID" || shmt_fail "dpdk-telemetry.py: $out"
	echo "dpdk-telemetry.py: ok"
else
	echo "dpdk-telemetry.py: not installed (Debian package dpdk-dev), not run"
fi

shmt_clients_stop
stop_daemon
