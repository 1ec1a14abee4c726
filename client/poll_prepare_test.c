// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_poll_prepare() wakes a sleeping daemon for every request
// sent with gr_api_client_send_more() before it, also when an earlier
// prepare armed the doorbell already and no poll_done() came between: a
// caller that then sleeps on the fd must not wait for answers to requests
// the daemon was never woken for. And the daemon hears that a client which
// armed through poll_prepare sleeps in its caller's loop.

#include "fake_daemon.h"

#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#define TEST_ECHO GR_MSG_TYPE(0x7e57, 1)

static void prepare_again_flushes(void **state) {
	struct fake_daemon *d = *state;
	uint8_t buf[sizeof(struct gr_api_request)];
	fake_daemon_attach(d);
	struct gr_api_client *c = d->client;

	// The daemon sleeps: its need-wakeup flag is set.
	shmchan_server_doorbell_arm(d->server);
	assert_int_equal(gr_api_client_poll_prepare(c), 0);
	assert_int_equal(fake_daemon_doorbell_rings(d), 0);
	struct shmchan_peer peer;
	shmchan_server_peer(d->server, true, &peer);
	assert_true(peer.sleeping);
	assert_true(peer.in_loop);

	long id = gr_api_client_send_more(c, TEST_ECHO, 0, NULL);
	assert_true(id > 0);
	assert_int_equal(fake_daemon_doorbell_rings(d), 0);
	// Armed still: this prepare returns 0 at once, after the ring.
	assert_int_equal(gr_api_client_poll_prepare(c), 0);
	assert_int_equal(fake_daemon_doorbell_rings(d), 1);
	assert_int_equal(gr_api_client_poll_done(c), 0);

	assert_int_equal(shmchan_server_recv(d->server, buf, sizeof(buf)), sizeof(buf));
	struct gr_api_request hdr;
	memcpy(&hdr, buf, sizeof(hdr));
	assert_int_equal(hdr.id, id);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		FAKE_DAEMON_TEST(prepare_again_flushes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
