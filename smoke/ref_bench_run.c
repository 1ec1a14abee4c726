// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench's run (ref_bench.h): what the tests need, made before the fork;
// the follower, pinned; the leader's timed loop, by count, by time or one
// operation after each --gap-us.

#include "ref_bench.h"

#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

// A timed run reads the clock once per CLOCK_CHECK_MASK + 1 operations: cheap,
// and stops within a few ms even at 128 KiB per operation.
#define CLOCK_CHECK_MASK 0x3f
#define NSEC_PER_USEC 1000ull
#define RING_SPSC (RING_F_SP_ENQ | RING_F_SC_DEQ)

uint8_t *frame_alloc(size_t bytes) {
	uint8_t *f = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(bytes, RTE_CACHE_LINE_SIZE));
	if (f == NULL)
		fail("%s", strerror(ENOMEM));
	return memset(f, 0, bytes);
}

void setup(struct ctx *c, const struct options *o) {
	ssize_t ring_size = rte_ring_get_memsize_elem(SHMCHAN_CELL_SIZE, SHMCHAN_RING_CELLS);
	if (ring_size < 0)
		fail("rte_ring_get_memsize_elem: %s", strerror((int)-ring_size));
	size_t head = RTE_ALIGN_CEIL(sizeof(struct shared), RTE_CACHE_LINE_SIZE);
	size_t ring_bytes = RTE_ALIGN_CEIL((size_t)ring_size, RTE_CACHE_LINE_SIZE);
	size_t region = head + 2 * ring_bytes;
	int fd = check(memfd_create("ref_bench", MFD_CLOEXEC), "memfd_create");
	check(ftruncate(fd, (off_t)region), "ftruncate");
	uint8_t *base = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		fail("mmap: %s", strerror(errno));
	close(fd);
	*c = (struct ctx){.o = o, .sh = (struct shared *)base};
	c->sh->stream_warmup = o->warmup;
	// No EAL: rte_ring_init() and the ring functions need none.
	c->req_ring = (struct rte_ring *)(base + head);
	c->resp_ring = (struct rte_ring *)(base + head + ring_bytes);
	int ret = rte_ring_init(c->req_ring, "ref_req", SHMCHAN_RING_CELLS, RING_SPSC);
	if (ret == 0)
		ret = rte_ring_init(c->resp_ring, "ref_resp", SHMCHAN_RING_CELLS, RING_SPSC);
	if (ret < 0)
		fail("rte_ring_init: %s", strerror(-ret));
	// A frame as the channel's: u32 length, request header, payload, zeros to whole cells.
	size_t msg = sizeof(struct gr_api_request) + o->size;
	struct gr_api_request hdr = {.id = 1, .type = GR_PING2, .payload_len = (uint32_t)o->size};
	c->cells = SHMCHAN_MSG_CELLS(msg);
	if (c->cells > SHMCHAN_RING_CELLS - 1)
		fail("-z %zu: a message of %u cells does not fit the ring", o->size, c->cells);
	// All the requests in flight, or their answers, may sit in one ring at once:
	// if they do not fit, both sides wait for room only the other can make.
	if ((uint64_t)o->depth * c->cells > SHMCHAN_RING_CELLS - 1)
		fail("--depth %u: %u messages of %u cells do not fit a ring of %u cells",
		     o->depth,
		     o->depth,
		     c->cells,
		     SHMCHAN_RING_CELLS - 1);
	size_t frame_bytes = (size_t)c->cells * SHMCHAN_CELL_SIZE;
	c->tx_frame = frame_alloc(frame_bytes);
	c->rx_frame = frame_alloc(frame_bytes);
	c->stop_frame = frame_alloc(frame_bytes);
	*(uint32_t *)c->tx_frame = (uint32_t)msg;
	memcpy(c->tx_frame + SHMCHAN_FRAME_HDR, &hdr, sizeof(hdr));
	payload_fill(c->tx_frame + SHMCHAN_FRAME_HDR + sizeof(hdr), o->size);
	c->efd_req = check(eventfd(0, EFD_CLOEXEC), "eventfd");
	c->efd_resp = check(eventfd(0, EFD_CLOEXEC), "eventfd");
	check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sock), "socketpair");
	c->msg_len = msg;
	c->msg = memcpy(frame_alloc(msg), c->tx_frame + SHMCHAN_FRAME_HDR, msg);
	shm_setup(c);
}

static void pin(int cpu) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		fail("sched_setaffinity to CPU %d: %s", cpu, strerror(errno));
}

// Set once the leader has told the follower to stop: its exit is expected.
static volatile sig_atomic_t follower_stopping;

// The follower ended before it was told to (killed, or failed and said why):
// the leader would wait for its answer for ever. Async-signal-safe; the exit
// status says it failed if the write does not.
static void follower_died(int sig) {
	static const char msg[] = "ref_bench: the follower ended during the run\n";
	(void)sig;
	if (!follower_stopping) {
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		_exit(EXIT_FAILURE);
	}
}

// Fork the follower, which runs the test's and exits; pin the leader.
static pid_t start_follower(struct ctx *c) {
	struct sigaction sa = {.sa_handler = follower_died};
	pid_t pid;
	// Before the fork: a follower that dies at once is caught too.
	check(sigaction(SIGCHLD, &sa, NULL), "sigaction");
	if ((pid = fork_peer()) > 0) {
		close(c->sock[1]);
		if (c->o->pin)
			pin(c->o->cpus[0]);
		return pid;
	}
	struct rusage ru;
	if (c->o->pin)
		pin(c->o->cpus[1]);
	close(c->sock[0]);
	c->sh->follower_ops = c->o->bench->follower(c);
	getrusage(RUSAGE_SELF, &ru);
	c->sh->follower_cpu_ns = rusage_cpu_ns(&ru);
	c->sh->follower_vcsw = (uint64_t)ru.ru_nvcsw;
	exit(EXIT_SUCCESS);
}

// --gap-us: sleep, then time one operation, until count operations or
// seconds of wall time (sleeps included).
static void gap_run(struct ctx *c, uint64_t start) {
	const struct options *o = c->o;
	uint64_t deadline = start + (uint64_t)(o->seconds * NSEC_PER_SEC);
	for (;;) {
		sleep_ns(o->gap_us * NSEC_PER_USEC);
		uint64_t t0 = now_ns();
		o->bench->leader_op(c);
		uint64_t t1 = now_ns();
		c->ops++;
		c->gap_op_ns += t1 - t0;
		if (t1 - t0 > c->gap_max_ns)
			c->gap_max_ns = t1 - t0;
		if (o->count > 0 ? c->ops >= o->count : t1 >= deadline)
			break;
	}
}

void run(struct ctx *c) {
	const struct options *o = c->o;
	const struct bench *b = o->bench;
	pid_t pid = b->follower != NULL ? start_follower(c) : -1;
	struct rusage before, after;
	int status;
	for (uint64_t i = 0; i < o->warmup; i++)
		b->leader_op(c);
	getrusage(RUSAGE_SELF, &before);
	uint64_t start = now_ns(), end, n = 0;
	if (o->gap_us > 0) {
		gap_run(c, start);
		n = c->ops;
		end = start + c->gap_op_ns;
	} else if (o->count > 0) {
		for (; n < o->count; n++)
			b->leader_op(c);
		end = now_ns();
	} else {
		uint64_t deadline = start + (uint64_t)(o->seconds * NSEC_PER_SEC);
		for (;;) {
			b->leader_op(c);
			n++;
			if ((n & CLOCK_CHECK_MASK) == 0 && (end = now_ns()) >= deadline)
				break;
		}
	}
	getrusage(RUSAGE_SELF, &after);
	c->ops = n;
	c->elapsed_ns = end - start;
	c->leader_cpu_ns = rusage_cpu_ns(&after) - rusage_cpu_ns(&before);
	c->leader_vcsw = (uint64_t)(after.ru_nvcsw - before.ru_nvcsw);
	if (pid < 0)
		return;
	follower_stopping = 1;
	b->leader_stop(c);
	if (waitpid(pid, &status, 0) < 0)
		fail("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail("the follower exited with status 0x%x", status);
	if (b->flags & STREAM) { // the consumer's steady rate, its warmup left out
		c->ops = c->sh->follower_ops - c->sh->stream_warmup;
		c->elapsed_ns = c->sh->stream_end_ns - c->sh->stream_start_ns;
	}
}
