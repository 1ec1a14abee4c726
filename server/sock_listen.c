// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The listening socket of the socket server: its path's checks, the removal
// of a stale socket file, bind, the listener and its accept loop (each
// connection accepted is admitted or refused, sock_admit.c, then served,
// sock.c), and the removal of our socket file at shutdown. Main thread
// only.

#include "sock_priv.h"
#include "config.h"

#include <event2/listener.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

// After a failed accept (out of fds), wait this long before accepting again
// instead of spinning on the readable listener.
#define SOCK_ACCEPT_RETRY_MS 100

static struct {
	struct evconnlistener *listener;
	struct event *accept_retry;
	bool bound; // path holds our socket file
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev; // of the socket file we created, to remove only ours
	ino_t ino;
} listening;

static void sock_on_accept(
	struct evconnlistener *listener,
	evutil_socket_t fd,
	struct sockaddr *addr,
	int addr_len,
	void *arg
) {
	struct ucred cred = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
	socklen_t cred_len = sizeof(cred);
	uint64_t start;

	(void)listener;
	(void)addr;
	(void)addr_len;
	(void)arg;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) < 0)
		LOG(WARNING, "SO_PEERCRED: %s", strerror(errno));
	if (sock_admit_or_refuse(fd, &cred, &start))
		conn_open(fd, &cred, start);
}

static void sock_on_accept_retry(evutil_socket_t fd, short what, void *arg) {
	(void)fd;
	(void)what;
	(void)arg;
	evconnlistener_enable(listening.listener);
}

static void sock_on_accept_error(struct evconnlistener *listener, void *arg) {
	struct timeval retry = {.tv_usec = SOCK_ACCEPT_RETRY_MS * 1000};

	(void)arg;
	LOG(ERR,
	    "accept: %s; retrying in %d ms",
	    strerror(EVUTIL_SOCKET_ERROR()),
	    SOCK_ACCEPT_RETRY_MS);
	evconnlistener_disable(listener);
	evtimer_add(listening.accept_retry, &retry);
}

// Remove path if it is a socket nobody listens on. Refuse if a daemon
// answers there or if it is not a socket.
static int sock_remove_stale(const struct sockaddr_un *addr) {
	struct stat st;
	int fd, err;

	if (lstat(addr->sun_path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		err = errno;
		LOG(ERR, "%s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	if (!S_ISSOCK(st.st_mode)) {
		LOG(ERR, "%s exists and is not a socket; not removing it", addr->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = errno;
		LOG(ERR, "socket: %s", strerror(err));
		return -err;
	}
	// EAGAIN: a listener whose backlog is full, so someone is there.
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 || errno == EAGAIN) {
		close(fd);
		LOG(ERR,
		    "another server answers on %s; stop it or choose another socket path (%s)",
		    addr->sun_path,
		    server_names.sock_path);
		return -EADDRINUSE;
	}
	err = errno;
	close(fd);
	if (err != ECONNREFUSED) {
		LOG(ERR, "probing %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	if (unlink(addr->sun_path) < 0 && errno != ENOENT) {
		err = errno;
		LOG(ERR, "removing stale socket %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	LOG(INFO, "removed stale socket %s", addr->sun_path);
	return 0;
}

static int sock_path_check(const char *path, struct sockaddr_un *addr) {
	if (path[0] == '\0' || path[0] == '@') {
		LOG(ERR, "socket path '%s': abstract or empty paths are not allowed", path);
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(addr->sun_path)) {
		LOG(ERR,
		    "socket path '%s' is longer than %zu bytes",
		    path,
		    sizeof(addr->sun_path) - 1);
		return -EINVAL;
	}
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	memcpy(addr->sun_path, path, strlen(path) + 1);
	return 0;
}

// bind, chmod, chown, in that order: the socket accepts no connection
// before listen(), so no client ever sees the umask's permissions.
static int sock_bind(int fd, const struct sockaddr_un *addr, mode_t mode, gid_t gid) {
	struct stat st;
	int err;

	if (bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		err = errno;
		LOG(ERR, "bind %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	listening.bound = true;
	if (stat(addr->sun_path, &st) < 0) {
		err = errno;
		LOG(ERR, "stat %s: %s", addr->sun_path, strerror(err));
		return -err;
	}
	listening.dev = st.st_dev;
	listening.ino = st.st_ino;
	if (chmod(addr->sun_path, mode) < 0) {
		err = errno;
		LOG(ERR, "chmod %s %04o: %s", addr->sun_path, (unsigned)mode, strerror(err));
		return -err;
	}
	if (gid != (gid_t)-1 && chown(addr->sun_path, (uid_t)-1, gid) < 0) {
		err = errno;
		LOG(ERR, "chown %s to group %d: %s", addr->sun_path, (int)gid, strerror(err));
		return -err;
	}
	return 0;
}

int sock_server_check(const char *path) {
	struct sockaddr_un addr;
	int ret;

	ret = sock_path_check(path, &addr);
	if (ret < 0)
		return ret;
	return sock_remove_stale(&addr);
}

int sock_server_init(struct event_base *base, const char *path, mode_t mode, gid_t gid) {
	struct sockaddr_un addr;
	int fd, ret;

	ret = sock_path_check(path, &addr);
	if (ret < 0)
		return ret;
	// Again, after main()'s sock_server_check(): another daemon may have
	// bound path during our EAL init.
	ret = sock_remove_stale(&addr);
	if (ret < 0)
		return ret;
	sock_base = base;
	memcpy(listening.path, addr.sun_path, sizeof(listening.path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		LOG(ERR, "socket: %s", strerror(errno));
		return ret;
	}
	ret = sock_bind(fd, &addr, mode, gid);
	if (ret < 0)
		goto fail;
	if (listen(fd, SOMAXCONN) < 0) {
		ret = -errno;
		LOG(ERR, "listen %s: %s", path, strerror(errno));
		goto fail;
	}
	listening.accept_retry = evtimer_new(base, sock_on_accept_retry, NULL);
	if (listening.accept_retry == NULL || sock_refusals_init() < 0 || sock_turns_init() < 0 ||
	    sock_log_init() < 0 || sock_replies_init() < 0) {
		ret = -ENOMEM;
		LOG(ERR, "out of memory");
		goto fail;
	}
	// Backlog 0: the socket is listening already.
	listening.listener = evconnlistener_new(
		base,
		sock_on_accept,
		NULL,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
		0,
		fd
	);
	if (listening.listener == NULL) {
		ret = -ENOMEM;
		LOG(ERR, "out of memory");
		goto fail;
	}
	evconnlistener_set_error_cb(listening.listener, sock_on_accept_error);
	LOG(INFO, "listening on %s, mode %04o", path, (unsigned)mode);
	return 0;
fail:
	close(fd);
	sock_server_fini();
	return ret;
}

void sock_server_fini(void) {
	struct stat st;

	if (listening.listener != NULL) {
		evconnlistener_free(listening.listener);
		listening.listener = NULL;
	}
	if (listening.accept_retry != NULL) {
		event_free(listening.accept_retry);
		listening.accept_retry = NULL;
	}
	conns_close("server stopping");
	sock_replies_fini();
	sock_turns_fini();
	sock_log_fini();
	sock_refusals_fini();
	// Leave the file alone if another daemon replaced it meanwhile.
	if (listening.bound && stat(listening.path, &st) == 0 && st.st_dev == listening.dev &&
	    st.st_ino == listening.ino)
		unlink(listening.path);
	listening.bound = false;
}
