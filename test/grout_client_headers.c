// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A Grout client program, written as Grout's own are: it includes
// gr_api_client_impl.h first and gr_api.h, and nothing else, and relies on
// what Grout's headers include for it: alignas() and static_assert()
// (<stdalign.h>, <assert.h>: not keywords before C23), getopt(), the
// string calls, printf(), and gr_clock_raw(). Built with the
// compiler's default standard (gcc 12: gnu17) and implicit declarations as
// errors, it builds only if our headers bring what Grout's bring. Then it
// makes COUNT GR_PING2 round trips from a 64-byte aligned request, checks
// the echo, and times them with Grout's clock.
//
// usage: grout_client_headers [-n COUNT] SOCK (under with_daemon.sh)

// clang-format off
#include <gr_api_client_impl.h>
// clang-format on
#include <gr_api.h>

// A cache line, as the RFC's ping2_perf aligns its request to.
#define REQ_ALIGN 64

static_assert(sizeof(struct gr_ping2) == GR_PING2_LEN, "a GR_PING2 payload is 64 bytes");
static_assert(alignof(struct gr_ping2) <= REQ_ALIGN, "a request fits its alignment");

int main(int argc, char **argv) {
	alignas(REQ_ALIGN) struct gr_ping2 req;
	unsigned long count = 1000;
	struct gr_api_client *c;
	struct timespec start;
	gr_clock_ns_t elapsed;
	int o;

	while ((o = getopt(argc, argv, "n:")) != -1) {
		if (o != 'n') {
			fprintf(stderr, "usage: %s [-n COUNT] SOCK\n", argv[0]);
			return EXIT_FAILURE;
		}
		count = strtoul(optarg, NULL, 10);
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: %s [-n COUNT] SOCK\n", argv[0]);
		return EXIT_FAILURE;
	}
	assert(((uintptr_t)&req % REQ_ALIGN) == 0);
	memset(&req, 0, sizeof(req));
	snprintf(req.payload, sizeof(req.payload), "%s", "grout_client_headers");

	c = gr_api_client_connect(argv[optind]);
	if (c == NULL) {
		perror("gr_api_client_connect");
		return EXIT_FAILURE;
	}
	start = gr_clock_raw();
	for (unsigned long i = 0; i < count; i++) {
		void *rx = NULL;
		int ret = gr_api_client_send_recv(c, GR_PING2, sizeof(req), &req, &rx);

		if (ret < 0 || rx == NULL || memcmp(rx, &req, sizeof(req)) != 0) {
			fprintf(stderr,
				"GR_PING2 %lu: %s\n",
				i,
				ret < 0 ? strerror(-ret) : "echo differs");
			free(rx);
			gr_api_client_disconnect(c);
			return EXIT_FAILURE;
		}
		free(rx);
	}
	elapsed = gr_clock_ns() - ((gr_clock_ns_t)start.tv_sec * GR_NS_PER_S + start.tv_nsec);
	printf("%lu GR_PING2 from an aligned request, in %lld ns: ok\n", count, (long long)elapsed);
	gr_api_client_disconnect(c);
	return EXIT_SUCCESS;
}
