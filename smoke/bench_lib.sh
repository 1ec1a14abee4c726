# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# What the steps of smoke/bench.sh share, sourced by it (after test/lib.sh):
# its progress lines, a tool run bounded with its failure said in plain
# words, the daemon's death noticed, and the check of a tool's output.
# Uses bench.sh's bench_start, step, n_steps and TOOL_BOUND_S, and test/lib.sh's
# shmt_die_with_parent.
# shellcheck disable=SC2154 # those are set by the scripts this file is sourced into

elapsed() {
	local s=$((SECONDS - bench_start))
	printf '%d:%02d' $((s / 60)) $((s % 60))
}

# progress WHAT: the next step's line, "[n/N m:ss] WHAT".
progress() {
	step=$((step + 1))
	echo "bench: [$step/$n_steps $(elapsed)] $*" >&2
}

# daemon_check WHAT: fail, saying so, if the daemon died (during WHAT).
daemon_check() {
	local pid=$SHMT_PID rc=0
	[ -n "$pid" ] || return 0
	shmt_running "$pid" && return 0
	wait "$pid" || rc=$?
	SHMT_PID=
	shmt_clean_dpdk
	if [ "$rc" -gt 128 ]; then
		shmt_fail "the daemon (pid $pid) died during $1: killed by SIG$(kill -l $((rc - 128)))"
	fi
	shmt_fail "the daemon (pid $pid) died during $1: exit status $rc"
}

# run_tool WHAT OUT CMD [ARGS...]: CMD's output into OUT, bounded by
# TOOL_BOUND_S; its error output is kept in OUT.err only if it fails. A
# failure ends the bench and says what failed and how: the daemon's death
# first (it explains the rest), then a hang, a crash or an exit status, with
# the last lines CMD wrote to its error output.
run_tool() {
	local what=$1 out=$2 rc=0 how
	shift 2
	timeout --foreground --kill-after="$SHMT_KILL_AFTER_S" "$TOOL_BOUND_S" \
		"${shmt_die_with_parent[@]}" "$@" >"$out" 2>"$out.err" || rc=$?
	if [ "$rc" = 0 ]; then
		rm -f "$out.err"
		return 0
	fi
	# No result: the folder keeps the tool's error output only.
	[ -s "$out" ] || rm -f "$out"
	# A tool that lost the daemon may end before the kernel has finished
	# the daemon's exit (a large address space takes a while to unmap, as
	# under AddressSanitizer): give it a second to be seen gone.
	[ -z "$SHMT_PID" ] || shmt_wait_gone "$SHMT_PID" 1 || true
	daemon_check "$what"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		how="hung: no result within $TOOL_BOUND_S s"
	elif [ "$rc" -gt 128 ]; then
		how="crashed: killed by SIG$(kill -l $((rc - 128)))"
	else
		how="failed: exit status $rc"
	fi
	shmt_fail "$what $how; its last words: $(tail -n 5 "$out.err")"
}

# The field each kind of output must have, a number: a reference's time per
# operation, a cell's rate, the idle run's daemon CPU time, the occasional
# calls' length, the headline's rounds, the route table's rate.
declare -A output_key=([ref]=ns_per_op [cell]=calls_per_s [idle]=daemon_cpu_ns [gap]=seconds
	[headline]=rounds [beside]=ratio_p50 [routes]=routes_per_s)
NUMBER_RE='-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?'

# check_output KIND FILE WHAT: fail unless FILE is a JSON object with
# KIND's field (output_key), and set output_value to that field's value. In
# the shell, for a step costs no process: bench_report.py checks every field
# it reads (bench_check.py) once the run is over.
check_output() {
	local key=${output_key[$1]} text
	text=$(<"$2")
	[[ $text =~ ^[[:space:]]*\{.*\}[[:space:]]*$ ]] ||
		shmt_fail "$3: bad output: $2: not JSON: $(head -c 200 "$2")"
	[[ $text =~ \"$key\":\ ($NUMBER_RE) ]] ||
		shmt_fail "$3: bad output: $2: no '$key' number"
	# shellcheck disable=SC2034 # for bench.sh's steps
	output_value=${BASH_REMATCH[1]}
}

# serving_wait PID SOCK LOG WHAT BOUND_S: wait until the server WHAT (PID,
# its output in LOG) serves SOCK; fail, saying so, if it dies first or does
# not serve it within BOUND_S seconds.
serving_wait() {
	local pid=$1 sock=$2 log=$3 what=$4 bound=$5
	local polls=$((bound * SHMT_POLLS_PER_S))
	until [ -S "$sock" ]; do
		shmt_running "$pid" || shmt_fail "$what died: $(tail -n 3 "$log")"
		[ "$polls" -gt 0 ] || shmt_fail "$what did not serve $sock in $bound s"
		polls=$((polls - 1))
		sleep "$SHMT_POLL_S"
	done
}
