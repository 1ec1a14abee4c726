#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench, the one driver of the benchmark (docs/benchmark-running.md):
# the references (ref_bench), the goal rounds, the matrix of ping2_perf
# cells, the idle cost, the pinned and shared 16-client cells, idle
# channels, the occasional calls and the headline, the loaded host, the
# route table, strace; then the report (bench_report.py) and the plots.
#
#   smoke/bench.sh BUILDDIR [PART...]    into results/<timestamp>[-PART...]/
#
# Noise never fails it: compared runs alternate and the report takes
# medians. It fails only on a real error and says which: a tool that failed,
# crashed or hung, the daemon's death, output that is not what the report
# reads. Environment: docs/benchmark-running.md.
set -eEu

if [ $# = 0 ]; then
	echo "usage: $0 BUILDDIR [PART...]" >&2
	exit 2
fi
# BENCH_PRIORITY=1 (root): an autogroup of its own at nice -20, as plain
# nice does not reach across Debian's autogroups; only setsid(1) makes one.
if [ "${BENCH_PRIORITY:-0}" = 1 ] && [ -z "${BENCH_SETSID:-}" ]; then
	exec setsid -w env BENCH_SETSID=1 "$0" "$@"
fi
if [ -n "${BENCH_SETSID:-}" ]; then
	echo -20 >/proc/self/autogroup || echo "bench: cannot set the autogroup's nice value" >&2
fi
# ping2_perf counts system calls through a tracepoint: tracefs may not be
# mounted on a fresh boot.
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "bench: no tracefs: no per-cell system-call counts" >&2
fi
builddir=$(cd "$1" && pwd)
shift
chosen=("$@")
cd "$(dirname "$0")/.."
srcdir=$(pwd)
SHMT_NAME=bench
SHMT_DAEMON=$builddir/main/shmchand
SHMT_LOG_TAIL_LINES=${SHMT_LOG_TAIL_LINES:-20}
# shellcheck source=test/lib.sh
. test/lib.sh
shmt_python_direct

CELL_S=${BENCH_CELL_S:-1}
# The 16-client cells: a client's share of a 1 s cell swings with the
# scheduler's slices.
FAIR_CELL_S=${BENCH_FAIR_CELL_S:-4}
IDLE_S=${BENCH_IDLE_S:-10}
BESIDE_S=${BENCH_BESIDE_S:-3}
# Warmup calls per client: faults in the rings and lets the poller spin.
WARMUP=200
# The daemon's spin budgets (shmchand -S): its default, and always sleep.
SPINNING_US=100
# strace counts startup too: the difference of two lengths leaves the
# per-call part.
STRACE_CALLS_SHORT=20000
STRACE_CALLS_LONG=120000
# The raw eventfd after silence, as ping2_perf --idle's gaps.
IDLE_GAP_US=20000
IDLE_GAP_ROUNDS=20
ECHO_DEPTH=32
# The longest run of any tool (the idle cost, 10 s) takes a fraction of it
# on a loaded host: a run still going has hung.
TOOL_BOUND_S=120
idle_channel_counts=(0 16 256)
IDLE_CHANNEL_ROUNDS=4
IDLE_CHANNEL_MAX_CONN=300
OCCASIONAL_GAPS_MS=1,20,300,1000
occasional_rounds=()
HEADLINE_ROUNDS=3
SHARED_ROUNDS=3
PINNED_ROUNDS=3
LOADED_SCENARIOS=(quiet busy-1 busy-1x busy-2x cc-1x cc-2x servers-1 servers-2)
LOADED_ROUNDS=2
LOADED_GAPS_MS=20,300
# Calls on each transport after each gap: ping2_perf's own count gives 300 ms
# only 8, too few for a median under load.
LOADED_GAP_ROUNDS=24
SERVER_WAIT_S=30
ROUTES_N=${BENCH_ROUTES_N:-1000000}

transports=(socket memfd memzone)
depths=(1 32)
clients=(1 4 16)
sizes=(64 4096 131072)
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	clients=(1 16)
	sizes=(64)
	occasional_rounds=(--gap-rounds 2)
	HEADLINE_ROUNDS=1
	LOADED_GAP_ROUNDS=2
	LOADED_SCENARIOS=(busy-1 cc-1x servers-1)
	ROUTES_N=${BENCH_ROUTES_N:-100000}
fi
[ -z "${BENCH_LOADED_SCENARIOS:-}" ] || read -ra LOADED_SCENARIOS <<<"$BENCH_LOADED_SCENARIOS"

perf=${BENCH_PING2_PERF:-$builddir/smoke/ping2_perf}
ref=${BENCH_REF_BENCH:-$builddir/smoke/ref_bench}
gap_py=${BENCH_GAP_PY:-$srcdir/python/bench_gap.py}
py_bench=${BENCH_PY_BENCH:-$srcdir/python/bench.py}
if [ "${BENCH_BUILD:-1}" != 0 ]; then
	echo "bench: building $builddir" >&2
	out=$(ninja -C "$builddir" 2>&1) || shmt_fail "ninja: $out"
fi
suffix=
[ $# = 0 ] || suffix=-$(IFS=-; echo "$*")
results=${BENCH_RESULTS:-$srcdir/results/$(date +%Y%m%d-%H%M%S)$suffix}
mkdir -p "$results"
echo "bench: results in $results" >&2
trap 'shmt_fail "unexpected failure (status $?) at line $LINENO of $0: $BASH_COMMAND"' ERR

bench_start=$SECONDS
progress() {
	local s=$((SECONDS - bench_start))
	printf 'bench: [%d:%02d] %s\n' $((s / 60)) $((s % 60)) "$*" >&2
}

ended() {
	if [ "$1" -gt 128 ]; then
		echo "killed by SIG$(kill -l $(($1 - 128)))"
	else
		echo "exit status $1"
	fi
}

daemon_check() {
	local pid=$SHMT_PID rc=0
	[ -n "$pid" ] && ! shmt_running "$pid" || return 0
	wait "$pid" || rc=$?
	SHMT_PID=
	shmt_clean_dpdk
	shmt_fail "the daemon (pid $pid) died during $1: $(ended "$rc")"
}

# run_tool WHAT OUT CMD...: CMD's output into OUT within TOOL_BOUND_S. A
# failure names the daemon's death first (it explains the rest), then a
# hang, a crash or an exit status, with CMD's last words.
run_tool() {
	local what=$1 out=$2 rc=0 how
	shift 2
	timeout --foreground --kill-after="$SHMT_KILL_AFTER_S" "$TOOL_BOUND_S" \
		"${shmt_die_with_parent[@]}" "$@" >"$out" 2>"$out.err" || rc=$?
	if [ "$rc" = 0 ]; then
		rm -f "$out.err"
		return 0
	fi
	[ -s "$out" ] || rm -f "$out"
	# A tool that lost the daemon may end before the kernel has reaped it.
	[ -z "$SHMT_PID" ] || shmt_wait_gone "$SHMT_PID" 1 || true
	daemon_check "$what"
	how="failed: $(ended "$rc")"
	[ "$rc" -le 128 ] || how="crashed: $(ended "$rc")"
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || how="hung: no result within $TOOL_BOUND_S s"
	shmt_fail "$what $how; its last words: $(tail -n 5 "$out.err")"
}

# The number each kind of output must hold, checked as its tool ends.
declare -A output_key=([ref]=ns_per_op [cell]=calls_per_s [idle]=daemon_cpu_ns [gap]=seconds
	[headline]=rounds [beside]=ratio_p50 [routes]=routes_per_s)

# measure KIND WHAT OUT CMD...: run_tool, then fail unless OUT is a JSON
# object with KIND's number, left in output_value.
measure() {
	local key=${output_key[$1]} what=$2 out=$3 text
	shift 3
	run_tool "$what" "$out" "$@"
	text=$(<"$out")
	[[ $text =~ ^[[:space:]]*\{.*\}[[:space:]]*$ ]] ||
		shmt_fail "$what: bad output: $out: not JSON: $(head -c 200 "$out")"
	[[ $text =~ \"$key\":\ (-?[0-9][0-9.eE+-]*) ]] ||
		shmt_fail "$what: bad output: $out: no '$key' number"
	output_value=${BASH_REMATCH[1]}
}

# serving_wait PID SOCK LOG WHAT: wait until WHAT accepts connections on SOCK.
serving_wait() {
	local polls=$((SERVER_WAIT_S * SHMT_POLLS_PER_S))
	until shmt_socket_ready "$2"; do
		shmt_running "$1" || shmt_fail "$4 died: $(tail -n 3 "$3")"
		[ "$polls" -gt 0 ] || shmt_fail "$4 did not serve $2 in $SERVER_WAIT_S s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

daemon_start() {
	local what=$1
	shift
	start_daemon "$@"
	echo "bench: daemon ${*:-with its default options} for $what, pid $SHMT_PID" >&2
}

stop_pid() {
	kill -TERM "$1" 2>/dev/null || true
	shmt_wait_gone "$1" "$SHMT_STOP_WAIT_S" || kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

run_ref() {
	local name=$1
	shift
	progress "ref $name"
	measure ref "ref_bench $*" "$results/ref-$name.json" "$ref" "$@"
}

part_refs() {
	local z
	run_ref clock clock
	run_ref syscall syscall
	run_ref cacheline cacheline
	for z in "${sizes[@]}"; do
		for t in ring-pingpong ring-stream chan-pingpong chan-stream unix; do
			run_ref "$t-z$z" -z "$z" "$t"
		done
	done
	run_ref lines-apart-z64 -z 64 lines-apart
	run_ref ring-echo-z64 -z 64 --depth "$ECHO_DEPTH" ring-echo
	run_ref chan-echo-z64 -z 64 --depth "$ECHO_DEPTH" chan-echo
	run_ref ring-local ring-local
	run_ref chan-local chan-local
	run_ref eventfd eventfd
	run_ref eventfd-nopin --no-pin eventfd
	run_ref eventfd-gap -n "$IDLE_GAP_ROUNDS" --gap-us "$IDLE_GAP_US" eventfd
	run_ref eventfd-gap-nopin --no-pin -n "$IDLE_GAP_ROUNDS" --gap-us "$IDLE_GAP_US" eventfd
}

# The goals' references again, between the daemons and at the end (-mid,
# -end): the report takes the median of the three.
goal_refs() {
	run_ref "cacheline-$1" -z 64 cacheline
	run_ref "ring-pingpong-z64-$1" -z 64 ring-pingpong
	run_ref "chan-pingpong-z64-$1" -z 64 chan-pingpong
	run_ref "ring-stream-z64-$1" -z 64 ring-stream
	run_ref "ring-echo-z64-$1" -z 64 --depth "$ECHO_DEPTH" ring-echo
	run_ref "eventfd-nopin-$1" --no-pin eventfd
}

# A goal's ratio means something only if its cell and its reference ran
# with the vCPUs in the same place: each round measures the reference, the
# cell (--no-stamps: timed as the reference is) and the reference again.
# "NAME|REF_BENCH ARGS|PING2_PERF ARGS".
goal_specs=("rtt|cacheline|-d 1 -z 64" "ring|-z 64 ring-pingpong|-d 1 -z 64"
	"stream|-z 64 ring-stream|-d 32 -z 64" "echo|-z 64 --depth $ECHO_DEPTH ring-echo|-d 32 -z 64")
goal_round() {
	local spec name refargs perfargs f
	for spec in "${goal_specs[@]}"; do
		IFS='|' read -r name refargs perfargs <<<"$spec"
		read -ra refargs <<<"$refargs"
		read -ra perfargs <<<"$perfargs"
		name=$name-r$1 f=$results/goal-$name
		progress "goal $name"
		measure ref "ref_bench ${refargs[*]} (goal $name)" "$f-ref1.json" "$ref" "${refargs[@]}"
		measure cell "ping2_perf ${perfargs[*]} (goal $name)" "$f-cell.json" "$perf" -s "$SHMT_SOCK" \
			-t shm -T "$CELL_S" -w "$WARMUP" -q --json --no-stamps "${perfargs[@]}"
		measure ref "ref_bench ${refargs[*]} (goal $name)" "$f-ref2.json" "$ref" "${refargs[@]}"
	done
	# The ring goal pair by pair: blocks of each alternated within one
	# placement of the vCPUs.
	progress "goal beside-r$1"
	measure beside "ping2_perf --beside-ring (goal beside-r$1)" "$results/goal-beside-r$1.json" \
		"$perf" -s "$SHMT_SOCK" --beside-ring "$BESIDE_S" -w "$WARMUP" -q --json
}

client_cpus=()
run_cell() {
	local mode=$1 transport=$2 depth=$3 nclients=$4 size=$5 name args=() count=() p50=-
	shift 5
	name=cell-$transport-$mode-d$depth-c$nclients-z$size
	case $transport in
	# No system-call counter on the socket: its tracepoint puts every
	# system call of the machine on the traced path, 3-5 us per round trip.
	socket) args=(-t socket) count=(--no-syscall-count) ;;
	memfd) args=(-t shm) ;;
	memzone) args=(-t shm --secondary) ;;
	esac
	progress "$name"
	measure cell "ping2_perf $transport $mode d$depth c$nclients z$size" "$results/$name.json" \
		"${client_cpus[@]}" "$perf" -s "$SHMT_SOCK" "${args[@]}" -d "$depth" -c "$nclients" \
		-z "$size" -T "$CELL_S" -w "$WARMUP" -q --json --cdf "${count[@]}" "$@"
	daemon_check "$name"
	[[ $(<"$results/$name.json") =~ \"p50\":\ ([0-9]+) ]] && p50=${BASH_REMATCH[1]}
	echo "bench:   ${output_value%.*} calls/s, p50 $p50 ns" >&2
}

# matrix MODE: every cell; memzone only if the daemon has hugepages (a
# short --secondary run tells, and why not goes into memzone-skipped.txt).
matrix() {
	local transport depth n z rc=0 err=$results/memzone-probe.err
	timeout --foreground --kill-after="$SHMT_KILL_AFTER_S" "$TOOL_BOUND_S" \
		"$perf" -s "$SHMT_SOCK" --secondary -n 100 -w 0 -q >/dev/null 2>"$err" || rc=$?
	daemon_check "the memzone probe"
	if [ "$rc" != 0 ]; then
		echo "bench: no memzone column: $(tail -n 1 "$err")" >&2
		tail -n 1 "$err" >"$results/memzone-skipped.txt"
	fi
	rm -f "$err"
	for transport in "${transports[@]}"; do
		[ "$transport" != memzone ] || [ "$rc" = 0 ] || continue
		for depth in "${depths[@]}"; do
			for n in "${clients[@]}"; do
				for z in "${sizes[@]}"; do
					run_cell "$1" "$transport" "$depth" "$n" "$z"
				done
			done
		done
	done
}

part_spinning() {
	daemon_start "the spinning matrix" -S "$SPINNING_US"
	goal_round 1
	matrix spinning
	goal_refs mid
	goal_round 2
	progress "idle cost: 16 attached clients for $IDLE_S s"
	measure idle "ping2_perf --idle" "$results/idle.json" "$perf" -s "$SHMT_SOCK" -t shm -c 16 \
		--idle "$IDLE_S" -q --json
	daemon_check "the spinning daemon's cells"
	stop_daemon
}

part_sleeping() {
	daemon_start "the sleeping matrix" -S 0
	matrix sleeping
	# Both ends sleeping: a raw eventfd ping-pong's like.
	run_cell bothsleep memfd 1 1 64 --spin 0
	stop_daemon
}

# rounds_one_many_one NAME ROUNDS: rounds of one client, 16, one client
# again (NAME-rR-{one1,many,one2}.json), the 16 judged against the mean of
# the two singles: one client's lucky or unlucky second cannot decide
# alone. On the clients' CPUs (client_cpus).
rounds_one_many_one() {
	local r t fields
	for r in $(seq "$2"); do
		progress "16 clients and one: $1-r$r"
		for t in one1:1:$CELL_S many:16:$FAIR_CELL_S one2:1:$CELL_S; do
			IFS=: read -ra fields <<<"$t"
			measure cell "ping2_perf -c ${fields[1]} ($1-r$r)" "$results/$1-r$r-${fields[0]}.json" \
				"${client_cpus[@]}" "$perf" -s "$SHMT_SOCK" -t shm -d 1 -z 64 -c "${fields[1]}" \
				-T "${fields[2]}" -w "$WARMUP" -q --json --no-stamps
			# The poller's nice value follows its clients, and stays
			# while none calls: what the 16 had.
			[ "${fields[0]}" != many ] ||
				rounds_nice=$(ps -L -o comm=,nice= -p "$SHMT_PID" |
					awk '$1 == "shmchan-poll0" { print $2 }')
		done
		daemon_check "$1-r$r"
	done
}

# The daemon on the last CPU (EAL -l), its clients on the others, as a DPDK
# deployment gives its poller a core of its own: the matrix's cells, then
# the rounds of one client and 16.
part_pinned() {
	local cpu=$(($(nproc) - 1)) depth n window
	[ "$cpu" -ge 1 ] || return 0
	daemon_start "the pinned cells, on CPU $cpu" -S "$SPINNING_US" -- -l "$cpu"
	client_cpus=(taskset -c "0-$((cpu - 1))")
	for depth in "${depths[@]}"; do
		for n in "${clients[@]}"; do
			window=()
			[ "$n" != 16 ] || window=(-T "$FAIR_CELL_S")
			run_cell pinned memfd "$depth" "$n" 64 "${window[@]}"
		done
	done
	rounds_one_many_one pinned "$PINNED_ROUNDS"
	client_cpus=()
	stop_daemon
}

# Rounds of one client, 16, one client again, wherever the scheduler puts
# them, with the poller's default nice value and one round with it off;
# poller-nice.txt says the nice value each poller had.
part_shared() {
	local mode rounds args
	: >"$results/poller-nice.txt"
	for mode in default off; do
		rounds=$SHARED_ROUNDS args=() rounds_nice=
		[ "$mode" = default ] || rounds=1 args=(--poller-nice off)
		daemon_start "the shared-CPU rounds" -S "$SPINNING_US" "${args[@]}"
		rounds_one_many_one "shared-$mode" "$rounds"
		echo "$mode ${rounds_nice:-?}" >>"$results/poller-nice.txt"
		stop_daemon
	done
}

# A busy client beside 0, 16 and 256 idle channels, in rounds whose order
# alternates; the daemon allows that many connections and more.
part_idle_channels() {
	local r n counts
	daemon_start "the idle channels" -S "$SPINNING_US" --max-conn-per-pid \
		"$IDLE_CHANNEL_MAX_CONN" --max-conn-per-uid 0
	for r in $(seq "$IDLE_CHANNEL_ROUNDS"); do
		counts=("${idle_channel_counts[@]}")
		[ $((r % 2)) = 1 ] || read -ra counts <<<"$(printf '%s\n' "${counts[@]}" | tac | xargs)"
		for n in "${counts[@]}"; do
			progress "idle channels: round $r, $n beside a busy client"
			measure cell "ping2_perf --idle-channels $n" "$results/idlech-r$r-n$n.json" \
				"$perf" -s "$SHMT_SOCK" -t shm -d 1 -c 1 -z 64 -T "$CELL_S" -w "$WARMUP" -q \
				--json --idle-channels "$n"
			daemon_check "the idle channels, round $r"
		done
	done
	stop_daemon
}

# A call after each gap of silence, shm and socket alternated call by call,
# from C and from Python; then calls back to back from both; on a daemon
# with its default options, as a user starts it.
part_occasional() {
	local py=(env PYTHONPATH="$srcdir/python:$builddir/subprojects/shmchan-python"
		SHMCHAN_LIBRARY="$builddir/client/libgr_api_client.so")
	daemon_start "the occasional calls"
	progress "occasional calls from C: after $OCCASIONAL_GAPS_MS ms of silence"
	measure gap "ping2_perf --gap" "$results/gap-c.json" "$perf" -s "$SHMT_SOCK" \
		--gap "$OCCASIONAL_GAPS_MS" "${occasional_rounds[@]}" -w "$WARMUP" -q --json
	progress "occasional calls from Python: after $OCCASIONAL_GAPS_MS ms of silence"
	measure gap "bench_gap.py" "$results/gap-python.json" "${py[@]}" "$gap_py" -s "$SHMT_SOCK" \
		--gap "$OCCASIONAL_GAPS_MS" "${occasional_rounds[@]}" -w "$WARMUP" -q --json
	progress "calls one right after the other, from C and from Python"
	measure headline "bench.py" "$results/headline.json" "${py[@]}" "$py_bench" "$SHMT_SOCK" \
		--ping2-perf "$perf" --rounds "$HEADLINE_ROUNDS" --seconds 1 --json
	daemon_check "the occasional calls"
	stop_daemon
}

# loaded_processes SCEN: how many loops or other servers SCEN runs.
loaded_processes() {
	case $1 in
	quiet) echo 0 ;;
	busy-1) echo 1 ;;
	*-1x) nproc ;;
	*-2x) echo $((2 * $(nproc))) ;;
	servers-*) echo "${1#servers-}" ;;
	esac
}

# loaded_start SCEN: busy loops; a compiler run over and over, as a build
# does; or other servers (a shmchand each, without hugepages) with a client
# calling back to back. Their PIDs in loaded_pids, clients after servers.
loaded_start() {
	local i f sock src=$results/loaded-cc.c
	loaded_pids=() loaded_socks=()
	for i in $(seq "$(loaded_processes "$1")"); do
		case $1 in
		# Each loop names the results folder ($0): a test finds what a run left.
		busy-*) shmt_spawn bash -c 'while :; do :; done' "$results" ;;
		cc-*)
			# A file cc -O2 takes a fraction of a second on.
			[ -e "$src" ] || for f in $(seq 40); do
				printf 'int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) {' "$f"
				printf ' s += a[i] * %d ^ (s >> 3); if (s & %d) s -= a[(i + %d) %% n]; }' \
					"$f" "$f" "$f"
				printf ' return s; }\n'
			done >"$src"
			# shellcheck disable=SC2016 # for the loop's shell
			shmt_spawn bash -c 'trap "kill \$c 2>/dev/null; exit 0" TERM
				while :; do cc -O2 -c -o /dev/null "$0" & c=$!; wait $c; done' "$src"
			;;
		servers-*)
			sock=$SHMT_TMPDIR/other-$i.sock
			shmt_spawn "$SHMT_DAEMON" -s "$sock" --hugepages off -- \
				--file-prefix "$SHMT_PREFIX-other$i" >"$results/loaded-other-$i.log" 2>&1
			loaded_pids+=("$SHMT_SPAWNED")
			serving_wait "$SHMT_SPAWNED" "$sock" "$results/loaded-other-$i.log" "other server $i"
			loaded_socks+=("$sock")
			shmt_spawn "$perf" -s "$sock" -t shm -T 3600 -w 0 -q --no-syscall-count --no-stamps
			;;
		esac
		loaded_pids+=("$SHMT_SPAWNED")
	done
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

# The tasks ready to run, less this reader.
runnable() {
	echo $(($(awk '$1 == "procs_running" { print $2 }' /proc/stat) - 1))
}

# Each scenario in turn: rounds of blocking and event-loop calls on each
# transport, in reverse order every other round so that a load that grows
# or fades hits all alike, then the occasional calls. loaded-SCEN-host.json
# says what ran, the runnable tasks seen and the other servers' requests.
part_loaded() {
	local i scen r cell order t0 r0 transport evloop is_evloop load_start seen others
	daemon_start "the loaded host"
	for i in "${!LOADED_SCENARIOS[@]}"; do
		scen=${LOADED_SCENARIOS[i]} seen=() others=()
		progress "loaded host: $scen"
		load_start=$(cut -d' ' -f1-3 /proc/loadavg)
		loaded_start "$scen"
		# Let the scheduler spread the load first.
		sleep 1
		for r in $(seq "$LOADED_ROUNDS"); do
			order=(shm socket shm-evloop socket-evloop)
			[ $((r % 2)) = 1 ] || order=(socket-evloop shm-evloop socket shm)
			for cell in "${order[@]}"; do
				transport=${cell%-evloop} evloop=() is_evloop=false
				[ "$transport" = "$cell" ] || evloop=(--event-loop) is_evloop=true
				seen+=("$(runnable)")
				r0=$(loaded_requests) t0=$EPOCHREALTIME
				measure cell "ping2_perf $transport${evloop:+ event loop} ($scen)" \
					"$results/loaded-$scen-$cell-r$r.json" "$perf" -s "$SHMT_SOCK" -t "$transport" \
					"${evloop[@]}" -T "$CELL_S" -w "$WARMUP" -q --json --no-syscall-count
				t0=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }')
				others+=("{\"transport\": \"$transport\", \"event_loop\": $is_evloop, \"round\": $r,
					\"requests\": $(($(loaded_requests) - r0)), \"seconds\": $t0}")
			done
		done
		seen+=("$(runnable)")
		measure gap "ping2_perf --gap ($scen)" "$results/loaded-$scen-gap.json" "$perf" \
			-s "$SHMT_SOCK" --gap "$LOADED_GAPS_MS" --gap-rounds "$LOADED_GAP_ROUNDS" -w "$WARMUP" \
			-q --json
		for ((r = ${#loaded_pids[@]} - 1; r >= 0; r--)); do
			stop_pid "${loaded_pids[r]}"
		done
		daemon_check "the loaded host, $scen"
		printf '{"scenario": "%s", "order": %d, "cpus": %d, "load_processes": %d, %s, %s}\n' \
			"$scen" "$i" "$(nproc)" "$(loaded_processes "$scen")" \
			"\"loadavg_start\": \"$load_start\", \"loadavg_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"" \
			"\"runnable\": [$(IFS=,; echo "${seen[*]}")], \"others\": [$(IFS=,; echo "${others[*]}")]" \
			>"$results/loaded-$scen-host.json"
	done
	stop_daemon
}

# examples/route_table fed ROUTES_N IPv4 routes by route_inject (the BGP
# table's prefix lengths, one request per route) at depth 1 and 32 over
# each transport, a fresh table each; beside them the same insertions into
# an rte_fib of route_inject's own process (the physical limit); then the
# list of every route on each transport. BENCH_ROUTES=0 skips it.
# route_table's table: the routes and room to spare; its IPv6 table small,
# as its memory is reserved at start.
ROUTES_TABLE=$((ROUTES_N + ROUTES_N / 4 + 1024))
# Its worker pauses between lookup bursts (-p), as a datapath with traffic
# to spare: a spinning worker needs a CPU a 2-CPU host cannot give it.
ROUTES_WORKER_PAUSE_US=${BENCH_ROUTES_WORKER_PAUSE_US:-1000}

routes_run() {
	local name=$1 what=$2
	shift 2
	progress "routes: $what"
	measure routes "route_inject $*" "$results/routes-$name.json" \
		"$builddir/examples/route_table/route_inject" -4 -n "$ROUTES_N" --json "$@"
}

part_routes() {
	local t d pid sock=$SHMT_TMPDIR/route_table.sock log=$results/routes-app.log
	[ "${BENCH_ROUTES:-1}" != 0 ] || return 0
	routes_run reference "$ROUTES_N into an rte_fib of route_inject's own" --reference \
		-r "$ROUTES_TABLE"
	for t in shm socket; do
		for d in 1 32; do
			rm -f "$sock"
			shmt_spawn "$builddir/examples/route_table/route_table" -s "$sock" -r "$ROUTES_TABLE" \
				-R 1024 -p "$ROUTES_WORKER_PAUSE_US" -- --file-prefix "$SHMT_PREFIX-routes" >>"$log" 2>&1
			pid=$SHMT_SPAWNED
			echo "bench: route_table, pid $pid" >&2
			serving_wait "$pid" "$sock" "$log" route_table
			routes_run "$t-d$d" "$ROUTES_N over $t, depth $d" -s "$sock" -t "$t" -d "$d"
			if [ "$t$d" = shm32 ]; then
				routes_run list-shm "the list of $ROUTES_N over shm" -s "$sock" -t shm --list
				routes_run list-socket "the list of $ROUTES_N over the socket" -s "$sock" \
					-t socket --list
			fi
			shmt_running "$pid" || shmt_fail "route_table (pid $pid) died: $(tail -n 3 "$log")"
			stop_pid "$pid"
		done
	done
}

# Client: ping2_perf under strace -f -c; daemon: strace attached during a
# run; two lengths each. strace may not attach to the daemon (ptrace not
# permitted): the report then has the client's only.
part_end() {
	local calls
	goal_refs end
	daemon_start "the last goal round and strace" -S "$SPINNING_US"
	goal_round 3
	for calls in "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG"; do
		progress "strace, $calls calls"
		run_tool "ping2_perf under strace ($calls calls)" "$results/strace-client-$calls.out" \
			strace -f -c -o "$results/strace-client-$calls.txt" \
			"$perf" -s "$SHMT_SOCK" -t shm -n "$calls" -w 0 -q
		shmt_spawn strace -f -c -o "$results/strace-daemon-$calls.txt" -p "$SHMT_PID" 2>/dev/null
		# strace attaches to each thread in turn.
		sleep 1
		run_tool "ping2_perf with the daemon under strace ($calls calls)" \
			"$results/strace-daemon-$calls.out" "$perf" -s "$SHMT_SOCK" -t shm -n "$calls" -w 0 -q
		kill -INT "$SHMT_SPAWNED" 2>/dev/null || true
		wait "$SHMT_SPAWNED" || true
		rm -f "$results"/strace-*-"$calls".out
	done
	daemon_check "the strace runs"
	stop_daemon
}

PARTS=(refs spinning sleeping pinned shared idle-channels occasional loaded routes end)
[ ${#chosen[@]} -gt 0 ] || chosen=("${PARTS[@]}")
for part in "${chosen[@]}"; do
	[[ " ${PARTS[*]} " == *" $part "* ]] || shmt_fail "no part $part of a run: ${PARTS[*]}"
done
LC_ALL=C lscpu >"$results/lscpu.txt" 2>/dev/null || true
printf '%s\n' "start=$(date -Iseconds)" "kernel=$(uname -r)" "cpus=$(nproc)" \
	"hypervisor=$(systemd-detect-virt 2>/dev/null || true)" \
	"commit=$(git rev-parse --short HEAD 2>/dev/null || true)" \
	"autogroup=$(cat /proc/self/autogroup 2>/dev/null || true)" "cell_seconds=$CELL_S" \
	"idle_seconds=$IDLE_S" "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)" >"$results/meta.txt"
for part in "${chosen[@]}"; do
	"part_${part//-/_}"
done
printf '%s\n' "end=$(date -Iseconds)" "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" \
	>>"$results/meta.txt"
progress "report"
python3 smoke/bench_report.py "$results" "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG" ||
	shmt_fail "bench_report.py failed on $results (above: why)"
if command -v gnuplot >/dev/null; then
	out=$(gnuplot -e "dir='$results'" smoke/plot.gp 2>&1) || shmt_fail "gnuplot failed: $out"
	echo "bench: plots in $results/*.png" >&2
else
	echo "bench: no gnuplot (Debian gnuplot-nox): no plots" >&2
fi
progress "done"
