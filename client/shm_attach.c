// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Attaching a shared-memory channel over the socket: a memzone channel for a
// DPDK secondary of the daemon, a memfd channel for any other process. The
// attach response and its descriptors are checked before anything is
// mapped; a channel that cannot be trusted is given back and the handle
// stays on the socket. Sending and receiving through the rings: shm.c.

#include "client_priv.h"

#include <gr_shm.h>
#include <shmchan.h>

#include <rte_memzone.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

// Descriptors of the attach response, in the order gr_shm.h gives. A
// memzone channel comes without ATTACH_FD_MEM.
enum attach_fd {
	ATTACH_FD_REQ_DOORBELL,
	ATTACH_FD_RESP_DOORBELL,
	ATTACH_FD_MEM,
	ATTACH_N_FDS,
};

// Fail an attach: close the received descriptors, say why.
__attribute__((format(printf, 3, 4))) static int
attach_fail(struct gr_api_client *c, int err, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	client_sock_fds_close(c);
	return err;
}

// Why a shmchan call failed: its recorded reason, else the errno text.
static const char *shmchan_error(int ret) {
	const char *why = shmchan_last_error();
	return why[0] != '\0' ? why : strerror(-ret);
}

// anon_inodefs inodes (eventfd, epoll, ...) carry no file type bits.
static bool fd_is_anon_inode(int fd) {
	struct stat st;
	return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == 0;
}

static bool fd_is_socket(int fd) {
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static bool fd_is_regular(int fd) {
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// A memfd of ordinary shared memory (tmpfs), as the daemon makes: not one
// of hugetlbfs (MFD_HUGETLB), whose pages a hole punched by the other end
// takes away until a free huge page can replace them, so that our next
// access to that page may die of SIGBUS.
static bool fd_is_shmem(int fd) {
	struct statfs fs;
	return fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

// A memzone channel: the zone the response names, looked up in this
// secondary's view of the daemon's memory. Returns 0 with *base set, or
// -ENOTSUP with c->reason set and the descriptors closed.
static int attach_memzone_find(
	struct gr_api_client *c,
	const struct gr_shm_attach_resp *resp,
	const struct client_dpdk *dpdk,
	void **base
) {
	if (strnlen(resp->file_prefix, sizeof(resp->file_prefix)) == sizeof(resp->file_prefix) ||
	    strcmp(resp->file_prefix, dpdk->file_prefix) != 0)
		return attach_fail(
			c,
			-ENOTSUP,
			"memzone channel of file prefix \"%.*s\", this secondary's is \"%s\"",
			(int)sizeof(resp->file_prefix),
			resp->file_prefix,
			dpdk->file_prefix
		);
	if (strnlen(resp->name, sizeof(resp->name)) == sizeof(resp->name))
		return attach_fail(c, -ENOTSUP, "memzone name not terminated");
	const struct rte_memzone *mz = dpdk->memzone_lookup(resp->name);
	if (mz == NULL)
		return attach_fail(
			c,
			-ENOTSUP,
			"memzone %s not found in this DPDK secondary",
			resp->name
		);
	if (mz->len < resp->region_size)
		return attach_fail(
			c,
			-ENOTSUP,
			"memzone %s of %zu bytes, the channel needs %" PRIu64,
			resp->name,
			mz->len,
			resp->region_size
		);
	*base = mz->addr;
	return 0;
}

// The descriptors a channel of this backing comes with: the two doorbells,
// and the memfd for a memfd channel.
static unsigned attach_n_fds(uint32_t backing) {
	return backing == GR_SHM_BACKING_MEMZONE ? ATTACH_FD_MEM : ATTACH_N_FDS;
}

// Check the attach response (to a request for backings) and map the
// channel. Returns 0, or -ENOTSUP or -EPROTO with c->reason set and the
// descriptors closed.
static int attach_open(
	struct gr_api_client *c,
	const struct client_msg *msg,
	uint32_t backings,
	const struct client_dpdk *dpdk
) {
	struct gr_shm_attach_resp resp;

	switch (msg->hdr.status) {
	case 0:
		break;
	case ENOTSUP:
		return attach_fail(c, -ENOTSUP, "daemon offers no shared-memory channel (ENOTSUP)");
	case EPROTO:
		return attach_fail(
			c,
			-EPROTO,
			"daemon refused layout version %d (EPROTO)",
			SHMCHAN_LAYOUT_VERSION
		);
	default:
		return attach_fail(
			c,
			-ENOTSUP,
			"daemon refused the channel: %s",
			strerror((int)msg->hdr.status)
		);
	}
	if (msg->hdr.payload_len != sizeof(resp))
		return attach_fail(
			c,
			-ENOTSUP,
			"attach response of %u bytes, expected %zu",
			msg->hdr.payload_len,
			sizeof(resp)
		);
	memcpy(&resp, msg->payload, sizeof(resp));
	if (resp.layout_version != SHMCHAN_LAYOUT_VERSION)
		return attach_fail(
			c,
			-EPROTO,
			"layout version mismatch: client %d, daemon %u",
			SHMCHAN_LAYOUT_VERSION,
			resp.layout_version
		);
	// Exactly one backing, and one this client asked for: a memzone
	// handed to a process that is no secondary of the daemon names memory
	// it cannot see.
	if ((resp.backing != GR_SHM_BACKING_MEMFD && resp.backing != GR_SHM_BACKING_MEMZONE) ||
	    !(resp.backing & backings))
		return attach_fail(
			c,
			-ENOTSUP,
			"daemon offered backing %#x, client asked for %s",
			resp.backing,
			backings & GR_SHM_BACKING_MEMZONE
				? "memzone or memfd"
				: "memfd (it is no DPDK secondary of the daemon)"
		);
	unsigned n_fds = attach_n_fds(resp.backing);
	if (resp.n_fds != n_fds || c->n_fds != n_fds || c->fds_lost)
		return attach_fail(
			c,
			-ENOTSUP,
			"bad fds received: %u announced, %u received%s, %u expected",
			resp.n_fds,
			c->n_fds,
			c->fds_lost ? " and some lost" : "",
			n_fds
		);
	if (!fd_is_anon_inode(c->fds[ATTACH_FD_REQ_DOORBELL]))
		return attach_fail(
			c,
			-ENOTSUP,
			"bad fds received: the request doorbell is not an eventfd"
		);
	if (!fd_is_socket(c->fds[ATTACH_FD_RESP_DOORBELL]))
		return attach_fail(
			c,
			-ENOTSUP,
			"bad fds received: the response doorbell is not a socket"
		);
	if (resp.backing == GR_SHM_BACKING_MEMFD && !fd_is_regular(c->fds[ATTACH_FD_MEM]))
		return attach_fail(c, -ENOTSUP, "bad fds received: the memory fd is not a memfd");
	if (resp.backing == GR_SHM_BACKING_MEMFD && !fd_is_shmem(c->fds[ATTACH_FD_MEM]))
		return attach_fail(
			c,
			-ENOTSUP,
			"bad fds received: the memory fd is not ordinary shared memory"
			" (a hugetlbfs file?)"
		);

	const struct shmchan_geometry g = {
		.layout_version = resp.layout_version,
		.cell_size = resp.cell_size,
		.ring_cells = resp.ring_cells,
		.region_size = resp.region_size,
		.req_ring_off = resp.req_ring_off,
		.resp_ring_off = resp.resp_ring_off,
		.generation = resp.generation,
	};
	int ret = shmchan_geometry_check(&g);
	if (ret < 0)
		return attach_fail(
			c,
			ret == -EPROTO ? -EPROTO : -ENOTSUP,
			"bad channel geometry: %s",
			shmchan_error(ret)
		);

	void *base = NULL;
	int mem_fd = -1;
	if (resp.backing == GR_SHM_BACKING_MEMZONE) {
		ret = attach_memzone_find(c, &resp, dpdk, &base);
		if (ret < 0)
			return ret;
	} else {
		mem_fd = c->fds[ATTACH_FD_MEM];
	}
	ret = shmchan_client_open(
		&g,
		base,
		mem_fd,
		c->fds[ATTACH_FD_REQ_DOORBELL],
		c->fds[ATTACH_FD_RESP_DOORBELL],
		&c->chan
	);
	if (ret < 0)
		return attach_fail(
			c,
			ret == -EPROTO ? -EPROTO : -ENOTSUP,
			"cannot map the channel: %s",
			shmchan_error(ret)
		);
	// The channel owns the descriptors now.
	c->n_fds = 0;
	c->chan_backing = resp.backing;
	return 0;
}

// A secondary asks for a memzone channel only from its own primary (same
// file prefix) when that daemon offers memzones (it runs with hugepages).
// Adds GR_SHM_BACKING_MEMZONE to *backings, or writes why not to why.
// Returns 0, or -errno when the socket failed.
static int secondary_backings(
	struct gr_api_client *c,
	const struct client_dpdk *dpdk,
	uint32_t *backings,
	char *why,
	size_t why_len
) {
	struct gr_shm_daemon_info info;
	struct client_stash_entry *entry;
	struct client_msg msg;

	long id = client_send(c, GR_SHM_DAEMON_INFO, 0, NULL);
	if (id < 0)
		return (int)id;
	int ret = client_take(c, (uint32_t)id, true, NULL, &msg, &entry);
	if (ret < 0)
		return ret;
	// The file prefix and the backings are in every release's answer; a
	// newer daemon's longer one is cut to what this library knows.
	bool told = msg.hdr.status == 0 &&
		    msg.hdr.payload_len >= offsetof(struct gr_shm_daemon_info, version);
	if (told) {
		memset(&info, 0, sizeof(info));
		memcpy(&info,
		       msg.payload,
		       msg.hdr.payload_len < sizeof(info) ? msg.hdr.payload_len : sizeof(info));
	}
	client_stash_free(entry);

	if (!told) {
		snprintf(
			why,
			why_len,
			"DPDK secondary, but the daemon does not tell its file prefix:"
			" memfd channel"
		);
		return 0;
	}
	info.file_prefix[sizeof(info.file_prefix) - 1] = '\0';
	if (strcmp(info.file_prefix, dpdk->file_prefix) != 0)
		snprintf(
			why,
			why_len,
			"DPDK secondary of file prefix \"%s\", the daemon's is \"%s\":"
			" memfd channel",
			dpdk->file_prefix,
			info.file_prefix
		);
	else if (info.backings != 0 && !(info.backings & GR_SHM_BACKING_MEMZONE))
		snprintf(
			why,
			why_len,
			"DPDK secondary of the daemon, but the daemon runs without hugepages"
			" (--no-huge or --in-memory) and offers no memzone: memfd channel"
		);
	else
		*backings |= GR_SHM_BACKING_MEMZONE;
	return 0;
}

// The daemon made a channel that this client cannot map or use: give it
// back (GR_SHM_DETACH), so that the daemon stops serving it and frees it
// now rather than when the connection closes, and a later attach on this
// connection can succeed. The answer's status does not matter: a daemon
// that does not know the request keeps the channel until the connection
// closes. Returns 0, or -errno when the socket failed.
static int attach_give_back(struct gr_api_client *c) {
	struct client_stash_entry *entry;
	struct client_msg msg;

	long id = client_send(c, GR_SHM_DETACH, 0, NULL);
	if (id < 0)
		return (int)id;
	int ret = client_take(c, (uint32_t)id, true, NULL, &msg, &entry);
	if (ret < 0)
		return ret;
	client_stash_free(entry);
	return 0;
}

// One attach request for backings, and its response. Returns as
// attach_open(), or -errno when the socket failed. *status is the
// response's status: when it is not 0 the daemon made no channel; when it
// is 0 and the channel could not be used, it has been given back.
static int attach_request(
	struct gr_api_client *c,
	uint32_t backings,
	const struct client_dpdk *dpdk,
	uint32_t *status
) {
	const struct gr_shm_attach_req req = {
		.backings = backings,
		.layout_version = SHMCHAN_LAYOUT_VERSION,
	};
	// Anything queued before would shift the attach descriptors.
	client_sock_fds_close(c);

	long id = client_send(c, GR_SHM_ATTACH, sizeof(req), &req);
	if (id < 0)
		return (int)id;
	struct client_stash_entry *entry;
	struct client_msg msg;
	int ret = client_take(c, (uint32_t)id, true, NULL, &msg, &entry);
	if (ret < 0) {
		client_sock_fds_close(c);
		return ret;
	}
	*status = msg.hdr.status;
	ret = attach_open(c, &msg, backings, dpdk);
	client_stash_free(entry);
	if (ret < 0 && *status == 0) {
		int err = attach_give_back(c);
		if (err < 0)
			return err;
	}
	return ret;
}

int client_shm_attach(struct gr_api_client *c) {
	uint32_t backings = GR_SHM_BACKING_MEMFD, status = 0;
	char why[CLIENT_REASON_LEN] = ""; // why a secondary is on a memfd channel
	struct client_dpdk dpdk;
	int ret;

	client_dpdk_probe(&dpdk);
	if (dpdk.secondary) {
		ret = secondary_backings(c, &dpdk, &backings, why, sizeof(why));
		if (ret < 0)
			return ret;
	}
	ret = attach_request(c, backings, &dpdk, &status);
	// A daemon short of hugepages (or of memzones) refuses the memzone and
	// makes no channel: a memfd one may still be had.
	if (ret == -ENOTSUP && status != 0 && backings != GR_SHM_BACKING_MEMFD) {
		snprintf(
			why,
			sizeof(why),
			"DPDK secondary of the daemon, but it refused a memzone channel (%s):"
			" memfd channel",
			strerror((int)status)
		);
		backings = GR_SHM_BACKING_MEMFD;
		ret = attach_request(c, backings, &dpdk, &status);
	}
	if (ret < 0)
		return ret;
	if (backings != GR_SHM_BACKING_MEMFD && c->chan_backing == GR_SHM_BACKING_MEMFD)
		snprintf(
			why,
			sizeof(why),
			"DPDK secondary of the daemon, asked for a memzone channel, given memfd"
		);
	c->transport = GR_API_TRANSPORT_SHM;
	snprintf(c->reason, sizeof(c->reason), "%s", why);
	return 0;
}

void client_shm_detach(struct gr_api_client *c) {
	if (c->wait_fd >= 0) {
		close(c->wait_fd);
		c->wait_fd = -1;
	}
	if (c->loadavg_fd >= 0) {
		close(c->loadavg_fd);
		c->loadavg_fd = -1;
	}
	if (c->sleep_fd >= 0)
		close(c->sleep_fd);
	c->sleep_fd = -1;
	c->bell_wakes = 0;
	c->armed = false;
	if (c->chan == NULL)
		return;
	shmchan_client_close(c->chan);
	c->chan = NULL;
	c->chan_backing = 0;
}
