#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# A stand-in for make bench's tools in its tests (BENCH_REF_BENCH,
# BENCH_PING2_PERF, BENCH_GAP_PY, BENCH_PY_BENCH): it takes their options,
# measures nothing and prints the JSON the tool would (ref_bench when the
# command line names a reference, else ping2_perf, bench_gap.py or, with
# --rounds, bench.py), so that a test decides which run fails and how.
#
#   FAKE_REF_CRASH=T            a run of reference T dies of SIGSEGV
#   FAKE_REF_BAD=T              a run of reference T prints something that is not JSON
#   FAKE_PERF_CRASH=ARGS        the ping2_perf runs whose command line holds ARGS
#                               (say "-t socket -d 1 -c 16") die of SIGSEGV
#   FAKE_PERF_KILL_DAEMON=ARGS  they kill the daemon (SHMT_PID), then fail
#   FAKE_PERF_BAD=ARGS          they print JSON without calls_per_s (c_socket
#                               for python/bench.py)
set -eu

# A time per operation for every reference, in ns: any will do.
declare -A base_ns=([cacheline]=80 [ring-pingpong]=200 [ring-stream]=32 [ring-echo]=62
	[chan-pingpong]=230 [chan-stream]=60 [chan-echo]=60 [ring-local]=16 [chan-local]=60
	[eventfd]=30000 [unix]=25000 [clock]=20 [syscall]=170 [lines-apart]=100)
declare -A opt=()
test=
cmdline=" $* "
while [ $# -gt 0 ]; do
	case $1 in
	-s | -t | -d | -c | -z | -T | -w | -n | --idle | --idle-rounds | --spin | --idle-channels | \
		--gap | --gap-rounds | --beside-ring | --ping2-perf | --rounds | --seconds | --depth | --gap-us)
		opt[$1]=$2
		shift
		;;
	-*) opt[$1]=1 ;;
	*) [ -z "${base_ns[$1]:-}" ] || test=$1 ;;
	esac
	shift
done

# has VAR: the command line holds VAR's piece of one.
has() {
	[ -n "${!1:-}" ] && [[ $cmdline == *" ${!1} "* ]]
}

crash() {
	echo "fake: crashing as asked" >&2
	kill -SEGV $$
}

if [ -n "$test" ]; then
	[ "${FAKE_REF_CRASH:-}" != "$test" ] || crash
	if [ "${FAKE_REF_BAD:-}" = "$test" ]; then
		echo "{\"test\": \"$test\", \"ns_per_op\": "
		exit 0
	fi
	ns=${base_ns[$test]}
	size=${opt[-z]:-64} depth=null cpus="[0,1]" follower=$ns gap=${opt[--gap-us]:-null}
	case $test in cacheline | eventfd | clock | syscall) size=null ;; esac
	case $test in *-echo) depth=${opt[--depth]:-32} ;; esac
	case $test in *-local | clock | syscall) cpus=null follower=null ;; esac
	[ -z "${opt[--no-pin]:-}" ] || cpus=null
	printf '{"test": "%s", "unit": "round_trip", "size": %s, "depth": %s, "cpus": %s, ' \
		"$test" "$size" "$depth" "$cpus"
	printf '"gap_us": %s, "count": 1000, "seconds": 0.5, "ns_per_op": %s.0, "ops_per_s": %s, ' \
		"$gap" "$ns" $((1000000000 / ns))
	printf '"leader_cpu_ns_per_op": %s, "follower_cpu_ns_per_op": %s}\n' "$ns" "$follower"
	exit 0
fi

has FAKE_PERF_CRASH && crash
if has FAKE_PERF_KILL_DAEMON; then
	kill -KILL "$SHMT_PID"
	# As a real client, see the reset only once the daemon is gone.
	for _ in $(seq 500); do
		[[ $(cat "/proc/$SHMT_PID/stat" 2>/dev/null) =~ \)\ [^Z] ]] || break
		sleep 0.01
	done
	echo "fake: connection reset by peer" >&2
	exit 1
fi
rate='{"calls_per_s": 1000000.0, "cpu_ns_per_call": 1000.0}'
if [ -n "${opt[--rounds]:-}" ]; then
	c_socket=", \"c_socket\": $rate"
	! has FAKE_PERF_BAD || c_socket=
	echo "{\"rounds\": ${opt[--rounds]}, \"shm\": $rate, \"socket\": $rate, \"c\": $rate$c_socket}"
	exit 0
fi
if [ -z "${opt[--json]:-}" ]; then
	echo "fake: 1000000 calls/s"
	exit 0
fi
clients=${opt[-c]:-1}
backing=memfd
[ -z "${opt[--secondary]:-}" ] || backing=memzone
if [ -n "${opt[--idle]:-}" ]; then
	echo "{\"mode\": \"idle\", \"clients\": $clients, \"idle_seconds\": ${opt[--idle]}," \
		"\"daemon_cpu_ns\": 40000, \"daemon_cpu_core_fraction\": 4e-06, \"daemon_vcsw\": 1," \
		"\"daemon_syscalls\": null, \"first_request_ns\": 100000, \"after_idle_ns\":" \
		"{\"rounds\": 20, \"gap_ms\": 20, \"p50\": 200000, \"p99\": 250000, \"max\": 250000}}"
elif [ -n "${opt[--gap]:-}" ]; then
	# The round trips after every gap (ns): shm 90 us, the socket 100 us.
	rounds=${opt[--gap-rounds]:-8} gaps=
	for ms in ${opt[--gap]//,/ }; do
		gaps+="${gaps:+, }{\"gap_ms\": $ms, \"rounds\": $rounds, \"p50_ratio\": 0.9,"
		gaps+=" \"shm\": {\"count\": $rounds, \"p50\": 90000, \"p99\": 150000, \"max\": 150000},"
		gaps+=" \"socket\": {\"count\": $rounds, \"p50\": 100000, \"p99\": 160000, \"max\": 160000}}"
	done
	echo "{\"mode\": \"gap\", \"backing\": \"$backing\", \"seconds\": 1.0, \"gaps\": [$gaps]}"
elif [ -n "${opt[--beside-ring]:-}" ]; then
	echo "{\"mode\": \"beside-ring\", \"pairs\": 400, \"ratio_p25\": 1.0, \"ratio_p50\": 1.1," \
		"\"ratio_p75\": 1.2, \"ring_ns\": {\"p50\": 300.0, \"min\": 100.0, \"max\": 900.0}," \
		"\"shm_ns\": {\"p50\": 330.0, \"min\": 180.0, \"max\": 990.0}}"
else
	latency='{"p50": 900, "p99": 1500, "p999": 3000, "max": 9000}'
	[ -z "${opt[--no-stamps]:-}" ] || latency=null
	calls='"calls_per_s": 1000000.0, '
	! has FAKE_PERF_BAD || calls=
	cdf=
	[ -z "${opt[--cdf]:-}" ] || cdf=', "latency_cdf": [[500, 0.1], [900, 0.5], [9000, 1.0]]'
	evloop=false
	[ -z "${opt[--event-loop]:-}" ] || evloop=true
	syscalls=0.0
	[ -z "${opt[--no-syscall-count]:-}" ] || syscalls=null
	echo "{\"mode\": \"calls\", \"backing\": \"$backing\", \"clients\": $clients, $calls" \
		"\"event_loop\": $evloop," \
		"\"seconds\": 1.0, \"latency_ns\": $latency, \"client_cpu_ns_per_call\": 1000.0," \
		"\"daemon_cpu_ns_per_call\": 1000.0, \"client_syscalls_per_call\": $syscalls," \
		"\"daemon_syscalls_per_call\": $syscalls, \"client_vcsw_per_call\": 0.0," \
		"\"daemon_vcsw_per_call\": 0.0, \"client_runq_wait_ns_per_call\": 1.0," \
		"\"fastest_over_slowest\": 1.0, \"fastest_over_slowest_per_cpu\": 1.0$cdf}"
fi
