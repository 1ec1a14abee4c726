// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchan_copy(), the copy into and out of a ring's cells: every length
// from 0 to past its 16-byte moves' bound, at every alignment of either
// side within 16 bytes, copies exactly the bytes asked for and touches no
// byte before or after either buffer.

#include "region.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

// Guard bytes on each side of the buffers: a write past either end, or a
// read that ends up in the destination, shows there.
#define GUARD 32
#define SRC_FILL 0xa5
#define DST_FILL 0x5a
#define BUF_MAX (SHMCHAN_COPY_MOVES_MAX + 64)

static uint8_t src_buf[GUARD + 16 + BUF_MAX + GUARD];
static uint8_t dst_buf[GUARD + 16 + BUF_MAX + GUARD];

// Copy n bytes from src_off into dst_off (each below 16) and check every
// byte of both buffers.
static void copy_check(size_t n, size_t src_off, size_t dst_off) {
	uint8_t *src = src_buf + GUARD + src_off;
	uint8_t *dst = dst_buf + GUARD + dst_off;

	memset(src_buf, SRC_FILL, sizeof(src_buf));
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * 7 + n);
	memset(dst_buf, DST_FILL, sizeof(dst_buf));

	shmchan_copy(dst, src, n);

	for (size_t i = 0; i < n; i++) {
		if (dst[i] != (uint8_t)(i * 7 + n))
			fail_msg("n %zu, offsets %zu/%zu: byte %zu is %#x", n, src_off, dst_off, i, dst[i]);
	}
	for (uint8_t *p = dst_buf; p < dst; p++) {
		if (*p != DST_FILL)
			fail_msg("n %zu, offsets %zu/%zu: written %td bytes before", n, src_off, dst_off, dst - p);
	}
	for (uint8_t *p = dst + n; p < dst_buf + sizeof(dst_buf); p++) {
		if (*p != DST_FILL)
			fail_msg("n %zu, offsets %zu/%zu: written %td bytes after", n, src_off, dst_off, p - (dst + n));
	}
	for (size_t i = 0; i < n; i++) {
		if (src[i] != (uint8_t)(i * 7 + n))
			fail_msg("n %zu: the source changed at byte %zu", n, i);
	}
}

static void test_short_lengths_every_alignment(void **state) {
	(void)state;
	for (size_t n = 0; n <= 100; n++)
		for (size_t s = 0; s < 16; s++)
			for (size_t d = 0; d < 16; d++)
				copy_check(n, s, d);
}

// Around the bound where memcpy() takes over, and a frame of 4 KiB with
// a header.
static void test_long_lengths(void **state) {
	static const size_t lengths[] = {
		4096, 4096 + SHMCHAN_MSG_MIN, SHMCHAN_COPY_MOVES_MAX - 1, SHMCHAN_COPY_MOVES_MAX,
		SHMCHAN_COPY_MOVES_MAX + 1, SHMCHAN_COPY_MOVES_MAX + 17,
	};
	(void)state;
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
		for (size_t s = 0; s < 16; s += 4)
			for (size_t d = 0; d < 16; d += 3)
				copy_check(lengths[i], s, d);
}

int main(void) {
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_lengths_every_alignment),
		cmocka_unit_test(test_long_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
