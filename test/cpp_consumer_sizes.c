// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// The wire sizes as C sees them, for test/cpp_consumer.cpp to compare with
// what C++ sees in the same headers.

#include "cpp_consumer_sizes.h"

#include <gr_api.h>
#include <gr_shm.h>

const size_t cpp_consumer_c_sizes[CPP_CONSUMER_N_SIZES] = {CPP_CONSUMER_SIZES};
