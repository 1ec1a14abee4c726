#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The benchmark tools work: every ref_bench test in a tiny run, and the
# ping2_perf modes the benchmarks use (-T with --cdf, --idle, --idle-channels,
# --gap, --event-loop, --events, GROUT_SOCK_PATH)
# against a daemon of its own. Checks what the JSON says, never how fast anything was.
#
#   bench_tools.sh SHMCHAND REF_BENCH PING2_PERF
set -eu

SHMT_NAME=bench_tools
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND REF_BENCH PING2_PERF" "$@"
# Each check is a python3 process: the interpreter resolved once.
shmt_python_direct
ref=$2
perf=$3
# In the sanitized build (make test SANITIZE=1 sets ASAN_OPTIONS), ref_bench
# exits holding its regions on purpose (a benchmark, not a server): leak
# checking is for the daemon and the libraries, which other tests cover.
if [ -n "${ASAN_OPTIONS:-}" ]; then
	export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi

# Operations of each tiny reference run: enough to cross every code path
# (start, stop, results) many times, few enough to take milliseconds.
REF_OPS=200
# Length of each -T reference run, the loop that stops on the clock (make
# bench's): read every 64 operations, so 64 of them at the least.
REF_SECONDS=0.05
# Nanoseconds per operation above which a reference run is stalled, not
# slow: REF_OPS of them would take 20 s of the test's 120.
REF_NS_PER_OP_MAX=100000000
# A run whose follower is killed: far longer than the leader may take to
# notice (REF_KILL_NOTICE_S), so that only the kill can end it in time.
REF_KILL_RUN_S=20
REF_KILL_NOTICE_S=3

# check JSON PYTHON_CONDITION MESSAGE: the condition must hold for r, the
# parsed JSON. Kept for check_all, which judges every check in one python3:
# one interpreter per check would take most of the test's time.
shmt_tmpdir
checks=$SHMT_TMPDIR/checks
: >"$checks"
check() {
	printf '%s\0%s\0%s\0' "$1" "$2" "$3" >>"$checks"
}

# check_all: fail, naming each check that does not hold, and its JSON.
check_all() {
	python3 - "$checks" <<'PY' || shmt_fail "the checks above failed"
import json, sys
fields = open(sys.argv[1]).read().split("\0")[:-1]
failed = 0
for i in range(0, len(fields), 3):
    text, condition, message = fields[i:i + 3]
    try:
        ok = eval(condition, {"r": json.loads(text)})
    except Exception as e:
        ok = False
        message += f" ({type(e).__name__}: {e})"
    if not ok:
        print(f"{message}: {text}", file=sys.stderr)
        failed += 1
print(f"{len(fields) // 3 - failed} of {len(fields) // 3} checks hold", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
}

for t in cacheline ring-pingpong ring-stream lines-apart lines-inline eventfd unix clock syscall; do
	out=$("$ref" -n "$REF_OPS" -w 10 "$t") || shmt_fail "ref_bench $t failed"
	check "$out" "r['test'] == '$t' and r['count'] == $REF_OPS and r['ns_per_op'] > 0" \
		"ref_bench $t: wrong count or time"
done
# A follower killed during a run fails its leader at once (a SIGCHLD it did
# not ask for), not after the run: a spinning or blocked leader would
# otherwise wait for its answer for ever. A blocking test and a spinning one.
for t in cacheline eventfd; do
	shmt_spawn "$ref" -T "$REF_KILL_RUN_S" "$t" 2>"$SHMT_TMPDIR/ref-kill.err"
	leader=$SHMT_SPAWNED
	follower=
	for _ in $(seq $((REF_KILL_NOTICE_S * SHMT_POLLS_PER_S))); do
		follower=$(pgrep -P "$leader" || true)
		[ -z "$follower" ] || break
		sleep "$SHMT_POLL_S"
	done
	[ -n "$follower" ] || shmt_fail "ref_bench $t: no follower process"
	kill -KILL "$follower"
	shmt_wait_gone "$leader" "$REF_KILL_NOTICE_S" ||
		shmt_fail "ref_bench $t: the leader ran on after its follower was killed"
	rc=0
	wait "$leader" || rc=$?
	[ "$rc" = 1 ] || shmt_fail "ref_bench $t: the leader ended with $rc, expected 1"
	grep -q "the follower ended during the run" "$SHMT_TMPDIR/ref-kill.err" ||
		shmt_fail "ref_bench $t: the leader did not say why: $(cat "$SHMT_TMPDIR/ref-kill.err")"
done

# check_ref_report JSON TWO_PROCESSES WHAT: what make bench's report reads
# of a ref_bench run besides its test and count. The default frame (64
# bytes after the 12-byte header: 5 cells of 16 bytes), no --depth or
# --gap-us, one time per operation printed two ways (ns_per_op to 0.01 ns,
# ops_per_s to 0.1/s: they agree to 1%), the leader's rusage, and, for a test
# of two processes (TWO_PROCESSES True) only, the follower's rusage and the
# two CPUs (none when it could not pin).
check_ref_report() {
	check "$1" "r['size'] == 64 and r['cells'] == 5 and r['depth'] is None and \
r['gap_us'] is None and r['max_ns'] is None" "$3: wrong frame or options"
	check "$1" "0 < r['ns_per_op'] < $REF_NS_PER_OP_MAX and r['ops_per_s'] > 0 and \
abs(1e9 / r['ops_per_s'] - r['ns_per_op']) <= 0.01 + r['ns_per_op'] / 100 and r['seconds'] >= 0" \
		"$3: time per operation"
	check "$1" "r['leader_cpu_ns_per_op'] >= 0 and r['leader_vcsw_per_op'] >= 0" \
		"$3: leader rusage"
	if [ "$2" = True ]; then
		check "$1" "(r['cpus'] is None or len(set(r['cpus'])) == 2) and \
r['follower_cpu_ns_per_op'] >= 0 and r['follower_vcsw_per_op'] >= 0" "$3: CPUs or follower"
	else
		check "$1" "r['cpus'] is None and r['follower_cpu_ns_per_op'] is None and \
r['follower_vcsw_per_op'] is None" "$3: a follower or CPUs for one process"
	fi
}

# The channel library alone (chan-pingpong, chan-stream) and the round trips
# in one process (ring-local, chan-local), by count and by time. A -T run
# stops at the first clock read past REF_SECONDS, so it measured at least
# that long; chan-stream's time is the follower's (the consumer's rate), so
# it may be shorter.
for t in chan-pingpong chan-stream ring-local chan-local; do
	case $t in
	*-local) two_processes=False ;;
	*) two_processes=True ;;
	esac
	case $t in
	chan-stream) unit=message min_seconds=0 ;;
	*) unit=round_trip min_seconds=$REF_SECONDS ;;
	esac
	out=$("$ref" -n "$REF_OPS" -w 10 "$t") || shmt_fail "ref_bench $t failed"
	check "$out" "r['test'] == '$t' and r['unit'] == '$unit' and r['count'] == $REF_OPS" \
		"ref_bench $t: wrong test, unit or count"
	check_ref_report "$out" "$two_processes" "ref_bench $t"
	out=$("$ref" -T "$REF_SECONDS" -w 10 "$t") || shmt_fail "ref_bench -T $t failed"
	check "$out" "r['test'] == '$t' and r['unit'] == '$unit' and r['count'] > 0 and \
r['seconds'] >= $min_seconds" "ref_bench -T $t: no operation or too short"
	check_ref_report "$out" "$two_processes" "ref_bench -T $t"
done
out=$("$ref" -n "$REF_OPS" -w 10 -z 4096 ring-pingpong) || shmt_fail "ref_bench -z failed"
check "$out" "r['size'] == 4096 and r['cells'] == 257" "ref_bench -z 4096: wrong frame"
out=$("$ref" -n 3 -w 1 --gap-us 100 --no-pin eventfd) || shmt_fail "ref_bench --gap-us failed"
check "$out" "r['count'] == 3 and r['gap_us'] == 100 and r['cpus'] is None and r['max_ns'] > 0" \
	"ref_bench --gap-us --no-pin"
if "$ref" --gap-us 100 cacheline 2>/dev/null; then
	shmt_fail "ref_bench accepted --gap-us for a spinning test"
fi
# The echoes: calls answered with DEPTH in flight, 32 unless --depth says.
for t in ring-echo chan-echo; do
	for depth in "" 1 8; do
		out=$("$ref" -n "$REF_OPS" -w 10 ${depth:+--depth "$depth"} "$t") ||
			shmt_fail "ref_bench ${depth:+--depth $depth }$t failed"
		check "$out" "r['test'] == '$t' and r['unit'] == 'call' and r['count'] == $REF_OPS \
and r['depth'] == ${depth:-32} and r['ns_per_op'] > 0 and r['ops_per_s'] > 0" \
			"ref_bench ${depth:+--depth $depth }$t: wrong depth, count or rate"
	done
done
if "$ref" --depth 8 ring-stream 2>/dev/null; then
	shmt_fail "ref_bench accepted --depth for a test that does not pipeline"
fi
# 2 messages of 8193 cells cannot both fit a ring: refused, not a deadlock.
if "$ref" -z 131072 --depth 2 ring-echo 2>/dev/null; then
	shmt_fail "ref_bench accepted a --depth whose messages do not fit a ring"
fi

start_daemon
out=$("$perf" -s "$SHMT_SOCK" -t shm -c 2 -d 4 -T 0.1 -w 10 -q --json --cdf) ||
	shmt_fail "ping2_perf -T --cdf failed"
check "$out" "r['mode'] == 'calls' and r['count'] > 0 and len(r['per_client_calls_per_s']) == 2 \
and min(r['per_client_calls_per_s']) > 0 and r['fastest_over_slowest'] >= 1 \
and len(r['per_client_calls_per_cpu_s']) == 2 and min(r['per_client_calls_per_cpu_s']) > 0 \
and r['fastest_over_slowest_per_cpu'] >= 1" \
	"ping2_perf -T: per-client rates"
check "$out" "r['latency_cdf'][-1][1] == 1.0 and \
all(a[0] < b[0] and a[1] < b[1] for a, b in zip(r['latency_cdf'], r['latency_cdf'][1:]))" \
	"ping2_perf --cdf: not a distribution"
check "$out" "r['daemon_cpu_ns_per_call'] is not None and r['daemon_vcsw_per_call'] is not None" \
	"ping2_perf: the daemon was not sampled"
out=$("$perf" -s "$SHMT_SOCK" -t shm -c 3 --idle 0.2 --idle-rounds 2 -w 10 -q --json) ||
	shmt_fail "ping2_perf --idle failed"
check "$out" "r['mode'] == 'idle' and r['clients'] == 3 and r['first_request_ns'] > 0 and \
r['after_idle_ns']['rounds'] == 2 and r['after_idle_ns']['max'] > 0 and \
r['daemon_cpu_ns'] is not None" "ping2_perf --idle"
# Without stamps: no latency, the calls counted and checked all the same.
out=$("$perf" -s "$SHMT_SOCK" -t shm -d 4 -n 1000 -w 10 -q --json --no-stamps) ||
	shmt_fail "ping2_perf --no-stamps failed"
check "$out" "r['mode'] == 'calls' and r['count'] == 1000 and r['calls_per_s'] > 0 and \
r['latency_ns'] is None" "ping2_perf --no-stamps"
# System calls counted (where the tracepoint may be opened: 2 per call on
# the socket), and not counted with --no-syscall-count.
out=$("$perf" -s "$SHMT_SOCK" -t socket -n 1000 -w 10 -q --json) ||
	shmt_fail "ping2_perf -t socket failed"
check "$out" "r['client_syscalls_per_call'] is None or abs(r['client_syscalls_per_call'] - 2) < 0.1" \
	"ping2_perf -t socket: not 2 client system calls per call"
out=$("$perf" -s "$SHMT_SOCK" -t socket -n 1000 -w 10 -q --json --no-syscall-count) ||
	shmt_fail "ping2_perf --no-syscall-count failed"
check "$out" "r['count'] == 1000 and r['client_syscalls_per_call'] is None and \
r['daemon_syscalls_per_call'] is None and r['daemon_cpu_ns_per_call'] is not None" \
	"ping2_perf --no-syscall-count"
# The loaded host's event-loop cells: -T with --event-loop on each transport.
for t in shm socket; do
	out=$("$perf" -s "$SHMT_SOCK" -t "$t" --event-loop -T 0.1 -w 10 -q --json --no-syscall-count) ||
		shmt_fail "ping2_perf -t $t --event-loop failed"
	check "$out" "r['event_loop'] is True and r['transport'] == '$t' and r['calls_per_s'] > 0" \
		"ping2_perf -t $t --event-loop"
done
# GROUT_SOCK_PATH names the socket when -s is not given, and -s overrides it.
out=$(GROUT_SOCK_PATH=$SHMT_SOCK "$perf" -t shm -n 100 -w 10 -q --json) ||
	shmt_fail "ping2_perf with GROUT_SOCK_PATH and no -s failed"
check "$out" "r['count'] == 100" "ping2_perf with GROUT_SOCK_PATH"
GROUT_SOCK_PATH=$SHMT_TMPDIR/none.sock "$perf" -s "$SHMT_SOCK" -t shm -n 100 -w 10 -q >/dev/null ||
	shmt_fail "ping2_perf -s did not override GROUT_SOCK_PATH"
# Idle channels beside the client: attached for the run, and counted against
# the daemon's per-process connection limit (64 by default).
out=$("$perf" -s "$SHMT_SOCK" -t shm -n 1000 -w 10 -q --json --idle-channels 8) ||
	shmt_fail "ping2_perf --idle-channels failed"
check "$out" "r['mode'] == 'calls' and r['count'] == 1000 and r['idle_channels'] == 8" \
	"ping2_perf --idle-channels"
if err=$("$perf" -s "$SHMT_SOCK" -t shm -n 10 -w 0 -q --idle-channels 70 2>&1); then
	shmt_fail "ping2_perf --idle-channels 70 passed the daemon's limit of 64 per process"
fi
case $err in
*max-conn-per-pid*) ;;
*) shmt_fail "ping2_perf --idle-channels 70: no word of the limit: $err" ;;
esac
# The occasional call: one shm and one socket connection, alternated after
# each gap, the rounds asked for (or as many as the gap's budget gives).
out=$("$perf" -s "$SHMT_SOCK" --gap 1,3 --gap-rounds 4 -w 10 -q --json) ||
	shmt_fail "ping2_perf --gap failed"
check "$out" "r['mode'] == 'gap' and r['backing'] == 'memfd' and \
[g['gap_ms'] for g in r['gaps']] == [1, 3] and \
all(g['rounds'] == 4 and g[t]['count'] == 4 and 0 < g[t]['p50'] <= g[t]['p99'] <= g[t]['max'] \
for g in r['gaps'] for t in ('shm', 'socket')) and \
all(abs(g['p50_ratio'] - g['shm']['p50'] / g['socket']['p50']) < 0.001 for g in r['gaps']) and \
r['seconds'] >= 2 * 4 * (1 + 3) / 1000" "ping2_perf --gap: wrong gaps, counts or ratios"
out=$("$perf" -s "$SHMT_SOCK" --gap 1 -w 0 -q --json --spin 0 -z 0) ||
	shmt_fail "ping2_perf --gap 1 failed"
check "$out" "r['gaps'][0]['rounds'] == 200 and r['spin_us'] == 0 and r['request'] == 'GR_PING'" \
	"ping2_perf --gap 1: not 200 rounds by default, or not the spin and request asked"
for bad in "--gap 1 -t shm" "--gap 1 -c 2" "--gap 1 -d 2" "--gap 1 -n 10" "--gap 1,,2" "--gap 0" \
	"--gap-rounds 3"; do
	# shellcheck disable=SC2086 # bad is a list of words
	if "$perf" -s "$SHMT_SOCK" $bad -q 2>/dev/null; then
		shmt_fail "ping2_perf accepted $bad"
	fi
done
# The busy round trip beside the raw ring: pairs of blocks, the ratios taken
# pair by pair (so their median lies between the sides' extremes), at least
# the fewest pairs however short the time.
out=$("$perf" -s "$SHMT_SOCK" --beside-ring 0.05 -w 10 -q --json --cdf) ||
	shmt_fail "ping2_perf --beside-ring failed"
# Each summary from the pairs themselves: a ratio is shm over ring of one
# pair; percentiles by nearest rank, ceil(f * n), as everywhere in the tool.
check "$out" "len(r['pairs_ns']) == r['pairs'] and all(abs(v - r[k]) < 0.001 * r[k] for v, k in \
zip((lambda v: [v[max(-int(-f * len(v) // 1), 1) - 1] for f in (0.25, 0.5, 0.75)])(\
sorted(s / g for g, s in r['pairs_ns'])), ('ratio_p25', 'ratio_p50', 'ratio_p75'))) and \
all(abs(v - r[k][f]) < 0.06 for i, k in ((0, 'ring_ns'), (1, 'shm_ns')) for v, f in \
zip((lambda v: [v[0], v[max(-int(-0.5 * len(v) // 1), 1) - 1], v[-1]])(sorted(x[i] for x in \
r['pairs_ns'])), ('min', 'p50', 'max')))" "ping2_perf --beside-ring: summaries not those of its pairs"
check "$out" "r['mode'] == 'beside-ring' and r['backing'] == 'memfd' and r['pairs'] >= 8 and \
r['block_calls'] == 2000 and 0 < r['ratio_p25'] <= r['ratio_p50'] <= r['ratio_p75'] and \
all(0 < r[k]['min'] <= r[k]['p50'] <= r[k]['max'] for k in ('ring_ns', 'shm_ns')) and \
r['shm_ns']['min'] / r['ring_ns']['max'] <= r['ratio_p50'] <= r['shm_ns']['max'] / r['ring_ns']['min']" \
	"ping2_perf --beside-ring: wrong pairs or ratios"
for bad in "--beside-ring 1 -t socket" "--beside-ring 1 -d 2" "--beside-ring 1 -c 2" \
	"--beside-ring 1 -T 1" "--beside-ring 1 --gap 1" "--beside-ring 0" "--beside-ring 1 --cdf"; do
	# shellcheck disable=SC2086 # bad is a list of words
	if "$perf" -s "$SHMT_SOCK" $bad -q 2>/dev/null; then
		shmt_fail "ping2_perf accepted $bad"
	fi
done
if "$perf" -s "$SHMT_SOCK" -n 10 -T 1 -q 2>/dev/null; then
	shmt_fail "ping2_perf accepted both -n and -T"
fi
if "$perf" -s "$SHMT_SOCK" -n 10 -q --json --cdf --no-stamps 2>/dev/null; then
	shmt_fail "ping2_perf accepted --cdf without stamps"
fi
# Event fan-out: fewer events than a subscriber's backlog, so every one
# arrives at each subscriber; 16 publishes in flight without -d.
out=$("$perf" -s "$SHMT_SOCK" --events -t shm -c 2 -n 500 -z 16 --json) ||
	shmt_fail "ping2_perf --events failed"
check "$out" "list(r) == ['mode', 'transport', 'subscribers', 'payload', 'depth', 'sub_spin_us', \
'published', 'delivered', 'lost', 'events_per_s', 'p50_ns', 'p99_ns', 'max_ns'] and \
r['mode'] == 'events' and r['transport'] == 'shm' and r['subscribers'] == 2 and \
r['payload'] == 16 and r['depth'] == 16 and r['sub_spin_us'] == -1 and r['published'] == 500 \
and r['delivered'] == 1000 and r['lost'] == 0 and r['events_per_s'] > 0 and \
0 < r['p50_ns'] <= r['p99_ns'] <= r['max_ns']" "ping2_perf --events"
for bad in "-T 1" "--gap 1" "--beside-ring 1" "-c 65" "-z 15" "-w 10" "-t auto" "--event-loop" \
	"--idle-channels 1" "--json --cdf" "--no-stamps" "--secondary"; do
	# shellcheck disable=SC2086 # bad is a list of words
	if "$perf" -s "$SHMT_SOCK" --events $bad 2>/dev/null; then
		shmt_fail "ping2_perf accepted --events $bad"
	fi
done
stop_daemon
check_all
