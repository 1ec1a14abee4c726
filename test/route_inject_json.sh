#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# route_inject feeds examples/route_table on each transport, one route a
# request and pipelined, and lists it back (--list); its --json line says
# what it did: the transport it used, the routes the table gained or sent,
# a rate. --reference makes the same insertions in its own process, with
# no server.
#
#   route_inject_json.sh ROUTE_TABLE_BIN ROUTE_INJECT_BIN
set -eu
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "ROUTE_TABLE_BIN ROUTE_INJECT_BIN" "$@"
inject=$2
# Routes of each run: enough for a rate, few for a loaded host.
count4=3000
count6=1000

# Check a --json line: field=value pairs that must hold, and a rate.
check_json() {
	local line=$1
	shift
	python3 - "$line" "$@" <<'PY' || shmt_fail "route_inject --json: $line"
import json, sys
r = json.loads(sys.argv[1])
for want in sys.argv[2:]:
    key, value = want.split("=")
    assert str(r[key]) == value, f"{key} is {r[key]}, expected {value}"
assert r["routes_per_s"] > 0 and r["seconds"] > 0, "no rate"
assert abs(r["routes_per_s"] * r["seconds"] - r["count"]) <= r["count"] * 0.01, "rate"
PY
}

start_daemon -r 65536 -R 16384 -p 1000
line=$(shmt_run_bounded 60 "$inject" -s "$SHMT_SOCK" -n "$count4" -t shm --json) ||
	shmt_fail "route_inject -t shm failed"
check_json "$line" mode=add transport=shm family=4 count=$count4 installed=$count4 depth=1
line=$(shmt_run_bounded 60 "$inject" -6 -s "$SHMT_SOCK" -n "$count6" -d 16 -t socket --json) ||
	shmt_fail "route_inject -6 -t socket -d 16 failed"
check_json "$line" transport=socket family=6 count=$count6 installed=$count6 depth=16
# The table listed back, on each transport: every route of the family.
for transport in shm socket; do
	line=$(shmt_run_bounded 60 "$inject" -s "$SHMT_SOCK" --list -t $transport --json) ||
		shmt_fail "route_inject --list -t $transport failed"
	check_json "$line" mode=list transport=$transport family=4 count=$count4
done
# The same routes again: the table has them, and says so.
if shmt_run_bounded 60 "$inject" -s "$SHMT_SOCK" -n 10 -t shm --json 2>/dev/null; then
	shmt_fail "route_inject succeeded with routes the table has"
fi
stop_daemon

line=$(shmt_run_bounded 60 "$inject" --reference -r 65536 -n "$count4" -d 4 --json) ||
	shmt_fail "route_inject --reference failed"
check_json "$line" transport=reference family=4 count=$count4 installed=$count4
echo "route_inject: shm, socket and reference runs reported"
