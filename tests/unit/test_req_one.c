/* SPDX-License-Identifier: MIT */
/*
 * The requester's one-pass path (req_one, transport/rc_requester.c): which
 * WQEs take it (rc_req_one_ok), and that the messages it declines - two
 * SGEs, more than one packet, zero length, inline data, an SGE across a
 * page, a bad lkey, a READ - and the ones it takes end the same way
 * through the two-NIC simulation: the same frames counted, the data where
 * it belongs, the same completion status and QP state; the NIC counter
 * req_one_sent shows which way each went.  It also declines when the
 * window is full or no frame buffer is free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_host.h"
#include "nic/top.h"
#include "transport/transport.h"
#include "unit.h"

#define STEPS 4000

struct env {
	struct fsim *s;
	struct fpair p;
};

static struct env *env_new(void)
{
	struct env *e = calloc(1, sizeof(*e));
	struct fconn c;

	fconn_default(&c); /* path MTU 1024 */
	e->s = fsim_pair_new(&e->p, 0, &c, 1u << 20, 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->s);
	return e;
}

static void env_free(struct env *e)
{
	CU_ASSERT_EQUAL(fsim_free(e->s), 0);
	free(e);
}

static struct snic_qp *qp_a(struct env *e)
{
	return &e->s->a.nic->qps[SNIC_QPN_IDX(e->p.qa.qpn)];
}

/* qp's cur as sq_read_wqe leaves it for a WQE of op with n SGEs, the
 * first of len bytes. */
static void set_wqe(struct snic_qp *qp, uint8_t op, uint8_t flags,
		    uint8_t nsge, uint32_t len)
{
	memset(&qp->cur.hdr, 0, sizeof(qp->cur.hdr));
	qp->cur.hdr.ctrl.opcode = op;
	qp->cur.hdr.ctrl.flags = flags;
	qp->cur.hdr.ctrl.num_sge = nsge;
	qp->cur.sge0.length = len;
}

static void test_req_one_choice(void)
{
	struct env *e = env_new();
	struct snic_qp *qp = qp_a(e);
	static const uint8_t one_ops[] = {
		SNIC_WR_SEND, SNIC_WR_SEND_WITH_IMM, SNIC_WR_SEND_WITH_INV,
		SNIC_WR_RDMA_WRITE, SNIC_WR_RDMA_WRITE_WITH_IMM,
	};
	static const uint32_t read_lens[] = { 1, 64, 1024, 1025, 1u << 20 };
	static const uint8_t other_ops[] = {
		SNIC_WR_ATOMIC_CMP_AND_SWP,
		SNIC_WR_ATOMIC_FETCH_AND_ADD, SNIC_WR_ATOMIC_WRITE,
		SNIC_WR_LOCAL_INV, SNIC_WR_BIND_MW,
	};
	static const uint8_t other_types[] = {
		SNIC_QPT_UC, SNIC_QPT_UD, SNIC_QPT_XRC_SEND,
	};
	uint8_t type = qp->type;

	CU_ASSERT_EQUAL_FATAL(qp->mtu, 1024);
	CU_ASSERT_EQUAL_FATAL(type, SNIC_QPT_RC);
	for (unsigned i = 0; i < sizeof(one_ops); i++) {
		set_wqe(qp, one_ops[i], SNIC_SEND_SIGNALED, 1, 64);
		CU_ASSERT_TRUE(rc_req_one_ok(qp));
		set_wqe(qp, one_ops[i], 0, 1, 1);
		CU_ASSERT_TRUE(rc_req_one_ok(qp));
		set_wqe(qp, one_ops[i], 0, 1, PKT_FOLD_MIN - 1);
		CU_ASSERT_TRUE(rc_req_one_ok(qp));
		/* the ICRC fold's sizes, more than a packet, none */
		set_wqe(qp, one_ops[i], 0, 1, PKT_FOLD_MIN);
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
		set_wqe(qp, one_ops[i], 0, 1, 1025);
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
		set_wqe(qp, one_ops[i], 0, 1, 0);
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
		/* two SGEs, none, inline data */
		set_wqe(qp, one_ops[i], 0, 2, 64);
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
		set_wqe(qp, one_ops[i], 0, 0, 64);
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
		set_wqe(qp, one_ops[i], SNIC_SEND_INLINE, 1, 64);
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
		/* other services, IPv6 */
		set_wqe(qp, one_ops[i], 0, 1, 64);
		for (unsigned t = 0; t < sizeof(other_types); t++) {
			qp->type = other_types[t];
			CU_ASSERT_FALSE(rc_req_one_ok(qp));
		}
		qp->type = type;
		qp->ip6 = true;
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
		qp->ip6 = false;
	}
	for (unsigned i = 0; i < sizeof(other_ops); i++) {
		set_wqe(qp, other_ops[i], 0, 1, 8);
		CU_ASSERT_FALSE(rc_req_one_ok(qp));
	}
	/* a READ carries no payload: any length of one SGE */
	for (unsigned i = 0; i < sizeof(read_lens) / sizeof(read_lens[0]); i++) {
		set_wqe(qp, SNIC_WR_RDMA_READ, 0, 1, read_lens[i]);
		CU_ASSERT_TRUE(rc_req_one_ok(qp));
	}
	/* ... up to the largest message: past it sgl_load's LOC_LEN_ERR */
	set_wqe(qp, SNIC_WR_RDMA_READ, 0, 1, SNIC_MAX_MSG_SIZE);
	CU_ASSERT_TRUE(rc_req_one_ok(qp));
	set_wqe(qp, SNIC_WR_RDMA_READ, 0, 1, SNIC_MAX_MSG_SIZE + 1u);
	CU_ASSERT_FALSE(rc_req_one_ok(qp));
	set_wqe(qp, SNIC_WR_RDMA_READ, 0, 1, 3u << 30);
	CU_ASSERT_FALSE(rc_req_one_ok(qp));
	set_wqe(qp, SNIC_WR_RDMA_READ, 0, 1, 0);
	CU_ASSERT_FALSE(rc_req_one_ok(qp));
	set_wqe(qp, SNIC_WR_RDMA_READ, 0, 2, 64);
	CU_ASSERT_FALSE(rc_req_one_ok(qp));
	set_wqe(qp, SNIC_WR_RDMA_READ, 0, 1, 64);
	qp->type = SNIC_QPT_XRC_SEND;
	CU_ASSERT_FALSE(rc_req_one_ok(qp));
	qp->type = type;
	/* a path MTU below the fold's size: one packet is the limit */
	qp->mtu = 256;
	set_wqe(qp, SNIC_WR_SEND, 0, 1, 256);
	CU_ASSERT_TRUE(rc_req_one_ok(qp));
	set_wqe(qp, SNIC_WR_SEND, 0, 1, 257);
	CU_ASSERT_FALSE(rc_req_one_ok(qp));
	qp->mtu = 1024;
	memset(&qp->cur.hdr, 0, sizeof(qp->cur.hdr));
	env_free(e);
}

/* One message of a kind, on a fresh pair. */
struct one_case {
	const char *what;
	uint8_t op;
	uint8_t nsge;           /* the length split over this many SGEs     */
	uint32_t len;
	uint32_t off;           /* where in A's buffer the data starts      */
	bool inl, bad_lkey;
	bool fast;              /* rc_req_one_ok for its WQE                */
	uint8_t status;         /* the send completion's                    */
	uint32_t frames;        /* frames A's QP sends for it               */
	bool one;               /* req_one sends it whole (req_one_sent)    */
};

static const struct one_case cases[] = {
	{ "send 64", SNIC_WR_SEND, 1, 64, 0, false, false, true, 0, 1,
	  true },
	{ "write 64", SNIC_WR_RDMA_WRITE, 1, 64, 8, false, false, true, 0, 1,
	  true },
	{ "write 1", SNIC_WR_RDMA_WRITE, 1, 1, 3, false, false, true, 0, 1,
	  true },
	{ "write imm 511", SNIC_WR_RDMA_WRITE_WITH_IMM, 1, 511, 0, false,
	  false, true, 0, 1, true },
	{ "send imm 200", SNIC_WR_SEND_WITH_IMM, 1, 200, 0, false, false,
	  true, 0, 1, true },
	{ "send 2 sges", SNIC_WR_SEND, 2, 64, 0, false, false, false, 0, 1,
	  false },
	{ "write 2 sges", SNIC_WR_RDMA_WRITE, 2, 300, 0, false, false, false,
	  0, 1, false },
	{ "write 3000", SNIC_WR_RDMA_WRITE, 1, 3000, 0, false, false, false,
	  0, 3, false },
	{ "send 512", SNIC_WR_SEND, 1, 512, 0, false, false, false, 0, 1,
	  false },
	{ "send 0", SNIC_WR_SEND, 1, 0, 0, false, false, false, 0, 1,
	  false },
	{ "write inline", SNIC_WR_RDMA_WRITE, 0, 40, 0, true, false, false, 0,
	  1, false },
	/* one SGE across a page: the general path copies it in pieces */
	{ "write across a page", SNIC_WR_RDMA_WRITE, 1, 100, 4096 - 50, false,
	  false, true, 0, 1, false },
	{ "send bad lkey", SNIC_WR_SEND, 1, 64, 0, false, true, true,
	  SNIC_WC_LOC_PROT_ERR, 0, false },
	{ "write bad lkey", SNIC_WR_RDMA_WRITE, 1, 64, 0, false, true, true,
	  SNIC_WC_LOC_PROT_ERR, 0, false },
	{ "read 64", SNIC_WR_RDMA_READ, 1, 64, 0, false, false, true, 0, 1,
	  true },
	{ "read 3000", SNIC_WR_RDMA_READ, 1, 3000, 5, false, false, true, 0,
	  1, true },
	{ "read 2 sges", SNIC_WR_RDMA_READ, 2, 3000, 0, false, false, false,
	  0, 1, false },
	{ "read 0", SNIC_WR_RDMA_READ, 1, 0, 0, false, false, false, 0, 1,
	  false },
	{ "read bad lkey", SNIC_WR_RDMA_READ, 1, 64, 0, false, true, true,
	  SNIC_WC_LOC_PROT_ERR, 0, false },
};

static void run_case(const struct one_case *k)
{
	struct env *e = env_new();
	struct snic_qp *qp = qp_a(e);
	uint8_t *a = fdev_ptr(&e->s->a, e->p.bufa);
	uint8_t *b = fdev_ptr(&e->s->b, e->p.bufb);
	struct snic_wqe_sge ss[2], rs = { e->p.bufb + 8192, 8192, e->p.mrb };
	uint32_t half = k->len / 2, done = 0;
	uint64_t frames = qp->qcnt[SNIC_QCNT_tx_frames];
	uint64_t wqes = qp->qcnt[SNIC_QCNT_send_wqes];
	uint64_t ones = fdev_counter(&e->s->a, "req_one_sent");
	bool read = k->op == SNIC_WR_RDMA_READ;
	bool recv = k->op == SNIC_WR_SEND || k->op == SNIC_WR_SEND_WITH_IMM ||
		    k->op == SNIC_WR_RDMA_WRITE_WITH_IMM;
	uint8_t *src = read ? b : a, *dst = read ? a + 65536 : b + 8192;
	struct snic_cqe c;

	for (uint32_t i = 0; i < 16384; i++) {
		a[i] = (uint8_t)(i * 7 + 1);
		b[i] = (uint8_t)(i * 13 + 5);
	}
	memset(a + 65536, 0xa5, 8192);
	for (uint8_t i = 0; i < k->nsge; i++) {
		uint32_t n = k->nsge == 2 ? (i ? k->len - half : half) : k->len;

		ss[i] = (struct snic_wqe_sge){ e->p.bufa + k->off + done, n,
					       e->p.mra };
		if (read)
			ss[i].addr += 65536 - k->off;
		if (k->bad_lkey)
			ss[i].lkey ^= 0x100;
		done += n;
	}
	if (recv)
		fqp_post_recv(&e->p.qb, 7, &rs, 1);
	struct fwr w = { .wr_id = 99, .opcode = k->op,
			 .flags = SNIC_SEND_SIGNALED |
				  (k->inl ? SNIC_SEND_INLINE : 0),
			 .imm = 0x01020304, .sge = ss, .num_sge = k->nsge,
			 .inline_data = a + k->off, .inline_len = k->len,
			 .remote_addr = e->p.bufb + (read ? k->off : 8192),
			 .rkey = e->p.mrb };
	fqp_post_send(&e->p.qa, &w);
	/* what the requester decides from, as it read it */
	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(e->s, &e->p.cqa, &c, STEPS));
	CU_ASSERT_EQUAL(qp->cur.hdr.ctrl.opcode, k->op);
	CU_ASSERT_EQUAL(rc_req_one_ok(qp), k->fast);
	CU_ASSERT_EQUAL(c.wr_id, 99);
	CU_ASSERT_EQUAL(c.status, k->status);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_tx_frames] - frames, k->frames);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_send_wqes] - wqes, !k->status);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->a, "req_one_sent") - ones, k->one);
	if (k->status) {
		CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_ERR);
		fsim_idle(e->s, 50);
		CU_ASSERT_EQUAL(fcq_poll(&e->p.cqb, &c), 0);
		for (uint32_t i = 0; i < 8192; i++)
			if (b[8192 + i] != (uint8_t)((8192 + i) * 13 + 5)) {
				CU_FAIL("B's memory changed");
				break;
			}
	} else {
		CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_RTS);
		CU_ASSERT_EQUAL(memcmp(dst, src + k->off, k->len), 0);
		if (recv) {
			CU_ASSERT_TRUE_FATAL(fsim_poll_cq(e->s, &e->p.cqb, &c,
							  STEPS));
			CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
			if (k->op != SNIC_WR_RDMA_WRITE_WITH_IMM)
				CU_ASSERT_EQUAL(c.byte_len, k->len);
			CU_ASSERT_EQUAL(!!(c.wc_flags & SNIC_WC_WITH_IMM),
					k->op != SNIC_WR_SEND);
		}
	}
	CU_ASSERT_EQUAL(fdev_counter(&e->s->a, "retransmits"), 0);
	env_free(e);
}

static void test_req_one_results(void)
{
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned before = CU_get_number_of_failures();

		run_case(&cases[i]);
		if (CU_get_number_of_failures() != before)
			fprintf(stderr, "\n  case \"%s\" failed\n", cases[i].what);
	}
}

/* Drops the first request frame A sends. */
static enum fl_action drop_first(void *arg, int from, uint8_t *frame,
				 uint16_t *len)
{
	unsigned *dropped = arg;
	struct roce_hdrs r;

	if (from != 0 || *dropped || roce_parse(frame, *len, &r) != ROCE_OK ||
	    !(roce_opcodes[r.opcode].flags & ROCE_F_REQ))
		return FL_PASS;
	(*dropped)++;
	return FL_DROP;
}

/* A WRITE from an MR without local write access (a source needs none),
 * lost and sent again from the in-flight window after a READ into
 * another MR was fetched: the resend's gather checks the WRITE's SGE for
 * what a source needs, not for the READ's local write (retain_load). */
static void test_req_resend_after_read(void)
{
	struct env *e = env_new();
	uint8_t *a = fdev_ptr(&e->s->a, e->p.bufa);
	uint8_t *b = fdev_ptr(&e->s->b, e->p.bufb);
	unsigned dropped = 0;
	struct snic_cqe c;
	uint32_t ro;

	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&e->p.ca, e->p.pda, e->p.bufa, 4096,
					  0, &ro), SNIC_ST_OK);
	for (uint32_t i = 0; i < 4096; i++) {
		a[i] = (uint8_t)(i * 3 + 1);
		b[i] = (uint8_t)(i * 5 + 2);
	}
	struct snic_wqe_sge ws = { e->p.bufa, 64, ro };
	struct snic_wqe_sge rs = { e->p.bufa + 8192, 64, e->p.mra };
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &ws, .num_sge = 1,
			 .remote_addr = e->p.bufb + 8192, .rkey = e->p.mrb };
	struct fwr r = { .wr_id = 2, .opcode = SNIC_WR_RDMA_READ,
			 .flags = SNIC_SEND_SIGNALED, .sge = &rs, .num_sge = 1,
			 .remote_addr = e->p.bufb, .rkey = e->p.mrb };

	fake_link_set_hook(&e->s->link, drop_first, &dropped);
	fqp_write_send(&e->p.qa, &w);
	fqp_write_send(&e->p.qa, &r);
	fqp_ring(&e->p.qa);
	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(e->s, &e->p.cqa, &c, STEPS));
	CU_ASSERT_EQUAL(dropped, 1);
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(e->s, &e->p.cqa, &c, STEPS));
	CU_ASSERT_EQUAL(c.wr_id, 2);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(b + 8192, a, 64), 0);
	CU_ASSERT_EQUAL(memcmp(a + 8192, b, 64), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_RTS);
	CU_ASSERT(fdev_counter(&e->s->a, "retransmits") >= 1);
	fake_link_set_hook(&e->s->link, NULL, NULL);
	env_free(e);
}

/* A's side of a pair, 64 bytes at off in A's buffer to off in B's. */
static void post_write(struct env *e, uint64_t wr_id, uint32_t off,
		       bool ring)
{
	struct snic_wqe_sge ss = { e->p.bufa + off, 64, e->p.mra };
	struct fwr w = { .wr_id = wr_id, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &ss, .num_sge = 1,
			 .remote_addr = e->p.bufb + off, .rkey = e->p.mrb };

	fqp_write_send(&e->p.qa, &w);
	if (ring)
		fqp_ring(&e->p.qa);
}

static void fill(struct env *e)
{
	uint8_t *a = fdev_ptr(&e->s->a, e->p.bufa);
	uint8_t *b = fdev_ptr(&e->s->b, e->p.bufb);

	for (uint32_t i = 0; i < 8192; i++) {
		a[i] = (uint8_t)(i * 7 + 1);
		b[i] = (uint8_t)(i * 13 + 5);
	}
}

/* WQE wr_id completed successfully, and its 64 bytes at off arrived. */
static void expect_done(struct env *e, uint64_t wr_id, uint32_t off)
{
	struct snic_cqe c;

	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(e->s, &e->p.cqa, &c, STEPS));
	CU_ASSERT_EQUAL(c.wr_id, wr_id);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(fdev_ptr(&e->s->b, e->p.bufb + off),
			       fdev_ptr(&e->s->a, e->p.bufa + off), 64), 0);
}

/* A full window (cut to one PSN, as a loss cuts it to SNIC_CWND_MIN):
 * the second WRITE, fetched while the first is unacknowledged, is left
 * to the general path, which sends it when the ACK opens the window. */
static void test_req_one_window_full(void)
{
	struct env *e = env_new();
	struct snic_qp *qp = qp_a(e);
	uint64_t ones = fdev_counter(&e->s->a, "req_one_sent");
	uint64_t frames = qp->qcnt[SNIC_QCNT_tx_frames];

	fill(e);
	qp->cwnd = 1;
	post_write(e, 1, 0, false);
	post_write(e, 2, 256, true);
	fsim_step(e->s);
	/* both fetched and in the window, only the first on the wire */
	CU_ASSERT_EQUAL(qp->infl_tail - qp->infl_head, 2);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_tx_frames] - frames, 1);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->a, "req_one_sent") - ones, 1);
	expect_done(e, 1, 0);
	expect_done(e, 2, 256);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_tx_frames] - frames, 2);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->a, "req_one_sent") - ones, 1);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->a, "retransmits"), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_RTS);
	env_free(e);
}

/* No frame buffer free: req_one leaves the message fetched, in the
 * window and its gather list ready (FETCH_NOBUF), and the general path
 * sends it once a buffer is free again. */
static void test_req_one_nobuf(void)
{
	struct env *e = env_new();
	struct snic_qp *qp = qp_a(e);
	struct snic_core *c = &qp_view(e->s->a.nic, qp)->core;
	struct fake_hal *fh = &e->s->a.hal;
	struct snic_pkt *held[SNIC_BURST + 1];
	uint32_t nheld = c->npkt_cache, ncache = c->npkt_cache;
	uint64_t ones = fdev_counter(&e->s->a, "req_one_sent");
	uint64_t nobuf = fdev_counter(&e->s->a, "tx_no_buffer");
	uint64_t frames = qp->qcnt[SNIC_QCNT_tx_frames];
	uint64_t wqes = qp->qcnt[SNIC_QCNT_send_wqes];

	fill(e);
	/* the core's cached buffers aside, and none more from the pool
	 * (alloc_limit 0 means no limit: hold one if none is out) */
	memcpy(held, c->pkt_cache, ncache * sizeof(held[0]));
	c->npkt_cache = 0;
	if (fh->nfree == FH_POOL_SIZE)
		CU_ASSERT_EQUAL_FATAL(c->ops->pkt_alloc(c->hal_ctx,
							&held[nheld++], 1), 1);
	fh->alloc_limit = FH_POOL_SIZE - fh->nfree;
	post_write(e, 1, 0, true);
	fsim_idle(e->s, 20);
	CU_ASSERT(fdev_counter(&e->s->a, "tx_no_buffer") > nobuf);
	CU_ASSERT_TRUE(qp->cur.valid);
	CU_ASSERT_EQUAL(qp->cur.sgl.num, 1);
	CU_ASSERT_EQUAL(qp->cur.sgl.total, 64);
	CU_ASSERT_EQUAL(qp->cur.len, 64);
	CU_ASSERT_EQUAL(qp->infl_tail - qp->infl_head, 1);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_send_wqes] - wqes, 1);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_tx_frames] - frames, 0);
	/* the buffers back */
	fh->alloc_limit = 0;
	CU_ASSERT_EQUAL_FATAL(c->npkt_cache, 0);
	memcpy(c->pkt_cache, held, ncache * sizeof(held[0]));
	c->npkt_cache = ncache;
	if (nheld > ncache)
		c->ops->pkt_free(c->hal_ctx, &held[ncache], 1);
	expect_done(e, 1, 0);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_tx_frames] - frames, 1);
	CU_ASSERT_EQUAL(qp->qcnt[SNIC_QCNT_send_wqes] - wqes, 1);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->a, "req_one_sent") - ones, 0);
	CU_ASSERT_EQUAL(fdev_counter(&e->s->a, "retransmits"), 0);
	CU_ASSERT_EQUAL(fqp_state(&e->p.qa), SNIC_QPS_RTS);
	env_free(e);
}

UNIT_SUITE(req_one, NULL, NULL,
	   UNIT_TEST(test_req_resend_after_read),
	   UNIT_TEST(test_req_one_choice),
	   UNIT_TEST(test_req_one_results),
	   UNIT_TEST(test_req_one_window_full),
	   UNIT_TEST(test_req_one_nobuf))
