/* SPDX-License-Identifier: MIT */
/*
 * XRC (IBTA vol. 1 Annex A14) through the two-NIC simulation: the
 * XRCETH on the wire (where it sits, what it carries), an initiator on
 * snic0 sending into XRC SRQs of a target on snic1 (data byte for byte,
 * completions on the SRQ's CQ), the domain rule (an SRQ of another
 * domain refused with a remote access NAK, an SRQ that does not exist
 * with an invalid request NAK, nothing written), and the commands'
 * checks (domains tied to a file, BUSY while used, XRC SRQs only for XRC
 * targets).
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "unit.h"
#include "wire/roce_wire.h"
#include "fault.h"

#define STEPS  6000
#define RBUF   0x80000u
#define NSRQ   3

/* ---- the XRCETH on the wire ---- */

/* An XRC SEND_ONLY: XRCETH (8 reserved bits, the 24-bit XRCSRQ) right
 * after the BTH, payload after it; a WRITE_FIRST: XRCETH, then RETH. */
static void test_xrceth_layout(void)
{
	static uint8_t f[256];
	struct roce_hdrs h, out;
	const uint8_t *x = f + ROCE_L2L4_LEN + ROCE_BTH_LEN;

	memset(&h, 0, sizeof(h));
	h.dip = 0xc6120002;
	h.sip = 0xc6120001;
	h.pkey = ROCE_DEFAULT_PKEY;
	h.opcode = ROCE_XRC_BASE | ROCE_RC_SEND_ONLY;
	h.dqpn = 0x000402;
	h.xrc_srqn = 0x123456;
	memcpy(f + roce_hdr_len(h.opcode), "xrc!", 4);
	CU_ASSERT_EQUAL(roce_hdr_len(h.opcode), ROCE_L2L4_LEN + 12 + 4);
	CU_ASSERT_EQUAL_FATAL(roce_build(f, &h, 4), roce_frame_len(&h, 4));
	CU_ASSERT_EQUAL(f[ROCE_L2L4_LEN], 0xa4);
	CU_ASSERT_EQUAL(x[0], 0);
	CU_ASSERT_EQUAL(x[1], 0x12);
	CU_ASSERT_EQUAL(x[2], 0x34);
	CU_ASSERT_EQUAL(x[3], 0x56);
	CU_ASSERT_EQUAL(memcmp(x + 4, "xrc!", 4), 0);
	CU_ASSERT_EQUAL_FATAL(roce_parse(f, roce_frame_len(&h, 4), &out),
			      ROCE_OK);
	CU_ASSERT_EQUAL(out.xrc_srqn, 0x123456);
	CU_ASSERT_EQUAL(out.payload_len, 4);

	h.opcode = ROCE_XRC_BASE | ROCE_RC_WRITE_FIRST;
	h.reth_va = 0x1122334455667788ull;
	h.reth_rkey = 0xcafe;
	h.reth_len = 4096;
	CU_ASSERT_EQUAL_FATAL(roce_build(f, &h, 0), roce_frame_len(&h, 0));
	CU_ASSERT_EQUAL(x[3], 0x56);
	CU_ASSERT_EQUAL(x[4], 0x11); /* RETH's VA follows the XRCETH */
	CU_ASSERT_EQUAL(x[4 + 11], 0xfe);
	/* responses carry none: an XRC ACK is an RC ACK in the XRC class */
	CU_ASSERT_EQUAL(roce_opcodes[ROCE_XRC_BASE | ROCE_RC_ACK].ext_len,
			ROCE_AETH_LEN);
	CU_ASSERT_FALSE(roce_opcodes[ROCE_XRC_BASE | ROCE_RC_ACK].flags &
			ROCE_F_XRCETH);
}

/* ---- the two-NIC environment ---- */

struct xrc_env {
	struct fenv *e;
	uint32_t xrcd, xrcd2;           /* on b: the target's, another one */
	struct fcq scq[NSRQ];           /* on b: one CQ per SRQ            */
	struct fsrq srq[NSRQ];          /* on b, in xrcd                   */
	struct fsrq other;              /* on b, in xrcd2                  */
	struct fqp ini, tgt;            /* ini on a, tgt on b (in xrcd)    */
};

static uint32_t xrcd_open(struct fside *s, uint32_t flags, uint64_t ino,
			  int *st)
{
	struct snic_cmd_open_xrcd in = { .dev = 7, .ino = ino, .flags = flags };
	struct snic_cmd_handle h = { 0 };

	*st = fctx_cmd(&s->ctx, SNIC_CMD_OPEN_XRCD, &in, sizeof(in), &h,
		       sizeof(h));
	return h.handle;
}

static int xrcd_close(struct fside *s, uint32_t xrcd)
{
	struct snic_cmd_handle in = { .handle = xrcd };

	return fctx_cmd(&s->ctx, SNIC_CMD_CLOSE_XRCD, &in, sizeof(in), NULL, 0);
}

static int xrc_qp(struct fside *s, struct fqp *qp, uint32_t type,
		  uint32_t xrcd)
{
	struct fqp_caps caps = {
		.sq_cnt = 64, .rq_cnt = 1, .max_send_sge = 4, .max_recv_sge = 0,
		.max_inline = 128, .qp_type = type, .xrcd = xrcd,
	};

	return fqp_create(qp, &s->ctx, s->pd, &s->cq, &s->cq, &caps);
}

static void xrc_setup(struct xrc_env *v)
{
	struct fconn conn;
	int st;

	memset(v, 0, sizeof(*v));
	v->e = fenv_new(1024 + 100, 1u << 20, 256); /* path MTU 1024 */
	v->xrcd = xrcd_open(&v->e->b, 0, 0, &st);
	CU_ASSERT_EQUAL_FATAL(st, SNIC_ST_OK);
	v->xrcd2 = xrcd_open(&v->e->b, 0, 0, &st);
	CU_ASSERT_EQUAL_FATAL(st, SNIC_ST_OK);
	CU_ASSERT_NOT_EQUAL(v->xrcd, v->xrcd2);
	for (int i = 0; i < NSRQ; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_create(&v->scq[i], &v->e->b.ctx, 64),
				      SNIC_ST_OK);
		CU_ASSERT_EQUAL_FATAL(fsrq_create_xrc(&v->srq[i], &v->e->b.ctx,
						      v->e->b.pd, 16, 2, v->xrcd,
						      v->scq[i].cqn), SNIC_ST_OK);
	}
	CU_ASSERT_EQUAL_FATAL(fsrq_create_xrc(&v->other, &v->e->b.ctx, v->e->b.pd,
					      16, 2, v->xrcd2, v->scq[0].cqn),
			      SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(xrc_qp(&v->e->a, &v->ini, SNIC_QPT_XRC_SEND, 0),
			      SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(xrc_qp(&v->e->b, &v->tgt, SNIC_QPT_XRC_RECV,
				     v->xrcd), SNIC_ST_OK);
	fconn_default(&conn);
	conn.path_mtu = 3; /* IBV_MTU_1024 */
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&v->ini, &v->tgt, &conn), SNIC_ST_OK);
	fsim_idle(v->e->s, 10);
}

static void xrc_send(struct xrc_env *v, uint64_t wr_id, uint32_t srqn,
		     uint64_t off, uint32_t len)
{
	struct snic_wqe_sge sge = fside_sge(&v->e->a, off, len);
	struct fwr wr = { .wr_id = wr_id, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1,
			  .xrc_srqn = srqn };

	fqp_post_send(&v->ini, &wr);
}

static void srq_post(struct xrc_env *v, struct fsrq *q, uint64_t wr_id,
		     uint32_t slot)
{
	struct snic_wqe_sge sge = fside_sge(&v->e->b, RBUF + slot * 0x2000,
					    0x2000);

	fsrq_post(q, wr_id, &sge, 1);
}

/* Messages of 1 to 3 packets into three SRQs of the target's domain in
 * turn: each lands in the RECV of the SRQ its WQE named, completes on
 * that SRQ's CQ (xrc set, the SRQ's number, the target QP), data byte
 * for byte; the initiator's completions are its own. */
static void test_xrc_send_into_srqs(void)
{
	static const int order[] = { 2, 0, 1, 0, 2, 1 };
	struct xrc_env v;
	struct snic_cqe c;

	xrc_setup(&v);
	for (uint32_t i = 0; i < 6; i++)
		srq_post(&v, &v.srq[order[i]], 700 + i, i);
	for (uint32_t i = 0; i < 6; i++) {
		uint32_t len = 500 + 700 * i; /* up to 4000: 4 packets */
		int s = order[i];

		fpattern(fside_ptr(&v.e->a, i * 0x2000), len, 30 + i);
		xrc_send(&v, 20 + i, v.srq[s].srqn, i * 0x2000, len);
		CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.e->a.cq, &c, STEPS));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 20 + i);
		CU_ASSERT_EQUAL(c.qp_num, v.ini.qpn);
		CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.scq[s], &c, STEPS));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 700 + i);
		CU_ASSERT_EQUAL(c.byte_len, len);
		CU_ASSERT_EQUAL(c.qp_num, v.tgt.qpn);
		CU_ASSERT_EQUAL(c.xrc, 1);
		CU_ASSERT_EQUAL(c.xrc_srqn, v.srq[s].srqn);
		CU_ASSERT_EQUAL(memcmp(fside_ptr(&v.e->b, RBUF + i * 0x2000),
				       fside_ptr(&v.e->a, i * 0x2000), len), 0);
	}
	/* nothing on the target side's own CQ: it has no CQ of its own */
	CU_ASSERT_FALSE(fsim_poll_cq(v.e->s, &v.e->b.cq, &c, 50));
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "xrc_bad_srq"), 0);
	fenv_free(v.e);
}

/* 5 % loss (and duplicates, reordering, corruption) both ways: 30
 * messages of 1 to 5 packets into the three SRQs, posted all at once;
 * go-back-N passes rebuild the XRCETH from what the NIC kept, so every
 * message still lands in its own SRQ, in order, byte for byte. */
static void test_xrc_under_loss(void)
{
	struct snic_fault_cfg fc;
	struct xrc_env v;
	struct snic_cqe c;
	uint32_t got[NSRQ] = { 0 };

	xrc_setup(&v);
	memset(&fc, 0, sizeof(fc));
	fc.loss = 50000;
	fc.dup = fc.reorder = 12500;
	fc.corrupt = 5000;
	fc.delay_min_ns = 2000;
	fc.delay_max_ns = 30000;
	fc.seed = 14;
	fake_hal_set_fault(&v.e->s->b.hal, &fc);
	fc.seed = 15;
	fake_hal_set_fault(&v.e->s->a.hal, &fc);
	for (uint32_t i = 0; i < 30; i++) {
		srq_post(&v, &v.srq[i % NSRQ], 800 + i, i);
		fpattern(fside_ptr(&v.e->a, i * 0x2000), 300 + 150 * i, 60 + i);
	}
	for (uint32_t i = 0; i < 30; i++)
		xrc_send(&v, 100 + i, v.srq[i % NSRQ].srqn, i * 0x2000, 300 + 150 * i);
	for (uint32_t i = 0; i < 30; i++) {
		CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.e->a.cq, &c, 20000000));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 100 + i);
	}
	for (uint32_t n = 0; n < 30; n++) {
		int s = (int)(n % NSRQ);
		uint32_t i = s + NSRQ * got[s]++; /* the SRQ's next message */

		CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.scq[s], &c, 100000));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 800 + i);
		CU_ASSERT_EQUAL(c.byte_len, 300 + 150 * i);
		CU_ASSERT_EQUAL(memcmp(fside_ptr(&v.e->b, RBUF + i * 0x2000),
				       fside_ptr(&v.e->a, i * 0x2000), 300 + 150 * i), 0);
	}
	CU_ASSERT(fside_counter(&v.e->a, "retransmits") > 0);
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "xrc_bad_srq"), 0);
	fenv_free(v.e);
}

/* RDMA WRITE and READ over XRC: the R_Key is checked against the PD of
 * the SRQ the XRCETH names (the target has none of its own); a READ's
 * responses come back in the XRC class to the initiator. */
static void test_xrc_write_read(void)
{
	struct xrc_env v;
	struct snic_cqe c;
	const uint32_t len = 3000;
	struct snic_wqe_sge src, dst;
	struct fwr wr = { .flags = SNIC_SEND_SIGNALED, .num_sge = 1,
			  .rkey = 0 };

	xrc_setup(&v);
	src = fside_sge(&v.e->a, 0, len);
	dst = fside_sge(&v.e->a, 0x10000, len);
	fpattern(fside_ptr(&v.e->a, 0), len, 5);
	wr.wr_id = 1;
	wr.opcode = SNIC_WR_RDMA_WRITE;
	wr.sge = &src;
	wr.remote_addr = v.e->b.buf + RBUF;
	wr.rkey = v.e->b.mr;
	wr.xrc_srqn = v.srq[1].srqn;
	fqp_post_send(&v.ini, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&v.e->b, RBUF), fside_ptr(&v.e->a, 0), len), 0);
	wr.wr_id = 2;
	wr.opcode = SNIC_WR_RDMA_READ;
	wr.sge = &dst;
	fqp_post_send(&v.ini, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RDMA_READ);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&v.e->a, 0x10000), fside_ptr(&v.e->a, 0), len), 0);
	/* neither consumed a RECV nor completed on the target side */
	CU_ASSERT_FALSE(fsim_poll_cq(v.e->s, &v.scq[1], &c, 50));
	fenv_free(v.e);
}

/* The SRQ of another domain: NAK remote access error, the initiator's
 * WQE completes with REM_ACCESS_ERR, not a byte of the RECV's buffer
 * written, nothing on the SRQ's CQ, both QPs in error. */
static void test_xrc_other_domain_refused(void)
{
	struct xrc_env v;
	struct snic_cqe c;
	uint8_t before[64];

	xrc_setup(&v);
	srq_post(&v, &v.other, 900, 0);
	memset(fside_ptr(&v.e->b, RBUF), 0x77, sizeof(before));
	memcpy(before, fside_ptr(&v.e->b, RBUF), sizeof(before));
	fpattern(fside_ptr(&v.e->a, 0), 64, 9);
	xrc_send(&v, 31, v.other.srqn, 0, 64);
	CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.wr_id, 31);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_ACCESS_ERR);
	CU_ASSERT_FALSE(fsim_poll_cq(v.e->s, &v.scq[0], &c, 200));
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&v.e->b, RBUF), before, sizeof(before)), 0);
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "xrc_bad_srq"), 1);
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "nak_access_sent"), 1);
	CU_ASSERT_EQUAL(fqp_state(&v.tgt), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL(fqp_state(&v.ini), SNIC_QPS_ERR);
	fenv_free(v.e);
}

/* An SRQ number that names no XRC SRQ (a plain SRQ of the same PD, then
 * nothing at all): NAK invalid request, REM_INV_REQ_ERR. */
static void test_xrc_no_such_srq(void)
{
	struct xrc_env v;
	struct fsrq plain;
	struct snic_cqe c;

	xrc_setup(&v);
	CU_ASSERT_EQUAL_FATAL(fsrq_create(&plain, &v.e->b.ctx, v.e->b.pd, 16, 2, 0),
			      SNIC_ST_OK);
	srq_post(&v, &plain, 901, 0);
	xrc_send(&v, 32, plain.srqn, 0, 64);
	CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_INV_REQ_ERR);
	CU_ASSERT_FALSE(fsim_poll_cq(v.e->s, &v.e->b.cq, &c, 200));
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "nak_inv_req_sent"), 1);
	fenv_free(v.e);
	/* a number whose index is past the SRQ table (fuzz_rx found it
	 * indexing srqs[] out of bounds; UBSan in `make asan`) */
	xrc_setup(&v);
	xrc_send(&v, 33, 0xffffff, 0, 64);
	CU_ASSERT_FATAL(fsim_poll_cq(v.e->s, &v.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_INV_REQ_ERR);
	CU_ASSERT_EQUAL(fside_counter(&v.e->b, "xrc_bad_srq"), 1);
	fenv_free(v.e);
}

/* A host writing into the rings an XRC target does not have (its RQ and
 * SQ) and moving it to the error state: nothing completes anywhere (the
 * target has no CQ; slot 0 of the CQ table, where an unset index points,
 * is this side's CQ). */
static void test_xrc_target_rings_ignored(void)
{
	struct xrc_env v;
	struct snic_cqe c;
	struct snic_qp_attr a;
	struct snic_wqe_sge sge;
	struct fwr wr = { .wr_id = 77, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1 };

	xrc_setup(&v);
	sge = fside_sge(&v.e->b, 0, 64);
	fqp_post_recv(&v.tgt, 66, &sge, 1);
	fqp_post_send(&v.tgt, &wr);
	fsim_idle(v.e->s, 50);
	memset(&a, 0, sizeof(a));
	a.qp_state = SNIC_QPS_ERR;
	CU_ASSERT_EQUAL(fqp_modify(&v.tgt, SNIC_QP_STATE, &a), SNIC_ST_OK);
	CU_ASSERT_FALSE(fsim_poll_cq(v.e->s, &v.e->b.cq, &c, 200));
	for (int i = 0; i < NSRQ; i++)
		CU_ASSERT_FALSE(fsim_poll_cq(v.e->s, &v.scq[i], &c, 10));
	fenv_free(v.e);
}

/* Domains: one file, one domain (per context); O_EXCL and a missing
 * O_CREAT refused; the last close BUSY while an SRQ or a target QP uses
 * it.  XRC SRQs serve XRC targets only; an initiator takes no SRQ. */
static void test_xrc_commands(void)
{
	struct xrc_env v;
	struct fqp rc, bad;
	struct fcq cq;
	struct fsrq s;
	uint32_t x1, x2;
	int st;

	xrc_setup(&v);
	x1 = xrcd_open(&v.e->a, SNIC_XRCD_F_INODE | SNIC_XRCD_F_CREATE, 42, &st);
	CU_ASSERT_EQUAL(st, SNIC_ST_OK);
	x2 = xrcd_open(&v.e->a, SNIC_XRCD_F_INODE, 42, &st);
	CU_ASSERT_EQUAL(st, SNIC_ST_OK);
	CU_ASSERT_EQUAL(x1, x2);
	xrcd_open(&v.e->a, SNIC_XRCD_F_INODE | SNIC_XRCD_F_CREATE |
		  SNIC_XRCD_F_EXCL, 42, &st);
	CU_ASSERT_EQUAL(st, SNIC_ST_INVAL);
	xrcd_open(&v.e->a, SNIC_XRCD_F_INODE, 43, &st);
	CU_ASSERT_EQUAL(st, SNIC_ST_NOENT);
	/* another context (snic1 here is another NIC: its own table) */
	CU_ASSERT_EQUAL(xrcd_close(&v.e->a, x1), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fcq_create(&cq, &v.e->a.ctx, 16), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fsrq_create_xrc(&s, &v.e->a.ctx, v.e->a.pd, 16, 1, x1,
					cq.cqn), SNIC_ST_OK);
	CU_ASSERT_EQUAL(xrcd_close(&v.e->a, x1), SNIC_ST_BUSY);
	/* an XRC SRQ is not an RC QP's; an initiator has no SRQ */
	CU_ASSERT_EQUAL(fside_qp(&v.e->a, &rc, SNIC_QPT_RC, s.srqn), SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fside_qp(&v.e->a, &bad, SNIC_QPT_XRC_SEND, s.srqn),
			SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(xrc_qp(&v.e->a, &bad, SNIC_QPT_XRC_RECV, 0x3ff),
			SNIC_ST_NOENT);
	CU_ASSERT_EQUAL(fsrq_destroy(&s), SNIC_ST_OK);
	CU_ASSERT_EQUAL(xrc_qp(&v.e->a, &bad, SNIC_QPT_XRC_RECV, x1), SNIC_ST_OK);
	CU_ASSERT_EQUAL(xrcd_close(&v.e->a, x1), SNIC_ST_BUSY);
	CU_ASSERT_EQUAL(fqp_destroy(&bad), SNIC_ST_OK);
	CU_ASSERT_EQUAL(xrcd_close(&v.e->a, x1), SNIC_ST_OK);
	CU_ASSERT_EQUAL(xrcd_close(&v.e->a, x1), SNIC_ST_NOENT);
	fenv_free(v.e);
}

UNIT_SUITE(xrc, NULL, NULL,
	   UNIT_TEST(test_xrceth_layout),
	   UNIT_TEST(test_xrc_send_into_srqs),
	   UNIT_TEST(test_xrc_write_read),
	   UNIT_TEST(test_xrc_under_loss),
	   UNIT_TEST(test_xrc_other_domain_refused),
	   UNIT_TEST(test_xrc_no_such_srq),
	   UNIT_TEST(test_xrc_target_rings_ignored),
	   UNIT_TEST(test_xrc_commands));
