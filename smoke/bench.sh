#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench, the one driver of the benchmark (docs/benchmark-method.md):
# the references (ref_bench), the goal rounds, the matrix of ping2_perf runs
# (transport x daemon spinning or sleeping x requests in flight x clients x
# payload), the idle cost, the pinned cells, 16 clients on the shared CPUs,
# idle channels beside a busy client, the occasional calls and the headline,
# the loaded host, the route table, the busy channel's
# system calls under strace; then the report (bench_report.py) and the
# plots (plot.gp). Each step prints "[n/N m:ss] what".
#
#   smoke/bench.sh BUILDDIR                       into results/<timestamp>/
#   smoke/bench.sh BUILDDIR loaded [SCENARIO...]  the loaded host alone
#                                                 (make bench-loaded)
#
# Noise never fails it: a goal round whose two outer measurements moved is
# kept, and the report says so and leaves it out of the goal's median. It
# exits non-zero only on a real error, and says which: a tool that failed,
# crashed or hung, the daemon's death, output that is not what the report
# reads.
#
# Environment: BENCH_CELL_S (seconds per cell, 1), BENCH_IDLE_S (10),
# BENCH_FAIR_CELL_S (the pinned and shared 16-client cells, 4),
# BENCH_BESIDE_S (each ring-beside-channel round, 3), BENCH_QUICK=1 (64 B, 1 or 16 clients, one loaded scenario of each kind),
# BENCH_LOADED_SCENARIOS, BENCH_ROUTES=0, BENCH_ROUTES_N, BENCH_RESULTS (the
# folder), BENCH_REF_BENCH, BENCH_PING2_PERF, BENCH_GAP_PY, BENCH_PY_BENCH
# (the tools: the tests give stand-ins), BENCH_BUILD=0 (no ninja),
# BENCH_PRIORITY=1 (root: under setsid(1), in an autogroup of its own at
# nice -20, as plain nice does not reach across Debian's autogroups).
set -eEu

if [ $# = 0 ]; then
	echo "usage: $0 BUILDDIR [PART...]" >&2
	exit 2
fi
# Nice value of the benchmark's autogroup with BENCH_PRIORITY=1: the highest.
AUTOGROUP_NICE=-20
if [ "${BENCH_PRIORITY:-0}" = 1 ] && [ -z "${BENCH_SETSID:-}" ]; then
	# Only under setsid(1): a new autogroup comes with it.
	exec setsid -w env BENCH_SETSID=1 "$0" "$@"
fi
if [ -n "${BENCH_SETSID:-}" ]; then
	echo "$AUTOGROUP_NICE" >/proc/self/autogroup ||
		echo "bench: cannot set the autogroup's nice value (root only)" >&2
fi
# ping2_perf counts each cell's system calls with the raw_syscalls
# tracepoint, which needs tracefs, maybe not mounted on a fresh boot.
TRACEFS=/sys/kernel/tracing
if [ ! -d "$TRACEFS/events" ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev "$TRACEFS" 2>/dev/null ||
		echo "bench: cannot mount tracefs on $TRACEFS: no per-cell system-call counts" >&2
fi
builddir=$(cd "$1" && pwd)
shift
chosen=("$@")
cd "$(dirname "$0")/.."
srcdir=$(pwd)
SHMT_NAME=bench
SHMT_DAEMON=$builddir/main/shmchand
# A failure shows the end of the daemon's log, not all of it.
SHMT_LOG_TAIL_LINES=${SHMT_LOG_TAIL_LINES:-20}
# shellcheck source=test/lib.sh
. test/lib.sh
shmt_python_direct

CELL_S=${BENCH_CELL_S:-1}
# The 16-client cells, whose fastest/slowest compares clients that share a
# CPU: a client's share of a 1 s cell swings with the scheduler's slices.
FAIR_CELL_S=${BENCH_FAIR_CELL_S:-4}
IDLE_S=${BENCH_IDLE_S:-10}
BESIDE_S=${BENCH_BESIDE_S:-3}
# Two measurements of a round further apart than this fraction of the lower
# one mean that the vCPUs moved in between, or that other work took a CPU
# (the report reads it from meta.txt).
TOLERANCE=0.2
# Warmup calls per client: enough to fault in the rings and buffers and to
# let the poller start spinning, cheap at 128 KiB over the socket.
WARMUP=200
# The daemon's spin budgets of the two columns (shmchand -S): its default,
# and always sleep.
SPINNING_US=100
SLEEPING_US=0
# strace counts a process's startup too: two runs of different lengths, and
# the difference over the difference in calls leaves the per-call part.
STRACE_CALLS_SHORT=20000
STRACE_CALLS_LONG=120000
# ref_bench --gap-us: the idle before each first-request reference, as
# ping2_perf --idle's gaps.
IDLE_GAP_US=20000
IDLE_GAP_ROUNDS=20
# The depth of the echo references: the matrix's depth-32 cells'.
ECHO_DEPTH=32
# The longest any one tool run may take: the longest (the idle cost, 10 s)
# take a fraction of it on a loaded machine, so a run still going has hung.
TOOL_BOUND_S=120
# The idle channels beside one busy client, in rounds whose order
# alternates, so that a load that comes and goes hits both ends alike; the
# daemon allows ping2_perf's one process that many connections and more.
idle_channel_counts=(0 16 256)
IDLE_CHANNEL_ROUNDS=4
IDLE_CHANNEL_MAX_CONN=300
# The occasional calls: the gaps of silence before each call; by default 8
# rounds after each 1 s gap, about 50 s of the run (BENCH_QUICK: 2 rounds).
OCCASIONAL_GAPS_MS=1,20,300,1000
occasional_rounds=()
# The headline's calls one right after the other, from C and from Python,
# on each transport, in turn: the report takes the median round.
HEADLINE_ROUNDS=3
HEADLINE_S=1
# The rounds of the 16 clients on the shared CPUs, with the daemon's
# default poller nice value (judged) and with --poller-nice off (shown).
SHARED_ROUNDS=3
SHARED_OFF_ROUNDS=1
# The loaded host: its scenarios (the names of its table), the rounds of
# each transport in each, the gaps of its occasional calls, the time the
# load runs before the first measurement (the scheduler has spread it), the
# bound on an other server's start.
LOADED_SCENARIOS=(quiet busy-1 busy-1x busy-2x cc-1x cc-2x servers-1 servers-2)
LOADED_ROUNDS=2
LOADED_GAPS_MS=20,300
LOADED_SETTLE_S=1
LOADED_SERVER_WAIT_S=20

transports=(socket memfd memzone)
depths=(1 32)
clients=(1 4 16)
sizes=(64 4096 131072)
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	clients=(1 16)
	sizes=(64)
	occasional_rounds=(--gap-rounds 2)
	HEADLINE_ROUNDS=1
	LOADED_SCENARIOS=(busy-1 cc-1x servers-1)
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

# A command that fails where no check expects it still says where.
trap 'shmt_fail "unexpected failure (status $?) at line $LINENO of $0: $BASH_COMMAND"' ERR

# ---- progress and errors ----

bench_start=$SECONDS
step=0
n_steps=0

elapsed() {
	local s=$((SECONDS - bench_start))
	printf '%d:%02d' $((s / 60)) $((s % 60))
}

# progress WHAT: the next step's line, "[n/N m:ss] WHAT".
progress() {
	step=$((step + 1))
	echo "bench: [$step/$n_steps $(elapsed)] $*" >&2
}

# ended RC: how a process that exited with status RC ended.
ended() {
	if [ "$1" -gt 128 ]; then
		echo "killed by SIG$(kill -l $(($1 - 128)))"
	else
		echo "exit status $1"
	fi
}

# daemon_check WHAT: fail, saying so, if the daemon died (during WHAT).
daemon_check() {
	local pid=$SHMT_PID rc=0
	[ -n "$pid" ] || return 0
	shmt_running "$pid" && return 0
	wait "$pid" || rc=$?
	SHMT_PID=
	shmt_clean_dpdk
	shmt_fail "the daemon (pid $pid) died during $1: $(ended "$rc")"
}

# run_tool WHAT OUT CMD [ARGS...]: CMD's output into OUT, bounded by
# TOOL_BOUND_S, its error output in OUT.err if it fails. A failure ends the
# bench saying what failed and how: the daemon's death first (it explains
# the rest), then a hang, a crash or an exit status, with CMD's last words.
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
	# A tool that lost the daemon may end before the kernel has finished
	# the daemon's exit: give it a second to be seen gone.
	[ -z "$SHMT_PID" ] || shmt_wait_gone "$SHMT_PID" 1 || true
	daemon_check "$what"
	how="failed: $(ended "$rc")"
	[ "$rc" -le 128 ] || how="crashed: $(ended "$rc")"
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || how="hung: no result within $TOOL_BOUND_S s"
	shmt_fail "$what $how; its last words: $(tail -n 5 "$out.err")"
}

# The number each kind of output must have, checked as soon as its tool
# ends (bench_report.py checks every field it reads once the run is over).
declare -A output_key=([ref]=ns_per_op [cell]=calls_per_s [idle]=daemon_cpu_ns [gap]=seconds
	[headline]=rounds [beside]=ratio_p50 [routes]=routes_per_s)
NUMBER_RE='-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?'

# check_output KIND FILE WHAT: fail unless FILE is a JSON object with KIND's
# number, and set output_value to it.
check_output() {
	local key=${output_key[$1]} text
	text=$(<"$2")
	[[ $text =~ ^[[:space:]]*\{.*\}[[:space:]]*$ ]] ||
		shmt_fail "$3: bad output: $2: not JSON: $(head -c 200 "$2")"
	[[ $text =~ \"$key\":\ ($NUMBER_RE) ]] || shmt_fail "$3: bad output: $2: no '$key' number"
	output_value=${BASH_REMATCH[1]}
}

# measure KIND WHAT OUT CMD [ARGS...]: run_tool, then check_output.
measure() {
	local kind=$1 what=$2 out=$3
	shift 3
	run_tool "$what" "$out" "$@"
	check_output "$kind" "$out" "$what"
}

# serving_wait PID SOCK LOG WHAT BOUND_S: wait until the server WHAT serves
# SOCK; fail, saying so, if it dies first or does not within BOUND_S.
serving_wait() {
	local polls=$(($5 * SHMT_POLLS_PER_S))
	until [ -S "$2" ]; do
		shmt_running "$1" || shmt_fail "$4 died: $(tail -n 3 "$3")"
		[ "$polls" -gt 0 ] || shmt_fail "$4 did not serve $2 in $5 s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}

# daemon_start WHAT [shmchand options]: a daemon of its own for WHAT.
daemon_start() {
	local what=$1
	shift
	start_daemon "$@"
	echo "bench: daemon ${*:-with its default options} for $what, pid $SHMT_PID" >&2
}

# ---- the references and the goal rounds ----

# run_ref "NAME|REF_BENCH ARGS" [SUFFIX]: one ref_bench run into
# ref-NAME[-SUFFIX].json.
run_ref() {
	local name=${1%%|*} args=${1#*|}
	[ -z "${2:-}" ] || name=$name-$2
	progress "ref $name"
	# shellcheck disable=SC2086 # args is a list of words
	measure ref "ref_bench $args" "$results/ref-$name.json" "$ref" --json $args
}

start_refs=("clock|clock" "syscall|syscall" "cacheline|cacheline")
for z in "${sizes[@]}"; do
	start_refs+=("ring-pingpong-z$z|-z $z ring-pingpong" "ring-stream-z$z|-z $z ring-stream"
		"chan-pingpong-z$z|-z $z chan-pingpong" "chan-stream-z$z|-z $z chan-stream"
		"unix-z$z|-z $z unix")
done
# The layout's cache lines alone (the floor of the layers table), and the
# raw equivalents of a pipelined call, at the depth-32 goal's size.
start_refs+=("lines-apart-z64|-z 64 lines-apart"
	"ring-echo-z64|-z 64 --depth $ECHO_DEPTH ring-echo"
	"chan-echo-z64|-z 64 --depth $ECHO_DEPTH chan-echo" "ring-local|ring-local"
	"chan-local|chan-local" "eventfd|eventfd" "eventfd-nopin|--no-pin eventfd"
	"eventfd-gap|-n $IDLE_GAP_ROUNDS --gap-us $IDLE_GAP_US eventfd"
	"eventfd-gap-nopin|--no-pin -n $IDLE_GAP_ROUNDS --gap-us $IDLE_GAP_US eventfd")
# The goals' references, measured again between the two daemons and at the
# end (-mid, -end): the hypervisor moves the two vCPUs during a run, and the
# report takes the median of the three.
goal_ref_specs=("cacheline|-z 64 cacheline" "ring-pingpong-z64|-z 64 ring-pingpong"
	"chan-pingpong-z64|-z 64 chan-pingpong" "ring-stream-z64|-z 64 ring-stream"
	"ring-echo-z64|-z 64 --depth $ECHO_DEPTH ring-echo" "eventfd-nopin|--no-pin eventfd")
goal_refs() {
	local spec
	for spec in "${goal_ref_specs[@]}"; do
		run_ref "$spec" "$1"
	done
}

# A goal's ratio means something only if its cell and its reference ran
# with the vCPUs in the same place: a triple, the reference, the cell
# (--no-stamps: timed as the reference is), the reference again; the report
# judges each round by how far apart its two references are. Each
# "NAME|REF_BENCH ARGS|PING2_PERF ARGS".
goal_specs=("rtt|cacheline|-d 1 -z 64" "ring|-z 64 ring-pingpong|-d 1 -z 64"
	"stream|-z 64 ring-stream|-d 32 -z 64" "echo|-z 64 --depth $ECHO_DEPTH ring-echo|-d 32 -z 64")
goal_triple() {
	local rest=${goal_spec#*|} refargs perfargs
	refargs=${rest%%|*}
	perfargs=${rest#*|}
	# shellcheck disable=SC2086 # the args are lists of words
	measure ref "ref_bench $refargs (goal $2)" "$1-ref1.json" "$ref" --json $refargs
	# shellcheck disable=SC2086
	measure cell "ping2_perf $perfargs (goal $2)" "$1-cell.json" "$perf" -s "$SHMT_SOCK" \
		-t shm -T "$CELL_S" -w "$WARMUP" -q --json --no-stamps $perfargs
	# shellcheck disable=SC2086
	measure ref "ref_bench $refargs (goal $2)" "$1-ref2.json" "$ref" --json $refargs
}

# goal_round N: one round of every hardware-bound goal, and the ring goal
# pair by pair (--beside-ring: blocks of each alternated, a pair in one
# placement of the vCPUs).
goal_round() {
	local name goal_spec
	for goal_spec in "${goal_specs[@]}"; do
		name=${goal_spec%%|*}-r$1
		progress "goal $name"
		goal_triple "$results/goal-$name" "$name"
	done
	progress "goal beside-r$1"
	measure beside "ping2_perf --beside-ring (goal beside-r$1)" "$results/goal-beside-r$1.json" \
		"$perf" -s "$SHMT_SOCK" --beside-ring "$BESIDE_S" -w "$WARMUP" -q --json
}

# ---- the matrix ----

# run_cell MODE TRANSPORT DEPTH CLIENTS SIZE [ping2_perf options]: one cell
# into cell-TRANSPORT-MODE-dDEPTH-cCLIENTS-zSIZE.json.
client_cpus=()
run_cell() {
	local mode=$1 transport=$2 depth=$3 nclients=$4 size=$5 name args=() count=() p50=-
	shift 5
	name=cell-$transport-$mode-d$depth-c$nclients-z$size
	case $transport in
	# No system-call counter on the socket: its tracepoint puts every
	# system call of the machine on the kernel's traced path, 3-5 µs per
	# round trip (strace counts them: make bench-socket).
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

# memzone_probe: whether the daemon has hugepages for the memzone column
# (a short --secondary run), and why not, in memzone-skipped.txt.
memzone_probe() {
	local err=$results/memzone-probe.err rc=0
	timeout --foreground --kill-after="$SHMT_KILL_AFTER_S" "$TOOL_BOUND_S" \
		"$perf" -s "$SHMT_SOCK" --secondary -n 100 -w 0 -q >/dev/null 2>"$err" || rc=$?
	daemon_check "the memzone probe"
	if [ "$rc" = 0 ]; then
		rm -f "$err"
		return 0
	fi
	reason=$(tail -n 1 "$err")
	[ "$rc" -le 128 ] || reason="$reason ($(ended "$rc"))"
	echo "bench: no memzone column: $reason" >&2
	printf '%s\n' "$reason" >"$results/memzone-skipped.txt"
	return 1
}

matrix() {
	local mode=$1 transport depth n z have_memzone=1
	memzone_probe || have_memzone=0
	for transport in "${transports[@]}"; do
		for depth in "${depths[@]}"; do
			for n in "${clients[@]}"; do
				for z in "${sizes[@]}"; do
					if [ "$transport" = memzone ] && [ "$have_memzone" = 0 ]; then
						step=$((step + 1))
					else
						run_cell "$mode" "$transport" "$depth" "$n" "$z"
					fi
				done
			done
		done
	done
}

# The placement cells: the daemon (main thread and poller) on the last CPU,
# EAL -l, the clients on the others, as a DPDK deployment gives its poller a
# core of its own. Spinning daemon, memfd, 64 B, depths x clients.
pinned_cells() {
	local daemon_cpu=$(($(nproc) - 1)) depth n window
	daemon_start "the pinned cells, on CPU $daemon_cpu" -S "$SPINNING_US" -- -l "$daemon_cpu"
	client_cpus=(taskset -c "0-$((daemon_cpu - 1))")
	for depth in "${depths[@]}"; do
		for n in "${clients[@]}"; do
			window=()
			[ "$n" != 16 ] || window=(-T "$FAIR_CELL_S")
			run_cell pinned memfd "$depth" "$n" 64 "${window[@]}"
		done
	done
	client_cpus=()
	stop_daemon
}

# ---- 16 clients and the poller on shared CPUs ----

# One client, 16 over the fairness window, one client again, wherever the
# scheduler puts them: the goal compares the 16 with the two single clients
# around them, so those must agree (judged as a goal triple is).
shared_cell() {
	measure cell "ping2_perf -c $2 ($4)" "$1" "$perf" -s "$SHMT_SOCK" -t shm -d 1 -z 64 \
		-c "$2" -T "$3" -w "$WARMUP" -q --json --no-stamps
}
shared_triple() {
	shared_cell "$1-one1.json" 1 "$CELL_S" "$2"
	shared_cell "$1-many.json" 16 "$FAIR_CELL_S" "$2"
	echo "bench:   16 clients: ${output_value%.*} calls/s" >&2
	shared_cell "$1-one2.json" 1 "$CELL_S" "$2"
	daemon_check "$2"
}

# shared_rounds: SHARED_ROUNDS with the daemon's default poller nice value,
# SHARED_OFF_ROUNDS with --poller-nice off; poller-nice.txt says the nice
# value each daemon's poller had.
part_shared() {
	local nice_mode rounds args r t fields nice
	: >"$results/poller-nice.txt"
	for nice_mode in default off; do
		rounds=$SHARED_ROUNDS args=()
		[ "$nice_mode" = default ] || rounds=$SHARED_OFF_ROUNDS args=(--poller-nice off)
		daemon_start "the shared-CPU rounds" -S "$SPINNING_US" "${args[@]}"
		for r in $(seq "$rounds"); do
			progress "16 clients on shared CPUs: shared-$nice_mode-r$r"
			shared_triple "$results/shared-$nice_mode-r$r" "shared-$nice_mode-r$r"
		done
		nice="?"
		for t in /proc/"$SHMT_PID"/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = shmchan-poll0 ] || continue
			read -ra fields <<<"$(sed 's/.*) //' "$t/stat")"
			nice=${fields[16]}
		done
		echo "$nice_mode $nice" >>"$results/poller-nice.txt"
		stop_daemon
	done
}

# ---- idle channels beside a busy one ----

part_idle_channels() {
	local r n counts
	daemon_start "the idle channels" -S "$SPINNING_US" --max-conn-per-pid \
		"$IDLE_CHANNEL_MAX_CONN" --max-conn-per-uid 0
	for r in $(seq "$IDLE_CHANNEL_ROUNDS"); do
		counts=("${idle_channel_counts[@]}")
		# Even rounds take the counts in reverse order.
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

# ---- the occasional calls and the headline ----

# GR_PING2 after each gap of silence, one shm and one socket connection in
# one process alternated call by call, from C (ping2_perf --gap) and from
# Python (python/bench_gap.py); then the headline, calls one right after
# the other from C and from Python (python/bench.py) on each transport; on a
# daemon with its default options, as a user starts it.
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
	daemon_check "the occasional calls"
	progress "calls one right after the other, from C and from Python"
	measure headline "bench.py" "$results/headline.json" "${py[@]}" "$py_bench" "$SHMT_SOCK" \
		--ping2-perf "$perf" --rounds "$HEADLINE_ROUNDS" --seconds "$HEADLINE_S" --json
	daemon_check "the headline calls"
	stop_daemon
}

# ---- the loaded host ----

# A daemon with its default options serves one client while the benchmark
# runs a load beside them, one scenario after the other: nothing; busy
# loops; a compiler run over and over, as a build does; other channel
# servers (a shmchand of its own each, without hugepages, with a client
# calling back to back). In each: calls back to back on the channel and on
# the socket, with a blocking client and with an event-loop client
# (ping2_perf --event-loop), alternated, then the occasional calls;
# loaded-SCEN-host.json
# says what ran, the runnable tasks seen and the other servers' requests.

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

# loaded_start SCEN: the scenario's load, its PIDs in loaded_pids.
loaded_start() {
	local i f sock src=$results/loaded-cc.c
	loaded_pids=() loaded_socks=()
	for i in $(seq "$(loaded_processes "$1")"); do
		case $1 in
		# Each loop names the results folder ($0 of its shell): a test finds
		# what a run left by it.
		busy-*) shmt_spawn bash -c 'while :; do :; done' "$results" ;;
		cc-*)
			# A C file cc -O2 takes a fraction of a second on; the loop's
			# compiler ends with it (a TERM runs the trap while it waits).
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
			serving_wait "$SHMT_SPAWNED" "$sock" "$results/loaded-other-$i.log" \
				"other server $i" "$LOADED_SERVER_WAIT_S"
			loaded_socks+=("$sock")
			shmt_spawn "$perf" -s "$sock" -t shm -T 3600 -w 0 -q --no-syscall-count --no-stamps
			;;
		esac
		loaded_pids+=("$SHMT_SPAWNED")
	done
}

# stop_pid PID: stop a process this bench started, SIGKILL if SIGTERM does
# not end it in time.
stop_pid() {
	kill -TERM "$1" 2>/dev/null || true
	shmt_wait_gone "$1" "$SHMT_STOP_WAIT_S" || kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# loaded_stop: end the load, clients before their servers (later PIDs first).
loaded_stop() {
	local i
	for ((i = ${#loaded_pids[@]} - 1; i >= 0; i--)); do
		stop_pid "${loaded_pids[i]}"
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

# The loaded host's cells in each odd round, in the reverse order in each
# even one: TRANSPORT, or TRANSPORT-evloop for the event-loop client.
LOADED_CELLS=(shm socket shm-evloop socket-evloop)

# loaded_cell SCEN CELL ROUND: one cell, the runnable tasks before it
# (procs_running, less the reader), the other servers' requests during it.
loaded_cell() {
	local r0 t0 transport=${2%-evloop} evloop=() what=$2 is_evloop=false
	[ "$transport" = "$2" ] || evloop=(--event-loop) what="$transport event loop" is_evloop=true
	seen+=($(($(awk '$1 == "procs_running" { print $2 }' /proc/stat) - 1)))
	r0=$(loaded_requests)
	t0=$EPOCHREALTIME
	measure cell "ping2_perf $what ($1)" "$results/loaded-$1-$2-r$3.json" "$perf" \
		-s "$SHMT_SOCK" -t "$transport" "${evloop[@]}" -T "$CELL_S" -w "$WARMUP" -q --json \
		--no-syscall-count
	others+=("{\"transport\": \"$transport\", \"event_loop\": $is_evloop, \"round\": $3, \"requests\": $(($(loaded_requests) - r0)), \"seconds\": $(
		awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }')}")
}

# loaded_host: every scenario, in turn, on a daemon with its default options.
part_loaded() {
	local i scen r cell order load_start seen others
	daemon_start "the loaded host"
	for i in "${!LOADED_SCENARIOS[@]}"; do
		scen=${LOADED_SCENARIOS[i]} seen=() others=()
		progress "loaded host: $scen"
		load_start=$(cut -d' ' -f1-3 /proc/loadavg)
		loaded_start "$scen"
		sleep "$LOADED_SETTLE_S"
		for r in $(seq "$LOADED_ROUNDS"); do
			# Alternated, so that a load that grows or fades hits all.
			order=("${LOADED_CELLS[@]}")
			[ $((r % 2)) = 1 ] || mapfile -t order < <(printf '%s\n' "${LOADED_CELLS[@]}" | tac)
			for cell in "${order[@]}"; do
				loaded_cell "$scen" "$cell" "$r"
			done
		done
		seen+=($(($(awk '$1 == "procs_running" { print $2 }' /proc/stat) - 1)))
		measure gap "ping2_perf --gap ($scen)" "$results/loaded-$scen-gap.json" "$perf" \
			-s "$SHMT_SOCK" --gap "$LOADED_GAPS_MS" -w "$WARMUP" -q --json
		loaded_stop
		daemon_check "the loaded host, $scen"
		printf '{"scenario": "%s", "order": %d, "cpus": %d, "load_processes": %d, %s, %s}\n' \
			"$scen" "$i" "$(nproc)" "$(loaded_processes "$scen")" \
			"\"loadavg_start\": \"$load_start\", \"loadavg_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"" \
			"\"runnable\": [$(IFS=,; echo "${seen[*]}")], \"others\": [$(IFS=,; echo "${others[*]}")]" \
			>"$results/loaded-$scen-host.json"
	done
	stop_daemon
}

# ---- the route table ----

# examples/route_table (routes in rte_fib, served with libgr_api_server) fed
# ROUTES_N IPv4 routes by route_inject (the prefix lengths of the BGP table,
# one request per route), at depth 1 (one call at a time, as FRR's plugin
# for Grout and Grout's fib_inject do) and depth 32, over the channel and
# over the socket; beside them route_inject --reference, the same
# insertions into an rte_fib of its own process (no server: the physical
# limit); then the list of every route, a stream of ROUTES_N responses, on
# each transport. Each injection gets a fresh route_table. Writes
#   routes-reference.json, routes-{shm,socket}-d{1,32}.json,
#   routes-list-{shm,socket}.json      (route_inject --json)
# which bench_routes.py reports. BENCH_ROUTES=0 skips it; BENCH_ROUTES_N
# sets the count (default 1 000 000, BENCH_QUICK 100 000). Every process it
# starts is stopped by PID.

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
	stop_pid "$routes_pid"
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

part_routes() {
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

# ---- the busy channel's system calls, under strace ----

# Client: ping2_perf under strace -f -c. Daemon: strace -f -c attached to it
# during a run. Two lengths each; a busy channel makes no system call in the
# loop, so what is left per call is what leaks. strace may not attach to
# the daemon (ptrace not permitted): the report then has the client's only.
strace_runs() {
	local calls strace_pid
	for calls in "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG"; do
		progress "strace, $calls calls"
		run_tool "ping2_perf under strace ($calls calls)" "$results/strace-client-$calls.out" \
			strace -f -c -o "$results/strace-client-$calls.txt" \
			"$perf" -s "$SHMT_SOCK" -t shm -n "$calls" -w 0 -q
		"${shmt_die_with_parent[@]}" strace -f -c -o "$results/strace-daemon-$calls.txt" \
			-p "$SHMT_PID" 2>/dev/null &
		strace_pid=$!
		shmt_track "$strace_pid"
		# strace attaches to each thread in turn: let it finish first.
		sleep 1
		run_tool "ping2_perf with the daemon under strace ($calls calls)" \
			"$results/strace-daemon-$calls.out" "$perf" -s "$SHMT_SOCK" -t shm -n "$calls" -w 0 -q
		kill -INT "$strace_pid" 2>/dev/null || true
		wait "$strace_pid" || true
		rm -f "$results"/strace-*-"$calls".out
	done
	daemon_check "the strace runs"
}

# ---- what the run says ----

# meta.txt and lscpu.txt: what the machine is and was doing, for the report.
meta() {
	if [ "$1" = start ]; then
		LC_ALL=C lscpu >"$results/lscpu.txt" 2>/dev/null || true
		printf '%s\n' "start=$(date -Iseconds)" "kernel=$(uname -r)" "cpus=$(nproc)" \
			"hypervisor=$(systemd-detect-virt 2>/dev/null || true)" \
			"commit=$(git rev-parse --short HEAD 2>/dev/null || true)" \
			"autogroup=$(cat /proc/self/autogroup 2>/dev/null || true)" \
			"cell_seconds=$CELL_S" "idle_seconds=$IDLE_S" "tolerance=$TOLERANCE" \
			"loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)" >"$results/meta.txt"
	else
		printf '%s\n' "end=$(date -Iseconds)" "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" \
			>>"$results/meta.txt"
	fi
}

# report: report.md and summary.json, then the plots.
report() {
	progress "report"
	python3 smoke/bench_report.py "$results" "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG" ||
		shmt_fail "bench_report.py failed on $results (above: why)"
	if command -v gnuplot >/dev/null; then
		out=$(gnuplot -e "dir='$results'" smoke/plot.gp 2>&1) || shmt_fail "gnuplot failed: $out"
		echo "bench: plots in $results/*.png" >&2
	else
		echo "bench: no gnuplot (Debian gnuplot-nox): no plots" >&2
	fi
	echo "bench: done in $(elapsed)" >&2
}

# ---- the run ----

# The parts of a run, in order, each with its daemon, and the steps of each
# (for the progress lines): the references; the spinning daemon's goal
# rounds around its matrix, the references again and the idle cost; the
# sleeping daemon's matrix and both ends sleeping; the pinned cells; the
# shared-CPU rounds; the idle channels; the occasional calls and the
# headline; the loaded host; the route table; the references at the end,
# the last goal round and the strace runs.
PARTS=(refs spinning sleeping pinned shared idle-channels occasional loaded routes end)
matrix_steps=$((${#transports[@]} * ${#depths[@]} * ${#clients[@]} * ${#sizes[@]}))
goal_round_steps=$((${#goal_specs[@]} + 1))
declare -A part_steps=([refs]=${#start_refs[@]}
	[spinning]=$((2 * goal_round_steps + matrix_steps + ${#goal_ref_specs[@]} + 1))
	[sleeping]=$((matrix_steps + 1)) [pinned]=$((${#depths[@]} * ${#clients[@]}))
	[shared]=$((SHARED_ROUNDS + SHARED_OFF_ROUNDS))
	[idle-channels]=$((IDLE_CHANNEL_ROUNDS * ${#idle_channel_counts[@]})) [occasional]=3
	[loaded]=${#LOADED_SCENARIOS[@]} [routes]=$routes_steps
	[end]=$((${#goal_ref_specs[@]} + goal_round_steps + 2)))
# The pinned cells need a CPU for the daemon and one for its clients.
[ "$(nproc)" -ge 2 ] || part_steps[pinned]=0

part_refs() {
	local spec
	for spec in "${start_refs[@]}"; do
		run_ref "$spec"
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
	daemon_start "the sleeping matrix" -S "$SLEEPING_US"
	matrix sleeping
	# Both ends sleeping (client spin 0 too): a raw eventfd ping-pong's like.
	run_cell bothsleep memfd 1 1 64 --spin 0
	daemon_check "the sleeping daemon's cells"
	stop_daemon
}

part_pinned() {
	[ "${part_steps[pinned]}" = 0 ] || pinned_cells
}

part_end() {
	goal_refs end
	daemon_start "the last goal round and strace" -S "$SPINNING_US"
	goal_round 3
	strace_runs
	stop_daemon
}

# What the caller chose, every part by default; make bench-loaded takes one.
[ ${#chosen[@]} -gt 0 ] || chosen=("${PARTS[@]}")
for part in "${chosen[@]}"; do
	[ -n "${part_steps[$part]+set}" ] || shmt_fail "no part $part of a run: ${PARTS[*]}"
	n_steps=$((n_steps + part_steps[$part]))
done
# The report.
n_steps=$((n_steps + 1))
meta start
for part in "${chosen[@]}"; do
	"part_${part//-/_}"
done
meta end
report
