/* SPDX-License-Identifier: MIT */
/*
 * RC requester (IBTA 9.7.4-9.7.5.1): takes send WQEs from the host's SQ,
 * validates them (opcode, SGEs against lkeys, lengths), segments messages
 * at the path MTU into FIRST/MIDDLE/LAST/ONLY packets with consecutive
 * PSNs, and records each message in the in-flight window for the
 * completer.  WQE errors complete in order: a bad WQE waits until every
 * earlier WQE has completed, then completes with its error and moves the
 * QP to the error state (IBTA 10.8.3.1, C10-39 flushes the rest).
 */
#include <string.h>

#include "transport/transport.h"

/* FETCH_SENT: req_one sent the message whole (or failed its payload as
 * send_packet does); FETCH_NOBUF: fetched, no frame buffer free;
 * FETCH_GENERAL: req_one declined, nothing changed. */
enum fetch_result { FETCH_OK, FETCH_BLOCKED, FETCH_ERROR, FETCH_LOCAL,
		    FETCH_SENT, FETCH_NOBUF, FETCH_GENERAL };

static uint32_t msg_pkts(const struct snic_qp *qp, uint8_t op, uint32_t len)
{
	if (op == SNIC_WR_ATOMIC_CMP_AND_SWP || op == SNIC_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	return len ? qp_mtu_pkts(qp, len) : 1;
}

/* A WQE that cannot execute: complete it with `status` once nothing older
 * is outstanding, then the QP goes to the error state. */
static enum fetch_result wqe_fail(struct snic_nic *nic, struct snic_qp *qp,
				  uint8_t status)
{
	if (qp->infl_head != qp->infl_tail)
		return FETCH_BLOCKED; /* the completer reschedules us */
	qp->cur.len = 0;
	sq_complete(nic, qp, status);
	return FETCH_ERROR;
}

/* Load the data part of the WQE: inline bytes or validated SGEs. */
static uint8_t load_data(struct snic_nic *nic, struct snic_qp *qp)
{
	uint8_t op = qp->cur.hdr.ctrl.opcode;
	uint32_t access = wr_is_rd_atomic(op) ? SNIC_ACCESS_LOCAL_WRITE : 0;
	uint8_t st = sq_load(nic, qp, access);

	/* an atomic's result is one 8-byte word (IBTA 9.4.5) */
	if (st == SNIC_WC_SUCCESS && access && op != SNIC_WR_RDMA_READ &&
	    qp->cur.len != 8)
		return SNIC_WC_LOC_LEN_ERR;
	return st;
}

/* The message enters the in-flight window with its first packet, so ACKs
 * for the PSNs of a long message find it (and a retransmission timer can
 * cover it) while the rest is still being sent.  Its PSNs and length are
 * given (req_one has them at hand, not in cur); sge: its one SGE, checked
 * in MR epoch `epoch` (req_one), or NULL: its data is cur's (retain_msg);
 * rd: a READ or atomic (wr_is_rd_atomic: req_one knows it already). */
static inline __attribute__((always_inline))
void msg_start(struct snic_qp *qp, uint32_t first_psn, uint32_t npkts,
	       uint32_t len, const struct snic_wqe_sge *sge, uint64_t epoch,
	       bool rd)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_wqe_ctrl *c = &cur->hdr.ctrl;
	/* read once, ahead of the record's byte stores (after which the
	 * compiler would read them again: a byte store may alias them) */
	uint32_t wqe_idx = cur->wqe_idx, tail;
	struct snic_inflight *f;

	infl_rewind(qp);
	tail = qp->infl_tail++;
	f = &qp->infl[tail % SNIC_INFLIGHT];
	f->wr_id = c->wr_id;
	f->wqe_idx = wqe_idx;
	f->first_psn = first_psn;
	f->xrc_srqn = c->xrc_srqn;
	f->opcode = c->opcode;
	f->signaled = (c->flags & SNIC_SEND_SIGNALED) || qp->sq_sig_all;
	f->done = 0;
	if (sge)
		retain_one_sge(qp, f, cur, sge, epoch);
	else
		retain_msg(qp, f, cur);
	/* here, not with first_psn: four neighbouring stores became one
	 * vector store, four instructions more to pack it (bench-instr) */
	f->last_psn = (first_psn + npkts - 1) & ROCE_PSN_MASK;
	f->len = len;
	if (rd)
		qp->rd_out++;
	qp->resend = tail + 1;
	/* the WQE is ours now: a retransmission never reads it again */
	qp->sq_fetch = wqe_idx + 1;
}

/* A new message's PSNs [first_psn, first_psn + npkts) are on the wire:
 * fresh PSNs go on after them (a READ request owns the PSNs of all its
 * responses, 9.7.4.1.4).  msg_sent's and req_one's one step. */
static inline void psn_step(struct snic_qp *qp, uint32_t first_psn,
			    uint32_t npkts)
{
	qp->npsn = (first_psn + npkts) & ROCE_PSN_MASK;
}

/* Its last packet is on the wire. */
static void msg_sent(struct snic_qp *qp)
{
	struct snic_req_cur *cur = &qp->cur;

	psn_step(qp, cur->first_psn, cur->npkts);
	cur->valid = false;
}

static enum fetch_result req_one(struct snic_nic *nic, struct snic_qp *qp);

static enum fetch_result req_fetch(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_wqe_ctrl *c = &cur->hdr.ctrl;
	uint32_t rd_max = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
	uint32_t need;
	uint8_t st;

	st = sq_read_wqe(nic, qp, &need);
	if (st)
		return wqe_fail(nic, qp, st);
	if (sq_is_local(c->opcode)) {
		/* after every older message (sq_local.c) */
		if (qp->infl_head != qp->infl_tail)
			return FETCH_BLOCKED;
		st = sq_local_exec(nic, qp);
		sq_complete(nic, qp, st);
		return st ? FETCH_ERROR : FETCH_LOCAL;
	}
	/* IBV_SEND_FENCE: wait for earlier READs/atomics (IBTA 10.8.3.3) */
	if ((c->flags & SNIC_SEND_FENCE) && qp->rd_out)
		return FETCH_BLOCKED;
	if (wr_is_rd_atomic(c->opcode) && qp->rd_out >= rd_max)
		return FETCH_BLOCKED;
	if (!retain_room(qp, c, need))
		return FETCH_BLOCKED; /* completions free the ring */
	if (rc_req_one_ok(qp)) {
		enum fetch_result fr = req_one(nic, qp);

		if (fr != FETCH_GENERAL)
			return fr;
	}
	st = load_data(nic, qp);
	if (st)
		return wqe_fail(nic, qp, st);
	/* One READ request owns the PSNs of all its responses at once; past
	 * 2^22 of them (a READ over 1 GiB at path MTU 256) 24-bit PSN
	 * distances would turn ambiguous (9.7.1): refuse it. */
	if (c->opcode == SNIC_WR_RDMA_READ &&
	    msg_pkts(qp, c->opcode, cur->len) > SNIC_READ_MAX_PSNS)
		return wqe_fail(nic, qp, SNIC_WC_LOC_LEN_ERR);
	cur->sent = 0;
	cur->first_psn = qp->npsn;
	cur->npkts = msg_pkts(qp, c->opcode, cur->len);
	cur->resend = false;
	cur->valid = true;
	msg_start(qp, cur->first_psn, cur->npkts, cur->len, NULL, 0,
		  wr_is_rd_atomic(c->opcode));
	QCNT_INC(nic, qp, send_wqes);
	return FETCH_OK;
}

static void infl_truncate(struct snic_qp *qp, uint32_t i);

/* The current message cannot go on: its payload could not be read (its
 * MR went away, or the DMA failed).  It leaves the in-flight window with
 * every message after it (a message sent again has some) and completes
 * with `status` once every older message has, as a WQE that fails its
 * checks does (wqe_fail); what the peer holds of it is never completed
 * there, the later ones are flushed with the QP. */
static void msg_fail(struct snic_qp *qp, uint8_t status)
{
	infl_truncate(qp, qp->resend - 1);
	qp->sq_fetch = qp->cur.wqe_idx; /* a rewind meanwhile meets it again */
	qp->cur.fail = status;
}

/* The frame of the current message's packet op at psn with n payload
 * bytes (0: the payload could not be read).  A small IPv4 SEND, WRITE or
 * READ request has its headers written straight from the WQE
 * (pkt_build_qp_req: issue 11, 27 instructions less on a 64-B WRITE);
 * XRC, atomics, IPv6 and payloads folded into the ICRC go through
 * struct roce_hdrs. */
static uint32_t req_frame(struct snic_nic *nic, struct snic_qp *qp,
			  uint8_t *frame, uint8_t op, uint32_t fl, uint32_t psn,
			  bool ackreq, uint32_t n)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_send_wqe *w = &cur->hdr;
	struct roce_hdrs h;

	if (!qp->ip6 && n < PKT_FOLD_MIN &&
	    !(fl & (ROCE_F_XRCETH | ROCE_F_ATOMIC))) {
		const struct roce_req r = {
			.opcode = op, .ackreq = ackreq, .psn = psn,
			.se = (fl & ROCE_F_LAST) &&
			      (w->ctrl.flags & SNIC_SEND_SOLICITED),
			.dqpn = qp->attr.dest_qp_num,
			.va = w->raddr.remote_addr, .rkey = w->raddr.rkey,
			.dlen = cur->len, .imm = w->ctrl.imm_data,
		};

		if (n && sq_gather(nic, cur, frame + roce_hdr_len(op), n))
			return 0;
		return pkt_build_qp_req(nic, qp, frame, &r, n);
	}
	pkt_qp_hdrs(qp, &h, op, psn);
	sq_fill_ext(cur, &h);
	h.ackreq = ackreq;
	/* headers first, then the payload with its ICRC (pkt_gather.c) */
	n = pkt_build_sq(nic, qp, cur, frame, &h, n);
	if (!n)
		qp->qcnt[SNIC_QCNT_tx_frames]--; /* pkt_qp_hdrs counted it */
	return n;
}

/* Build and queue the next packet of the current message.  Returns false
 * when no buffer was available (try again next pass). */
static bool send_packet(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_req_cur *cur = &qp->cur;
	uint8_t op = sq_opcode(qp, cur);
	uint32_t fl = roce_opcodes[op].flags;
	uint32_t n = 0, pkt_no = qp_mtu_div(qp, cur->sent), hi;
	uint32_t psn = (cur->first_psn + pkt_no) & ROCE_PSN_MASK;
	bool ackreq;
	struct snic_pkt *p;

	if (fl & ROCE_F_PAYLOAD) {
		n = cur->len - cur->sent;
		if (n > qp->mtu)
			n = qp->mtu;
	}
	p = pkt_alloc_qp(nic, qp, op, n);
	if (!p)
		return false;
	/* AckReq on the last packet and periodically in long messages, so the
	 * window keeps moving (IBTA 9.7.5.1.1); a packet sent again asks for
	 * an ACK: whatever of the pass gets through moves the window (the
	 * rest of it may be lost again) */
	ackreq = (fl & (ROCE_F_LAST | ROCE_F_READ | ROCE_F_ATOMIC)) ||
		 (pkt_no % SNIC_ACKREQ_EVERY) == SNIC_ACKREQ_EVERY - 1 ||
		 cur->resend;
	p->len = (uint16_t)req_frame(nic, qp, p->data, op, fl, psn, ackreq, n);
	if (!p->len) {
		core_pkt_unused(&nic->core, p); /* no frame without its data */
		msg_fail(qp, SNIC_WC_LOC_PROT_ERR);
		return true;
	}
	core_tx(&nic->core, p);
	timer_sent(nic, qp);
	/* a READ request owns the PSNs of all its responses (9.7.4.1.4);
	 * a packet sent again may be below what was sent before (or not:
	 * the rest of a message a rewind interrupted) */
	hi = (fl & ROCE_F_READ) ? (cur->first_psn + cur->npkts - 1) & ROCE_PSN_MASK
				: psn;
	if (!cur->resend) {
		qp->psn_hi = hi;
		if (ackreq && !qp->rtt_t0)
			timer_rtt_start(nic, qp, hi);
	} else {
		qp->rs_hi = hi; /* how far a pass has come (comp_undo) */
		if (roce_psn_diff(hi, qp->psn_hi) > 0)
			qp->psn_hi = hi;
	}
	cur->sent += n;
	if ((fl & ROCE_F_LAST) || !(fl & ROCE_F_PAYLOAD))
		msg_sent(qp);
	return true;
}

/* A bounded window of outstanding PSNs (IBTA 9.7.4.1 leaves its size to
 * the requester): go-back-N resends at most this much, and 24-bit PSN
 * distances stay far from ambiguity across the wrap.  After a
 * retransmission it starts at SNIC_CWND_MIN and grows with every PSN
 * acknowledged (cwnd, timers.c), so a burst sent again cannot keep a
 * bounded queue on the path overflowing. */
static bool window_full(const struct snic_qp *qp)
{
	uint32_t next = (qp->cur.first_psn + qp_mtu_div(qp, qp->cur.sent)) &
			ROCE_PSN_MASK;
	uint32_t lim = qp->cwnd ? qp->cwnd : SNIC_PSN_WINDOW;

	return roce_psn_diff(next, req_unacked_psn(qp)) >= (int32_t)lim;
}

/*
 * The usual message in one pass (issue 11): an RC SEND or WRITE of one
 * packet whose one SGE (read with the WQE, sq_read_wqe) lies in one page
 * of its MR, over IPv4, below the ICRC fold's size, or an RC READ into
 * one SGE.  The same steps as req_fetch's general path, send_packet and
 * req_frame, in their order, with the same checks and counters, but the
 * SGE's lkey check (sgl_load's mr_check) gives the MR the payload is read
 * from at once (nothing can change an MR between the two: commands change
 * MRs with every core parked), and no per-packet segmentation.  Before
 * anything changes it can still decline (FETCH_GENERAL): the general path
 * then does the same from the WQE already read.
 */
#define REQ_ONE_OPS (1u << SNIC_WR_SEND | 1u << SNIC_WR_SEND_WITH_IMM |     \
		     1u << SNIC_WR_SEND_WITH_INV | 1u << SNIC_WR_RDMA_WRITE | \
		     1u << SNIC_WR_RDMA_WRITE_WITH_IMM | 1u << SNIC_WR_RDMA_READ)

/* an RC QP's WQE of these has its first SGE in its first line (sge0) */
_Static_assert((REQ_ONE_OPS & ~SNIC_WQE_SHORT_OPS) == 0 &&
	       (SNIC_WQE_SHORT_QPTS >> SNIC_QPT_RC & 1u), "req_one's sge0");

bool rc_req_one_ok(const struct snic_qp *qp)
{
	const struct snic_req_cur *cur = &qp->cur;
	const struct snic_wqe_ctrl *c = &cur->hdr.ctrl;
	uint32_t len = cur->sge0.length;

	if (qp->type != SNIC_QPT_RC || qp->ip6 ||
	    !(REQ_ONE_OPS >> (c->opcode & 31u) & 1u) ||
	    (c->flags & SNIC_SEND_INLINE) || c->num_sge != 1 || !len)
		return false;
	/* a READ request carries no payload; past the largest message
	 * sgl_load fails it (LOC_LEN_ERR): the general path's to say */
	if (c->opcode == SNIC_WR_RDMA_READ)
		return len <= SNIC_MAX_MSG_SIZE;
	return len <= qp->mtu && len < PKT_FOLD_MIN;
}

/* window_full for a new message's first PSN, before it is in the window:
 * an empty window is never full (the message would be its oldest).  In
 * line: a call cost as much as its usual answer. */
static inline __attribute__((always_inline))
bool window_full_new(const struct snic_qp *qp)
{
	uint32_t lim = qp->cwnd ? qp->cwnd : SNIC_PSN_WINDOW;

	if (qp->infl_head == qp->infl_tail ||
	    roce_psn_diff(qp->npsn, qp->infl[qp->infl_head % SNIC_INFLIGHT]
						.first_psn) < (int32_t)lim)
		return false; /* the oldest unacknowledged PSN is not below */
	return roce_psn_diff(qp->npsn, req_unacked_psn(qp)) >= (int32_t)lim;
}

/* The message's state as req_fetch leaves it, its one SGE checked (for
 * access) into the gather list as sgl_load puts it: where req_one does
 * not send it whole (no frame buffer, its payload unreadable), the
 * general path goes on from it.  Not in line: it is the rare way. */
static void __attribute__((noinline))
req_one_start(struct snic_nic *nic, struct snic_qp *qp, uint32_t access,
	      uint32_t npkts)
{
	struct snic_req_cur *cur = &qp->cur;
	struct snic_sgl *sgl = &cur->sgl;

	sgl->pd = qp->pd;
	sgl->access = access;
	sgl->epoch = nic->sh->mr_epoch;
	sgl->num = 1;
	sgl->idx = 0;
	sgl->off = 0;
	sgl->total = cur->sge0.length;
	sgl->sge[0] = cur->sge0;
	cur->len = cur->sge0.length;
	cur->sent = 0;
	cur->first_psn = qp->npsn;
	cur->npkts = npkts;
	cur->resend = false;
	cur->valid = true;
	msg_start(qp, cur->first_psn, npkts, cur->len, sgl->sge, sgl->epoch,
		  wr_is_rd_atomic(cur->hdr.ctrl.opcode));
	QCNT_INC(nic, qp, send_wqes);
}

/* req_one for a READ (rd) or a SEND/WRITE: each its own copy.  The
 * message sent whole leaves no cursor behind (cur stays not valid, as
 * msg_sent leaves it): its in-flight record is written from the WQE and
 * the SGE as checked, and nothing reads a gather list that is not valid
 * (a retransmission rebuilds it from the record, retain_load). */
static inline __attribute__((always_inline))
enum fetch_result req_one_as(struct snic_nic *nic, struct snic_qp *qp, bool rd)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_send_wqe *w = &cur->hdr;
	const struct snic_wqe_sge *s = &cur->sge0;
	uint8_t op = sq_seg_op[w->ctrl.opcode & 31u][3]; /* ONLY */
	uint32_t access = rd ? SNIC_ACCESS_LOCAL_WRITE : 0;
	/* a READ owns the PSNs of all its responses (9.7.4.1.4) */
	uint32_t npkts = rd ? qp_mtu_pkts(qp, s->length) : 1, n = 0, hi;
	uint32_t psn = qp->npsn, len = s->length;
	const struct snic_mr *mr;
	struct snic_pkt *p;
	uint64_t pa = 0;

	/* sgl_load's check: lkey, PD, bounds, local write for a READ's
	 * target; a READ past SNIC_READ_MAX_PSNS fails in req_fetch */
	mr = mr_check(nic, s->lkey, qp->pd, access, s->addr, len);
	if (!mr || (rd ? npkts > SNIC_READ_MAX_PSNS || len > SNIC_MAX_MSG_SIZE
		       : !mr_page_pa(nic, mr, s->addr, len, &pa)) ||
	    window_full_new(qp))
		return FETCH_GENERAL;
	p = core_pkt_alloc(&nic->core);
	if (!p) {
		req_one_start(nic, qp, access, npkts);
		return FETCH_NOBUF; /* send_packet tries again next pass */
	}
	if (!rd) {
		n = len;
		if (core_dma_read(&nic->core, pa, p->data + roce_hdr_len(op),
				  n)) {
			core_pkt_unused(&nic->core, p); /* no frame without it */
			req_one_start(nic, qp, access, npkts);
			msg_fail(qp, SNIC_WC_LOC_PROT_ERR);
			return FETCH_SENT;
		}
	}
	msg_start(qp, psn, npkts, len, s, nic->sh->mr_epoch, rd);
	/* the PSN state now, not after the frame: nothing below reads it or
	 * fails, and its values need not be kept across the ICRC's call */
	hi = (psn + npkts - 1) & ROCE_PSN_MASK;
	qp->psn_hi = hi;
	if (!qp->rtt_t0)
		timer_rtt_start(nic, qp, hi);
	psn_step(qp, psn, npkts); /* cur stays not valid, as msg_sent leaves it */
	QCNT_INC(nic, qp, send_wqes);
	CNT_INC(&nic->core, req_one_sent); /* which way it went (unit req_one) */

	const struct roce_req r = {
		.opcode = op, .ackreq = true, .psn = psn,
		.se = !!(w->ctrl.flags & SNIC_SEND_SOLICITED), /* ONLY: last */
		.dqpn = qp->attr.dest_qp_num,
		.va = w->raddr.remote_addr, .rkey = w->raddr.rkey,
		.dlen = len, .imm = w->ctrl.imm_data,
	};

	p->len = (uint16_t)pkt_build_qp_req(nic, qp, p->data, &r, n);
	core_tx_to(&nic->core, p, qp->tmpl.loop); /* the template's MAC */
	timer_sent(nic, qp);
	return FETCH_SENT;
}

static enum fetch_result req_one(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->cur.hdr.ctrl.opcode == SNIC_WR_RDMA_READ)
		return req_one_as(nic, qp, true);
	return req_one_as(nic, qp, false);
}

/* How many of message f's packets an ACK covered (9.7.5.1.1: an ACK
 * acknowledges every PSN up to its own).  Only a SEND or WRITE behind a
 * READ/atomic still waiting for its response has any: it stays in the
 * window until that response completes it (rc_completer.c, finish_rd). */
static uint32_t acked_pkts(const struct snic_qp *qp,
			   const struct snic_inflight *f, uint32_t npkts)
{
	int32_t n = roce_psn_diff(qp->acked_psn, f->first_psn) + 1;

	if (!qp->acked_valid || wr_is_rd_atomic(f->opcode) || n <= 0 ||
	    roce_psn_diff(qp->acked_psn, qp->psn_hi) > 0)
		return 0;
	return (uint32_t)n < npkts ? (uint32_t)n : npkts;
}

/* Take the next message of a go-back-N pass from the in-flight window,
 * from its first PSN not acknowledged: go back N (9.7.5.1) resends from
 * the first unacknowledged PSN, not what an ACK covered, so the messages
 * wholly ACKed are passed over; when they end the pass, fresh PSNs
 * continue after the newest sent.  Not inlined: retransmissions only,
 * kept out of rc_req_qp's usual path. */
static void __attribute__((noinline)) resend_next(struct snic_qp *qp)
{
	for (;;) {
		const struct snic_inflight *f =
			&qp->infl[qp->resend++ % SNIC_INFLIGHT];
		uint32_t npkts = (uint32_t)roce_psn_diff(f->last_psn,
							 f->first_psn) + 1;
		uint32_t n = acked_pkts(qp, f, npkts);

		if (n < npkts) {
			retain_load(qp, f, n * qp->mtu);
			return;
		}
		if (qp->resend == qp->infl_tail) {
			qp->npsn = (qp->psn_hi + 1) & ROCE_PSN_MASK;
			return;
		}
	}
}

/* Work for one QP; returns true when it should stay scheduled. */
bool rc_req_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	unsigned budget = SNIC_QP_TX_BUDGET;

	if (qp->state != SNIC_QPS_RTS && !(qp->state == SNIC_QPS_SQD &&
		(qp->cur.valid || qp->resend != qp->infl_tail)))
		return false;
	if (qp->wait_until)
		return false; /* RNR back-off: the timer reschedules us */
	if (!qp->dmac_valid) {
		sq_arp_retry(nic, qp, qp->nh);
		return true;
	}
	while (budget && nic->core.tx_budget) {
		if (qp->cur.valid && qp->cur.fail) {
			wqe_fail(nic, qp, qp->cur.fail);
			return false; /* blocked: the completer reschedules */
		}
		if (!qp->cur.valid && qp->resend != qp->infl_tail)
			resend_next(qp);
		if (!qp->cur.valid) {
			if (qp->state != SNIC_QPS_RTS || qp->sq_fetch == qp->sq_pi)
				return false;
			if (qp->infl_tail - qp->infl_head >= SNIC_INFLIGHT)
				return false; /* completer reschedules */
			enum fetch_result fr = req_fetch(nic, qp);

			if (fr == FETCH_LOCAL || fr == FETCH_SENT) {
				budget--;
				continue;
			}
			if (fr == FETCH_NOBUF)
				return true;
			if (fr != FETCH_OK)
				return false;
		}
		if (window_full(qp))
			return false; /* completer reschedules */
		if (!send_packet(nic, qp))
			return true;
		budget--;
	}
	return true;
}

unsigned req_poll(struct snic_nic *nic)
{
	uint32_t n = nic->req_tail - nic->req_head;
	unsigned work = 0;

	while (n-- && nic->core.tx_budget) {
		struct snic_qp *qp = &nic->qps[nic->req_list[nic->req_head++ % SNIC_MAX_QP]];

		if (n) /* the next one's state on its way meanwhile */
			qp_prefetch_req(&nic->qps[nic->req_list[nic->req_head % SNIC_MAX_QP]]);
		qp->on_req_list = false;
		if (!qp->in_use)
			continue;
		if (qp->flush_pending) { /* in error: the flush goes on */
			qp_flush(nic, qp);
			continue;
		}
		uint32_t before = nic->core.tx_budget;

		if (xport_of(qp)->req(nic, qp))
			qp_req_schedule(nic, qp); /* round robin */
		work += before - nic->core.tx_budget;
	}
	return work;
}

/* Is psn inside the READ whose responses are arriving (rd_active)? */
static bool in_active_read(const struct snic_qp *qp,
			   const struct snic_inflight *f)
{
	return qp->rd_active && f->opcode == SNIC_WR_RDMA_READ && !f->done &&
	       roce_psn_diff(qp->rd_psn, f->first_psn) > 0 &&
	       roce_psn_diff(qp->rd_psn, f->last_psn) <= 0;
}

/* Resume a READ whose responses arrived up to rd_psn: ask only for the
 * rest, from the first missing response PSN, with the RETH's address and
 * length moved on by what arrived (IBTA 9.7.5.1 lets a requester re-issue
 * a READ for the remaining part; the responder answers it from memory). */
static void reissue_read_rest(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_req_cur *cur = &qp->cur;
	uint32_t off = (uint32_t)roce_psn_diff(qp->rd_psn, cur->first_psn) * qp->mtu;

	cur->hdr.raddr.remote_addr += off;
	cur->len -= off;
	cur->npkts -= (uint32_t)roce_psn_diff(qp->rd_psn, cur->first_psn);
	cur->first_psn = qp->rd_psn;
	CNT_INC(&nic->core, read_reissues);
}

/* Is the READ/atomic whose responses are arriving older than message i?
 * A rewind to i (a sequence NAK for a later request) leaves it be: its
 * responses are still coming, and asking for it again would have the
 * responder answer it twice. */
static bool active_read_before(const struct snic_qp *qp, uint32_t i)
{
	if (!qp->rd_active)
		return false;
	for (uint32_t j = qp->infl_head; j != i; j++) {
		const struct snic_inflight *f = &qp->infl[j % SNIC_INFLIGHT];

		if (wr_is_rd_atomic(f->opcode) && !f->done)
			return true;
	}
	return false;
}

/* The oldest in-flight message whose PSNs reach psn (infl_tail: none). */
static uint32_t infl_find(const struct snic_qp *qp, uint32_t psn)
{
	uint32_t i;

	for (i = qp->infl_head; i != qp->infl_tail; i++)
		if (roce_psn_diff(qp->infl[i % SNIC_INFLIGHT].last_psn, psn) >= 0)
			break;
	return i;
}

/* The pass goes on from psn in message i: a SEND or WRITE from that
 * packet's payload, a READ or atomic from its start (req_rewind re-asks
 * only the rest of an active READ). */
static void pass_load(struct snic_qp *qp, uint32_t i, uint32_t psn)
{
	const struct snic_inflight *f = &qp->infl[i % SNIC_INFLIGHT];
	int32_t into = roce_psn_diff(psn, f->first_psn);

	qp->resend = i + 1;
	retain_load(qp, f, !wr_is_rd_atomic(f->opcode) && into > 0
			   ? (uint32_t)into * qp->mtu : 0);
	qp->npsn = qp->cur.first_psn;
}

/* Is a go-back-N pass under way that has not reached message i yet?  It
 * will send i again anyway, and so must every message before i that it
 * has not reached: READ responses after a gap were dropped, so those
 * READs have to be asked again even though the responder has them. */
static bool pass_before(const struct snic_qp *qp, uint32_t i)
{
	uint32_t at;

	if (qp->cur.valid && qp->cur.resend)
		at = qp->resend - 1;
	else if (!qp->cur.valid && qp->resend != qp->infl_tail)
		at = qp->resend;
	else
		return false;
	return (int32_t)(i - at) > 0;
}

/* Is a go-back-N pass under way (a message of it being sent again, or
 * the next one to take)? */
static bool pass_on(const struct snic_qp *qp)
{
	return qp->cur.valid ? qp->cur.resend : qp->resend != qp->infl_tail;
}

/* Take back a go-back-N pass (comp_undo): everything up to psn_hi was
 * sent before and is arriving, so sending goes on from psn_hi + 1, the
 * rest of a message the rewind interrupted or the next fresh one.  No
 * READ or atomic is in flight (comp_undo's condition): nothing has to be
 * asked again.  False when no pass is under way. */
bool req_pass_undo(struct snic_nic *nic, struct snic_qp *qp)
{
	uint32_t psn = (qp->psn_hi + 1) & ROCE_PSN_MASK, i;

	if (!pass_on(qp))
		return false;
	i = infl_find(qp, psn);
	if (i == qp->infl_tail) { /* every message went whole */
		qp->cur.valid = false;
		qp->resend = qp->infl_tail;
		qp->npsn = psn;
	} else {
		pass_load(qp, i, psn);
	}
	qp_req_schedule(nic, qp);
	return true;
}

/* Drop messages [i, tail) from the window (a message that cannot be sent
 * again, msg_fail). */
static void infl_truncate(struct snic_qp *qp, uint32_t i)
{
	for (uint32_t j = i; j != qp->infl_tail; j++)
		if (wr_is_rd_atomic(qp->infl[j % SNIC_INFLIGHT].opcode))
			qp->rd_out--;
	qp->infl_tail = qp->resend = i;
	qp->retain_tail = i == qp->infl_head ? qp->retain_head
			  : qp->infl[i % SNIC_INFLIGHT].data_at;
}

/* A loss (sequence NAK, missing READ response, probe or timeout): go
 * back N from psn with the window cut to SNIC_CWND_MIN, so what is sent
 * again cannot keep a bounded queue on the path overflowing; it grows
 * back with every PSN acknowledged (timer_acked).  An RNR NAK is no loss
 * and keeps the window. */
void req_resend_lost(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	qp->cwnd = SNIC_CWND_MIN;
	qp->undo_valid = false; /* a timer's pass notes it after (comp_undo) */
	req_rewind(nic, qp, psn);
}

/* Go back N (IBTA 9.7.5.1): resend from `psn`, the first PSN the peer has
 * not acknowledged, which lies in one of the in-flight messages: inside a
 * SEND or WRITE the gather cursor moves to that packet's payload (the
 * responder expects exactly that PSN, in the middle of the message), a
 * READ whose responses are partly here is re-issued for the rest only.
 * The messages after it follow from the in-flight window; nothing is read
 * from the host's SQ again. */
void req_rewind(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	uint32_t i = infl_find(qp, psn);

	if (i == qp->infl_tail || pass_before(qp, i))
		return; /* nothing in flight at or after psn, or on its way */
	struct snic_inflight *f = &qp->infl[i % SNIC_INFLIGHT];
	bool keep_rd = active_read_before(qp, i);

	pass_load(qp, i, psn);
	if (wr_is_rd_atomic(f->opcode) && in_active_read(qp, f))
		reissue_read_rest(nic, qp);
	else if (!keep_rd)
		qp->rd_active = false;
	QCNT_INC(nic, qp, retransmits);
	qp_req_schedule(nic, qp);
}
