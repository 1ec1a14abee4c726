// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The main() of the test applications on libgr_api_server (embed_app.h).

#include "embed_app.h"

#include <gr_api_server.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// EAL arguments of ours, the program name among them.
#define EAL_OWN_ARGS 9

static char dir[PATH_MAX];

const char *embed_app_dir(void) {
	return dir;
}

static int usage(const char *name) {
	fprintf(stderr, "usage: %s -s SOCK [-- EAL args]\n", name);
	return EXIT_FAILURE;
}

// Serve until SIGTERM or SIGINT. Returns 0 or the -errno of the start or
// the stop (printed).
static int
serve(const char *name, const char *sock, const sigset_t *stop, const struct embed_app_hooks *hooks
) {
	struct gr_api_server_conf conf;
	int ret, sig;

	gr_api_server_conf_init(&conf);
	conf.sock_path = sock;
	conf.sock_mode = 0600;
	conf.spin_us = 0;
	conf.log_type = name;
	ret = gr_api_server_start(&conf);
	if (ret < 0) {
		fprintf(stderr, "%s: cannot serve %s: %s\n", name, sock, strerror(-ret));
		return ret;
	}
	if (hooks != NULL && hooks->started != NULL && (ret = hooks->started()) < 0)
		fprintf(stderr, "%s: cannot start: %s\n", name, strerror(-ret));
	else
		while (sigwait(stop, &sig) != 0)
			;
	if (hooks != NULL && hooks->stopping != NULL)
		hooks->stopping();
	int stopped = gr_api_server_stop();
	if (stopped < 0) {
		fprintf(stderr, "%s: stop: %s\n", name, strerror(-stopped));
		if (ret == 0)
			ret = stopped;
	}
	if (hooks != NULL && hooks->stopped != NULL)
		hooks->stopped();
	// A test that checks what its clients see of a stopped server while
	// the application lives on (test/stream_server_stop.sh).
	if (getenv(EMBED_APP_LINGER_ENV) != NULL) {
		fprintf(stderr, "%s: server stopped, lingering until SIGTERM\n", name);
		while (sigwait(stop, &sig) != 0)
			;
	}
	return ret;
}

int embed_app_main(int argc, char **argv, const char *name, const struct embed_app_hooks *hooks) {
	char prefix[64], runtime_dir[PATH_MAX], sock_copy[PATH_MAX], **eal;
	const char *sock = NULL;
	int i, n = 0, ret;
	sigset_t stop;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-s") != 0 || i + 1 == argc)
			return usage(name);
		sock = argv[++i];
	}
	if (sock == NULL || strlen(sock) >= sizeof(sock_copy))
		return usage(name);
	snprintf(sock_copy, sizeof(sock_copy), "%s", sock);
	snprintf(dir, sizeof(dir), "%s", dirname(sock_copy));
	// The user's EAL arguments after ours, and the NULL.
	eal = calloc(EAL_OWN_ARGS + argc + 1, sizeof(*eal));
	if (eal == NULL)
		return usage(name);
	// Every thread made from here on (EAL's, the server's) inherits the
	// blocked signals: only sigwait() takes them.
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	snprintf(prefix, sizeof(prefix), "%s-%d", name, (int)getpid());
	eal[n++] = argv[0];
	eal[n++] = "--no-huge";
	eal[n++] = "--no-shconf";
	eal[n++] = "-m";
	eal[n++] = "64";
	eal[n++] = "--no-pci";
	eal[n++] = "--no-telemetry";
	eal[n++] = "--file-prefix";
	eal[n++] = prefix;
	for (i++; i < argc; i++)
		eal[n++] = argv[i];
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", name, rte_strerror(rte_errno));
		free(eal);
		return EXIT_FAILURE;
	}
	ret = serve(name, sock, &stop, hooks);
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(runtime_dir);
	free(eal);
	return ret == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
