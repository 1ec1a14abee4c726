// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Connecting, requests and errors, shared by the commands.

#include "cli.h"
#include "escape.h"

#include <gr_shm.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// Responses of a stream room is made for at first, then doubled.
#define STREAM_INITIAL_ITEMS 16
// Bytes of a stream's responses a command keeps at most: 16 times the
// largest list a daemon sends (1,024 clients of a few hundred bytes each),
// and little for a tool. A daemon that streams more is not one to believe.
#define STREAM_MAX_BYTES (16u << 20)
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

static const char *sock_path(const struct cli_opts *opts) {
	return opts->sock_path != NULL ? opts->sock_path : GR_API_DEFAULT_SOCK_PATH;
}

int cli_exit_status(int err) {
	switch (err) {
	case 0:
		return EXIT_SUCCESS;
	case ENOENT:
	case ECONNREFUSED:
	case ECONNRESET:
	case EPIPE:
	case ENOTCONN:
		return EX_UNAVAILABLE;
	case EACCES:
	case EPERM:
		return EX_NOPERM;
	case EBADMSG:
	case EPROTO:
	case ENOBUFS:
	case ENOTSUP:
	case EMSGSIZE:
		return EX_PROTOCOL;
	case ETIMEDOUT:
		return EX_TEMPFAIL;
	case ENOMEM:
		return EX_OSERR;
	case EINVAL:
		return EX_CONFIG;
	}
	return EX_SOFTWARE;
}

// A hint for the error of a request (a failed connect prints the library's
// reason instead: cli_connect()).
static const char *hint(int err) {
	switch (err) {
	case ECONNRESET:
	case EPIPE:
		return "the daemon closed the connection";
	case EPERM:
		return "the daemon refused the request";
	case EBADMSG:
		return "the daemon speaks another API version: use the shmchanctl of its release";
	case ENOTSUP:
		return "the daemon does not serve this request";
	case EPROTO:
		return "the daemon broke the protocol: an answer to no request, or a list longer "
		       "than any daemon sends";
	case ENOBUFS:
		return "the daemon sent more answers than were asked for";
	case ETIMEDOUT:
		return "no whole answer within the timeout: GR_API_TIMEOUT_MS, 10 s by default";
	}
	return NULL;
}

int cli_fail(const struct cli_opts *opts, const char *what, int err) {
	const char *h = hint(err);

	fprintf(stderr,
		"shmchanctl: %s %s: %s%s%s%s\n",
		what,
		sock_path(opts),
		strerror(err),
		h != NULL ? " (" : "",
		h != NULL ? h : "",
		h != NULL ? ")" : "");
	return cli_exit_status(err);
}

struct gr_api_client *
cli_connect(const struct cli_opts *opts, enum gr_api_transport transport, int *status) {
	struct gr_api_client_opts copts = GR_API_CLIENT_OPTS_INIT;
	struct gr_api_client *c;

	copts.transport = transport;
	copts.version = "shmchanctl " SHMCHAN_VERSION;
	c = gr_api_client_connect_opts(sock_path(opts), &copts);
	if (c == NULL) {
		int err = errno;

		// The library says why every failed connect failed, naming the
		// path and what to change (for a permission, the socket's mode,
		// owner and group against this process's ids): more than
		// strerror() and a hint could. It may quote the daemon (the
		// reason a channel was refused): escaped.
		fputs("shmchanctl: cannot connect: ", stderr);
		escape_fputs(gr_api_client_last_error(), stderr);
		fputc('\n', stderr);
		*status = cli_exit_status(err);
	}
	return c;
}

// Copy a response payload into a struct of resp_len bytes.
static void fit(void *resp, size_t resp_len, const void *payload, size_t len) {
	size_t n = len < resp_len ? len : resp_len;

	if (n > 0)
		memcpy(resp, payload, n);
	memset((char *)resp + n, 0, resp_len - n);
}

int cli_request(struct gr_api_client *c, uint32_t type, void *resp, size_t resp_len) {
	void *payload = NULL;
	long len;

	len = gr_api_client_send_recv_len(c, type, 0, NULL, &payload);
	if (len < 0)
		return -errno;
	fit(resp, resp_len, payload, (size_t)len);
	free(payload);
	return 0;
}

int cli_stream(struct gr_api_client *c, uint32_t type, size_t resp_len, void **items, size_t *n) {
	return cli_stream_req(c, type, 0, NULL, resp_len, items, n);
}

static uint64_t now_ns(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

// Wait for the next message of c until deadline_ns (0: none), the way an
// event loop does (gr_api_client(3), EVENT LOOPS). Returns 0 (look again)
// or -errno (-ETIMEDOUT past the deadline).
static int stream_wait(struct gr_api_client *c, uint64_t deadline_ns) {
	struct pollfd pfd = {.fd = gr_api_client_fd(c), .events = POLLIN};
	int ms = -1, ready;

	if (pfd.fd < 0)
		return -errno;
	if (deadline_ns != 0) {
		uint64_t now = now_ns();
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		ms = (int)((deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS);
	}
	ready = gr_api_client_poll_prepare(c);
	if (ready < 0)
		return -errno;
	if (ready == 0 && poll(&pfd, 1, ms) < 0 && errno != EINTR)
		return -errno;
	if (gr_api_client_poll_done(c) < 0)
		return -errno;
	return 0;
}

int cli_stream_req(
	struct gr_api_client *c,
	uint32_t type,
	size_t req_len,
	const void *req,
	size_t resp_len,
	void **items,
	size_t *n
) {
	int timeout_ms = gr_api_client_timeout_ms(c);
	size_t count = 0, cap = 0;
	char *all = NULL, *grown;
	uint64_t deadline_ns = 0;
	void *payload;
	long id, len;
	int ret = 0;

	id = gr_api_client_send(c, type, req_len, req);
	if (id < 0)
		return -errno;
	// One timeout for the whole stream, not one per response: a daemon
	// that never ends it must not keep the command.
	if (timeout_ms != GR_API_TIMEOUT_NONE)
		deadline_ns = now_ns() + (uint64_t)timeout_ms * NS_PER_MS;
	for (;;) {
		len = gr_api_client_try_recv(c, (uint32_t)id, &payload);
		if (len < 0 && errno == EAGAIN) {
			ret = stream_wait(c, deadline_ns);
			if (ret < 0)
				break;
			continue;
		}
		if (len <= 0) {
			ret = len < 0 ? -errno : 0;
			break;
		}
		if ((count + 1) * resp_len > STREAM_MAX_BYTES) {
			free(payload);
			ret = -EPROTO;
			break;
		}
		if (count == cap) {
			cap = cap > 0 ? 2 * cap : STREAM_INITIAL_ITEMS;
			grown = realloc(all, cap * resp_len);
			if (grown == NULL) {
				free(payload);
				ret = -ENOMEM;
				break;
			}
			all = grown;
		}
		fit(all + count * resp_len, resp_len, payload, (size_t)len);
		free(payload);
		count++;
	}
	if (ret < 0) {
		free(all);
		return ret;
	}
	*items = all;
	*n = count;
	return 0;
}

const char *cli_channel_state(uint32_t state) {
	switch (state) {
	case GR_SHM_CHANNEL_NONE:
		return "-";
	case GR_SHM_CHANNEL_UP:
		return "UP";
	case GR_SHM_CHANNEL_FAULTED:
		return "FAULTED";
	case GR_SHM_CHANNEL_CLOSED:
		return "CLOSED";
	}
	return "UNKNOWN";
}

const char *cli_backing(uint32_t backing) {
	switch (backing) {
	case 0:
		return "-";
	case GR_SHM_BACKING_MEMFD:
		return "memfd";
	case GR_SHM_BACKING_MEMZONE:
		return "memzone";
	}
	return "unknown";
}
