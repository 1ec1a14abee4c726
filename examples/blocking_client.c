// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A plain blocking client of shmchand: connect (the shared-memory channel
// when it can be had, else the socket), ping, a 64-byte echo, the daemon's
// info, and the channel list, a stream. Grout's calls (gr_api.h: ping,
// send_recv, stream_foreach) beside shmchan's (gr_api_client.h: recv_into,
// the transport). Every call waits at most the library's timeout (10 s,
// GR_API_TIMEOUT_MS). Exits 1 on any failure, saying why.
//
// usage: blocking_client [SOCK]
// build: cc blocking_client.c $(pkg-config --cflags --libs gr_api_client)

#include <gr_api.h>
#include <gr_api_client.h>
#include <gr_shm.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
	fprintf(stderr, "blocking_client: %s: %s\n", what, strerror(errno));
	return EXIT_FAILURE;
}

int main(int argc, char **argv) {
	const char *sock = argc > 1 ? argv[1] : GR_API_DEFAULT_SOCK_PATH;

	struct gr_api_client *c = gr_api_client_connect(sock);
	if (c == NULL) {
		// No handle, but the reason in words.
		fprintf(stderr, "blocking_client: %s\n", gr_api_client_last_error());
		return EXIT_FAILURE;
	}
	int shm = gr_api_client_transport(c) == GR_API_TRANSPORT_SHM;
	printf("connected to %s on the %s", sock, shm ? "shared-memory channel" : "socket");
	if (gr_api_client_transport_reason(c)[0] != '\0')
		printf(" (%s)", gr_api_client_transport_reason(c));
	printf("\n");

	// A request with no payload, answered with none.
	if (gr_api_client_ping(c) < 0)
		return fail("GR_PING");

	// A 64-byte echo, received into a buffer of ours.
	struct gr_ping2 req, resp;
	for (size_t i = 0; i < sizeof(req.payload); i++)
		req.payload[i] = (char)i;
	long id = gr_api_client_send(c, GR_PING2, sizeof(req), &req);
	if (id < 0)
		return fail("send GR_PING2");
	long len = gr_api_client_recv_into(c, (uint32_t)id, &resp, sizeof(resp));
	if (len < 0)
		return fail("recv GR_PING2");
	if (len != (long)sizeof(resp) || memcmp(&req, &resp, sizeof(resp)) != 0) {
		fprintf(stderr, "blocking_client: GR_PING2: the echo differs\n");
		return EXIT_FAILURE;
	}
	printf("ping and ping2: ok\n");

	// A response the library allocates (free it), at least as long as
	// GR_SHM_DAEMON_INFO's response struct (else EMSGSIZE).
	struct gr_shm_daemon_info *info = NULL;
	if (gr_api_client_send_recv(c, GR_SHM_DAEMON_INFO, 0, NULL, (void **)&info) < 0)
		return fail("GR_SHM_DAEMON_INFO");
	printf("daemon pid %d, %u poller(s)\n", (int)info->pid, info->pollers);
	free(info);

	// A stream: a loop over its responses, each freed by the loop.
	const struct gr_shm_channel_info *ch;
	unsigned channels = 0;
	int ret;
	gr_api_client_stream_foreach (ch, ret, c, GR_SHM_CHANNEL_LIST, 0, NULL) {
		printf("channel %.*s of pid %d\n",
		       (int)sizeof(ch->name),
		       ch->name,
		       (int)ch->client_pid);
		channels++;
	}
	if (ret < 0)
		return fail("GR_SHM_CHANNEL_LIST");
	printf("%u channel(s) attached\n", channels);
	if (shm && channels == 0) {
		fprintf(stderr, "blocking_client: on a channel, but the daemon lists none\n");
		return EXIT_FAILURE;
	}
	if (gr_api_client_disconnect(c) < 0)
		return fail("disconnect");
	return EXIT_SUCCESS;
}
