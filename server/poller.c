// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "poller.h"
#include "channel_priv.h"
#include "config.h"

#include <rte_cycles.h>
#include <rte_pause.h>
#include <shmchan.h>
#define URCU_INLINE_SMALL_FUNCTIONS // see channel_serve.c
#include <urcu.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

// Empty passes over the channels made inside one RCU read-side critical
// section: rcu_read_lock() and unlock are calls into liburcu, about as long
// as an empty pass itself. A pass that does work ends the section, so a
// grace period waits at most for one pass of work plus this many empty ones.
#define POLLER_PASSES_PER_LOCK 64
// Empty passes of a spinning poller between two reads of the TSC, which ends
// its spin window. A read costs a third of an empty pass (13 ns against 34
// ns of pause on the 2-vCPU AMD EPYC guest measured), and a request that
// arrives during it waits for it: reading it on every pass delayed every
// busy round trip by half of that on average. Four passes overshoot a 2 us
// burst window by at most a tenth. POLLER_PASSES_PER_LOCK is a multiple.
#define POLLER_CLOCK_EVERY 4
_Static_assert(POLLER_PASSES_PER_LOCK % POLLER_CLOCK_EVERY == 0, "");
// How long a poller spins after work that followed a silence: a client that
// calls again as soon as it has its answer sends its next request within a
// round trip of it (0.2 to 1 us on the hosts measured, both sides spinning);
// 2 us leaves room for a cache miss or two. An occasional call on the
// poller's own CPU pays at most this for it.
#define POLLER_BURST_NS 2000
// Events taken per epoll_wait. The poller serves every channel after any
// wake-up, so this only bounds one call.
#define POLLER_MAX_EVENTS 64

struct poller {
	pthread_t thread;
	unsigned id;
	int epfd; // written at start (main thread), read by the poller
	int stop_fd; // eventfd: main thread writes it to stop the poller
	atomic_bool stop;
	// Wake-up for events (poller_wake): wake_fd is an eventfd of ours in
	// the epoll set, edge-triggered, never read. sleeping: the poller is
	// between arming and waking (poller writes); wake_sent: wake_fd was
	// written during this sleep (any thread).
	int wake_fd;
	atomic_bool sleeping;
	atomic_bool wake_sent;
	// SHMCHAN_MSG_MAX bytes: each request is copied here first, at
	// CHANNEL_REQ_BUF_SKEW past the start of req_mem (malloc'ed).
	uint8_t *req_buf;
	uint8_t *req_mem;
};

static struct poller pollers[GR_API_SERVER_MAX_POLLERS];
static unsigned n_pollers;
static uint64_t spin_cycles;
// The burst window (spin_window_after_work()), at most the spin budget.
static uint64_t burst_cycles;

unsigned poller_count(void) {
	return n_pollers;
}

int poller_watch(unsigned id, int fd) {
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET};

	if (id >= n_pollers)
		return -EINVAL;
	if (epoll_ctl(pollers[id].epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		LOG(ERR, "epoll_ctl add fd %d to poller %u: %s", fd, id, strerror(errno));
		return -errno;
	}
	return 0;
}

void poller_unwatch(unsigned id, int fd) {
	if (id < n_pollers && epoll_ctl(pollers[id].epfd, EPOLL_CTL_DEL, fd, NULL) < 0)
		LOG(ERR, "epoll_ctl del fd %d from poller %u: %s", fd, id, strerror(errno));
}

void poller_wake(unsigned id) {
	struct poller *p;
	uint64_t one = 1;

	if (id >= n_pollers)
		return;
	p = &pollers[id];
	// Full fence between the caller's publication (the backlog count) and
	// the load of sleeping. The poller does the mirror: store sleeping,
	// fence, then re-check the backlogs (channel_arm). Without both, the
	// poller could miss the event while we miss its flag, and sleep on it.
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&p->sleeping, memory_order_relaxed))
		return;
	if (atomic_exchange_explicit(&p->wake_sent, true, memory_order_relaxed))
		return;
	// Our own eventfd, never read: cannot block before its counter nears
	// 2^64.
	if (write(p->wake_fd, &one, sizeof(one)) < 0)
		LOG(ERR, "poller %u: wake: %s", id, strerror(errno));
}

// Give the calling poller thread the nice value asked for (config.c: a
// server must not lose its CPUs to the clients that spin waiting for it).
// Without the right to, the thread keeps the daemon's, and the log says
// why: the daemon still serves, only slower on CPUs it shares.
static void poller_set_nice(const struct poller *p, int32_t nice) {
	if (nice == GR_API_SERVER_NICE_OFF)
		return;
	// On Linux the nice value is the thread's: PRIO_PROCESS with a
	// thread id sets that thread's alone.
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), nice) < 0) {
		LOG(WARNING,
		    "poller %u: cannot take nice %d (%s; needs CAP_SYS_NICE or RLIMIT_NICE): it "
		    "keeps the daemon's, and shares its CPU with spinning clients as their equal",
		    p->id,
		    nice,
		    strerror(errno));
		return;
	}
	LOG(DEBUG, "poller %u: nice %d", p->id, nice);
}

// Whether the work a pass just did keeps the poller spinning: the spin
// follows work, never wake-ups. Work that comes within a spin budget of the
// work before it (a client calling back to back, a pipeline, a stream) opens
// or extends a spin window of one budget, in which the poller catches the
// next request without a doorbell. Work after a longer silence (an
// occasional call, the first call of a burst, or any call whose wake-ups
// made it slower than a budget) opens only a burst window of
// POLLER_BURST_NS: long enough to catch the next request of a client that
// calls again as soon as it has its answer, which brings it back within a
// budget of this one and so opens the full window; short enough that an
// occasional call does not pay for it. On a machine where the scheduler
// wakes the poller on the CPU of the client that rang it (docs/benchmark-method.md,
// "The occasional call"), a poller that spun its budget after an occasional
// call held that CPU at its nice value while the client, whose answer was
// already in its ring, waited for it. And a wake-up that finds nothing (a
// client ringing with no request) opens no window at all: it costs the poller
// one pass and its re-arm, never a spin. Returns the new end of the spin
// window.
static uint64_t spin_window_after_work(uint64_t *last_work, uint64_t spin_until, uint64_t now) {
	uint64_t window = now - *last_work <= spin_cycles ? spin_cycles : burst_cycles;

	if (now + window > spin_until)
		spin_until = now + window;
	*last_work = now;
	return spin_until;
}

static void *poller_main(void *arg) {
	struct epoll_event events[POLLER_MAX_EVENTS];
	struct poller *p = arg;
	// TSC of the last pass that moved a message (0: none yet), and the end
	// of the spin window (spin_window_after_work()).
	uint64_t last_work = 0, spin_until = 0;
	char name[16];

	server_thread_mark();
	snprintf(name, sizeof(name), "shmchan-poll%u", p->id);
	pthread_setname_np(pthread_self(), name);
	poller_set_nice(p, server_conf.poller_nice);
	if (p->id == 0)
		atomic_store_explicit(
			&server_state.poller0_tid,
			(int)gettid(),
			memory_order_release
		);
	rcu_register_thread();

	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		bool idle = false;
		int timeout_ms;

		rcu_read_lock();
		for (unsigned pass = 0; pass < POLLER_PASSES_PER_LOCK; pass++) {
			if (channel_poll(p->id, p->req_buf) > 0) {
				spin_until =
					spin_window_after_work(&last_work, spin_until, rte_rdtsc());
				break;
			}
			// Past the spin window (or none was open): one pass found
			// nothing after the last work, so everything that work
			// made is served. The clock is read on the first empty
			// pass (a wake-up that found nothing sleeps again at once)
			// and then every POLLER_CLOCK_EVERY passes.
			if (pass % POLLER_CLOCK_EVERY == 0 && rte_rdtsc() >= spin_until) {
				idle = true;
				break;
			}
			rte_pause();
		}
		rcu_read_unlock();
		if (!idle)
			continue;

		// Idle: arm every doorbell, then re-check
		// every ring (channel_arm does both, one fence in between). A
		// client that published before seeing the flag is caught by the
		// re-check; one that publishes after sees the flag and rings.
		// A channel waiting for room in its response ring is rung by
		// its client after it took its responses, or woken by the
		// slow-client limit's timeout.
		atomic_store_explicit(&p->wake_sent, false, memory_order_relaxed);
		// No fence of its own: channel_arm's one fence, after its flag
		// stores, also orders this store before its look at the events
		// backlogs (see poller_wake()): an event queued before a
		// publisher could see the flag is found there.
		atomic_store_explicit(&p->sleeping, true, memory_order_relaxed);
		rcu_read_lock();
		unsigned work = channel_arm(p->id, &timeout_ms);
		rcu_read_unlock();
		if (work == 0) {
			int n = epoll_wait(p->epfd, events, POLLER_MAX_EVENTS, timeout_ms);
			if (n < 0 && errno != EINTR)
				LOG(ERR, "poller %u: epoll_wait: %s", p->id, strerror(errno));
		}
		atomic_store_explicit(&p->sleeping, false, memory_order_relaxed);
		rcu_read_lock();
		channel_disarm(p->id);
		rcu_read_unlock();
	}

	rcu_unregister_thread();
	return NULL;
}

static int poller_init_one(struct poller *p, unsigned id) {
	struct epoll_event ev = {.events = EPOLLIN};

	p->id = id;
	atomic_init(&p->stop, false);
	p->req_mem = malloc(CHANNEL_REQ_BUF_SKEW + SHMCHAN_MSG_MAX);
	if (p->req_mem == NULL)
		return -ENOMEM;
	p->req_buf = p->req_mem + CHANNEL_REQ_BUF_SKEW;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0)
		return -errno;
	p->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->stop_fd < 0)
		return -errno;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->stop_fd, &ev) < 0)
		return -errno;
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->wake_fd < 0)
		return -errno;
	atomic_init(&p->sleeping, false);
	atomic_init(&p->wake_sent, false);
	ev.events = EPOLLIN | EPOLLET;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->wake_fd, &ev) < 0)
		return -errno;
	return 0;
}

static void poller_free_one(struct poller *p) {
	if (p->epfd > 0)
		close(p->epfd);
	if (p->stop_fd > 0)
		close(p->stop_fd);
	if (p->wake_fd > 0)
		close(p->wake_fd);
	free(p->req_mem);
	memset(p, 0, sizeof(*p));
}

int poller_start(unsigned n, unsigned spin_us) {
	int ret;

	if (n == 0 || n > GR_API_SERVER_MAX_POLLERS)
		return -EINVAL;
	spin_cycles = rte_get_tsc_hz() / 1000000 * spin_us;
	burst_cycles = rte_get_tsc_hz() * POLLER_BURST_NS / 1000000000;
	if (burst_cycles > spin_cycles)
		burst_cycles = spin_cycles;

	for (unsigned i = 0; i < n; i++) {
		struct poller *p = &pollers[i];

		ret = poller_init_one(p, i);
		if (ret < 0) {
			LOG(ERR, "poller %u: %s", i, strerror(-ret));
			poller_free_one(p);
			goto fail;
		}
		ret = -pthread_create(&p->thread, NULL, poller_main, p);
		if (ret < 0) {
			LOG(ERR, "poller %u: pthread_create: %s", i, strerror(-ret));
			poller_free_one(p);
			goto fail;
		}
		n_pollers = i + 1;
	}
	if (server_conf.poller_nice == GR_API_SERVER_NICE_OFF)
		LOG(INFO, "%u poller(s), spin budget %u us, the daemon's nice", n, spin_us);
	else
		LOG(INFO,
		    "%u poller(s), spin budget %u us, nice %d",
		    n,
		    spin_us,
		    server_conf.poller_nice);
	return 0;
fail:
	poller_stop();
	return ret;
}

void poller_stop(void) {
	for (unsigned i = 0; i < n_pollers; i++) {
		struct poller *p = &pollers[i];
		uint64_t one = 1;

		atomic_store_explicit(&p->stop, true, memory_order_relaxed);
		if (write(p->stop_fd, &one, sizeof(one)) < 0)
			LOG(ERR, "poller %u: wake for stop: %s", i, strerror(errno));
	}
	for (unsigned i = 0; i < n_pollers; i++) {
		pthread_join(pollers[i].thread, NULL);
		poller_free_one(&pollers[i]);
	}
	n_pollers = 0;
	atomic_store_explicit(&server_state.poller0_tid, 0, memory_order_release);
}
