// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// libFuzzer harness of the daemon's socket side: the bytes of one input are
// what one client writes on its connection, then it shuts its side down.
// They go through the real code of the server library, started as an
// application starts it (gr_api_server_start() on the harness's base): the
// accept and admission of server/sock_listen.c and server/sock_admit.c, the
// connection state machine and parser of server/sock.c (its reads and
// writes on a real accepted Unix socket, in a libevent loop), the responses
// and events of server/sock_transport.c, header checks
// and dispatch (server/api.c), and every handler (server/handlers_*.c, the
// event requests of server/handlers_event.c among them, the channel handlers:
// attach (server/channel.c), stats and channel list (server/channel_stats.c),
// with a poller running, the program's info (server/handlers_info.c) and the
// type list (server/handlers_types.c)). EAL runs without hugepages and
// without shared files, so attach creates memfd channels; the descriptors
// it passes are received and closed here.
//
// The harness reads every response the daemon writes and checks its framing
// (a 12-byte header, a payload within GR_API_MAX_MSG_LEN); the daemon must
// end the connection once the input is consumed and the client shut down.
// Anything else, or any sanitizer report, is a crash. One exception, by
// Grout's rule: after Grout's GR_EVENT_SUBSCRIBE, raw 16-byte-header events
// mix with the responses and the stream cannot be parsed, so an input that
// holds that request type anywhere is read without the framing check.

#include <gr_api_server.h>

#include <gr_api.h>
#include <shmchan.h>

#include <rte_eal.h>
#include <rte_log.h>

#include <event2/event.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// Turns of the event loop one input may take: each serves at least one
// request or flushes output, so a legal input ends far sooner. More is a hang.
#define FUZZ_LOOP_MAX 100000
// A client receives at most this much per recvmsg; responses are reframed.
#define FUZZ_RX_CHUNK (64 * 1024)

static struct event_base *base;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char sock_dir[] = "/tmp/sock_dispatch_fuzz.XXXXXX";

// The client side of one input: the stream of responses, parsed as it comes.
struct client {
	int fd;
	bool raw_events; // the input may subscribe in Grout's framing
	uint8_t hdr_buf[sizeof(struct gr_api_response)];
	size_t hdr_got;
	uint64_t payload_left;
};

static void __attribute__((noreturn)) die(const char *what) {
	fprintf(stderr, "sock_dispatch_fuzz: %s: %s\n", what, strerror(errno));
	abort();
}

static void cleanup(void) {
	gr_api_server_stop();
	rmdir(sock_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
	struct gr_api_server_conf conf;
	char *eal_argv[] = {
		(*argv)[0],
		"--no-huge",
		"--no-shconf",
		"-m",
		"64",
		"--no-pci",
		"--no-telemetry",
		"-l",
		"0",
		"--log-level=*:error",
		NULL,
	};

	(void)argc;
	if (rte_eal_init((int)(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1, eal_argv) < 0)
		die("rte_eal_init");
	// The daemon logs every connection: at thousands of inputs a second
	// that is most of the time spent. Errors only.
	rte_log_set_global_level(RTE_LOG_ERR);
	base = event_base_new();
	if (base == NULL)
		die("event_base_new");
	if (mkdtemp(sock_dir) == NULL)
		die("mkdtemp");
	snprintf(sock_path, sizeof(sock_path), "%s/s", sock_dir);
	gr_api_server_conf_init(&conf);
	conf.sock_path = sock_path;
	conf.sock_mode = 0600;
	conf.spin_us = 0;
	conf.file_prefix = "sock_dispatch_fuzz";
	conf.base = base;
	if (gr_api_server_start(&conf) < 0)
		die("gr_api_server_start");
	atexit(cleanup);
	return 0;
}

static int client_connect(void) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		die("socket");
	memcpy(addr.sun_path, sock_path, sizeof(addr.sun_path));
	// The listener's backlog takes the connection at once.
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		die("connect");
	return fd;
}

// Parse n bytes of the response stream.
static void client_parse(struct client *c, const uint8_t *p, size_t n) {
	if (c->raw_events)
		return;
	while (n > 0) {
		if (c->payload_left > 0) {
			size_t take = n < c->payload_left ? n : (size_t)c->payload_left;
			c->payload_left -= take;
			p += take;
			n -= take;
			continue;
		}
		size_t take = sizeof(c->hdr_buf) - c->hdr_got;
		if (take > n)
			take = n;
		memcpy(c->hdr_buf + c->hdr_got, p, take);
		c->hdr_got += take;
		p += take;
		n -= take;
		if (c->hdr_got < sizeof(c->hdr_buf))
			continue;
		struct gr_api_response resp;
		memcpy(&resp, c->hdr_buf, sizeof(resp));
		if (resp.payload_len > GR_API_MAX_MSG_LEN) {
			fprintf(stderr, "response of %u bytes of payload\n", resp.payload_len);
			abort();
		}
		c->payload_left = resp.payload_len;
		c->hdr_got = 0;
	}
}

// Read what the daemon wrote. Returns 0 at EOF, 1 otherwise.
static int client_read(struct client *c, uint8_t *buf) {
	for (;;) {
		int fds[SHMCHAN_FDS_MAX];
		unsigned n_fds = 0;
		long n = shmchan_recv_fds(c->fd, buf, FUZZ_RX_CHUNK, fds, SHMCHAN_FDS_MAX, &n_fds);
		for (unsigned i = 0; i < n_fds; i++)
			close(fds[i]);
		if (n == 0 || n == -ECONNRESET)
			return 0;
		if (n == -EAGAIN)
			return 1;
		if (n < 0) {
			errno = (int)-n;
			die("recvmsg");
		}
		client_parse(c, buf, (size_t)n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	static uint8_t rx[FUZZ_RX_CHUNK];
	const uint32_t grout_subscribe = GR_EVENT_SUBSCRIBE;
	struct client c = {
		.fd = client_connect(),
		.raw_events = memmem(data, size, &grout_subscribe, sizeof(grout_subscribe)) != NULL,
	};
	size_t sent = 0;
	bool open = true;
	unsigned loops;

	for (loops = 0; open && loops < FUZZ_LOOP_MAX; loops++) {
		// Write what the socket takes; shut down once everything went.
		if (sent < size) {
			ssize_t n =
				send(c.fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n > 0)
				sent += (size_t)n;
			else if (n < 0 && errno != EAGAIN && errno != EPIPE && errno != ECONNRESET)
				die("send");
			else if (n < 0)
				sent = size; // the daemon closed: the rest is never read
			if (sent == size)
				shutdown(c.fd, SHUT_WR);
		} else if (size == 0 && loops == 0) {
			shutdown(c.fd, SHUT_WR);
		}
		event_base_loop(base, EVLOOP_NONBLOCK);
		open = client_read(&c, rx) != 0;
	}
	// A response may be cut short: a client that shuts down in the middle
	// of a request is dropped without its pending output.
	if (open) {
		fprintf(stderr, "the daemon did not end a connection whose client shut down\n");
		abort();
	}
	close(c.fd);
	// Let the daemon see the close of a connection it had not ended yet.
	event_base_loop(base, EVLOOP_NONBLOCK);
	return 0;
}
