// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The programs of test/crash_soak.sh: healthy clients that must never see an
// error, and a churn of short-lived clients on every transport killed with
// SIGKILL at random moments, after which the daemon's resources must be back
// to where they were.
//
// healthy SOCK socket|memfd|memzone
//   One client on that transport (memzone: a DPDK secondary of the daemon)
//   keeping pipelined GR_PING2 requests in flight, every echo checked, until
//   SIGTERM. It prints "ready" once served, and at the end the echoes it
//   checked. Any error, or no echo for SOAK_STALL_MS, fails it at once.
//
// churn SOCK SECONDS
//   SOAK_SLOTS children at a time, each on the transport of its slot, each
//   killed SOAK_KILL_MAX_US at most after it started: before, during or after
//   its connect, hello and attach. A DPDK secondary is killed only once it
//   attached its memzone channel: DPDK's shared locks (the memzone lock that
//   EAL init and rte_memzone_lookup() take) do not survive the death of their
//   holder, and test/shm_secondary_dead_lock.c covers that case on purpose
//   (docs/reliability.md).
//   First a warm-up; then the daemon's baseline: open fds (/proc/PID/fd),
//   threads (/proc/PID/task), VmRSS (/proc/PID/status), channels and
//   memzones (GR_SHM_STATS). Then SECONDS of churn, then a bounded wait for
//   the daemon to come back to its baseline: fds, threads, channels and
//   memzones exactly, VmRSS within SOAK_RSS_SLACK_KB (not checked under
//   AddressSanitizer, whose quarantine keeps freed memory). Every child must
//   die of the kill, never of an error of its own; no kill may count as a
//   corrupt or slow detach.

#include "check.h"
#include "ping2_load.h"
#include "secondary.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_USEC 1000ull

// Requests in flight in each client: the ring stays busy, never full.
#define SOAK_DEPTH 8
// A healthy client with no echo for this long is stalled: the daemon let a
// crash hurt a client that did nothing wrong. The churn keeps both cores busy:
// leave room for scheduling delays of a loaded machine, no more.
#define SOAK_STALL_MS 2000
// Children alive at a time.
#define SOAK_SLOTS 4
// A child is killed 0 to this many microseconds after it started (after its
// attach for a secondary).
#define SOAK_KILL_MAX_US 5000
// Bound of a secondary's EAL init and attach (it maps the daemon's hugepages).
#define SOAK_EAL_INIT_MS 10000
// Warm-up before the baseline: the daemon's call_rcu thread, malloc arenas,
// EAL heap and memzone pages exist by then.
#define SOAK_WARMUP_MS 2000
// Kills the churn must reach, whatever its length.
#define SOAK_MIN_KILLS 200
// Bound of the daemon's cleanup after the last kill, and its polling period.
#define SOAK_SETTLE_MS 10000
// Hugepages EAL may map past the daemon's startup reservation for the DPDK
// heap that killed secondaries leak (about 60 KB each): 128 MB.
#define SOAK_HUGE_FDS_SLACK 64
#define SOAK_SETTLE_POLL_US 20000
// After the warm-up's channels are gone, their memory and fds are freed one
// RCU grace period later (milliseconds): wait this long before the baseline.
#define SOAK_QUIET_MS 200
// Growth of VmRSS allowed over the churn, after the warm-up.
#define SOAK_RSS_SLACK_KB (8 * 1024)
// Sleep of the churn loop when no kill is due sooner (a secondary's EAL init
// and attach are being waited for).
#define SOAK_IDLE_WAIT_US 1000

// What a child had reached when it was killed.
enum child_stage {
	STAGE_STARTED, // before or inside connect (hello, attach)
	STAGE_CONNECTED, // connected (and attached), load not yet answered
	STAGE_LOADED, // at least one echo checked
	STAGE_COUNT,
};

static const char *const stage_names[STAGE_COUNT] = {"connecting", "connected", "under load"};

// Shared with the children (MAP_SHARED | MAP_ANONYMOUS): each child writes its
// slot, the parent reads it at the kill.
struct slot_shared {
	_Atomic uint32_t stage;
	_Atomic uint64_t echoes;
};

struct slot {
	enum transport transport;
	pid_t pid; // 0: no child
	int ready_fd; // a secondary writes one byte here once attached, or -1
	uint64_t kill_at_ns; // 0: not armed yet (a secondary not attached yet)
	uint64_t eal_deadline_ns;
};

struct daemon_state {
	unsigned fds; // all but the hugepage files EAL maps
	unsigned huge_fds; // EAL's hugepage page files ("<prefix>map_<n>")
	unsigned threads;
	unsigned long rss_kb;
	struct gr_shm_stats_resp stats;
};

static const char *sock_path;
static pid_t daemon_pid;
static struct gr_api_client *ctl; // the churn's own control client, on the socket
static struct slot_shared *shared; // SOAK_SLOTS entries
static struct slot slots[SOAK_SLOTS];
static uint64_t kills[T_COUNT][STAGE_COUNT];

// ---- healthy ----

static enum transport transport_parse(const char *name) {
	for (int t = 0; t < T_COUNT; t++)
		if (strcmp(name, transport_names[t]) == 0)
			return (enum transport)t;
	CHECK(false, "transport '%s' is not socket, memfd or memzone", name);
	return T_COUNT;
}

static int healthy_main(enum transport t) {
	const char *name = transport_names[t];
	char who[32];

	ping2_load_stop_on_term();
	snprintf(who, sizeof(who), "healthy %s", name);
	if (t == T_MEMZONE)
		secondary_eal_init(sock_path);
	struct gr_api_client *c = secondary_connect_on(sock_path, t, "crash_soak healthy");
	secondary_expect_backing(c, t, who);
	printf("ready\n");
	fflush(stdout);

	uint64_t done = ping2_load_until_term(c, SOAK_DEPTH, SOAK_STALL_MS, who);
	CHECK(gr_api_client_disconnect(c) == 0, "disconnect: %s", strerror(errno));
	printf("healthy %s: %" PRIu64 " echoes checked\n", name, done);
	return EXIT_SUCCESS;
}

// ---- churn: the daemon's resources ----

// Call visit with each of the daemon's fds: its number and its target.
static void fd_walk(void (*visit)(const char *fd, const char *target, void *arg), void *arg) {
	char path[64], link[PATH_MAX], target[PATH_MAX];
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)daemon_pid);
	DIR *d = opendir(path);
	CHECK(d != NULL, "%s: %s", path, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		visit(e->d_name, target, arg);
	}
	closedir(d);
}

static void fd_count_one(const char *fd, const char *target, void *arg) {
	struct daemon_state *s = arg;

	(void)fd;
	if (strstr(target, "hugepages") != NULL && strstr(target, "map_") != NULL)
		s->huge_fds++;
	else
		s->fds++;
}

// Count the daemon's fds: EAL's hugepage page files apart. A DPDK secondary
// allocates from the shared DPDK heap in its EAL init and never frees it when
// it is killed (docs/reliability.md, finding 8): past the memory the daemon
// reserved at startup, EAL maps more pages, each with an fd. That growth is
// bounded by SOAK_HUGE_FDS_SLACK; every other fd must come back exactly.
static void fd_count(struct daemon_state *s) {
	s->fds = 0;
	s->huge_fds = 0;
	fd_walk(fd_count_one, s);
}

struct fd_text {
	char *buf;
	size_t len, cap;
};

static void fd_listing_one(const char *fd, const char *target, void *arg) {
	struct fd_text *t = arg;
	size_t need = strlen(fd) + strlen(target) + 6;

	if (t->len + need >= t->cap) {
		t->cap = (t->cap + need) * 2;
		t->buf = realloc(t->buf, t->cap);
		CHECK(t->buf != NULL, "out of memory");
	}
	t->len += (size_t)sprintf(t->buf + t->len, "%s -> %s\n", fd, target);
}

// The daemon's fds as "N -> target" lines, in a malloc'ed string.
static char *fd_listing(void) {
	struct fd_text t = {0};

	fd_walk(fd_listing_one, &t);
	return t.buf != NULL ? t.buf : strdup("");
}

// Print the lines of now that are not in base.
static void fd_listing_diff(const char *base, const char *now) {
	char line[2 * PATH_MAX];

	for (const char *p = now; *p != '\0';) {
		const char *end = strchr(p, '\n');
		size_t len = (size_t)(end - p) + 1;
		bool found = false;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		for (const char *q = base; !found && (q = strstr(q, line)) != NULL; q++)
			found = q == base || q[-1] == '\n';
		if (!found)
			printf("  new fd %s", line);
		p = end + 1;
	}
}

// A line "Key: value ..." of /proc/PID/status.
static unsigned long status_field(const char *key) {
	char path[64], line[256];
	unsigned long value = 0;
	size_t len = strlen(key);
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)daemon_pid);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			found = sscanf(line + len + 1, "%lu", &value) == 1;
	fclose(f);
	CHECK(found, "no %s in %s", key, path);
	return value;
}

// True if the daemon was built with AddressSanitizer (it maps libasan).
static bool daemon_has_asan(void) {
	char path[64], line[512];
	bool asan = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)daemon_pid);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "%s: %s", path, strerror(errno));
	while (!asan && fgets(line, sizeof(line), f) != NULL)
		asan = strstr(line, "libasan") != NULL;
	fclose(f);
	return asan;
}

static void daemon_state_get(struct daemon_state *s) {
	secondary_stats(ctl, &s->stats);
	fd_count(s);
	s->threads = proc_count_entries(daemon_pid, "task");
	s->rss_kb = status_field("VmRSS");
}

static void daemon_state_print(const char *when, const struct daemon_state *s) {
	printf("%s: %u fds (+%u hugepage files), %u threads, VmRSS %lu KiB, %u channels,"
	       " %u memzones; detaches %" PRIu64 " (lease %" PRIu64 ", corrupt %" PRIu64
	       ", slow %" PRIu64 ")\n",
	       when,
	       s->fds,
	       s->huge_fds,
	       s->threads,
	       s->rss_kb,
	       s->stats.channels,
	       s->stats.memzones,
	       s->stats.total.detaches,
	       s->stats.total.detach_lease,
	       s->stats.total.detach_corrupt,
	       s->stats.total.detach_slow);
	fflush(stdout);
}

// fds, threads, channels and memzones all equal; with channels_only, only
// channels and memzones.
static bool
same_resources(const struct daemon_state *a, const struct daemon_state *b, bool channels_only) {
	if (a->stats.channels != b->stats.channels || a->stats.memzones != b->stats.memzones)
		return false;
	return channels_only || (a->fds == b->fds && a->threads == b->threads &&
				 a->huge_fds <= b->huge_fds + SOAK_HUGE_FDS_SLACK);
}

// Poll until the daemon holds what want holds, at most SOAK_SETTLE_MS.
// Returns the last state in now.
static bool
daemon_settle(const struct daemon_state *want, bool channels_only, struct daemon_state *now) {
	uint64_t start = monotonic_ns();

	for (;;) {
		daemon_state_get(now);
		if (same_resources(now, want, channels_only))
			return true;
		if (monotonic_ns() - start > SOAK_SETTLE_MS * NSEC_PER_MSEC)
			return false;
		usleep(SOAK_SETTLE_POLL_US);
	}
}

// ---- churn: the children ----

static void __attribute__((noreturn)) child_run(enum transport t, unsigned slot, int ready_fd) {
	struct slot_shared *me = &shared[slot];

	if (t == T_MEMZONE)
		secondary_eal_init(sock_path);
	struct gr_api_client *c = secondary_connect_on(sock_path, t, "crash_soak churn");
	atomic_store(&me->stage, STAGE_CONNECTED);
	if (t == T_MEMZONE)
		CHECK(write(ready_fd, "r", 1) == 1, "child: write: %s", strerror(errno));
	// The load counts echoes in the shared slot; the first one marks the
	// child as under load.
	ping2_load_until_killed(c, SOAK_DEPTH, &me->echoes);
}

static uint64_t random_ns(uint64_t max_us) {
	return (uint64_t)random() % (max_us + 1) * NSEC_PER_USEC;
}

static void slot_spawn(struct slot *s, unsigned idx) {
	int pipe_fds[2] = {-1, -1};

	atomic_store(&shared[idx].stage, STAGE_STARTED);
	atomic_store(&shared[idx].echoes, 0);
	if (s->transport == T_MEMZONE)
		// Non-blocking: the churn loop polls it, and a secondary stuck in
		// its EAL init must fail the test, not hang it.
		CHECK(pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) == 0, "pipe: %s", strerror(errno));
	pid_t pid = child_fork();
	if (pid == 0) {
		if (pipe_fds[0] >= 0)
			close(pipe_fds[0]);
		child_run(s->transport, idx, pipe_fds[1]);
	}
	s->pid = pid;
	s->ready_fd = pipe_fds[0];
	if (pipe_fds[1] >= 0)
		close(pipe_fds[1]);
	uint64_t now = monotonic_ns();
	s->kill_at_ns = s->transport == T_MEMZONE ? 0 : now + random_ns(SOAK_KILL_MAX_US);
	s->eal_deadline_ns = now + SOAK_EAL_INIT_MS * NSEC_PER_MSEC;
}

// A secondary in its EAL init and attach: arm its kill once it is attached.
static void slot_check_ready(struct slot *s) {
	char byte;

	if (s->kill_at_ns != 0 || s->ready_fd < 0)
		return;
	ssize_t n = read(s->ready_fd, &byte, 1);
	if (n == 1) {
		s->kill_at_ns = monotonic_ns() + random_ns(SOAK_KILL_MAX_US);
		return;
	}
	CHECK(n < 0 && errno == EAGAIN,
	      "secondary %d ended before it attached (see its message above)",
	      (int)s->pid);
	if (monotonic_ns() < s->eal_deadline_ns)
		return;
	char path[64], wchan[64] = "?";
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)s->pid);
	FILE *f = fopen(path, "r");
	if (f != NULL) {
		if (fgets(wchan, sizeof(wchan), f) == NULL)
			snprintf(wchan, sizeof(wchan), "?");
		fclose(f);
	}
	CHECK(false,
	      "secondary %d: not attached within %d ms (it waits in %s)",
	      (int)s->pid,
	      SOAK_EAL_INIT_MS,
	      wchan);
}

static void slot_kill(struct slot *s, unsigned idx) {
	pid_t pid = s->pid;
	int status = child_kill(pid);

	s->pid = 0;
	// A child that exited on its own met an error (its message is above).
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "%s child %d ended with status %#x before it was killed",
	      transport_names[s->transport],
	      (int)pid,
	      status);
	uint32_t stage = atomic_load(&shared[idx].stage);
	if (stage == STAGE_CONNECTED && atomic_load(&shared[idx].echoes) > 0)
		stage = STAGE_LOADED;
	kills[s->transport][stage]++;
	if (s->ready_fd >= 0)
		close(s->ready_fd);
	s->ready_fd = -1;
}

// Run the churn for duration_ns: keep every slot busy with a child, kill
// each at its time. Ends with every child killed and reaped.
static void churn(uint64_t duration_ns) {
	uint64_t end = monotonic_ns() + duration_ns;

	for (;;) {
		uint64_t now = monotonic_ns();
		uint64_t next = now + SOAK_IDLE_WAIT_US * NSEC_PER_USEC;
		bool ending = now >= end, alive = false;

		for (unsigned i = 0; i < SOAK_SLOTS; i++) {
			struct slot *s = &slots[i];
			if (s->pid == 0 && !ending)
				slot_spawn(s, i);
			if (s->pid == 0)
				continue;
			// A secondary still attaching is waited for, even at the
			// end: killed inside DPDK's locks, it would wedge them.
			slot_check_ready(s);
			if (s->kill_at_ns != 0 && s->kill_at_ns <= now)
				slot_kill(s, i);
			else if (s->kill_at_ns != 0 && s->kill_at_ns < next)
				next = s->kill_at_ns;
			alive |= s->pid != 0;
		}
		if (ending && !alive)
			return;
		now = monotonic_ns();
		if (next > now) {
			struct timespec ts = {.tv_nsec = (long)(next - now)};
			nanosleep(&ts, NULL);
		}
	}
}

static uint64_t kills_total(void) {
	uint64_t n = 0;

	for (int t = 0; t < T_COUNT; t++)
		for (int st = 0; st < STAGE_COUNT; st++)
			n += kills[t][st];
	return n;
}

static int churn_main(unsigned seconds) {
	struct daemon_state pre, base, after;
	struct gr_shm_daemon_info info;

	// No churn child outlives the churn, however it ends.
	children_guard();
	secondary_daemon_info(sock_path, &info);
	daemon_pid = info.pid;
	bool memzone = (info.backings & GR_SHM_BACKING_MEMZONE) != 0;
	bool asan = daemon_has_asan();
	// Every transport, the cheap ones twice: a secondary's EAL init makes its
	// slot turn over about fifty times slower.
	const enum transport slot_transport[SOAK_SLOTS] = {
		T_SOCKET,
		T_MEMFD,
		memzone ? T_MEMZONE : T_SOCKET,
		T_MEMFD,
	};
	for (unsigned i = 0; i < SOAK_SLOTS; i++)
		slots[i] = (struct slot){.transport = slot_transport[i], .ready_fd = -1};
	shared =
		mmap(NULL,
		     SOAK_SLOTS * sizeof(*shared),
		     PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS,
		     -1,
		     0);
	CHECK(shared != MAP_FAILED, "mmap: %s", strerror(errno));
	unsigned seed = (unsigned)monotonic_ns();
	srandom(seed);
	printf("daemon pid %d, memzone channels %s, kill delay seed %u\n",
	       (int)daemon_pid,
	       memzone ? "offered" : "not offered (no hugepages)",
	       seed);

	ctl = secondary_connect_on(sock_path, T_SOCKET, "crash_soak control");
	daemon_state_get(&pre);
	daemon_state_print("before the warm-up", &pre);

	churn(SOAK_WARMUP_MS * NSEC_PER_MSEC);
	uint64_t warmup_kills = kills_total();
	memset(kills, 0, sizeof(kills));
	// Back to the channels and memzones of before; then the frees that follow
	// each detach by a grace period are done too.
	CHECK(daemon_settle(&pre, true, &base),
	      "after the warm-up the daemon holds %u channels and %u memzones, %u and %u before",
	      base.stats.channels,
	      base.stats.memzones,
	      pre.stats.channels,
	      pre.stats.memzones);
	usleep(SOAK_QUIET_MS * 1000);
	daemon_state_get(&base);
	char *base_fds = fd_listing();
	printf("warm-up: %" PRIu64 " kills\n", warmup_kills);
	daemon_state_print("baseline", &base);

	uint64_t start = monotonic_ns();
	churn((uint64_t)seconds * 1000 * NSEC_PER_MSEC);
	double took = (double)(monotonic_ns() - start) / 1e9;
	uint64_t total = kills_total();

	uint64_t settle_start = monotonic_ns();
	bool settled = daemon_settle(&base, false, &after);
	printf("churn: %" PRIu64 " kills in %.1f s (%.0f/s); daemon settled in %.1f ms\n",
	       total,
	       took,
	       (double)total / took,
	       (double)(monotonic_ns() - settle_start) / 1e6);
	for (int t = 0; t < T_COUNT; t++) {
		printf("  %-8s", transport_names[t]);
		for (int st = 0; st < STAGE_COUNT; st++)
			if (kills[t][st] > 0)
				printf(" %" PRIu64 " %s,", kills[t][st], stage_names[st]);
		printf("\n");
	}
	daemon_state_print("after the churn", &after);
	if (after.fds != base.fds) {
		char *now_fds = fd_listing();
		fd_listing_diff(base_fds, now_fds);
		free(now_fds);
	}
	free(base_fds);
	printf("VmRSS %+ld KiB over the baseline (bound %+d KiB%s)\n",
	       (long)after.rss_kb - (long)base.rss_kb,
	       SOAK_RSS_SLACK_KB,
	       asan ? ", not checked under AddressSanitizer" : "");

	CHECK(settled,
	      "the daemon did not come back to its baseline within %d ms (see above)",
	      SOAK_SETTLE_MS);
	CHECK(total >= SOAK_MIN_KILLS, "only %" PRIu64 " kills, want %d", total, SOAK_MIN_KILLS);
	for (unsigned i = 0; i < SOAK_SLOTS; i++) {
		enum transport t = slots[i].transport;
		CHECK(kills[t][STAGE_LOADED] > 0,
		      "no %s client was killed under load",
		      transport_names[t]);
	}
	if (!asan)
		CHECK(after.rss_kb <= base.rss_kb + SOAK_RSS_SLACK_KB,
		      "VmRSS grew by %lu KiB over the churn",
		      after.rss_kb - base.rss_kb);
	CHECK(after.stats.total.detach_corrupt == base.stats.total.detach_corrupt &&
		      after.stats.total.detach_slow == base.stats.total.detach_slow,
	      "killed clients were detached as corrupt or slow");
	CHECK(after.stats.total.detach_lease - base.stats.total.detach_lease >=
		      kills[T_MEMFD][STAGE_LOADED] + kills[T_MEMZONE][STAGE_LOADED],
	      "%" PRIu64 " lease detaches, fewer than the channel clients killed under load",
	      after.stats.total.detach_lease - base.stats.total.detach_lease);

	// The daemon still serves: the control client, and a fresh channel.
	long len = gr_api_client_send_recv_len(ctl, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "control GR_PING: %ld: %s", len, strerror(errno));
	struct gr_api_client *c = secondary_connect_on(sock_path, T_MEMFD, "crash_soak fresh");
	len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "fresh channel GR_PING: %ld: %s", len, strerror(errno));
	gr_api_client_disconnect(c);
	gr_api_client_disconnect(ctl);
	munmap(shared, SOAK_SLOTS * sizeof(*shared));
	return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
	CHECK(argc >= 3, "usage: %s healthy SOCK TRANSPORT | churn SOCK SECONDS", argv[0]);
	sock_path = argv[2];
	if (strcmp(argv[1], "healthy") == 0 && argc == 4)
		return healthy_main(transport_parse(argv[3]));
	CHECK(strcmp(argv[1], "churn") == 0 && argc == 4,
	      "usage: %s healthy SOCK TRANSPORT | churn SOCK SECONDS",
	      argv[0]);
	char *end;
	unsigned long seconds = strtoul(argv[3], &end, 10);
	CHECK(*end == '\0' && seconds > 0, "SECONDS '%s' is not a positive number", argv[3]);
	return churn_main((unsigned)seconds);
}
