// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Connecting: the transport and the timeout a handle gets from its options
// and the environment, the socket's connect, the hello and the channel's
// attach, and the reason a connect failed, in words
// (gr_api_client_last_error()). Requests and responses are client.c's.

#include "client_priv.h"

#include <gr_api_client.h>

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define NSEC_PER_MSEC 1000000ull
#define USEC_PER_MSEC 1000
#define MSEC_PER_SEC 1000

// Environment variable that picks the transport when the options do not.
#define CLIENT_TRANSPORT_ENV "GR_API_TRANSPORT"

#define CLIENT_DEFAULT_VERSION "shmchan-client " SHMCHAN_VERSION

// Environment variable that sets the timeout when the options do not.
#define CLIENT_TIMEOUT_ENV "GR_API_TIMEOUT_MS"

// Room for gr_api_client_last_error(): a sentence naming the socket path
// (108 bytes at most), its mode, owner and group, and the caller's ids.
#define CLIENT_ERROR_LEN 512

// Room for one passwd or group entry (getpwuid_r(), getgrgid_r()): their
// names and, for a group, its members; a longer one is named "?".
#define CLIENT_ID_BUF_LEN 4096

// Why the calling thread's last connect failed (gr_api_client_last_error()).
static __thread char last_error[CLIENT_ERROR_LEN];

__attribute__((format(printf, 1, 2))) static void error_set(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

int client_transport_choose(
	const struct gr_api_client_opts *opts,
	const char *env,
	enum gr_api_transport *out
) {
	if (opts != NULL && opts->transport != GR_API_TRANSPORT_AUTO) {
		if (opts->transport != GR_API_TRANSPORT_SOCKET &&
		    opts->transport != GR_API_TRANSPORT_SHM)
			return -EINVAL;
		*out = opts->transport;
		return 0;
	}
	if (env == NULL || env[0] == '\0' || strcmp(env, "auto") == 0)
		*out = GR_API_TRANSPORT_AUTO;
	else if (strcmp(env, "shm") == 0)
		*out = GR_API_TRANSPORT_SHM;
	else if (strcmp(env, "socket") == 0)
		*out = GR_API_TRANSPORT_SOCKET;
	else
		return -EINVAL;
	return 0;
}

// The timeout of a handle: opts->timeout_ms unless it is 0, else env (the
// value of GR_API_TIMEOUT_MS: milliseconds, 0 for none), else the default.
// Returns 0 with *ms (> 0, or GR_API_TIMEOUT_NONE), or -EINVAL.
int client_timeout_choose(const struct gr_api_client_opts *opts, const char *env, int *ms) {
	if (opts != NULL && opts->timeout_ms != 0) {
		*ms = opts->timeout_ms < 0 ? GR_API_TIMEOUT_NONE : opts->timeout_ms;
		return 0;
	}
	if (env == NULL || env[0] == '\0') {
		*ms = GR_API_CLIENT_TIMEOUT_MS_DEFAULT;
		return 0;
	}
	char *end;
	errno = 0;
	long v = strtol(env, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
		return -EINVAL;
	*ms = v == 0 ? GR_API_TIMEOUT_NONE : (int)v;
	return 0;
}

static struct timeval ms_timeval(int ms) {
	return (struct timeval){
		.tv_sec = ms / MSEC_PER_SEC,
		.tv_usec = (ms % MSEC_PER_SEC) * USEC_PER_MSEC,
	};
}

// Connect a socket to sock_path within timeout_ms: a daemon whose listen
// backlog is full (a stopped one) makes connect() wait, for at most the
// socket's send timeout on AF_UNIX. Then the socket's receive timeout is set
// to timeout_ms too: a receive that starts waiting sleeps in recvmsg()
// alone (sock.c). Returns the socket or -errno (-ETIMEDOUT).
static int client_connect_socket(const char *sock_path, int timeout_ms) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(sock_path) >= sizeof(addr.sun_path))
		return -EINVAL;
	strcpy(addr.sun_path, sock_path);

	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	int ret;
	if (timeout_ms > 0) {
		struct timeval tv = ms_timeval(timeout_ms);
		if (setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
		    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
			ret = -errno;
			goto fail;
		}
	}
	do
		ret = connect(sock, (const struct sockaddr *)&addr, sizeof(addr));
	while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		// A blocking AF_UNIX connect() past its send timeout: EAGAIN.
		ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
		goto fail;
	}
	return sock;
fail:
	close(sock);
	return ret;
}

// Say why connect() to path failed with err (a negative errno). For a
// permission error, what the socket file's mode and group allow.
static void error_connect(const char *path, int err) {
	struct stat st;
	switch (-err) {
	case ENOENT:
		error_set("no socket at %s: is shmchand running with -s %s?", path, path);
		return;
	case ECONNREFUSED:
		error_set("nobody listens on %s: shmchand stopped or crashed", path);
		return;
	case ETIMEDOUT:
		error_set("connect to %s: the daemon's listen queue stayed full (stopped?)", path);
		return;
	case EACCES:
	case EPERM:
		break;
	default:
		error_set("connect to %s: %s", path, strerror(-err));
		return;
	}
	if (stat(path, &st) < 0) {
		error_set(
			"socket %s: permission denied, and stat() fails too (%s): a folder on "
			"the path denies search",
			path,
			strerror(errno)
		);
		return;
	}
	// The _r variants: connects may fail on several threads at once.
	char owner[64] = "?", group[64] = "?", buf[CLIENT_ID_BUF_LEN];
	struct passwd pw, *pwp;
	struct group gr, *grp;
	if (getpwuid_r(st.st_uid, &pw, buf, sizeof(buf), &pwp) == 0 && pwp != NULL)
		snprintf(owner, sizeof(owner), "%s", pw.pw_name);
	if (getgrgid_r(st.st_gid, &gr, buf, sizeof(buf), &grp) == 0 && grp != NULL)
		snprintf(group, sizeof(group), "%s", gr.gr_name);
	error_set(
		"socket %s: permission denied: mode %04o, owner %s (%u), group %s (%u); this "
		"process runs as uid %u gid %u: connecting needs write permission (shmchand -m, "
		"-g)",
		path,
		(unsigned)(st.st_mode & 07777),
		owner,
		(unsigned)st.st_uid,
		group,
		(unsigned)st.st_gid,
		(unsigned)geteuid(),
		(unsigned)getegid()
	);
}

// Say why hello failed with err.
static void error_hello(const char *path, int err, int timeout_ms) {
	switch (-err) {
	case EBADMSG:
		error_set(
			"the daemon on %s refused API versions %d, %d and %d (EBADMSG): it speaks "
			"neither shmchan's nor Grout's",
			path,
			GR_API_VERSION,
			GR_API_VERSION_GROUT_MAIN,
			GR_API_VERSION_GROUT_0_17
		);
		break;
	case ETIMEDOUT:
		error_set(
			"no answer to hello from %s within %d ms: the daemon is stopped or hung",
			path,
			timeout_ms
		);
		break;
	case ECONNRESET:
	case EPIPE:
		error_set("the daemon on %s closed the connection during hello", path);
		break;
	default:
		error_set("hello to %s: %s", path, strerror(-err));
		break;
	}
}

GR_API_EXPORT struct gr_api_client *
gr_api_client_connect_opts(const char *sock_path, const struct gr_api_client_opts *opts) {
	const char *env_transport = getenv(CLIENT_TRANSPORT_ENV);
	const char *env_timeout = getenv(CLIENT_TIMEOUT_ENV);
	const char *path = sock_path != NULL ? sock_path : GR_API_DEFAULT_SOCK_PATH;
	enum gr_api_transport transport;
	int timeout_ms;
	last_error[0] = '\0';
	int ret = client_transport_choose(opts, env_transport, &transport);
	if (ret < 0) {
		if (opts != NULL && opts->transport != GR_API_TRANSPORT_AUTO)
			error_set(
				"gr_api_client_opts.transport %d: not GR_API_TRANSPORT_AUTO, "
				"_SOCKET or _SHM",
				(int)opts->transport
			);
		else
			error_set(
				CLIENT_TRANSPORT_ENV "=\"%s\": accepted values are auto, shm and "
						     "socket",
				env_transport
			);
		goto fail;
	}
	ret = client_timeout_choose(opts, env_timeout, &timeout_ms);
	if (ret < 0) {
		error_set(
			CLIENT_TIMEOUT_ENV "=\"%s\": not a number of milliseconds (0: no timeout)",
			env_timeout
		);
		goto fail;
	}
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		error_set(
			"socket path of %zu bytes, at most %zu",
			strlen(path),
			sizeof(((struct sockaddr_un *)0)->sun_path) - 1
		);
		ret = -EINVAL;
		goto fail;
	}

	// One deadline for the whole connect: socket, hello, attach.
	uint64_t deadline_ns =
		timeout_ms < 0 ? 0 : client_clock_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	int sock = client_connect_socket(path, timeout_ms);
	if (sock < 0) {
		ret = sock;
		error_connect(path, ret);
		goto fail;
	}
	struct gr_api_client *c = client_new(sock, opts != NULL ? opts->spin_us : -1);
	if (c == NULL) {
		error_set("out of memory");
		return NULL;
	}
	c->timeout_ms = timeout_ms;
	c->sock_rcvtimeo = timeout_ms > 0;
	c->deadline_ns = deadline_ns;

	const char *version =
		opts != NULL && opts->version != NULL ? opts->version : CLIENT_DEFAULT_VERSION;
	ret = client_hello(c, version);
	if (ret < 0) {
		error_hello(path, ret, timeout_ms);
		goto fail_client;
	}

	if (transport == GR_API_TRANSPORT_SOCKET) {
		snprintf(c->reason, sizeof(c->reason), "socket transport requested");
		return c;
	}
	ret = client_shm_attach(c);
	if (ret == 0)
		return c;
	// In auto mode the client stays on the socket when the channel cannot be
	// had (c->reason says why), but not when the socket itself failed.
	if (transport == GR_API_TRANSPORT_AUTO && (ret == -ENOTSUP || ret == -EPROTO))
		return c;
	if (ret == -ENOTSUP || ret == -EPROTO)
		error_set("shm forced, but no channel: %s", c->reason);
	else if (ret == -ETIMEDOUT)
		error_set(
			"no answer to the channel attach from %s within %d ms: the daemon is "
			"stopped or hung",
			path,
			timeout_ms
		);
	else
		error_set("channel attach on %s: %s", path, strerror(-ret));
fail_client:
	gr_api_client_disconnect(c);
fail:
	errno = -ret;
	return NULL;
}

GR_API_EXPORT struct gr_api_client *gr_api_client_connect(const char *sock_path) {
	return gr_api_client_connect_opts(sock_path, NULL);
}

GR_API_EXPORT enum gr_api_transport gr_api_client_transport(const struct gr_api_client *c) {
	if (c == NULL)
		return GR_API_TRANSPORT_SOCKET;
	return c->transport;
}

GR_API_EXPORT const char *gr_api_client_transport_reason(const struct gr_api_client *c) {
	if (c == NULL)
		return "";
	return c->reason;
}

GR_API_EXPORT int gr_api_client_timeout_ms(const struct gr_api_client *c) {
	if (c == NULL)
		return GR_API_TIMEOUT_NONE;
	return c->timeout_ms;
}

GR_API_EXPORT const char *gr_api_client_last_error(void) {
	return last_error;
}
