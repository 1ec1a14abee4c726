#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# make bench: the reference microbenchmarks (ref_bench), then the matrix of
# ping2_perf runs: transport (socket, shm memfd, shm memzone when the daemon
# has hugepages) x daemon spin (-S 100 spinning, -S 0 sleeping) x requests in
# flight (1, 32) x clients (1, 4, 16) x payload (64 B, 4 KiB, 128 KiB), each
# cell for BENCH_CELL_S seconds; then the idle cost (16 attached clients, 10
# s), the placement cells (the daemon on a CPU of its own, the clients on
# the others: 64 B, spinning, memfd, depths x clients), a busy client's round
# trip beside 0, 16 and 256 idle channels on its poller (alternated rounds),
# the occasional calls (GR_PING2 after 1 ms, 20 ms, 300 ms and 1 s of
# silence, shm and socket alternated, from C and from Python), the loaded
# host (bench_loaded.sh), and the system calls of a busy channel counted
# again under strace.
# Writes every JSON into results/<timestamp>/, a summary.json, the plots
# (gnuplot), and prints the goals table. About nine minutes on 2 CPUs; each
# step prints "[n/N elapsed]" and what it measures. A sequencer: what the
# steps decide (a round measured again, its verdict) and the report are the
# Python tools' beside it (bench_rounds.py, bench_report.py).
#
# Noise never fails it: a goal round whose two references moved is measured
# again while the run's retry budget lasts, then kept and reported as moved,
# with its spread. It exits non-zero only on a real error, and says which: a
# tool that failed, crashed or hung, the daemon's death, output that is not
# what the report reads.
#
#   smoke/bench.sh BUILDDIR
#
# Environment: BENCH_CELL_S (seconds per cell, default 1), BENCH_IDLE_S
# (default 10), BENCH_QUICK=1 (64 B and 1 or 16 clients only, for a check),
# BENCH_RETRY_S (seconds of goal retries in all, default 40),
# BENCH_GOAL_TRIES (tries of one goal triple at most, default 3),
# BENCH_FAIR_CELL_S (seconds of the pinned 16-client cells, default 4),
# BENCH_RESULTS (the results folder, default results/<timestamp>),
# BENCH_BESIDE_S (seconds of each ring-beside-channel round, default 3),
# BENCH_REF_BENCH, BENCH_PING2_PERF, BENCH_GAP_PY, BENCH_PY_BENCH (the tools;
# the tests give stand-ins), BENCH_BUILD=0 (built already: no ninja),
# BENCH_PRIORITY=1 (root: run under setsid(1) in an autogroup of its own at
# nice -20, as plain nice does not reach across Debian's autogroups).
set -eEu

[ $# = 1 ] || { echo "usage: $0 BUILDDIR" >&2 && exit 2; }
# Nice value of the benchmark's autogroup with BENCH_PRIORITY=1: the highest.
AUTOGROUP_NICE=-20
if [ "${BENCH_PRIORITY:-0}" = 1 ] && [ -z "${BENCH_SETSID:-}" ]; then
	# Only under setsid(1): a new autogroup comes with it, and the
	# caller's must keep its own nice value.
	exec setsid -w env BENCH_SETSID=1 "$0" "$@"
fi
if [ -n "${BENCH_SETSID:-}" ]; then
	echo "$AUTOGROUP_NICE" >/proc/self/autogroup ||
		echo "bench: cannot set the autogroup's nice value (root only)" >&2
fi
# ping2_perf counts each cell's system calls with the raw_syscalls tracepoint,
# which needs tracefs, maybe not mounted on a fresh boot: as root, mount it;
# without it the busy channel's goal rests on the strace runs alone.
TRACEFS=/sys/kernel/tracing
if [ ! -d "$TRACEFS/events" ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev "$TRACEFS" 2>/dev/null ||
		echo "bench: cannot mount tracefs on $TRACEFS: no per-cell system-call counts" >&2
fi
builddir=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
srcdir=$(pwd)
SHMT_NAME=bench
SHMT_DAEMON=$builddir/main/shmchand
# A failure shows the end of the daemon's log, not all of it.
SHMT_LOG_TAIL_LINES=${SHMT_LOG_TAIL_LINES:-20}
# shellcheck source=test/lib.sh
. test/lib.sh
# Hundreds of Python calls: python3 resolved once.
shmt_python_direct

CELL_S=${BENCH_CELL_S:-1}
# The pinned 16-client cells, whose fastest/slowest goal compares clients
# that time-share one CPU: a client's share of a 1 s cell swings with the
# scheduler's slices (a few ms each), 1.15 to 1.6 from run to run. A longer
# window averages that out; the other cells keep CELL_S.
FAIR_CELL_S=${BENCH_FAIR_CELL_S:-4}
IDLE_S=${BENCH_IDLE_S:-10}
# Warmup calls per client: enough to fault in the rings and buffers and to
# let the daemon's poller start spinning, cheap at 128 KiB over the socket.
WARMUP=200
# The daemon's spin budgets of the two columns (shmchand -S): its default,
# and always sleep.
SPINNING_US=100
SLEEPING_US=0
# strace counts a process's startup too: two runs of different lengths, and
# the difference over the difference in calls leaves the per-call part.
STRACE_CALLS_SHORT=20000
STRACE_CALLS_LONG=120000
# ref_bench --gap-us: the idle time before each first-request reference, as
# ping2_perf --idle's gaps (IDLE_GAP_MS).
IDLE_GAP_US=20000
IDLE_GAP_ROUNDS=20
# ref_bench --depth of the echo references: the requests in flight of the
# matrix's depth-32 cells, whose raw ceiling they measure.
ECHO_DEPTH=32
# The longest any one tool run may take: the longest runs (the idle cost,
# 10 s, and the pinned 16-client cells, 4 s) take a fraction of it on a
# loaded machine, so a run still going then has hung.
TOOL_BOUND_S=120
# The idle channels beside one busy client (ping2_perf --idle-channels), on
# the client's poller (the daemon has one), in rounds whose order alternates
# (0 16 256, then 256 16 0, ...), so that a load that comes and goes hits
# both ends alike. Each is a memfd channel of ping2_perf's own process, so
# the daemon allows one process that many connections and more.
idle_channel_counts=(0 16 256)
IDLE_CHANNEL_ROUNDS=4
IDLE_CHANNEL_MAX_CONN=300

# The occasional calls: the gaps of silence before each call (ping2_perf
# --gap, python/bench_gap.py), on a daemon with its default options. Their
# default rounds (8 after each 1 s gap) add about 50 s to the run, most of it
# the 1 s gaps; BENCH_QUICK takes 2 rounds of each.
OCCASIONAL_GAPS_MS=1,20,300,1000
occasional_rounds=()
# The headline's calls one right after the other, on that daemon
# (python/bench.py): from C and from Python, on each transport, in turn,
# rounds of HEADLINE_S seconds each; the report takes the median round.
HEADLINE_ROUNDS=3
HEADLINE_S=1

transports=(socket memfd memzone)
depths=(1 32)
clients=(1 4 16)
sizes=(64 4096 131072)
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	clients=(1 16)
	sizes=(64)
	occasional_rounds=(--gap-rounds 2)
	HEADLINE_ROUNDS=1
	LOADED_QUICK=1
fi

perf=${BENCH_PING2_PERF:-$builddir/smoke/ping2_perf}
ref=${BENCH_REF_BENCH:-$builddir/smoke/ref_bench}
gap_py=${BENCH_GAP_PY:-$srcdir/python/bench_gap.py}
py_bench=${BENCH_PY_BENCH:-$srcdir/python/bench.py}
if [ "${BENCH_BUILD:-1}" != 0 ]; then
	echo "bench: building $builddir" >&2
	# Everything: the daemon, the tools, the client library and the Python
	# package's C module (bench_gap.py).
	out=$(ninja -C "$builddir" 2>&1) ||
		shmt_fail "ninja: $out"
fi

results=${BENCH_RESULTS:-$srcdir/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$results"
echo "bench: results in $results" >&2

# ---- progress and errors ----

bench_start=$SECONDS
step=0
# n_steps is counted below, once the plan is known.
n_steps=0

# A command that fails where no check expects it still says where.
trap 'shmt_fail "unexpected failure (status $?) at line $LINENO of $0: $BASH_COMMAND"' ERR

# progress, daemon_check, run_tool, check_output; the loaded host.
# shellcheck source=smoke/bench_lib.sh
. smoke/bench_lib.sh
# shellcheck source=smoke/bench_loaded.sh
. smoke/bench_loaded.sh
# shellcheck source=smoke/bench_routes.sh
. smoke/bench_routes.sh

# ---- the references ----

# The references of the start, each "NAME|REF_BENCH ARGS".
start_refs=("clock|clock" "syscall|syscall" "cacheline|cacheline")
for z in "${sizes[@]}"; do
	start_refs+=("ring-pingpong-z$z|-z $z ring-pingpong" "ring-stream-z$z|-z $z ring-stream"
		"chan-pingpong-z$z|-z $z chan-pingpong" "chan-stream-z$z|-z $z chan-stream"
		"unix-z$z|-z $z unix")
done
# The cache lines of the ring layout alone, the floor of the layers table.
start_refs+=("lines-apart-z64|-z 64 lines-apart")
# A pipelined call's raw equivalent, at the size of the depth-32 goal.
start_refs+=("ring-echo-z64|-z 64 --depth $ECHO_DEPTH ring-echo"
	"chan-echo-z64|-z 64 --depth $ECHO_DEPTH chan-echo" "ring-local|ring-local"
	"chan-local|chan-local" "eventfd|eventfd" "eventfd-nopin|--no-pin eventfd"
	"eventfd-gap|-n $IDLE_GAP_ROUNDS --gap-us $IDLE_GAP_US eventfd"
	"eventfd-gap-nopin|--no-pin -n $IDLE_GAP_ROUNDS --gap-us $IDLE_GAP_US eventfd")

# The references of the goals again (goal_refs SUFFIX): on a virtual machine
# the hypervisor may move the two virtual CPUs to other physical cores during
# the run, and a cache-line round trip between them changes with it (seen:
# 78 ns and 258 ns minutes apart). They are measured at the start, between
# the two daemons and at the end; the report compares the cells with the
# median of the three and shows their spread.
goal_ref_specs=("cacheline|-z 64 cacheline" "ring-pingpong-z64|-z 64 ring-pingpong"
	"chan-pingpong-z64|-z 64 chan-pingpong" "ring-stream-z64|-z 64 ring-stream"
	"ring-echo-z64|-z 64 --depth $ECHO_DEPTH ring-echo" "eventfd-nopin|--no-pin eventfd")

# run_ref "NAME|ARGS" [SUFFIX]: one ref_bench run into ref-NAME[-SUFFIX].json.
run_ref() {
	local name=${1%%|*} args=${1#*|}
	[ -z "${2:-}" ] || name=$name-$2
	progress "ref $name"
	# shellcheck disable=SC2086 # args is a list of words
	run_tool "ref_bench $args" "$results/ref-$name.json" "$ref" --json $args
	check_output ref "$results/ref-$name.json" "ref_bench $args"
}

goal_refs() {
	local spec
	for spec in "${goal_ref_specs[@]}"; do
		run_ref "$spec" "$1"
	done
}

# ---- the hardware-bound goals, side by side ----

# A goal's ratio is meaningful only if its cell and its reference ran with the
# two virtual CPUs in the same place: this hypervisor moves them (a cache-line
# round trip of 57, 75 and 95 ns within one run, 258 ns in another). So each
# such goal is measured as a triple: the reference, the cell, the reference
# again; if the two references differ by more than bench_rounds.py's
# tolerance (20 %), the vCPUs moved in between (or other work took the CPUs
# from the reference) and the triple is measured again, up to GOAL_TRIES
# times in all, while the run's retry budget (RETRY_S, all retries together)
# lasts: bench_rounds.py decides after each try, and writes what the report
# reads. A round whose references still differ is kept as it is: the report
# marks it as moved, with its spread, and leaves it out of the goal's median
# when another round is steady. Three rounds of triples (at the start,
# between the two daemons, at the end: wherever the vCPUs are then); the
# report gives each round's ratio and the goal takes their median.
GOAL_TRIES=${BENCH_GOAL_TRIES:-3}
RETRY_S=${BENCH_RETRY_S:-40}
python3 smoke/bench_rounds.py budget "$results" "$RETRY_S"
# The goals of a round, each "NAME|REF_BENCH ARGS|PING2_PERF ARGS".
goal_specs=("rtt|cacheline|-d 1 -z 64" "ring|-z 64 ring-pingpong|-d 1 -z 64"
	"stream|-z 64 ring-stream|-d 32 -z 64" "echo|-z 64 --depth $ECHO_DEPTH ring-echo|-d 32 -z 64")
GOAL_ROUNDS=3

# judge KIND NAME TRY SECONDS A B: bench_rounds.py's word after try TRY of
# round NAME, which measured A and B around its cell: "again" or "done".
judge() {
	python3 smoke/bench_rounds.py judge "$results" "$1" "$2" "$3" "$GOAL_TRIES" "$4" "$5" "$6"
}

# goal_triple "NAME|REF_BENCH ARGS|PING2_PERF ARGS" ROUND: on the spinning
# daemon, goal-NAME-rROUND-tTRY-{ref1,cell,ref2}.json for each try, and
# goal-NAME-rROUND-tries.json: the tries made, whether the last was steady,
# and why the retries stopped.
goal_triple() {
	local name=${1%%|*} rest=${1#*|} refargs perfargs try=1 started ns1 ns2 prefix
	local output_value
	refargs=${rest%%|*}
	perfargs=${rest#*|}
	name=$name-r$2
	progress "goal $name"
	while :; do
		started=$SECONDS
		prefix=$results/goal-$name-t$try
		# shellcheck disable=SC2086 # refargs is a list of words
		run_tool "ref_bench $refargs (goal $name)" "$prefix-ref1.json" "$ref" --json $refargs
		check_output ref "$prefix-ref1.json" "ref_bench $refargs (goal $name)"
		ns1=$output_value
		# --no-stamps: timed as the reference is, by the clock every 64
		# calls, not per call (a TSC read on every round trip's path).
		# shellcheck disable=SC2086 # perfargs is a list of words
		run_tool "ping2_perf $perfargs (goal $name)" "$prefix-cell.json" \
			"$perf" -s "$SHMT_SOCK" -t shm -T "$CELL_S" -w "$WARMUP" -q --json --no-stamps \
			$perfargs
		check_output cell "$prefix-cell.json" "ping2_perf $perfargs (goal $name)"
		# shellcheck disable=SC2086
		run_tool "ref_bench $refargs (goal $name)" "$prefix-ref2.json" "$ref" --json $refargs
		check_output ref "$prefix-ref2.json" "ref_bench $refargs (goal $name)"
		ns2=$output_value
		[ "$(judge goal "$name" "$try" $((SECONDS - started)) "$ns1" "$ns2")" = again ] || break
		try=$((try + 1))
	done
}

# goal_beside N: the ring goal's value, pair by pair (--beside-ring: blocks
# of each alternated, so that a pair rides one placement of the vCPUs).
BESIDE_S=${BENCH_BESIDE_S:-3}
goal_beside() {
	progress "goal beside-r$1"
	run_tool "ping2_perf --beside-ring (goal beside-r$1)" "$results/goal-beside-r$1.json" \
		"$perf" -s "$SHMT_SOCK" --beside-ring "$BESIDE_S" -w "$WARMUP" -q --json
	check_output beside "$results/goal-beside-r$1.json" "ping2_perf --beside-ring (goal beside-r$1)"
}

# goal_round N: one round of every hardware-bound goal.
goal_round() {
	local spec
	for spec in "${goal_specs[@]}"; do
		goal_triple "$spec" "$1"
	done
	goal_beside "$1"
}

# ---- the matrix ----

# The placement cells ("pinned"): the daemon (its main thread and poller) on
# the last CPU, EAL -l, the clients on the others (taskset), as a DPDK
# deployment gives its poller a core of its own. Spinning daemon, memfd,
# 64 B, depths x clients. Skipped on one CPU.
ncpus=$(nproc)
pinned_cells=$((${#depths[@]} * ${#clients[@]}))
[ "$ncpus" -ge 2 ] || pinned_cells=0
matrix_cells=$((2 * ${#transports[@]} * ${#depths[@]} * ${#clients[@]} * ${#sizes[@]}))
# The shared-CPU rounds of the 16-client goals (SHARED_ROUNDS with the
# default poller nice value, SHARED_OFF_ROUNDS with --poller-nice off).
shared_cells=4
# Every step: the references (at the start, between the daemons, at the end),
# the goal triples and pairs, the matrix, the cell with both ends sleeping, the idle
# cost, the pinned cells, the idle channels, the occasional calls (C and
# Python), the headline's calls, the loaded host, the route table, the two
# strace runs, the report.
n_steps=$((${#start_refs[@]} + 2 * ${#goal_ref_specs[@]} + GOAL_ROUNDS * (${#goal_specs[@]} + 1) +
	matrix_cells + 1 + 1 + pinned_cells + shared_cells + IDLE_CHANNEL_ROUNDS * ${#idle_channel_counts[@]} +
	2 + 1 + ${#LOADED_SCENARIOS[@]} + routes_steps + 2 + 1))
memzone_reason=

# What the machine is and was doing: the report says what it ran on and how
# noisy the run was.
python3 smoke/bench_meta.py start "$results" "$CELL_S" "$IDLE_S" "$RETRY_S"

for spec in "${start_refs[@]}"; do
	run_ref "$spec"
done

# run_cell MODE TRANSPORT DEPTH CLIENTS SIZE [ping2_perf options]: one cell
# into cell-<transport>-<mode>-d<depth>-c<clients>-z<size>.json.
run_cell() {
	local mode=$1 transport=$2 depth=$3 nclients=$4 size=$5 name args=() count=() p50
	shift 5
	name=cell-$transport-$mode-d$depth-c$nclients-z$size
	case $transport in
	# No system-call counter on the socket: its tracepoint puts every
	# system call of the machine on the kernel's traced path, 3-5 µs per
	# socket round trip. The socket's counts come from strace (make
	# bench-socket) and the test sock_syscall_count.
	socket)
		args=(-t socket)
		count=(--no-syscall-count)
		;;
	memfd) args=(-t shm) ;;
	memzone) args=(-t shm --secondary) ;;
	esac
	progress "$name"
	run_tool "ping2_perf $transport $mode d$depth c$nclients z$size" "$results/$name.json" \
		"${client_cpus[@]}" "$perf" -s "$SHMT_SOCK" "${args[@]}" -d "$depth" -c "$nclients" \
		-z "$size" -T "$CELL_S" -w "$WARMUP" -q --json --cdf "${count[@]}" "$@"
	check_output cell "$results/$name.json" "ping2_perf $transport $mode d$depth c$nclients z$size"
	daemon_check "$name"
	p50=-
	[[ $(<"$results/$name.json") =~ \"p50\":\ ([0-9]+) ]] && p50=${BASH_REMATCH[1]}
	echo "bench:   ${output_value%.*} calls/s, p50 $p50 ns" >&2
}

# Prefix of the clients' command line: empty, or taskset for the pinned cells.
client_cpus=()

# The memzone column needs a daemon with hugepages: a short --secondary run
# says whether it has them, and why not. Whatever that run's end, the daemon
# must survive it.
memzone_probe() {
	local err=$results/memzone-probe.err rc=0
	timeout --foreground --kill-after="$SHMT_KILL_AFTER_S" "$TOOL_BOUND_S" \
		"$perf" -s "$SHMT_SOCK" --secondary -n 100 -w 0 -q >/dev/null 2>"$err" || rc=$?
	daemon_check "the memzone probe"
	if [ "$rc" = 0 ]; then
		rm -f "$err"
		return 0
	fi
	memzone_reason=$(tail -n 1 "$err")
	[ "$rc" -le 128 ] || memzone_reason="$memzone_reason (killed by SIG$(kill -l $((rc - 128))))"
	echo "bench: no memzone column: $memzone_reason" >&2
	return 1
}

for mode in spinning sleeping; do
	spin=$SPINNING_US
	[ "$mode" = spinning ] || spin=$SLEEPING_US
	start_daemon -S "$spin"
	echo "bench: daemon -S $spin ($mode), pid $SHMT_PID" >&2
	if [ "$mode" = spinning ]; then
		goal_round 1
	fi
	have_memzone=1
	memzone_probe || have_memzone=0
	for transport in "${transports[@]}"; do
		for depth in "${depths[@]}"; do
			for n in "${clients[@]}"; do
				for z in "${sizes[@]}"; do
					if [ "$transport" = memzone ] && [ "$have_memzone" = 0 ]; then
						step=$((step + 1))
						continue
					fi
					run_cell "$mode" "$transport" "$depth" "$n" "$z"
				done
			done
		done
	done
	if [ "$mode" = spinning ]; then
		goal_refs mid
		goal_round 2
		progress "idle cost: 16 attached clients for $IDLE_S s"
		run_tool "ping2_perf --idle" "$results/idle.json" \
			"$perf" -s "$SHMT_SOCK" -t shm -c 16 --idle "$IDLE_S" -q --json
		check_output idle "$results/idle.json" "ping2_perf --idle"
	else
		# Both ends sleeping (client spin 0 too): a raw eventfd ping-pong's like.
		run_cell bothsleep memfd 1 1 64 --spin 0
	fi
	daemon_check "the $mode daemon's cells"
	stop_daemon
done
[ -z "$memzone_reason" ] || printf '%s\n' "$memzone_reason" >"$results/memzone-skipped.txt"

if [ "$pinned_cells" -gt 0 ]; then
	daemon_cpu=$((ncpus - 1))
	start_daemon -S "$SPINNING_US" -- -l "$daemon_cpu"
	echo "bench: daemon -S $SPINNING_US on CPU $daemon_cpu, clients on CPUs 0-$((daemon_cpu - 1))" >&2
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
fi

# ---- 16 clients and the poller on shared CPUs ----

# The clients and the daemon wherever the scheduler puts them: one client,
# then 16 over the fairness window, then one client again, the daemon as it
# starts by default (its pollers at nice -20 when it may set that). The goal
# compares the 16 with the mean of the two single clients around them, so
# the two must agree (within bench_rounds.py's tolerance, or the vCPUs moved under
# the round: tried again as a goal triple is, on the same retry budget).
# Then one round with --poller-nice off (the pollers at the daemon's own nice
# value, the clients' equal), which no goal judges: it shows what the nice
# value buys. poller-nice.txt says the nice value each daemon's poller had.
SHARED_ROUNDS=3
SHARED_OFF_ROUNDS=1

# shared_cell OUT CLIENTS SECONDS WHAT: one ping2_perf run, timed as the goal
# cells are (--no-stamps).
shared_cell() {
	run_tool "ping2_perf -c $2 ($4)" "$1" \
		"$perf" -s "$SHMT_SOCK" -t shm -d 1 -z 64 -c "$2" -T "$3" -w "$WARMUP" -q --json --no-stamps
	check_output cell "$1" "ping2_perf -c $2 ($4)"
}

# shared_round MODE R: shared-MODE-rR-tTRY-{one1,many,one2}.json for each
# try, and shared-MODE-rR-tries.json as goal_triple writes its own.
shared_round() {
	local name=shared-$1-r$2 try=1 prefix started a b output_value
	progress "16 clients on shared CPUs: $name"
	while :; do
		started=$SECONDS
		prefix=$results/$name-t$try
		shared_cell "$prefix-one1.json" 1 "$CELL_S" "$name"
		a=$output_value
		shared_cell "$prefix-many.json" 16 "$FAIR_CELL_S" "$name"
		echo "bench:   16 clients: ${output_value%.*} calls/s" >&2
		shared_cell "$prefix-one2.json" 1 "$CELL_S" "$name"
		b=$output_value
		daemon_check "$name"
		[ "$(judge shared "$name" "$try" $((SECONDS - started)) "$a" "$b")" = again ] || break
		try=$((try + 1))
	done
}

: >"$results/poller-nice.txt"
for nice_mode in default off; do
	nice_args=()
	n_rounds=$SHARED_ROUNDS
	if [ "$nice_mode" = off ]; then
		nice_args=(--poller-nice off)
		n_rounds=$SHARED_OFF_ROUNDS
	fi
	start_daemon -S "$SPINNING_US" "${nice_args[@]}"
	echo "bench: daemon -S $SPINNING_US ${nice_args[*]}, pid $SHMT_PID, for the shared-CPU rounds" >&2
	for round in $(seq "$n_rounds"); do
		shared_round "$nice_mode" "$round"
	done
	poller_nice=?
	for t in /proc/"$SHMT_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = shmchan-poll0 ] || continue
		stat=$(<"$t/stat")
		read -ra fields <<<"${stat##*) }"
		poller_nice=${fields[16]}
	done
	echo "$nice_mode $poller_nice" >>"$results/poller-nice.txt"
	echo "bench:   poller 0 at nice $poller_nice" >&2
	stop_daemon
done

# ---- idle channels beside a busy one ----

# idle_channel_round R: the busy client beside each count of idle channels,
# into idlech-rR-nN.json; even rounds take the counts in reverse order.
idle_channel_round() {
	local counts=("${idle_channel_counts[@]}") n i
	if [ $(($1 % 2)) = 0 ]; then
		counts=()
		for ((i = ${#idle_channel_counts[@]} - 1; i >= 0; i--)); do
			counts+=("${idle_channel_counts[i]}")
		done
	fi
	for n in "${counts[@]}"; do
		progress "idle channels: round $1, $n beside a busy client"
		run_tool "ping2_perf --idle-channels $n (round $1)" "$results/idlech-r$1-n$n.json" \
			"$perf" -s "$SHMT_SOCK" -t shm -d 1 -c 1 -z 64 -T "$CELL_S" -w "$WARMUP" -q \
			--json --idle-channels "$n"
		check_output cell "$results/idlech-r$1-n$n.json" "ping2_perf --idle-channels $n"
		daemon_check "the idle channels, round $1"
	done
}

start_daemon -S "$SPINNING_US" --max-conn-per-pid "$IDLE_CHANNEL_MAX_CONN" --max-conn-per-uid 0
echo "bench: daemon -S $SPINNING_US, one poller, for the idle channels" >&2
for round in $(seq "$IDLE_CHANNEL_ROUNDS"); do
	idle_channel_round "$round"
done
stop_daemon

# ---- the occasional calls ----

# GR_PING2 after each gap of silence, one shm and one socket connection in
# one process alternated call by call: from C (ping2_perf --gap), then from
# Python (python/bench_gap.py, the shmchan package), on a daemon with its
# default options, as a user starts it.
start_daemon
echo "bench: daemon with its default options, pid $SHMT_PID, for the occasional calls" >&2
progress "occasional calls from C: after $OCCASIONAL_GAPS_MS ms of silence"
run_tool "ping2_perf --gap" "$results/gap-c.json" "$perf" -s "$SHMT_SOCK" \
	--gap "$OCCASIONAL_GAPS_MS" "${occasional_rounds[@]}" -w "$WARMUP" -q --json
check_output gap "$results/gap-c.json" "ping2_perf --gap"
progress "occasional calls from Python: after $OCCASIONAL_GAPS_MS ms of silence"
run_tool "bench_gap.py" "$results/gap-python.json" env \
	PYTHONPATH="$srcdir/python:$builddir/subprojects/shmchan-python" \
	SHMCHAN_LIBRARY="$builddir/client/libgr_api_client.so" "$gap_py" -s "$SHMT_SOCK" \
	--gap "$OCCASIONAL_GAPS_MS" "${occasional_rounds[@]}" -w "$WARMUP" -q --json
check_output gap "$results/gap-python.json" "bench_gap.py"
daemon_check "the occasional calls"
# The headline: the same daemon, calls one right after the other, from C
# (ping2_perf, which python/bench.py runs) and from Python, on each transport.
progress "calls one right after the other, from C and from Python"
run_tool "bench.py" "$results/headline.json" env \
	PYTHONPATH="$srcdir/python:$builddir/subprojects/shmchan-python" \
	SHMCHAN_LIBRARY="$builddir/client/libgr_api_client.so" "$py_bench" "$SHMT_SOCK" \
	--ping2-perf "$perf" --rounds "$HEADLINE_ROUNDS" --seconds "$HEADLINE_S" --json
check_output headline "$results/headline.json" "bench.py"
daemon_check "the headline calls"
stop_daemon
loaded_all
routes_all

goal_refs end

# ---- system calls of a busy channel, under strace ----

# Client: ping2_perf under strace -f -c, two lengths. Daemon: strace -f -c
# attached to it during two runs of ping2_perf. A busy channel makes no
# system call in the loop, so what is left per call is what leaks. strace
# may not attach to the daemon (ptrace not permitted): the report then has
# the client's count only.
start_daemon -S "$SPINNING_US"
goal_round 3
for calls in "$STRACE_CALLS_SHORT" "$STRACE_CALLS_LONG"; do
	progress "strace, $calls calls"
	run_tool "ping2_perf under strace ($calls calls)" "$results/strace-client-$calls.out" \
		strace -f -c -o "$results/strace-client-$calls.txt" \
		"$perf" -s "$SHMT_SOCK" -t shm -n "$calls" -w 0 -q
	"${shmt_die_with_parent[@]}" strace -f -c -o "$results/strace-daemon-$calls.txt" -p "$SHMT_PID" 2>/dev/null &
	strace_pid=$!
	shmt_track "$strace_pid"
	# strace attaches to each thread in turn: let it finish before the run.
	sleep 1
	run_tool "ping2_perf with the daemon under strace ($calls calls)" \
		"$results/strace-daemon-$calls.out" "$perf" -s "$SHMT_SOCK" -t shm -n "$calls" -w 0 -q
	kill -INT "$strace_pid" 2>/dev/null || true
	wait "$strace_pid" || true
	rm -f "$results/strace-client-$calls.out" "$results/strace-daemon-$calls.out"
done
daemon_check "the strace runs"
stop_daemon

python3 smoke/bench_meta.py end "$results"

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
