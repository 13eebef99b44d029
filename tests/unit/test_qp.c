/* SPDX-License-Identifier: MIT */
/* The QP state machine (IBTA 11.2.4.2 RC column), MODIFY/QUERY_QP, flush
 * on ERR, RESET. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

#define M(x) SNIC_QP_##x
enum { R = SNIC_QPS_RESET, I = SNIC_QPS_INIT, RTR = SNIC_QPS_RTR,
       RTS = SNIC_QPS_RTS, SQD = SNIC_QPS_SQD, SQE = SNIC_QPS_SQE,
       ERR = SNIC_QPS_ERR };

/* Our own copy of the RC transitions (kernel ib_modify_qp_is_ok, RC). */
struct exp_trans {
	uint8_t cur, next;
	uint32_t req, opt;
};

static const struct exp_trans exp_tbl[] = {
	{ R, R, 0, 0 },
	{ R, I, M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), 0 },
	{ R, ERR, 0, 0 },
	{ I, R, 0, 0 },
	{ I, ERR, 0, 0 },
	{ I, I, 0, M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS) },
	{ I, RTR, M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) |
		  M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER),
	  M(ALT_PATH) | M(ACCESS_FLAGS) | M(PKEY_INDEX) },
	{ RTR, R, 0, 0 },
	{ RTR, ERR, 0, 0 },
	{ RTR, RTS, M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) |
		    M(MAX_QP_RD_ATOMIC),
	  M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) |
	  M(PATH_MIG_STATE) },
	{ RTS, R, 0, 0 },
	{ RTS, ERR, 0, 0 },
	{ RTS, RTS, 0, M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
		       M(PATH_MIG_STATE) | M(MIN_RNR_TIMER) },
	{ RTS, SQD, 0, M(EN_SQD_ASYNC_NOTIFY) },
	{ SQD, R, 0, 0 },
	{ SQD, ERR, 0, 0 },
	{ SQD, RTS, 0, M(CUR_STATE) | M(ACCESS_FLAGS) | M(ALT_PATH) |
		       M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) },
	{ SQD, SQD, 0, M(AV) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) |
		       M(MAX_QP_RD_ATOMIC) | M(MAX_DEST_RD_ATOMIC) |
		       M(CUR_STATE) | M(ALT_PATH) | M(ACCESS_FLAGS) |
		       M(PKEY_INDEX) | M(MIN_RNR_TIMER) | M(PATH_MIG_STATE) },
	{ SQE, R, 0, 0 },
	{ SQE, ERR, 0, 0 },
	{ SQE, RTS, 0, M(CUR_STATE) | M(ACCESS_FLAGS) },
	{ ERR, R, 0, 0 },
	{ ERR, ERR, 0, 0 },
};

static const struct exp_trans *exp_find(uint8_t cur, uint8_t next)
{
	for (size_t i = 0; i < sizeof(exp_tbl) / sizeof(exp_tbl[0]); i++)
		if (exp_tbl[i].cur == cur && exp_tbl[i].next == next)
			return &exp_tbl[i];
	return NULL;
}

static void test_qp_transition_table(void)
{
	const uint32_t all_bits = 0x021fffff; /* every defined mask bit */
	unsigned valid = 0;

	for (uint8_t cur = 0; cur <= SNIC_QPS_UNKNOWN; cur++) {
		for (uint8_t next = 0; next <= SNIC_QPS_UNKNOWN; next++) {
			const struct exp_trans *t = exp_find(cur, next);
			uint32_t base = M(STATE);

			if (!t) {
				CU_ASSERT_FALSE(qp_valid_transition(cur, next, base));
				CU_ASSERT_FALSE(qp_valid_transition(cur, next, all_bits));
				continue;
			}
			valid++;
			/* required only, required + every optional */
			CU_ASSERT_TRUE(qp_valid_transition(cur, next, base | t->req));
			CU_ASSERT_TRUE(qp_valid_transition(cur, next,
							   base | t->req | t->opt));
			/* each required attribute missing */
			for (unsigned b = 0; b < 32; b++) {
				uint32_t bit = 1u << b;

				if (t->req & bit)
					CU_ASSERT_FALSE(qp_valid_transition(
						cur, next, (base | t->req) & ~bit));
				/* each attribute that is not allowed */
				if ((all_bits & bit) && !((t->req | t->opt | base) & bit))
					CU_ASSERT_FALSE(qp_valid_transition(
						cur, next, base | t->req | bit));
			}
		}
	}
	CU_ASSERT_EQUAL(valid, sizeof(exp_tbl) / sizeof(exp_tbl[0]));
	/* out of range states */
	CU_ASSERT_FALSE(qp_valid_transition(200, R, M(STATE)));
	CU_ASSERT_FALSE(qp_valid_transition(R, 200, M(STATE)));
}

/* ---------------------------------------------------------------------- */
/* Through MODIFY_QP.                                                      */

static const uint8_t MAC0[6] = { 2, 0, 0, 0, 0, 1 };

struct qp_env {
	struct fdev dev;
	struct fctx c;
	uint32_t pdn;
	struct fcq cq;
	struct fqp qp;
	uint64_t buf;
	uint32_t key;
};

static struct qp_env *env_new(uint32_t eth_mtu)
{
	struct qp_env *e = calloc(1, sizeof(*e));
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 2,
				 .max_recv_sge = 2, .max_inline = 64 };

	fdev_init(&e->dev, "snic0", MAC0, 0xc6120001u, eth_mtu);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->dev.nic);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&e->c, &e->dev, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->c, &e->pdn), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&e->cq, &e->c, 64), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&e->qp, &e->c, e->pdn, &e->cq, &e->cq,
					 &caps), SNIC_ST_OK);
	e->buf = fdev_alloc(&e->dev, 65536, 4096);
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->c, e->pdn, e->buf, 65536,
					  SNIC_ACCESS_LOCAL_WRITE, &e->key),
			      SNIC_ST_OK);
	return e;
}

static void env_free(struct qp_env *e)
{
	CU_ASSERT_EQUAL(fdev_fini(&e->dev), 0);
	CU_ASSERT_EQUAL(e->dev.hal.bad_frees, 0);
	CU_ASSERT_EQUAL(e->dev.hal.overflows, 0);
	free(e);
}

static void attr_init(struct snic_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = SNIC_QPS_INIT;
	a->port_num = 1;
	a->qp_access_flags = SNIC_ACCESS_REMOTE_WRITE;
}

static void attr_rtr(struct snic_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = SNIC_QPS_RTR;
	a->path_mtu = 3;
	a->dest_qp_num = 0x1234;
	a->rq_psn = 0xabcdef;
	a->max_dest_rd_atomic = 4;
	a->min_rnr_timer = 12;
	a->is_global = 1;
	a->hop_limit = 7;
	a->dgid[10] = a->dgid[11] = 0xff;
	a->dgid[12] = 198;
	a->dgid[13] = 18;
	a->dgid[14] = 0;
	a->dgid[15] = 2;
}

static void attr_rts(struct snic_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = SNIC_QPS_RTS;
	a->sq_psn = 0x123456;
	a->timeout = 14;
	a->retry_cnt = 6;
	a->rnr_retry = 5;
	a->max_rd_atomic = 3;
}

#define MASK_INIT (M(STATE) | M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS))
#define MASK_RTR (M(STATE) | M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) | \
		  M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER))
#define MASK_RTS (M(STATE) | M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) | \
		  M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC))

static void test_qp_modify_path(void)
{
	struct qp_env *e = env_new(4200);
	struct fqp *qp = &e->qp;
	struct snic_qp_attr a, q;

	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RESET);
	/* RESET -> RTR / RTS skip a state */
	attr_rtr(&a);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTR, &a), SNIC_ST_INVAL);
	attr_rts(&a);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTS, &a), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RESET);
	/* RESET -> INIT, a required attribute missing, an extra one */
	attr_init(&a);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT & ~M(PORT), &a), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT & ~M(ACCESS_FLAGS), &a), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT | M(PATH_MTU), &a), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RESET);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_INIT);
	/* INIT -> INIT without STATE */
	a.qp_access_flags = SNIC_ACCESS_REMOTE_READ;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(ACCESS_FLAGS), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_query(qp, &q), SNIC_ST_OK);
	CU_ASSERT_EQUAL(q.qp_access_flags, SNIC_ACCESS_REMOTE_READ);
	CU_ASSERT_EQUAL(q.qp_state, SNIC_QPS_INIT);
	/* INIT -> RTS skips RTR */
	attr_rts(&a);
	a.qp_state = SNIC_QPS_RTS;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTS, &a), SNIC_ST_INVAL);
	/* INIT -> RTR: each required attribute missing */
	attr_rtr(&a);
	const uint32_t rtr_req[] = { M(AV), M(PATH_MTU), M(DEST_QPN), M(RQ_PSN),
				     M(MAX_DEST_RD_ATOMIC), M(MIN_RNR_TIMER) };
	for (size_t i = 0; i < sizeof(rtr_req) / sizeof(rtr_req[0]); i++)
		CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTR & ~rtr_req[i], &a),
				SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_INIT);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTR, &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RTR);
	/* RTR -> RTR is not a transition */
	CU_ASSERT_EQUAL(fqp_modify(qp, M(MIN_RNR_TIMER), &a), SNIC_ST_INVAL);
	/* RTR -> RTS with a wrong CUR_STATE */
	attr_rts(&a);
	a.cur_qp_state = SNIC_QPS_INIT;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTS | M(CUR_STATE), &a), SNIC_ST_INVAL);
	a.cur_qp_state = SNIC_QPS_RTR;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTS | M(CUR_STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RTS);
	/* RTS -> SQD -> SQD -> RTS */
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_SQD;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_SQD);
	a.retry_cnt = 2;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE) | M(RETRY_CNT), &a), SNIC_ST_OK);
	a.qp_state = SNIC_QPS_RTS;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE) | M(RETRY_CNT), &a), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_query(qp, &q), SNIC_ST_OK);
	CU_ASSERT_EQUAL(q.qp_state, SNIC_QPS_RTS);
	CU_ASSERT_EQUAL(q.retry_cnt, 2);
	/* RTS -> INIT is not allowed; -> ERR is; ERR -> RTS is not */
	a.qp_state = SNIC_QPS_INIT;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_INVAL);
	a.qp_state = SNIC_QPS_ERR;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_ERR);
	a.qp_state = SNIC_QPS_RTS;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_INVAL);
	a.qp_state = SNIC_QPS_ERR;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	a.qp_state = SNIC_QPS_RESET;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RESET);
	/* garbage state numbers */
	a.qp_state = SNIC_QPS_UNKNOWN;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_INVAL);
	a.qp_state = 0xffffffffu;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_INVAL);
	attr_init(&a);
	a.qp_state = 0x100 | SNIC_QPS_INIT; /* truncation to uint8_t */
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RESET);
	/* unknown QPN */
	struct fqp bogus = *qp;
	bogus.qpn ^= 1u << 12;
	CU_ASSERT_EQUAL(fqp_modify(&bogus, M(STATE), &a), SNIC_ST_NOENT);
	env_free(e);
}

/* Attribute values out of range: each refused with the QP unchanged. */
static void test_qp_modify_bad_values(void)
{
	struct qp_env *e = env_new(1500); /* active MTU 1024 (enum 3) */
	struct fqp *qp = &e->qp;
	struct snic_qp_attr a;

	attr_init(&a);
	a.port_num = 2;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_INVAL);
	a.port_num = 0;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_INVAL);
	attr_init(&a);
	a.pkey_index = 1;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_INVAL);
	attr_init(&a);
	a.qp_access_flags = 0x10;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RESET);
	attr_init(&a);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_OK);

#define RTR_BAD(stmt, expect)                                                 \
	do {                                                                  \
		attr_rtr(&a);                                                 \
		stmt;                                                         \
		CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTR, &a), expect);        \
	} while (0)
	RTR_BAD(a.path_mtu = 4, SNIC_ST_INVAL);   /* 2048 > active 1024 */
	RTR_BAD(a.path_mtu = 5, SNIC_ST_INVAL);
	RTR_BAD(a.path_mtu = 0, SNIC_ST_INVAL);
	RTR_BAD(a.path_mtu = 6, SNIC_ST_INVAL);
	RTR_BAD(a.max_dest_rd_atomic = SNIC_MAX_RD_ATOM + 1, SNIC_ST_INVAL);
	RTR_BAD(a.min_rnr_timer = 32, SNIC_ST_INVAL);
	RTR_BAD(a.dest_qp_num = 1u << 24, SNIC_ST_INVAL);
	RTR_BAD(a.is_global = 0, SNIC_ST_INVAL);
	RTR_BAD(a.sgid_index = 1, SNIC_ST_INVAL); /* IPv6 GID, IPv4 peer */
	RTR_BAD(a.sgid_index = 2, SNIC_ST_INVAL); /* no such GID */
	RTR_BAD(a.dgid[10] = 0, SNIC_ST_INVAL);   /* IPv4 GID, IPv6 peer */
	RTR_BAD(a.dgid[0] = 0xfe, SNIC_ST_INVAL);
	/* GID 1 to something that cannot be a unicast IPv6 peer */
	RTR_BAD((a.sgid_index = 1, memset(a.dgid, 0, 16), a.dgid[0] = 0xff,
		  a.dgid[1] = 0x02, a.dgid[15] = 1), SNIC_ST_INVAL); /* ff02::1 */
	RTR_BAD((a.sgid_index = 1, memset(a.dgid, 0, 16), a.dgid[15] = 1),
		SNIC_ST_INVAL);                                  /* ::1 */
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_INIT);
	attr_rtr(&a);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTR | M(ALT_PATH), &a), SNIC_ST_NOTSUP);
	attr_rtr(&a);
	a.path_mtu = 3;
	CU_ASSERT_EQUAL_FATAL(fqp_modify(qp, MASK_RTR, &a), SNIC_ST_OK);
#define RTS_BAD(stmt, expect)                                                 \
	do {                                                                  \
		attr_rts(&a);                                                 \
		stmt;                                                         \
		CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTS, &a), expect);        \
	} while (0)
	RTS_BAD(a.retry_cnt = 8, SNIC_ST_INVAL);
	RTS_BAD(a.rnr_retry = 8, SNIC_ST_INVAL);
	RTS_BAD(a.timeout = 32, SNIC_ST_INVAL);
	RTS_BAD(a.max_rd_atomic = SNIC_MAX_RD_ATOM + 1, SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RTR);
	attr_rts(&a);
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.timeout = 31;
	a.max_rd_atomic = SNIC_MAX_RD_ATOM;
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_RTS, &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_state(qp), SNIC_QPS_RTS);
	env_free(e);
}

static void test_qp_query_reflects(void)
{
	struct qp_env *e = env_new(4200);
	struct fqp *qp = &e->qp;
	struct snic_qp_attr a, q;

	attr_init(&a);
	a.qp_access_flags = SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_READ;
	CU_ASSERT_EQUAL_FATAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_OK);
	attr_rtr(&a);
	a.path_mtu = 5;
	CU_ASSERT_EQUAL_FATAL(fqp_modify(qp, MASK_RTR, &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_query(qp, &q), SNIC_ST_OK);
	CU_ASSERT_EQUAL(q.qp_state, SNIC_QPS_RTR);
	CU_ASSERT_EQUAL(q.path_mtu, 5);
	CU_ASSERT_EQUAL(q.dest_qp_num, 0x1234);
	CU_ASSERT_EQUAL(q.rq_psn, 0xabcdef);
	CU_ASSERT_EQUAL(q.max_dest_rd_atomic, 4);
	CU_ASSERT_EQUAL(q.min_rnr_timer, 12);
	CU_ASSERT_EQUAL(q.is_global, 1);
	CU_ASSERT_EQUAL(q.hop_limit, 7);
	CU_ASSERT_EQUAL(q.dgid[15], 2);
	CU_ASSERT_EQUAL(q.dgid[10], 0xff);
	CU_ASSERT_EQUAL(q.port_num, 1);
	CU_ASSERT_EQUAL(q.qp_access_flags,
			SNIC_ACCESS_REMOTE_WRITE | SNIC_ACCESS_REMOTE_READ);
	attr_rts(&a);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(qp, MASK_RTS, &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_query(qp, &q), SNIC_ST_OK);
	CU_ASSERT_EQUAL(q.qp_state, SNIC_QPS_RTS);
	CU_ASSERT_EQUAL(q.cur_qp_state, SNIC_QPS_RTS);
	CU_ASSERT_EQUAL(q.sq_psn, 0x123456);
	CU_ASSERT_EQUAL(q.timeout, 14);
	CU_ASSERT_EQUAL(q.retry_cnt, 6);
	CU_ASSERT_EQUAL(q.rnr_retry, 5);
	CU_ASSERT_EQUAL(q.max_rd_atomic, 3);
	CU_ASSERT_EQUAL(q.max_send_wr, 16);
	CU_ASSERT_EQUAL(q.max_recv_wr, 16);
	CU_ASSERT_EQUAL(q.max_send_sge, 2);
	CU_ASSERT_EQUAL(q.max_recv_sge, 2);
	CU_ASSERT_EQUAL(q.max_inline_data, 64);
	/* RESET forgets the attributes */
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_RESET;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_query(qp, &q), SNIC_ST_OK);
	CU_ASSERT_EQUAL(q.qp_state, SNIC_QPS_RESET);
	CU_ASSERT_EQUAL(q.path_mtu, 0);
	CU_ASSERT_EQUAL(q.dest_qp_num, 0);
	CU_ASSERT_EQUAL(q.sq_psn, 0);
	CU_ASSERT_EQUAL(q.rq_psn, 0);
	CU_ASSERT_EQUAL(q.max_send_wr, 16); /* capabilities stay */
	env_free(e);
}

static struct snic_wqe_sge sge1(struct qp_env *e, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge s = { .addr = e->buf + off, .length = len,
				  .lkey = e->key };
	return s;
}

/* WQEs posted before RTS, then ERR: every one of them completes with
 * FLUSH_ERR, sends in SQ order, then receives in RQ order. */
static void test_qp_err_flushes(void)
{
	struct qp_env *e = env_new(4200);
	struct fqp *qp = &e->qp;
	struct snic_qp_attr a;
	struct snic_cqe cqe;
	struct snic_wqe_sge s = sge1(e, 0, 64);

	attr_init(&a);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_OK);
	for (int i = 0; i < 3; i++) {
		struct fwr wr = { .wr_id = 100 + i, .opcode = SNIC_WR_SEND,
				  .flags = SNIC_SEND_SIGNALED * (i != 1),
				  .sge = &s, .num_sge = 1 };
		fqp_post_send(qp, &wr);
	}
	fqp_post_recv(qp, 200, &s, 1);
	fqp_post_recv(qp, 201, &s, 1);
	fdev_poll(&e->dev, 4);
	CU_ASSERT_EQUAL(fcq_poll(&e->cq, &cqe), 0); /* nothing runs in INIT */
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_ERR;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->cq, &cqe), 1);
		CU_ASSERT_EQUAL(cqe.wr_id, 100 + i); /* unsignaled too */
		CU_ASSERT_EQUAL(cqe.status, SNIC_WC_WR_FLUSH_ERR);
		CU_ASSERT_EQUAL(cqe.is_send, 1);
		CU_ASSERT_EQUAL(cqe.qp_num, qp->qpn);
		CU_ASSERT_EQUAL(cqe.wqe_idx, i);
	}
	for (int i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->cq, &cqe), 1);
		CU_ASSERT_EQUAL(cqe.wr_id, 200 + i);
		CU_ASSERT_EQUAL(cqe.status, SNIC_WC_WR_FLUSH_ERR);
		CU_ASSERT_EQUAL(cqe.is_send, 0);
		CU_ASSERT_EQUAL(cqe.opcode, SNIC_WC_RECV);
		CU_ASSERT_EQUAL(cqe.wqe_idx, i);
	}
	CU_ASSERT_EQUAL(fcq_poll(&e->cq, &cqe), 0);
	/* WQEs posted in ERR flush too, exactly once */
	struct fwr wr = { .wr_id = 300, .opcode = SNIC_WR_RDMA_WRITE,
			  .sge = &s, .num_sge = 1 };
	fqp_post_send(qp, &wr);
	fqp_post_recv(qp, 400, &s, 1);
	fdev_poll(&e->dev, 4);
	CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->cq, &cqe), 1);
	CU_ASSERT_EQUAL(cqe.wr_id, 300);
	CU_ASSERT_EQUAL(cqe.status, SNIC_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(cqe.opcode, SNIC_WC_RDMA_WRITE);
	CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->cq, &cqe), 1);
	CU_ASSERT_EQUAL(cqe.wr_id, 400);
	CU_ASSERT_EQUAL(cqe.status, SNIC_WC_WR_FLUSH_ERR);
	fdev_poll(&e->dev, 4);
	CU_ASSERT_EQUAL(fcq_poll(&e->cq, &cqe), 0);
	/* a second ERR -> ERR flushes nothing more */
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fcq_poll(&e->cq, &cqe), 0);
	/* RESET, INIT again: the rings start over, nothing left to flush */
	a.qp_state = SNIC_QPS_RESET;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	attr_init(&a);
	CU_ASSERT_EQUAL(fqp_modify(qp, MASK_INIT, &a), SNIC_ST_OK);
	fqp_post_recv(qp, 500, &s, 1);
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_ERR;
	CU_ASSERT_EQUAL(fqp_modify(qp, M(STATE), &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_poll(&e->cq, &cqe), 1);
	CU_ASSERT_EQUAL(cqe.wr_id, 500);
	CU_ASSERT_EQUAL(cqe.wqe_idx, 0);
	CU_ASSERT_EQUAL(fcq_poll(&e->cq, &cqe), 0);
	env_free(e);
}

/* A QP with full rings going to ERR flushes SNIC_FLUSH_BUDGET WQEs per
 * poll pass, sends first, every WQE once, in order. */
static void test_qp_flush_budgeted(void)
{
	struct qp_env *e = calloc(1, sizeof(*e));
	struct fqp_caps caps = { .sq_cnt = 512, .rq_cnt = 512, .max_send_sge = 1,
				 .max_recv_sge = 1 };
	struct snic_qp_attr a;
	struct snic_cqe cqe;
	unsigned n = 0, first_pass;

	fdev_init(&e->dev, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&e->c, &e->dev, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->c, &e->pdn), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&e->cq, &e->c, 2048), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&e->qp, &e->c, e->pdn, &e->cq, &e->cq,
					 &caps), SNIC_ST_OK);
	attr_init(&a);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(&e->qp, MASK_INIT, &a), SNIC_ST_OK);
	for (uint32_t i = 0; i < 512; i++) {
		struct fwr wr = { .wr_id = i, .opcode = SNIC_WR_SEND };

		fqp_write_send(&e->qp, &wr);
		fqp_post_recv(&e->qp, 1000 + i, NULL, 0);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_ERR;
	CU_ASSERT_EQUAL_FATAL(fqp_modify(&e->qp, M(STATE), &a), SNIC_ST_OK);
	while (fcq_poll(&e->cq, &cqe) == 1)
		n++;
	first_pass = n;
	/* the command's own pass and at most FDEV_CMD_POLLS more ran */
	CU_ASSERT(first_pass >= SNIC_FLUSH_BUDGET);
	CU_ASSERT(first_pass < 1024);
	CU_ASSERT_EQUAL(first_pass % SNIC_FLUSH_BUDGET, 0);
	fdev_poll(&e->dev, 8);
	while (fcq_poll(&e->cq, &cqe) == 1) {
		CU_ASSERT_EQUAL(cqe.status, SNIC_WC_WR_FLUSH_ERR);
		CU_ASSERT_EQUAL(cqe.wr_id, n < 512 ? n : 1000 + n - 512);
		n++;
	}
	CU_ASSERT_EQUAL(n, 1024);
	env_free(e);
}

/* snic_nic_init refuses a HAL without a mandatory op and says which. */
static void test_hal_ops_checked(void)
{
	struct fdev *d = calloc(1, sizeof(*d));
	struct snic_hal_ops ops;
	struct snic_hal hal;

	fdev_init(d, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d->nic);
	snic_nic_fini(d->nic); /* its buffers back: the memory is re-used */
	ops = *d->hal.hal.ops;
	ops.tx_burst = NULL;
	hal = (struct snic_hal){ .ops = &ops, .ctx = d->hal.hal.ctx };
	CU_ASSERT_PTR_NULL(snic_nic_init(d->nic_mem, &d->cfg, &hal, d->bar));
	CU_ASSERT_STRING_EQUAL(d->hal.log[(d->hal.nlog - 1) % FH_LOG_KEEP],
			       "HAL op missing: tx_burst");
	/* the optional one may be missing */
	ops = *d->hal.hal.ops;
	ops.dma_load_acquire32 = NULL;
	CU_ASSERT_PTR_NOT_NULL(snic_nic_init(d->nic_mem, &d->cfg, &hal, d->bar));
	CU_ASSERT_EQUAL(fdev_fini(d), 0);
	free(d);
}

/* The doorbell record is read with the HAL's acquire load: a doorbell
 * reads the SQ's producer index, the RQ's is read when a RECV is wanted
 * (recv_take through qp_read_rq_pi), so a send doorbell leaves the
 * responder's state alone. */
static void test_dbrec_acquire(void)
{
	struct qp_env *e = env_new(4200);
	struct snic_qp *qp;
	struct snic_qp_attr a;
	uint64_t before;

	attr_init(&a);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(&e->qp, MASK_INIT, &a), SNIC_ST_OK);
	qp = &e->dev.nic->qps[SNIC_QPN_IDX(e->qp.qpn)];
	before = e->dev.hal.acquire_loads;
	fqp_post_recv(&e->qp, 1, NULL, 0);
	fdev_poll(&e->dev, 2);
	CU_ASSERT_EQUAL(e->dev.hal.acquire_loads, before + 1); /* sq_pi */
	CU_ASSERT_EQUAL(qp->resp.rq_pi, 0);
	CU_ASSERT_TRUE(qp_read_rq_pi(e->dev.nic, qp));
	CU_ASSERT_EQUAL(e->dev.hal.acquire_loads, before + 2);
	CU_ASSERT_EQUAL(qp->resp.rq_pi, 1);
	env_free(e);
}

/* A producer index more than a ring ahead of the consumer is a host bug:
 * refused, the last good one kept, so no stale WQE is read
 * (qp_read_sq_pi at the doorbell, qp_read_rq_pi where a RECV is wanted);
 * exactly a ring ahead is a full ring and taken. */
static void test_dbrec_refused(void)
{
	struct qp_env *e = env_new(4200);
	struct snic_qp *qp;
	struct snic_qp_dbrec *db;
	struct snic_qp_attr a;

	attr_init(&a);
	CU_ASSERT_EQUAL_FATAL(fqp_modify(&e->qp, MASK_INIT, &a), SNIC_ST_OK);
	qp = &e->dev.nic->qps[SNIC_QPN_IDX(e->qp.qpn)];
	db = fdev_ptr(&e->dev, e->qp.dbrec_pa);
	fqp_post_recv(&e->qp, 1, NULL, 0);
	CU_ASSERT_TRUE(qp_read_rq_pi(e->dev.nic, qp));
	CU_ASSERT_EQUAL(qp->resp.rq_pi, 1);
	atomic_store(&db->rq_pi, qp->resp.rq_ci + qp->rq_cnt + 1);
	CU_ASSERT_TRUE(qp_read_rq_pi(e->dev.nic, qp));
	CU_ASSERT_EQUAL(qp->resp.rq_pi, 1);
	atomic_store(&db->rq_pi, qp->resp.rq_ci + qp->rq_cnt);
	CU_ASSERT_TRUE(qp_read_rq_pi(e->dev.nic, qp));
	CU_ASSERT_EQUAL(qp->resp.rq_pi, qp->resp.rq_ci + qp->rq_cnt);

	atomic_store(&db->sq_pi, qp->sq_fetch + qp->sq_cnt + 1);
	qp_doorbell(e->dev.nic, qp);
	CU_ASSERT_EQUAL(qp->sq_pi, 0);
	atomic_store(&db->sq_pi, qp->sq_fetch + qp->sq_cnt);
	qp_doorbell(e->dev.nic, qp);
	CU_ASSERT_EQUAL(qp->sq_pi, qp->sq_fetch + qp->sq_cnt);
	env_free(e);
}

/* Create / destroy: references on PD and CQ, stale QPNs. */
static void test_qp_create_destroy(void)
{
	struct qp_env *e = env_new(4200);
	struct fqp qp2;
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 2,
				 .max_recv_sge = 2 };
	uint32_t old = e->qp.qpn;

	CU_ASSERT_EQUAL(fcq_destroy(&e->cq), SNIC_ST_BUSY);
	CU_ASSERT_EQUAL(fqp_destroy(&e->qp), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_destroy(&e->qp), SNIC_ST_NOENT);
	CU_ASSERT_EQUAL(fqp_create(&qp2, &e->c, e->pdn, &e->cq, &e->cq, &caps),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_QPN_IDX(qp2.qpn), SNIC_QPN_IDX(old));
	CU_ASSERT_NOT_EQUAL(qp2.qpn, old);
	CU_ASSERT_EQUAL(fqp_state(&e->qp), 0xffffffffu); /* stale QPN */
	/* bad create arguments */
	struct fqp bad;
	struct fqp_caps bc = caps;
	bc.sq_cnt = 12;
	CU_ASSERT_EQUAL(fqp_create(&bad, &e->c, e->pdn, &e->cq, &e->cq, &bc),
			SNIC_ST_INVAL);
	bc = caps;
	bc.max_send_sge = SNIC_MAX_SGE + 1;
	CU_ASSERT_EQUAL(fqp_create(&bad, &e->c, e->pdn, &e->cq, &e->cq, &bc),
			SNIC_ST_INVAL);
	bc = caps;
	CU_ASSERT_EQUAL(fqp_create(&bad, &e->c, e->pdn ^ (1u << 10), &e->cq,
				   &e->cq, &bc), SNIC_ST_NOENT);
	CU_ASSERT_EQUAL(fqp_destroy(&qp2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fcq_destroy(&e->cq), SNIC_ST_OK);
	env_free(e);
}

UNIT_SUITE(qp, NULL, NULL,
	   UNIT_TEST(test_qp_flush_budgeted),
	   UNIT_TEST(test_hal_ops_checked),
	   UNIT_TEST(test_dbrec_acquire),
	   UNIT_TEST(test_dbrec_refused),
	   UNIT_TEST(test_qp_transition_table),
	   UNIT_TEST(test_qp_modify_path),
	   UNIT_TEST(test_qp_modify_bad_values),
	   UNIT_TEST(test_qp_query_reflects),
	   UNIT_TEST(test_qp_err_flushes),
	   UNIT_TEST(test_qp_create_destroy));
