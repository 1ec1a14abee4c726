#!/bin/bash
# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The loaded host, sourced by smoke/bench.sh: a daemon with its default
# options serves one client while the benchmark runs its own load beside
# them, one scenario after the other (LOADED_SCENARIOS): nothing; busy
# loops (one, one per CPU, two per CPU); a compiler run over and over, as a
# build does (one per CPU, two per CPU); other channel servers (one, two:
# each a shmchand of its own, on its own socket and file prefix, without
# hugepages, with one ping2_perf client calling back to back). In each:
# GR_PING2 calls back to back on the channel and on the socket, alternated
# (LOADED_ROUNDS rounds of CELL_S each), then the occasional calls after 20
# and 300 ms of silence (ping2_perf --gap). About 20 s a scenario. Writes
#   loaded-SCEN-{shm,socket}-rR.json  the cells (ping2_perf --json)
#   loaded-SCEN-gap.json              the occasional calls
#   loaded-SCEN-host.json             the scenario: its order, what ran, the
#                                     runnable tasks seen, the other servers'
#                                     requests during each cell
# which bench_loaded.py reports. Uses bench.sh's perf, results, CELL_S,
# WARMUP, builddir, run_tool, check_output, progress and daemon_check, and
# test/lib.sh's helpers; every process it starts is stopped by PID.
# shellcheck disable=SC2154 # those are set by the scripts this file is sourced into

LOADED_SCENARIOS=(quiet busy-1 busy-1x busy-2x cc-1x cc-2x servers-1 servers-2)
# BENCH_QUICK (bench.sh sets LOADED_QUICK): one scenario of each kind.
[ "${LOADED_QUICK:-0}" = 0 ] || LOADED_SCENARIOS=(busy-1 cc-1x servers-1)
# BENCH_LOADED_SCENARIOS: these (space-separated) instead, as the
# benchmark's self-tests choose the few their stand-ins need.
[ -z "${BENCH_LOADED_SCENARIOS:-}" ] || read -ra LOADED_SCENARIOS <<<"$BENCH_LOADED_SCENARIOS"
LOADED_ROUNDS=2
# The occasional calls: ping2_perf --gap's default rounds (4 s of silence
# per gap and transport: about 200 calls after 20 ms, 13 after 300 ms).
LOADED_GAPS_MS=20,300
# The load runs this long before the first measurement: the scheduler has
# spread it over the CPUs by then, and a compiler loop has started.
LOADED_SETTLE_S=1
# An other server is ready (its socket exists) within this bound.
LOADED_SERVER_WAIT_S=20

loaded_pids=()
loaded_socks=()

# loaded_cc_source FILE: a C file a compiler at -O2 takes a fraction of a
# second on, as a build compiles one file after another.
loaded_cc_source() {
	local i
	{
		for i in $(seq 40); do
			printf 'int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) {' "$i"
			printf ' s += a[i] * %d ^ (s >> 3); if (s & %d) s -= a[(i + %d) %% n]; }' "$i" "$i" "$i"
			printf ' return s; }\n'
		done
	} >"$1"
}

# loaded_start SCEN: start the scenario's load, its PIDs in loaded_pids.
loaded_start() {
	local scen=$1 n i sock src ncpu
	ncpu=$(nproc)
	loaded_pids=()
	loaded_socks=()
	case $scen in
	quiet) return 0 ;;
	busy-1) n=1 ;;
	*-1x) n=$ncpu ;;
	*-2x) n=$((2 * ncpu)) ;;
	servers-*) n=${scen#servers-} ;;
	esac
	case $scen in
	busy-*)
		for i in $(seq "$n"); do
			shmt_spawn bash -c 'while :; do :; done'
			loaded_pids+=("$SHMT_SPAWNED")
		done
		;;
	cc-*)
		src=$results/loaded-cc.c
		[ -e "$src" ] || loaded_cc_source "$src"
		# The loop's compiler is ended with it: a TERM runs the trap at
		# once while the shell waits.
		for i in $(seq "$n"); do
			shmt_spawn bash -c 'trap "kill \$c 2>/dev/null; exit 0" TERM
				while :; do cc -O2 -c -o /dev/null "$0" & c=$!; wait $c; done' "$src"
			loaded_pids+=("$SHMT_SPAWNED")
		done
		;;
	servers-*)
		for i in $(seq "$n"); do
			sock=$SHMT_TMPDIR/other-$i.sock
			shmt_spawn "$SHMT_DAEMON" -s "$sock" --hugepages off -- \
				--file-prefix "$SHMT_PREFIX-other$i" >"$results/loaded-other-$i.log" 2>&1
			loaded_pids+=("$SHMT_SPAWNED")
			serving_wait "$SHMT_SPAWNED" "$sock" "$results/loaded-other-$i.log" \
				"other server $i" "$LOADED_SERVER_WAIT_S"
			loaded_socks+=("$sock")
			shmt_spawn "$perf" -s "$sock" -t shm -T 3600 -w 0 -q --no-syscall-count \
				--no-stamps
			loaded_pids+=("$SHMT_SPAWNED")
		done
		;;
	esac
}

# loaded_stop: end the load, clients before their servers (later PIDs first).
loaded_stop() {
	local i pid
	for ((i = ${#loaded_pids[@]} - 1; i >= 0; i--)); do
		pid=${loaded_pids[i]}
		kill -TERM "$pid" 2>/dev/null || true
		shmt_wait_gone "$pid" "$SHMT_STOP_WAIT_S" || kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	loaded_pids=()
}

# loaded_requests: the other servers' requests so far, all together.
loaded_requests() {
	local sock out total=0
	for sock in "${loaded_socks[@]}"; do
		out=$("$builddir/cli/shmchanctl" -s "$sock" -j stats 2>&1) ||
			shmt_fail "shmchanctl stats of the other server $sock: $out"
		[[ $out =~ \"requests\":\ ([0-9]+) ]] || shmt_fail "shmchanctl stats: no requests: $out"
		total=$((total + BASH_REMATCH[1]))
	done
	echo "$total"
}

# loaded_runnable: the runnable tasks now (procs_running of /proc/stat),
# less this reader.
loaded_runnable() {
	local n
	n=$(awk '$1 == "procs_running" { print $2 }' /proc/stat)
	echo $((n - 1))
}

# loaded_cell SCEN TRANSPORT ROUND: one cell, and the other servers'
# requests meanwhile into loaded_others (JSON).
loaded_cell() {
	local name=loaded-$1-$2-r$3 mode=shm r0 t0 r1 t1
	[ "$2" = shm ] || mode=socket
	loaded_seen+=("$(loaded_runnable)")
	r0=$(loaded_requests)
	t0=$EPOCHREALTIME
	run_tool "ping2_perf $2 ($1)" "$results/$name.json" \
		"$perf" -s "$SHMT_SOCK" -t "$mode" -T "$CELL_S" -w "$WARMUP" -q --json --no-syscall-count
	t1=$EPOCHREALTIME
	r1=$(loaded_requests)
	check_output cell "$results/$name.json" "ping2_perf $2 ($1)"
	loaded_others+=("{\"transport\": \"$2\", \"round\": $3, \"requests\": $((r1 - r0)), \"seconds\": $(
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }'
	)}")
}

# loaded_scenario SCEN ORDER: the scenario's load, its cells and occasional
# calls, its host file.
loaded_scenario() {
	local scen=$1 r load_start first second
	local loaded_seen=() loaded_others=()
	progress "loaded host: $scen"
	load_start=$(cut -d' ' -f1-3 /proc/loadavg)
	loaded_start "$scen"
	sleep "$LOADED_SETTLE_S"
	for r in $(seq "$LOADED_ROUNDS"); do
		# Alternated, so that a load that grows or fades hits both.
		first=shm second=socket
		[ $((r % 2)) = 1 ] || first=socket second=shm
		loaded_cell "$scen" "$first" "$r"
		loaded_cell "$scen" "$second" "$r"
	done
	loaded_seen+=("$(loaded_runnable)")
	run_tool "ping2_perf --gap ($scen)" "$results/loaded-$scen-gap.json" \
		"$perf" -s "$SHMT_SOCK" --gap "$LOADED_GAPS_MS" -w "$WARMUP" -q --json
	check_output gap "$results/loaded-$scen-gap.json" "ping2_perf --gap ($scen)"
	loaded_stop
	daemon_check "the loaded host, $scen"
	local others seen n=0
	others=$(IFS=,; echo "${loaded_others[*]}")
	seen=$(IFS=,; echo "${loaded_seen[*]}")
	case $scen in
	busy-1) n=1 ;;
	*-1x) n=$(nproc) ;;
	*-2x) n=$((2 * $(nproc))) ;;
	servers-*) n=${scen#servers-} ;;
	esac
	printf '{"scenario": "%s", "order": %d, "cpus": %d, "load_processes": %d, %s, %s, %s}\n' \
		"$scen" "$2" "$(nproc)" "$n" "\"loadavg_start\": \"$load_start\"" \
		"\"loadavg_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"runnable\": [$seen]" \
		"\"others\": [$others]" >"$results/loaded-$scen-host.json"
}

# loaded_all: every scenario, on a daemon with its default options.
loaded_all() {
	local i
	start_daemon
	echo "bench: daemon with its default options, pid $SHMT_PID, for the loaded host" >&2
	for i in "${!LOADED_SCENARIOS[@]}"; do
		loaded_scenario "${LOADED_SCENARIOS[i]}" "$i"
	done
	stop_daemon
}

# Run alone (make bench-loaded): smoke/bench_loaded.sh BUILDDIR [SCENARIO...]
# into results/<timestamp>-loaded/, and print its table.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -eEu
	[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR [SCENARIO...]" >&2; exit 2; }
	builddir=$(cd "$1" && pwd)
	shift
	[ $# = 0 ] || LOADED_SCENARIOS=("$@")
	cd "$(dirname "$0")/.."
	SHMT_NAME=bench-loaded
	SHMT_DAEMON=${BENCH_DAEMON:-$builddir/main/shmchand}
	# shellcheck source=test/lib.sh
	. test/lib.sh
	CELL_S=${BENCH_CELL_S:-1}
	WARMUP=200
	TOOL_BOUND_S=120
	perf=$builddir/smoke/ping2_perf
	results=${BENCH_RESULTS:-results/$(date +%Y%m%d-%H%M%S)-loaded}
	mkdir -p "$results"
	bench_start=$SECONDS
	step=0
	n_steps=${#LOADED_SCENARIOS[@]}
	# shellcheck source=smoke/bench_lib.sh
	. smoke/bench_lib.sh
	loaded_all
	python3 smoke/bench_loaded.py "$results"
	if command -v gnuplot >/dev/null; then
		gnuplot -e "dir='$results'; loaded_only=1" smoke/plot.gp
		echo "bench: the plot in $results/loaded.png" >&2
	fi
fi
