// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

#include "fake_daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

void fake_daemon_init_sock(struct fake_daemon *d, int sock) {
	memset(d, 0, sizeof(*d));
	d->mem.fd = -1;
	d->sock = sock;
}

void fake_daemon_init(struct fake_daemon *d, int spin_us) {
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	fake_daemon_init_sock(d, sv[1]);
	d->client = client_new(sv[0], spin_us);
	assert_non_null(d->client);
}

int fake_daemon_setup(void **state) {
	struct fake_daemon *d = malloc(sizeof(*d));
	assert_non_null(d);
	fake_daemon_init(d, 0);
	*state = d;
	return 0;
}

int fake_daemon_teardown(void **state) {
	struct fake_daemon *d = *state;
	fake_daemon_fini(d);
	free(d);
	return 0;
}

void fake_daemon_channel(struct fake_daemon *d) {
	assert_int_equal(shmchan_geometry_init(&d->g, SHMCHAN_RING_CELLS), 0);
	d->g.generation = FAKE_DAEMON_GENERATION;
	assert_int_equal(shmchan_memfd_create(&d->mem, "client-test", d->g.region_size), 0);
	assert_int_equal(shmchan_server_create(&d->mem, &d->g, &d->server), 0);
}

void fake_daemon_attach_resp(
	const struct fake_daemon *d,
	struct gr_shm_attach_resp *resp,
	int fds[3]
) {
	memset(resp, 0, sizeof(*resp));
	resp->layout_version = d->g.layout_version;
	resp->backing = GR_SHM_BACKING_MEMFD;
	resp->region_size = d->g.region_size;
	resp->req_ring_off = d->g.req_ring_off;
	resp->resp_ring_off = d->g.resp_ring_off;
	resp->ring_cells = d->g.ring_cells;
	resp->cell_size = d->g.cell_size;
	resp->n_fds = 3;
	resp->generation = d->g.generation;
	snprintf(resp->name, sizeof(resp->name), "%s", d->mem.name);
	fds[0] = shmchan_server_req_fd(d->server);
	fds[1] = shmchan_server_resp_fd(d->server);
	fds[2] = d->mem.fd;
}

// The largest payloads the tests send.
union fake_daemon_payload {
	struct gr_shm_attach_resp attach;
	struct gr_shm_daemon_info info;
	// A newer daemon's longer info (attach_memzone_test.c).
	uint8_t newer_info[sizeof(struct gr_shm_daemon_info) + FAKE_DAEMON_INFO_NEWER_EXTRA];
};

void fake_daemon_write(
	struct fake_daemon *d,
	uint32_t for_id,
	uint32_t status,
	const void *payload,
	size_t len,
	const int *fds,
	unsigned n_fds
) {
	uint8_t buf[sizeof(struct gr_api_response) + sizeof(union fake_daemon_payload)];
	struct gr_api_response hdr = {.for_id = for_id, .status = status, .payload_len = len};
	FAKE_DAEMON_CHECK(len <= sizeof(buf) - sizeof(hdr));
	memcpy(buf, &hdr, sizeof(hdr));
	if (len > 0)
		memcpy(buf + sizeof(hdr), payload, len);
	size_t total = sizeof(hdr) + len, sent = 0;
	while (sent < total) {
		long n = shmchan_send_fds(
			d->sock,
			buf + sent,
			total - sent,
			fds,
			sent == 0 ? n_fds : 0
		);
		FAKE_DAEMON_CHECK(n > 0);
		sent += (size_t)n;
	}
}

void fake_daemon_read_all(int fd, void *buf, size_t len) {
	while (len > 0) {
		ssize_t n = read(fd, buf, len);
		FAKE_DAEMON_CHECK(n > 0);
		buf = (uint8_t *)buf + n;
		len -= (size_t)n;
	}
}

void fake_daemon_read_attach(struct fake_daemon *d) {
	struct gr_api_request hdr;
	struct gr_shm_attach_req req;
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	assert_int_equal(hdr.type, GR_SHM_ATTACH);
	assert_int_equal(hdr.payload_len, sizeof(req));
	fake_daemon_read_all(d->sock, &req, sizeof(req));
	assert_int_equal(req.backings, GR_SHM_BACKING_MEMFD);
	assert_int_equal(req.layout_version, SHMCHAN_LAYOUT_VERSION);
}

void fake_daemon_read_detach(struct fake_daemon *d) {
	struct timeval wait = {
		.tv_sec = FAKE_DAEMON_DETACH_WAIT_MS / 1000,
		.tv_usec = FAKE_DAEMON_DETACH_WAIT_MS % 1000 * 1000,
	};
	struct timeval forever = {0};
	struct gr_api_request hdr;

	// A client that never sends it fails the read instead of hanging it.
	FAKE_DAEMON_CHECK(setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) == 0);
	fake_daemon_read_all(d->sock, &hdr, sizeof(hdr));
	FAKE_DAEMON_CHECK(
		setsockopt(d->sock, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever)) == 0
	);
	FAKE_DAEMON_CHECK(hdr.type == GR_SHM_DETACH);
	FAKE_DAEMON_CHECK(hdr.payload_len == 0);
}

void fake_daemon_attach(struct fake_daemon *d) {
	struct gr_shm_attach_resp resp;
	int fds[3];
	fake_daemon_channel(d);
	fake_daemon_attach_resp(d, &resp, fds);
	// Written before the request: the client's first request has id 1, and
	// the socket buffer holds the answer until the client reads it.
	fake_daemon_write(d, 1, 0, &resp, sizeof(resp), fds, 3);
	assert_int_equal(client_shm_attach(d->client), 0);
	fake_daemon_read_attach(d);
	assert_int_equal(gr_api_client_transport(d->client), GR_API_TRANSPORT_SHM);
	assert_string_equal(gr_api_client_transport_reason(d->client), "");
}

void fake_daemon_any_id(struct fake_daemon *d) {
	d->client->ids_wrapped = true;
}

void fake_daemon_close_sock(struct fake_daemon *d) {
	if (d->sock >= 0)
		close(d->sock);
	d->sock = -1;
}

void fake_daemon_fini(struct fake_daemon *d) {
	assert_int_equal(gr_api_client_disconnect(d->client), 0);
	if (d->server != NULL)
		shmchan_server_destroy(d->server);
	shmchan_memfd_destroy(&d->mem);
	fake_daemon_close_sock(d);
}

uint64_t fake_daemon_doorbell_rings(struct fake_daemon *d) {
	struct pollfd pfd = {.fd = shmchan_server_req_fd(d->server), .events = POLLIN};
	uint64_t count = 0;
	if (poll(&pfd, 1, 0) == 1)
		assert_int_equal(read(pfd.fd, &count, sizeof(count)), sizeof(count));
	return count;
}

unsigned fake_daemon_count_fds(void) {
	DIR *dir = opendir("/proc/self/fd");
	assert_non_null(dir);
	unsigned n = 0;
	while (readdir(dir) != NULL)
		n++;
	closedir(dir);
	return n;
}

bool fake_daemon_channel_huge(struct fake_daemon *d) {
	struct stat st;
	int fd;
	void *base;

	assert_int_equal(shmchan_geometry_init(&d->g, SHMCHAN_RING_CELLS), 0);
	d->g.generation = FAKE_DAEMON_GENERATION;
	fd = memfd_create("client-test-huge", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (fd < 0)
		return false;
	// A hugetlbfs file is sized in whole huge pages (st_blksize).
	assert_int_equal(fstat(fd, &st), 0);
	size_t page = (size_t)st.st_blksize;
	d->g.region_size = (d->g.region_size + page - 1) / page * page;
	base = MAP_FAILED;
	if (ftruncate(fd, (off_t)d->g.region_size) == 0)
		base = mmap(NULL, d->g.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		close(fd);
		return false;
	}
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
	d->mem = (struct shmchan_mem){
		.backing = SHMCHAN_BACKING_MEMFD,
		.base = base,
		.size = d->g.region_size,
		.fd = fd,
		.name = "client-test-huge",
	};
	assert_int_equal(shmchan_server_create(&d->mem, &d->g, &d->server), 0);
	return true;
}

uint64_t fake_daemon_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

size_t fake_flood_msg(uint8_t *buf, uint32_t for_id, size_t len, uint8_t fill) {
	struct gr_api_response hdr = {.for_id = for_id, .payload_len = (uint32_t)len};
	assert_true(sizeof(hdr) + len <= FAKE_FLOOD_MSG_MAX);
	memcpy(buf, &hdr, sizeof(hdr));
	memset(buf + sizeof(hdr), fill, len);
	return sizeof(hdr) + len;
}

size_t fake_flood_event(uint8_t *buf, uint32_t ev_type, size_t len, uint8_t fill) {
	struct gr_api_event ev = {.ev_type = ev_type, .payload_len = len};
	size_t n = fake_flood_msg(buf, 0, sizeof(ev) + len, fill);
	memcpy(buf + sizeof(struct gr_api_response), &ev, sizeof(ev));
	return n;
}

// Copies of the flood's message written by one send() on the socket.
#define FLOOD_SOCK_BATCH_BYTES (256 * 1024)
// How long a flood waits for room before it looks at its stop flag again.
#define FLOOD_ROOM_WAIT_MS 10
// Messages enqueued on the channel between two flushes (doorbell rings).
#define FLOOD_RING_BATCH 64

// Wait for room on fd; false once it is an error (the client left).
static bool flood_room(int fd) {
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	return poll(&pfd, 1, FLOOD_ROOM_WAIT_MS) >= 0 && !(pfd.revents & (POLLERR | POLLHUP));
}

// Write buf[0, len) round and round (whole messages of msg_len bytes: the
// framing holds); sent counts the messages gone.
static bool flood_fd(struct fake_flood *f, int fd, const uint8_t *buf, size_t len, size_t msg_len) {
	uint64_t start = fake_daemon_now_ms(), bytes = 0;
	size_t pos = 0;
	while (!atomic_load(&f->stop) && fake_daemon_now_ms() - start < FAKE_FLOOD_MAX_S * 1000 &&
	       (f->max_bytes == 0 || bytes < f->max_bytes)) {
		ssize_t n = send(fd, buf + pos, len - pos, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (!flood_room(fd))
				return false;
			continue;
		}
		if (n <= 0)
			return false; // the client shut the connection down
		pos += (size_t)n;
		if (pos == len)
			pos = 0;
		bytes += (uint64_t)n;
		atomic_store(&f->sent, bytes / msg_len);
	}
	return true;
}

static void flood_ring(struct fake_flood *f) {
	struct shmchan_server *s = f->d->server;
	const size_t hdr = sizeof(struct gr_api_response);
	uint64_t start = fake_daemon_now_ms(), bytes = 0;
	unsigned batch = 0;
	while (!atomic_load(&f->stop) && fake_daemon_now_ms() - start < FAKE_FLOOD_MAX_S * 1000 &&
	       (f->max_bytes == 0 || bytes < f->max_bytes)) {
		int ret = shmchan_server_enqueue(s, f->msg, hdr, f->msg + hdr, f->len - hdr);
		if (ret == -ENOBUFS) {
			// Full: the client is behind. Ring it, and refill as soon
			// as it takes one, so that the ring never goes empty.
			shmchan_server_flush(s);
			batch = 0;
			sched_yield();
			continue;
		}
		if (ret < 0)
			return;
		bytes += f->len;
		atomic_fetch_add(&f->sent, 1);
		if (++batch == FLOOD_RING_BATCH) {
			shmchan_server_flush(s);
			batch = 0;
		}
	}
	shmchan_server_flush(s);
}

static void *flood_run(void *arg) {
	struct fake_flood *f = arg;
	if (f->doorbell_fd >= 0) {
		static const uint8_t rings[FLOOD_SOCK_BATCH_BYTES];
		flood_fd(f, f->doorbell_fd, rings, sizeof(rings), 1);
	} else if (f->d->server != NULL) {
		flood_ring(f);
	} else {
		size_t count = FLOOD_SOCK_BATCH_BYTES / f->len + 1;
		uint8_t *batch = malloc(count * f->len);
		if (batch == NULL)
			abort();
		for (size_t i = 0; i < count; i++)
			memcpy(batch + i * f->len, f->msg, f->len);
		flood_fd(f, f->d->sock, batch, count * f->len, f->len);
		free(batch);
	}
	return NULL;
}

static void flood_start(struct fake_flood *f) {
	atomic_init(&f->stop, false);
	atomic_init(&f->sent, 0);
	assert_int_equal(pthread_create(&f->thread, NULL, flood_run, f), 0);
}

void fake_flood_start(
	struct fake_flood *f,
	struct fake_daemon *d,
	const void *msg,
	size_t len,
	uint64_t max_bytes
) {
	assert_true(len >= sizeof(struct gr_api_response) && len <= sizeof(f->msg));
	f->d = d;
	f->doorbell_fd = -1;
	memcpy(f->msg, msg, len);
	f->len = len;
	f->max_bytes = max_bytes;
	flood_start(f);
}

void fake_flood_doorbell_start(struct fake_flood *f, int fd) {
	f->d = NULL;
	f->doorbell_fd = fd;
	f->len = 0;
	f->max_bytes = 0;
	flood_start(f);
}

void fake_flood_wait(struct fake_flood *f, uint64_t sent) {
	uint64_t start = fake_daemon_now_ms();
	while (atomic_load(&f->sent) < sent) {
		assert_true(fake_daemon_now_ms() - start < FAKE_FLOOD_MAX_S * 1000);
		usleep(1000);
	}
}

uint64_t fake_flood_stop(struct fake_flood *f) {
	atomic_store(&f->stop, true);
	assert_int_equal(pthread_join(f->thread, NULL), 0);
	return atomic_load(&f->sent);
}

void fake_daemon_doorbell_sleep(struct fake_daemon *d, int stop_fd) {
	struct pollfd pfd[] = {
		{.fd = shmchan_server_req_fd(d->server), .events = POLLIN},
		{.fd = stop_fd, .events = POLLIN},
	};
	FAKE_DAEMON_CHECK(poll(pfd, 2, -1) > 0 || errno == EINTR);
	uint64_t count;
	if (pfd[0].revents & POLLIN)
		FAKE_DAEMON_CHECK(read(pfd[0].fd, &count, sizeof(count)) == sizeof(count));
	shmchan_server_doorbell_disarm(d->server);
}

void fake_daemon_serve(
	struct fake_daemon *d,
	uint8_t *req,
	const atomic_bool *stop,
	int stop_fd,
	atomic_uint *asleep,
	void (*handle)(void *arg, int len),
	void *arg
) {
	while (!atomic_load(stop)) {
		int n = shmchan_server_recv(d->server, req, SHMCHAN_MSG_MAX);
		FAKE_DAEMON_CHECK(n >= 0);
		if (n > 0) {
			handle(arg, n);
			// A batch of one: publish, hand the cells back, ring.
			shmchan_server_flush(d->server);
			continue;
		}
		shmchan_server_doorbell_arm(d->server);
		if (shmchan_server_has_request(d->server)) {
			shmchan_server_doorbell_disarm(d->server);
			continue;
		}
		if (asleep != NULL)
			atomic_fetch_add(asleep, 1);
		fake_daemon_doorbell_sleep(d, stop_fd);
	}
}

// fake_slow's handler: answer the request of its type, answer_us late.
static void fake_slow_handle(void *arg, int n) {
	struct fake_slow *p = arg;
	struct gr_api_request req;

	FAKE_DAEMON_CHECK(n >= (int)sizeof(req));
	memcpy(&req, p->req, sizeof(req));
	FAKE_DAEMON_CHECK(req.type == p->type);
	uint64_t read_ms = fake_daemon_now_ms();
	p->answered++;
	while (p->gate != NULL && atomic_load(p->gate) < p->answered &&
	       fake_daemon_now_ms() - read_ms < FAKE_SLOW_GATE_MAX_MS)
		usleep(50);
	usleep(p->answer_us);
	struct gr_api_response resp = {.for_id = req.id};
	FAKE_DAEMON_CHECK(shmchan_server_enqueue(p->d.server, &resp, sizeof(resp), NULL, 0) == 0);
}

static void *fake_slow_run(void *arg) {
	struct fake_slow *p = arg;

	fake_daemon_serve(&p->d, p->req, &p->stop, p->stop_fd, &p->asleep, fake_slow_handle, p);
	return NULL;
}

struct fake_slow *fake_slow_start(int spin_us, uint32_t type, unsigned answer_us) {
	struct fake_slow *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->type = type;
	p->answer_us = answer_us;
	p->req = malloc(SHMCHAN_MSG_MAX);
	assert_non_null(p->req);
	p->stop_fd = eventfd(0, EFD_CLOEXEC);
	assert_true(p->stop_fd >= 0);
	fake_daemon_init(&p->d, spin_us);
	fake_daemon_attach(&p->d);
	assert_int_equal(pthread_create(&p->thread, NULL, fake_slow_run, p), 0);
	return p;
}

void fake_slow_stop(struct fake_slow *p) {
	uint64_t one = 1;

	atomic_store(&p->stop, true);
	assert_int_equal(write(p->stop_fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(pthread_join(p->thread, NULL), 0);
	fake_daemon_fini(&p->d);
	close(p->stop_fd);
	free(p->req);
	free(p);
}
