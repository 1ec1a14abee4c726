// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench: the reference microbenchmarks every channel result is compared
// with (make bench, docs/benchmark-method.md). Most run between two processes
// (fork) that share a memfd; one process leads (times and stops the run),
// the other follows. By default the two are pinned with sched_setaffinity
// to the first two CPUs this process may use: two spinning processes on one
// CPU would measure the scheduler, not the mechanism, and pinning keeps the
// numbers repeatable. --no-pin leaves them to the scheduler, as the daemon
// and its clients are; for the sleeping tests (eventfd, unix) on a virtual
// machine that can be much faster, since the scheduler then often runs both
// on one CPU and no halted virtual CPU has to be woken.
//
//   cacheline      one cache line bounced between the processes: the
//                  hardware's round-trip limit (no pause in the spin loops)
//   ring-pingpong  a request and its answer through two SPSC rte_rings in the
//                  memfd, framed and sized as the channel does (16-byte
//                  cells, a 12-byte header + SIZE bytes of payload, 5 cells
//                  for GR_PING2), enqueued and dequeued whole with the
//                  rte_ring elem functions; spins with rte_pause()
//   ring-stream    the same messages one way, as fast as the consumer takes
//                  them: the streaming rate of one ring
//   ring-echo      the rings of ring-pingpong with --depth requests in
//                  flight, each echoed back: a pipelined call moves two
//                  messages and each side enqueues and dequeues once per
//                  call, so this, not ring-stream, is the raw ceiling of a
//                  client keeping DEPTH requests in flight
//   chan-pingpong  a round trip through a real channel with the channel
//   chan-stream    library alone (shmchan_client_send/recv on one side,
//                  shmchan_server_recv/send on the other, the region in a
//                  sealed memfd, the doorbells never needed): what the
//                  channel's framing, hardened daemon ring code and doorbell
//                  checks add to the raw rings, without the daemon's poller,
//                  dispatch and handler or the client library
//   chan-echo      ring-echo through the channel library, as chan-pingpong
//   lines-apart    only the cache-line transfers of the rte_ring layout: the
//                  ring-pingpong frames written into and copied out of the
//                  same cells, the producer index stored (release) on a line
//                  of its own after them and spun on (acquire, rte_pause()),
//                  and nothing else: no read of the peer's index, no checks.
//                  The floor of any code on this layout
//   lines-inline   the same frames with the index inside the frame's first
//                  cell (a sequence word stored last), the layout that would
//                  save the index line's transfer each way
//   ring-local     one process doing both sides of a ring-pingpong, or of a
//   chan-local     chan-pingpong, in turn: the instructions alone, every
//                  cache line local
//   eventfd        a wake-up each way through two blocking eventfds
//   unix           a 12-byte header + SIZE bytes each way over a Unix stream
//                  socketpair, blocking send and recv
//   unix-epoll     the same, the follower serving as an event loop does:
//                  epoll_wait on its end, recv(MSG_DONTWAIT) of what is
//                  there, send of the answer; the 3 system calls per request
//                  of shmchand's socket path, with none of its code
//   clock          the cost of clock_gettime(CLOCK_MONOTONIC), one process:
//                  ping2_perf reads it twice per call
//   syscall        the cost of the cheapest system call (getppid), one
//                  process: what every eventfd write or socket call pays
//                  before doing anything
//
// --gap-us US (eventfd, unix) sleeps US before each round trip and times
// each one alone: the wake-up of a peer that has been idle that long, the
// reference of the first request after idling.
//
// No EAL: rte_ring_init() and the ring functions need none.
//
// The pieces, one concern per file, are listed in ref_bench.h; this file
// holds the table of tests and main().

#include "ref_bench.h"

#include <stdlib.h>

const char *log_prefix = "ref_bench";

const struct bench benches[] = {
	{"cacheline",
	 "round_trip",
	 true,
	 false,
	 false,
	 false,
	 cacheline_leader_op,
	 cacheline_leader_stop,
	 cacheline_follower,
	 NULL},
	{"ring-pingpong",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 ring_pingpong_leader_op,
	 ring_leader_stop,
	 ring_pingpong_follower,
	 NULL},
	{"ring-stream",
	 "message",
	 true,
	 true,
	 false,
	 false,
	 ring_stream_leader_op,
	 ring_leader_stop,
	 ring_stream_follower,
	 ring_stream_result},
	{"ring-echo",
	 "call",
	 true,
	 true,
	 false,
	 true,
	 ring_echo_leader_op,
	 ring_echo_leader_stop,
	 ring_pingpong_follower,
	 NULL},
	{"eventfd",
	 "round_trip",
	 true,
	 false,
	 true,
	 false,
	 eventfd_leader_op,
	 eventfd_leader_stop,
	 eventfd_follower,
	 NULL},
	{"unix",
	 "round_trip",
	 true,
	 true,
	 true,
	 false,
	 unix_leader_op,
	 unix_leader_stop,
	 unix_follower,
	 NULL},
	{"unix-epoll",
	 "round_trip",
	 true,
	 true,
	 true,
	 false,
	 unix_leader_op,
	 unix_leader_stop,
	 unix_epoll_follower,
	 NULL},
	{"chan-pingpong",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 chan_pingpong_leader_op,
	 chan_leader_stop,
	 chan_pingpong_follower,
	 NULL},
	{"chan-stream",
	 "message",
	 true,
	 true,
	 false,
	 false,
	 chan_stream_leader_op,
	 chan_leader_stop,
	 chan_stream_follower,
	 ring_stream_result},
	{"chan-echo",
	 "call",
	 true,
	 true,
	 false,
	 true,
	 chan_echo_leader_op,
	 chan_echo_leader_stop,
	 chan_pingpong_follower,
	 NULL},
	{"lines-apart",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 lines_apart_leader_op,
	 lines_apart_leader_stop,
	 lines_apart_follower,
	 NULL},
	{"lines-inline",
	 "round_trip",
	 true,
	 true,
	 false,
	 false,
	 lines_inline_leader_op,
	 lines_inline_leader_stop,
	 lines_inline_follower,
	 NULL},
	{"ring-local", "round_trip", false, true, false, false, ring_local_op, NULL, NULL, NULL},
	{"chan-local", "round_trip", false, true, false, false, chan_local_op, NULL, NULL, NULL},
	{"clock", "call", false, false, false, false, clock_leader_op, NULL, NULL, NULL},
	{"syscall", "call", false, false, false, false, syscall_leader_op, NULL, NULL, NULL},
};
const size_t n_benches = sizeof(benches) / sizeof(benches[0]);

int main(int argc, char **argv) {
	struct options o;
	struct result r;
	struct ctx c;

	parse_options(argc, argv, &o);
	setup(&c, &o);
	run(&c, &r);
	print_result(&c, &r);
	return EXIT_SUCCESS;
}
