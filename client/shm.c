// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Shared-memory transport: sending and receiving through a channel's rings
// (attaching one: shm_attach.c). A busy channel makes no system
// call: a receive polls the ring for its spin budget (reading the clock
// through the vDSO every few polls), and only then arms the doorbell and
// sleeps in epoll_wait() on the response doorbell and the socket, its
// lease.

#include "client_priv.h"

#include "shm_fast.h"

#include <client_inline.h>
#include <gr_shm.h>
#include <shmchan.h>

#include <rte_pause.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

_Static_assert(CLIENT_MSG_MAX >= SHMCHAN_MSG_MAX, "msg_buf holds any channel message");

#define NSEC_PER_MSEC 1000000ull

// A spinning wait reads the clock once per this many empty polls: the vDSO
// call costs tens of nanoseconds, several polls and pauses; once per 32
// keeps it a small share of the spin and still ends the budget within a
// few microseconds.
#define SHM_CLOCK_EVERY 32
// The lease: after this long spinning on an empty ring, peek at the socket
// for EOF (a dead daemon never fills the ring). A response that arrives
// sooner costs no system call.
#define SHM_LEASE_CHECK_NS (5 * NSEC_PER_MSEC)
// Safety timeout of a sleep on the doorbell. The doorbell protocol loses no
// wake-up; this only bounds the damage of a daemon bug.
#define SHM_SLEEP_SAFETY_MS 1000
// The blocking waits' epoll events: which descriptor stirred.
enum { SHM_SLEEP_BELL, SHM_SLEEP_LEASE };

// What a waiting loop does next (values >= 0; errors are -errno).
enum shm_wait {
	SHM_WAIT_POLL = 0, // poll the ring again
	SHM_WAIT_SLEEP, // spin budget spent: sleep
	SHM_WAIT_SOCKET, // the daemon wrote on the socket: read it
};

// Spin state of one wait: starts when the ring is first found empty.
struct shm_spin {
	unsigned polls; // empty polls so far
	unsigned next_clock; // polls at the next clock read; 0 until the first
	uint64_t start_ns; // the first clock read
	uint64_t lease_ns; // last lease check (or start)
	uint64_t now_ns; // last clock read (or start)
	uint64_t budget_ns; // of this wait (client_spin_budget()), from the first read
	// The wait says nothing of the round trip (client_spin_turn()): it
	// left its CPU to the poller, or was descheduled.
	bool disturbed; // It slept at once, its requests having woken the daemon on a busy
	// host (client_spin_wake_sleep()): its sleep is learnt, but it is no
	// sample of the daemon's wake-up, which the spin would have delayed.
	bool at_once;
};

// client_cpus_busy() of the library: what the daemon last told in the
// control block, if it told it less than CLIENT_HOST_HINT_MAX_MS ago, else
// the fourth field of /proc/loadavg, "R/T", R the runnable tasks (running
// or waiting for a CPU), against the online CPUs.
static bool shm_cpus_busy(struct gr_api_client *c) {
	uint64_t now = client_clock_ns();
	bool busy;
	if (c->chan != NULL &&
	    shmchan_client_host_busy(c->chan, now / 1000000, CLIENT_HOST_HINT_MAX_MS, &busy))
		return busy;
	if (c->cpus_checked_ns != 0 && now - c->cpus_checked_ns < CLIENT_CPUS_CHECK_NS)
		return c->cpus_busy;
	c->cpus_checked_ns = now;
	c->cpus_busy = false;
	if (c->loadavg_fd == -1) {
		c->loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
		if (c->loadavg_fd < 0)
			c->loadavg_fd = CLIENT_LOADAVG_NONE;
		c->online_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	}
	if (c->loadavg_fd < 0 || c->online_cpus <= 0)
		return false;
	char buf[128];
	unsigned running;
	ssize_t n = pread(c->loadavg_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	// This thread and the poller it woke are among them: more than the
	// CPUs means one of them, or another task, waits for a CPU.
	if (sscanf(buf, "%*s %*s %*s %u/", &running) == 1)
		c->cpus_busy = (long)running > c->online_cpus;
	return c->cpus_busy;
}

bool (*client_cpus_busy)(struct gr_api_client *) = shm_cpus_busy;

// Peek at the socket without blocking. The daemon never writes there after
// attach, but a message that does come is read and routed, not ignored.
// Returns SHM_WAIT_POLL (nothing), SHM_WAIT_SOCKET (data), or -ECONNRESET
// (EOF: the lease is lost and the handle dead).
static int shm_lease_check(struct gr_api_client *c) {
	char byte;
	ssize_t n;
	do
		n = recv(c->sock, &byte, sizeof(byte), MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return SHM_WAIT_SOCKET;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return SHM_WAIT_POLL;
	c->dead = true;
	return -ECONNRESET;
}

// Called after each empty poll of a wait; spins before it returns. A wait
// for a response (responses) spins on the response ring's index for up to
// SHM_CLOCK_EVERY polls (shmchan_client_spin(): one load and a pause each,
// so that the response is noticed as soon as it is published); a wait for
// room in the request ring pauses once, and its caller tries again. Returns
// an enum shm_wait or -errno. The clock is first read after SHM_CLOCK_EVERY
// polls, not at the first one: most waits of a busy channel end sooner, and
// a clock read (25-35 ns) at the start of every wait would delay noticing
// the response. The budget thus counts from there, and so does the call's
// deadline if it has not started: -ETIMEDOUT once it passed. Each clock
// read also tells the daemon where this thread runs, and asks the spin
// policy whether spinning still pays (client_spin_turn()): not when the
// daemon's poller is awake on this very CPU, nor once this thread was
// descheduled. sched_getcpu() reads glibc's rseq area (or the vDSO): no
// system call.
static inline __attribute__((always_inline)) int
shm_spin(struct gr_api_client *c, struct shm_spin *s, bool responses) {
	if (c->spin.budget_ns == 0)
		return SHM_WAIT_SLEEP;
	if (s->polls >= SHM_CLOCK_EVERY && s->polls >= s->next_clock) {
		uint64_t now = client_clock_ns();
		if (client_deadline_passed(c, now))
			return -ETIMEDOUT;
		int cpu = sched_getcpu();
		shmchan_client_cpu_publish(c->chan, cpu);
		uint64_t turn = 0;
		if (s->next_clock == 0) {
			s->start_ns = now;
			s->lease_ns = now;
			s->budget_ns = client_spin_budget(
				&c->spin,
				c->woke,
				shmchan_client_daemon_cpu(c->chan) == cpu
			);
		} else {
			turn = now - s->now_ns;
		}
		s->now_ns = now;
		if (client_spin_turn(
			    &c->spin,
			    s->budget_ns,
			    turn,
			    now - s->start_ns,
			    shmchan_client_daemon_on(c->chan, cpu),
			    &s->disturbed
		    ) == CLIENT_SPIN_SLEEP) {
			return SHM_WAIT_SLEEP;
		} else if (now - s->lease_ns >= SHM_LEASE_CHECK_NS) {
			s->lease_ns = now;
			int ret = shm_lease_check(c);
			if (ret != SHM_WAIT_POLL)
				return ret;
		}
		s->next_clock = s->polls + SHM_CLOCK_EVERY;
	}
	if (responses) {
		s->polls += shmchan_client_spin(c->chan, SHM_CLOCK_EVERY);
	} else {
		s->polls++;
		rte_pause();
	}
	return SHM_WAIT_POLL;
}

// How long the spin of s lasted by its last clock read: 0 when it read none.
static uint64_t shm_spun_ns(const struct shm_spin *s) {
	return s->next_clock != 0 ? s->now_ns - s->start_ns : 0;
}

// The spin of s caught what the wait waited for: tell the budget how long
// it took. A wait that ended before the spin read the clock took a few
// polls: a sample of 0, and no clock read on the busy channel's path.
static void shm_spin_caught(struct gr_api_client *c, const struct shm_spin *s) {
	if (s->disturbed) {
		client_spin_disturbed(&c->spin, false);
		return;
	}
	uint64_t wait_ns = 0;
	if (s->next_clock != 0)
		wait_ns = client_clock_ns() - s->start_ns;
	client_spin_caught(&c->spin, wait_ns);
	if (c->woke)
		client_spin_woke(&c->spin, wait_ns);
}

// The spin of s ended in a sleep of slept_ns: tell the budget, unless the
// wait was disturbed.
static void shm_spin_slept(struct gr_api_client *c, const struct shm_spin *s, uint64_t slept_ns) {
	if (s->disturbed) {
		client_spin_disturbed(&c->spin, true);
		return;
	}
	client_spin_slept(&c->spin, shm_spun_ns(s), slept_ns);
	if (c->woke && !s->at_once)
		client_spin_woke(&c->spin, shm_spun_ns(s) + slept_ns);
}

// Take the rings queued in the response doorbell (a system call), and
// count from here.
static void shm_bell_drain(struct gr_api_client *c) {
	shmchan_client_doorbell_drain(c->chan);
	c->bell_wakes = 0;
	c->bell_mark = shmchan_client_rings_mark(c->chan);
}

// Arm the response doorbell, then re-check: the one place that arms, for
// the blocking calls and for gr_api_client_poll_prepare() (in_loop). want_room: the
// length of a request waiting for room, or 0. Returns true when armed (the
// caller may sleep on the doorbell), false when the re-check found what the
// caller waits for (disarmed again: do not sleep).
static bool shm_arm(struct gr_api_client *c, size_t want_room, bool in_loop) {
	// Rings the blocking waits left queued: every one before a sleep in
	// the caller's loop, whose descriptor is level-triggered, and before
	// a wait for room (the bound counts taken responses, and such a wait
	// may not have taken them all); before a response wait once they may
	// be many. Before arming: a ring the daemon sends for this sleep comes
	// after the flag, and is not taken here.
	if (c->bell_wakes != 0 &&
	    (in_loop || want_room > 0 || c->bell_wakes >= CLIENT_BELL_DRAIN_WAKES ||
	     shmchan_client_rings_since(c->chan, c->bell_mark) >= CLIENT_BELL_DRAIN_RINGS))
		shm_bell_drain(c);
	// Arming also rings the daemon if it waits for room in our response
	// ring: we sleep only after taking every response, so we just made it.
	// In the caller's loop, the daemon hears that we never spin.
	if (in_loop)
		shmchan_client_doorbell_arm_in_loop(c->chan);
	else
		shmchan_client_doorbell_arm(c->chan);
	// Re-check after arming (arm ends with a full fence): the daemon may
	// have published or freed room between our last look and the flag
	// store, seen the flag still clear and not rung. Sleeping now would miss
	// that.
	if (shmchan_client_has_response(c->chan) ||
	    (want_room > 0 && shmchan_client_can_enqueue(c->chan, want_room))) {
		shmchan_client_doorbell_disarm(c->chan);
		return false;
	}
	c->armed = true;
	return true;
}

// After a sleep on the doorbell shm_arm() armed: disarm, and drain it when
// rung (a system call) unless the rings may stay queued: the caller's loop
// sleeps on a level-triggered descriptor, the blocking waits on an
// edge-triggered one (keep true).
static void shm_disarm(struct gr_api_client *c, bool rung, bool keep) {
	if (rung && keep)
		c->bell_wakes++;
	else if (rung)
		shm_bell_drain(c);
	shmchan_client_doorbell_disarm(c->chan);
	c->armed = false;
}

// The blocking waits' epoll instance, made at their first sleep: the
// doorbell edge-triggered, so that a ring left queued does not wake the
// next sleep, and the socket level-triggered. A ring queued before it was
// made is reported by its first wait. -1 when it cannot be made: the
// waits poll() then, and drain after each ring.
static int shm_sleep_fd(struct gr_api_client *c) {
	if (c->sleep_fd != -1)
		return c->sleep_fd;
	int fd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event bell = {.events = EPOLLIN | EPOLLET, .data.u32 = SHM_SLEEP_BELL};
	struct epoll_event lease = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = SHM_SLEEP_LEASE};
	if (fd < 0 || epoll_ctl(fd, EPOLL_CTL_ADD, shmchan_client_resp_fd(c->chan), &bell) < 0 ||
	    epoll_ctl(fd, EPOLL_CTL_ADD, c->sock, &lease) < 0) {
		if (fd >= 0)
			close(fd);
		c->sleep_fd = CLIENT_SLEEP_FD_NONE;
		return -1;
	}
	c->sleep_fd = fd;
	return fd;
}

// One sleep of shm_sleep(), up to ms: *rung when the doorbell woke it,
// *lease when the socket stirred. Returns 0 or -errno.
static int shm_sleep_wait(struct gr_api_client *c, int ms, bool *rung, bool *lease) {
	int fd = shm_sleep_fd(c), n;
	*rung = *lease = false;
	if (fd >= 0) {
		struct epoll_event ev[2];
		n = epoll_wait(fd, ev, 2, ms);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u32 == SHM_SLEEP_BELL)
				*rung = true;
			else
				*lease = true;
		}
	} else {
		struct pollfd pfd[] = {
			{.fd = shmchan_client_resp_fd(c->chan), .events = POLLIN},
			{.fd = c->sock, .events = POLLIN},
		};
		n = poll(pfd, 2, ms);
		*rung = n > 0 && (pfd[0].revents & POLLIN);
		*lease = n > 0 && pfd[1].revents != 0;
	}
	return n < 0 && errno != EINTR ? -errno : 0;
}

// Sleep until the daemon rings the response doorbell, the socket stirs, or
// the call's deadline passes. The daemon rings when it publishes a response
// or frees room in the request ring. want_room: the length of a request
// waiting for room, or 0. *slept_ns: how long it slept (0 when the re-check
// after arming found what we wait for). Returns an enum shm_wait or -errno
// (-ETIMEDOUT).
static int shm_sleep(struct gr_api_client *c, size_t want_room, uint64_t *slept_ns) {
	int ms;
	*slept_ns = 0;
	int ret = client_wait_ms(c, &ms);
	if (ret < 0)
		return ret;
	if (!shm_arm(c, want_room, false))
		return SHM_WAIT_POLL;
	// Two vDSO clock reads around a system call that sleeps: the adaptive
	// budget learns from how long the sleep lasted.
	uint64_t sleep_start_ns = client_clock_ns();
	if (ms < 0 || ms > SHM_SLEEP_SAFETY_MS)
		ms = SHM_SLEEP_SAFETY_MS;
	bool rung, lease;
	ret = shm_sleep_wait(c, ms, &rung, &lease);
	*slept_ns = client_clock_ns() - sleep_start_ns;
	shm_disarm(c, rung, c->sleep_fd >= 0);
	if (ret == 0)
		ret = lease ? shm_lease_check(c) : SHM_WAIT_POLL;
	return ret;
}

// Before a wait: the daemon must know of every request sent with more
// (a sleeping one is woken now), and of the room our last takes made in the
// response ring (a quick check; shm_sleep()'s arm is the one that cannot
// miss).
static inline void shm_wait_start(struct gr_api_client *c) {
	if (shmchan_client_flush_inline(c->chan))
		c->woke = true;
	shmchan_client_room_check_inline(c->chan);
}

void client_shm_flush(struct gr_api_client *c) {
	if (shmchan_client_flush_inline(c->chan))
		c->woke = true;
}

// A message the daemon wrote on the socket (lease_check said so): read it
// without waiting. Returns 0, -EAGAIN (not whole yet) or -errno.
static int shm_sock_msg(struct gr_api_client *c, struct client_msg *msg) {
	return client_sock_next_msg(c, msg, false);
}

int client_shm_msg_bad(struct gr_api_client *c, int n, const struct client_msg *msg) {
	if (n == -ECONNRESET) {
		c->dead = true;
		return n;
	}
	if (n < (int)sizeof(msg->hdr))
		goto bad;
	int ret = client_check_hdr(c, &msg->hdr);
	if (ret < 0)
		return ret;
	if (msg->hdr.payload_len != (size_t)n - sizeof(msg->hdr))
		goto bad;
	return 0;
bad:
	c->dead = true;
	return -EBADMSG;
}

int client_shm_next_msg_wait(
	struct gr_api_client *c,
	struct client_msg *msg,
	bool wait,
	const struct client_into *into
) {
	struct shm_spin spin = {0};
	bool slept = false, sleep_now = false;
	shm_wait_start(c);
	if (!wait)
		return -EAGAIN;
	// Our requests woke the poller: spin only if a CPU is free for it
	// (docs/spin-budgets.md). Read only then: a busy channel never rings,
	// and pays nothing for it.
	if (c->woke && client_spin_wake_sleep(&c->spin, true, client_cpus_busy(c))) {
		spin.at_once = true;
		sleep_now = true;
	}
	for (;;) {
		int ret = sleep_now ? SHM_WAIT_SLEEP : shm_spin(c, &spin, true);
		sleep_now = false;
		if (ret == SHM_WAIT_SLEEP) {
			uint64_t slept_ns;
			ret = shm_sleep(c, 0, &slept_ns);
			if (ret == SHM_WAIT_POLL && !slept) {
				shm_spin_slept(c, &spin, slept_ns);
				slept = true;
			}
			spin = (struct shm_spin){0};
		}
		if (ret == SHM_WAIT_SOCKET) {
			ret = shm_sock_msg(c, msg);
			if (ret != -EAGAIN)
				return ret;
			ret = SHM_WAIT_POLL;
		}
		if (ret < 0)
			return ret;
		int n = shm_look(c, msg, into);
		if (n == SHM_LOOK_SOCKET)
			return shm_sock_msg(c, msg);
		if (n != 0) {
			if (!slept)
				shm_spin_caught(c, &spin);
			return shm_took(c, n, msg, into);
		}
	}
}

int client_shm_wait_fd(struct gr_api_client *c) {
	if (c->wait_fd >= 0)
		return c->wait_fd;
	int fd = epoll_create1(EPOLL_CLOEXEC);
	if (fd < 0)
		return -errno;
	// Level-triggered: readable while the doorbell is rung and not yet
	// drained, or while the socket has data or its EOF (a dead daemon).
	struct epoll_event bell = {.events = EPOLLIN};
	struct epoll_event lease = {.events = EPOLLIN | EPOLLRDHUP};
	if (epoll_ctl(fd, EPOLL_CTL_ADD, shmchan_client_resp_fd(c->chan), &bell) < 0 ||
	    epoll_ctl(fd, EPOLL_CTL_ADD, c->sock, &lease) < 0) {
		int ret = -errno;
		close(fd);
		return ret;
	}
	c->wait_fd = fd;
	return fd;
}

int client_shm_poll_prepare(struct gr_api_client *c) {
	// Every prepare, armed already or not: the daemon must hear of the
	// requests sent with more since the last one, or a caller that sleeps
	// on the fd waits for answers to requests the daemon never woke for.
	shm_wait_start(c);
	// Armed by an earlier prepare, not yet done: anything published since
	// that arm rings the doorbell, anything before it was seen by its
	// re-check.
	if (c->armed)
		return 0;
	if (shmchan_client_has_response(c->chan))
		return 1;
	return shm_arm(c, 0, true) ? 0 : 1;
}

int client_shm_poll_done(struct gr_api_client *c) {
	if (!c->armed)
		return 0;
	shm_disarm(c, true, false);
	if (shmchan_client_has_response(c->chan))
		return 0;
	// Woken with an empty ring: by the socket (EOF: the daemon is gone), by
	// another descriptor of the caller's loop, or by room in the request
	// ring. Look at the lease; a message there is stashed. A lost lease
	// marks the handle dead: the caller's next call says ECONNRESET, as on
	// the socket transport.
	int ret = shm_lease_check(c);
	if (ret == -ECONNRESET)
		return 0;
	if (ret == SHM_WAIT_SOCKET) {
		struct client_msg msg;
		ret = shm_sock_msg(c, &msg);
		if (ret == 0)
			ret = client_route(c, &msg, 0);
		if (ret == -EAGAIN)
			ret = 0;
	}
	return ret < 0 ? ret : 0;
}

// Responses one drain of a sender waiting for room moves to the stash: a
// daemon that keeps the response ring from ever going empty must not keep
// the sender from its deadline, which its wait reads between two drains.
#define SHM_DRAIN_MAX CLIENT_ROUTE_CLOCK_EVERY

// Move the responses waiting in the response ring to the stash, at most
// SHM_DRAIN_MAX of them. Returns how many, or -errno.
static int shm_drain(struct gr_api_client *c) {
	struct client_msg msg;
	int n, taken = 0;
	while (taken < SHM_DRAIN_MAX &&
	       (n = shmchan_client_recv(c->chan, c->msg_buf, CLIENT_MSG_MAX)) != 0) {
		int ret = shm_msg(c, n, &msg);
		if (ret == 0)
			ret = client_route(c, &msg, 0);
		if (ret < 0)
			return ret;
		taken++;
	}
	return taken;
}

int client_shm_send_wait(
	struct gr_api_client *c,
	const struct gr_api_request *hdr,
	const void *payload,
	size_t len,
	bool more
) {
	struct shm_spin spin = {0};
	struct client_msg msg;
	bool waiting = false;
	for (;;) {
		int ret = shm_enqueue(c, hdr, payload, len, more);
		if (ret != -ENOBUFS)
			return ret;
		// The daemon stops reading requests while our response ring is
		// full: drain it into the stash, or a pipelining client and the
		// daemon would wait on each other forever.
		ret = shm_drain(c);
		if (ret < 0)
			return ret;
		// Tell a daemon waiting for room about the room just made: once
		// per drain that took something, not on every turn of this loop
		// (the daemon's flag stays set until it wakes).
		if (ret > 0)
			shmchan_client_room_check(c->chan);
		if (!waiting) {
			shm_wait_start(c);
			waiting = true;
		}
		ret = shm_spin(c, &spin, false);
		if (ret == SHM_WAIT_SLEEP) {
			// The daemon rings when it frees room in the request ring.
			// A wait for room teaches the budget nothing about round
			// trips.
			uint64_t slept_ns;
			ret = shm_sleep(c, sizeof(*hdr) + len, &slept_ns);
			spin = (struct shm_spin){0};
		}
		if (ret == SHM_WAIT_SOCKET) {
			ret = shm_sock_msg(c, &msg);
			if (ret == 0)
				ret = client_route(c, &msg, 0);
			if (ret == -EAGAIN)
				ret = 0;
		}
		if (ret < 0)
			return ret;
	}
}
