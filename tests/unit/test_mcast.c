/* SPDX-License-Identifier: MIT */
/*
 * UD multicast through the two-NIC simulation: attach and detach
 * (argument errors, a full table), a datagram to a group reaching every
 * member of both NICs (the sender's own NIC by loopback) with its data,
 * detached and destroyed QPs out of the group, frames for groups nobody
 * joined dropped and counted, and a QP that blocks its own loopback.
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "unit.h"

#define STEPS  4000
#define QKEY   0x4d430000u
#define GROUP  0xef010203u      /* 239.1.2.3 */
#define RBUF   0x100000u

struct mc_env {
	struct fenv *e;
	struct fqp sa, ma, mb1, mb2; /* sender and member on a, members on b */
};

static void mc_gid(uint8_t gid[16], uint32_t ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	for (int i = 0; i < 4; i++)
		gid[12 + i] = (uint8_t)(ip >> (24 - 8 * i));
}

static int mc_cmd(struct fqp *qp, uint16_t op, uint32_t ip, uint32_t flags)
{
	struct snic_cmd_mcast in = { .qpn = qp->qpn, .flags = flags };

	mc_gid(in.gid, ip);
	return fctx_cmd(qp->ctx, op, &in, sizeof(in), NULL, 0);
}

static void mc_qp(struct fside *s, struct fqp *qp, uint32_t psn)
{
	CU_ASSERT_EQUAL_FATAL(fside_qp(s, qp, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(qp, QKEY, psn), SNIC_ST_OK);
}

static void mc_setup(struct mc_env *m)
{
	m->e = fenv_new(4200, 1u << 21, 256);
	mc_qp(&m->e->a, &m->sa, 1);
	mc_qp(&m->e->a, &m->ma, 2);
	mc_qp(&m->e->b, &m->mb1, 3);
	mc_qp(&m->e->b, &m->mb2, 4);
	CU_ASSERT_EQUAL(mc_cmd(&m->ma, SNIC_CMD_MCAST_ATTACH, GROUP, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mc_cmd(&m->mb1, SNIC_CMD_MCAST_ATTACH, GROUP, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mc_cmd(&m->mb2, SNIC_CMD_MCAST_ATTACH, GROUP, 0), SNIC_ST_OK);
}

static void mc_recv(struct fqp *qp, struct fside *s, uint64_t wr_id, uint64_t off)
{
	struct snic_wqe_sge sge = fside_sge(s, off, SNIC_GRH_LEN + 1024);

	memset(fside_ptr(s, off), 0xcc, SNIC_GRH_LEN + 1024);
	fqp_post_recv(qp, wr_id, &sge, 1);
}

/* A datagram of len bytes (pattern seed) from qp to group ip. */
static void mc_send(struct mc_env *m, struct fqp *qp, uint32_t ip, uint32_t len,
		    uint32_t seed)
{
	struct snic_wqe_sge sge = fside_sge(&m->e->a, 0, len);
	struct snic_wqe_ud ud;
	struct fwr wr = { .wr_id = seed, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge,
			  .num_sge = 1, .ud = &ud };
	struct snic_cqe c;

	fpattern(fside_ptr(&m->e->a, 0), len, seed);
	fud_addr(&ud, ip, SNIC_MCAST_QPN, QKEY);
	fqp_post_send(qp, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(m->e->s, &m->e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_SEND);
}

/* The receive of qp (at off of side s): the datagram of mc_send. */
static void mc_check(struct fside *s, const struct snic_cqe *c, uint64_t off,
		     uint32_t len, uint32_t seed, uint32_t src_qp)
{
	uint8_t want[1024];
	const uint8_t *rb = fside_ptr(s, off);

	fpattern(want, len, seed);
	CU_ASSERT_EQUAL(c->status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c->opcode, SNIC_WC_RECV);
	CU_ASSERT_EQUAL(c->byte_len, SNIC_GRH_LEN + len);
	CU_ASSERT_EQUAL(c->src_qp, src_qp);
	CU_ASSERT_EQUAL(memcmp(rb + 36, "\xef\x01\x02\x03", 4), 0); /* IPv4 dst */
	CU_ASSERT_EQUAL(memcmp(rb + SNIC_GRH_LEN, want, len), 0);
	CU_ASSERT_EQUAL(rb[SNIC_GRH_LEN + len], 0xcc);
}

/* The next receive CQE of side s: which QP took it. */
static uint32_t mc_cqe(struct mc_env *m, struct fside *s, struct snic_cqe *c)
{
	if (!fsim_poll_cq(m->e->s, &s->cq, c, STEPS))
		return 0;
	return c->qp_num;
}

/* One datagram reaches the member of the sender's NIC (loopback) and
 * both members of the other NIC, data and all; the sender itself, not
 * attached, gets nothing. */
static void test_mcast_fanout(void)
{
	struct mc_env m;
	struct snic_cqe c;
	uint64_t offs[3] = { RBUF, RBUF + 0x1000, RBUF + 0x2000 };
	bool seen_b1 = false, seen_b2 = false;

	mc_setup(&m);
	mc_recv(&m.sa, &m.e->a, 9, RBUF + 0x3000);
	mc_recv(&m.ma, &m.e->a, 1, offs[0]);
	mc_recv(&m.mb1, &m.e->b, 2, offs[1]);
	mc_recv(&m.mb2, &m.e->b, 3, offs[2]);
	mc_send(&m, &m.sa, GROUP, 700, 77);
	CU_ASSERT_EQUAL_FATAL(mc_cqe(&m, &m.e->a, &c), m.ma.qpn);
	mc_check(&m.e->a, &c, offs[0], 700, 77, m.sa.qpn);
	for (int i = 0; i < 2; i++) {
		uint32_t q = mc_cqe(&m, &m.e->b, &c);

		CU_ASSERT_FATAL(q == m.mb1.qpn || q == m.mb2.qpn);
		mc_check(&m.e->b, &c, q == m.mb1.qpn ? offs[1] : offs[2], 700, 77,
			 m.sa.qpn);
		seen_b1 |= q == m.mb1.qpn;
		seen_b2 |= q == m.mb2.qpn;
	}
	CU_ASSERT(seen_b1 && seen_b2);
	fsim_idle(m.e->s, 50);
	CU_ASSERT_FALSE(fcq_poll(&m.e->a.cq, &c)); /* the sender: not a member */
	CU_ASSERT_EQUAL(fside_counter(&m.e->a, "tx_frames"), 1); /* once on the port */
	CU_ASSERT_EQUAL(fside_counter(&m.e->b, "rx_mcast_frames"), 1);
	CU_ASSERT_EQUAL(fside_counter(&m.e->a, "rx_mcast_frames"), 1);
	fenv_free(m.e);
}

/* Detached and destroyed members hear nothing; a group nobody on a NIC
 * joined is dropped there and counted; a wrong Q_Key as for unicast. */
static void test_mcast_detach(void)
{
	struct mc_env m;
	struct snic_cqe c;

	mc_setup(&m);
	CU_ASSERT_EQUAL(mc_cmd(&m.mb2, SNIC_CMD_MCAST_DETACH, GROUP, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mc_cmd(&m.mb2, SNIC_CMD_MCAST_DETACH, GROUP, 0), SNIC_ST_NOENT);
	mc_recv(&m.mb1, &m.e->b, 2, RBUF);
	mc_recv(&m.mb2, &m.e->b, 3, RBUF + 0x1000);
	mc_send(&m, &m.sa, GROUP, 64, 5);
	CU_ASSERT_EQUAL_FATAL(mc_cqe(&m, &m.e->b, &c), m.mb1.qpn);
	mc_check(&m.e->b, &c, RBUF, 64, 5, m.sa.qpn);
	fsim_idle(m.e->s, 50);
	CU_ASSERT_FALSE(fcq_poll(&m.e->b.cq, &c));
	/* ma of a, a member without a RECV: lost there, counted */
	CU_ASSERT_FALSE(fcq_poll(&m.e->a.cq, &c) && c.opcode == SNIC_WC_RECV);
	CU_ASSERT_EQUAL(fside_counter(&m.e->a, "rx_drop_no_recv"), 1);
	/* the last member of b destroyed: the group is gone from b */
	CU_ASSERT_EQUAL(fqp_destroy(&m.mb1), SNIC_ST_OK);
	mc_send(&m, &m.sa, GROUP, 64, 6);
	fsim_idle(m.e->s, 50);
	CU_ASSERT_EQUAL(fside_counter(&m.e->b, "rx_drop_mcast_not_joined"), 1);
	/* a group nobody joined: b drops it, a makes no loopback copy */
	mc_send(&m, &m.sa, 0xef090909u, 64, 7);
	fsim_idle(m.e->s, 50);
	CU_ASSERT_EQUAL(fside_counter(&m.e->b, "rx_drop_mcast_not_joined"), 2);
	CU_ASSERT_EQUAL(fside_counter(&m.e->a, "rx_drop_mcast_not_joined"), 0);
	CU_ASSERT_EQUAL(fside_counter(&m.e->a, "loopback_frames"), 2);
	fenv_free(m.e);
}

/* Attach errors: a QP that is not UD, a GID that is not IPv4 multicast
 * (unicast, IPv6 multicast), unknown flags, another context's QP; a full
 * table. */
static void test_mcast_errors(void)
{
	struct mc_env m;
	struct fqp rc;
	struct snic_cmd_mcast in = { 0 };

	mc_setup(&m);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&m.e->a, &rc, SNIC_QPT_RC, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mc_cmd(&rc, SNIC_CMD_MCAST_ATTACH, GROUP, 0), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_ATTACH, 0xc0a80001u, 0), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_ATTACH, GROUP, 0x80), SNIC_ST_INVAL);
	in.qpn = m.sa.qpn;
	in.gid[0] = 0xff;
	in.gid[1] = 0x0e;
	in.gid[15] = 1;
	CU_ASSERT_EQUAL(fctx_cmd(m.sa.ctx, SNIC_CMD_MCAST_ATTACH, &in, sizeof(in), NULL, 0),
			SNIC_ST_INVAL);
	in.qpn = m.sa.qpn ^ 0x400; /* another generation: no such QP */
	CU_ASSERT_EQUAL(fctx_cmd(m.sa.ctx, SNIC_CMD_MCAST_ATTACH, &in, sizeof(in), NULL, 0),
			SNIC_ST_NOENT);
	/* attaching twice is once; the table holds SNIC_MAX_MCAST_GRP groups */
	CU_ASSERT_EQUAL(mc_cmd(&m.ma, SNIC_CMD_MCAST_ATTACH, GROUP, 0), SNIC_ST_OK);
	for (uint32_t g = 1; g < SNIC_MAX_MCAST_GRP; g++)
		CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_ATTACH, GROUP + g, 0),
				SNIC_ST_OK);
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_ATTACH, GROUP + 100, 0),
			SNIC_ST_NOMEM);
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_DETACH, GROUP + 1, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_ATTACH, GROUP + 100, 0), SNIC_ST_OK);
	fenv_free(m.e);
}

/* A sender attached to its own group hears itself (loopback), unless it
 * blocks its own loopback; other members of its NIC hear it either way. */
static void test_mcast_block_self(void)
{
	struct mc_env m;
	struct snic_cqe c;

	mc_setup(&m);
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_ATTACH, GROUP, 0), SNIC_ST_OK);
	mc_recv(&m.sa, &m.e->a, 1, RBUF);
	mc_recv(&m.ma, &m.e->a, 2, RBUF + 0x1000);
	mc_send(&m, &m.sa, GROUP, 100, 3);
	for (int i = 0; i < 2; i++) {
		uint32_t q = mc_cqe(&m, &m.e->a, &c);

		CU_ASSERT_FATAL(q == m.sa.qpn || q == m.ma.qpn);
		mc_check(&m.e->a, &c, q == m.sa.qpn ? RBUF : RBUF + 0x1000, 100, 3,
			 m.sa.qpn);
	}
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_DETACH, GROUP, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(mc_cmd(&m.sa, SNIC_CMD_MCAST_ATTACH, GROUP,
			       SNIC_MCAST_F_BLOCK_SELF), SNIC_ST_OK);
	mc_recv(&m.sa, &m.e->a, 4, RBUF);
	mc_recv(&m.ma, &m.e->a, 5, RBUF + 0x1000);
	mc_send(&m, &m.sa, GROUP, 100, 6);
	CU_ASSERT_EQUAL_FATAL(mc_cqe(&m, &m.e->a, &c), m.ma.qpn);
	mc_check(&m.e->a, &c, RBUF + 0x1000, 100, 6, m.sa.qpn);
	fsim_idle(m.e->s, 50);
	CU_ASSERT_FALSE(fcq_poll(&m.e->a.cq, &c));
	/* ma sends: sa, blocking only its own datagrams, hears it */
	mc_send(&m, &m.ma, GROUP, 100, 7);
	CU_ASSERT_EQUAL_FATAL(mc_cqe(&m, &m.e->a, &c), m.sa.qpn);
	mc_check(&m.e->a, &c, RBUF, 100, 7, m.ma.qpn);
	fenv_free(m.e);
}

UNIT_SUITE(mcast, NULL, NULL,
	   UNIT_TEST(test_mcast_fanout),
	   UNIT_TEST(test_mcast_detach),
	   UNIT_TEST(test_mcast_errors),
	   UNIT_TEST(test_mcast_block_self));
