/* SPDX-License-Identifier: MIT */
/*
 * Next hops (wire/route.c): the NIC's static routes (longest match, its
 * own subnet on the link), the host's next hop taking precedence, IPv6
 * destinations on the link; a host's next hop that cannot be a router
 * (unspecified, loopback, multicast, broadcast, our own address, the
 * other family) refused by MODIFY_QP and the CM; and one outstanding
 * neighbour request at a time (wire/neigh.c).
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "fake_host.h"
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

/* Next hops a host may not name (RFC 1122 3.2.1.3, RFC 5771, RFC 4291):
 * each refused by the rule, and by MODIFY_QP (INVAL, the QP stays in
 * INIT) where a good one moves it to RTR. */
static const uint32_t bad_nh4[] = {
	IP4(0, 0, 0, 1), IP4(127, 0, 0, 1), IP4(127, 9, 9, 9), IP4(224, 0, 0, 1),
	IP4(239, 255, 255, 250), IP4(240, 0, 0, 1), IP4(255, 255, 255, 255),
	IP4(198, 18, 1, 1) /* the NIC's own */,
};

static void test_route_next_hop_refused(void)
{
	uint8_t dst[16], nh[16], v6[16] = { 0xfd, 0, 0x5e, 0x1c, [15] = 7 };
	static const uint8_t none[16];

	routes_setup();
	ipv4_to_gid(IP4(198, 18, 2, 1), dst);
	CU_ASSERT_TRUE(route_next_hop4_ok(&core, 0));          /* none given */
	CU_ASSERT_TRUE(route_next_hop4_ok(&core, IP4(198, 18, 1, 254)));
	CU_ASSERT_TRUE(route_next_hop_ok(&core, dst, none));
	for (size_t i = 0; i < sizeof(bad_nh4) / sizeof(bad_nh4[0]); i++) {
		CU_ASSERT_FALSE(route_next_hop4_ok(&core, bad_nh4[i]));
		ipv4_to_gid(bad_nh4[i], nh);
		CU_ASSERT_FALSE(route_next_hop_ok(&core, dst, nh));
	}
	ipv4_to_gid(0, nh);                             /* ::ffff:0.0.0.0 */
	CU_ASSERT_FALSE(route_next_hop_ok(&core, dst, nh));
	CU_ASSERT_FALSE(route_next_hop_ok(&core, dst, v6)); /* IPv6 for IPv4 */
	ipv4_to_gid(IP4(198, 18, 1, 254), nh);
	CU_ASSERT_TRUE(route_next_hop_ok(&core, dst, nh));
	CU_ASSERT_FALSE(route_next_hop_ok(&core, v6, nh)); /* IPv4 for IPv6 */
	memcpy(nh, v6, 16);
	nh[15] = 1;
	CU_ASSERT_TRUE(route_next_hop_ok(&core, v6, nh));
	nh[0] = 0xff;                                   /* IPv6 multicast */
	CU_ASSERT_FALSE(route_next_hop_ok(&core, v6, nh));
	memset(nh, 0, 16);
	nh[15] = 1;                                     /* ::1 */
	CU_ASSERT_FALSE(route_next_hop_ok(&core, v6, nh));
}

static int modify_rtr_nh(struct fqp *qp, uint32_t nh)
{
	struct snic_cmd_modify_qp in;

	memset(&in, 0, sizeof(in));
	in.qpn = qp->qpn;
	in.attr_mask = SNIC_QP_STATE | SNIC_QP_AV | SNIC_QP_PATH_MTU |
		       SNIC_QP_DEST_QPN | SNIC_QP_RQ_PSN |
		       SNIC_QP_MAX_DEST_RD_ATOMIC | SNIC_QP_MIN_RNR_TIMER |
		       SNIC_QP_NEXT_HOP;
	in.attr.qp_state = SNIC_QPS_RTR;
	in.attr.path_mtu = 3;
	in.attr.dest_qp_num = 0x1234;
	in.attr.is_global = 1;
	in.attr.hop_limit = 64;
	ipv4_to_gid(IP4(198, 18, 2, 1), in.attr.dgid);  /* behind a router */
	ipv4_to_gid(nh, in.next_hop);
	return fctx_cmd(qp->ctx, SNIC_CMD_MODIFY_QP, &in, sizeof(in), NULL, 0);
}

static void test_route_next_hop_modify_qp(void)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 };
	struct snic_qp_attr a = { .qp_state = SNIC_QPS_INIT, .port_num = 1 };
	struct fdev dev;
	struct fctx c;
	struct fcq cq;
	struct fqp qp;
	uint32_t pdn;

	fdev_init(&dev, "snic0", mac, IP4(198, 18, 1, 1), 4200);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev.nic);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c, &dev, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&c, &pdn), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&cq, &c, 16), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qp, &c, pdn, &cq, &cq, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(&qp, SNIC_QP_STATE | SNIC_QP_PKEY_INDEX |
					 SNIC_QP_PORT | SNIC_QP_ACCESS_FLAGS, &a),
			      SNIC_ST_OK);
	for (size_t i = 0; i < sizeof(bad_nh4) / sizeof(bad_nh4[0]); i++) {
		CU_ASSERT_EQUAL(modify_rtr_nh(&qp, bad_nh4[i]), SNIC_ST_INVAL);
		CU_ASSERT_EQUAL(fqp_state(&qp), SNIC_QPS_INIT);
	}
	CU_ASSERT_EQUAL(modify_rtr_nh(&qp, IP4(198, 18, 1, 254)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(&qp), SNIC_QPS_RTR);
	CU_ASSERT_EQUAL(fdev_fini(&dev), 0);
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
	   UNIT_TEST(test_route_next_hop_refused),
	   UNIT_TEST(test_route_next_hop_modify_qp),
	   UNIT_TEST(test_neigh_one_outstanding));
