// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A client cannot make the daemon block on its response doorbell. The
// attacker (a raw channel client, in a child process) clears O_NONBLOCK on
// its response doorbell with fcntl(F_SETFL, 0), writes 0xfffffffffffffffe to
// it (which saturates an eventfd's counter), sets its need-wakeup flag and
// sends one request: a daemon whose ring of that doorbell could block would
// block its poller there for ever. A victim client on the same poller (the
// daemon runs with -p 1) pings meanwhile: its slowest round trip must stay
// under STALL_MAX_MS.
//
// usage: doorbell_client_blocking SOCK stay|exit
// The victim is measured while the attacker lives, then:
//   stay  "ready" is printed, and the program waits for SIGTERM with the
//         attacker alive (test/doorbell_client_blocking.sh stops the daemon
//         meanwhile, which must take under 1 s)
//   exit  the attacker exits, and the victim is measured again once the
//         attacker's channel was detached

#include "check.h"
#include "raw_chan.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

// An eventfd counter's largest value (eventfd(2)): a blocking write of 1 to a
// counter there blocks until someone reads it.
#define EVENTFD_MAX 0xfffffffffffffffeull
// The victim pings for this long in each window of a measurement, and
// measures up to this many windows.
#define VICTIM_MEASURE_MS 1000
#define VICTIM_WINDOWS 3
// Slowest round trip allowed to the victim: a blocked poller never answers
// (the victim's ping fails at its timeout); a healthy one on a 2-core machine
// busy with other work, other channel servers among them, was seen to keep a
// victim waiting up to 90 ms, its poller sleeping while its CPUs ran others.
#define STALL_MAX_MS 500
// Bound of the attacker's wait for the daemon to answer its request, and of
// the daemon's detach of its channel once it exited.
#define ATTACK_BOUND_MS 3000
#define DETACH_POLL_US 10000
#define NSEC_PER_MSEC 1000000ull

// What the attacker did, sent to the parent through a pipe.
struct attack_report {
	int fcntl_ret, fcntl_errno;
	long write_ret;
	int write_errno;
	bool served; // the daemon answered the request sent while "asleep"
};

// In the child. Attacks, reports, then stays until go_fd reaches end of file
// (the parent closed it, or died).
static void attack(const char *sock_path, int report_fd, int go_fd) {
	static uint8_t buf[SHMCHAN_MSG_MAX];
	struct attack_report r = {0};
	uint64_t max = EVENTFD_MAX;
	struct raw_chan rc;

	raw_chan_attach(&rc, sock_path);
	int fd = shmchan_client_resp_fd(rc.chan);
	r.fcntl_ret = fcntl(fd, F_SETFL, 0);
	r.fcntl_errno = errno;
	r.write_ret = (long)write(fd, &max, sizeof(max));
	r.write_errno = errno;
	// Asleep, as far as the daemon can tell: its answer must ring us.
	shmchan_client_doorbell_arm(rc.chan);
	raw_chan_send(&rc, GR_PING, NULL, 0);
	r.served = raw_chan_recv(&rc, buf, sizeof(buf), ATTACK_BOUND_MS) > 0;
	CHECK(write(report_fd, &r, sizeof(r)) == sizeof(r), "report: %s", strerror(errno));
	char byte;
	while (read(go_fd, &byte, sizeof(byte)) != 0)
		;
	_exit(EXIT_SUCCESS);
}

static void victim_ping(struct gr_api_client *c) {
	long id = gr_api_client_send(c, GR_PING, 0, NULL);
	CHECK(id > 0, "victim: send: %s", strerror(errno));
	CHECK(gr_api_client_recv_len(c, (uint32_t)id, NULL) == 0,
	      "victim: recv: %s",
	      strerror(errno));
}

// Ping for VICTIM_MEASURE_MS; returns the slowest round trip, in ns.
static uint64_t victim_window(struct gr_api_client *c, const char *when) {
	uint64_t start = monotonic_ns(), end = start + VICTIM_MEASURE_MS * NSEC_PER_MSEC;
	uint64_t worst = 0, n = 0, now = start;

	while (now < end) {
		victim_ping(c);
		uint64_t after = monotonic_ns();
		if (after - now > worst)
			worst = after - now;
		now = after;
		n++;
	}
	printf("victim, %s: %" PRIu64 " pings, slowest %.3f ms\n", when, n, (double)worst / 1e6);
	return worst;
}

// Fail unless the slowest round trip of one of VICTIM_WINDOWS windows stays
// under STALL_MAX_MS. A blocked poller never answers again (the first ping
// hangs until the watchdog); other load on this machine deschedules a
// healthy one now and then, which one window in VICTIM_WINDOWS can absorb.
static void victim_measure(struct gr_api_client *c, const char *when) {
	uint64_t worst = UINT64_MAX;

	for (unsigned i = 0; i < VICTIM_WINDOWS && worst >= STALL_MAX_MS * NSEC_PER_MSEC; i++)
		worst = victim_window(c, when);
	CHECK(worst < STALL_MAX_MS * NSEC_PER_MSEC,
	      "victim, %s: a round trip of %.3f ms in each of %d windows",
	      when,
	      (double)worst / 1e6,
	      VICTIM_WINDOWS);
}

static struct gr_shm_stats_resp stats(struct gr_api_client *c) {
	struct gr_shm_stats_resp s;
	void *rx = NULL;
	long len = gr_api_client_send_recv_len(c, GR_SHM_STATS, 0, NULL, &rx);
	CHECK(len == (long)sizeof(s), "GR_SHM_STATS: %ld: %s", len, strerror(errno));
	memcpy(&s, rx, sizeof(s));
	free(rx);
	return s;
}

int main(int argc, char **argv) {
	struct gr_api_client_opts opts = {
		.transport = GR_API_TRANSPORT_SHM,
		.spin_us = -1,
		.version = "doorbell_client_blocking",
	};
	struct attack_report r;
	int report[2], go[2], status;
	sigset_t term;

	CHECK(argc == 3 && (strcmp(argv[2], "stay") == 0 || strcmp(argv[2], "exit") == 0),
	      "usage: %s SOCK stay|exit",
	      argv[0]);
	bool stay = strcmp(argv[2], "stay") == 0;
	watchdog_start(TEST_WATCHDOG_S);
	// The attack's write to a one-way socket fails with EPIPE, not SIGPIPE.
	signal(SIGPIPE, SIG_IGN);
	// Waited for with sigwait() in stay mode: blocked before any fork.
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	CHECK(sigprocmask(SIG_BLOCK, &term, NULL) == 0, "sigprocmask: %s", strerror(errno));
	children_guard();

	struct gr_api_client *victim = gr_api_client_connect_opts(argv[1], &opts);
	CHECK(victim != NULL, "victim: connect over shm: %s", strerror(errno));
	victim_ping(victim);

	CHECK(pipe(report) == 0 && pipe(go) == 0, "pipe: %s", strerror(errno));
	pid_t attacker = child_fork();
	if (attacker == 0) {
		close(report[0]);
		close(go[1]);
		attack(argv[1], report[1], go[0]);
	}
	close(report[1]);
	close(go[0]);
	CHECK(read(report[0], &r, sizeof(r)) == sizeof(r), "the attacker died before its attack");
	printf("attack: fcntl(F_SETFL, 0) = %d (%s), write of %#llx = %ld (%s), answered: %s\n",
	       r.fcntl_ret,
	       r.fcntl_ret < 0 ? strerror(r.fcntl_errno) : "ok",
	       EVENTFD_MAX,
	       r.write_ret,
	       r.write_ret < 0 ? strerror(r.write_errno) : "ok",
	       r.served ? "yes" : "no");
	CHECK(r.served, "the daemon did not answer the attacker's request");

	victim_measure(victim, "attacker alive");
	CHECK(stats(victim).channels == 2, "the attacker's channel is gone while it lives");

	if (stay) {
		printf("ready\n");
		fflush(stdout);
		int sig;
		CHECK(sigwait(&term, &sig) == 0, "sigwait");
		CHECK(gr_api_client_disconnect(victim) == 0, "disconnect: %s", strerror(errno));
		return EXIT_SUCCESS; // the atexit handler kills the attacker
	}

	close(go[1]); // the attacker exits
	status = child_reap(attacker);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "attacker status %#x", status);
	uint64_t deadline = monotonic_ns() + ATTACK_BOUND_MS * NSEC_PER_MSEC;
	struct gr_shm_stats_resp s;
	while ((s = stats(victim)).channels != 1) {
		CHECK(monotonic_ns() < deadline, "the attacker's channel still attached");
		usleep(DETACH_POLL_US);
	}
	CHECK(s.total.detach_lease == 1 && s.total.detach_corrupt == 0 && s.total.detach_slow == 0,
	      "detaches: lease %" PRIu64 ", corrupt %" PRIu64 ", slow %" PRIu64,
	      s.total.detach_lease,
	      s.total.detach_corrupt,
	      s.total.detach_slow);
	victim_measure(victim, "attacker gone");
	CHECK(gr_api_client_disconnect(victim) == 0, "disconnect: %s", strerror(errno));
	return EXIT_SUCCESS;
}
