/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues (IBTA 10.2.9) through the two-NIC simulation,
 * black-box: several QPs taking from one SRQ in posting order, the limit
 * event once per arming (10.2.9.6), an empty SRQ answered with RNR NAKs
 * for RC, UD datagrams into an SRQ, and the command checks.
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "unit.h"

#define STEPS  4000
#define NQP    3
#define RBUF   0x80000u

struct srq_env {
	struct fenv *e;
	struct fsrq srq;                /* on b */
	struct fqp qa[NQP], qb[NQP];    /* qb[i] takes from srq */
};

/* NQP RC pairs a -> b, b's receives from one SRQ of `cnt` WQEs. */
static void srq_setup(struct srq_env *v, uint32_t cnt, uint32_t limit)
{
	struct fconn conn;

	v->e = fenv_new(4200, 1u << 20, 256);
	fconn_default(&conn);
	CU_ASSERT_EQUAL_FATAL(fsrq_create(&v->srq, &v->e->b.ctx, v->e->b.pd,
					  cnt, 2, limit), SNIC_ST_OK);
	for (int i = 0; i < NQP; i++) {
		CU_ASSERT_EQUAL_FATAL(fside_qp(&v->e->a, &v->qa[i], SNIC_QPT_RC, 0),
				      SNIC_ST_OK);
		CU_ASSERT_EQUAL_FATAL(fside_qp(&v->e->b, &v->qb[i], SNIC_QPT_RC,
					       v->srq.srqn), SNIC_ST_OK);
		CU_ASSERT_EQUAL_FATAL(fqp_connect(&v->qa[i], &v->qb[i], &conn),
				      SNIC_ST_OK);
	}
	fsim_idle(v->e->s, 10);
}

static void srq_post(struct srq_env *v, uint64_t wr_id, uint32_t slot)
{
	struct snic_wqe_sge sge = fside_sge(&v->e->b, RBUF + slot * 0x1000, 0x1000);

	fsrq_post(&v->srq, wr_id, &sge, 1);
}

static void send_on(struct srq_env *v, int q, uint64_t wr_id, uint64_t off,
		    uint32_t len)
{
	struct snic_wqe_sge sge = fside_sge(&v->e->a, off, len);
	struct fwr wr = { .wr_id = wr_id, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1 };

	fqp_post_send(&v->qa[q], &wr);
}

static bool cqe(struct srq_env *v, struct fcq *cq, struct snic_cqe *c)
{
	memset(c, 0xee, sizeof(*c));
	return fsim_poll_cq(v->e->s, cq, c, STEPS);
}

/* One SEND on QP q, waited for on both sides; the receive CQE out. */
static void exchange(struct srq_env *v, int q, uint64_t wr_id, uint64_t off,
		     uint32_t len, struct snic_cqe *rc)
{
	struct snic_cqe c;

	send_on(v, q, wr_id, off, len);
	CU_ASSERT_FATAL(cqe(v, &v->e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, wr_id);
	CU_ASSERT_FATAL(cqe(v, &v->e->b.cq, rc));
}

/* Exactly one event is waiting: the SRQ's limit event. */
static void expect_limit_event(struct srq_env *v, uint32_t *ci)
{
	struct snic_eqe ev;

	CU_ASSERT_FATAL(fctx_event(&v->e->b.ctx, ci, &ev));
	CU_ASSERT_EQUAL(ev.type, SNIC_EVENT_SRQ_LIMIT);
	CU_ASSERT_EQUAL(ev.obj, v->srq.srqn);
	CU_ASSERT_FALSE(fctx_event(&v->e->b.ctx, ci, &ev));
}

/* QPs 0, 1, 2, 1, 0, 2 send in turn: the SRQ's WQEs are taken in the
 * order they were posted, whichever QP receives; data byte for byte. */
static void test_srq_shared_in_order(void)
{
	static const int order[] = { 0, 1, 2, 1, 0, 2 };
	struct srq_env v;
	struct snic_cqe c;

	srq_setup(&v, 16, 0);
	for (uint32_t i = 0; i < 6; i++)
		srq_post(&v, 500 + i, i);
	for (uint32_t i = 0; i < 6; i++) {
		uint32_t len = 100 + 333 * i;

		fpattern(fside_ptr(&v.e->a, i * 0x1000), len, 80 + i);
		exchange(&v, order[i], 10 + i, i * 0x1000, len, &c);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 500 + i);
		CU_ASSERT_EQUAL(c.qp_num, v.qb[order[i]].qpn);
		CU_ASSERT_EQUAL(c.byte_len, len);
		CU_ASSERT_EQUAL(memcmp(fside_ptr(&v.e->b, RBUF + i * 0x1000),
				       fside_ptr(&v.e->a, i * 0x1000), len), 0);
	}
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "recv_wqes"), 6);
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "rnr_nak_sent"), 0);
	fenv_free(v.e);
}

/* Armed at 4 with 8 posted: the event comes with the take that leaves 3,
 * once; re-armed, once more; never while not armed. */
static void test_srq_limit_once_per_arming(void)
{
	struct srq_env v;
	struct snic_cqe c;
	struct snic_eqe ev;
	struct snic_srq_attr at;
	uint32_t ci = 0;

	srq_setup(&v, 16, 0);
	for (uint32_t i = 0; i < 8; i++)
		srq_post(&v, 600 + i, i);
	CU_ASSERT_EQUAL(fsrq_modify(&v.srq, SNIC_SRQ_LIMIT, 0, 4), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fsrq_query(&v.srq, &at), SNIC_ST_OK);
	CU_ASSERT_EQUAL(at.srq_limit, 4);
	CU_ASSERT_EQUAL(at.max_wr, 16);
	for (uint32_t i = 0; i < 7; i++) {
		exchange(&v, (int)(i % NQP), 10 + i, 0, 32, &c);
		CU_ASSERT_EQUAL(c.wr_id, 600 + i);
		if (i < 4) {          /* 7..4 left: not below the limit */
			CU_ASSERT_FALSE(fctx_event(&v.e->b.ctx, &ci, &ev));
		} else if (i == 4) {  /* 3 left: the event, disarmed */
			expect_limit_event(&v, &ci);
			CU_ASSERT_EQUAL(fsrq_query(&v.srq, &at), SNIC_ST_OK);
			CU_ASSERT_EQUAL(at.srq_limit, 0);
		} else {              /* 2, 1 left: no second event */
			CU_ASSERT_FALSE(fctx_event(&v.e->b.ctx, &ci, &ev));
		}
	}
	/* re-armed at 2 with 1 left: the next take (0 left) fires it */
	CU_ASSERT_EQUAL(fsrq_modify(&v.srq, SNIC_SRQ_LIMIT, 0, 2), SNIC_ST_OK);
	CU_ASSERT_FALSE(fctx_event(&v.e->b.ctx, &ci, &ev));
	exchange(&v, 0, 20, 0, 32, &c);
	CU_ASSERT_EQUAL(c.wr_id, 607);
	expect_limit_event(&v, &ci);
	fenv_free(v.e);
}

/* A limit given at creation is armed as well. */
static void test_srq_limit_at_create(void)
{
	struct srq_env v;
	struct snic_cqe c;
	struct snic_eqe ev;
	uint32_t ci = 0;

	srq_setup(&v, 8, 2);
	for (uint32_t i = 0; i < 3; i++)
		srq_post(&v, 700 + i, i);
	exchange(&v, 1, 10, 0, 32, &c);     /* 2 left */
	CU_ASSERT_FALSE(fctx_event(&v.e->b.ctx, &ci, &ev));
	exchange(&v, 2, 11, 0, 32, &c);     /* 1 left */
	expect_limit_event(&v, &ci);
	fenv_free(v.e);
}

/* RC and an empty SRQ: the responder answers RNR NAKs,
 * the requester retries after min_rnr_timer; once a WQE is posted the
 * SEND lands in it and both sides complete. */
static void test_srq_empty_rnr(void)
{
	struct srq_env v;
	struct snic_cqe c;

	srq_setup(&v, 16, 0);
	fpattern(fside_ptr(&v.e->a, 0), 2000, 90);
	send_on(&v, 1, 10, 0, 2000);
	fsim_idle(v.e->s, 300);
	CU_ASSERT_FALSE(fcq_poll(&v.e->a.cq, &c));
	CU_ASSERT(fside_counter(&v.e->b, "rnr_nak_sent") >= 1);
	CU_ASSERT_EQUAL(fside_counter(&v.e->a, "rnr_nak_recv"),
			fside_counter(&v.e->b, "rnr_nak_sent"));
	srq_post(&v, 800, 0);
	CU_ASSERT_FATAL(cqe(&v, &v.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 10);
	CU_ASSERT_FATAL(cqe(&v, &v.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 800);
	CU_ASSERT_EQUAL(c.qp_num, v.qb[1].qpn);
	CU_ASSERT_EQUAL(c.byte_len, 2000);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&v.e->b, RBUF), fside_ptr(&v.e->a, 0),
			       2000), 0);
	fenv_free(v.e);
}

/* UD QPs take from an SRQ too; an empty one loses the datagram. */
static void test_srq_ud(void)
{
	const uint32_t qkey = 0x5a5a;
	struct fenv *e = fenv_new(4200, 1u << 20, 64);
	struct fsrq q;
	struct fqp ua, ub;
	struct snic_wqe_sge sge;
	struct snic_wqe_ud ud;
	struct fwr wr = { .opcode = SNIC_WR_SEND, .flags = SNIC_SEND_SIGNALED,
			  .sge = &sge, .num_sge = 1, .ud = &ud };
	struct snic_cqe c;

	CU_ASSERT_EQUAL_FATAL(fsrq_create(&q, &e->b.ctx, e->b.pd, 8, 1, 0),
			      SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&e->a, &ua, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&e->b, &ub, SNIC_QPT_UD, q.srqn), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&ua, qkey, 1), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&ub, qkey, 1), SNIC_ST_OK);
	fud_addr(&ud, FSIM_IP_B, ub.qpn, qkey);
	fpattern(fside_ptr(&e->a, 0), 300, 95);
	sge = fside_sge(&e->a, 0, 300);
	wr.wr_id = 1;
	fqp_post_send(&ua, &wr);            /* SRQ empty: lost */
	CU_ASSERT_FATAL(fsim_poll_cq(e->s, &e->a.cq, &c, STEPS));
	fsim_idle(e->s, 50);
	CU_ASSERT_EQUAL(fside_counter(&e->b, "rx_drop_no_recv"), 1);
	sge = fside_sge(&e->b, RBUF, 1024);
	fsrq_post(&q, 900, &sge, 1);
	sge = fside_sge(&e->a, 0, 300);
	wr.wr_id = 2;
	fqp_post_send(&ua, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(e->s, &e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 900);
	CU_ASSERT_EQUAL(c.byte_len, SNIC_GRH_LEN + 300);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&e->b, RBUF + SNIC_GRH_LEN),
			       fside_ptr(&e->a, 0), 300), 0);
	fenv_free(e);
}

/* Commands: bad sizes and limits refused, resizing not supported, an SRQ
 * in use cannot be destroyed, a QP of another PD cannot use it. */
static void test_srq_commands(void)
{
	struct fenv *e = fenv_new(4200, 1u << 16, 64);
	struct fsrq q, bad;
	struct fqp qp, other;
	struct fqp_caps caps = { .sq_cnt = 8, .rq_cnt = 8, .max_send_sge = 1,
				 .max_recv_sge = 1, .qp_type = SNIC_QPT_RC,
				 .srq = true };
	uint32_t pd2;

	CU_ASSERT_EQUAL(fsrq_create(&bad, &e->b.ctx, e->b.pd, 12, 1, 0),
			SNIC_ST_INVAL);             /* not a power of two */
	CU_ASSERT_EQUAL(fsrq_create(&bad, &e->b.ctx, e->b.pd, 8, 1, 8),
			SNIC_ST_INVAL);             /* limit >= size */
	CU_ASSERT_EQUAL(fsrq_create(&bad, &e->b.ctx, e->b.pd + 77, 8, 1, 0),
			SNIC_ST_NOENT);
	CU_ASSERT_EQUAL_FATAL(fsrq_create(&q, &e->b.ctx, e->b.pd, 8, 1, 0),
			      SNIC_ST_OK);
	CU_ASSERT_EQUAL(fsrq_modify(&q, SNIC_SRQ_MAX_WR, 16, 0), SNIC_ST_NOTSUP);
	CU_ASSERT_EQUAL(fsrq_modify(&q, SNIC_SRQ_LIMIT, 0, 8), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fsrq_modify(&q, 0x80, 0, 1), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&e->b, &qp, SNIC_QPT_RC, q.srqn), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fsrq_destroy(&q), SNIC_ST_BUSY);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->b.ctx, &pd2), SNIC_ST_OK);
	caps.srqn = q.srqn;
	CU_ASSERT_EQUAL(fqp_create(&other, &e->b.ctx, pd2, &e->b.cq, &e->b.cq,
				   &caps), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_destroy(&qp), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fsrq_destroy(&q), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fsrq_destroy(&q), SNIC_ST_NOENT);  /* stale handle */
	fenv_free(e);
}

UNIT_SUITE(srq, NULL, NULL,
	   UNIT_TEST(test_srq_shared_in_order),
	   UNIT_TEST(test_srq_limit_once_per_arming),
	   UNIT_TEST(test_srq_limit_at_create),
	   UNIT_TEST(test_srq_empty_rnr),
	   UNIT_TEST(test_srq_ud),
	   UNIT_TEST(test_srq_commands));
