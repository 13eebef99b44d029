/* SPDX-License-Identifier: MIT */
/*
 * Next hops (wire/route.c): the NIC's static routes (longest match, its
 * own subnet on the link), the host's next hop taking precedence, IPv6
 * destinations on the link; and one outstanding neighbour request at a
 * time (wire/neigh.c).
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "nic/top.h"
#include "unit.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct snic_core core; /* only cfg is read */

static void routes_setup(void)
{
	memset(&core.cfg, 0, sizeof(core.cfg));
	core.cfg.ipv4 = IP4(198, 18, 1, 1);
	core.cfg.ipv4_plen = 24;
	core.cfg.nroutes = 2;
	core.cfg.routes[0] = (struct snic_ipv4_route){ .dst = 0, .plen = 0,
						       .gw = IP4(198, 18, 1, 254) };
	core.cfg.routes[1] = (struct snic_ipv4_route){ .dst = IP4(198, 18, 5, 0), .plen = 24,
						       .gw = IP4(198, 18, 1, 253) };
}

static void test_route_longest_match(void)
{
	routes_setup();
	CU_ASSERT_EQUAL(route_gw4(&core, IP4(198, 18, 1, 9)), 0);   /* on link */
	CU_ASSERT_EQUAL(route_gw4(&core, IP4(198, 18, 1, 1)), 0);   /* ours */
	CU_ASSERT_EQUAL(route_gw4(&core, IP4(198, 18, 2, 1)), IP4(198, 18, 1, 254));
	CU_ASSERT_EQUAL(route_gw4(&core, IP4(198, 18, 5, 7)), IP4(198, 18, 1, 253));
	CU_ASSERT_EQUAL(route_gw4(&core, IP4(10, 0, 0, 1)), IP4(198, 18, 1, 254));
	core.cfg.nroutes = 0; /* no routes: everything on the link */
	CU_ASSERT_EQUAL(route_gw4(&core, IP4(198, 18, 2, 1)), 0);
}

static void test_route_next_hop_order(void)
{
	uint8_t dst[16], nh[16], host[16], want[16], v6[16] = { 0xfd, 0, 0x5e, 0x1c };
	static const uint8_t none[16];

	routes_setup();
	ipv4_to_gid(IP4(198, 18, 2, 1), dst);
	ipv4_to_gid(IP4(198, 18, 1, 200), host);
	route_next_hop(&core, dst, host, nh);           /* the host's wins */
	CU_ASSERT_EQUAL(memcmp(nh, host, 16), 0);
	route_next_hop(&core, dst, none, nh);           /* all zero: none given */
	ipv4_to_gid(IP4(198, 18, 1, 254), want);
	CU_ASSERT_EQUAL(memcmp(nh, want, 16), 0);
	route_next_hop(&core, dst, NULL, nh);
	CU_ASSERT_EQUAL(memcmp(nh, want, 16), 0);
	v6[15] = 2;                                     /* IPv6: on the link */
	route_next_hop(&core, v6, NULL, nh);
	CU_ASSERT_EQUAL(memcmp(nh, v6, 16), 0);
}

/* A second ask for the same neighbour within SNIC_NEIGH_ASK_GAP_NS sends
 * no second request; after it, the ask goes out again. */
static void test_neigh_one_outstanding(void)
{
	struct fenv *e = fenv_new(4200, 1u << 18, 64);
	struct snic_nic *nic = e->s->a.nic;
	uint64_t n0 = fside_counter(&e->a, "arp_requests_sent");
	unsigned steps = (unsigned)(SNIC_NEIGH_ASK_GAP_NS / e->s->step_ns) + 2;

	neigh_resolve(nic->neigh, IP4(198, 18, 0, 77));
	neigh_resolve(nic->neigh, IP4(198, 18, 0, 77));
	fsim_idle(e->s, 4);
	CU_ASSERT_EQUAL(fside_counter(&e->a, "arp_requests_sent") - n0, 1);
	neigh_resolve(nic->neigh, IP4(198, 18, 0, 78)); /* another neighbour */
	CU_ASSERT_EQUAL(fside_counter(&e->a, "arp_requests_sent") - n0, 2);
	fsim_idle(e->s, steps);
	neigh_resolve(nic->neigh, IP4(198, 18, 0, 77));
	CU_ASSERT_EQUAL(fside_counter(&e->a, "arp_requests_sent") - n0, 3);
	fenv_free(e);
}

UNIT_SUITE(route, NULL, NULL,
	   UNIT_TEST(test_route_longest_match),
	   UNIT_TEST(test_route_next_hop_order),
	   UNIT_TEST(test_neigh_one_outstanding));
