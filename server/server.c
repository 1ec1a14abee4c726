// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Start and stop of the server, on the application's event base or on a
// thread of the library's own, and the public accessors.
//
// The modules start on the thread that will run the loop (the events'
// main-thread delivery, the socket server and the channel registry's
// writer all belong to it) and stop on it, in the reverse order: clients
// first, so that their leases end before the channels go.

#include "api.h"
#include "channel.h"
#include "config.h"
#include "event.h"
#include "fd_budget.h"
#include "poller.h"
#include "sock.h"
#include "telemetry.h"
#include "trace.h"
#include "type_stats.h"

#include <rte_cycles.h>

#include <event2/event.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

// Name of the library's thread (at most 15 characters).
#define SERVER_THREAD_NAME "gr-api-server"

static struct {
	// Held through a start and a stop: two of them never run at once.
	pthread_mutex_t lifecycle;
	// Set from the start of a start to the end of a stop: read by
	// gr_api_server_info_get() on any thread (handlers included).
	_Atomic bool running;
	// The library's own thread (conf.base NULL): the eventfd that stops
	// its loop, and how its start went.
	bool own_thread;
	pthread_t thread;
	int stop_fd;
	sem_t started;
	int start_ret;
	// The thread that runs the loop: start and stop belong to it.
	pthread_t loop_thread;
} srv = {.lifecycle = PTHREAD_MUTEX_INITIALIZER, .stop_fd = -1};

// Set on the threads the library starts (its own, the pollers): a stop
// there would wait for the thread itself.
static __thread bool library_thread;

// The server's own handlers, registered by modules_start().
static const struct api_handler_table *const own_handlers[] = {
	&handlers_main,
	&handlers_log,
	&handlers_event,
	&handlers_channel,
	&handlers_channel_stats,
	&handlers_clients,
	&handlers_echo,
	&handlers_type_stats,
	&handlers_trace,
	&handlers_info,
	&handlers_types,
};

// Constructor priority of the reservation of the server's own request
// types: before any default-priority constructor (GR_API_HANDLER's) of a
// program that links the library statically; a shared library's
// constructors run before its program's anyway.
#define OWN_TYPES_CTOR_PRIORITY 101

static void __attribute__((constructor(OWN_TYPES_CTOR_PRIORITY))) own_types_reserve(void) {
	api_tables_reserve(own_handlers, sizeof(own_handlers) / sizeof(own_handlers[0]));
}

void server_thread_mark(void) {
	library_thread = true;
}

// Stop the modules started by modules_start(), in the reverse order.
static void modules_stop(void) {
	// Clients first: their leases end before the channels go.
	sock_server_fini();
	channel_module_fini();
	event_module_fini();
	api_tables_drop();
	trace_fini();
}

// Start every module on base, from the thread that will run its loop.
// Returns 0 or -errno (logged), with nothing left running.
static int modules_start(struct event_base *base) {
	int ret;

	srv.loop_thread = pthread_self();
	tsc_clock_init();
	api_type_stats_reset();
	for (unsigned i = 0; i < sizeof(own_handlers) / sizeof(own_handlers[0]); i++) {
		ret = api_table_register(own_handlers[i]);
		if (ret < 0)
			goto drop_handlers;
	}
	// Each init undoes its own work when it fails; what came before it is
	// undone here, in the reverse order.
	ret = event_module_init(base);
	if (ret < 0)
		goto drop_handlers;
	ret = channel_module_init(base);
	if (ret < 0)
		goto stop_channels;
	if (server_conf.telemetry) {
		ret = telemetry_init();
		if (ret < 0)
			goto stop_channels;
	}
	ret = sock_server_init(
		base,
		server_conf.sock_path,
		server_conf.sock_mode,
		server_conf.sock_gid
	);
	if (ret < 0)
		goto stop_channels;
	fd_budget_init();
	return 0;
stop_channels:
	// channel_module_init() leaves this thread registered with liburcu
	// even when it fails, for channel_module_fini() to unregister.
	channel_module_fini();
	event_module_fini();
drop_handlers:
	api_tables_drop();
	return ret;
}

// The library's thread: stop_fd was written.
static void own_loop_stop(evutil_socket_t fd, short what, void *arg) {
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

// The library's thread: start the modules on a base of its own, tell
// gr_api_server_start() how it went, serve until gr_api_server_stop().
static void *own_thread_main(void *arg) {
	struct event *stop_ev = NULL;
	struct event_base *base;
	int ret = -ENOMEM;

	(void)arg;
	server_thread_mark();
	pthread_setname_np(pthread_self(), SERVER_THREAD_NAME);
	base = event_base_new();
	if (base != NULL)
		stop_ev = event_new(base, srv.stop_fd, EV_READ, own_loop_stop, base);
	if (stop_ev == NULL || event_add(stop_ev, NULL) < 0)
		LOG(ERR, "cannot create the server's event loop");
	else
		ret = modules_start(base);
	srv.start_ret = ret;
	sem_post(&srv.started);
	if (ret == 0) {
		if (event_base_dispatch(base) < 0)
			LOG(ERR, "the server's event loop failed: serving stops");
		modules_stop();
	}
	if (stop_ev != NULL)
		event_free(stop_ev);
	if (base != NULL)
		event_base_free(base);
	return NULL;
}

static void own_thread_cleanup(void) {
	if (srv.stop_fd >= 0)
		close(srv.stop_fd);
	srv.stop_fd = -1;
	sem_destroy(&srv.started);
}

// Start the library's thread and wait for its modules. Returns 0 or -errno.
static int own_thread_start(void) {
	int ret;

	srv.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv.stop_fd < 0) {
		ret = -errno;
		LOG(ERR, "eventfd: %s", strerror(errno));
		return ret;
	}
	sem_init(&srv.started, 0, 0);
	ret = -pthread_create(&srv.thread, NULL, own_thread_main, NULL);
	if (ret < 0) {
		LOG(ERR, "pthread_create: %s", strerror(-ret));
		own_thread_cleanup();
		return ret;
	}
	while (sem_wait(&srv.started) < 0 && errno == EINTR)
		;
	ret = srv.start_ret;
	if (ret < 0) {
		pthread_join(srv.thread, NULL);
		own_thread_cleanup();
	}
	return ret;
}

GR_API_EXPORT int gr_api_server_socket_check(const struct gr_api_server_conf *conf) {
	int ret = server_log_register(conf, false);

	if (ret < 0)
		return ret;
	if (conf == NULL) {
		LOG(ERR, "no configuration");
		return -EINVAL;
	}
	// Its lines name the settings as the application's users know them.
	if (!server_names_set(conf->names))
		return -EINVAL;
	// The default: in EAL's runtime folder, not known before EAL.
	if (conf->sock_path == NULL)
		return 0;
	return sock_server_check(conf->sock_path);
}

// Whether start or stop (call, of kind) would wait for the calling thread
// itself:
// it holds the handler lock (a handler, or gr_api_server_lock()), which
// their registrations and the pollers take, or it is a thread of the
// library's, which they join. Says so.
static bool lifecycle_deadlocks(enum api_misuse kind, const char *call) {
	if (api_lock_held()) {
		api_misuse(kind, "%s %s: refused (EDEADLK)", call, api_lock_holder());
		return true;
	}
	if (library_thread) {
		api_misuse(
			kind,
			"%s on a thread of the server's own, which it would wait for: refused"
			" (EDEADLK)",
			call
		);
		return true;
	}
	return false;
}

// srv.lifecycle held.
static int start_locked(const struct gr_api_server_conf *conf) {
	int ret;

	if (atomic_load(&srv.running)) {
		LOG(ERR, "a server runs already: one per process");
		return -EALREADY;
	}
	ret = server_log_register(conf, true);
	if (ret < 0)
		return ret;
	ret = api_ctor_error();
	if (ret < 0)
		return ret;
	// EAL measures the TSC at init; the channels' time limits count in it.
	if (rte_get_tsc_hz() == 0) {
		LOG(ERR, "EAL is not initialised: call rte_eal_init() first");
		return -EINVAL;
	}
	ret = server_conf_set(conf);
	if (ret < 0)
		return ret;
	server_state.start_ns = server_monotonic_ns();
	server_state.start_time = time(NULL);
	srv.own_thread = conf->base == NULL;
	// Before the first client can ask: its handlers may read the info.
	atomic_store(&srv.running, true);
	if (srv.own_thread)
		ret = own_thread_start();
	else
		ret = modules_start(conf->base);
	if (ret < 0)
		atomic_store(&srv.running, false);
	return ret;
}

GR_API_EXPORT int gr_api_server_start(const struct gr_api_server_conf *conf) {
	int ret;

	if (lifecycle_deadlocks(API_MISUSE_START, "gr_api_server_start()"))
		return -EDEADLK;
	pthread_mutex_lock(&srv.lifecycle);
	ret = start_locked(conf);
	pthread_mutex_unlock(&srv.lifecycle);
	return ret;
}

// srv.lifecycle held.
static int stop_locked(void) {
	uint64_t one = 1;

	if (!atomic_load(&srv.running))
		return 0;
	if (srv.own_thread) {
		// Our own eventfd, never full: the write cannot block.
		if (write(srv.stop_fd, &one, sizeof(one)) < 0)
			LOG(ERR, "stopping the server's thread: %s", strerror(errno));
		pthread_join(srv.thread, NULL);
		own_thread_cleanup();
	} else {
		if (!pthread_equal(pthread_self(), srv.loop_thread)) {
			api_misuse(
				API_MISUSE_STOP_THREAD,
				"gr_api_server_stop() called on another thread than the one that "
				"runs"
				" conf.base's loop: refused (EPERM)"
			);
			return -EPERM;
		}
		modules_stop();
	}
	atomic_store(&srv.running, false);
	return 0;
}

GR_API_EXPORT int gr_api_server_stop(void) {
	int ret;

	if (lifecycle_deadlocks(API_MISUSE_STOP, "gr_api_server_stop()"))
		return -EDEADLK;
	pthread_mutex_lock(&srv.lifecycle);
	ret = stop_locked();
	pthread_mutex_unlock(&srv.lifecycle);
	return ret;
}

GR_API_EXPORT int gr_api_server_lock(void) {
	return api_app_lock();
}

GR_API_EXPORT int gr_api_server_unlock(void) {
	return api_app_unlock();
}

GR_API_EXPORT int gr_api_server_info_get(struct gr_api_server_info *info) {
	if (info == NULL) {
		api_misuse(API_MISUSE_ARGUMENT, "gr_api_server_info_get(NULL): refused (EINVAL)");
		return -EINVAL;
	}
	if (!atomic_load_explicit(&srv.running, memory_order_acquire))
		return -ESRCH;
	server_info_fill(info);
	return 0;
}
