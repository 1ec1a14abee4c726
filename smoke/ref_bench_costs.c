// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// ref_bench clock and syscall: what one clock_gettime(CLOCK_MONOTONIC) and
// one trivial system call cost, in one process (ref_bench.h).

#include "ref_bench.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void clock_leader_op(struct ctx *c) {
	struct timespec ts;
	(void)c;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	__asm__ volatile("" : : "r"(&ts) : "memory");
}

void syscall_leader_op(struct ctx *c) {
	(void)c;
	syscall(SYS_getppid);
}
