// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The main() of the test applications on libgr_api_server
// (embed_*_app.c): each registers its handlers (GR_API_HANDLER) and calls
// embed_app_main(). Run as test/with_daemon.sh runs a daemon: it serves
// until SIGTERM or SIGINT, then stops the server and exits 0 (with
// EMBED_APP_LINGER set, at the next SIGTERM or SIGINT).
//
// usage: NAME -s SOCK [-- EAL args]
//
// EAL runs without hugepages, PCI or telemetry, with a file prefix of its
// own. The socket side runs on the library's thread; the main thread waits
// for the signal (blocked in every thread, taken with sigwait()).

#pragma once

// What an application does around the server's life, each NULL: nothing.
struct embed_app_hooks {
	// After the server started (its handlers may run already). Returns 0,
	// or -errno: the application stops and exits 1.
	int (*started)(void);
	// Before the server stops.
	void (*stopping)(void);
	// After gr_api_server_stop() returned, whatever it returned: no
	// thread of the server runs any more.
	void (*stopped)(void);
};

// Set in the environment: after the server stopped (and the stopped hook
// ran), the application waits for a second SIGTERM or SIGINT before it
// exits.
#define EMBED_APP_LINGER_ENV "EMBED_APP_LINGER"

// Run the application called name (its log type too). Returns its exit
// status.
int embed_app_main(int argc, char **argv, const char *name, const struct embed_app_hooks *hooks);

// The folder of the socket the application serves: where its tests leave
// it files. Valid once embed_app_main() runs.
const char *embed_app_dir(void);
