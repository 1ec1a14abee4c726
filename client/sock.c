// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Socket transport: framing of requests and responses on the Unix stream
// socket, the read-ahead buffer and the descriptors that arrive with
// SCM_RIGHTS (the attach response's eventfds and memfd). And, from a daemon
// that speaks Grout's API only, its events in Grout's framing.

#include "client_priv.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

// Control buffer of one recvmsg(): room for a full descriptor queue.
#define SOCK_CTRL_LEN CMSG_SPACE(sizeof(int) * CLIENT_MAX_FDS)

// A send that failed after part of a request left breaks the framing of
// every later request: the handle is dead.
static int sock_send_failed(struct gr_api_client *c, int err, bool partial) {
	if (partial)
		c->dead = true;
	return -err;
}

// The socket buffer is full: wait for room, and meanwhile move the
// responses that arrive to the stash. The daemon stops reading requests
// while too many responses to us are queued, so a pipelining client that
// only waited to send would wait forever. Returns 0 (retry the send) or
// -errno (-ETIMEDOUT past the call's deadline).
static int sock_send_wait(struct gr_api_client *c) {
	struct pollfd pfd = {.fd = c->sock, .events = POLLIN | POLLOUT};
	int ms;
	int ret = client_wait_ms(c, &ms);
	if (ret < 0)
		return ret;
	int n = poll(&pfd, 1, ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	// Nothing yet: the next turn checks the deadline.
	if (n == 0)
		return 0;
	// Room, or an error the retried send will report.
	if (pfd.revents & (POLLOUT | POLLERR))
		return 0;
	struct client_msg msg;
	ret = client_sock_next_msg(c, &msg, false);
	if (ret == 0)
		ret = client_route(c, &msg, 0);
	return ret == -EAGAIN ? 0 : ret;
}

int client_sock_send(
	struct gr_api_client *c,
	const struct gr_api_request *hdr,
	const void *payload,
	size_t len
) {
	struct iovec iov[2] = {
		{.iov_base = (void *)hdr, .iov_len = sizeof(*hdr)},
		{.iov_base = (void *)payload, .iov_len = len},
	};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1};
	const size_t total = sizeof(*hdr) + len;
	size_t left = total;

	while (left > 0) {
		// MSG_NOSIGNAL: a closed peer gives EPIPE, never SIGPIPE.
		ssize_t n = sendmsg(c->sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			int ret = -errno;
			if (ret == -EAGAIN || ret == -EWOULDBLOCK)
				ret = sock_send_wait(c);
			if (ret == 0 || ret == -EINTR)
				continue;
			return sock_send_failed(c, -ret, left != total);
		}
		left -= (size_t)n;
		// Skip what left in this call; a partial send resumes mid-iovec.
		size_t sent = (size_t)n;
		while (sent > 0) {
			if (sent >= mh.msg_iov->iov_len) {
				sent -= mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base = (uint8_t *)mh.msg_iov->iov_base + sent;
				mh.msg_iov->iov_len -= sent;
				sent = 0;
			}
		}
	}
	return 0;
}

void client_sock_fds_close(struct gr_api_client *c) {
	for (unsigned i = 0; i < c->n_fds; i++)
		close(c->fds[i]);
	c->n_fds = 0;
	c->fds_lost = false;
}

// Queue the descriptors that came with one recvmsg(); close those that do
// not fit. MSG_CTRUNC means the kernel dropped (closed) some already.
static void sock_fds_queue(struct gr_api_client *c, struct msghdr *mh) {
	if (mh->msg_flags & MSG_CTRUNC)
		c->fds_lost = true;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		const uint8_t *data = CMSG_DATA(cm);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, data + i * sizeof(fd), sizeof(fd));
			if (c->n_fds < CLIENT_MAX_FDS) {
				c->fds[c->n_fds++] = fd;
			} else {
				close(fd);
				c->fds_lost = true;
			}
		}
	}
}

// Wait until the socket is readable or the call's deadline passes.
// Returns 0 (readable, or woken: read again) or -ETIMEDOUT.
static int sock_wait_readable(struct gr_api_client *c) {
	struct pollfd pfd = {.fd = c->sock, .events = POLLIN};
	int ms;
	int ret = client_wait_ms(c, &ms);
	if (ret < 0)
		return ret;
	// EINTR, or 0 on timeout: the caller reads again, and the next wait
	// sees the deadline.
	(void)poll(&pfd, 1, ms);
	return 0;
}

// One recvmsg() of at most len bytes, always with a control buffer so that
// descriptors are never lost whichever read they arrive with. Without wait
// it never blocks; with wait it blocks until the call's deadline: the first
// wait of a call sleeps in recvmsg() alone, under the socket's receive
// timeout (SO_RCVTIMEO, the handle's timeout); a later one polls for the
// time left first. Returns the byte count, -EAGAIN (nothing without
// waiting), -ETIMEDOUT, or -ECONNRESET on EOF or error (the handle is then
// dead).
static ssize_t sock_read(struct gr_api_client *c, void *buf, size_t len, bool wait) {
	union {
		char buf[SOCK_CTRL_LEN];
		struct cmsghdr align;
	} ctrl;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	for (;;) {
		int flags = MSG_CMSG_CLOEXEC;
		if (!wait) {
			flags |= MSG_DONTWAIT;
		} else if (c->timeout_ms >= 0) {
			if (c->deadline_ns == 0 && c->sock_rcvtimeo) {
				// The kernel's timeout is the call's: start the
				// deadline and sleep in recvmsg().
				int ms;
				(void)client_wait_ms(c, &ms);
			} else {
				int ret = sock_wait_readable(c);
				if (ret < 0)
					return ret;
				flags |= MSG_DONTWAIT;
			}
		}
		ssize_t n = recvmsg(c->sock, &mh, flags);
		if (n > 0) {
			sock_fds_queue(c, &mh);
			return n;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait)
				return -EAGAIN;
			// The receive timeout, or a poll that woke without
			// data: the next turn checks the deadline.
			continue;
		}
		c->dead = true;
		return -ECONNRESET;
	}
}

// Whether the message at p (a response header's worth of bytes at least)
// is a Grout-framed event (client_priv.h, grout_events). An event's first
// word is its type, (module << 16) | id; a response's is the id of a
// request, and such a handle waits for one at most: that of its subscribe
// or unsubscribe.
static bool sock_is_grout_event(const struct gr_api_client *c, const uint8_t *p) {
	uint32_t first;

	if (!c->grout_events)
		return false;
	if (c->grout_event_req_id == 0)
		return true;
	memcpy(&first, p, sizeof(first));
	return first != c->grout_event_req_id;
}

// Read the header of the message at p, of which avail bytes are there, into
// hdr, and where its payload starts into *off. A Grout-framed event becomes
// the tagged event it would be: a response with for_id 0 whose payload is
// the event header and the event payload, at p itself. Returns false while
// avail does not hold the whole header.
static bool sock_hdr_parse(
	const struct gr_api_client *c,
	const uint8_t *p,
	size_t avail,
	struct gr_api_response *hdr,
	size_t *off
) {
	struct gr_api_event ev;

	if (avail < sizeof(*hdr))
		return false;
	if (!sock_is_grout_event(c, p)) {
		memcpy(hdr, p, sizeof(*hdr));
		*off = sizeof(*hdr);
		return true;
	}
	if (avail < sizeof(ev))
		return false;
	memcpy(&ev, p, sizeof(ev));
	// Too long for a uint32_t: client_check_hdr() refuses UINT32_MAX.
	size_t len = ev.payload_len > CLIENT_MAX_PAYLOAD ? UINT32_MAX : sizeof(ev) + ev.payload_len;
	*hdr = (struct gr_api_response){.payload_len = (uint32_t)len};
	*off = 0;
	return true;
}

// A whole message was read: the response to a Grout subscribe switches the
// socket to Grout's event framing, that of an unsubscribe back.
static void sock_msg_done(struct gr_api_client *c, const struct gr_api_response *hdr) {
	if (c->grout_event_req_id == 0 || hdr->for_id != c->grout_event_req_id)
		return;
	if (hdr->status == 0)
		c->grout_events = c->grout_event_req_type == GR_EVENT_SUBSCRIBE;
	c->grout_event_req_id = 0;
}

bool client_sock_buffered(const struct gr_api_client *c) {
	struct gr_api_response hdr;
	size_t avail = c->rbuf_tail - c->rbuf_head, off;
	return sock_hdr_parse(c, c->rbuf + c->rbuf_head, avail, &hdr, &off) &&
	       avail - off >= hdr.payload_len;
}

// The rest of a message larger than the read-ahead buffer, whose first
// big_have bytes are in msg_buf. Returns 0 once it is whole, or -errno
// (-EAGAIN without wait: the bytes read so far stay in msg_buf).
static int sock_read_big(struct gr_api_client *c, struct client_msg *msg, bool wait) {
	size_t off = 0;
	// Its header is whole: it was parsed in rbuf before it came here.
	(void)sock_hdr_parse(c, c->msg_buf, c->big_have, &msg->hdr, &off);
	size_t total = off + msg->hdr.payload_len;
	while (c->big_have < total) {
		ssize_t n = sock_read(c, c->msg_buf + c->big_have, total - c->big_have, wait);
		if (n < 0)
			return (int)n;
		c->big_have += (size_t)n;
	}
	c->big_have = 0;
	msg->payload = c->msg_buf + off;
	sock_msg_done(c, &msg->hdr);
	return 0;
}

int client_sock_next_msg(struct gr_api_client *c, struct client_msg *msg, bool wait) {
	if (c->big_have > 0)
		return sock_read_big(c, msg, wait);
	for (;;) {
		size_t avail = c->rbuf_tail - c->rbuf_head, off;
		if (sock_hdr_parse(c, c->rbuf + c->rbuf_head, avail, &msg->hdr, &off)) {
			int ret = client_check_hdr(c, &msg->hdr);
			if (ret < 0)
				return ret;
			size_t total = off + msg->hdr.payload_len;
			if (avail >= total) {
				msg->payload = c->rbuf + c->rbuf_head + off;
				c->rbuf_head += total;
				sock_msg_done(c, &msg->hdr);
				return 0;
			}
			if (total > CLIENT_READAHEAD_LEN) {
				// Too big for rbuf: its start (all that rbuf holds)
				// goes to msg_buf, and the rest is read behind it.
				memcpy(c->msg_buf, c->rbuf + c->rbuf_head, avail);
				c->big_have = avail;
				c->rbuf_head = 0;
				c->rbuf_tail = 0;
				return sock_read_big(c, msg, wait);
			}
		}
		// Incomplete: move the partial message to the front of rbuf, so
		// that the rest of it fits behind, and read ahead.
		if (c->rbuf_head > 0) {
			memmove(c->rbuf, c->rbuf + c->rbuf_head, avail);
			c->rbuf_head = 0;
			c->rbuf_tail = avail;
		}
		ssize_t n = sock_read(c, c->rbuf + avail, CLIENT_READAHEAD_LEN - avail, wait);
		if (n < 0)
			return (int)n;
		c->rbuf_tail += (size_t)n;
	}
}
