/* SPDX-License-Identifier: MIT */
/*
 * Commands next to many objects (issue 11 "many QPs"): the MR slot a
 * registration takes, the per-context quotas and a context's teardown
 * stay right when other contexts hold thousands of MRs and QPs.  The
 * firmware finds slots and counts quotas without walking the pools
 * (objects/mr_slots.c, objects/qp_slots.c); these tests pin what those
 * shortcuts must keep: the lowest free MR slot, a new key in a reused
 * slot, quotas that follow registrations, deregistrations, deaths and
 * connection sets, and a death that takes exactly the dead context's
 * objects.  tools/bench-cmd-instr.sh: their instruction counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

static const uint8_t MAC0[6] = { 2, 0, 0, 0, 0, 1 };

#define MANY_MRS  3000u
#define IDLE_QPS  2000u

struct many_env {
	struct fdev dev;
	struct fctx c[3];
	uint32_t pdn[3];
	uint64_t page;          /* one host page every MR maps          */
};

static struct many_env *env_new(void)
{
	struct many_env *e = calloc(1, sizeof(*e));

	fdev_init(&e->dev, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->dev.nic);
	for (unsigned i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL_FATAL(fctx_open(&e->c[i], &e->dev, i), SNIC_ST_OK);
		CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&e->c[i], &e->pdn[i]), SNIC_ST_OK);
	}
	e->page = fdev_alloc(&e->dev, 4096, 4096);
	return e;
}

static void env_free(struct many_env *e)
{
	CU_ASSERT_EQUAL(fdev_fini(&e->dev), 0);
	free(e);
}

static int reg(struct many_env *e, unsigned c, uint32_t *key)
{
	return fctx_reg_mr(&e->c[c], e->pdn[c], e->page, 4096,
			   SNIC_ACCESS_LOCAL_WRITE, key);
}

/* How many MRs (qps: QPs) ctx holds, counted by walking the table. */
static uint32_t held(const struct snic_nic *nic, unsigned ctx, bool qps)
{
	uint32_t n = 0, max = qps ? SNIC_MAX_QP : SNIC_MAX_MR;

	for (uint32_t i = 0; i < max; i++)
		n += qps ? nic->qps[i].in_use && nic->qps[i].ctx == ctx
			 : nic->mrs[i].in_use && nic->mrs[i].ctx == ctx;
	return n;
}
#define mrs_of(nic, ctx) held(nic, ctx, false)
#define qps_of(nic, ctx) held(nic, ctx, true)

/* Registrations take the lowest free slot, also in a table 3,000 deep;
 * a reused slot hands out a new key; a dead context's slots come back;
 * the pool and the context's quota both refuse with NOMEM. */
static void test_many_mr_slots(void)
{
	struct many_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	static uint32_t key[MANY_MRS];
	uint32_t k, n, old5 = 0;

	for (uint32_t i = 0; i < MANY_MRS; i++) {
		CU_ASSERT_EQUAL_FATAL(reg(e, 0, &key[i]), SNIC_ST_OK);
		CU_ASSERT_EQUAL(SNIC_KEY_IDX(key[i]), i);
	}
	CU_ASSERT_EQUAL(reg(e, 1, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(k), MANY_MRS);
	old5 = key[5];
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c[0], key[2999]), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c[0], key[5]), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c[0], key[1000]), SNIC_ST_OK);
	/* lowest first, whatever the order they were freed in */
	CU_ASSERT_EQUAL(reg(e, 1, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(k), 5);
	CU_ASSERT_NOT_EQUAL(k, old5);
	CU_ASSERT_PTR_NULL(mr_check(nic, old5, e->pdn[1] & (SNIC_MAX_PD - 1),
				    0, e->page, 1));
	CU_ASSERT_EQUAL(reg(e, 1, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(k), 1000);
	CU_ASSERT_EQUAL(reg(e, 1, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(k), 2999);
	CU_ASSERT_EQUAL(reg(e, 1, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(k), MANY_MRS + 1);
	/* the pool runs out before context 1's quota */
	for (n = 0; reg(e, 1, &k) == SNIC_ST_OK; n++)
		;
	CU_ASSERT_EQUAL(n, SNIC_MAX_MR - MANY_MRS - 2);
	CU_ASSERT_EQUAL(reg(e, 2, &k), SNIC_ST_NOMEM);
	CU_ASSERT_EQUAL(mrs_of(nic, 0), MANY_MRS - 3);
	/* context 0 dies: its slots are free again, lowest first */
	snic_nic_ctx_dead(nic, 0);
	CU_ASSERT_EQUAL(mrs_of(nic, 0), 0);
	CU_ASSERT_EQUAL(reg(e, 2, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(SNIC_KEY_IDX(k), 0);
	/* now context 1's quota refuses first, and counts a deregistration */
	n = mrs_of(nic, 1);
	for (uint32_t k1; reg(e, 1, &k1) == SNIC_ST_OK; n++)
		k = k1;
	CU_ASSERT_EQUAL(n, SNIC_CTX_MAX_MR);
	CU_ASSERT_EQUAL(mrs_of(nic, 1), SNIC_CTX_MAX_MR);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c[1], k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(reg(e, 1, &k), SNIC_ST_OK);
	CU_ASSERT_EQUAL(reg(e, 1, &k), SNIC_ST_NOMEM);
	CU_ASSERT_EQUAL(reg(e, 2, &k), SNIC_ST_OK); /* the pool had room */
	env_free(e);
}

static const struct fqp_caps SMALL = {
	.sq_cnt = 4, .rq_cnt = 4, .max_send_sge = 1, .max_recv_sge = 1,
	.compact = true,
};

static int to_init(struct fqp *qp)
{
	struct snic_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_INIT;
	a.port_num = 1;
	return fqp_modify(qp, SNIC_QP_STATE | SNIC_QP_PKEY_INDEX | SNIC_QP_PORT |
			  SNIC_QP_ACCESS_FLAGS, &a);
}

/* Context 0 holds 2,000 idle QPs; context 1 a few, one out of RESET,
 * and MRs: its death takes exactly its own objects and its connection
 * set, and context 2 then takes SNIC_CTX_MAX_QP_CONN sets, not one
 * more (the count followed context 1's set back). */
static void test_many_teardown(void)
{
	struct many_env *e = env_new();
	struct snic_nic *nic = e->dev.nic;
	static struct fqp idle[IDLE_QPS], busy[SNIC_CTX_MAX_QP_CONN + 1];
	struct fcq cq0, cq1, cq2;
	struct fqp q1[3];
	uint32_t k1, k0, k2;

	CU_ASSERT_EQUAL_FATAL(fcq_create(&cq0, &e->c[0], 4), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&cq1, &e->c[1], 4), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&cq2, &e->c[2], 4), SNIC_ST_OK);
	for (uint32_t i = 0; i < IDLE_QPS; i++)
		CU_ASSERT_EQUAL_FATAL(fqp_create(&idle[i], &e->c[0], e->pdn[0],
						 &cq0, &cq0, &SMALL), SNIC_ST_OK);
	for (uint32_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL_FATAL(fqp_create(&q1[i], &e->c[1], e->pdn[1],
						 &cq1, &cq1, &SMALL), SNIC_ST_OK);
	CU_ASSERT_EQUAL(to_init(&q1[1]), SNIC_ST_OK);
	CU_ASSERT_EQUAL(reg(e, 1, &k1), SNIC_ST_OK);
	CU_ASSERT_EQUAL(reg(e, 0, &k0), SNIC_ST_OK);
	/* a deregistration next to context 0's idle QPs (none holds it) */
	CU_ASSERT_EQUAL(reg(e, 1, &k2), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_dereg_mr(&e->c[1], k2), SNIC_ST_OK);
	CU_ASSERT_FALSE(nic->mrs[SNIC_KEY_IDX(k2)].in_use);
	/* a destroyed QP of context 0 frees its slot and its count */
	CU_ASSERT_EQUAL(fqp_destroy(&idle[7]), SNIC_ST_OK);
	CU_ASSERT_EQUAL(qps_of(nic, 0), IDLE_QPS - 1);
	snic_nic_ctx_dead(nic, 1);
	CU_ASSERT_EQUAL(qps_of(nic, 1), 0);
	CU_ASSERT_EQUAL(mrs_of(nic, 1), 0);
	CU_ASSERT_EQUAL(qps_of(nic, 0), IDLE_QPS - 1);
	CU_ASSERT_EQUAL(fqp_state(&idle[0]), SNIC_QPS_RESET);
	CU_ASSERT_TRUE(nic->mrs[SNIC_KEY_IDX(k0)].in_use);
	/* context 2: the per-context limit of connection sets */
	for (uint32_t i = 0; i <= SNIC_CTX_MAX_QP_CONN; i++)
		CU_ASSERT_EQUAL_FATAL(fqp_create(&busy[i], &e->c[2], e->pdn[2],
						 &cq2, &cq2, &SMALL), SNIC_ST_OK);
	for (uint32_t i = 0; i < SNIC_CTX_MAX_QP_CONN; i++)
		CU_ASSERT_EQUAL_FATAL(to_init(&busy[i]), SNIC_ST_OK);
	CU_ASSERT_EQUAL(to_init(&busy[SNIC_CTX_MAX_QP_CONN]), SNIC_ST_NOMEM);
	CU_ASSERT_EQUAL(fqp_state(&busy[SNIC_CTX_MAX_QP_CONN]), SNIC_QPS_RESET);
	/* one back to RESET (its set given back), then the last one leaves */
	struct snic_qp_attr a = { .qp_state = SNIC_QPS_RESET };

	CU_ASSERT_EQUAL(fqp_modify(&busy[0], SNIC_QP_STATE, &a), SNIC_ST_OK);
	CU_ASSERT_EQUAL(to_init(&busy[SNIC_CTX_MAX_QP_CONN]), SNIC_ST_OK);
	/* context 0's QPs still take sets of their own quota */
	CU_ASSERT_EQUAL(to_init(&idle[0]), SNIC_ST_OK);
	env_free(e);
}

UNIT_SUITE(many, NULL, NULL,
	   UNIT_TEST(test_many_mr_slots),
	   UNIT_TEST(test_many_teardown));
