/* SPDX-License-Identifier: MIT */
/*
 * Raw packet QPs and flow steering through the two-NIC simulation: a
 * frame sent whole and received whole where a flow steers it; rule
 * priority; RoCE v2 frames kept from rules that do not name UDP 4791 and
 * taken by one that does; argument errors, length errors, a full table,
 * a destroyed QP's flows gone.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "unit.h"

#define STEPS  4000
#define RBUF   0x100000u
#define QKEY   0x52570000u

struct raw_env {
	struct fenv *e;
	struct fqp ra, rb;      /* raw QPs on a and b */
};

static void raw_setup(struct raw_env *r)
{
	r->e = fenv_new(4200, 1u << 21, 256);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&r->e->a, &r->ra, SNIC_QPT_RAW_PACKET, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&r->e->b, &r->rb, SNIC_QPT_RAW_PACKET, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_raw_ready(&r->ra), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_raw_ready(&r->rb), SNIC_ST_OK);
}

/* An IPv4/UDP frame to dport with plen payload bytes at a's offset 0. */
static uint32_t raw_frame(struct raw_env *r, uint16_t dport, uint32_t plen, uint32_t seed)
{
	uint8_t *f = fside_ptr(&r->e->a, 0);
	static const uint8_t hdr[14] = { 2, 0, 0, 0, 0, 0xbb, 2, 0, 0, 0, 0, 0xaa, 8, 0 };

	memcpy(f, hdr, 14);
	memset(f + 14, 0, 28);
	f[14] = 0x45;
	f[14 + 9] = 17;
	f[14 + 2] = (uint8_t)((28 + plen) >> 8);
	f[14 + 3] = (uint8_t)(28 + plen);
	memcpy(f + 14 + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	f[34 + 2] = (uint8_t)(dport >> 8);
	f[34 + 3] = (uint8_t)dport;
	fpattern(f + 42, plen, seed);
	return 42 + plen;
}

static void raw_send(struct raw_env *r, uint32_t len, uint8_t want)
{
	struct snic_wqe_sge sge = fside_sge(&r->e->a, 0, len);
	struct fwr wr = { .wr_id = len, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1 };
	struct snic_cqe c;

	fqp_post_send(&r->ra, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(r->e->s, &r->e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, want);
}

static void raw_recv(struct fqp *qp, struct fside *s, uint64_t id, uint32_t len)
{
	struct snic_wqe_sge sge = fside_sge(s, RBUF, len);

	memset(fside_ptr(s, RBUF), 0xee, 4096);
	fqp_post_recv(qp, id, &sge, 1);
}

/* A rule: UDP dport (full mask) when dport != 0, else every IPv4 frame
 * (EtherType only). */
static int raw_flow(struct fqp *qp, uint16_t dport, uint16_t prio, uint32_t *h)
{
	struct snic_cmd_flow in;
	struct snic_cmd_handle out = { 0 };
	int st;

	memset(&in, 0, sizeof(in));
	in.qpn = qp->qpn;
	in.priority = prio;
	in.layers = SNIC_FLOW_L_ETH;
	in.val.ether_type = htons(0x0800);
	in.mask.ether_type = 0xffff;
	if (dport) {
		in.layers |= SNIC_FLOW_L_IPV4 | SNIC_FLOW_L_UDP;
		in.val.dport = htons(dport);
		in.mask.dport = 0xffff;
	}
	st = fctx_cmd(qp->ctx, SNIC_CMD_FLOW_CREATE, &in, sizeof(in), &out, sizeof(out));
	if (h)
		*h = out.handle;
	return st;
}

/* A frame sent whole arrives whole on the QP its flow names; one to no
 * flow's port is dropped by the RoCE classifier as before. */
static void test_raw_steer(void)
{
	struct raw_env r;
	struct snic_cqe c;
	uint32_t len;

	raw_setup(&r);
	CU_ASSERT_EQUAL(raw_flow(&r.rb, 5555, 0, NULL), SNIC_ST_OK);
	len = raw_frame(&r, 5555, 300, 1);
	raw_recv(&r.rb, &r.e->b, 1, 2048);
	raw_send(&r, len, SNIC_WC_SUCCESS);
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV);
	CU_ASSERT_EQUAL(c.byte_len, len);
	CU_ASSERT_EQUAL(c.qp_num, r.rb.qpn);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&r.e->b, RBUF), fside_ptr(&r.e->a, 0), len), 0);
	CU_ASSERT_EQUAL(*fside_ptr(&r.e->b, RBUF + len), 0xee);
	len = raw_frame(&r, 5556, 10, 2);
	raw_send(&r, len, SNIC_WC_SUCCESS);
	fsim_idle(r.e->s, 50);
	CU_ASSERT_FALSE(fcq_poll(&r.e->b.cq, &c));
	CU_ASSERT_EQUAL(fside_counter(&r.e->b, "rx_flow_steered"), 1);
	CU_ASSERT_EQUAL(fside_counter(&r.e->b, "rx_drop_not_roce"), 1);
	fenv_free(r.e);
}

/* The rule of lowest priority wins, then the oldest. */
static void test_raw_priority(void)
{
	struct raw_env r;
	struct fqp rb2;
	struct snic_cqe c;

	raw_setup(&r);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&r.e->b, &rb2, SNIC_QPT_RAW_PACKET, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_raw_ready(&rb2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(raw_flow(&r.rb, 0, 5, NULL), SNIC_ST_OK);
	CU_ASSERT_EQUAL(raw_flow(&rb2, 7000, 1, NULL), SNIC_ST_OK);
	raw_recv(&r.rb, &r.e->b, 1, 2048);
	raw_recv(&rb2, &r.e->b, 2, 2048);
	raw_send(&r, raw_frame(&r, 7000, 64, 3), SNIC_WC_SUCCESS);
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.qp_num, rb2.qpn);
	raw_send(&r, raw_frame(&r, 7001, 64, 4), SNIC_WC_SUCCESS);
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.qp_num, r.rb.qpn);
	fenv_free(r.e);
}

/* RoCE v2 is the NIC's: a rule for every IPv4 frame leaves a UD datagram
 * to its QP; a rule naming UDP 4791 takes it, whole. */
static void test_raw_roce_kept(void)
{
	struct raw_env r;
	struct fqp ua, ub;
	struct snic_wqe_sge s, rs;
	struct snic_wqe_ud ud;
	struct fwr wr = { .wr_id = 9, .opcode = SNIC_WR_SEND, .flags = SNIC_SEND_SIGNALED,
			  .sge = &s, .num_sge = 1, .ud = &ud };
	struct snic_cqe c;

	raw_setup(&r);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&r.e->a, &ua, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&r.e->b, &ub, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&ua, QKEY, 1), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&ub, QKEY, 2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(raw_flow(&r.rb, 0, 0, NULL), SNIC_ST_OK);
	s = fside_sge(&r.e->a, 8192, 100);
	rs = fside_sge(&r.e->b, RBUF + 8192, 4096);
	fud_addr(&ud, FSIM_IP_B, ub.qpn, QKEY);
	fqp_post_recv(&ub, 1, &rs, 1);
	raw_recv(&r.rb, &r.e->b, 2, 4096);
	fqp_post_send(&ua, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->a.cq, &c, STEPS));
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.qp_num, ub.qpn);
	CU_ASSERT_EQUAL(c.byte_len, SNIC_GRH_LEN + 100);
	CU_ASSERT_EQUAL(fside_counter(&r.e->b, "rx_flow_steered"), 0);
	/* named: the whole frame (Ethernet .. ICRC) goes to the raw QP */
	CU_ASSERT_EQUAL(raw_flow(&r.rb, 4791, 0, NULL), SNIC_ST_OK);
	fqp_post_send(&ua, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->a.cq, &c, STEPS));
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.qp_num, r.rb.qpn);
	CU_ASSERT_EQUAL(c.byte_len, 14 + 20 + 8 + 12 + 8 + 100 + 4);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&r.e->b, RBUF + 14 + 20 + 8 + 12 + 8),
			       fside_ptr(&r.e->a, 8192), 100), 0);
	CU_ASSERT_EQUAL(fside_counter(&r.e->b, "rx_flow_steered"), 1);
	fenv_free(r.e);
}

/* Errors: a flow on a QP that is not raw, bad layer sets, a full table;
 * frames too short to send, or longer than the RECV; a destroyed QP's
 * flows go with it. */
static void test_raw_errors(void)
{
	struct raw_env r;
	struct fqp ud;
	struct snic_cmd_flow in;
	struct snic_cqe c;
	uint32_t h;

	raw_setup(&r);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&r.e->b, &ud, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(raw_flow(&ud, 5555, 0, NULL), SNIC_ST_INVAL);
	memset(&in, 0, sizeof(in));
	in.qpn = r.rb.qpn;
	in.layers = SNIC_FLOW_L_UDP | SNIC_FLOW_L_TCP | SNIC_FLOW_L_IPV4;
	CU_ASSERT_EQUAL(fctx_cmd(r.rb.ctx, SNIC_CMD_FLOW_CREATE, &in, sizeof(in), NULL, 0),
			SNIC_ST_INVAL);
	in.layers = SNIC_FLOW_L_UDP; /* a port without its IPv4 layer */
	CU_ASSERT_EQUAL(fctx_cmd(r.rb.ctx, SNIC_CMD_FLOW_CREATE, &in, sizeof(in), NULL, 0),
			SNIC_ST_INVAL);
	in.layers = 0x100;
	CU_ASSERT_EQUAL(fctx_cmd(r.rb.ctx, SNIC_CMD_FLOW_CREATE, &in, sizeof(in), NULL, 0),
			SNIC_ST_INVAL);
	for (uint32_t i = 0; i < SNIC_MAX_FLOWS; i++)
		CU_ASSERT_EQUAL(raw_flow(&r.rb, (uint16_t)(6000 + i), 0, &h), SNIC_ST_OK);
	CU_ASSERT_EQUAL(raw_flow(&r.rb, 5555, 0, NULL), SNIC_ST_NOMEM);
	CU_ASSERT_EQUAL(fctx_cmd(r.rb.ctx, SNIC_CMD_FLOW_DESTROY, &h, sizeof(h), NULL, 0),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_cmd(r.rb.ctx, SNIC_CMD_FLOW_DESTROY, &h, sizeof(h), NULL, 0),
			SNIC_ST_NOENT);
	CU_ASSERT_EQUAL(raw_flow(&r.rb, 5555, 0, NULL), SNIC_ST_OK);
	/* longer than the RECV: LOC_LEN_ERR, the QP goes on */
	raw_recv(&r.rb, &r.e->b, 1, 64);
	raw_send(&r, raw_frame(&r, 5555, 100, 5), SNIC_WC_SUCCESS);
	CU_ASSERT_FATAL(fsim_poll_cq(r.e->s, &r.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(fqp_state(&r.rb), SNIC_QPS_RTS);
	/* the QP destroyed: its 64 rules with it, a new QP has none */
	CU_ASSERT_EQUAL(fqp_destroy(&r.rb), SNIC_ST_OK);
	raw_send(&r, raw_frame(&r, 5555, 100, 6), SNIC_WC_SUCCESS);
	fsim_idle(r.e->s, 50);
	CU_ASSERT_EQUAL(fside_counter(&r.e->b, "rx_flow_steered"), 1);
	CU_ASSERT_EQUAL(fside_counter(&r.e->b, "rx_drop_not_roce"), 1);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&r.e->b, &r.rb, SNIC_QPT_RAW_PACKET, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(raw_flow(&r.rb, 5555, 0, NULL), SNIC_ST_OK);
	/* shorter than an Ethernet header: not sent, a local error of the
	 * WQE (the QP to error, as for every type) */
	raw_send(&r, 13, SNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(fqp_state(&r.ra), SNIC_QPS_ERR);
	fenv_free(r.e);
}

UNIT_SUITE(raw, NULL, NULL,
	   UNIT_TEST(test_raw_steer),
	   UNIT_TEST(test_raw_priority),
	   UNIT_TEST(test_raw_roce_kept),
	   UNIT_TEST(test_raw_errors));
