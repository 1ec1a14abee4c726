// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A program of the RFC's ping2_perf shape, for the test of a Grout program
// relinked against libgr_api_client (test/install_consumer.sh): Grout's
// headers, names and calls only, built unchanged with
//   cc ping2_perf.c $(pkg-config --cflags --libs gr_api_client)
// COUNT GR_PING2 round trips, timed with Grout's clock, as calls/s. The
// library picks the channel; GR_API_TRANSPORT=socket forces the socket.
//
// usage: ping2_perf [-s SOCK] [-n COUNT]
//        SOCK: $GROUT_SOCK_PATH, else GR_DEFAULT_SOCK_PATH

// clang-format off
#include <gr_api_client_impl.h>
// clang-format on
#include <gr_api.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(const char *prog) {
	fprintf(stderr, "Usage: %s [-s SOCK] [-n COUNT]\n", prog);
	fprintf(stderr,
		"  -s SOCK    API socket path (default: $GROUT_SOCK_PATH, else %s)\n",
		GR_DEFAULT_SOCK_PATH);
	fprintf(stderr, "  -n COUNT   number of GR_PING2 calls (default: 100000)\n");
}

int main(int argc, char **argv) {
	const char *sock_path = getenv("GROUT_SOCK_PATH");
	unsigned long count = 100000;
	struct gr_api_client *c;
	gr_clock_ns_t start;
	double seconds;
	int ret = 0;
	int o;

	while ((o = getopt(argc, argv, "s:n:h")) != -1) {
		switch (o) {
		case 's':
			sock_path = optarg;
			break;
		case 'n':
			count = strtoul(optarg, NULL, 10);
			break;
		default:
			usage(argv[0]);
			return o == 'h' ? EXIT_SUCCESS : EXIT_FAILURE;
		}
	}
	if (sock_path == NULL)
		sock_path = GR_DEFAULT_SOCK_PATH;

	c = gr_api_client_connect(sock_path);
	if (c == NULL) {
		perror("gr_api_client_connect");
		return EXIT_FAILURE;
	}
	start = gr_clock_ns();
	for (unsigned long i = 0; i < count && ret == 0; i++)
		ret = gr_api_client_ping2(c);
	seconds = (double)(gr_clock_ns() - start) / (double)GR_NS_PER_S;
	if (ret < 0)
		fprintf(stderr, "GR_PING2: %s\n", strerror(-ret));
	else
		printf("%lu calls in %.3f s: %.0f calls/s\n",
		       count,
		       seconds,
		       (double)count / seconds);
	gr_api_client_disconnect(c);
	return ret < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
