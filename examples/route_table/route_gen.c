// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// route_inject's routes (route_gen.h). The distributions and the way each
// bucket's prefixes are laid out are the facts of Grout's route injector:
// a bucket's n-th prefix puts n + 1 in the high bits of its network part,
// so that the prefixes of one length never overlap; IPv6 buckets each take
// a /8 of their own, 0x20 + the bucket's rank.

#include "route_gen.h"

#include <arpa/inet.h>
#include <string.h>

struct bucket {
	uint8_t prefixlen;
	uint16_t weight;
};

// A real IPv4 BGP table's prefix lengths (2026; CIDR report).
static const struct bucket ipv4_dist[] = {
	{16, 14},
	{17, 8},
	{18, 14},
	{19, 25},
	{20, 45},
	{21, 51},
	{22, 109},
	{23, 106},
	{24, 620},
	{32, 8},
};

// A real IPv6 BGP table's prefix lengths (2026; bgp.potaroo.net, APNIC).
static const struct bucket ipv6_dist[] = {
	{32, 130},
	{36, 40},
	{40, 95},
	{44, 105},
	{48, 500},
	{128, 10},
	{46, 50},
	{42, 40},
	{38, 30},
};

// splitmix64: a seeded sequence of well-mixed 64-bit values.
static uint64_t splitmix64(uint64_t *state) {
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void route_gen_init(struct route_gen *g, uint8_t family, uint64_t seed) {
	const struct bucket *dist = family == ROUTE_TABLE_AF_IP4 ? ipv4_dist : ipv6_dist;
	unsigned slot = 0;

	memset(g, 0, sizeof(*g));
	g->family = family;
	g->n_buckets = family == ROUTE_TABLE_AF_IP4 ? sizeof(ipv4_dist) / sizeof(ipv4_dist[0])
						    : sizeof(ipv6_dist) / sizeof(ipv6_dist[0]);
	for (unsigned b = 0; b < g->n_buckets; b++) {
		g->prefixlen[b] = dist[b].prefixlen;
		g->weight[b] = dist[b].weight;
		for (unsigned w = 0; w < dist[b].weight; w++)
			g->slot_bucket[slot++] = (uint8_t)b;
	}
	if (seed == 0)
		return;
	// Fisher-Yates: the same proportions every thousand routes, in an
	// order of the seed's.
	for (unsigned i = ROUTE_GEN_SLOTS - 1; i > 0; i--) {
		unsigned j = (unsigned)(splitmix64(&seed) % (i + 1));
		uint8_t b = g->slot_bucket[i];

		g->slot_bucket[i] = g->slot_bucket[j];
		g->slot_bucket[j] = b;
	}
}

static void ipv4_prefix(uint8_t len, uint32_t v, struct route_table_prefix *p) {
	// 32 - len is below 32: len is 16 at least.
	p->ip4 = htonl(v << (32 - len));
}

static void ipv6_prefix(unsigned bucket, uint8_t len, uint32_t v, struct route_table_prefix *p) {
	unsigned net_bits = len > 8 ? len - 8u : 1u;
	unsigned bit_offset = net_bits > 32 ? net_bits - 32 : 0;
	uint32_t shifted = v << (32 - net_bits + bit_offset);
	unsigned start = bit_offset / 8;

	p->ip6[0] = (uint8_t)(0x20 + bucket);
	p->ip6[1 + start] = (uint8_t)(shifted >> 24);
	p->ip6[2 + start] = (uint8_t)(shifted >> 16);
	p->ip6[3 + start] = (uint8_t)(shifted >> 8);
	p->ip6[4 + start] = (uint8_t)shifted;
}

void route_gen_next(struct route_gen *g, uint32_t index, struct route_table_route *r) {
	unsigned b = g->slot_bucket[index % ROUTE_GEN_SLOTS];
	uint32_t v = ++g->seq[b];

	memset(r, 0, sizeof(*r));
	r->dest.family = g->family;
	r->dest.prefixlen = g->prefixlen[b];
	if (g->family == ROUTE_TABLE_AF_IP4)
		ipv4_prefix(g->prefixlen[b], v, &r->dest);
	else
		ipv6_prefix(b, g->prefixlen[b], v, &r->dest);
	r->nh_id = index % ROUTE_GEN_NEXTHOPS + 1;
}
