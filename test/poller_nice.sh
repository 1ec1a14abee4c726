#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The pollers' nice value (--poller-nice): values out of -20..19 are refused
# with a message. As root, a poller weighs as much as itself and the clients
# it served in the last period: 3 below the daemon's nice value for one
# client, 7 below for four, never below the value given, as the kernel
# reports for the threads named shmchan-pollN, and shmchanctl info says the
# same; with "off" they keep the daemon's. On a kernel that grants a thread
# its own slice (6.12 on), the pollers ask for the shortest, unless "off". A
# user without CAP_SYS_NICE gets a daemon that serves anyway, keeps its
# pollers at its own nice value, logs why, and shmchanctl info shows what was
# asked and that it was refused. As root, a client that only rings its
# doorbell, sending no request, buys its poller no weight: beside such a
# flooder, a client that calls now and then (the poller sleeps between its
# calls, and the flood wakes it) gives the value of one client. Run as root,
# the script runs the part of a user who is not root as nobody (setpriv); as
# another user, only that part runs, and the root part is skipped.
#
#   poller_nice.sh SHMCHAND SHMCHANCTL PING2_PERF HOSTILE
set -eu

# The user a root run becomes for its part without privilege.
NONROOT_USER=nobody
CTL_TIMEOUT_S=10
# The default of the daemon's option (server/config.c).
DEFAULT_NICE=-20
# What a poller takes for one client and for four, below the daemon's nice
# value (the kernel's weights, server/poller_nice.h), and its slice in ns.
ONE_CLIENT=3
FOUR_CLIENTS=7
SLICE_NS=100000
# The period over which a poller counts its clients is 100 ms: clients that
# call for this long make several.
CALL_S=1
# The occasional client beside the doorbell flood: a call on each transport
# every GAP_MS, GAP_ROUNDS times (about 1 s: several periods).
GAP_MS=5
GAP_ROUNDS=100
# Seconds the flooder may take to start flooding, and to end once told.
FLOOD_WAIT_S=10
FLOOD_TIMEOUT_S=60

SHMT_NAME=poller_nice
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "SHMCHAND SHMCHANCTL PING2_PERF HOSTILE" "$@"
ctl=$2
perf=$3
hostile=$4

# nice_of_thread PID COMM: the nice value (field 19 of /proc/PID/task/TID/stat)
# of the daemon's thread named COMM.
nice_of_thread() {
	local t comm stat fields
	for t in /proc/"$1"/task/*; do
		read -r comm <"$t/comm" 2>/dev/null || continue
		[ "$comm" = "$2" ] || continue
		read -r stat <"$t/stat"
		# After the ") " that ends the command name: field 3 on.
		read -ra fields <<<"${stat##*) }"
		echo "${fields[16]}"
		return 0
	done
	return 1
}

# slice_of_thread PID COMM: the slice the scheduler gives the thread, in ns
# (se.slice in /proc/PID/task/TID/sched; nothing when the kernel shows none).
slice_of_thread() {
	local t comm
	for t in /proc/"$1"/task/*; do
		read -r comm <"$t/comm" 2>/dev/null || continue
		[ "$comm" = "$2" ] || continue
		awk '$1 == "se.slice" { print $3 }' "$t/sched" 2>/dev/null
		return 0
	done
	return 1
}

# Does the kernel grant a normal thread a slice of its own (Linux 6.12 on)?
own_slices() {
	[ "$(printf '%s\n' 6.12 "$(uname -r | cut -d- -f1)" | sort -V | head -n1)" = 6.12 ]
}

# clients N: N clients calling back to back for CALL_S.
clients() {
	shmt_run_bounded 30 "$perf" -s "$SHMT_SOCK" -t shm -c "$1" -T "$CALL_S" -w 0 -q >/dev/null ||
		shmt_fail "ping2_perf -c $1 failed against the daemon"
}

# below N: the test's own nice value less N, as the kernel bounds it.
below() {
	local v=$((own - $1))
	echo $((v < -20 ? -20 : v))
}

# The poller thread exists once the daemon serves; its nice value is set
# before it polls. A request through its channel says it serves.
poller_nice_now() {
	shmt_run_bounded 20 "$perf" -s "$SHMT_SOCK" -t shm -n 100 -w 0 -q >/dev/null ||
		shmt_fail "ping2_perf -t shm failed against the daemon"
	nice_of_thread "$SHMT_PID" shmchan-poll0 ||
		shmt_fail "the daemon (pid $SHMT_PID) has no thread shmchan-poll0"
}

# ctl_info_nice: "NICE WANTED DENIED" from shmchanctl info -j (WANTED: null for
# off; DENIED: true or false).
ctl_info_nice() {
	local out
	out=$(shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" -j info) ||
		shmt_fail "shmchanctl info failed"
	python3 -c 'import json, sys
i = json.loads(sys.argv[1])
print(i["poller_nice"], json.dumps(i["poller_nice_wanted"]),
      json.dumps(i["poller_nice_denied"]))' "$out" ||
		shmt_fail "shmchanctl info -j: no poller_nice: $out"
}

expect_refused() {
	local out rc=0
	# Its own file prefix too, should it start.
	out=$(shmt_run_bounded 10 "$SHMT_DAEMON" -s "$SHMT_TMPDIR/refused.sock" --poller-nice "$1" -- \
		--file-prefix "shmt-$SHMT_NAME-$$-refused" 2>&1) || rc=$?
	[ "$rc" = 1 ] || shmt_fail "--poller-nice '$1': exit status $rc, expected 1: $out"
	grep -qF -- "--poller-nice takes -20..19 or off, not '$1'" <<<"$out" ||
		shmt_fail "--poller-nice '$1': no reason given: $out"
	[ ! -e "$SHMT_TMPDIR/refused.sock" ] || shmt_fail "--poller-nice '$1' left a socket"
}

shmt_tmpdir

if [ "${POLLER_NICE_PART:-}" = nonroot ]; then
	# EAL's runtime folder of this user, in the test's own folder.
	export XDG_RUNTIME_DIR=$SHMT_TMPDIR/run
	mkdir -m 0700 "$XDG_RUNTIME_DIR"
	own=$(ps -o ni= -p $$ | tr -d ' ')
	start_daemon -S 100 --hugepages off
	got=$(poller_nice_now)
	[ "$got" = "$own" ] ||
		shmt_fail "uid $(id -u): poller at nice $got, expected the daemon's own ($own)"
	grep -qF "poller 0: cannot take nice $(below $ONE_CLIENT) (Permission denied; needs CAP_SYS_NICE or RLIMIT_NICE)" \
		"$SHMT_LOG" || shmt_fail "uid $(id -u): the daemon does not say why its poller keeps nice $got"
	# Refused once, never asked again: four clients change nothing.
	clients 4
	got=$(nice_of_thread "$SHMT_PID" shmchan-poll0)
	[ "$got" = "$own" ] || shmt_fail "uid $(id -u): after 4 clients, poller at nice $got, not $own"
	[ "$(grep -c 'cannot take nice' "$SHMT_LOG")" = 1 ] ||
		shmt_fail "uid $(id -u): the refusal was logged more than once: $(grep 'cannot take' "$SHMT_LOG")"
	[ "$(ctl_info_nice)" = "$own $DEFAULT_NICE true" ] ||
		shmt_fail "uid $(id -u): shmchanctl info says '$(ctl_info_nice)', expected '$own $DEFAULT_NICE true'"
	shmt_run_bounded "$CTL_TIMEOUT_S" "$ctl" -s "$SHMT_SOCK" info |
		grep -q "^poller nice  *$own (down to $DEFAULT_NICE by its clients: not permitted" ||
		shmt_fail "uid $(id -u): shmchanctl info's table does not say the nice value was refused"
	stop_daemon
	shmt_log "uid $(id -u): poller kept nice $own, and the log and shmchanctl info say why"
	exit 0
fi

for bad in -21 20 x "" 1.5 " -3" +3 -; do
	expect_refused "$bad"
done
shmt_log "out-of-range values refused"

if [ "$(id -u)" != 0 ]; then
	shmt_log "not root: the part with CAP_SYS_NICE is skipped"
	POLLER_NICE_PART=nonroot "$0" "$@"
	exit 0
fi

own=$(ps -o ni= -p $$ | tr -d ' ')
start_daemon -S 100 --hugepages off
got=$(poller_nice_now)
[ "$got" = "$(below $ONE_CLIENT)" ] ||
	shmt_fail "default, one client: poller at nice $got, expected $(below $ONE_CLIENT)"
[ "$(ctl_info_nice)" = "$(below $ONE_CLIENT) $DEFAULT_NICE false" ] ||
	shmt_fail "default: shmchanctl info says '$(ctl_info_nice)'"
main=$(nice_of_thread "$SHMT_PID" shmchand)
[ "$main" = "$own" ] ||
	shmt_fail "default: the main thread took nice $main, not the test's $own: only the pollers change"
if own_slices; then
	slice=$(slice_of_thread "$SHMT_PID" shmchan-poll0)
	[ "$slice" = "$SLICE_NS" ] || shmt_fail "default: poller's slice ${slice:-none}, expected $SLICE_NS"
	slice=$(slice_of_thread "$SHMT_PID" shmchand)
	[ "$slice" != "$SLICE_NS" ] || shmt_fail "default: the main thread's slice changed too"
fi
# Four clients for several periods, then one again: each count is taken at
# the first work after its period, and kept while nothing comes.
clients 4
got=$(nice_of_thread "$SHMT_PID" shmchan-poll0)
[ "$got" = "$(below $FOUR_CLIENTS)" ] ||
	shmt_fail "default, four clients: poller at nice $got, expected $(below $FOUR_CLIENTS)"
clients 1
got=$(nice_of_thread "$SHMT_PID" shmchan-poll0)
[ "$got" = "$(below $ONE_CLIENT)" ] ||
	shmt_fail "default, one client after four: poller at nice $got, expected $(below $ONE_CLIENT)"
# A flooder that rings its request doorbell in a tight loop, with no request
# (test/hostile.c doorbell_flood), beside a client calling now and then:
# only the channel that had work counts. The flooder's one request comes
# before it says "flooding", periods before the value is read, and its last
# ones after.
flood_stop=$SHMT_TMPDIR/flood.stop
flood_out=$SHMT_TMPDIR/flood.out
shmt_spawn_bounded "$FLOOD_TIMEOUT_S" "$hostile" "$SHMT_SOCK" doorbell_flood "$flood_stop" \
	>"$flood_out" 2>&1
flooder=$SHMT_SPAWNED
shmt_wait_output "$flooder" "$flood_out" '^flooding$' "$FLOOD_WAIT_S" "the doorbell flooder"
shmt_run_bounded 60 "$perf" -s "$SHMT_SOCK" --gap "$GAP_MS" --gap-rounds "$GAP_ROUNDS" -w 0 -q \
	>/dev/null || shmt_fail "ping2_perf --gap failed beside the doorbell flood"
got=$(nice_of_thread "$SHMT_PID" shmchan-poll0)
! grep -q '^doorbell flood: ' "$flood_out" ||
	shmt_fail "the flood ended before the occasional client did: $(cat "$flood_out")"
: >"$flood_stop"
rc=0
wait "$flooder" || rc=$?
[ "$rc" = 0 ] || shmt_fail "the doorbell flooder failed (status $rc): $(cat "$flood_out")"
grep -q '^outcome served$' "$flood_out" ||
	shmt_fail "the doorbell flooder was not served after its flood: $(cat "$flood_out")"
[ "$got" = "$(below $ONE_CLIENT)" ] ||
	shmt_fail "a doorbell flood beside one occasional client: poller at nice $got, expected $(below $ONE_CLIENT)"
stop_daemon

# A bound above what four clients ask for: both pollers stop there.
start_daemon -S 100 --hugepages off --poller-nice -5 -p 2
clients 8
for t in shmchan-poll0 shmchan-poll1; do
	got=$(nice_of_thread "$SHMT_PID" "$t")
	[ "$got" = -5 ] || shmt_fail "--poller-nice -5 -p 2, 8 clients: $t at nice $got, expected -5"
done
[ "$(ctl_info_nice)" = "-5 -5 false" ] || shmt_fail "--poller-nice -5: shmchanctl info says '$(ctl_info_nice)'"
stop_daemon

# A bound above the daemon's own value: the pollers run there, below the
# daemon's priority, whatever their clients.
above=$((own + 5 > 19 ? 19 : own + 5))
start_daemon -S 100 --hugepages off --poller-nice "$above"
clients 4
got=$(nice_of_thread "$SHMT_PID" shmchan-poll0)
[ "$got" = "$above" ] || shmt_fail "--poller-nice $above, four clients: poller at nice $got, expected $above"
stop_daemon

# off: the daemon's own nice value, here the one nice(1) gave it (a
# wrapper that execs: the daemon keeps the pid start_daemon knows).
daemon=$SHMT_DAEMON
SHMT_DAEMON=$SHMT_TMPDIR/niced-shmchand
printf '#!/bin/sh\nexec nice -n 3 "%s" "$@"\n' "$daemon" >"$SHMT_DAEMON"
chmod +x "$SHMT_DAEMON"
start_daemon -S 100 --hugepages off --poller-nice off
got=$(poller_nice_now)
niced=$((own + 3 > 19 ? 19 : own + 3))
[ "$got" = "$niced" ] || shmt_fail "--poller-nice off under nice -n 3: poller at nice $got, expected $niced"
clients 4
got=$(nice_of_thread "$SHMT_PID" shmchan-poll0)
[ "$got" = "$niced" ] || shmt_fail "--poller-nice off, four clients: poller at nice $got, expected $niced"
[ "$(ctl_info_nice)" = "$niced null false" ] ||
	shmt_fail "--poller-nice off: shmchanctl info says '$(ctl_info_nice)'"
if own_slices; then
	slice=$(slice_of_thread "$SHMT_PID" shmchan-poll0)
	[ "$slice" != "$SLICE_NS" ] || shmt_fail "--poller-nice off: the poller's slice changed"
fi
stop_daemon
SHMT_DAEMON=$daemon
shmt_log "as root: $(below $ONE_CLIENT) for one client, also beside a doorbell flood, $(below $FOUR_CLIENTS) for four, -5 bound on both pollers, $above above the daemon's, off keeps the daemon's ($niced)"

# The part of a user without CAP_SYS_NICE, as nobody.
if ! uid=$(id -u "$NONROOT_USER" 2>/dev/null) || ! gid=$(id -g "$NONROOT_USER"); then
	shmt_log "no user $NONROOT_USER: the part without privilege is skipped"
	exit 0
fi
as_user=(setpriv --reuid="$uid" --regid="$gid" --clear-groups --)
for f in "$0" "$SHMT_DAEMON" "$ctl" "$perf"; do
	if ! "${as_user[@]}" test -x "$f"; then
		shmt_log "user $NONROOT_USER cannot run $f: the part without privilege is skipped"
		exit 0
	fi
done
rc=0
# TMPDIR: the child's folder must be one nobody may create in.
env POLLER_NICE_PART=nonroot TMPDIR=/tmp "${as_user[@]}" "$0" "$@" || rc=$?
[ "$rc" = 0 ] || shmt_fail "the part as $NONROOT_USER failed (status $rc)"
