// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// What the pollers call on the channel registry (poller.c), then what the
// files of the channels share: their lifetime and the registry (channel.c),
// serving them (channel_serve.c), the memzone pool (channel_memzone.c) and
// their counters (channel_stats.c).

#pragma once

#include "gr_api_server.h"

#include "api.h"
#include "channel.h"
#include "unix_diag.h"

#include <gr_shm.h>
#include <shmchan.h>

// The flavor's API (call_rcu(), rcu_barrier(), the rcu_head type), with its
// small functions inline, as channel_serve.c wants them on the poller's
// path: a file that calls call_rcu() must see the flavor's declarations, and
// <urcu/call-rcu.h> alone, included before them, would hide them.
#ifndef URCU_INLINE_SMALL_FUNCTIONS
#define URCU_INLINE_SMALL_FUNCTIONS
#endif
#include <urcu.h>
#include <urcu/list.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

// ---- The pollers' calls ----
//
// Each function walks the channels assigned to one poller and must be called
// by that poller inside an RCU read-side critical section.

// Where a poller's buffer puts the request it copies out of a ring: this far
// past a multiple of GR_API_SERVER_PAYLOAD_ALIGN, so that the payload,
// right after the 12-byte header, starts at one.
#define CHANNEL_REQ_BUF_SKEW 4
_Static_assert(
	(CHANNEL_REQ_BUF_SKEW + sizeof(struct gr_api_request)) % GR_API_SERVER_PAYLOAD_ALIGN == 0,
	"a request's payload is aligned in the poller's buffer"
);

// Serve every channel of this poller once: flush its response backlog, then
// give it a turn bounded by the responses its requests produce. req_buf holds SHMCHAN_MSG_MAX bytes
// and starts CHANNEL_REQ_BUF_SKEW past an aligned address. Returns the number of messages moved (0:
// nothing to do).
unsigned channel_poll(unsigned poller_id, void *req_buf);

// Arm the doorbell of every channel of this poller, issue one full fence
// (which also orders the caller's stores before the re-checks), then
// re-check their rings: a channel with a response backlog is armed for room
// in its response ring and re-checked by retrying the backlog, any other one
// is armed for a request. Returns the number of channels with work pending (the poller must
// not sleep then). Sets *timeout_ms to how long the poller may sleep: -1
// (until a doorbell rings), or the time left before the slow-client limit of
// the first backlog to expire.
unsigned channel_arm(unsigned poller_id, int *timeout_ms);

// Clear the request doorbell flag of every channel of this poller, and
// tell their clients the CPU it runs on (cpu, -1: not known).
void channel_disarm(unsigned poller_id, int cpu);

// Tell the clients of every channel of this poller the CPU it runs on now.
void channel_cpu_publish(unsigned poller_id, int cpu);

// Tell the clients of every channel of this poller how busy the host's
// CPUs are (a shmchan_host_word()).
void channel_host_publish(unsigned poller_id, uint32_t word);

// The number of distinct channels of this poller that moved messages since
// the last call (for its nice value, poller_nice.h); a new count starts.
unsigned channel_clients_counted(unsigned poller_id);

// For the poller's spin (poller_spin.h): what the client of the channel
// whose serve moved messages last (owner false), or of the spin window's
// owner (owner true), says about itself (shmchan_server_peer(), with its
// consumer index if tail). Returns false when there is no such channel
// (none yet, or the poller's channels changed since: it is gone, or may
// be).
bool channel_spin_peer(unsigned poller_id, bool owner, bool tail, struct shmchan_peer *peer);

// The channel whose serve moved messages last owns the spin window now.
void channel_spin_own(unsigned poller_id);

// ---- What the files of the channels share ----
//
// Threads: the main thread attaches and detaches channels and writes the
// lists; the poller a channel is assigned to serves it (channel.c says who
// reads what, and struct channel who writes each field).

// Memzone names of channels: "shmc-<daemon pid>-<seq>", at most 31
// characters (RTE_MEMZONE_NAMESIZE - 1), unique per daemon instance.
#define CHANNEL_MEMZONE_PREFIX "shmc-"

// Why a poller gave up on a client.
enum channel_fault {
	FAULT_CORRUPT, // the client wrote something invalid into its region
	FAULT_SLOW, // the client stopped reading its responses
};

// What a sleeping poller waits for on a channel (poller only): what
// channel_arm() set its flag for, and so how it re-checks it.
enum channel_armed {
	ARMED_NONE, // not marked: not up, or attached after the marks
	ARMED_REQUEST, // a request
	ARMED_BACKLOG, // room for its response backlog
	ARMED_EVENTS, // room for its queued events
};

// The public codes (api/gr_shm.h), as GR_SHM_CHANNEL_LIST reports them.
enum channel_state {
	CHANNEL_UP = GR_SHM_CHANNEL_UP,
	CHANNEL_FAULTED = GR_SHM_CHANNEL_FAULTED,
	CHANNEL_CLOSED = GR_SHM_CHANNEL_CLOSED,
};

// Who may still write into a memzone once its channel is gone
// (channel_zone_hold()).
struct zone_holder {
	pid_t pid; // the client that connected, 0: none (gone, or unknown)
	int pidfd; // pidfd_open(pid), readable once it has exited; -1: kill(pid, 0)
	bool peer_known; // peer: the client's end of the lease socket
	struct unix_sock_id peer;
};

// A response waiting for room in the response ring (channel_serve.c).
struct backlog_msg;

struct channel {
	struct cds_list_head node; // registry entry (main thread writes)
	struct cds_list_head poller_node; // entry in its poller's list (main thread writes)
	struct rcu_head rcu;
	// Setup only (main thread, before the channel is published).
	char name[GR_SHM_NAME_LEN];
	unsigned poller;
	struct shmchan_mem mem;
	struct shmchan_server *server;
	struct shmchan_geometry geometry;
	int fds[3]; // passed at attach: request doorbell, response doorbell, memfd
	unsigned n_fds; // 3 with a memfd, 2 with a memzone
	int lease_fd; // dup of the client's socket, shut down on a fault
	struct gr_api_ctx ctx; // dispatch state of requests arriving on the channel
	// Written by the owning poller, read by the main thread.
	_Atomic uint32_t state;
	enum channel_fault fault; // why the poller faulted it
	char fault_reason[192]; // what it found, for the log
	// Poller only.
	struct backlog_msg *backlog_head;
	struct backlog_msg **backlog_tail;
	size_t backlog_bytes;
	uint64_t backlog_since; // tsc when the backlog became non-empty
	bool served; // the poller served it once (its doorbell flag was cleared)
	// The poller's period of counting clients (channel_clients_counted())
	// in which this channel last had work.
	uint32_t counted_period;
	// What the turn being served produced so far (shm_send() counts):
	// responses, and their bytes, headers included.
	uint32_t turn_responses;
	uint32_t turn_bytes;
	bool turn_cut; // its last turn ended on its bound, with requests left
	bool event_held_back; // the ring refused the oldest queued event: counted
	enum channel_armed armed; // what channel_arm() marked it for, until its re-check
	// Main thread, at detach: the counters added to the totals then.
	struct shmchan_server_stats retired_at;
	// Main thread, at the detach of a memzone channel whose client may
	// still write into the zone (channel_zone_hold()).
	struct zone_holder holder;
};

// The descriptors a channel of this backing holds (channel.h).
static inline unsigned channel_fds(enum shmchan_backing backing) {
	return backing == SHMCHAN_BACKING_MEMFD ? CHANNEL_FDS_MAX : CHANNEL_FDS_MEMZONE;
}

// Hidden (the library is built so, but an extern declaration does not say
// it): each file reaches these variables directly, not through the GOT, as
// when each was the static of one file.
#pragma GCC visibility push(hidden)

// ---- channel.c ----

// The registry: every channel (main thread writes, readers walk it under
// rcu_read_lock() on any thread).
extern struct cds_list_head registry;
// The channels of each poller, in the order they attached (main thread
// writes, poller i reads poller_channels[i]).
extern struct cds_list_head poller_channels[GR_API_SERVER_MAX_POLLERS];
// Bumped by the main thread after each change of poller_channels[i], read by
// poller i.
extern _Atomic uint64_t poller_channels_gen[GR_API_SERVER_MAX_POLLERS];

// The lease_lost of a socket that holds a channel (struct gr_api_ctx): the
// main thread calls it when the lease ends.
void channel_detach(void *arg, bool peer_closed);

// ---- channel_serve.c ----

// Transport of channel clients.
extern const struct api_transport shm_transport;
// CHANNEL_SLOW_LIMIT_MS in TSC cycles: set by channel_module_init() before
// the pollers start, read by them.
extern uint64_t slow_limit_cycles;

// Free the response backlog of a channel no poller serves any more.
void backlog_free(struct channel *ch);

// Free the pollers' views of their channels. Main thread, once the pollers
// have stopped.
void channel_views_free(void);

// ---- channel_memzone.c ----

// A memfd named name, or a memzone from the pool. Main thread (attach).
int channel_mem_alloc(
	struct shmchan_mem *mem,
	enum shmchan_backing backing,
	const char *name,
	size_t size
);

// A memzone goes back to the pool, or is held there for holder (NULL:
// none). Main thread or the call_rcu thread.
void channel_mem_free(struct shmchan_mem *mem, const struct zone_holder *holder);

// Memzones not in the pool now. Any thread.
uint32_t memzone_pool_in_use(void);

// The memzones reserved at startup. Any thread, once channel_module_init()
// has returned.
unsigned memzone_pool_zones(void);

// Reserve the pool; close the holders' pidfds. Main thread, at startup and
// at shutdown.
void memzone_pool_init(void);
void memzone_pool_fini(void);

// Hold ch's memzone out of the pool while its client may write into it.
// Main thread, at detach.
void channel_zone_hold(struct channel *ch);

// ---- channel_stats.c ----

// Counters of channels already freed (added at detach by the main thread,
// and after the grace period by the call_rcu thread; read by the stats
// handlers on any thread): atomic adds and loads.
extern struct gr_shm_counters retired;

// Add a channel's counters (written by its poller) into to, all of them or
// only what they counted after the snapshot since. Any thread.
void counters_add_since(
	struct gr_shm_counters *to,
	const struct shmchan_server_stats *s,
	const struct shmchan_server_stats *since
);
void counters_add(struct gr_shm_counters *to, const struct shmchan_server_stats *s);

// A copy of a channel's counters while its poller may still write them.
// Any thread.
void stats_snapshot(struct shmchan_server_stats *to, const struct shmchan_server_stats *s);

#pragma GCC visibility pop
