/* SPDX-License-Identifier: MIT */
/* The command channel: contexts, ownership of objects, bad opcodes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

static const uint8_t MAC0[6] = { 2, 0, 0, 0, 0, 1 };

static void test_cmd_badop_and_ctx(void)
{
	struct fdev *d = calloc(1, sizeof(*d));
	struct fctx c0, c1, raw;
	uint8_t out[64];

	fdev_init(d, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c0, d, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(atomic_load(&fdev_slot(d, 0)->state), SNIC_CTX_OPEN);
	/* unknown opcodes */
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_COUNT, NULL, 0, NULL, 0), SNIC_ST_BADOP);
	CU_ASSERT_EQUAL(fctx_cmd(&c0, 0x7777, NULL, 0, NULL, 0), SNIC_ST_BADOP);
	CU_ASSERT_EQUAL(fctx_cmd(&c0, 0xffff, NULL, 0, NULL, 0), SNIC_ST_BADOP);
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_NOP, NULL, 0, NULL, 0), SNIC_ST_OK);
	/* opening twice */
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_CTX_OPEN, NULL, 0, NULL, 0), SNIC_ST_BUSY);
	/* a command on a slot nobody claimed or opened */
	memset(&raw, 0, sizeof(raw));
	raw.dev = d;
	raw.slot = 5;
	CU_ASSERT_EQUAL(fctx_cmd(&raw, SNIC_CMD_ALLOC_PD, NULL, 0, out, 8), SNIC_ST_INVAL);
	atomic_store(&fdev_slot(d, 5)->state, SNIC_CTX_CLAIMED);
	CU_ASSERT_EQUAL(fctx_cmd(&raw, SNIC_CMD_ALLOC_PD, NULL, 0, out, 8), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fdev_counter(d, "command_errors"), 6);
	/* queries */
	struct snic_cmd_port port = { .port_num = 1 };
	struct snic_port_attr pa;
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_QUERY_PORT, &port, sizeof(port), &pa,
				 sizeof(pa)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(pa.active_mtu, 5);
	CU_ASSERT_EQUAL(pa.state, 4);
	port.port_num = 2;
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_QUERY_PORT, &port, sizeof(port), &pa,
				 sizeof(pa)), SNIC_ST_INVAL);
	struct snic_cmd_gid_query gq = { .port_num = 1, .index = 0 };
	struct snic_gid_entry g;
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_QUERY_GID, &gq, sizeof(gq), &g,
				 sizeof(g)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(g.gid[10], 0xff);
	CU_ASSERT_EQUAL(g.gid[12], 0xc6);
	CU_ASSERT_EQUAL(g.gid[15], 0x01);
	/* close, and the slot's objects are gone */
	uint32_t pdn;
	CU_ASSERT_EQUAL(fctx_alloc_pd(&c0, &pdn), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0), SNIC_ST_OK);
	CU_ASSERT_FALSE(d->nic->pds[pdn & (SNIC_MAX_PD - 1)].in_use);
	CU_ASSERT_EQUAL(fctx_cmd(&c0, SNIC_CMD_NOP, NULL, 0, NULL, 0), SNIC_ST_INVAL);
	(void)c1;
	CU_ASSERT_EQUAL(fdev_fini(d), 0);
	free(d);
}

/* Objects of context 0 are invisible to context 1. */
static void test_cmd_other_context(void)
{
	struct fdev *d = calloc(1, sizeof(*d));
	struct fctx c0, c1;
	uint32_t pd0, pd1, key;
	struct fcq cq0, cq1;
	struct fqp qp0, qp1;
	struct fqp_caps caps = { .sq_cnt = 8, .rq_cnt = 8, .max_send_sge = 1,
				 .max_recv_sge = 1 };
	struct snic_qp_attr a;

	fdev_init(d, "snic0", MAC0, 0xc6120001u, 4200);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c0, d, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&c1, d, 1), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&c0, &pd0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&c1, &pd1), SNIC_ST_OK);
	uint64_t buf = fdev_alloc(d, 4096, 4096);
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&c0, pd0, buf, 4096, 1, &key), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&cq0, &c0, 16), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fcq_create(&cq1, &c1, 16), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qp0, &c0, pd0, &cq0, &cq0, &caps), SNIC_ST_OK);
	/* refusals: the status is NOENT or PERM, never OK */
#define REFUSED(x) do { int st_ = (x); \
		CU_ASSERT(st_ == SNIC_ST_NOENT || st_ == SNIC_ST_PERM); } while (0)
	REFUSED(fctx_dealloc_pd(&c1, pd0));
	REFUSED(fctx_dereg_mr(&c1, key));
	REFUSED(fctx_reg_mr(&c1, pd0, buf, 4096, 0, &key));
	struct snic_cmd_handle h = { .handle = cq0.cqn };
	REFUSED(fctx_cmd(&c1, SNIC_CMD_DESTROY_CQ, &h, sizeof(h), NULL, 0));
	REFUSED(fqp_create(&qp1, &c1, pd0, &cq1, &cq1, &caps));
	REFUSED(fqp_create(&qp1, &c1, pd1, &cq0, &cq1, &caps));
	REFUSED(fqp_create(&qp1, &c1, pd1, &cq1, &cq0, &caps));
	struct fqp foreign = qp0;
	foreign.ctx = &c1;
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_ERR;
	REFUSED(fqp_modify(&foreign, SNIC_QP_STATE, &a));
	REFUSED(fqp_query(&foreign, &a));
	REFUSED(fqp_destroy(&foreign));
	/* all still there for their owner */
	CU_ASSERT_EQUAL(fqp_state(&qp0), SNIC_QPS_RESET);
	CU_ASSERT_EQUAL(fqp_create(&qp1, &c1, pd1, &cq1, &cq1, &caps), SNIC_ST_OK);
	/* context 0 dies: its objects go, context 1's stay */
	snic_nic_ctx_dead(d->nic, 0);
	CU_ASSERT_EQUAL(atomic_load(&fdev_slot(d, 0)->state), SNIC_CTX_FREE);
	CU_ASSERT_FALSE(d->nic->qps[SNIC_QPN_IDX(qp0.qpn)].in_use);
	CU_ASSERT_FALSE(d->nic->mrs[SNIC_KEY_IDX(key)].in_use);
	CU_ASSERT_EQUAL(fqp_state(&qp1), SNIC_QPS_RESET);
	CU_ASSERT_EQUAL(d->nic->sh->mtt_free_n, 1);
	CU_ASSERT_EQUAL(fdev_fini(d), 0);
	free(d);
}

UNIT_SUITE(cmd, NULL, NULL,
	   UNIT_TEST(test_cmd_badop_and_ctx),
	   UNIT_TEST(test_cmd_other_context));
