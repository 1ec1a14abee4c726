#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# ThreadSanitizer over the doorbell and the channel registry, by hand (not a
# meson test: it needs a build of its own):
#
#   meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
#   ninja -C build-tsan
#   test/tsan_registry.sh build-tsan [SECONDS]
#
# 1. shmchan/doorbell_test: a million hand-offs each way between a client
#    and a server thread, sleeping and waking on the doorbells.
# 2. the daemon built with ThreadSanitizer (without hugepages: EAL then
#    maps nothing ThreadSanitizer refuses), serving a socket and a channel
#    client throughout while test/crash_soak churns SECONDS of clients killed
#    at random, each one attaching and detaching a channel under the pollers'
#    feet; then stopped.
# The reports that are RCU's (test/tsan.supp) are suppressed; every other
# report is printed, grouped by the two places that race, and fails the run.
# ThreadSanitizer ignores standalone fences (gcc says so at build time), so
# the doorbell's lost-wake-up reasoning is checked by doorbell_test's own
# assertions, not by it (docs/reliability.md).
set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 TSAN_BUILDDIR [SECONDS]" >&2
	exit 2
fi
builddir=$(cd "$1" && pwd)
seconds=${2:-10}
SHMT_DAEMON=$builddir/main/shmchand
SHMT_NAME=tsan_registry
# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
supp=$(cd "$(dirname "$0")" && pwd)/tsan.supp
READY_WAIT_S=10

# Reports of a log, one line per pair of racing places, most frequent first.
summarize() {
	python3 - "$1" <<'PY'
import collections, re, sys
text = open(sys.argv[1], errors="replace").read()
pairs = collections.Counter()
for report in text.split("WARNING: ThreadSanitizer: ")[1:]:
    kind = report.splitlines()[0].split(" (pid")[0]
    tops = re.findall(r"\n  (?:Previous )?((?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite)) of size \d+ at [^\n]*\n    #0 (\S+) (\S+)", report)
    pairs[kind + ": " + " vs ".join(f"{a.lower()} in {f} ({p.rsplit('/', 1)[-1]})" for a, f, p in tops)] += 1
for pair, n in pairs.most_common():
    print(f"{n:5} {pair}")
print(sum(pairs.values()))
PY
}

export TSAN_OPTIONS="halt_on_error=0:suppressions=$supp:history_size=4"
rc=0

log=$(mktemp "${TMPDIR:-/tmp}/tsan_doorbell.XXXXXX")
shmt_log "doorbell_test under ThreadSanitizer"
"$builddir/shmchan/shmchan_doorbell_test" >"$log" 2>&1 || true
out=$(summarize "$log")
n=$(echo "$out" | tail -n 1)
grep -q 'PASSED.*6 test' "$log" || { cat "$log" >&2; shmt_fail "doorbell_test failed under ThreadSanitizer"; }
shmt_log "doorbell_test: $n reports"
echo "$out" | sed '$d'
[ "$n" = 0 ] || rc=1
rm -f "$log"

shmt_log "daemon under ThreadSanitizer, $seconds s of churn"
start_daemon --hugepages off
soak=$builddir/test/crash_soak
for t in socket memfd; do
	"${shmt_die_with_parent[@]}" "$soak" healthy "$SHMT_SOCK" "$t" >"$SHMT_TMPDIR/healthy-$t.out" \
		2>&1 &
	shmt_track $!
done
polls=$((READY_WAIT_S * SHMT_POLLS_PER_S))
until [ "$(cat "$SHMT_TMPDIR"/healthy-*.out | grep -c '^ready$')" = 2 ]; do
	[ "$polls" -gt 0 ] || shmt_fail "the healthy clients were not served within $READY_WAIT_S s"
	polls=$((polls - 1))
	sleep "$SHMT_POLL_S"
done
"$soak" churn "$SHMT_SOCK" "$seconds" | tail -n 8 || shmt_fail "churn failed"
shmt_stop_tracked
# ThreadSanitizer makes the exit status 66 when it reported anything.
kill -TERM "$SHMT_PID"
shmt_wait_gone "$SHMT_PID" "$SHMT_STOP_WAIT_S" || shmt_fail "the daemon did not stop"
wait "$SHMT_PID" || true
SHMT_PID=
out=$(summarize "$SHMT_LOG")
n=$(echo "$out" | tail -n 1)
shmt_log "daemon: $n reports after suppressions"
echo "$out" | sed '$d'
if [ "$n" != 0 ]; then
	kept=${TMPDIR:-/tmp}/tsan_registry-daemon.log
	cp "$SHMT_LOG" "$kept"
	shmt_log "the daemon's log, reports in full: $kept"
	rc=1
fi
shmt_clean_dpdk
exit $rc
