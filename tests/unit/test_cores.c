/* SPDX-License-Identifier: MIT */
/*
 * Several firmware cores per NIC (nic/xcore.c, nic/steer.c), polled in
 * turn on the simulation's clock: QPs spread over both cores by QPN, all
 * sharing one CQ per side (so both cores' CQEs interleave in one ring,
 * each core writing its own into the slots it claims),
 * WRITE and SEND traffic on every QP with its data checked, with and
 * without loss.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_env.h"
#include "fake_host.h"
#include "nic/top.h"
#include "unit.h"

#define NQP     8
#define MSGS    64           /* per QP, half WRITEs, half SENDs        */
#define MLEN    3000         /* bytes: 1 packet at MTU 4096, more at 1024 */
#define SPAN    (1u << 20)   /* buffer bytes per QP                    */

struct cenv {
	struct fsim *s;
	struct fpair p;
	struct fqp a[NQP], b[NQP];
};

static uint8_t pat(uint32_t q, uint32_t m, uint32_t i)
{
	return (uint8_t)(q * 37u + m * 11u + i * 7u + (i >> 8));
}

static uint8_t *bytes(struct fdev *d, uint64_t base, uint32_t q, uint64_t off)
{
	return fdev_ptr(d, base + (uint64_t)q * SPAN + off);
}

static struct cenv *cenv_new(const struct fconn *conn)
{
	struct cenv *e = calloc(1, sizeof(*e));
	struct fqp_caps caps = { .sq_cnt = 128, .rq_cnt = 128,
				 .max_send_sge = 1, .max_recv_sge = 1 };

	e->s = fsim_pair_new(&e->p, 2, conn, (uint64_t)NQP * SPAN, 4096);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e->s);
	CU_ASSERT_EQUAL_FATAL(snic_nic_ncores(e->s->a.nic), 2);
	e->a[0] = e->p.qa;
	e->b[0] = e->p.qb;
	for (uint32_t q = 1; q < NQP; q++) {
		CU_ASSERT_EQUAL_FATAL(fqp_create(&e->a[q], &e->p.ca, e->p.pda,
						 &e->p.cqa, &e->p.cqa, &caps), 0);
		CU_ASSERT_EQUAL_FATAL(fqp_create(&e->b[q], &e->p.cb, e->p.pdb,
						 &e->p.cqb, &e->p.cqb, &caps), 0);
		CU_ASSERT_EQUAL_FATAL(fqp_connect(&e->a[q], &e->b[q], conn), 0);
	}
	return e;
}

/* QP slot i runs on core i % 2: both cores own QPs on both sides. */
static void check_spread(struct cenv *e)
{
	unsigned on[2] = { 0, 0 };

	for (uint32_t q = 0; q < NQP; q++) {
		on[(e->a[q].qpn & 0x3fff) % 2]++;
		on[(e->b[q].qpn & 0x3fff) % 2]++;
	}
	CU_ASSERT_TRUE(on[0] >= NQP / 2 && on[1] >= NQP / 2);
}

/* Every QP: MSGS/2 WRITEs into B's half, MSGS/2 SENDs into B's RECVs;
 * every CQE on both sides accounted for, every byte compared. */
static void traffic(struct cenv *e)
{
	uint32_t half = MSGS / 2, got_a = 0, got_b = 0;
	uint32_t seen_a[NQP] = { 0 }, seen_b[NQP] = { 0 };
	struct snic_cqe c;

	for (uint32_t q = 0; q < NQP; q++) {
		for (uint32_t m = 0; m < MSGS; m++)
			for (uint32_t i = 0; i < MLEN; i++)
				*bytes(&e->s->a, e->p.bufa, q, (uint64_t)m * 4096 + i) =
					pat(q, m, i);
		memset(bytes(&e->s->b, e->p.bufb, q, 0), 0, (size_t)MSGS * 4096);
		for (uint32_t m = half; m < MSGS; m++) {
			struct snic_wqe_sge s = { e->p.bufb + (uint64_t)q * SPAN +
						  (uint64_t)m * 4096, 4096, e->p.mrb };

			fqp_post_recv(&e->b[q], ((uint64_t)q << 32) | m, &s, 1);
		}
	}
	for (uint32_t m = 0; m < MSGS; m++)
		for (uint32_t q = 0; q < NQP; q++) {
			struct snic_wqe_sge s = { e->p.bufa + (uint64_t)q * SPAN +
						  (uint64_t)m * 4096, MLEN, e->p.mra };
			struct fwr w = { .wr_id = ((uint64_t)q << 32) | m,
					 .opcode = m < half ? SNIC_WR_RDMA_WRITE
							    : SNIC_WR_SEND,
					 .flags = SNIC_SEND_SIGNALED, .sge = &s,
					 .num_sge = 1,
					 .remote_addr = e->p.bufb + (uint64_t)q * SPAN +
							(uint64_t)m * 4096,
					 .rkey = e->p.mrb };

			fqp_post_send(&e->a[q], &w);
		}
	while (got_a < NQP * MSGS || got_b < NQP * half) {
		int any = 0;

		while (fcq_poll(&e->p.cqa, &c)) {
			uint32_t q = (uint32_t)(c.wr_id >> 32), m = (uint32_t)c.wr_id;

			CU_ASSERT_EQUAL_FATAL(c.status, SNIC_WC_SUCCESS);
			CU_ASSERT_FATAL(q < NQP && c.qp_num == e->a[q].qpn);
			CU_ASSERT_EQUAL(m, seen_a[q]); /* in order per QP */
			seen_a[q]++;
			got_a++;
			any = 1;
		}
		while (fcq_poll(&e->p.cqb, &c)) {
			uint32_t q = (uint32_t)(c.wr_id >> 32), m = (uint32_t)c.wr_id;

			CU_ASSERT_EQUAL_FATAL(c.status, SNIC_WC_SUCCESS);
			CU_ASSERT_FATAL(q < NQP && c.qp_num == e->b[q].qpn);
			CU_ASSERT_EQUAL(m, half + seen_b[q]);
			CU_ASSERT_EQUAL(c.byte_len, MLEN);
			seen_b[q]++;
			got_b++;
			any = 1;
		}
		if (!any) {
			CU_ASSERT_FATAL(e->s->steps < 20000000);
			fsim_step(e->s);
		}
	}
	for (uint32_t q = 0; q < NQP; q++)
		for (uint32_t m = 0; m < MSGS; m++)
			CU_ASSERT_EQUAL(memcmp(bytes(&e->s->b, e->p.bufb, q,
						     (uint64_t)m * 4096),
					       bytes(&e->s->a, e->p.bufa, q,
						     (uint64_t)m * 4096), MLEN), 0);
}

static void cenv_free(struct cenv *e)
{
	CU_ASSERT_EQUAL(fsim_free(e->s), 0);
	free(e);
}

/* Traffic on QPs of both cores.  own_txq: the port has a TX queue per
 * core (core 1 sends on queue 1, core 0 relays nothing), else one (core
 * 1's frames all go through core 0, queue 1 unused).  own_rxq: the port
 * steers by the destination QPN (hal.h rx_queues: core 1 takes its
 * frames off queue 1 itself, core 0 steers nothing), else core 0 polls
 * the port and steers in software. */
static void spread_case(bool own_txq, bool own_rxq)
{
	struct fconn conn;
	struct cenv *e;

	fconn_default(&conn);
	fake_hal_tx_queues = own_txq ? FH_MAX_TXQ : 1;
	fake_hal_rx_queues = own_rxq ? 0 : 1;
	e = cenv_new(&conn);
	fake_hal_tx_queues = FH_MAX_TXQ;
	fake_hal_rx_queues = 0;
	check_spread(e);
	traffic(e);
	for (struct fdev *d = &e->s->a; d; d = d == &e->s->a ? &e->s->b : NULL) {
		uint64_t relayed = fdev_counter(d, "xcore_tx_relayed");
		uint64_t steered = fdev_counter(d, "xcore_rx_steered");

		CU_ASSERT_EQUAL(fdev_counter(d, "xcore_rx_drop"), 0);
		CU_ASSERT_EQUAL(fdev_counter(d, "xcore_rx_misrouted"), 0);
		CU_ASSERT_EQUAL(d->hal.bad_txq, 0);
		CU_ASSERT_EQUAL(d->hal.bad_rxq, 0);
		CU_ASSERT_EQUAL(d->hal.rxq_full, 0);
		if (own_txq) {
			CU_ASSERT_EQUAL(relayed, 0);
			CU_ASSERT_TRUE(d->hal.tx_frames_q[1] > 0);
			CU_ASSERT_TRUE(d->hal.tx_frames_q[0] > 0);
		} else {
			CU_ASSERT_TRUE(relayed > 0);
			CU_ASSERT_EQUAL(d->hal.tx_frames_q[1], 0);
		}
		CU_ASSERT_EQUAL(d->hal.tx_frames_q[0] + d->hal.tx_frames_q[1],
				d->hal.tx_frames);
		if (own_rxq) {
			/* nothing through core 0: every frame on its core's
			 * queue, both queues used */
			CU_ASSERT_EQUAL(d->hal.rx_queues, 2);
			CU_ASSERT_EQUAL(steered, 0);
			CU_ASSERT_TRUE(d->hal.rx_frames_q[0] > 0);
			CU_ASSERT_TRUE(d->hal.rx_frames_q[1] > 0);
			CU_ASSERT_EQUAL(d->hal.rx_frames_q[0] +
					d->hal.rx_frames_q[1], d->hal.rx_frames);
		} else {
			CU_ASSERT_EQUAL(d->hal.rx_queues, 1);
			CU_ASSERT_TRUE(steered > 0);
		}
	}
	cenv_free(e);
}

static void test_cores_spread(void)
{
	spread_case(true, true);
}

static void test_cores_spread_sw_steer(void)
{
	spread_case(true, false);
}

/* A port with two RX queues that puts every frame on queue 0 (one that
 * steers only some frames, or none): core 0 checks the owner of what its
 * queue brings and steers core 1's frames in software; nothing lost. */
static void test_cores_rx_unsteered(void)
{
	struct fconn conn;
	struct cenv *e;

	fconn_default(&conn);
	e = cenv_new(&conn);
	CU_ASSERT_EQUAL_FATAL(e->s->a.hal.rx_queues, 2);
	e->s->a.hal.rxq_force = 0;
	e->s->b.hal.rxq_force = 0;
	traffic(e);
	for (struct fdev *d = &e->s->a; d; d = d == &e->s->a ? &e->s->b : NULL) {
		CU_ASSERT_TRUE(fdev_counter(d, "xcore_rx_steered") > 0);
		CU_ASSERT_EQUAL(fdev_counter(d, "xcore_rx_misrouted"), 0);
		CU_ASSERT_EQUAL(d->hal.rx_frames_q[1], 0);
	}
	cenv_free(e);
}

/* A port that puts frames on the wrong core's queue: core 1 touches no
 * frame of core 0's QP (nor of core 0's kind: ARP, QP1), it drops and
 * counts them, as a port's error; the QP's sender retransmits them once
 * the port steers right, and the data arrives whole. */
static void test_cores_rx_misrouted(void)
{
	struct fconn conn;
	struct fsim *s;
	struct fpair p;
	struct snic_cqe c;
	struct snic_wqe_sge sg;
	struct fwr w = { .wr_id = 7, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &sg, .num_sge = 1 };
	uint64_t rx0;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(s->b.nic->qps[handle_idx(p.qb.qpn)].core, 0);
	for (uint32_t i = 0; i < 4096; i++)
		((uint8_t *)fdev_ptr(&s->a, p.bufa))[i] = (uint8_t)(i * 13u + 5u);
	sg = (struct snic_wqe_sge){ p.bufa, 4096, p.mra };
	w.remote_addr = p.bufb;
	w.rkey = p.mrb;
	rx0 = fdev_counter(&s->b, "rx_frames");
	s->b.hal.rxq_force = 1;
	fqp_post_send(&p.qa, &w);
	CU_ASSERT_FALSE(fsim_poll_cq(s, &p.cqa, &c, 200));
	CU_ASSERT_TRUE(fdev_counter(&s->b, "xcore_rx_misrouted") > 0);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "rx_frames"), rx0);
	s->b.hal.rxq_force = -1;
	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(s, &p.cqa, &c, 2000000));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 7);
	CU_ASSERT_EQUAL(memcmp(fdev_ptr(&s->b, p.bufb), fdev_ptr(&s->a, p.bufa),
			       4096), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

static void test_cores_spread_relay(void)
{
	spread_case(false, false);
}

/* The core of a QP of this NIC (the firmware's own record). */
static unsigned qp_core_of(struct fdev *d, const struct fqp *q)
{
	return d->nic->qps[SNIC_QPN_IDX(q->qpn)].core;
}

/* A QP on an SRQ runs on the SRQ's core, (SRQ index + 1) % 2: the first
 * SRQ's QPs go to core 1, not to core 0 with the port, the steering and
 * the commands (objects/qp_core.c: an application with one SRQ, as UCX
 * has, would otherwise leave core 1 idle); the second SRQ's to core 0;
 * UD QPs stay on core 0.  (SRQ traffic on both cores: unit/cores2 runs
 * the srq suite with 2 cores.) */
static void test_cores_srq_placement(void)
{
	struct fconn conn;
	struct cenv *e;
	struct fsrq s1, s2;
	struct fqp q[4], ud;
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .srq = true };
	struct fqp_caps udc = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 1,
				.max_recv_sge = 1, .qp_type = SNIC_QPT_UD };

	fconn_default(&conn);
	e = cenv_new(&conn);
	CU_ASSERT_EQUAL_FATAL(fsrq_create(&s1, &e->p.cb, e->p.pdb, 16, 1, 0), 0);
	CU_ASSERT_EQUAL_FATAL(fsrq_create(&s2, &e->p.cb, e->p.pdb, 16, 1, 0), 0);
	CU_ASSERT_EQUAL(handle_idx(s1.srqn), 0); /* the first SRQ */
	for (int i = 0; i < 4; i++) {
		caps.srqn = i < 2 ? s1.srqn : s2.srqn;
		CU_ASSERT_EQUAL_FATAL(fqp_create(&q[i], &e->p.cb, e->p.pdb,
						 &e->p.cqb, &e->p.cqb, &caps), 0);
		CU_ASSERT_EQUAL(qp_core_of(&e->s->b, &q[i]),
				(handle_idx(caps.srqn) + 1) % 2);
		/* the steering stage finds the core by the QPN alone */
		CU_ASSERT_EQUAL(SNIC_QPN_IDX(q[i].qpn) % 2,
				qp_core_of(&e->s->b, &q[i]));
	}
	CU_ASSERT_EQUAL(qp_core_of(&e->s->b, &q[0]), 1);
	CU_ASSERT_EQUAL(qp_core_of(&e->s->b, &q[2]), 0);
	CU_ASSERT_EQUAL_FATAL(fqp_create(&ud, &e->p.cb, e->p.pdb, &e->p.cqb,
					 &e->p.cqb, &udc), 0);
	CU_ASSERT_EQUAL(qp_core_of(&e->s->b, &ud), 0);
	cenv_free(e);
}

/* The same over a lossy, reordering link at MTU 1024 (3 packets a
 * message): retransmissions run on each QP's own core's timer wheel. */
static void test_cores_loss(void)
{
	struct snic_fault_cfg f = { .loss = 20000, .reorder = 5000,
				    .dup = 5000, .delay_min_ns = 2000,
				    .delay_max_ns = 30000, .seed = 77 };
	struct fconn conn;
	struct cenv *e;

	fconn_default(&conn);
	conn.path_mtu = 3; /* IBV_MTU_1024 */
	e = cenv_new(&conn);
	fake_hal_set_fault(&e->s->b.hal, &f);
	f.seed = 78;
	fake_hal_set_fault(&e->s->a.hal, &f);
	traffic(e);
	printf("\n    2 cores, 2%% loss: retransmits %" PRIu64 "/%" PRIu64
	       ", timeouts %" PRIu64 ", steered %" PRIu64 "/%" PRIu64 "\n    ",
	       fdev_counter(&e->s->a, "retransmits"),
	       fdev_counter(&e->s->b, "retransmits"),
	       fdev_counter(&e->s->a, "timeouts"),
	       fdev_counter(&e->s->a, "xcore_rx_steered"),
	       fdev_counter(&e->s->b, "xcore_rx_steered"));
	CU_ASSERT_TRUE(fdev_counter(&e->s->a, "retransmits") > 0);
	fake_hal_set_fault(&e->s->a.hal, NULL);
	fake_hal_set_fault(&e->s->b.hal, NULL);
	cenv_free(e);
}

/* Core 1 writes its QPs' CQEs itself, into the slot its claim got: the
 * host reads one before core 0 has run at all.  Core 0 hears of the CQ at
 * the end of core 1's pass (SNIC_XC_CQ_DIRTY) for the completion event
 * of an armed CQ, which comes after core 0's next pass and not before.
 * That message and an event (which may not be lost) find core 1's ring
 * to core 0 full: with the cores polled in turn nobody else can empty
 * it, so core 1 runs core 0's handler itself (it waited for ever
 * before); one full event, counted once each. */
static void test_cores_ring_full(void)
{
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct snic_nic *k1;
	struct snic_xc_ring *r;
	struct snic_xc_msg junk = { .type = 0 }; /* handled as nothing */
	struct snic_cqe cqe = { .wr_id = 0x1234, .status = SNIC_WC_SUCCESS };
	struct snic_cqe got;
	struct snic_cq_dbrec *db;
	struct snic_ctx_slot *slot;
	uint32_t n = 0;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	k1 = snic_nic_core(s->a.nic, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(k1);
	slot = fdev_slot(&s->a, p.ca.slot);
	db = fdev_ptr(&s->a, p.cqa.dbrec_pa);
	atomic_fetch_add(&db->arm_sn, 1); /* ibv_req_notify_cq(cq, 0) */
	r = s->a.nic->sh->xc.msg[1][0];
	while (xc_ring_push(r, &junk, 1))
		n++;
	CU_ASSERT_EQUAL(n, SNIC_XC_MSG_RING);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_ring_full"), 0);
	cq_post(k1, handle_idx(p.cqa.cqn), &cqe, false);
	CU_ASSERT_TRUE_FATAL(fcq_poll(&p.cqa, &got)); /* no core 0 pass */
	CU_ASSERT_EQUAL(got.wr_id, 0x1234);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_ring_full"), 0);
	CU_ASSERT_EQUAL(slot->eq_pi, 0);
	cq_dirty_send(k1); /* core 1's pass ends */
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_ring_full"), 1);
	CU_ASSERT_EQUAL(slot->eq_pi, 0); /* handled; events at pass end */
	while (xc_ring_push(r, &junk, 1))
		;
	core_event(&k1->core, p.ca.slot, SNIC_EV_QP_FATAL, 7);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_ring_full"), 2);
	for (n = 0; n < 1000 && xc_ring_count(r); n++)
		fdev_pass(&s->a); /* core 0: the messages before, then them */
	/* the CQ's event first: its CQE came before the QP's event */
	CU_ASSERT_EQUAL(slot->eq_pi, 2);
	CU_ASSERT_EQUAL(slot->eq[0].type, SNIC_EV_COMP);
	CU_ASSERT_EQUAL(slot->eq[0].obj, p.cqa.cqn);
	CU_ASSERT_EQUAL(slot->eq[1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[1].obj, 7);
	fdev_poll(&s->a, 10);
	CU_ASSERT_EQUAL(slot->eq_pi, 2); /* one arm, one event */
	CU_ASSERT_FALSE(fcq_poll(&p.cqa, &got));
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* Connected pairs qa[i]-qb[i] (i = 0: the pair's own) until one's QP on
 * `d` (the pair's NIC a or b) belongs to core 1: its index, at most 3
 * (QPNs alternate cores). */
static uint32_t pair_on_core1(struct fsim *s, struct fpair *p,
			      const struct fconn *conn, struct fdev *d,
			      struct fqp qa[4], struct fqp qb[4])
{
	struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 };

	qa[0] = p->qa;
	qb[0] = p->qb;
	for (uint32_t i = 0; i < 4; i++) {
		if (i) {
			CU_ASSERT_EQUAL_FATAL(fqp_create(&qa[i], &p->ca, p->pda,
							 &p->cqa, &p->cqa, &caps), 0);
			CU_ASSERT_EQUAL_FATAL(fqp_create(&qb[i], &p->cb, p->pdb,
							 &p->cqb, &p->cqb, &caps), 0);
			CU_ASSERT_EQUAL_FATAL(fqp_connect(&qa[i], &qb[i], conn), 0);
		}
		if (d->nic->qps[handle_idx((d == &s->a ? qa : qb)[i].qpn)].core == 1)
			return i;
	}
	CU_FAIL_FATAL("no QP on core 1");
	return 0;
}

/* A QP of core 1 whose CQE finds the shared 4-entry CQ full (nobody
 * consuming): core 1 tells core 0 (SNIC_XC_CQ_OVERRUN) and drops the CQE,
 * and the QP goes to error there, as on one core - CQ_ERR on the CQ, then
 * QP_FATAL on the QP; the 4 CQEs before the overrun read back in order,
 * once, nothing after them. */
static void test_cores_cq_overrun(void)
{
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct fqp qa[4], qb[4], *q;
	struct snic_ctx_slot *slot;
	struct snic_cqe c;
	uint32_t ev0;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(p.cqa.cnt, 4);
	q = &qa[pair_on_core1(s, &p, &conn, &s->a, qa, qb)];
	fsim_idle(s, 4);
	slot = fdev_slot(&s->a, p.ca.slot);
	ev0 = slot->eq_pi;
	for (uint32_t i = 0; i < 6; i++) {
		struct snic_wqe_sge sg = { p.bufa, 16, p.mra };
		struct fwr w = { .wr_id = 0x800 + i, .opcode = SNIC_WR_RDMA_WRITE,
				 .flags = SNIC_SEND_SIGNALED, .sge = &sg,
				 .num_sge = 1, .remote_addr = p.bufb,
				 .rkey = p.mrb };

		fqp_post_send(q, &w);
		fsim_idle(s, 50);
	}
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "cq_overruns"), 1);
	CU_ASSERT_EQUAL(fqp_state(q), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL_FATAL(slot->eq_pi, ev0 + 2);
	CU_ASSERT_EQUAL(slot->eq[ev0].type, SNIC_EV_CQ_ERR);
	CU_ASSERT_EQUAL(slot->eq[ev0].obj, p.cqa.cqn);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].obj, q->qpn);
	for (uint32_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&p.cqa, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 0x800 + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(fcq_poll(&p.cqa, &c), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* The responder's side of the same: B's QP on core 1 takes SENDs (or
 * WRITEs with immediate, into its buffer, each consuming a RECV) into a
 * 4-entry receive CQ nobody consumes.  Its 5th RECV completion finds the
 * CQ full while core 1 still holds the request, so core 1 NAKs it (remote
 * operational error) as one core does (test_rc cq_overrun_recv): the
 * requester sees IBV_WC_REM_OP_ERR, never a success for a message whose
 * completion B lost.  CQ_ERR then QP_FATAL on B, in that order; the 4
 * CQEs before read back, once, each with its data in place. */
static void cq_overrun_recv_core1(uint8_t opcode)
{
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct fqp qa[4], qb[4];
	struct snic_ctx_slot *slot;
	struct snic_cqe c;
	uint32_t ev0, i, k;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(p.cqb.cnt, 4);
	k = pair_on_core1(s, &p, &conn, &s->b, qa, qb);
	fsim_idle(s, 4);
	slot = fdev_slot(&s->b, p.cb.slot);
	ev0 = slot->eq_pi;
	for (i = 0; i < 6; i++) {
		struct snic_wqe_sge r = { p.bufb + 64 * i, 64, p.mrb };

		fqp_post_recv(&qb[k], 0x300 + i, &r, 1);
	}
	memset(fdev_ptr(&s->b, p.bufb), 0, 6 * 64);
	for (i = 0; i < 5; i++) {
		struct snic_wqe_sge sg = { p.bufa + 64 * i, 64, p.mra };
		struct fwr w = { .wr_id = 0x400 + i, .opcode = opcode,
				 .sge = &sg, .num_sge = 1,
				 .imm = 0x11223300u + i,
				 .remote_addr = p.bufb + 64 * i, .rkey = p.mrb };

		memset(fdev_ptr(&s->a, p.bufa + 64 * i), 0x10 + i, 64);
		fqp_post_send(&qa[k], &w);
		fsim_idle(s, 50);
	}
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cq_overruns"), 1);
	CU_ASSERT_EQUAL(fqp_state(&qb[k]), SNIC_QPS_ERR);
	CU_ASSERT_EQUAL_FATAL(slot->eq_pi, ev0 + 2);
	CU_ASSERT_EQUAL(slot->eq[ev0].type, SNIC_EV_CQ_ERR);
	CU_ASSERT_EQUAL(slot->eq[ev0].obj, p.cqb.cqn);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[ev0 + 1].obj, qb[k].qpn);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "nak_rem_op_sent"), 1);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "nak_rem_op_recv"), 1);
	CU_ASSERT_EQUAL_FATAL(fcq_poll(&p.cqa, &c), 1); /* unsignaled */
	CU_ASSERT_EQUAL(c.wr_id, 0x404);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_OP_ERR);
	CU_ASSERT_EQUAL(fcq_poll(&p.cqa, &c), 0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&p.cqb, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 0x300 + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.byte_len, 64);
		if (opcode == SNIC_WR_RDMA_WRITE_WITH_IMM) {
			CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV_RDMA_WITH_IMM);
			CU_ASSERT_EQUAL(c.imm_data, 0x11223300u + i);
		} else {
			CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV);
		}
		CU_ASSERT_EQUAL(*(uint8_t *)fdev_ptr(&s->b, p.bufb + 64 * i),
				0x10 + i);
	}
	CU_ASSERT_EQUAL(fcq_poll(&p.cqb, &c), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

static void test_cores_cq_overrun_recv(void)
{
	cq_overrun_recv_core1(SNIC_WR_SEND);
}

static void test_cores_cq_overrun_write_imm(void)
{
	cq_overrun_recv_core1(SNIC_WR_RDMA_WRITE_WITH_IMM);
}

/* A resized CQ keeps its claims right (cq_resize: every claim is a
 * moved CQE): B's QP on core 1 fills 3 of a 4-entry receive CQ, the host
 * polls one and resizes it to 8 (2 moved); 6 more SENDs then fit exactly
 * (2 + 6 = 8, none NAKed: a claim count left at the old ring's would
 * overrun at the 6th) and the 7th overruns. */
static void test_cores_cq_resize_claims(void)
{
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct fqp qa[4], qb[4];
	struct snic_cqe c;
	uint32_t i, k, moved = 0;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	k = pair_on_core1(s, &p, &conn, &s->b, qa, qb);
	for (i = 0; i < 10; i++) {
		struct snic_wqe_sge r = { p.bufb + 64 * i, 64, p.mrb };

		fqp_post_recv(&qb[k], 0x300 + i, &r, 1);
	}
	for (i = 0; i < 10; i++) {
		struct snic_wqe_sge sg = { p.bufa + 64 * i, 64, p.mra };
		struct fwr w = { .wr_id = 0x400 + i, .opcode = SNIC_WR_SEND,
				 .sge = &sg, .num_sge = 1 };

		if (i == 3) {
			CU_ASSERT_EQUAL_FATAL(fcq_poll(&p.cqb, &c), 1);
			CU_ASSERT_EQUAL(c.wr_id, 0x300);
			CU_ASSERT_EQUAL_FATAL(fcq_resize(&p.cqb, 8, &moved),
					      SNIC_ST_OK);
			CU_ASSERT_EQUAL(moved, 2);
		}
		fqp_post_send(&qa[k], &w);
		fsim_idle(s, 50);
		CU_ASSERT_EQUAL(fdev_counter(&s->b, "cq_overruns"), i == 9);
		CU_ASSERT_EQUAL(fqp_state(&qb[k]),
				i == 9 ? SNIC_QPS_ERR : SNIC_QPS_RTS);
	}
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "nak_rem_op_sent"), 1);
	CU_ASSERT_EQUAL_FATAL(fcq_poll(&p.cqa, &c), 1);
	CU_ASSERT_EQUAL(c.wr_id, 0x409);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_REM_OP_ERR);
	for (i = 1; i < 9; i++) {
		CU_ASSERT_EQUAL_FATAL(fcq_poll(&p.cqb, &c), 1);
		CU_ASSERT_EQUAL(c.wr_id, 0x300 + i);
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(fcq_poll(&p.cqb, &c), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* A board lets an idle core k sleep (fw.h, snic-emu's core threads): its
 * input from core 0 shows in snic_nic_core_input from any view, core 1's
 * frames for the port go out on its own TX queue (own_txq) or else show
 * as core 0's input, and core 1 says how long it
 * may sleep - not at all while a QP has frames left for its next pass,
 * for ever with nothing pending, else until the wheel's slot of the QP's
 * earliest deadline, at which time the tail-loss probe goes out (not a
 * slot earlier); core 0 never sleeps on its own say.  Core 0 scheduling
 * core 1's QP (a command, while core 1 is parked) flags core 1's input. */
static void sleep_until_case(bool own_txq)
{
	struct snic_fault_cfg drop = { .loss = 1000000, .seed = 5 };
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct fqp qa[4], qb[4];
	struct snic_nic *nic0, *k1;
	struct snic_qp *qp;
	struct snic_cqe c;
	uint64_t due, until, q1;
	uint32_t i;

	fconn_default(&conn);
	fake_hal_tx_queues = own_txq ? FH_MAX_TXQ : 1;
	s = fsim_pair_new(&p, 2, &conn, 1u << 20, 64);
	fake_hal_tx_queues = FH_MAX_TXQ;
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	i = pair_on_core1(s, &p, &conn, &s->a, qa, qb);
	nic0 = s->a.nic;
	k1 = snic_nic_core(nic0, 1);
	fdev_poll(&s->a, 4);
	CU_ASSERT_EQUAL(snic_nic_core_sleep_until(k1), UINT64_MAX);
	CU_ASSERT_EQUAL(snic_nic_core_sleep_until(nic0), 0);
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 0));
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 2)); /* no such core */

	fake_hal_set_fault(&s->b.hal, &drop); /* no ACK will come */
	/* more frames than a pass's TX budget (MTU 4096) */
	struct snic_wqe_sge sg = { p.bufa, (SNIC_TX_BUDGET + 8) * 4096, p.mra };
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &sg, .num_sge = 1,
			 .remote_addr = p.bufb, .rkey = p.mrb };

	fqp_post_send(&qa[i], &w);
	snic_nic_poll(nic0); /* the doorbell: to core 1 */
	CU_ASSERT_TRUE(snic_nic_core_input(nic0, 1));
	CU_ASSERT_TRUE(snic_nic_core_input(k1, 1)); /* any view */
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 0));
	q1 = s->a.hal.tx_frames_q[1];
	/* a budget's frames: out on queue 1, or to core 0 */
	CU_ASSERT_TRUE(snic_nic_poll(k1) > 0);
	CU_ASSERT_EQUAL(snic_nic_core_sleep_until(k1), 0); /* the rest */
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));
	CU_ASSERT_EQUAL(snic_nic_core_input(nic0, 0), !own_txq);
	q1 = s->a.hal.tx_frames_q[1] - q1;
	CU_ASSERT_TRUE(own_txq ? q1 > 0 && q1 <= SNIC_TX_BUDGET : q1 == 0);
	for (unsigned n = 0; n < 100; n++) /* all sent, lost on B's side */
		if (snic_nic_poll(k1) + snic_nic_poll(nic0) == 0)
			break;
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 0));
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));

	CU_ASSERT_EQUAL(snic_nic_poll(k1), 0);
	qp = qp_by_qpn(nic0, qa[i].qpn);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp);
	due = qp->tlp_at && qp->tlp_at < qp->rto_at ? qp->tlp_at : qp->rto_at;
	CU_ASSERT_FATAL(due > k1->core.now);
	until = snic_nic_core_sleep_until(k1);
	CU_ASSERT_EQUAL(until, ((due >> SNIC_TW_SHIFT) + 1) << SNIC_TW_SHIFT);

	/* just before: nothing to do; at `until`: the probe */
	uint64_t tx = fdev_counter(&s->a, "retransmits") +
		      fdev_counter(&s->a, "tail_probes");

	s->clock = until - 1; /* (the wheel files the QP again on its way) */
	snic_nic_poll(k1);
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 0));
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "retransmits") +
			fdev_counter(&s->a, "tail_probes"), tx);
	CU_ASSERT_EQUAL(snic_nic_core_sleep_until(k1), until);
	s->clock = until;
	q1 = s->a.hal.tx_frames_q[1];
	CU_ASSERT_TRUE(snic_nic_poll(k1) > 0);
	CU_ASSERT_EQUAL(snic_nic_core_input(nic0, 0), !own_txq);
	CU_ASSERT_EQUAL(s->a.hal.tx_frames_q[1] > q1, own_txq);
	CU_ASSERT_TRUE(fdev_counter(&s->a, "retransmits") +
		       fdev_counter(&s->a, "tail_probes") > tx);
	fake_hal_set_fault(&s->b.hal, NULL);
	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(s, &p.cqa, &c, 200000));
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);

	/* what a command on core 0 does when it gives core 1's QP work (to
	 * RTS with WQEs posted, a flush longer than a budget): the QP on
	 * core 1's list, core 1 poked until it asks whether to sleep (then
	 * its list says it may not); the link quiet first (B's last ACK) */
	fsim_idle(s, 100);
	CU_ASSERT_EQUAL(snic_nic_poll(k1), 0);
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));
	qp_req_schedule(nic0, qp);
	CU_ASSERT_TRUE(snic_nic_core_input(nic0, 1));
	snic_nic_poll(nic0);
	CU_ASSERT_TRUE(snic_nic_core_input(nic0, 1));
	CU_ASSERT_EQUAL(snic_nic_core_sleep_until(k1), 0);
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));
	snic_nic_poll(k1);
	CU_ASSERT_EQUAL(snic_nic_core_sleep_until(k1), UINT64_MAX);
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));
	CU_ASSERT_EQUAL(s->a.hal.bad_txq + s->b.hal.bad_txq, 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

static void test_cores_sleep_until(void)
{
	sleep_until_case(true);
}

/* The same with one TX queue per port: core 1's frames through core 0. */
static void test_cores_sleep_until_relay(void)
{
	sleep_until_case(false);
}

/* Doorbells with several cores (hostif.h "Doorbells"): the host rings
 * core 1's QP in core 1's group words of its context page, and core 1
 * takes it itself - its input shows it before core 0 has run, core 0's
 * pass leaves its bit in the QP word the two QPs share (taking only its
 * own QP's), and core 1's pass alone sends the request.  A doorbell in
 * the NIC page's bitmap (hosts that predate context pages) still reaches
 * core 1, handed over by core 0 (xcore_doorbells). */
static void test_cores_doorbell_own_core(void)
{
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct fqp qa[4], qb[4];
	struct snic_nic *nic0, *k1;
	struct snic_ctx_doorbells *cdb;
	struct snic_cqe c;
	uint32_t i, j, ii, ij;
	uint64_t q1, d0, h0;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	i = pair_on_core1(s, &p, &conn, &s->a, qa, qb);
	nic0 = s->a.nic;
	k1 = snic_nic_core(nic0, 1);
	j = i ? i - 1 : 1; /* QPNs alternate cores: a QP of core 0 */
	if (i == 0) {
		struct fqp_caps caps = { .sq_cnt = 16, .rq_cnt = 16,
					 .max_send_sge = 1, .max_recv_sge = 1 };

		CU_ASSERT_EQUAL_FATAL(fqp_create(&qa[1], &p.ca, p.pda, &p.cqa,
						 &p.cqa, &caps), 0);
		CU_ASSERT_EQUAL_FATAL(fqp_create(&qb[1], &p.cb, p.pdb, &p.cqb,
						 &p.cqb, &caps), 0);
		CU_ASSERT_EQUAL_FATAL(fqp_connect(&qa[1], &qb[1], &conn), 0);
	}
	ii = SNIC_QPN_IDX(qa[i].qpn);
	ij = SNIC_QPN_IDX(qa[j].qpn);
	CU_ASSERT_EQUAL_FATAL(nic0->qps[ij].core, 0);
	CU_ASSERT_EQUAL_FATAL(ii / 64, ij / 64); /* one QP word */
	CU_ASSERT_EQUAL(atomic_load(&fdev_slot(&s->a, p.ca.slot)->db_cores), 2);
	cdb = (struct snic_ctx_doorbells *)(void *)(
		(uint8_t *)fdev_slot(&s->a, p.ca.slot) + SNIC_CTX_DB_OFF);
	fsim_idle(s, 100);

	struct snic_wqe_sge sg = { p.bufa, 64, p.mra };
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &sg, .num_sge = 1,
			 .remote_addr = p.bufb, .rkey = p.mrb };

	q1 = s->a.hal.tx_frames_q[1];
	d0 = fdev_counter(&s->a, "doorbells");
	h0 = fdev_counter(&s->a, "xcore_doorbells");
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));
	fqp_post_send(&qa[i], &w);
	w.wr_id = 2;
	fqp_post_send(&qa[j], &w);
	CU_ASSERT_TRUE(snic_nic_core_input(nic0, 1)); /* before core 0 ran */
	snic_nic_poll(nic0);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "doorbells"), d0 + 1);
	CU_ASSERT_TRUE(atomic_load(&cdb->qp_bits[ii / 64]) & (1ull << (ii % 64)));
	CU_ASSERT_FALSE(atomic_load(&cdb->qp_bits[ij / 64]) & (1ull << (ij % 64)));
	CU_ASSERT_EQUAL(s->a.hal.tx_frames_q[1], q1);
	snic_nic_poll(k1);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "doorbells"), d0 + 2);
	CU_ASSERT_FALSE(atomic_load(&cdb->qp_bits[ii / 64]) & (1ull << (ii % 64)));
	CU_ASSERT_EQUAL(s->a.hal.tx_frames_q[1], q1 + 1);
	CU_ASSERT_FALSE(snic_nic_core_input(nic0, 1));
	for (unsigned n = 0; n < 2; n++) {
		CU_ASSERT_TRUE_FATAL(fsim_poll_cq(s, &p.cqa, &c, 100000));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_doorbells"), h0);

	/* the NIC page: core 0 hands it over */
	w.wr_id = 3;
	fqp_write_send(&qa[i], &w);
	snic_db_ring_qp((struct snic_doorbells *)(void *)(s->a.bar +
							  SNIC_BAR_DB_OFF), ii);
	CU_ASSERT_TRUE_FATAL(fsim_poll_cq(s, &p.cqa, &c, 100000));
	CU_ASSERT_EQUAL(c.wr_id, 3);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_doorbells"), h0 + 1);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "doorbells_foreign"), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* A context's db_cores is the firmware's to say (the host driver rings
 * by it): a value rewritten in the BAR is put back at the next heartbeat
 * (nic/guard.c) and counted in bar_restored. */
static void test_cores_db_cores_guarded(void)
{
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	_Atomic uint32_t *dbc;
	uint64_t r0;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	dbc = &fdev_slot(&s->a, p.ca.slot)->db_cores;
	CU_ASSERT_EQUAL(atomic_load(dbc), 2);
	r0 = fdev_counter(&s->a, "bar_restored");
	atomic_store(dbc, 7);
	s->clock += 2ull * SNIC_HEARTBEAT_NS;
	fsim_idle(s, 4);
	CU_ASSERT_EQUAL(atomic_load(dbc), 2);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "bar_restored"), r0 + 1);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* A CQE core 1 cannot write (its CQ's ring unwritable) is never
 * published: core 1 tells core 0, which fails the CQ once - CQ_ERR, not
 * counted as an overrun - and the QP goes to error on core 1 after it
 * (QP_FATAL), as on one core (rc/cqe_write_fails). */
static void test_cores_cqe_write_fails(void)
{
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct fqp qa[4], qb[4];
	struct snic_cqe c;
	struct snic_ctx_slot *slot;
	struct snic_cq *cq;
	uint32_t i;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	i = pair_on_core1(s, &p, &conn, &s->a, qa, qb);
	slot = fdev_slot(&s->a, p.ca.slot);
	cq = &s->a.nic->cqs[handle_idx(p.cqa.cqn)];
	s->a.hal.fail_wr_lo = p.cqa.ring_pa;
	s->a.hal.fail_wr_hi = p.cqa.ring_pa + 64ull * p.cqa.cnt;

	struct snic_wqe_sge sg = { p.bufa, 16, p.mra };
	struct fwr w = { .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			 .flags = SNIC_SEND_SIGNALED, .sge = &sg, .num_sge = 1,
			 .remote_addr = p.bufb, .rkey = p.mrb };

	fqp_post_send(&qa[i], &w);
	for (unsigned n = 0; n < 100000 && slot->eq_pi < 2; n++)
		fsim_step(s);
	fsim_idle(s, 100);
	CU_ASSERT_FALSE(fcq_poll(&p.cqa, &c));
	CU_ASSERT_TRUE(cq_failed(cq));
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "cq_overruns"), 0);
	CU_ASSERT_EQUAL_FATAL(slot->eq_pi, 2);
	CU_ASSERT_EQUAL(slot->eq[0].type, SNIC_EV_CQ_ERR);
	CU_ASSERT_EQUAL(slot->eq[0].obj, p.cqa.cqn);
	CU_ASSERT_EQUAL(slot->eq[1].type, SNIC_EV_QP_FATAL);
	CU_ASSERT_EQUAL(slot->eq[1].obj, qa[i].qpn);
	CU_ASSERT_EQUAL(fqp_state(&qa[i]), SNIC_QPS_ERR);
	s->a.hal.fail_wr_lo = s->a.hal.fail_wr_hi = 0;
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* Parking the other cores is for a real command only: a bare command
 * doorbell (any context can ring it) and a context bit without a new
 * command park nobody; a deregistration waiting for a message that holds
 * its MR is asked again every SNIC_CMD_RETRY_NS, not every pass. */
static void test_cores_park_only_for_commands(void)
{
	const unsigned passes = 1000; /* 1 ms of the sim's clock */
	struct fsim *s;
	struct fpair p;
	struct fconn conn;
	struct fqp q;
	struct fqp_caps caps = { .sq_cnt = 4, .rq_cnt = 4, .max_send_sge = 1,
				 .max_recv_sge = 1 };
	struct snic_doorbells *db;
	struct snic_cmd_handle dh = { 0 };
	struct snic_qp *nq;
	uint64_t parks, waits;
	uint32_t pd;

	fconn_default(&conn);
	s = fsim_pair_new(&p, 2, &conn, 65536, 64);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	db = (struct snic_doorbells *)(s->a.bar + SNIC_BAR_DB_OFF);
	parks = fdev_counter(&s->a, "xcore_parks");
	for (unsigned i = 0; i < passes; i++) {
		atomic_fetch_or(&db->cmd_bits, 1ull << p.ca.slot);
		atomic_fetch_or(&db->summary, SNIC_DB_SUMMARY_CMD);
		fsim_step(s);
	}
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_parks"), parks);
	CU_ASSERT_EQUAL_FATAL(fctx_alloc_pd(&p.ca, &pd), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "xcore_parks"), parks + 1);

	/* a QP (never started) holds p.mra in a message in progress */
	CU_ASSERT_EQUAL_FATAL(fqp_create(&q, &p.ca, p.pda, &p.cqa, &p.cqa,
					 &caps), 0);
	nq = qp_by_qpn(s->a.nic, q.qpn);
	CU_ASSERT_PTR_NOT_NULL_FATAL(nq);
	nq->cur.sgl.num = 1;
	nq->cur.sgl.sge[0].lkey = p.mra;
	nq->cur.valid = true;
	dh.handle = p.mra;
	parks = fdev_counter(&s->a, "xcore_parks");
	fctx_cmd_post(&p.ca, SNIC_CMD_DEREG_MR, &dh, sizeof(dh));
	fsim_idle(s, passes);
	CU_ASSERT_EQUAL(fctx_cmd_status(&p.ca, NULL, 0), FST_TIMEOUT);
	waits = fdev_counter(&s->a, "mr_dereg_waits");
	parks = fdev_counter(&s->a, "xcore_parks") - parks;
	printf("\n    dereg waiting %u passes: asked %" PRIu64 " times, "
	       "%" PRIu64 " parks\n    ", passes, waits, parks);
	CU_ASSERT_TRUE(waits >= 2);
	CU_ASSERT_TRUE(waits <= passes * FSIM_STEP_NS / SNIC_CMD_RETRY_NS + 2);
	CU_ASSERT_TRUE(parks <= passes * FSIM_STEP_NS / SNIC_CMD_RETRY_NS + 2);
	nq->cur.valid = false; /* the message ends: the command completes */
	fsim_idle(s, 2 + SNIC_CMD_RETRY_NS / FSIM_STEP_NS);
	CU_ASSERT_EQUAL(fctx_cmd_status(&p.ca, NULL, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fqp_destroy(&q), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

UNIT_SUITE(cores, NULL, NULL,
	   UNIT_TEST(test_cores_spread),
	   UNIT_TEST(test_cores_spread_relay),
	   UNIT_TEST(test_cores_spread_sw_steer),
	   UNIT_TEST(test_cores_rx_unsteered),
	   UNIT_TEST(test_cores_rx_misrouted),
	   UNIT_TEST(test_cores_ring_full),
	   UNIT_TEST(test_cores_cq_overrun),
	   UNIT_TEST(test_cores_cq_overrun_recv),
	   UNIT_TEST(test_cores_cq_overrun_write_imm),
	   UNIT_TEST(test_cores_cq_resize_claims),
	   UNIT_TEST(test_cores_park_only_for_commands),
	   UNIT_TEST(test_cores_sleep_until),
	   UNIT_TEST(test_cores_sleep_until_relay),
	   UNIT_TEST(test_cores_doorbell_own_core),
	   UNIT_TEST(test_cores_db_cores_guarded),
	   UNIT_TEST(test_cores_cqe_write_fails),
	   UNIT_TEST(test_cores_srq_placement),
	   UNIT_TEST(test_cores_loss));
