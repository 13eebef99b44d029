/* SPDX-License-Identifier: MIT */
/*
 * The hostile wire (issue 10): frames an attacker on the same Ethernet
 * segment can send, injected into a NIC's port of the two-NIC simulation.
 * Each must be dropped or answered as the IBTA says, and counted; the
 * QPs it aims at keep working.  Plus the MR case of item 2: a multi-packet
 * SEND landing while its MR is deregistered and the slot fought over.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_env.h"
#include "fake_frames.h"
#include "nic/top.h"
#include "unit.h"

#define STEPS    20000
#define QKEY     0x1111u
#define EVIL_IP  0xc6120063u /* 198.18.0.99 */
#define CQE_CNT  256

static const uint8_t EVIL_MAC[6] = { 0x02, 0xee, 0xee, 0xee, 0xee, 0xee };

struct hw {
	struct fenv *e;
	struct fconn conn;
	struct fqp qa, qb;
};

static void hw_setup(struct hw *w, uint32_t type)
{
	w->e = fenv_new(4200, 1u << 20, CQE_CNT);
	fconn_default(&w->conn);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&w->e->a, &w->qa, type, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&w->e->b, &w->qb, type, 0), SNIC_ST_OK);
	if (type == SNIC_QPT_UD) {
		CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&w->qa, QKEY, 1), SNIC_ST_OK);
		CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&w->qb, QKEY, 1), SNIC_ST_OK);
	} else {
		CU_ASSERT_EQUAL_FATAL(fqp_connect(&w->qa, &w->qb, &w->conn),
				      SNIC_ST_OK);
	}
	fsim_idle(w->e->s, 10); /* ARP both ways */
}

static struct snic_qp *nqp(struct fside *s, const struct fqp *q)
{
	return &s->dev->nic->qps[SNIC_QPN_IDX(q->qpn)];
}

static uint64_t cnt(struct fside *s, const char *name)
{
	return fside_counter(s, name);
}

/* Headers of a frame into `to` (the other side's addresses as source). */
static void hdrs_into(struct hw *w, struct fside *to, struct roce_hdrs *h,
		      uint8_t opcode, uint32_t dqpn, uint32_t psn)
{
	struct fside *from = to == &w->e->a ? &w->e->b : &w->e->a;

	memset(h, 0, sizeof(*h));
	memcpy(h->dmac, to->dev->cfg.mac, 6);
	memcpy(h->smac, from->dev->cfg.mac, 6);
	h->sip = from->dev->cfg.ipv4;
	h->dip = to->dev->cfg.ipv4;
	h->ttl = 64;
	h->sport = 0xc0de;
	h->opcode = opcode;
	h->pkey = ROCE_DEFAULT_PKEY;
	h->dqpn = dqpn;
	h->psn = psn;
	h->ackreq = 1;
}

/* Build h with len payload bytes and put it into `to`'s port. */
static void inject(struct hw *w, struct fside *to, struct roce_hdrs *h,
		   const void *payload, uint32_t len)
{
	static uint8_t f[8192];
	uint16_t n;

	if (len)
		memcpy(f + roce_hdr_len(h->opcode), payload, len);
	n = (uint16_t)roce_build(f, h, len);
	CU_ASSERT_EQUAL_FATAL(fake_link_inject(&w->e->s->link,
					       to == &w->e->a ? 0 : 1, f, n), 0);
	fsim_idle(w->e->s, 4);
}

static void recv_b(struct hw *w, uint64_t id, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge sge = fside_sge(&w->e->b, off, len);

	fqp_post_recv(&w->qb, id, &sge, 1);
}

static void send_a(struct hw *w, uint64_t id, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge sge = fside_sge(&w->e->a, off, len);
	struct fwr wr = { .wr_id = id, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1 };

	fqp_post_send(&w->qa, &wr);
}

/* ---------------------------------------------------------------------- */

/* A SEND into a connected QP from an address that is not its peer, at
 * the PSN it expects: dropped before the transport (rx_drop_wrong_peer),
 * no RECV taken, the PSN unchanged; RC and UC alike (IBTA 9.6.1.5). */
static void spoofed_source(uint32_t type)
{
	struct hw w;
	struct roce_hdrs h;
	struct snic_cqe c;
	uint8_t junk[64];
	uint32_t epsn;
	uint8_t op = type == SNIC_QPT_UC ? ROCE_UC_BASE | ROCE_RC_SEND_ONLY
					 : ROCE_RC_SEND_ONLY;

	hw_setup(&w, type);
	memset(junk, 0x66, sizeof(junk));
	memset(fside_ptr(&w.e->b, 0), 0x11, 4096);
	recv_b(&w, 1, 0, 4096);
	fsim_idle(w.e->s, 4);
	epsn = nqp(&w.e->b, &w.qb)->resp.epsn;
	hdrs_into(&w, &w.e->b, &h, op, w.qb.qpn, epsn);
	h.sip = EVIL_IP;
	memcpy(h.smac, EVIL_MAC, 6);
	inject(&w, &w.e->b, &h, junk, sizeof(junk));
	/* and one far from the PSN: a UC QP would resynchronise on it */
	h.psn = (epsn + 1000) & ROCE_PSN_MASK;
	inject(&w, &w.e->b, &h, junk, sizeof(junk));
	CU_ASSERT_EQUAL(cnt(&w.e->b, "rx_drop_wrong_peer"), 2);
	CU_ASSERT_EQUAL(nqp(&w.e->b, &w.qb)->resp.epsn, epsn);
	CU_ASSERT_FALSE(fcq_poll(&w.e->b.cq, &c));
	CU_ASSERT_EQUAL(fside_ptr(&w.e->b, 0)[0], 0x11);
	/* the real peer still gets through, into the same RECV */
	fpattern(fside_ptr(&w.e->a, 0), 3000, 4);
	send_a(&w, 2, 0, 3000);
	CU_ASSERT_FATAL(fsim_poll_cq(w.e->s, &w.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(c.byte_len, 3000);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&w.e->b, 0), fside_ptr(&w.e->a, 0), 3000), 0);
	CU_ASSERT_EQUAL(fqp_state(&w.qb), SNIC_QPS_RTS);
	fenv_free(w.e);
}

static void test_hw_spoofed_rc(void)
{
	spoofed_source(SNIC_QPT_RC);
}

static void test_hw_spoofed_uc(void)
{
	spoofed_source(SNIC_QPT_UC);
}

/* Datagrams longer than the RECV (by one byte, and at the port MTU): the
 * RECV completes with LOC_LEN_ERR, the QP stays in RTS and takes the next
 * datagram (issue 10 item 4). */
static void test_hw_oversize_ud(void)
{
	struct hw w;
	struct roce_hdrs h;
	struct snic_cqe c;
	static uint8_t big[4096];

	hw_setup(&w, SNIC_QPT_UD);
	memset(big, 0x5a, sizeof(big));
	recv_b(&w, 1, 0, SNIC_GRH_LEN + 100);
	recv_b(&w, 2, 8192, SNIC_GRH_LEN + 100);
	recv_b(&w, 3, 16384, SNIC_GRH_LEN + 100);
	hdrs_into(&w, &w.e->b, &h, 0x60 | ROCE_RC_SEND_ONLY, w.qb.qpn, 7);
	h.deth_qkey = QKEY;
	h.deth_sqpn = 0x42;
	inject(&w, &w.e->b, &h, big, 101);
	inject(&w, &w.e->b, &h, big, 4096);
	for (uint64_t id = 1; id <= 2; id++) {
		CU_ASSERT_FATAL(fcq_poll(&w.e->b.cq, &c));
		CU_ASSERT_EQUAL(c.wr_id, id);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_LEN_ERR);
	}
	CU_ASSERT_EQUAL(cnt(&w.e->b, "rx_ud_too_long"), 2);
	CU_ASSERT_EQUAL(fqp_state(&w.qb), SNIC_QPS_RTS);
	inject(&w, &w.e->b, &h, big, 100);
	CU_ASSERT_FATAL(fcq_poll(&w.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.wr_id, 3);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.byte_len, SNIC_GRH_LEN + 100);
	fenv_free(w.e);
}

/* READ responses of the wrong length for a 4000-byte READ at MTU 1024
 * (FIRST/MIDDLE exactly 1024, LAST exactly 928): empty, short and long
 * ones are dropped and counted, never completed; the right stream then
 * completes the READ with the bytes it carried (issue 10 item 5).  A's QP
 * talks to a QPN b does not have, so only our frames answer. */
static void test_hw_read_resp_lengths(void)
{
	struct hw w;
	struct roce_hdrs h;
	struct snic_cqe c;
	static uint8_t data[4096]; /* 4000 read, and a long LAST */
	struct snic_wqe_sge sge;
	struct fwr wr = { .wr_id = 9, .opcode = SNIC_WR_RDMA_READ,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1,
			  .remote_addr = 0x1000, .rkey = 0x1234 };
	const uint32_t psn = 0x300;

	w.e = fenv_new(4200, 1u << 20, CQE_CNT);
	fconn_default(&w.conn);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&w.e->a, &w.qa, SNIC_QPT_RC, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_to_rts(&w.qa, FSIM_IP_B, 0x3ff, 0x10, psn,
					 &w.conn), SNIC_ST_OK);
	fsim_idle(w.e->s, 10);
	fpattern(data, sizeof(data), 77);
	memset(fside_ptr(&w.e->a, 0), 0, 4096);
	sge = fside_sge(&w.e->a, 0, 4000);
	fqp_post_send(&w.qa, &wr);
	fsim_idle(w.e->s, 10);
	hdrs_into(&w, &w.e->a, &h, ROCE_RC_READ_RESP_ONLY, w.qa.qpn, psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDIT_INVALID;
	inject(&w, &w.e->a, &h, data, 0);          /* empty ONLY */
	inject(&w, &w.e->a, &h, data, 100);        /* short ONLY */
	h.opcode = ROCE_RC_READ_RESP_FIRST;
	inject(&w, &w.e->a, &h, data, 512);        /* short FIRST */
	CU_ASSERT_EQUAL(cnt(&w.e->a, "rx_drop_read_resp_len"), 3);
	CU_ASSERT_FALSE(fcq_poll(&w.e->a.cq, &c));
	inject(&w, &w.e->a, &h, data, 1024);
	h.opcode = ROCE_RC_READ_RESP_MIDDLE;
	h.psn = psn + 1;
	inject(&w, &w.e->a, &h, data + 1024, 1000); /* short MIDDLE */
	inject(&w, &w.e->a, &h, data + 1024, 1024);
	h.psn = psn + 2;
	inject(&w, &w.e->a, &h, data + 2048, 1024);
	h.opcode = ROCE_RC_READ_RESP_LAST;
	h.psn = psn + 3;
	inject(&w, &w.e->a, &h, data + 3072, 1024); /* long LAST */
	inject(&w, &w.e->a, &h, data + 3072, 900);  /* short LAST */
	CU_ASSERT_EQUAL(cnt(&w.e->a, "rx_drop_read_resp_len"), 6);
	CU_ASSERT_FALSE(fcq_poll(&w.e->a.cq, &c));
	inject(&w, &w.e->a, &h, data + 3072, 928);
	CU_ASSERT_FATAL(fcq_poll(&w.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.wr_id, 9);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.byte_len, 4000);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&w.e->a, 0), data, 4000), 0);
	fenv_free(w.e);
}

/* READ requests whose length no responder may take: 0xFFFFFFFF (longer
 * than the largest message) is NAKed invalid request; 2^31 (the largest
 * message, more than the MR) NAKed remote access.  The expected PSN does
 * not move by the 4 million PSNs such a READ would own (issue 10 item 6). */
static void huge_read(uint32_t len, const char *nak)
{
	struct hw w;
	struct roce_hdrs h;
	uint32_t epsn;

	hw_setup(&w, SNIC_QPT_RC);
	epsn = nqp(&w.e->b, &w.qb)->resp.epsn;
	hdrs_into(&w, &w.e->b, &h, ROCE_RC_READ_REQ, w.qb.qpn, epsn);
	h.reth_va = w.e->b.buf;
	h.reth_rkey = w.e->b.mr;
	h.reth_len = len;
	inject(&w, &w.e->b, &h, NULL, 0);
	CU_ASSERT_EQUAL(cnt(&w.e->b, nak), 1);
	CU_ASSERT_EQUAL(cnt(&w.e->b, "nak_read_too_long"),
			len > SNIC_MAX_MSG_SIZE ? 1 : 0);
	CU_ASSERT_EQUAL(cnt(&w.e->b, "read_responses"), 0);
	CU_ASSERT_EQUAL(nqp(&w.e->b, &w.qb)->resp.epsn, epsn);
	fenv_free(w.e);
}

static void test_hw_huge_read_len(void)
{
	huge_read(0xffffffffu, "nak_inv_req_sent");
	huge_read(0x80000000u, "nak_access_sent");
}

/* A SEND with a P_Key not of the QP's partition is dropped (rx_drop_pkey)
 * before the transport; a limited member of the default partition
 * (0x7fff) matches our full membership (IBTA 10.9.3). */
static void test_hw_bad_pkey(void)
{
	struct hw w;
	struct roce_hdrs h;
	struct snic_cqe c;
	uint8_t p[32];
	uint32_t epsn;

	hw_setup(&w, SNIC_QPT_RC);
	memset(p, 0x3c, sizeof(p));
	recv_b(&w, 1, 0, 4096);
	fsim_idle(w.e->s, 4);
	epsn = nqp(&w.e->b, &w.qb)->resp.epsn;
	hdrs_into(&w, &w.e->b, &h, ROCE_RC_SEND_ONLY, w.qb.qpn, epsn);
	h.pkey = 0x1234;
	inject(&w, &w.e->b, &h, p, sizeof(p));
	h.pkey = 0x8000; /* the invalid P_Key */
	inject(&w, &w.e->b, &h, p, sizeof(p));
	CU_ASSERT_EQUAL(cnt(&w.e->b, "rx_drop_pkey"), 2);
	CU_ASSERT_EQUAL(nqp(&w.e->b, &w.qb)->resp.epsn, epsn);
	CU_ASSERT_FALSE(fcq_poll(&w.e->b.cq, &c));
	h.pkey = 0x7fff;
	inject(&w, &w.e->b, &h, p, sizeof(p));
	CU_ASSERT_FATAL(fcq_poll(&w.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.byte_len, sizeof(p));
	CU_ASSERT_EQUAL(cnt(&w.e->b, "rx_drop_pkey"), 2);
	fenv_free(w.e);
}

/* Unsolicited ARP replies claiming b's address for the attacker's MAC:
 * not learned (counted), so a's RC traffic still reaches b (item 9). */
static void test_hw_unsolicited_arp(void)
{
	static const uint8_t ZERO[6];
	struct hw w;
	struct snic_cqe c;
	uint8_t f[FARP_LEN];
	uint16_t len;

	hw_setup(&w, SNIC_QPT_RC);
	len = farp_build(f, FARP_REPLY, w.e->s->a.cfg.mac, EVIL_MAC, FSIM_IP_B,
			 ZERO, FSIM_IP_A);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL_FATAL(fake_link_inject(&w.e->s->link, 0, f, len), 0);
	fsim_idle(w.e->s, 10);
	CU_ASSERT_EQUAL(cnt(&w.e->a, "rx_drop_arp_unsolicited"), 3);
	CU_ASSERT_EQUAL(memcmp(nqp(&w.e->a, &w.qa)->dmac, w.e->s->b.cfg.mac, 6), 0);
	fpattern(fside_ptr(&w.e->a, 0), 2000, 8);
	recv_b(&w, 1, 0, 4096);
	send_a(&w, 2, 0, 2000);
	CU_ASSERT_FATAL(fsim_poll_cq(w.e->s, &w.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&w.e->b, 0), fside_ptr(&w.e->a, 0), 2000), 0);
	fenv_free(w.e);
}

/* ---------------------------------------------------------------------- */
/* The MR case (item 2): b's RECV lies in MR X; while a 12 KiB SEND lands
 * in it, b deregisters X and another context on b registers and
 * deregisters 255 times.  X's deregistration waits for the message, so
 * the slot is not handed out while the SEND uses it; none of the
 * attacker's keys is X's; the attacker's memory stays as it was; the
 * SEND lands whole in X; then the deregistration completes. */

static bool b_in_send(void *arg)
{
	struct hw *w = arg;

	return nqp(&w->e->b, &w->qb)->resp.in_send;
}

static void test_hw_mr_dereg_while_landing(void)
{
	const uint32_t len = 12 * 1024, xoff = 0x40000;
	struct hw w;
	struct snic_cqe c;
	struct snic_cmd_handle dh = { 0 };
	struct fctx atk;
	uint32_t atk_pd, xkey, key;
	uint64_t atk_pa;
	static uint8_t atk_copy[16384];
	struct snic_wqe_sge sge;
	struct ftap tap;

	hw_setup(&w, SNIC_QPT_RC);
	/* X: b's context, b's PD, 16 KiB of b's buffer */
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&w.e->b.ctx, w.e->b.pd,
					  w.e->b.buf + xoff, 16384,
					  SNIC_ACCESS_LOCAL_WRITE, &xkey),
			      SNIC_ST_OK);
	/* the attacker: another context on b, its own PD and pages */
	CU_ASSERT_EQUAL_FATAL(fctx_open(&atk, w.e->b.dev, 7), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&atk, &atk_pd), SNIC_ST_OK);
	atk_pa = fdev_alloc(w.e->b.dev, 16384, 4096);
	fpattern(fdev_ptr(w.e->b.dev, atk_pa), 16384, 99);
	memcpy(atk_copy, fdev_ptr(w.e->b.dev, atk_pa), 16384);

	sge = (struct snic_wqe_sge){ .addr = w.e->b.buf + xoff, .length = 16384,
				     .lkey = xkey };
	fqp_post_recv(&w.qb, 1, &sge, 1);
	fpattern(fside_ptr(&w.e->a, 0), len, 5);
	/* the 4th packet is lost once: the SEND stays half landed until a
	 * resends it, which it does only when the sim steps again */
	ftap_init(&tap, 0);
	tap.drop_mask = 1u << 3;
	fake_link_set_hook(&w.e->s->link, ftap_hook, &tap);
	send_a(&w, 2, 0, len);
	CU_ASSERT_FATAL(fsim_run(w.e->s, b_in_send, &w, STEPS));
	/* the SEND is landing: deregister X (completes later) */
	dh.handle = xkey;
	fctx_cmd_post(&w.e->b.ctx, SNIC_CMD_DEREG_MR, &dh, sizeof(dh));
	fdev_pass(w.e->b.dev);
	CU_ASSERT_EQUAL(fctx_cmd_status(&w.e->b.ctx, NULL, 0), FST_TIMEOUT);
	CU_ASSERT(cnt(&w.e->b, "mr_dereg_waits") >= 1);
	for (int i = 0; i < 255; i++) {
		int st = fctx_reg_mr(&atk, atk_pd, atk_pa, 16384,
				     SNIC_ACCESS_LOCAL_WRITE |
				     SNIC_ACCESS_REMOTE_WRITE, &key);

		CU_ASSERT_EQUAL(st, SNIC_ST_OK);
		if (st != SNIC_ST_OK)
			continue;
		CU_ASSERT_NOT_EQUAL(key, xkey);
		CU_ASSERT_NOT_EQUAL(SNIC_KEY_IDX(key), SNIC_KEY_IDX(xkey));
		CU_ASSERT_EQUAL(fctx_dereg_mr(&atk, key), SNIC_ST_OK);
	}
	/* a new user of X is refused at once: it is being deregistered */
	CU_ASSERT_PTR_NULL(mr_check(w.e->b.dev->nic, xkey,
				    nqp(&w.e->b, &w.qb)->pd,
				    SNIC_ACCESS_LOCAL_WRITE, w.e->b.buf + xoff, 1));
	CU_ASSERT_FATAL(fsim_poll_cq(w.e->s, &w.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.byte_len, len);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&w.e->b, xoff), fside_ptr(&w.e->a, 0), len), 0);
	CU_ASSERT_EQUAL(memcmp(fdev_ptr(w.e->b.dev, atk_pa), atk_copy, 16384), 0);
	/* the waiting command is asked again every SNIC_CMD_RETRY_NS */
	fsim_idle(w.e->s, 4 + SNIC_CMD_RETRY_NS / FSIM_STEP_NS);
	CU_ASSERT_EQUAL(fctx_cmd_status(&w.e->b.ctx, NULL, 0), SNIC_ST_OK);
	CU_ASSERT_FALSE(w.e->b.dev->nic->mrs[SNIC_KEY_IDX(xkey)].in_use);
	fenv_free(w.e);
}

/* A peer that stops mid-message does not hold a deregistration for ever:
 * after SNIC_MR_DEREG_WAIT_NS it completes, and the rest of the message,
 * should it come, finds no MR: the RECV fails, nothing is written. */
static void test_hw_mr_dereg_bounded(void)
{
	const uint32_t xoff = 0x40000;
	struct hw w;
	struct roce_hdrs h;
	struct snic_cqe c;
	struct snic_cmd_handle dh = { 0 };
	struct snic_wqe_sge sge;
	uint8_t p[1024];
	uint32_t xkey, epsn;

	hw_setup(&w, SNIC_QPT_RC);
	CU_ASSERT_EQUAL_FATAL(fctx_reg_mr(&w.e->b.ctx, w.e->b.pd,
					  w.e->b.buf + xoff, 16384,
					  SNIC_ACCESS_LOCAL_WRITE, &xkey),
			      SNIC_ST_OK);
	sge = (struct snic_wqe_sge){ .addr = w.e->b.buf + xoff, .length = 16384,
				     .lkey = xkey };
	fqp_post_recv(&w.qb, 1, &sge, 1);
	fsim_idle(w.e->s, 4);
	memset(p, 0x77, sizeof(p));
	memset(fside_ptr(&w.e->b, xoff + 1024), 0x11, 1024);
	epsn = nqp(&w.e->b, &w.qb)->resp.epsn;
	hdrs_into(&w, &w.e->b, &h, ROCE_RC_SEND_FIRST, w.qb.qpn, epsn);
	inject(&w, &w.e->b, &h, p, sizeof(p));
	CU_ASSERT_TRUE(nqp(&w.e->b, &w.qb)->resp.in_send);
	dh.handle = xkey;
	fctx_cmd_post(&w.e->b.ctx, SNIC_CMD_DEREG_MR, &dh, sizeof(dh));
	fsim_idle(w.e->s, 10);
	CU_ASSERT_EQUAL(fctx_cmd_status(&w.e->b.ctx, NULL, 0), FST_TIMEOUT);
	w.e->s->clock += SNIC_MR_DEREG_WAIT_NS;
	fsim_idle(w.e->s, 4);
	CU_ASSERT_EQUAL(fctx_cmd_status(&w.e->b.ctx, NULL, 0), SNIC_ST_OK);
	h.opcode = ROCE_RC_SEND_LAST;
	h.psn = (epsn + 1) & ROCE_PSN_MASK;
	inject(&w, &w.e->b, &h, p, sizeof(p));
	CU_ASSERT_FATAL(fcq_poll(&w.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_NOT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(fside_ptr(&w.e->b, xoff + 1024)[0], 0x11);
	fenv_free(w.e);
}

UNIT_SUITE(hostile_wire, NULL, NULL,
	   UNIT_TEST(test_hw_spoofed_rc),
	   UNIT_TEST(test_hw_spoofed_uc),
	   UNIT_TEST(test_hw_oversize_ud),
	   UNIT_TEST(test_hw_read_resp_lengths),
	   UNIT_TEST(test_hw_huge_read_len),
	   UNIT_TEST(test_hw_bad_pkey),
	   UNIT_TEST(test_hw_unsolicited_arp),
	   UNIT_TEST(test_hw_mr_dereg_while_landing),
	   UNIT_TEST(test_hw_mr_dereg_bounded));
