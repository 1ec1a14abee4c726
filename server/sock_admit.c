// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Admission of the connections the listener accepts (sock.h): the bounds on
// the connections served, on the open files (fd_budget.h), on those of one
// uid and of one process (its pid and start time), and the refusals: each
// refused connection's first request answered with the refusal's status,
// and their rate-limited log. Main thread only.

#include "sock_priv.h"
#include "config.h"
#include "fd_budget.h"
#include "log_limit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

// A refused connection waiting for its first request header, to answer it
// with the refusal's status (sock.h). Main thread only.
struct refusal {
	LIST_ENTRY(refusal) next;
	struct event *ev; // readable, or SOCK_REFUSE_WAIT_MS passed
	int fd;
	uint32_t status; // EMFILE, EUSERS or ENFILE
	size_t got; // bytes of hdr read so far
	struct gr_api_request hdr;
};

// Why a connection is refused (sock.h), and the status its hello gets.
enum refusal_why {
	REFUSE_NONE,
	REFUSE_PID, // EMFILE
	REFUSE_UID, // EUSERS
	REFUSE_CONNS, // ENFILE: the connections served
	REFUSE_FDS, // ENFILE: the open files (fd_budget.h)
};

static struct {
	LIST_HEAD(, refusal) refusals;
	unsigned n_refusals;
	// Refusals are logged at most once per LOG_LIMIT_INTERVAL_MS: a hog
	// retrying its connects must not flood the log. The last one is kept
	// for the summary, which the timer writes if no refusal comes later.
	struct log_limit refused_log;
	struct event *refused_log_timer;
	struct ucred refused_last;
	enum refusal_why refused_last_why;
} admit = {
	.refusals = LIST_HEAD_INITIALIZER(admit.refusals),
};

// Longest reason of a refusal: a sentence and the name of a setting.
#define REFUSAL_REASON_LEN (64 + GR_API_SERVER_CONF_NAME_MAX)

// Field of /proc/PID/stat that holds the process's start time (clock ticks
// since boot), counted from the state, the first field after the command.
#define PROC_STAT_START_TIME_FIELD (22 - 3)

// When process pid started (clock ticks since boot), 0 if unknown (gone, or
// pid 0: another pid namespace). A pid and its start time name one process
// for good: a pid the kernel gives again goes to a process that started
// later.
static uint64_t proc_start_time(pid_t pid) {
	char path[64], buf[1024], *fields, *save = NULL;
	uint64_t start = 0;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	// The command, in parentheses, may hold spaces and parentheses.
	fields = strrchr(buf, ')');
	if (fields == NULL)
		return 0;
	char *f = strtok_r(fields + 1, " ", &save);
	for (unsigned i = 0; f != NULL && i < PROC_STAT_START_TIME_FIELD; i++)
		f = strtok_r(NULL, " ", &save);
	if (f != NULL)
		start = strtoull(f, NULL, 10);
	return start;
}

// Why a connection of a peer with these credentials is refused now
// (sock.h), REFUSE_NONE if it is not. Its socket is open already, not yet
// counted in the fd budget. Walks the connections: at most GR_API_SERVER_MAX_CLIENTS
// comparisons per accept, and nothing to keep in step with them.
static enum refusal_why sock_admit(const struct ucred *cred, uint64_t start) {
	const struct gr_api_server_conf *cfg = &server_conf;
	unsigned same_pid = 0, same_uid = 0;
	bool root = cred->uid == 0;
	const struct conn *conn;

	if (n_conns >= GR_API_SERVER_MAX_CLIENTS ||
	    (!root && n_conns >= GR_API_SERVER_MAX_CLIENTS - GR_API_SERVER_ROOT_RESERVED))
		return REFUSE_CONNS;
	if (!fd_budget_admits(1, root))
		return REFUSE_FDS;
	// A connection opened by an earlier process of the same pid (the pid
	// was given again) is not this process's.
	TAILQ_FOREACH (conn, &conns, next) {
		same_pid += conn->ctx.peer_pid == cred->pid && conn->peer_start == start;
		same_uid += conn->ctx.peer_uid == cred->uid;
	}
	// A peer of another pid namespace shows as pid 0: not one process.
	if (cfg->max_conn_per_pid != 0 && cred->pid != 0 && same_pid >= cfg->max_conn_per_pid)
		return REFUSE_PID;
	if (cfg->max_conn_per_uid != 0 && !root && same_uid >= cfg->max_conn_per_uid)
		return REFUSE_UID;
	return REFUSE_NONE;
}

static uint32_t refusal_status(enum refusal_why why) {
	switch (why) {
	case REFUSE_PID:
		return EMFILE;
	case REFUSE_UID:
		return EUSERS;
	default:
		return ENFILE;
	}
}

// Main thread: the reason's text stays valid until the next call.
static const char *refusal_reason(enum refusal_why why) {
	static char reason[REFUSAL_REASON_LEN];

	switch (why) {
	case REFUSE_PID:
		snprintf(
			reason,
			sizeof(reason),
			"its process holds %s connections",
			server_names.max_conn_per_pid
		);
		return reason;
	case REFUSE_UID:
		snprintf(
			reason,
			sizeof(reason),
			"its uid holds %s connections",
			server_names.max_conn_per_uid
		);
		return reason;
	case REFUSE_FDS:
		return "the server's open files limit leaves no room for it (the rest is root's)";
	default:
		return "the server holds all the connections it serves";
	}
}

// Write the refusals not logged yet, if a line is due (or final).
static void refused_log_flush(bool final) {
	uint64_t now = log_limit_now_ns();
	uint64_t n = log_limit_due(&admit.refused_log, now, final);

	if (n == 1)
		LOG(WARNING,
		    "refusing client pid %d uid %d (%s): %s",
		    (int)admit.refused_last.pid,
		    (int)admit.refused_last.uid,
		    strerror((int)refusal_status(admit.refused_last_why)),
		    refusal_reason(admit.refused_last_why));
	else if (n > 1)
		LOG(WARNING,
		    "refused %" PRIu64 " more connections since the last line, the last of"
		    " client pid %d uid %d (%s): %s",
		    n,
		    (int)admit.refused_last.pid,
		    (int)admit.refused_last.uid,
		    strerror((int)refusal_status(admit.refused_last_why)),
		    refusal_reason(admit.refused_last_why));
}

// Those still pending are written when the interval ends, whether or not
// another refusal comes.
static void refused_log_arm(void) {
	struct timeval wait = {0};
	unsigned ms;

	if (admit.refused_log.pending == 0 || evtimer_pending(admit.refused_log_timer, NULL))
		return;
	// At least 1 ms: the coarse clock may read a little behind the timer.
	ms = log_limit_wait_ms(&admit.refused_log, log_limit_now_ns());
	ms = ms > 0 ? ms : 1;
	wait.tv_sec = ms / 1000;
	wait.tv_usec = (ms % 1000) * 1000;
	evtimer_add(admit.refused_log_timer, &wait);
}

static void refused_log_on_timer(evutil_socket_t fd, short what, void *arg) {
	(void)fd;
	(void)what;
	(void)arg;
	refused_log_flush(false);
	refused_log_arm();
}

static void refused_log_count(const struct ucred *cred, enum refusal_why why) {
	admit.refused_last = *cred;
	admit.refused_last_why = why;
	log_limit_count(&admit.refused_log);
	refused_log_flush(false);
	refused_log_arm();
}

static void refusal_free(struct refusal *r) {
	LIST_REMOVE(r, next);
	admit.n_refusals--;
	event_free(r->ev);
	close(r->fd);
	free(r);
}

// Read what the refused client has sent of its first request header.
// Returns true once the connection is done with: the header came (and was
// answered with the refusal's status), or EOF, or an error. The response is
// 12 bytes on a connection that has sent nothing else: the socket buffer
// takes it whole. Unread bytes (the rest of the hello) make the client's
// next read after the response fail with ECONNRESET, never the response.
static bool
refusal_answer(evutil_socket_t fd, uint32_t status, struct gr_api_request *hdr, size_t *got) {
	uint8_t rest[GR_HELLO_REQ_LEN];
	ssize_t n;

	n = recv(fd, (uint8_t *)hdr + *got, sizeof(*hdr) - *got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0)
		return true;
	*got += (size_t)n;
	if (*got < sizeof(*hdr))
		return false;
	struct gr_api_response resp = {.for_id = hdr->id, .status = status};
	(void)!recv(fd, rest, sizeof(rest), MSG_DONTWAIT);
	(void)!send(fd, &resp, sizeof(resp), MSG_DONTWAIT | MSG_NOSIGNAL);
	return true;
}

// A waiting refused connection: readable, or its SOCK_REFUSE_WAIT_MS passed.
static void refusal_on_event(evutil_socket_t fd, short what, void *arg) {
	struct refusal *r = arg;

	if ((what & EV_READ) && !refusal_answer(fd, r->status, &r->hdr, &r->got))
		return;
	refusal_free(r);
}

// Refuse a connection: answer its first request with status and close
// (sock.h). A client that sent its hello right after connect, as the client
// library does, is answered at once; another one waits for it, unless
// SOCK_REFUSED_MAX refusals wait already: then it is closed at once.
static void sock_refuse(evutil_socket_t fd, const struct ucred *cred, enum refusal_why why) {
	struct timeval wait = {
		.tv_sec = SOCK_REFUSE_WAIT_MS / 1000,
		.tv_usec = SOCK_REFUSE_WAIT_MS % 1000 * 1000,
	};
	uint32_t status = refusal_status(why);
	struct gr_api_request hdr;
	struct refusal *r = NULL;
	size_t got = 0;

	refused_log_count(cred, why);
	if (refusal_answer(fd, status, &hdr, &got)) {
		close(fd);
		return;
	}
	if (admit.n_refusals < SOCK_REFUSED_MAX)
		r = calloc(1, sizeof(*r));
	if (r != NULL)
		r->ev = event_new(sock_base, fd, EV_READ | EV_PERSIST, refusal_on_event, r);
	if (r == NULL || r->ev == NULL || event_add(r->ev, &wait) < 0) {
		if (r != NULL && r->ev != NULL)
			event_free(r->ev);
		free(r);
		close(fd);
		return;
	}
	r->fd = fd;
	r->status = status;
	r->hdr = hdr;
	r->got = got;
	LIST_INSERT_HEAD(&admit.refusals, r, next);
	admit.n_refusals++;
}

bool sock_admit_or_refuse(evutil_socket_t fd, const struct ucred *cred, uint64_t *start) {
	enum refusal_why refused;

	*start = server_conf.max_conn_per_pid != 0 ? proc_start_time(cred->pid) : 0;
	refused = sock_admit(cred, *start);
	if (refused == REFUSE_NONE)
		return true;
	sock_refuse(fd, cred, refused);
	return false;
}

int sock_refusals_init(void) {
	admit.refused_log_timer = evtimer_new(sock_base, refused_log_on_timer, NULL);
	return admit.refused_log_timer != NULL ? 0 : -ENOMEM;
}

void sock_refusals_fini(void) {
	while (!LIST_EMPTY(&admit.refusals))
		refusal_free(LIST_FIRST(&admit.refusals));
	if (admit.refused_log_timer != NULL) {
		refused_log_flush(true);
		event_free(admit.refused_log_timer);
		admit.refused_log_timer = NULL;
	}
}
