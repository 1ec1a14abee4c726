// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Transport choice against a daemon that offers no channel (--no-shm) and
// against one that does: auto falls back to the socket and says why, a
// forced shm (options or GR_API_TRANSPORT=shm) fails with ENOTSUP, a forced
// socket stays on the socket, and auto gets the channel when there is one.
//
// usage: shm_attach_fallback SOCK no-shm|shm (run by shm_attach_fallback.sh)

#include "check.h"

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRANSPORT_ENV "GR_API_TRANSPORT"
// Bound of the wait for closed clients' channels to end, and its period.
#define CHANNELS_GONE_NS (2 * 1000000000ull)
#define CHANNELS_POLL_US 10000

static const char *sock_path;

static const char *transport_name(enum gr_api_transport t) {
	switch (t) {
	case GR_API_TRANSPORT_AUTO:
		return "auto";
	case GR_API_TRANSPORT_SOCKET:
		return "socket";
	case GR_API_TRANSPORT_SHM:
		return "shm";
	}
	return "?";
}

// Set GR_API_TRANSPORT, or unset it with NULL.
static void set_env(const char *value) {
	if (value == NULL)
		CHECK(unsetenv(TRANSPORT_ENV) == 0, "unsetenv: %s", strerror(errno));
	else
		CHECK(setenv(TRANSPORT_ENV, value, 1) == 0, "setenv: %s", strerror(errno));
}

static struct gr_api_client *connect_with(enum gr_api_transport t) {
	struct gr_api_client_opts opts = {
		.transport = t,
		.spin_us = -1,
		.version = "shm_attach_fallback",
	};
	return gr_api_client_connect_opts(sock_path, &opts);
}

// ping and ping2 answered, ping2 with its echo.
static void check_serves(struct gr_api_client *c, const char *what) {
	struct gr_ping2 req, resp;

	long len = gr_api_client_send_recv_len(c, GR_PING, 0, NULL, NULL);
	CHECK(len == 0, "%s: GR_PING: %ld: %s", what, len, strerror(errno));
	for (size_t i = 0; i < sizeof(req.payload); i++)
		req.payload[i] = (char)(i * 5 + 1);
	long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	CHECK(id > 0, "%s: send GR_PING2: %s", what, strerror(errno));
	len = gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));
	CHECK(len == (long)sizeof(resp), "%s: GR_PING2: %ld: %s", what, len, strerror(errno));
	CHECK(memcmp(&req, &resp, sizeof(req)) == 0, "%s: GR_PING2 echo differs", what);
}

// Connect as told and expect the given transport, served.
static void expect_transport(
	enum gr_api_transport opt,
	const char *env,
	enum gr_api_transport want,
	const char *what
) {
	set_env(env);
	struct gr_api_client *c = connect_with(opt);
	CHECK(c != NULL, "%s: connect: %s", what, strerror(errno));
	enum gr_api_transport got = gr_api_client_transport(c);
	const char *reason = gr_api_client_transport_reason(c);
	CHECK(got == want,
	      "%s: transport %s, expected %s (reason '%s')",
	      what,
	      transport_name(got),
	      transport_name(want),
	      reason);
	CHECK(reason != NULL, "%s: NULL reason", what);
	if (want == GR_API_TRANSPORT_SHM)
		CHECK(reason[0] == '\0', "%s: on shm with a reason: '%s'", what, reason);
	else
		CHECK(reason[0] != '\0', "%s: on the socket without a reason", what);
	check_serves(c, what);
	printf("%s: %s%s%s%s: ok\n",
	       what,
	       transport_name(got),
	       reason[0] != '\0' ? " ('" : "",
	       reason,
	       reason[0] != '\0' ? "')" : "");
	CHECK(gr_api_client_disconnect(c) == 0, "%s: disconnect: %s", what, strerror(errno));
	set_env(NULL);
}

static void expect_refused(enum gr_api_transport opt, const char *env, int err, const char *what) {
	set_env(env);
	errno = 0;
	struct gr_api_client *c = connect_with(opt);
	int got = errno;
	CHECK(c == NULL,
	      "%s: connected (transport %s)",
	      what,
	      transport_name(gr_api_client_transport(c)));
	CHECK(got == err, "%s: errno %d (%s), expected %s", what, got, strerror(got), strerror(err)
	);
	printf("%s: %s: ok\n", what, strerror(got));
	set_env(NULL);
}

// GR_SHM_DAEMON_INFO's backings and GR_SHM_STATS's channel count, asked on
// a socket-only connection.
static void daemon_state(uint32_t *backings, uint32_t *channels) {
	struct gr_shm_daemon_info info;
	struct gr_shm_stats_resp stats;

	set_env(NULL);
	struct gr_api_client *c = connect_with(GR_API_TRANSPORT_SOCKET);
	CHECK(c != NULL, "control client: connect: %s", strerror(errno));
	long id = gr_api_client_send(c, GR_SHM_DAEMON_INFO, 0, NULL);
	CHECK(id > 0, "send GR_SHM_DAEMON_INFO: %s", strerror(errno));
	long len = gr_api_client_recv_into(c, (uint32_t)id, &info, sizeof(info));
	CHECK(len == (long)sizeof(info), "GR_SHM_DAEMON_INFO: %ld: %s", len, strerror(errno));
	id = gr_api_client_send(c, GR_SHM_STATS, 0, NULL);
	CHECK(id > 0, "send GR_SHM_STATS: %s", strerror(errno));
	len = gr_api_client_recv_into(c, (uint32_t)id, &stats, sizeof(stats));
	CHECK(len == (long)sizeof(stats), "GR_SHM_STATS: %ld: %s", len, strerror(errno));
	*backings = info.backings;
	*channels = stats.channels;
	gr_api_client_disconnect(c);
}

static void daemon_without_channels(void) {
	uint32_t backings, channels;

	daemon_state(&backings, &channels);
	CHECK(backings == 0, "a --no-shm daemon offers backings %#x", backings);

	expect_transport(GR_API_TRANSPORT_AUTO, NULL, GR_API_TRANSPORT_SOCKET, "auto, no channel");
	expect_transport(GR_API_TRANSPORT_AUTO, "auto", GR_API_TRANSPORT_SOCKET, "env auto");
	expect_refused(GR_API_TRANSPORT_SHM, NULL, ENOTSUP, "opts shm, no channel");
	expect_refused(GR_API_TRANSPORT_AUTO, "shm", ENOTSUP, "env shm, no channel");
	expect_transport(GR_API_TRANSPORT_AUTO, "socket", GR_API_TRANSPORT_SOCKET, "env socket");
}

static void daemon_with_channels(void) {
	uint32_t backings, channels;

	daemon_state(&backings, &channels);
	CHECK(backings & GR_SHM_BACKING_MEMFD, "the daemon offers backings %#x", backings);
	CHECK(channels == 0, "%u channels before any client", channels);

	expect_transport(GR_API_TRANSPORT_AUTO, NULL, GR_API_TRANSPORT_SHM, "auto");
	expect_transport(GR_API_TRANSPORT_SHM, NULL, GR_API_TRANSPORT_SHM, "opts shm");
	expect_transport(GR_API_TRANSPORT_AUTO, "shm", GR_API_TRANSPORT_SHM, "env shm");
	expect_transport(GR_API_TRANSPORT_AUTO, "socket", GR_API_TRANSPORT_SOCKET, "env socket");
	// Options win over the environment.
	expect_transport(GR_API_TRANSPORT_SOCKET, "shm", GR_API_TRANSPORT_SOCKET, "opts over env");
	expect_refused(GR_API_TRANSPORT_AUTO, "bogus", EINVAL, "env bogus");

	// A client kept on the socket holds no channel in the daemon.
	set_env("socket");
	struct gr_api_client *c = connect_with(GR_API_TRANSPORT_AUTO);
	CHECK(c != NULL, "env socket: connect: %s", strerror(errno));
	// The channels of the clients above end when the daemon sees their
	// sockets close, which may come after this connect: wait for that.
	uint64_t deadline = monotonic_ns() + CHANNELS_GONE_NS;
	do {
		daemon_state(&backings, &channels);
		if (channels == 0)
			break;
		usleep(CHANNELS_POLL_US);
	} while (monotonic_ns() < deadline);
	CHECK(channels == 0, "a socket client holds %u channels", channels);
	check_serves(c, "env socket, channels counted");
	gr_api_client_disconnect(c);
	set_env(NULL);
}

int main(int argc, char **argv) {
	CHECK(argc == 3, "usage: %s SOCK no-shm|shm", argv[0]);
	sock_path = argv[1];
	watchdog_start(TEST_WATCHDOG_S);

	if (strcmp(argv[2], "no-shm") == 0)
		daemon_without_channels();
	else if (strcmp(argv[2], "shm") == 0)
		daemon_with_channels();
	else
		CHECK(false, "mode '%s' is not no-shm or shm", argv[2]);
	return EXIT_SUCCESS;
}
