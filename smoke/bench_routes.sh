#!/bin/bash
# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The route table, sourced by smoke/bench.sh: examples/route_table (routes
# in rte_fib, served with libgr_api_server) fed ROUTES_N IPv4 routes by
# route_inject (the prefix lengths of the BGP table, one request per
# route), at depth 1 (one call at a time, as FRR's plugin for Grout and
# Grout's fib_inject do) and depth 32, over the channel and over the socket;
# beside them route_inject --reference, the same insertions into an rte_fib
# of its own process (no server: the physical limit); then the list of
# every route, a stream of ROUTES_N responses, on each transport. Each
# injection gets a fresh route_table. Writes
#   routes-reference.json, routes-{shm,socket}-d{1,32}.json,
#   routes-list-{shm,socket}.json      (route_inject --json)
# which bench_routes.py reports. BENCH_ROUTES=0 skips it; BENCH_ROUTES_N
# sets the count (default 1 000 000, BENCH_QUICK 100 000). Uses bench.sh's
# builddir, results, run_tool, progress, and test/lib.sh's helpers; every
# process it starts is stopped by PID.
# shellcheck disable=SC2154 # those are set by the scripts this file is sourced into

ROUTES_N=${BENCH_ROUTES_N:-1000000}
[ "${BENCH_QUICK:-0}" = 0 ] || [ -n "${BENCH_ROUTES_N:-}" ] || ROUTES_N=100000
ROUTES_DEPTHS=(1 32)
ROUTES_TRANSPORTS=(shm socket)
# route_table's IPv4 table: the routes and room to spare (its -r).
ROUTES_TABLE=$((ROUTES_N + ROUTES_N / 4 + 1024))
# Its IPv6 table, which the bench does not fill: small, as its memory is
# reserved at start.
ROUTES_TABLE6=1024
# route_table's worker looks routes up in bursts with this pause between
# them (its -p): a datapath with traffic to spare, which leaves the CPU it
# shares with the control path on a small host; a worker that spins takes a
# CPU of its own, which a 2-CPU host cannot give it.
ROUTES_WORKER_PAUSE_US=${BENCH_ROUTES_WORKER_PAUSE_US:-1000}
# route_table serves its socket within this bound.
ROUTES_WAIT_S=30
routes_app=$builddir/examples/route_table/route_table
routes_inject=$builddir/examples/route_table/route_inject
routes_pid=
routes_sock=

# The steps: the reference, each injection, the two lists.
if [ "${BENCH_ROUTES:-1}" = 0 ]; then
	routes_steps=0
else
	routes_steps=$((1 + ${#ROUTES_DEPTHS[@]} * ${#ROUTES_TRANSPORTS[@]} + ${#ROUTES_TRANSPORTS[@]}))
fi

# routes_start: a fresh route_table on its own socket and file prefix.
routes_start() {
	routes_sock=$SHMT_TMPDIR/route_table.sock
	rm -f "$routes_sock"
	shmt_spawn "$routes_app" -s "$routes_sock" -r "$ROUTES_TABLE" -R "$ROUTES_TABLE6" \
		-p "$ROUTES_WORKER_PAUSE_US" -- \
		--file-prefix "$SHMT_PREFIX-routes" >>"$results/routes-app.log" 2>&1
	routes_pid=$SHMT_SPAWNED
	echo "bench: route_table, pid $routes_pid" >&2
	serving_wait "$routes_pid" "$routes_sock" "$results/routes-app.log" route_table "$ROUTES_WAIT_S"
}

# routes_stop: stop it by PID, and fail if it died meanwhile.
routes_stop() {
	shmt_running "$routes_pid" ||
		shmt_fail "route_table (pid $routes_pid) died: $(tail -n 3 "$results/routes-app.log")"
	kill -TERM "$routes_pid" 2>/dev/null || true
	shmt_wait_gone "$routes_pid" "$SHMT_STOP_WAIT_S" || kill -KILL "$routes_pid" 2>/dev/null || true
	wait "$routes_pid" 2>/dev/null || true
	routes_pid=
}

# routes_run NAME WHAT ARGS...: route_inject ARGS into routes-NAME.json.
routes_run() {
	local name=$1 what=$2
	shift 2
	progress "routes: $what"
	run_tool "route_inject $*" "$results/routes-$name.json" "$routes_inject" -4 -n "$ROUTES_N" \
		--json "$@"
	check_output routes "$results/routes-$name.json" "route_inject $*"
}

routes_all() {
	local t d
	[ "$routes_steps" -gt 0 ] || return 0
	routes_run reference "$ROUTES_N into an rte_fib of route_inject's own" --reference \
		-r "$ROUTES_TABLE"
	for t in "${ROUTES_TRANSPORTS[@]}"; do
		for d in "${ROUTES_DEPTHS[@]}"; do
			routes_start
			routes_run "$t-d$d" "$ROUTES_N over $t, depth $d" -s "$routes_sock" -t "$t" -d "$d"
			if [ "$t" = shm ] && [ "$d" = "${ROUTES_DEPTHS[-1]}" ]; then
				routes_run list-shm "the list of $ROUTES_N over shm" -s "$routes_sock" \
					-t shm --list
				routes_run list-socket "the list of $ROUTES_N over the socket" \
					-s "$routes_sock" -t socket --list
			fi
			routes_stop
		done
	done
}
