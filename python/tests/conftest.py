# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Fixtures: a shmchand of its own for each test module (or each test that
kills it), with its own socket in a temporary folder and its own DPDK
--file-prefix, started from SHMCHAN_DAEMON and stopped by its PID."""

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

# EAL init takes about a second; leave room for a loaded machine.
DAEMON_START_S = 20
# The daemon stops its pollers and frees its channels on SIGTERM: quick.
DAEMON_STOP_S = 10
START_POLL_S = 0.05
# The daemon dies with the test process: setpriv(1) (util-linux, in every
# Debian system) sets its parent-death signal and executes it, so nothing
# runs between fork() and exec() in the test process. A preexec_fn would run
# Python there, and a lock another thread held at the fork (the C library's
# loader or allocator) then hangs the child before exec: seen once in the
# sanitized build, beside the asyncio tests' threads.
DIE_WITH_PARENT = ("setpriv", "--pdeathsig", "KILL")
# A Python program of run_python: an import and a few lines.
PROGRAM_TIMEOUT_S = 30
# connect_short(): tries of the set-up under a short call timeout.
SHORT_CONNECT_TRIES = 5


def _dpdk_runtime_dir(prefix):
    if os.getuid() == 0:
        base = "/var/run/dpdk"
    else:
        base = os.environ.get("XDG_RUNTIME_DIR", "/tmp") + "/dpdk"
    return os.path.join(base, prefix)


def _accepts(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


class Daemon:
    """A running shmchand: sock (its socket path), pid, log (its output)."""

    # Memfd channels, which every process that is not a DPDK secondary
    # gets: no hugepage needed, none left behind by a kill -9.
    OWN_ARGS = ("--hugepages", "off")

    def __init__(self, binary, tmpdir, name, extra_args=(), own_args=OWN_ARGS):
        """own_args: the daemon options every test gives; another program
        served as shmchand is (examples/embed_table) takes its own."""
        self.sock = str(tmpdir / "shmchand.sock")
        self.log = str(tmpdir / "daemon.log")
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)
        self.prefix = f"pyt-{safe}-{os.getpid()}"
        args = [*DIE_WITH_PARENT, binary, "-s", self.sock, *own_args, *extra_args]
        args += ["--", "--file-prefix", self.prefix]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        deadline = time.monotonic() + DAEMON_START_S
        while not (os.path.exists(self.sock) and _accepts(self.sock)):
            if self.proc.poll() is not None:
                self._cleanup()
                rc = self.proc.returncode
                pytest.fail(f"shmchand exited with {rc} before serving:\n{self.output()}")
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"shmchand did not serve {self.sock} within {DAEMON_START_S} s")
            time.sleep(START_POLL_S)

    def output(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def pause(self):
        """SIGSTOP, and wait until the kernel stopped it (the signal is
        delivered asynchronously: a poller may still answer meanwhile)."""
        os.kill(self.pid, signal.SIGSTOP)
        deadline = time.monotonic() + DAEMON_STOP_S
        while time.monotonic() < deadline:
            with open(f"/proc/{self.pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "T":
                    return
            time.sleep(START_POLL_S)
        pytest.fail(f"shmchand {self.pid} did not stop on SIGSTOP")

    def kill(self):
        """SIGKILL, by PID, and reap."""
        os.kill(self.pid, signal.SIGKILL)
        self.proc.wait(timeout=DAEMON_STOP_S)
        self._cleanup()

    def stop(self):
        """SIGTERM by PID; asserts a clean exit (status 0, socket removed)."""
        if self.proc.poll() is not None:
            self._cleanup()
            return self.proc.returncode
        os.kill(self.pid, signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=DAEMON_STOP_S)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"shmchand {self.pid} still ran {DAEMON_STOP_S} s after SIGTERM (killed)")
        self._cleanup()
        assert rc == 0, f"shmchand exited with {rc} on SIGTERM:\n{self.output()}"
        assert not os.path.exists(self.sock), "shmchand left its socket behind"
        return rc

    def _cleanup(self):
        # What a killed DPDK primary leaves: its runtime folder, unique to
        # this prefix.
        subprocess.run(["rm", "-rf", _dpdk_runtime_dir(self.prefix)], check=False)


def _daemon_binary():
    binary = os.environ.get("SHMCHAN_DAEMON")
    if not binary:
        pytest.skip("SHMCHAN_DAEMON (the shmchand to test against) is not set")
    return binary


@pytest.fixture(scope="module")
def daemon(request, tmp_path_factory):
    """A daemon for the whole test module."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    d = Daemon(_daemon_binary(), tmp_path_factory.mktemp(name), name)
    yield d
    d.stop()


@pytest.fixture
def own_daemon(request, tmp_path):
    """A daemon for one test, which may kill it; its daemon options come
    from the test's daemon_args marker."""
    marker = request.node.get_closest_marker("daemon_args")
    extra = marker.args if marker else ()
    d = Daemon(_daemon_binary(), tmp_path, request.node.name[:40], extra)
    yield d
    if d.proc.poll() is None:
        d.stop()
    else:
        d._cleanup()


@pytest.fixture
def run_python():
    """run(program, env): run a Python program in an interpreter of its own,
    with this process's environment changed by env (a value of None removes
    the variable); asserts that it exits 0 and returns its stdout's lines."""

    def run(program, env):
        run_env = {k: v for k, v in os.environ.items() if env.get(k, "") is not None}
        run_env.update({k: v for k, v in env.items() if v is not None})
        out = subprocess.run(
            [sys.executable, "-c", program],
            env=run_env,
            capture_output=True,
            text=True,
            timeout=PROGRAM_TIMEOUT_S,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()

    return run


def connect_short(sock, timeout, transport="auto"):
    """A Client whose calls time out after timeout seconds, for the tests of
    that timeout, with one call (a ping) made. On a loaded machine the
    attach or that first call may outlast a short timeout while the daemon
    runs as it should: the set-up is tried again, SHORT_CONNECT_TRIES times
    at most; what the test then asserts runs once."""
    import shmchan

    for attempt in range(SHORT_CONNECT_TRIES):
        c = None
        try:
            c = shmchan.connect(sock, transport=transport, timeout=timeout)
            c.ping()
            return c
        except TimeoutError:
            if c is not None:
                c.close()
            if attempt == SHORT_CONNECT_TRIES - 1:
                raise


def pytest_configure(config):
    config.addinivalue_line("markers", "daemon_args(*args): options of own_daemon's shmchand")


@pytest.fixture(params=["shm", "socket"])
def client(request, daemon):
    """A Client of the module's daemon, on each transport in turn."""
    import shmchan

    with shmchan.connect(daemon.sock, transport=request.param) as c:
        assert c.transport == request.param
        yield c
