// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK secondary killed while it holds one of DPDK's shared locks. Each is
// a spinning rwlock in the EAL's shared memory config: nothing releases it
// when its holder dies.
//  memzone   the memzone lock, which rte_memzone_lookup(), rte_memzone_walk()
//            and EAL init take, and rte_memzone_reserve() and
//            rte_memzone_free() take for writing. The victim enters
//            rte_memzone_walk() and is killed inside its callback, as a
//            client killed inside rte_memzone_lookup() during its attach
//            would be. No later secondary can start (DPDK's own EAL init
//            waits on that lock for ever).
//  hotplug   the memory hotplug lock, which a secondary's EAL init holds for
//            reading from its memory init until its heap is set up, and the
//            daemon's rte_eal_cleanup() takes for writing. The victim is
//            killed inside its own rte_eal_init(), in its flock() of a memseg
//            list's file (fbarray_memseg-*), which EAL takes in that span;
//            the lock's word, read from the daemon's shared config, shows the
//            dead reader.
//
// The daemon, and every client already there, must not care:
//  1. a secondary attached before the death disconnects: the daemon frees
//     its channel;
//  2. GR_SHM_STATS is still answered, over the socket;
//  3. a new memfd channel client is served;
//  4. a secondary whose EAL init was done before the death attaches a new
//     memzone channel and is served;
//  5. the daemon stops on SIGTERM within 5 s and leaves no file
//     (test/daemon_stop_dead_secondary.sh checks it).
// Each step is bounded by STEP_BOUND_MS: a daemon that waits on the dead
// lock fails the step that waits on it.
//
// usage: shm_secondary_dead_lock SOCK memzone|hotplug (against a daemon
// with --hugepages on)

#include "check.h"
#include "eal_memcfg.h"
#include "raw_sock.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <rte_memzone.h>

#include <dlfcn.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

// A daemon that does not wait on DPDK's locks answers in milliseconds; a
// loaded machine may take some more. Waiting on the dead lock is for ever.
#define STEP_BOUND_MS 3000
// Bound of a secondary's EAL init.
#define EAL_INIT_BOUND_MS 10000
// Requests each served client checks.
#define CALLS 200
// Let the daemon's grace period pass (milliseconds) before the next step.
#define GRACE_WAIT_US 200000
// The file of a memseg list that a secondary's EAL init locks (EAL 22.11's
// fbarray_<name>, the lists named memseg-<page size>-<list>-<socket>).
#define MEMSEG_FBARRAY_PREFIX "fbarray_memseg-"

static const char *sock_path;

// A forked helper: its pid, and the two ends of its pipes.
struct helper {
	pid_t pid;
	int from; // the helper writes one byte per step it reached
	int to; // the parent writes one byte to let it go on
};

static struct helper helpers[4];
static unsigned n_helpers;

static void say(int fd, char what) {
	CHECK(write(fd, &what, 1) == 1, "helper: write: %s", strerror(errno));
}

static void wait_go(int fd) {
	char byte;
	CHECK(read(fd, &byte, 1) == 1, "helper: the parent went away");
}

typedef void (*helper_func)(int to_parent, int from_parent);

static struct helper *helper_start(helper_func run) {
	int up[2], down[2];

	CHECK(n_helpers < sizeof(helpers) / sizeof(helpers[0]), "too many helpers");
	CHECK(pipe(up) == 0 && pipe(down) == 0, "pipe: %s", strerror(errno));
	pid_t pid = child_fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		run(up[1], down[0]);
		exit(EXIT_SUCCESS);
	}
	close(up[1]);
	close(down[0]);
	struct helper *h = &helpers[n_helpers++];
	*h = (struct helper){.pid = pid, .from = up[0], .to = down[1]};
	return h;
}

// Wait up to ms for the helper to say want. Returns false on timeout.
static bool helper_says(struct helper *h, char want, unsigned ms, const char *what) {
	struct pollfd pfd = {.fd = h->from, .events = POLLIN};
	char byte;

	int n = poll(&pfd, 1, (int)ms);
	CHECK(n >= 0, "poll: %s", strerror(errno));
	if (n == 0)
		return false;
	CHECK(read(h->from, &byte, 1) == 1, "%s: the helper ended (its message is above)", what);
	CHECK(byte == want, "%s: the helper said '%c', expected '%c'", what, byte, want);
	return true;
}

static void helper_reap(struct helper *h, const char *what) {
	int status = child_reap(h->pid);

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s: the helper ended with status %#x",
	      what,
	      status);
}

// A secondary on a memzone channel: 'a' once attached and served, then on
// 'go' it disconnects and says 'd'.
static void attached_secondary(int up, int down) {
	secondary_eal_init(sock_path);
	struct gr_api_client *c = secondary_connect(sock_path, GR_API_TRANSPORT_SHM, "attached");
	CHECK(secondary_channel_list(c, getpid(), NULL) == GR_SHM_BACKING_MEMZONE,
	      "attached: not on a memzone channel");
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, CALLS);
	say(up, 'a');
	wait_go(down);
	CHECK(gr_api_client_disconnect(c) == 0, "attached: disconnect: %s", strerror(errno));
	say(up, 'd');
}

// A secondary that says 'i' once its EAL init is done, then on 'go' attaches
// a memzone channel, is served, disconnects and says 's'.
static void late_secondary(int up, int down) {
	secondary_eal_init(sock_path);
	say(up, 'i');
	wait_go(down);
	struct gr_api_client *c = secondary_connect(sock_path, GR_API_TRANSPORT_SHM, "late");
	CHECK(secondary_channel_list(c, getpid(), NULL) == GR_SHM_BACKING_MEMZONE,
	      "late: not on a memzone channel");
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, CALLS);
	CHECK(gr_api_client_disconnect(c) == 0, "late: disconnect: %s", strerror(errno));
	say(up, 's');
}

static int victim_up = -1;

// Say that the victim holds the lock it was sent to die in, and wait to die.
static void victim_holds_lock(void) {
	say(victim_up, 'h');
	for (;;)
		pause();
}

// Called with the memzone lock held for reading.
static void victim_in_memzone_walk(const struct rte_memzone *mz, void *arg) {
	(void)mz;
	(void)arg;
	victim_holds_lock();
}

// The memzone victim: it needs one memzone to walk over (the attached
// secondary's).
static void memzone_victim(int up, int down) {
	(void)down;
	victim_up = up;
	secondary_eal_init(sock_path);
	rte_memzone_walk(victim_in_memzone_walk, NULL);
	CHECK(false, "victim: no memzone to walk over");
}

// Set in the hotplug victim: its next flock() of a memseg list's file is
// where it dies.
static volatile bool victim_dies_in_flock;

// Whether fd is a file whose name starts with prefix.
static bool fd_named(int fd, const char *prefix) {
	char link[64], path[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return false;
	path[n] = '\0';
	base = strrchr(path, '/');
	return base != NULL && strncmp(base + 1, prefix, strlen(prefix)) == 0;
}

// Every flock() of this program, EAL's included: EAL calls it through the
// dynamic linker, which finds this one first.
int flock(int fd, int operation) {
	static int (*next_flock)(int, int);

	if (victim_dies_in_flock && fd_named(fd, MEMSEG_FBARRAY_PREFIX))
		victim_holds_lock();
	if (next_flock == NULL)
		next_flock = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
	return next_flock(fd, operation);
}

// The hotplug victim: it dies inside its EAL init.
static void hotplug_victim(int up, int down) {
	(void)down;
	victim_up = up;
	victim_dies_in_flock = true;
	secondary_eal_init(sock_path);
	CHECK(false, "victim: EAL init locked no memseg list's file");
}

// The word of the daemon's memory hotplug lock, read from its shared config
// (its runtime folder, where EAL 22.11 puts it for this user).
static int32_t hotplug_lock_word(void) {
	struct gr_shm_daemon_info info;
	struct eal_memcfg cfg;
	char dir[PATH_MAX];
	const char *base = "/var/run";
	int32_t word;

	secondary_daemon_info(sock_path, &info);
	if (getuid() != 0)
		base = getenv("XDG_RUNTIME_DIR") != NULL ? getenv("XDG_RUNTIME_DIR") : "/tmp";
	snprintf(dir, sizeof(dir), "%s/dpdk/%s", base, info.file_prefix);
	int ret = eal_memcfg_map(dir, &cfg);
	CHECK(ret == 0, "%s/config: %s", dir, strerror(-ret));
	// Through a volatile pointer, not __atomic_load_n(): GCC 12's link-time
	// optimiser takes the builtin for a write into a region it sizes as 0.
	word = *(volatile int32_t *)&eal_memcfg_hotplug_lock(&cfg)->cnt;
	eal_memcfg_close(&cfg);
	return word;
}

// A client of a memfd channel, served: says 's'.
static void memfd_client(int up, int down) {
	(void)down;
	struct gr_api_client *c = secondary_connect(sock_path, GR_API_TRANSPORT_SHM, "memfd");
	CHECK(secondary_channel_list(c, getpid(), NULL) == GR_SHM_BACKING_MEMFD,
	      "memfd: not on a memfd channel");
	secondary_pipeline(c, GR_PING2, GR_PING2_LEN, CALLS);
	CHECK(gr_api_client_disconnect(c) == 0, "memfd: disconnect: %s", strerror(errno));
	say(up, 's');
}

// GR_SHM_STATS over a raw connection, each receive bounded.
static void stats_answered(const char *when) {
	struct gr_shm_stats_resp st;
	struct gr_api_response resp;
	int fd = raw_connect(sock_path);

	raw_set_timeout(fd, STEP_BOUND_MS);
	raw_hello(fd, 1);
	CHECK(raw_send_request(fd, 2, GR_SHM_STATS, 0, NULL, 0) == 0, "stats: connection closed");
	int ret = raw_recv_response(fd, &resp, &st, sizeof(st));
	CHECK(ret == 1,
	      "%s: GR_SHM_STATS not answered within %d ms: the daemon waits on the dead"
	      " secondary's lock",
	      when,
	      STEP_BOUND_MS);
	CHECK(resp.status == 0, "%s: GR_SHM_STATS: status %u", when, resp.status);
	printf("%s: GR_SHM_STATS answered (%u channels, %u memzones): ok\n",
	       when,
	       st.channels,
	       st.memzones);
	close(fd);
}

int main(int argc, char **argv) {
	CHECK(argc == 3 && (strcmp(argv[2], "memzone") == 0 || strcmp(argv[2], "hotplug") == 0),
	      "usage: %s SOCK memzone|hotplug",
	      argv[0]);
	sock_path = argv[1];
	bool hotplug = strcmp(argv[2], "hotplug") == 0;
	watchdog_start(TEST_WATCHDOG_S);
	// No helper outlives the test: the victim would pause for ever.
	children_guard();

	struct helper *attached = helper_start(attached_secondary);
	CHECK(helper_says(attached, 'a', EAL_INIT_BOUND_MS, "attached secondary"),
	      "the first secondary was not served within %d ms",
	      EAL_INIT_BOUND_MS);
	struct helper *late = helper_start(late_secondary);
	CHECK(helper_says(late, 'i', EAL_INIT_BOUND_MS, "late secondary"),
	      "the second secondary did not init EAL within %d ms",
	      EAL_INIT_BOUND_MS);

	struct helper *v = helper_start(hotplug ? hotplug_victim : memzone_victim);
	CHECK(helper_says(v, 'h', EAL_INIT_BOUND_MS, "victim"),
	      "the victim did not take the %s lock within %d ms",
	      argv[2],
	      EAL_INIT_BOUND_MS);
	child_kill(v->pid);
	if (hotplug) {
		int32_t word = hotplug_lock_word();
		CHECK(word >= RTE_RWLOCK_READ,
		      "the memory hotplug lock's word is %#x after the victim's death: it held no"
		      " read lock",
		      (unsigned)word);
		printf("a secondary died inside its EAL init, holding DPDK's memory hotplug lock"
		       " (word %#x)\n",
		       (unsigned)word);
	} else {
		printf("a secondary died holding DPDK's memzone lock\n");
	}
	stats_answered("after the death");

	say(attached->to, 'g');
	CHECK(helper_says(attached, 'd', STEP_BOUND_MS, "attached secondary"),
	      "the attached secondary did not disconnect within %d ms",
	      STEP_BOUND_MS);
	helper_reap(attached, "attached secondary");
	usleep(GRACE_WAIT_US);
	stats_answered("after a memzone channel was freed");

	struct helper *m = helper_start(memfd_client);
	CHECK(helper_says(m, 's', STEP_BOUND_MS, "memfd client"),
	      "a new memfd channel client was not served within %d ms",
	      STEP_BOUND_MS);
	helper_reap(m, "memfd client");
	printf("a new memfd channel client is served: ok\n");

	say(late->to, 'g');
	CHECK(helper_says(late, 's', STEP_BOUND_MS, "late secondary"),
	      "a secondary initialised before the death was not served a new memzone channel"
	      " within %d ms",
	      STEP_BOUND_MS);
	helper_reap(late, "late secondary");
	printf("a new memzone channel of a secondary initialised before: ok\n");
	stats_answered("at the end");
	return EXIT_SUCCESS;
}
