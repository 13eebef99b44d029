/* SPDX-License-Identifier: MIT */
/*
 * UC (IBTA 9.8.2) through the two-NIC simulation, black-box: SEND and RDMA
 * WRITE segmented at the path MTU, a lost packet dropping only the message
 * it belongs to (PSN resynchronisation, 9.8.2.2), WRITE with immediate
 * consuming a RECV, an R_Key violation dropped silently (no NAKs in UC).
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "fake_frames.h"
#include "unit.h"

#define STEPS 8000
#define MTU   1024              /* fconn_default's path MTU */
#define RBUF  0x80000u          /* receive area in b's buffer */

struct uc_env {
	struct fenv *e;
	struct fqp qa, qb;
	struct ftap tap;        /* what a transmits */
	struct fsrq srq;        /* b's receives, with uc_setup_srq */
};

static void uc_setup_with(struct uc_env *u, bool srq)
{
	struct fconn conn;

	u->e = fenv_new(4200, 1u << 20, 256);
	fconn_default(&conn);
	u->srq.srqn = 0;
	if (srq)
		CU_ASSERT_EQUAL_FATAL(fsrq_create(&u->srq, &u->e->b.ctx, u->e->b.pd,
						  16, 1, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&u->e->a, &u->qa, SNIC_QPT_UC, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&u->e->b, &u->qb, SNIC_QPT_UC, u->srq.srqn),
			      SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&u->qa, &u->qb, &conn), SNIC_ST_OK);
	fsim_idle(u->e->s, 10); /* ARP both ways */
	ftap_init(&u->tap, 0);
	fake_link_set_hook(&u->e->s->link, ftap_hook, &u->tap);
}

static void uc_setup(struct uc_env *u)
{
	uc_setup_with(u, false);
}

static void uc_post(struct uc_env *u, uint64_t wr_id, uint8_t opcode,
		    uint64_t off, uint32_t len, uint64_t raddr, uint32_t rkey,
		    uint32_t imm)
{
	struct snic_wqe_sge sge = fside_sge(&u->e->a, off, len);
	struct fwr wr = { .wr_id = wr_id, .opcode = opcode,
			  .flags = SNIC_SEND_SIGNALED, .imm = imm,
			  .remote_addr = raddr, .rkey = rkey, .sge = &sge,
			  .num_sge = 1 };

	fqp_post_send(&u->qa, &wr);
}

static void uc_recv(struct uc_env *u, uint64_t wr_id, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge sge = fside_sge(&u->e->b, off, len);

	if (u->srq.srqn)
		fsrq_post(&u->srq, wr_id, &sge, 1);
	else
		fqp_post_recv(&u->qb, wr_id, &sge, 1);
}

static bool cqe(struct uc_env *u, struct fcq *cq, struct snic_cqe *c)
{
	memset(c, 0xee, sizeof(*c));
	return fsim_poll_cq(u->e->s, cq, c, STEPS);
}

/* SENDs of 1 to 6 packets: each arrives whole in its RECV. */
static void test_uc_send_multi_packet(void)
{
	static const uint32_t sizes[] = { 0, 1, MTU, MTU + 1, 3 * MTU, 5 * MTU + 17 };
	struct uc_env u;
	struct snic_cqe c;
	uint64_t frames = 0;

	uc_setup(&u);
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		uint64_t roff = RBUF + i * 0x2000;

		fpattern(fside_ptr(&u.e->a, i * 0x2000), len, 20 + i);
		memset(fside_ptr(&u.e->b, roff), 0xcc, 0x2000);
		uc_recv(&u, 100 + i, roff, 0x1800);
		uc_post(&u, 10 + i, SNIC_WR_SEND, i * 0x2000, len, 0, 0, 0);
		CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 10 + i);
		CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 100 + i);
		CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV);
		CU_ASSERT_EQUAL(c.byte_len, len);
		CU_ASSERT_EQUAL(c.src_qp, u.qa.qpn);
		CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, roff),
				       fside_ptr(&u.e->a, i * 0x2000), len), 0);
		CU_ASSERT_EQUAL(*fside_ptr(&u.e->b, roff + len), 0xcc);
		frames += len ? (len + MTU - 1) / MTU : 1;
	}
	CU_ASSERT_EQUAL(u.tap.roce, frames);    /* no ACKs, no retries */
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "acks_sent"), 0);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_bad_psn"), 0);
	fenv_free(u.e);
}

/* Three 3-packet SENDs; the middle packet of the first is lost.  Only the
 * first message is dropped (PSN gap, then a LAST outside a message); its
 * RECV is kept and takes the second message, the third goes to the next
 * RECV; the sender sees three successes. */
static void lost_middle_packet(bool srq)
{
	struct uc_env u;
	struct snic_cqe c;
	const uint32_t len = 3 * MTU;

	uc_setup_with(&u, srq);
	u.tap.drop_mask = 1u << 1;
	for (unsigned i = 0; i < 3; i++) {
		fpattern(fside_ptr(&u.e->a, i * 0x1000), len, 40 + i);
		uc_recv(&u, 100 + i, RBUF + i * 0x1000, 0x1000);
	}
	memset(fside_ptr(&u.e->b, RBUF), 0xcc, 3 * 0x1000);
	for (unsigned i = 0; i < 3; i++)
		uc_post(&u, 10 + i, SNIC_WR_SEND, i * 0x1000, len, 0, 0, 0);
	for (unsigned i = 0; i < 3; i++) {
		CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 10 + i);
	}
	for (unsigned i = 0; i < 2; i++) {
		CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 100 + i);
		CU_ASSERT_EQUAL(c.byte_len, len);
		/* message i + 1 in RECV i */
		CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, RBUF + i * 0x1000),
				       fside_ptr(&u.e->a, (i + 1) * 0x1000), len), 0);
	}
	fsim_idle(u.e->s, 100);
	CU_ASSERT_FALSE(fcq_poll(&u.e->b.cq, &c));  /* RECV 102 still posted */
	CU_ASSERT_EQUAL(u.tap.roce, 9);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_bad_psn"), 1);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_opcode_seq"), 1);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "nak_seq_sent"), 0);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "retransmits"), 0);
	/* the next message lands in the RECV left over */
	u.tap.drop_mask = 0;
	uc_post(&u, 13, SNIC_WR_SEND, 0, 100, 0, 0, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.wr_id, 102);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, RBUF + 2 * 0x1000),
			       fside_ptr(&u.e->a, 0), 100), 0);
	fenv_free(u.e);
}

static void test_uc_lost_middle_packet(void)
{
	lost_middle_packet(false);
}

/* The same with the receives from an SRQ: the RECV the dropped message
 * had taken is kept, not lost from the shared queue. */
static void test_uc_lost_middle_packet_srq(void)
{
	lost_middle_packet(true);
}

/* RDMA WRITE of several packets lands in place and consumes no RECV; WRITE
 * with immediate consumes one: RECV_RDMA_WITH_IMM, byte_len = length. */
static void test_uc_write_imm(void)
{
	struct uc_env u;
	struct snic_cqe c;
	const uint32_t len = 2 * MTU + 300;
	uint64_t dst;

	uc_setup(&u);
	dst = u.e->b.buf + 0x4000;
	fpattern(fside_ptr(&u.e->a, 0), len, 61);
	fpattern(fside_ptr(&u.e->a, 0x2000), len, 62);
	memset(fside_ptr(&u.e->b, 0x4000), 0xcc, 0x4000);
	uc_recv(&u, 200, RBUF, 64);
	uc_post(&u, 1, SNIC_WR_RDMA_WRITE, 0, len, dst, u.e->b.mr, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RDMA_WRITE);
	fsim_idle(u.e->s, 50);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, 0x4000), fside_ptr(&u.e->a, 0),
			       len), 0);
	CU_ASSERT_EQUAL(*fside_ptr(&u.e->b, 0x4000 + len), 0xcc);
	CU_ASSERT_FALSE(fcq_poll(&u.e->b.cq, &c));
	uc_post(&u, 2, SNIC_WR_RDMA_WRITE_WITH_IMM, 0x2000, len, dst + 0x2000,
		u.e->b.mr, 0xa1b2c3d4u);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 200);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV_RDMA_WITH_IMM);
	CU_ASSERT_EQUAL(c.byte_len, len);
	CU_ASSERT_EQUAL(c.imm_data, 0xa1b2c3d4u);
	CU_ASSERT(c.wc_flags & SNIC_WC_WITH_IMM);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, 0x6000),
			       fside_ptr(&u.e->a, 0x2000), len), 0);
	CU_ASSERT_EQUAL(*fside_ptr(&u.e->b, 0x6000 + len), 0xcc);
	fenv_free(u.e);
}

/* A WRITE with a wrong R_Key: the responder drops the message silently
 * (counted as an access violation, no NAK on the wire), memory untouched;
 * the sender completes successfully; the next good WRITE lands. */
static void test_uc_write_bad_rkey(void)
{
	struct uc_env u;
	struct snic_cqe c;
	const uint32_t len = 2 * MTU;
	uint64_t dst;

	uc_setup(&u);
	dst = u.e->b.buf + 0x4000;
	fpattern(fside_ptr(&u.e->a, 0), len, 71);
	memset(fside_ptr(&u.e->b, 0x4000), 0xcc, len);
	uc_post(&u, 1, SNIC_WR_RDMA_WRITE, 0, len, dst, u.e->b.mr ^ 0x100, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	fsim_idle(u.e->s, 50);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "nak_access_sent"), 1);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "nak_access_recv"), 0);
	for (uint32_t i = 0; i < len; i++)
		if (*fside_ptr(&u.e->b, 0x4000 + i) != 0xcc) {
			CU_FAIL("memory written through a bad R_Key");
			break;
		}
	CU_ASSERT_EQUAL(fqp_state(&u.qb), SNIC_QPS_RTS);
	uc_post(&u, 2, SNIC_WR_RDMA_WRITE, 0, len, dst, u.e->b.mr, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	fsim_idle(u.e->s, 50);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, 0x4000), fside_ptr(&u.e->a, 0),
			       len), 0);
	fenv_free(u.e);
}

/* UC refuses what only RC has: an RDMA READ completes with
 * LOC_QP_OP_ERR (IBTA 9.8.2: no READ or atomics on UC). */
static void test_uc_no_read(void)
{
	struct uc_env u;
	struct snic_cqe c;

	uc_setup(&u);
	uc_post(&u, 1, SNIC_WR_RDMA_READ, 0, 64, u.e->b.buf, u.e->b.mr, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_QP_OP_ERR);
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(u.tap.roce, 0);
	fenv_free(u.e);
}

UNIT_SUITE(uc, NULL, NULL,
	   UNIT_TEST(test_uc_send_multi_packet),
	   UNIT_TEST(test_uc_lost_middle_packet),
	   UNIT_TEST(test_uc_lost_middle_packet_srq),
	   UNIT_TEST(test_uc_write_imm),
	   UNIT_TEST(test_uc_write_bad_rkey),
	   UNIT_TEST(test_uc_no_read));
