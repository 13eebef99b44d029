/* SPDX-License-Identifier: MIT */
/*
 * The send WQE's layout (hostif.h, snic_wqe_data_off): which work
 * requests have their data at 48, in place of the atomic operands, and
 * that the firmware then reads one 64-byte line of the slot for a one-SGE
 * message (the fake HAL counts the reads inside the SQ ring); the largest
 * num_sge at 48, and one that would run past the slot, in the two-NIC
 * simulation.
 */
#include <stdlib.h>
#include <string.h>

#include "fake_env.h"
#include "fake_host.h"
#include "nic/top.h"
#include "transport/transport.h"
#include "unit.h"

#define STEPS 4000

struct env {
	struct fsim *s;
	struct fpair p;
	struct fqp qa, qb;      /* 4 SGEs, no inline: 128-byte slots    */
};

/* The pair of fpair_setup (256-byte slots), and a second RC pair on the
 * same contexts whose slot is 64 + 4 SGEs. */
static struct env *env_new(void)
{
	struct env *e = calloc(1, sizeof(*e));
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 4,
				 .max_recv_sge = 4 };
	struct fconn c;

	fconn_default(&c); /* path MTU 1024 */
	e->s = fsim_pair_new(&e->p, 0, &c, 1u << 20, 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->s);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&e->qa, &e->p.ca, e->p.pda, &e->p.cqa,
					 &e->p.cqa, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&e->qb, &e->p.cb, e->p.pdb, &e->p.cqb,
					 &e->p.cqb, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(e->qa.sq_stride_log, 7);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&e->qa, &e->qb, &c), SNIC_ST_OK);
	fsim_idle(e->s, 4);
	return e;
}

static void env_free(struct env *e)
{
	CU_ASSERT_EQUAL(fsim_free(e->s), 0);
	free(e);
}

/* Different bytes on each side (fake_env.c's pattern). */
static void fill(struct env *e)
{
	fpattern(fdev_ptr(&e->s->a, e->p.bufa), 65536, 1);
	fpattern(fdev_ptr(&e->s->b, e->p.bufb), 65536, 2);
}

static uint8_t *A(struct env *e, uint64_t off)
{
	return fdev_ptr(&e->s->a, e->p.bufa + off);
}

static uint8_t *B(struct env *e, uint64_t off)
{
	return fdev_ptr(&e->s->b, e->p.bufb + off);
}

/* Reads of A's SQ ring of qp from now on. */
static void watch_sq(struct env *e, const struct fqp *qp)
{
	struct fake_hal *fh = &e->s->a.hal;

	fh->watch_lo = qp->sq_pa;
	fh->watch_hi = qp->sq_pa + ((uint64_t)qp->sq_cnt << qp->sq_stride_log);
	fh->watch_reads = fh->watch_bytes = fh->watch_lines = 0;
	fh->watch_end = 0;
}

static void expect_cqe(struct env *e, uint64_t wr_id, uint8_t status)
{
	struct snic_cqe c;

	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(e->s, &e->p.cqa, &c, STEPS));
	CU_ASSERT_EQUAL(c.wr_id, wr_id);
	CU_ASSERT_EQUAL(c.status, status);
}

/* Data at 48 exactly for RC, UC and XRC WRITE, WRITE_IMM, SEND,
 * SEND_IMM, SEND_WITH_INV and READ; any other value gives 64. */
static void test_wqe_data_offsets(void)
{
	static const uint32_t short_ops[] = {
		SNIC_WR_RDMA_WRITE, SNIC_WR_RDMA_WRITE_WITH_IMM, SNIC_WR_SEND,
		SNIC_WR_SEND_WITH_IMM, SNIC_WR_SEND_WITH_INV, SNIC_WR_RDMA_READ,
	};
	static const uint32_t short_qpts[] = {
		SNIC_QPT_RC, SNIC_QPT_UC, SNIC_QPT_XRC_SEND,
	};
	unsigned n48 = 0;

	for (uint32_t t = 0; t < 300; t++)
		for (uint32_t op = 0; op < 300; op++) {
			uint32_t off = snic_wqe_data_off(t, op);
			bool want = false;

			for (unsigned i = 0; i < 3; i++)
				for (unsigned k = 0; k < 6; k++)
					want |= t == short_qpts[i] &&
						op == short_ops[k];
			CU_ASSERT_EQUAL(off, want ? 48u : 64u);
			n48 += off == 48;
		}
	CU_ASSERT_EQUAL(n48, 3 * 6);
	CU_ASSERT_EQUAL(snic_wqe_data_off(SNIC_QPT_RC, 0xffffffffu), 64);
	CU_ASSERT_EQUAL(snic_wqe_data_off(0xffffffffu, SNIC_WR_SEND), 64);
	CU_ASSERT_FALSE(snic_wqe_qpt_short(SNIC_QPT_UD));
	CU_ASSERT_FALSE(snic_wqe_qpt_short(SNIC_QPT_RAW_PACKET));
	CU_ASSERT_FALSE(snic_wqe_qpt_short(SNIC_QPT_XRC_RECV));
}

/* sq_read_wqe's table of the same rule (xport_tbl's short_ops): 48 for
 * exactly the type and opcode pairs snic_wqe_data_off gives 48. */
static void test_wqe_data_offsets_fw(void)
{
	unsigned n48 = 0;

	for (uint32_t t = 0; t <= SNIC_QPT_XRC_RECV; t++)
		for (uint32_t op = 0; op < 32; op++) {
			bool fw = xport_tbl[t].short_ops >> op & 1u;

			CU_ASSERT_EQUAL(fw ? 48u : 64u,
					snic_wqe_data_off(t, op));
			n48 += fw;
		}
	CU_ASSERT_EQUAL(n48, 3 * 6);
}

/* A one-SGE WRITE, SEND and READ: the firmware reads 64 bytes of the
 * slot, one line, in one DMA (the old layout read 80 bytes: two lines);
 * an atomic's SGE stays at 64 and comes in a second read. */
static void test_wqe_one_line(void)
{
	struct env *e = env_new();
	struct fake_hal *fh = &e->s->a.hal;
	struct fqp *q = &e->p.qa;
	uint64_t slot = 1ull << q->sq_stride_log;
	struct snic_wqe_sge s = { e->p.bufa, 64, e->p.mra };
	struct snic_wqe_sge r = { e->p.bufb + 4096, 64, e->p.mrb };
	struct snic_wqe_sge rd = { e->p.bufa + 8192, 64, e->p.mra };
	struct snic_wqe_sge at = { e->p.bufa + 12288, 8, e->p.mra };
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };

	fill(e);
	watch_sq(e, q);
	fqp_post_send(q, &w);
	expect_cqe(e, 1, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(B(e, 0), A(e, 0), 64), 0);
	CU_ASSERT_EQUAL(fh->watch_reads, 1);
	CU_ASSERT_EQUAL(fh->watch_bytes, 64);
	CU_ASSERT_EQUAL(fh->watch_lines, 1);
	CU_ASSERT_EQUAL(fh->watch_end, 64);

	/* SEND into B's RECV, slot 1 */
	fqp_post_recv(&e->p.qb, 7, &r, 1);
	w = (struct fwr){ .wr_id = 2, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &s, .num_sge = 1 };
	fqp_post_send(q, &w);
	expect_cqe(e, 2, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(B(e, 4096), A(e, 0), 64), 0);
	CU_ASSERT_EQUAL(fh->watch_reads, 2);
	CU_ASSERT_EQUAL(fh->watch_lines, 2);
	CU_ASSERT_EQUAL(fh->watch_end, slot + 64);

	/* READ into A, slot 2 */
	w = (struct fwr){ .wr_id = 3, .opcode = SNIC_WR_RDMA_READ,
			  .flags = SNIC_SEND_SIGNALED, .sge = &rd, .num_sge = 1,
			  .remote_addr = e->p.bufb + 256, .rkey = e->p.mrb };
	fqp_post_send(q, &w);
	expect_cqe(e, 3, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(A(e, 8192), B(e, 256), 64), 0);
	CU_ASSERT_EQUAL(fh->watch_reads, 3);
	CU_ASSERT_EQUAL(fh->watch_bytes, 3 * 64);
	CU_ASSERT_EQUAL(fh->watch_lines, 3);
	CU_ASSERT_EQUAL(fh->watch_end, 2 * slot + 64);

	/* FETCH_ADD, slot 3: header, then its SGE at 64 */
	uint64_t old;

	memcpy(&old, B(e, 512), 8);
	w = (struct fwr){ .wr_id = 4, .opcode = SNIC_WR_ATOMIC_FETCH_AND_ADD,
			  .flags = SNIC_SEND_SIGNALED, .sge = &at, .num_sge = 1,
			  .remote_addr = e->p.bufb + 512, .rkey = e->p.mrb,
			  .compare_add = 5 };
	fqp_post_send(q, &w);
	expect_cqe(e, 4, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(A(e, 12288), &old, 8), 0);
	CU_ASSERT_EQUAL(fh->watch_reads, 5);
	CU_ASSERT_EQUAL(fh->watch_bytes, 3 * 64 + 64 + 16);
	CU_ASSERT_EQUAL(fh->watch_lines, 5);
	CU_ASSERT_EQUAL(fh->watch_end, 3 * slot + 80);
	CU_ASSERT_EQUAL(fqp_state(q), SNIC_QPS_RTS);
	fh->watch_hi = 0;
	env_free(e);
}

/* n SGEs of 100 bytes at A + 1000 * i, for a WRITE, READ or SEND. */
static void sges(struct env *e, struct snic_wqe_sge *s, unsigned n,
		 uint64_t base)
{
	for (unsigned i = 0; i < n; i++)
		s[i] = (struct snic_wqe_sge){ e->p.bufa + base + 1000u * i, 100,
					      e->p.mra };
}

/* The largest num_sge (4) at 48 in a 128-byte slot: WRITE, SEND, READ. */
static void test_wqe_max_sge_short(void)
{
	struct env *e = env_new();
	struct snic_wqe_sge s[4], rs = { e->p.bufb + 16384, 400, e->p.mrb };
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = s, .num_sge = 4,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	uint8_t *slot = fdev_ptr(&e->s->a, e->qa.sq_pa);

	fill(e);
	sges(e, s, 4, 0);
	fqp_post_send(&e->qa, &w);
	/* where the SGEs are: 48..112, the slot's end untouched */
	CU_ASSERT_EQUAL(memcmp(slot + 48, s, sizeof(s)), 0);
	CU_ASSERT_EQUAL(slot[112] | slot[127], 0);
	expect_cqe(e, 1, SNIC_WC_SUCCESS);
	for (unsigned i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(memcmp(B(e, 100u * i), A(e, 1000u * i), 100), 0);

	fqp_post_recv(&e->qb, 9, &rs, 1);
	w.wr_id = 2;
	w.opcode = SNIC_WR_SEND;
	fqp_post_send(&e->qa, &w);
	expect_cqe(e, 2, SNIC_WC_SUCCESS);
	for (unsigned i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(memcmp(B(e, 16384 + 100u * i), A(e, 1000u * i),
				       100), 0);

	sges(e, s, 4, 32768);
	w.wr_id = 3;
	w.opcode = SNIC_WR_RDMA_READ;
	w.remote_addr = e->p.bufb + 8192;
	fqp_post_send(&e->qa, &w);
	expect_cqe(e, 3, SNIC_WC_SUCCESS);
	for (unsigned i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(memcmp(A(e, 32768 + 1000u * i),
				       B(e, 8192 + 100u * i), 100), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->qa), SNIC_QPS_RTS);
	env_free(e);
}

/* More SGEs than the QP has (5 of 4: they would fit the slot from 48,
 * the QP's limit still holds) fail the WQE with LOC_QP_OP_ERR; so does
 * a num_sge that runs past the slot from 48 where the QP's limit would
 * let it (the firmware's copy raised to 6, as a bad create would): 5
 * SGEs end at the slot's end and go, 6 do not. */
static void test_wqe_sge_past_slot(void)
{
	struct env *e = env_new();
	struct snic_wqe_sge s[6];
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = s, .num_sge = 5,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };
	struct snic_qp *qp;

	fill(e);
	sges(e, s, 6, 0);
	fqp_post_send(&e->qa, &w);
	expect_cqe(e, 1, SNIC_WC_LOC_QP_OP_ERR);
	CU_ASSERT_EQUAL(fqp_state(&e->qa), SNIC_QPS_ERR);
	CU_ASSERT_NOT_EQUAL(memcmp(B(e, 0), A(e, 0), 100), 0);
	env_free(e);

	e = env_new();
	fill(e);
	sges(e, s, 6, 0);
	qp = &e->s->a.nic->qps[SNIC_QPN_IDX(e->qa.qpn)];
	qp->max_send_sge = 6;
	w.remote_addr = e->p.bufb;
	w.rkey = e->p.mrb;
	w.num_sge = 5; /* 48 + 80 = 128: the whole slot */
	fqp_post_send(&e->qa, &w);
	expect_cqe(e, 1, SNIC_WC_SUCCESS);
	for (unsigned i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(memcmp(B(e, 100u * i), A(e, 1000u * i), 100), 0);
	w.wr_id = 2;
	w.num_sge = 6; /* 48 + 96: 16 bytes into the next slot */
	w.remote_addr = e->p.bufb + 8192;
	fqp_post_send(&e->qa, &w);
	expect_cqe(e, 2, SNIC_WC_LOC_QP_OP_ERR);
	CU_ASSERT_EQUAL(fqp_state(&e->qa), SNIC_QPS_ERR);
	CU_ASSERT_NOT_EQUAL(memcmp(B(e, 8192), A(e, 0), 100), 0);
	env_free(e);
}

/* Inline data at 48 too: the QP's max_inline (64 in a 128-byte slot,
 * counted from 64) fits, and arrives. */
static void test_wqe_inline_short(void)
{
	struct env *e = env_new();
	struct fake_hal *fh = &e->s->a.hal;
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 1,
				 .max_recv_sge = 1, .max_inline = 64 };
	struct fqp qa, qb;
	struct fconn c;
	uint8_t *slot;

	fill(e);
	fconn_default(&c);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qa, &e->p.ca, e->p.pda, &e->p.cqa,
					 &e->p.cqa, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&qb, &e->p.cb, e->p.pdb, &e->p.cqb,
					 &e->p.cqb, &caps), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(qa.sq_stride_log, 7);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&qa, &qb, &c), SNIC_ST_OK);
	fsim_idle(e->s, 4);
	slot = fdev_ptr(&e->s->a, qa.sq_pa);
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED | SNIC_SEND_INLINE,
			 .inline_data = A(e, 300), .inline_len = 64,
			 .remote_addr = e->p.bufb + 1024, .rkey = e->p.mrb };

	watch_sq(e, &qa);
	fqp_post_send(&qa, &w);
	CU_ASSERT_EQUAL(memcmp(slot + 48, A(e, 300), 64), 0);
	expect_cqe(e, 1, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(B(e, 1024), A(e, 300), 64), 0);
	CU_ASSERT_EQUAL(fh->watch_end, 48 + 64);
	CU_ASSERT_EQUAL(fqp_state(&qa), SNIC_QPS_RTS);
	fh->watch_hi = 0;
	env_free(e);
}

UNIT_SUITE(wqe, NULL, NULL,
	   UNIT_TEST(test_wqe_data_offsets),
	   UNIT_TEST(test_wqe_data_offsets_fw),
	   UNIT_TEST(test_wqe_one_line),
	   UNIT_TEST(test_wqe_max_sge_short),
	   UNIT_TEST(test_wqe_sge_past_slot),
	   UNIT_TEST(test_wqe_inline_short))
