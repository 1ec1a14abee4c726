// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The programs of test/daemon_kill_load.sh: the daemon killed with SIGKILL
// while clients of every transport keep requests in flight.
//
// kill SOCK
//   Forks KILL_CLIENTS_PER_TRANSPORT clients per transport (socket, memfd
//   channel, and memzone channel of a DPDK secondary when the daemon offers
//   it), half pipelining GR_PING2, half 64 KiB GR_SHM_ECHO, every answer
//   checked. Once all are busy it kills the daemon (its pid from
//   GR_SHM_DAEMON_INFO) with SIGKILL. Each client's next failing call must
//   fail with ECONNRESET or EPIPE within KILL_PROMPT_MS of the kill, and no
//   client may hang: each one's figures are printed.
//
// serve SOCK
//   A daemon started after the kill serves new clients: memfd channel and
//   socket clients, and a DPDK secondary's memzone channel when offered.

#include "check.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NSEC_PER_MSEC 1000000ull

#define KILL_CLIENTS_PER_TRANSPORT 2
// Requests in flight in each client.
#define KILL_DEPTH 8
// Payload of the echo clients: the kill may land while one is half copied.
#define KILL_ECHO_SIZE (64 * 1024)
// Answers each client checks before it reports ready.
#define KILL_WARM_CALLS 200
// Bound of all clients' start (secondaries' EAL init included).
#define KILL_READY_MS 15000
// Load before the kill, once every client is busy.
#define KILL_LOAD_MS 200
// Every client must see its error within this long after the kill.
#define KILL_PROMPT_MS 1000
// A client that has not ended this long after the kill hangs.
#define KILL_HANG_MS 5000
#define KILL_POLL_US 1000
// Answers each client of a restarted daemon checks.
#define SERVE_CALLS 1000

// One client, shared with the parent (MAP_SHARED | MAP_ANONYMOUS). The client
// writes every field but pid; the parent reads them once the client ended.
struct client_report {
	pid_t pid; // parent
	enum transport transport;
	uint32_t type; // GR_PING2 or GR_SHM_ECHO
	_Atomic bool ready;
	uint64_t answers; // checked before the failure
	int err; // errno of the failing call
	bool in_send; // the failing call was a send (else a receive)
	uint64_t err_ns; // CLOCK_MONOTONIC of the failure
	_Atomic bool reported;
};

static const char *sock_path;

struct in_flight {
	uint32_t id;
	uint64_t seq;
};

// Keep KILL_DEPTH requests of type in flight, every answer checked, until a
// call fails: record it in r and return. Any other error fails the client.
static void load_until_error(struct gr_api_client *c, struct client_report *r) {
	size_t size = r->type == GR_PING2 ? GR_PING2_LEN : KILL_ECHO_SIZE;
	uint8_t *tx = malloc(size), *want = malloc(size), *got = malloc(size);
	struct in_flight flight[KILL_DEPTH];
	uint64_t seq = 0;
	long ret;

	CHECK(tx != NULL && want != NULL && got != NULL, "out of memory");
	for (unsigned i = 0;; i = (i + 1) % KILL_DEPTH) {
		if (seq >= KILL_DEPTH) {
			// The oldest request: its slot takes the next one.
			ret = gr_api_client_recv_into(c, flight[i].id, got, size);
			if (ret < 0) {
				r->in_send = false;
				break;
			}
			secondary_payload_fill(want, size, flight[i].seq);
			CHECK(ret == (long)size && memcmp(got, want, size) == 0,
			      "%s client: answer to #%" PRIu64 " is wrong (%ld bytes)",
			      transport_names[r->transport],
			      flight[i].seq,
			      ret);
			r->answers++;
			if (r->answers == KILL_WARM_CALLS)
				atomic_store(&r->ready, true);
		}
		secondary_payload_fill(tx, size, seq);
		ret = gr_api_client_send(c, r->type, size, tx);
		if (ret < 0) {
			r->in_send = true;
			break;
		}
		flight[i] = (struct in_flight){.id = (uint32_t)ret, .seq = seq++};
	}
	r->err = errno;
	r->err_ns = monotonic_ns();
	atomic_store(&r->reported, true);
	free(tx);
	free(want);
	free(got);
}

// Connect on t, on a channel of t's backing (T_MEMZONE: a secondary already).
static struct gr_api_client *transport_connect(enum transport t, const char *who) {
	struct gr_api_client *c = secondary_connect_on(sock_path, t, who);

	secondary_expect_backing(c, t, who);
	return c;
}

static void __attribute__((noreturn)) client_run(struct client_report *r) {
	// The daemon's death must show as an error, never as SIGPIPE.
	signal(SIGPIPE, SIG_DFL);
	if (r->transport == T_MEMZONE)
		secondary_eal_init(sock_path);
	struct gr_api_client *c = transport_connect(r->transport, "daemon_kill_load");
	load_until_error(c, r);
	gr_api_client_disconnect(c);
	// A secondary ends without rte_eal_cleanup(): its primary is gone.
	_exit(EXIT_SUCCESS);
}

static int kill_main(void) {
	struct gr_shm_daemon_info info;

	secondary_daemon_info(sock_path, &info);
	bool memzone = (info.backings & GR_SHM_BACKING_MEMZONE) != 0;
	unsigned n_transports = memzone ? T_COUNT : T_MEMZONE;
	unsigned n_reports = n_transports * KILL_CLIENTS_PER_TRANSPORT;
	struct client_report *reports =
		mmap(NULL,
		     n_reports * sizeof(*reports),
		     PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS,
		     -1,
		     0);
	CHECK(reports != MAP_FAILED, "mmap: %s", strerror(errno));
	printf("daemon pid %d, memzone channels %s\n",
	       (int)info.pid,
	       memzone ? "offered" : "not offered (no hugepages)");

	for (unsigned i = 0; i < n_reports; i++) {
		struct client_report *r = &reports[i];
		r->transport = (enum transport)(i / KILL_CLIENTS_PER_TRANSPORT);
		r->type = i % 2 == 0 ? GR_PING2 : GR_SHM_ECHO;
		pid_t pid = child_fork();
		if (pid == 0)
			client_run(r);
		r->pid = pid;
	}

	uint64_t deadline = monotonic_ns() + KILL_READY_MS * NSEC_PER_MSEC;
	for (unsigned i = 0; i < n_reports; i++) {
		while (!atomic_load(&reports[i].ready)) {
			CHECK(!atomic_load(&reports[i].reported),
			      "%s client %d failed before the kill: %s",
			      transport_names[reports[i].transport],
			      (int)reports[i].pid,
			      strerror(reports[i].err));
			CHECK(waitpid(reports[i].pid, NULL, WNOHANG) == 0,
			      "%s client %d ended before the kill (its message is above)",
			      transport_names[reports[i].transport],
			      (int)reports[i].pid);
			CHECK(monotonic_ns() < deadline,
			      "%s client %d not busy within %d ms",
			      transport_names[reports[i].transport],
			      (int)reports[i].pid,
			      KILL_READY_MS);
			usleep(KILL_POLL_US);
		}
	}
	usleep(KILL_LOAD_MS * 1000);

	uint64_t kill_ns = monotonic_ns();
	CHECK(kill(info.pid, SIGKILL) == 0, "kill -9 %d: %s", (int)info.pid, strerror(errno));

	// Reap every client, each within the bound.
	deadline = kill_ns + KILL_HANG_MS * NSEC_PER_MSEC;
	unsigned left = n_reports;
	while (left > 0) {
		for (unsigned i = 0; i < n_reports; i++) {
			struct client_report *r = &reports[i];
			int status;
			if (r->pid <= 0)
				continue;
			pid_t got = waitpid(r->pid, &status, WNOHANG);
			CHECK(got >= 0, "waitpid %d: %s", (int)r->pid, strerror(errno));
			if (got == 0)
				continue;
			children_forget(r->pid);
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "%s client %d ended with status %#x",
			      transport_names[r->transport],
			      (int)r->pid,
			      status);
			r->pid = -r->pid;
			left--;
		}
		CHECK(left == 0 || monotonic_ns() < deadline,
		      "%u clients still run %d ms after the daemon was killed: they hang",
		      left,
		      KILL_HANG_MS);
		if (left > 0)
			usleep(KILL_POLL_US);
	}

	uint64_t worst = 0;
	for (unsigned i = 0; i < n_reports; i++) {
		const struct client_report *r = &reports[i];
		CHECK(atomic_load(&r->reported), "client %d reported nothing", (int)-r->pid);
		uint64_t after = r->err_ns > kill_ns ? r->err_ns - kill_ns : 0;
		printf("%-7s %-11s client %d: %" PRIu64 " answers, then %s %s after %.1f ms\n",
		       transport_names[r->transport],
		       r->type == GR_PING2 ? "GR_PING2" : "GR_SHM_ECHO",
		       (int)-r->pid,
		       r->answers,
		       r->in_send ? "send" : "receive",
		       strerror(r->err),
		       (double)after / 1e6);
		CHECK(r->err == ECONNRESET || r->err == EPIPE,
		      "client %d: %s, expected ECONNRESET or EPIPE",
		      (int)-r->pid,
		      strerror(r->err));
		CHECK(after < KILL_PROMPT_MS * NSEC_PER_MSEC,
		      "client %d saw its error %.1f ms after the kill, bound %d ms",
		      (int)-r->pid,
		      (double)after / 1e6,
		      KILL_PROMPT_MS);
		if (after > worst)
			worst = after;
	}
	printf("%u clients, every one failed with ECONNRESET or EPIPE, the last %.1f ms after the"
	       " kill (bound %d ms)\n",
	       n_reports,
	       (double)worst / 1e6,
	       KILL_PROMPT_MS);
	munmap(reports, n_reports * sizeof(*reports));
	return EXIT_SUCCESS;
}

static int serve_main(void) {
	struct gr_shm_daemon_info info;

	secondary_daemon_info(sock_path, &info);
	for (int t = T_SOCKET; t < T_MEMZONE; t++) {
		struct gr_api_client *c = transport_connect((enum transport)t, "restarted");
		secondary_pipeline(c, GR_PING2, GR_PING2_LEN, SERVE_CALLS);
		CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
		printf("restarted daemon serves a new %s client: ok\n", transport_names[t]);
	}
	if ((info.backings & GR_SHM_BACKING_MEMZONE) == 0)
		return EXIT_SUCCESS;
	// A secondary, in a child of its own: EAL stays out of this process.
	pid_t pid = child_fork();
	if (pid == 0) {
		secondary_eal_init(sock_path);
		struct gr_api_client *c = transport_connect(T_MEMZONE, "restarted");
		secondary_pipeline(c, GR_PING2, GR_PING2_LEN, SERVE_CALLS);
		CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
		printf("restarted daemon serves a new memzone client: ok\n");
		exit(EXIT_SUCCESS);
	}
	int status = child_reap(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the memzone client failed (status %#x)",
	      status);
	return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
	CHECK(argc == 3, "usage: %s kill|serve SOCK", argv[0]);
	watchdog_start(TEST_WATCHDOG_S);
	// No client outlives the test, however it fails.
	children_guard();
	sock_path = argv[2];
	if (strcmp(argv[1], "kill") == 0)
		return kill_main();
	CHECK(strcmp(argv[1], "serve") == 0, "usage: %s kill|serve SOCK", argv[0]);
	return serve_main();
}
