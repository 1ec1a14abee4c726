// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "poller.h"
#include "channel_priv.h"
#include "config.h"
#include "poller_load.h"
#include "poller_nice.h"
#include "poller_spin.h"

#include <shmchan_probes.h>

#include <rte_cycles.h>
#include <rte_pause.h>
#include <shmchan.h>
#define URCU_INLINE_SMALL_FUNCTIONS // see channel_serve.c
#include <urcu.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
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
	// How busy the CPUs were at the last look (poller_load.h), in TSC
	// cycles.
	struct poller_load load;
	// Its nice value by its clients (poller_nice.h), in TSC cycles; off
	// with --poller-nice off. Poller thread only.
	struct poller_nice nice;
	bool nice_on;
};

static struct poller pollers[GR_API_SERVER_MAX_POLLERS];
static unsigned n_pollers;
static uint64_t spin_cycles;
// The burst window (poller_spin.h), at most the spin budget.
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

// What the kernel's sched_setattr() takes (linux/sched/types.h, which
// glibc 2.36 does not wrap): its first 48 bytes, the fields every kernel
// since 3.14 knows.
struct poller_sched_attr {
	uint32_t size;
	uint32_t policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime;
	uint64_t deadline;
	uint64_t period;
};

// The slice a poller asks the scheduler for: the shortest it grants
// (100 us, since Linux 6.12; older kernels take the request and ignore it).
// A task with a shorter slice than the one running where it wakes may take
// that CPU at once, and a poller woken by a doorbell has a request waiting:
// with a slice of its own it needs no more weight than its work gives it
// to answer before the task it woke behind has used its own.
#define POLLER_SLICE_NS 100000ull

// Give the calling poller thread nice, and the short slice, keeping its
// policy. Returns 0 or -errno (the nice value was refused).
static int poller_sched_set(int32_t nice, bool slice) {
	// On Linux the nice value is the thread's: PRIO_PROCESS with a
	// thread id sets that thread's alone.
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), nice) < 0)
		return -errno;
	if (!slice)
		return 0;
	struct poller_sched_attr attr = {
		.size = sizeof(attr),
		.policy = SCHED_OTHER,
		.nice = nice,
		.runtime = POLLER_SLICE_NS,
	};
	// Only a thread of the normal policy: one an application made real-time
	// keeps what it has. A kernel or a sandbox without it leaves the slice
	// as it was: nothing else depends on it.
	if (sched_getscheduler(0) == SCHED_OTHER && syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
		LOG(DEBUG, "poller: no slice of its own: %s", strerror(errno));
	return 0;
}

// The calling poller could not take nice value want (err, a -errno): it
// keeps was for good (poller_nice_failed()), and the log and shmchanctl
// info say so. The daemon still serves, only slower on CPUs it shares.
static void poller_nice_refused(struct poller *p, int32_t want, int32_t was, int err) {
	LOG(WARNING,
	    "poller %u: cannot take nice %d (%s; needs CAP_SYS_NICE or RLIMIT_NICE): it keeps "
	    "%d, and shares its CPU with spinning clients at that weight",
	    p->id,
	    want,
	    strerror(-err),
	    was);
	poller_nice_failed(&p->nice, was);
	atomic_store_explicit(&server_state.poller_nice_denied, true, memory_order_relaxed);
}

// The calling poller's nice value from its start (config.c: a server must
// not lose its CPUs to the clients that spin waiting for it, nor take them
// from anyone else): the value for one client, then what its clients ask
// for each period (poller_nice_period()). Without the right to, the thread
// keeps the process's (poller_nice_refused()).
static void poller_nice_start(struct poller *p, uint64_t now) {
	int32_t floor = server_conf.poller_nice;

	p->nice_on = floor != GR_API_SERVER_NICE_OFF;
	if (!p->nice_on)
		return;
	errno = 0;
	int base = getpriority(PRIO_PROCESS, (id_t)gettid());
	if (base == -1 && errno != 0)
		base = 0;
	uint64_t period = rte_get_tsc_hz() * POLLER_NICE_PERIOD_NS / 1000000000;
	int32_t want = poller_nice_init(&p->nice, period, now, base, floor);
	int ret = poller_sched_set(want, true);
	if (ret < 0) {
		poller_nice_refused(p, want, base, ret);
		return;
	}
	LOG(DEBUG, "poller %u: nice %d (down to %d with more clients)", p->id, want, floor);
}

// A period of the poller's nice value ended at now, with work: the value
// for the clients that had work in it (poller_nice.h).
static void poller_nice_period(struct poller *p, uint64_t now) {
	unsigned clients = channel_clients_counted(p->id);
	int32_t was = p->nice.now;
	int32_t want = poller_nice_work(&p->nice, now, clients);

	if (want == POLLER_NICE_KEEP)
		return;
	SHMCHAN_PROBE(poller_nice, p->id, clients, want);
	int ret = poller_sched_set(want, false);
	if (ret < 0)
		poller_nice_refused(p, want, was, ret);
}

// The CPU the calling poller runs on, and tell its clients when it changed
// (after it migrated while spinning). sched_getcpu() reads the rseq area
// glibc registered (or the vDSO): no system call.
static int poller_cpu_update(const struct poller *p, int cpu) {
	int now = sched_getcpu();

	if (now != cpu)
		channel_cpu_publish(p->id, now);
	return now;
}

// Move the calling poller off CPU cpu, to the other CPUs it may run on: its
// affinity (what the application or EAL's -l gave it) less that CPU, then
// that affinity back. The kernel moves a thread at once when its CPU leaves
// its mask, and leaves it where it is when the mask grows again. Returns
// the CPU it runs on now, or -1 when it may run on no other (it stays).
static int poller_move_off(int cpu) {
	cpu_set_t allowed, others;

	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -1;
	others = allowed;
	CPU_CLR(cpu, &others);
	if (CPU_COUNT(&others) == 0 || sched_setaffinity(0, sizeof(others), &others) < 0)
		return -1;
	if (sched_setaffinity(0, sizeof(allowed), &allowed) < 0)
		LOG(ERR, "cannot give a poller its CPUs back: %s", strerror(errno));
	return sched_getcpu();
}

// Move the calling poller to CPU cpu (its client's), if its affinity allows
// it: that CPU alone, then the affinity back, as poller_move_off(). Returns
// the CPU it runs on now, or -1 when it may not run there (it stays).
static int poller_move_to(int cpu) {
	cpu_set_t allowed, target;

	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) < 0 ||
	    !CPU_ISSET(cpu, &allowed))
		return -1;
	CPU_ZERO(&target);
	CPU_SET(cpu, &target);
	if (sched_setaffinity(0, sizeof(target), &target) < 0)
		return -1;
	if (sched_setaffinity(0, sizeof(allowed), &allowed) < 0)
		LOG(ERR, "cannot give a poller its CPUs back: %s", strerror(errno));
	return sched_getcpu();
}

// /proc/loadavg, opened once for every poller (poller_load.h).
static int loadavg_fd = -1;

// What the client of the channel that worked last (owner false) or of the
// window's owner says, as the spin policy wants it. Returns false when
// there is none (poller_spin_look() then stops). In a read-side section.
static bool poller_peer(
	const struct poller *p,
	int cpu,
	bool owner,
	struct poller_spin_peer *peer,
	int *peer_cpu
) {
	struct shmchan_peer hint;

	if (!channel_spin_peer(p->id, owner, owner, &hint))
		return false;
	*peer = (struct poller_spin_peer){
		.here = cpu >= 0 && hint.cpu == cpu,
		.cpu_known = hint.cpu >= 0,
		.sleeping = hint.sleeping,
		.in_loop = hint.in_loop,
		.taken = hint.taken,
		.all_taken = hint.all_taken,
	};
	*peer_cpu = hint.cpu;
	return true;
}

// One read-side section of passes over the channels, up to
// POLLER_PASSES_PER_LOCK of them: until one moves messages (the spin policy
// hears of it), or the policy says to sleep. Returns true to sleep.
static bool poller_passes(struct poller *p, struct poller_spin *spin, int *cpu) {
	struct poller_spin_peer peer;
	bool sleep = false;
	int peer_cpu = -1;

	rcu_read_lock();
	for (unsigned pass = 0; pass < POLLER_PASSES_PER_LOCK; pass++) {
		if (channel_poll(p->id, p->req_buf) > 0) {
			uint64_t now = rte_rdtsc();

			poller_load_worked(&p->load, now);

			*cpu = poller_cpu_update(p, *cpu);
			// A channel whose client has no say (none recorded) is
			// taken as one whose client runs elsewhere, as before
			// clients said where they run.
			if (!poller_peer(p, *cpu, false, &peer, &peer_cpu))
				peer = (struct poller_spin_peer){0};
			if (poller_spin_asks_cpus(spin, now, &peer))
				peer.cpus_busy = poller_load_busy(&p->load, now);
			enum poller_spin_work w = poller_spin_work(spin, now, &peer);
			if (w == POLLER_WORK_MOVE) {
				uint64_t before = rte_rdtsc();
				int moved = poller_move_off(*cpu);
				uint64_t after = rte_rdtsc();

				poller_spin_moved(spin, after, after - before, moved >= 0);
				if (moved >= 0) {
					*cpu = poller_cpu_update(p, *cpu);
					peer.here = false;
				}
				w = poller_spin_work(spin, after, &peer);
			} else if (w == POLLER_WORK_JOIN) {
				uint64_t before = rte_rdtsc();
				int joined = poller_move_to(peer_cpu);
				uint64_t after = rte_rdtsc();

				poller_spin_joined(spin, after, after - before, joined >= 0);
				if (joined >= 0) {
					*cpu = poller_cpu_update(p, *cpu);
					peer.here = *cpu == peer_cpu;
				}
				w = poller_spin_work(spin, after, &peer);
			}
			if (w == POLLER_WORK_OWNS)
				channel_spin_own(p->id);
			// After the work: its answers are in their rings.
			if (p->nice_on && poller_nice_due(&p->nice, now))
				poller_nice_period(p, now);
			break;
		}
		// The clock on the first empty pass after work (a wake-up that
		// found nothing sleeps again at once), then every
		// POLLER_CLOCK_EVERY passes.
		if (pass % POLLER_CLOCK_EVERY == 0) {
			uint64_t now = rte_rdtsc();
			enum poller_spin_next next = poller_spin_idle(spin, now);

			if (next == POLLER_SPIN_LOOK) {
				*cpu = poller_cpu_update(p, *cpu);
				bool known = poller_peer(p, *cpu, true, &peer, &peer_cpu);
				if (!poller_spin_look(spin, now, known ? &peer : NULL))
					next = POLLER_SPIN_SLEEP;
			}
			if (next == POLLER_SPIN_SLEEP) {
				sleep = true;
				break;
			}
		}
		rte_pause();
	}
	rcu_read_unlock();
	return sleep;
}

// Look at the host's CPUs and tell every client of the poller (the host
// hint, poller_load.h), in a sleep's timeout: nothing else to do.
static void poller_host_tell(struct poller *p, uint64_t now) {
	struct timespec ts;
	bool busy = poller_load_busy(&p->load, now);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	rcu_read_lock();
	channel_host_publish(p->id, shmchan_host_word(ms, busy));
	rcu_read_unlock();
	p->load.told = now;
}

static void *poller_main(void *arg) {
	struct epoll_event events[POLLER_MAX_EVENTS];
	struct poller *p = arg;
	struct poller_spin spin;
	char name[16];
	int cpu;

	server_thread_mark();
	snprintf(name, sizeof(name), "shmchan-poll%u", p->id);
	pthread_setname_np(pthread_self(), name);
	poller_nice_start(p, rte_rdtsc());
	channel_clients_counted(p->id);
	if (p->id == 0)
		atomic_store_explicit(
			&server_state.poller0_tid,
			(int)gettid(),
			memory_order_release
		);
	rcu_register_thread();
	poller_spin_init(&spin, spin_cycles, burst_cycles);
	cpu = sched_getcpu();

	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		int timeout_ms;

		if (!poller_passes(p, &spin, &cpu))
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
			timeout_ms = poller_load_sleep_ms(&p->load, rte_rdtsc(), timeout_ms);
			SHMCHAN_PROBE(poller_sleep, p->id, timeout_ms);
			int n = epoll_wait(p->epfd, events, POLLER_MAX_EVENTS, timeout_ms);
			SHMCHAN_PROBE(poller_wake, p->id, n);
			if (n < 0 && errno != EINTR)
				LOG(ERR, "poller %u: epoll_wait: %s", p->id, strerror(errno));
			uint64_t now = rte_rdtsc();
			// Woken by the timeout alone: no client waits on us.
			if (n == 0 && poller_load_tell_due(&p->load, now))
				poller_host_tell(p, now);
		}
		atomic_store_explicit(&p->sleeping, false, memory_order_relaxed);
		// Where we woke up: the scheduler may have moved us while we slept.
		cpu = sched_getcpu();
		rcu_read_lock();
		channel_disarm(p->id, cpu);
		rcu_read_unlock();
	}

	LOG(DEBUG,
	    "poller %u: spin stops: here %" PRIu64 ", stalled %" PRIu64 ", thinking %" PRIu64
	    ", descheduled %" PRIu64 ", gone %" PRIu64 "; moves %" PRIu64 ", joins %" PRIu64
	    "; rtt %" PRIu64 ", turn %" PRIu64 " cycles",
	    p->id,
	    spin.stops[POLLER_STOP_HERE],
	    spin.stops[POLLER_STOP_STALLED],
	    spin.stops[POLLER_STOP_THINKING],
	    spin.stops[POLLER_STOP_DESCHEDULED],
	    spin.stops[POLLER_STOP_GONE],
	    spin.moves,
	    spin.joins,
	    spin.rtt,
	    spin.turn);
	if (p->nice_on)
		LOG(DEBUG,
		    "poller %u: nice %d at the end, %" PRIu64 " changes",
		    p->id,
		    p->nice.now,
		    p->nice.changes);
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
	atomic_store_explicit(&server_state.poller_nice_denied, false, memory_order_relaxed);
	if (loadavg_fd < 0) {
		loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
		if (loadavg_fd < 0)
			LOG(INFO,
			    "/proc/loadavg: %s: a poller will not spin for a client it woke",
			    strerror(errno));
	}
	spin_cycles = rte_get_tsc_hz() / 1000000 * spin_us;
	burst_cycles = rte_get_tsc_hz() * POLLER_BURST_NS / 1000000000;
	if (burst_cycles > spin_cycles)
		burst_cycles = spin_cycles;

	for (unsigned i = 0; i < n; i++) {
		struct poller *p = &pollers[i];

		ret = poller_init_one(p, i);
		p->load = (struct poller_load){
			.fd = loadavg_fd,
			.cpus = sysconf(_SC_NPROCESSORS_ONLN),
			.period = rte_get_tsc_hz() * POLLER_CPUS_CHECK_NS / 1000000000,
			// By the millisecond: seconds of cycles overflow as nanoseconds.
			.tell_period = rte_get_tsc_hz() / 1000 * (POLLER_HOST_TELL_NS / 1000000),
			.keep = rte_get_tsc_hz() / 1000 * (POLLER_HOST_KEEP_NS / 1000000),
			.defer = rte_get_tsc_hz() / 1000 * (POLLER_HOST_DEFER_NS / 1000000),
			.per_ms = rte_get_tsc_hz() / 1000,
		};
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
		LOG(INFO, "%u poller(s), spin budget %u us, the process's nice", n, spin_us);
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
	if (loadavg_fd >= 0) {
		close(loadavg_fd);
		loadavg_fd = -1;
	}
}
