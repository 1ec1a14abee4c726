// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// gr_api_client_ping() and gr_api_client_ping2(): the round trips a Grout
// tool times (ping2_perf), with nothing to allocate or check in the caller.

#include "client_priv.h"

#include <errno.h>
#include <string.h>

GR_API_EXPORT int gr_api_client_ping(struct gr_api_client *c) {
	return gr_api_client_send_recv(c, GR_PING, 0, NULL, NULL);
}

// The payload of the seq-th ping2 of a handle: seq in its first 8 bytes, so
// that an echo of an earlier request is told from this one's, then a
// pattern of seq.
static void ping2_fill(struct gr_ping2 *p, uint64_t seq) {
	memcpy(p->payload, &seq, sizeof(seq));
	memset(p->payload + sizeof(seq), (int)(seq & 0x7f) | 0x40, sizeof(p->payload) - sizeof(seq)
	);
}

GR_API_EXPORT int gr_api_client_ping2(struct gr_api_client *c) {
	struct gr_ping2 req, echo;

	if (c == NULL) {
		errno = EINVAL;
		return -EINVAL;
	}
	ping2_fill(&req, ++c->ping2_seq);
	long len =
		gr_api_client_send_recv_into(c, GR_PING2, sizeof(req), &req, &echo, sizeof(echo));
	if (len < 0)
		return -errno;
	if (len != sizeof(echo) || memcmp(&req, &echo, sizeof(echo)) != 0) {
		errno = EBADMSG;
		return -EBADMSG;
	}
	return 0;
}
