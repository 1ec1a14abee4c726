// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// A DPDK application on libgr_api_server that names its module and fills
// the handler registry to GR_API_SERVER_HANDLERS_MAX (embed_types.h): its
// own requests (a trailing array in and out, a handler that tries to
// unregister itself, one that SIGUSR1 unregisters), then fillers, after
// the server's start, until the registry refuses (ENOSPC). Run as
// test/lib.sh's start_daemon runs a daemon: it serves until SIGTERM or
// SIGINT, then stops the server and exits 0.
//
// usage: embed_types_app -s SOCK [-- EAL args]

#include "embed_types.h"

#include <gr_api_server.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// EAL arguments of ours, the program name among them.
#define EAL_OWN_ARGS 7
// Longest filler name: "EMBED_TYPES_FILL_" and three digits.
#define FILL_NAME_LEN 24

static struct gr_api_out sums(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	const struct embed_types_sums_req *req = request;
	struct embed_types_sums_resp *resp;
	uint32_t resp_len;
	uint64_t sum = 0;

	(void)ctx;
	if (GR_API_REQ_ARRAY_CHECK(req, len, n, values) < 0)
		return gr_api_out(EINVAL, 0, NULL);
	if (GR_API_RESP_ARRAY_ALLOC(resp, req->n, sums, resp_len) == NULL)
		return gr_api_out(errno, 0, NULL);
	resp->n = req->n;
	for (uint32_t i = 0; i < req->n; i++) {
		sum += req->values[i];
		resp->sums[i] = sum;
	}
	return gr_api_out(0, resp_len, resp);
}
GR_API_HANDLER(EMBED_TYPES_SUMS, sums);

static struct gr_api_out
unregister_self(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(
		(uint32_t)-gr_api_server_handler_unregister(EMBED_TYPES_UNREGISTER_SELF),
		0,
		NULL
	);
}
GR_API_HANDLER(EMBED_TYPES_UNREGISTER_SELF, unregister_self);

static struct gr_api_out nothing(const void *request, uint32_t len, struct gr_api_ctx *ctx) {
	(void)request;
	(void)len;
	(void)ctx;
	return gr_api_out(0, 0, NULL);
}
GR_API_HANDLER(EMBED_TYPES_VICTIM, nothing);

static struct gr_api_handler fillers[GR_API_SERVER_HANDLERS_MAX];
static char filler_names[GR_API_SERVER_HANDLERS_MAX][FILL_NAME_LEN];

// Register fillers until the registry is full. Returns how many, or -1.
static int fill(void) {
	int ret;

	for (unsigned i = 0; i < GR_API_SERVER_HANDLERS_MAX; i++) {
		snprintf(filler_names[i], sizeof(filler_names[i]), "EMBED_TYPES_FILL_%u", i);
		fillers[i] = (struct gr_api_handler){
			.name = filler_names[i],
			.request_type = EMBED_TYPES_FILL(i),
			.callback = nothing,
		};
		ret = gr_api_server_handler_register(&fillers[i]);
		if (ret == -ENOSPC)
			return (int)i;
		if (ret < 0)
			return -1;
	}
	return -1;
}

int main(int argc, char **argv) {
	char runtime_dir[PATH_MAX], **eal;
	const char *sock = NULL;
	struct gr_api_server_conf conf;
	int i, n = 0, ret, sig;
	sigset_t signals;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-s") != 0 || i + 1 == argc) {
			fprintf(stderr, "usage: embed_types_app -s SOCK [-- EAL args]\n");
			return EXIT_FAILURE;
		}
		sock = argv[++i];
	}
	// The user's EAL arguments after ours, and the NULL.
	eal = calloc(EAL_OWN_ARGS + argc + 1, sizeof(*eal));
	if (sock == NULL || eal == NULL) {
		fprintf(stderr, "usage: embed_types_app -s SOCK [-- EAL args]\n");
		free(eal);
		return EXIT_FAILURE;
	}
	// Every thread made from here on inherits the blocked signals: only
	// sigwait() takes them.
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);

	eal[n++] = argv[0];
	eal[n++] = "--no-huge";
	eal[n++] = "--no-shconf";
	eal[n++] = "-m";
	eal[n++] = "64";
	eal[n++] = "--no-pci";
	eal[n++] = "--no-telemetry";
	for (i++; i < argc; i++)
		eal[n++] = argv[i];
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "embed_types_app: EAL init failed: %s\n", rte_strerror(rte_errno));
		free(eal);
		return EXIT_FAILURE;
	}
	ret = gr_api_server_module_name(EMBED_TYPES_MODULE, EMBED_TYPES_MODULE_NAME);
	if (ret < 0)
		fprintf(stderr, "embed_types_app: cannot name the module: %s\n", strerror(-ret));
	gr_api_server_conf_init(&conf);
	conf.sock_path = sock;
	conf.sock_mode = 0600;
	conf.spin_us = 0;
	conf.log_type = "embed_types_app";
	if (ret == 0)
		ret = gr_api_server_start(&conf);
	if (ret < 0) {
		fprintf(stderr, "embed_types_app: cannot serve %s: %s\n", sock, strerror(-ret));
	} else if (fill() < 0) {
		fprintf(stderr, "embed_types_app: the registry took no filler or all of them\n");
		ret = -1;
		gr_api_server_stop();
	} else {
		for (;;) {
			if (sigwait(&signals, &sig) != 0)
				continue;
			if (sig != SIGUSR1)
				break;
			ret = gr_api_server_handler_unregister(EMBED_TYPES_VICTIM);
			printf("embed_types_app: EMBED_TYPES_VICTIM unregistered: %d\n", ret);
			fflush(stdout);
		}
		ret = 0;
		gr_api_server_stop();
	}
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(runtime_dir);
	free(eal);
	return ret == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
