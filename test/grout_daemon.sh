#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
#
# The client library against a daemon that speaks Grout's API versions only
# and knows no module of shmchan (a fake daemon that answers as Grout's
# main/api.c: hello at its own version or EBADMSG, ENOTSUP for the rest):
# a Grout program built with Grout's declarations and linked against
# libgr_api_client (grout_abi, v0.17.0 and main) connects after its hello is
# refused once (twice for v0.17.0), stays on the socket with no error, has
# the daemon's hello response, and gets the daemon's ENOTSUP for what it does
# not serve.
#
#   grout_daemon.sh DAEMON_BIN GROUT_ABI_0_17 GROUT_ABI_MAIN
set -eu

# shellcheck source=test/lib.sh
. "$(dirname "$0")/lib.sh"
shmt_args "DAEMON_BIN GROUT_ABI_0_17 GROUT_ABI_MAIN" "$@"
abi_0_17=$2
abi_main=$3
CLIENT_TIMEOUT_S=20
READY_WAIT_S=10
# What the fake Grout main says it can hold.
MAX_IFACES=1024

shmt_tmpdir
shmt_client_start grout-0.17 "$(dirname "$0")/fake_ctl_daemon.py" "$SHMT_TMPDIR/grout-0.17.sock" \
	--grout 9
shmt_client_start grout-main "$(dirname "$0")/fake_ctl_daemon.py" "$SHMT_TMPDIR/grout-main.sock" \
	--grout 10 --max-ifaces "$MAX_IFACES"
shmt_clients_wait_ready "$READY_WAIT_S"

out=$(shmt_run_bounded "$CLIENT_TIMEOUT_S" "$abi_0_17" "$SHMT_TMPDIR/grout-0.17.sock" grout 0 2>&1) ||
	shmt_fail "Grout v0.17.0 daemon: $out"
echo "Grout v0.17.0 daemon: $out"
out=$(shmt_run_bounded "$CLIENT_TIMEOUT_S" "$abi_main" "$SHMT_TMPDIR/grout-main.sock" grout \
	"$MAX_IFACES" 2>&1) || shmt_fail "Grout main daemon: $out"
echo "Grout main daemon: $out"
shmt_clients_stop
