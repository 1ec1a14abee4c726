// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The memzone pool of the channels (CHANNEL_MEMZONE_POOL, channel.h): its
// zones reserved at startup, handed out and taken back in FIFO order, and
// held out of it while a client the daemon gave up on may still write into
// one (unix_diag.h watches the client's socket).

#include "channel_priv.h"
#include "config.h"
#include "fd_budget.h"
#include "unix_diag.h"

#include <rte_errno.h>
#include <rte_memzone.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// Regions are mapped by page; a memzone is aligned the same way.
#define CHANNEL_REGION_ALIGN 4096
// pidfd_open(2) flags: none.
#define PIDFD_OPEN_FLAGS 0

// A zone taken from a client the daemon detached while it lived (a fault:
// slow or corrupt; or its connection closed by the daemon): held out of the
// pool until that process has exited and no process holds the client's end
// of its socket any more, whatever they are doing meanwhile (stopped,
// swapped out, in a debugger), since a process that still runs may still
// write into the zone: the one that connected, one it forked (which shares
// its mappings and its socket), or a secondary it passed the socket to.
struct memzone_held {
	const struct rte_memzone *mz;
	struct zone_holder holder;
};

// The memzone pool. Taken from by the main thread (attach), given back to by
// the call_rcu thread (channel_free), looked at by the stats handler (any
// thread): the mutex orders them. The free zones are a FIFO: the one freed
// longest ago goes out first, so a zone is reused as late as the pool
// allows.
static struct {
	pthread_mutex_t lock;
	const struct rte_memzone *free[CHANNEL_MEMZONE_POOL];
	unsigned free_head; // index of the oldest free zone
	unsigned n_free;
	struct memzone_held held[CHANNEL_MEMZONE_POOL];
	unsigned n_held;
	unsigned n_zones; // reserved at startup
} memzone_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

// Pool lock held: a free zone goes to the back of the FIFO.
static void memzone_pool_put_locked(const struct rte_memzone *mz) {
	unsigned tail = (memzone_pool.free_head + memzone_pool.n_free) % CHANNEL_MEMZONE_POOL;

	memzone_pool.free[tail] = mz;
	memzone_pool.n_free++;
}

// Has the process that connected exited?
static bool holder_pid_exited(const struct zone_holder *h) {
	if (h->pid <= 0)
		return true;
	if (h->pidfd >= 0) {
		struct pollfd pfd = {.fd = h->pidfd, .events = POLLIN};
		// A pidfd is readable once its process has exited (a zombie
		// too: it maps nothing any more). Never blocks: timeout 0.
		return poll(&pfd, 1, 0) == 1;
	}
	// Without a pidfd, the pid: a process that took it since only keeps
	// the zone out of the pool longer.
	return kill(h->pid, 0) < 0 && errno == ESRCH;
}

// Has every process that may write into a held zone let go of it? The pid
// first: it costs a poll(), the socket a netlink request. A socket the
// kernel cannot tell about keeps the zone held.
static bool memzone_holder_exited(const struct memzone_held *h) {
	return holder_pid_exited(&h->holder) &&
	       (!h->holder.peer_known || unix_diag_exists(&h->holder.peer) == 0);
}

// Pool lock held: the zones whose holder has exited go back to the pool.
static void memzone_pool_reclaim_locked(void) {
	unsigned i = 0;

	while (i < memzone_pool.n_held) {
		struct memzone_held *h = &memzone_pool.held[i];

		if (!memzone_holder_exited(h)) {
			i++;
			continue;
		}
		if (h->holder.pid == 0)
			LOG(INFO,
			    "memzone %s back in the pool: no process holds its socket",
			    h->mz->name);
		else
			LOG(INFO,
			    "memzone %s back in the pool: pid %d has exited%s",
			    h->mz->name,
			    (int)h->holder.pid,
			    h->holder.peer_known ? ", and no process holds its socket" : "");
		if (h->holder.pidfd >= 0) {
			close(h->holder.pidfd);
			fd_budget_give(1);
		}
		memzone_pool_put_locked(h->mz);
		*h = memzone_pool.held[--memzone_pool.n_held];
	}
}

// A memfd named name, or a memzone from the pool (which keeps the name it
// was reserved with: the client looks it up by that name).
int channel_mem_alloc(
	struct shmchan_mem *mem,
	enum shmchan_backing backing,
	const char *name,
	size_t size
) {
	const struct rte_memzone *mz = NULL;

	if (backing == SHMCHAN_BACKING_MEMFD)
		return shmchan_memfd_create(mem, name, size);

	pthread_mutex_lock(&memzone_pool.lock);
	memzone_pool_reclaim_locked();
	if (memzone_pool.n_free > 0) {
		mz = memzone_pool.free[memzone_pool.free_head];
		memzone_pool.free_head = (memzone_pool.free_head + 1) % CHANNEL_MEMZONE_POOL;
		memzone_pool.n_free--;
	}
	pthread_mutex_unlock(&memzone_pool.lock);
	if (mz == NULL)
		return -ENOSPC;
	mem->backing = SHMCHAN_BACKING_MEMZONE;
	mem->base = mz->addr;
	mem->size = mz->len;
	mem->fd = -1;
	mem->cookie = mz;
	snprintf(mem->name, sizeof(mem->name), "%s", mz->name);
	return 0;
}

// Main thread or the call_rcu thread: a memzone goes back to the pool, or,
// with a holder (NULL: none), is held until the holder let go of it; the
// pool takes its pidfd.
void channel_mem_free(struct shmchan_mem *mem, const struct zone_holder *holder) {
	if (mem->backing != SHMCHAN_BACKING_MEMZONE) {
		shmchan_memfd_destroy(mem);
		return;
	}
	if (mem->cookie == NULL)
		return;
	pthread_mutex_lock(&memzone_pool.lock);
	if (holder != NULL && (holder->pid > 0 || holder->peer_known))
		// Room for it: every zone is either handed out, free or held.
		memzone_pool.held[memzone_pool.n_held++] = (struct memzone_held){
			.mz = mem->cookie,
			.holder = *holder,
		};
	else
		memzone_pool_put_locked(mem->cookie);
	pthread_mutex_unlock(&memzone_pool.lock);
	mem->cookie = NULL;
}

// Memzones not in the pool now: handed out, or held for a client that may
// still write into them.
uint32_t memzone_pool_in_use(void) {
	uint32_t in_use;

	pthread_mutex_lock(&memzone_pool.lock);
	memzone_pool_reclaim_locked();
	in_use = memzone_pool.n_zones - memzone_pool.n_free;
	pthread_mutex_unlock(&memzone_pool.lock);
	return in_use;
}

// Written by memzone_pool_init() alone, before any attach.
unsigned memzone_pool_zones(void) {
	return memzone_pool.n_zones;
}

// Main thread, at startup, before any secondary can attach. The zones stay
// reserved until EAL cleanup: a server started again in the same process
// takes the pool it had.
void memzone_pool_init(void) {
	struct shmchan_geometry g;
	char name[RTE_MEMZONE_NAMESIZE];

	if (memzone_pool.n_zones > 0 || shmchan_geometry_init(&g, SHMCHAN_RING_CELLS) < 0)
		return;
	for (unsigned i = 0; i < CHANNEL_MEMZONE_POOL; i++) {
		const struct rte_memzone *mz;

		snprintf(name, sizeof(name), CHANNEL_MEMZONE_PREFIX "%d-z%u", (int)getpid(), i);
		mz = rte_memzone_reserve_aligned(
			name,
			g.region_size,
			SOCKET_ID_ANY,
			0,
			CHANNEL_REGION_ALIGN
		);
		if (mz == NULL) {
			LOG(WARNING,
			    "memzone %s: %s: %u memzone channels only",
			    name,
			    rte_strerror(rte_errno),
			    i);
			break;
		}
		memzone_pool_put_locked(mz);
		memzone_pool.n_zones++;
	}
}

// Main thread, at shutdown, after the last channel_free(): the zones stay
// reserved until EAL cleanup; only the holders' pidfds are closed. A zone
// held stays held for a later start in the same process, which watches its
// holder by pid (and socket) alone.
void memzone_pool_fini(void) {
	pthread_mutex_lock(&memzone_pool.lock);
	for (unsigned i = 0; i < memzone_pool.n_held; i++)
		if (memzone_pool.held[i].holder.pidfd >= 0) {
			close(memzone_pool.held[i].holder.pidfd);
			memzone_pool.held[i].holder.pidfd = -1;
			fd_budget_give(1);
		}
	pthread_mutex_unlock(&memzone_pool.lock);
}

// Main thread, at the detach of a memzone channel whose client the daemon
// gave up on (a fault, or its connection closed by the daemon): the client
// was alive then, and may run again later (it may be stopped). The zone is
// held out of the pool until that process has exited and the client's end
// of the lease socket (still open here) is closed in every process.
void channel_zone_hold(struct channel *ch) {
	struct zone_holder *h = &ch->holder;
	pid_t pid = ch->ctx.peer_pid;
	int ret, err;

	if (ch->mem.backing != SHMCHAN_BACKING_MEMZONE)
		return; // a memfd is never given to anyone else
	ret = unix_diag_peer(ch->lease_fd, &h->peer);
	h->peer_known = ret == 0;
	if (ret < 0 && ret != -ENOTCONN)
		LOG(NOTICE,
		    "channel %s: the client's end of its socket cannot be watched (%s): watching"
		    " pid %d alone",
		    ch->name,
		    strerror(-ret),
		    (int)pid);
	if (pid > 0) {
		h->pidfd = (int)syscall(SYS_pidfd_open, pid, PIDFD_OPEN_FLAGS);
		err = h->pidfd < 0 ? errno : 0;
		if (err == 0)
			fd_budget_take(1);
		else if (err != ESRCH)
			LOG(NOTICE,
			    "channel %s: pidfd_open(%d): %s: watching the pid instead",
			    ch->name,
			    (int)pid,
			    strerror(err));
		// ESRCH: gone already; its socket may live on elsewhere.
		h->pid = err == ESRCH ? 0 : pid;
	}
	if (h->pid == 0 && !h->peer_known) {
		// Gone, and its socket closed everywhere: nothing writes into
		// the zone any more. Else it cannot be watched at all.
		if (pid <= 0 || ret != -ENOTCONN)
			LOG(NOTICE,
			    "channel %s: neither the client (pid %d) nor its socket can be watched:"
			    " memzone back in the pool after the grace period",
			    ch->name,
			    (int)pid);
		return;
	}
	if (h->pid == 0)
		LOG(INFO,
		    "channel %s: memzone held out of the pool until no process holds its socket",
		    ch->name);
	else
		LOG(INFO,
		    "channel %s: memzone held out of the pool until pid %d exits%s",
		    ch->name,
		    (int)pid,
		    h->peer_known ? " and no process holds its socket" : "");
}
