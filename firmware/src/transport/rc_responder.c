/* SPDX-License-Identifier: MIT */
/*
 * RC responder (IBTA 9.7.5.2, 9.7.4.1): PSN checks, opcode sequence and
 * length checks, RECV consumption for SENDs, rkey checks for WRITE, READ
 * and atomics (before any byte of host memory is touched), READ responses
 * segmented at the path MTU, and coalesced ACKs.  Access violations are
 * NAKed and move the QP to the error state with an affiliated event
 * (IBTA 9.9.3.1.2 / 11.6.3.1).
 */
#include <string.h>

#include "transport/transport.h"

#define EV_QP_REQ_ERR    2 /* IBV_EVENT_QP_REQ_ERR    */
#define EV_QP_ACCESS_ERR 3 /* IBV_EVENT_QP_ACCESS_ERR */
#define ACK_CREDIT_NONE  0x1f /* no end-to-end credits advertised */

static uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

static uint32_t req_psns(const struct snic_qp *qp, const struct roce_hdrs *h);

static void send_aeth(struct snic_nic *nic, struct snic_qp *qp, uint8_t syn,
		      uint32_t psn)
{
	struct roce_hdrs h;
	struct snic_pkt *p;

	pkt_fill_hdrs(nic, qp, &h, ROCE_RC_ACK, psn);
	h.aeth_syndrome = syn;
	h.aeth_msn = qp->resp.msn & ROCE_PSN_MASK;
	p = pkt_build(nic, &h, NULL, 0);
	if (p)
		core_tx(&nic->core, p);
}

/* The coalesced ACK (psn = epsn - 1).  It waits while READ/atomic
 * responses are queued: responses leave in PSN order (9.7.5.1.2), and an
 * ACK covering a READ's PSNs before its data would tell the requester the
 * data was lost. */
void resp_flush_acks(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->resp.ack_pending || qp->resp.rd_npend)
		return;
	qp->resp.ack_pending = false;
	QCNT_INC(nic, qp, acks_sent);
	send_aeth(nic, qp, ROCE_AETH_ACK | ACK_CREDIT_NONE,
		  psn_add(qp->resp.epsn, ROCE_PSN_MASK)); /* epsn - 1 */
}

/* A fatal request error: NAK it, then the QP goes to the error state. */
static void nak_fatal(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn,
		      uint8_t code)
{
	uint32_t ev = code == ROCE_NAK_REM_ACCESS ? EV_QP_ACCESS_ERR : EV_QP_REQ_ERR;

	if (code == ROCE_NAK_REM_ACCESS)
		QCNT_INC(nic, qp, nak_access_sent);
	else if (code == ROCE_NAK_REM_OP_ERR)
		QCNT_INC(nic, qp, nak_rem_op_sent);
	else
		QCNT_INC(nic, qp, nak_inv_req_sent);
	resp_flush_acks(nic, qp);
	send_aeth(nic, qp, ROCE_AETH_NAK | code, psn);
	qp_to_error(nic, qp, ev);
}

/* ---------------------------------------------------------------------- */
/* Receive WQEs.                                                           */

static void recv_cqe(struct snic_nic *nic, struct snic_qp *qp, uint8_t status,
		     uint8_t opcode, const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	struct snic_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = r->recv_wr_id;
	cqe.status = status;
	cqe.opcode = opcode;
	cqe.byte_len = r->recv_len;
	cqe.qp_num = qp->qpn;
	cqe.src_qp = qp->attr.dest_qp_num;
	cqe.wqe_idx = r->rq_ci;
	if (h && (roce_opcodes[h->opcode].flags & ROCE_F_IMM)) {
		cqe.imm_data = h->imm;
		cqe.wc_flags = SNIC_WC_WITH_IMM;
	}
	r->rq_ci++;
	r->in_send = false;
	cq_post(nic, qp->rcq, &cqe, h && h->se);
}

/* Take the next RECV WQE; false when none is posted (RNR). */
static bool recv_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st)
{
	struct snic_resp *r = &qp->resp;
	struct {
		struct snic_recv_wqe hdr;
		struct snic_wqe_sge sge[SNIC_MAX_SGE];
	} w;
	uint64_t pa;

	if (qp->has_srq)
		return srq_take(nic, qp, st); /* srq.c */
	*st = SNIC_WC_SUCCESS;
	if (r->rq_ci == r->rq_pi)
		qp_doorbell(nic, qp); /* posted but not yet rung for? */
	if (r->rq_ci == r->rq_pi)
		return false;
	pa = qp->rq_pa + ((uint64_t)(r->rq_ci & (qp->rq_cnt - 1)) << qp->rq_stride_log);
	if (core_dma_read(&nic->core, pa, &w.hdr, sizeof(w.hdr)) ||
	    w.hdr.num_sge > qp->max_recv_sge ||
	    (w.hdr.num_sge && core_dma_read(&nic->core, pa + sizeof(w.hdr), w.sge,
					   w.hdr.num_sge * 16u))) {
		w.hdr.num_sge = 0;
		*st = SNIC_WC_LOC_QP_OP_ERR;
	}
	r->recv_wr_id = w.hdr.wr_id;
	r->recv_len = 0;
	r->in_send = true;
	QCNT_INC(nic, qp, recv_wqes);
	if (*st == SNIC_WC_SUCCESS)
		*st = (uint8_t)sgl_load(nic, &r->rsgl, w.sge, w.hdr.num_sge, qp->pd,
					SNIC_ACCESS_LOCAL_WRITE);
	return true;
}

static void rnr_nak(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	QCNT_INC(nic, qp, rnr_nak_sent);
	resp_flush_acks(nic, qp);
	send_aeth(nic, qp, ROCE_AETH_RNR_NAK | (qp->attr.min_rnr_timer & 0x1f), psn);
}

/* ---------------------------------------------------------------------- */
/* Request handlers.  Return false when the packet was not consumed (the
 * PSN does not advance: RNR or an error that ended the QP).              */

static bool do_send(struct snic_nic *nic, struct snic_qp *qp,
		    const struct roce_hdrs *h, uint32_t fl)
{
	struct snic_resp *r = &qp->resp;
	uint8_t st;

	if (fl & ROCE_F_FIRST) {
		if (!recv_take(nic, qp, &st)) {
			rnr_nak(nic, qp, h->psn);
			return false;
		}
		if (st != SNIC_WC_SUCCESS) {
			/* responder-side local error: IBTA 9.9.3.1.3 */
			recv_cqe(nic, qp, st, SNIC_WC_RECV, NULL);
			nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_OP_ERR);
			return false;
		}
	}
	if (r->recv_len + h->payload_len > r->rsgl.total) {
		recv_cqe(nic, qp, SNIC_WC_LOC_LEN_ERR, SNIC_WC_RECV, NULL);
		nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
		return false;
	}
	if (h->payload_len &&
	    sgl_copy_in(nic, &r->rsgl, h->payload, h->payload_len)) {
		recv_cqe(nic, qp, SNIC_WC_LOC_PROT_ERR, SNIC_WC_RECV, NULL);
		nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_OP_ERR);
		return false;
	}
	r->recv_len += h->payload_len;
	if (fl & ROCE_F_LAST) {
		recv_cqe(nic, qp, SNIC_WC_SUCCESS, SNIC_WC_RECV, h);
		r->msn++;
	}
	return true;
}

/* The rkey check of a RETH or AtomicETH: the MR, the PD of this QP, the
 * MR's and the QP's access rights, the bounds (IBTA 9.7.5.2.3, C9-88:
 * a zero-length RDMA needs no valid rkey). */
static bool rkey_ok(struct snic_nic *nic, const struct snic_qp *qp,
		    uint32_t rkey, uint64_t va, uint64_t len, uint32_t access)
{
	if (len == 0)
		return true;
	if (!(qp->attr.qp_access_flags & access))
		return false;
	return mr_check(nic, rkey, qp->pd, access, va, len) != NULL;
}

static bool do_write(struct snic_nic *nic, struct snic_qp *qp,
		     const struct roce_hdrs *h, uint32_t fl)
{
	struct snic_resp *r = &qp->resp;
	uint8_t st;

	if (fl & ROCE_F_FIRST) {
		if (!rkey_ok(nic, qp, h->reth_rkey, h->reth_va, h->reth_len,
			     SNIC_ACCESS_REMOTE_WRITE)) {
			nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_ACCESS);
			return false;
		}
		r->in_write = true;
		r->wr_mr = h->reth_rkey;
		r->wr_va = h->reth_va;
		r->wr_left = r->wr_len = h->reth_len;
	}
	if (h->payload_len > r->wr_left ||
	    ((fl & ROCE_F_LAST) && h->payload_len != r->wr_left)) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
		return false;
	}
	/* the immediate needs a RECV: without one, RNR before any write */
	if ((fl & ROCE_F_IMM) && !r->in_send) {
		if (!recv_take(nic, qp, &st)) {
			/* not consumed: the retry starts the message again */
			if (fl & ROCE_F_FIRST)
				r->in_write = false;
			rnr_nak(nic, qp, h->psn);
			return false;
		}
		if (st != SNIC_WC_SUCCESS) {
			recv_cqe(nic, qp, st, SNIC_WC_RECV_RDMA_WITH_IMM, NULL);
			nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_OP_ERR);
			return false;
		}
	}
	if (h->payload_len) {
		const struct snic_mr *mr = mr_check(nic, r->wr_mr, qp->pd,
						    SNIC_ACCESS_REMOTE_WRITE,
						    r->wr_va, h->payload_len);

		if (!mr || mr_write(nic, mr, r->wr_va, h->payload, h->payload_len)) {
			nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_ACCESS);
			return false;
		}
	}
	r->wr_va += h->payload_len;
	r->wr_left -= h->payload_len;
	if (fl & ROCE_F_LAST) {
		r->in_write = false;
		r->msn++;
		if (fl & ROCE_F_IMM) {
			r->recv_len = r->wr_len;
			recv_cqe(nic, qp, SNIC_WC_SUCCESS, SNIC_WC_RECV_RDMA_WITH_IMM, h);
		}
	}
	return true;
}

static uint32_t rd_slots(const struct snic_qp *qp)
{
	return qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
}

/* READs/atomics accepted and not yet answered once (duplicates being
 * answered again do not count against max_dest_rd_atomic). */
static uint32_t rd_first_pending(const struct snic_resp *r)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < SNIC_MAX_RD_ATOM; i++)
		n += r->rd[i].pending && !r->rd[i].replay;
	return n;
}

static void rd_unpend(struct snic_resp *r, struct snic_rd_res *rd)
{
	if (rd->pending) {
		rd->pending = false;
		r->rd_npend--;
	}
}

/* The next responder resource, for the request at h->psn owning npsn
 * PSNs.  It takes the place of the oldest one in the history; a replay
 * still pending there is dropped (its requester has long moved on). */
static struct snic_rd_res *rd_new(struct snic_resp *r,
				  const struct roce_hdrs *h, uint32_t npsn)
{
	struct snic_rd_res *rd = &r->rd[r->rd_tail % SNIC_MAX_RD_ATOM];

	rd_unpend(r, rd);
	r->rd_tail++;
	if (r->rd_tail - r->rd_head > SNIC_MAX_RD_ATOM)
		r->rd_head = r->rd_tail - SNIC_MAX_RD_ATOM;
	memset(rd, 0, sizeof(*rd));
	rd->valid = true;
	rd->pending = true;
	r->rd_npend++;
	rd->psn = rd->first_psn = rd->start_psn = h->psn;
	rd->end_psn = psn_add(h->psn, npsn - 1);
	return rd;
}

static bool do_read(struct snic_nic *nic, struct snic_qp *qp,
		    const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	struct snic_rd_res *rd;

	if (!rkey_ok(nic, qp, h->reth_rkey, h->reth_va, h->reth_len,
		     SNIC_ACCESS_REMOTE_READ)) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_ACCESS);
		return false;
	}
	/* more outstanding READs than max_dest_rd_atomic (C9-140) */
	if (rd_first_pending(r) >= rd_slots(qp)) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
		return false;
	}
	/* ACKs for earlier requests go out before the READ's responses */
	resp_flush_acks(nic, qp);
	rd = rd_new(r, h, req_psns(qp, h));
	rd->rkey = h->reth_rkey;
	rd->va = h->reth_va;
	rd->len = h->reth_len;
	qp_resp_schedule(nic, qp);
	return true;
}

static bool do_atomic(struct snic_nic *nic, struct snic_qp *qp,
		      const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	const struct snic_mr *mr;
	struct snic_rd_res *rd;
	uint64_t pa, orig = 0;
	int rc;

	if (h->atomic_va & 7) { /* IBTA 9.4.5: 8-byte aligned */
		nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
		return false;
	}
	if (!(qp->attr.qp_access_flags & SNIC_ACCESS_REMOTE_ATOMIC) ||
	    !(mr = mr_check(nic, h->atomic_rkey, qp->pd, SNIC_ACCESS_REMOTE_ATOMIC,
			    h->atomic_va, 8)) ||
	    mr_va_to_pa(nic, mr, h->atomic_va, &pa)) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_ACCESS);
		return false;
	}
	if (rd_first_pending(r) >= rd_slots(qp)) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
		return false;
	}
	if (h->opcode == ROCE_RC_CMP_SWAP)
		rc = nic->core.ops->dma_cmp_swap(nic->core.hal_ctx, pa, h->atomic_cmp,
					    h->atomic_swap_add, &orig);
	else
		rc = nic->core.ops->dma_fetch_add(nic->core.hal_ctx, pa, h->atomic_swap_add,
					     &orig);
	if (rc) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_OP_ERR);
		return false;
	}
	CNT_INC(&nic->core, atomics);
	resp_flush_acks(nic, qp);
	rd = rd_new(r, h, 1);
	rd->atomic = true;
	rd->orig = orig; /* kept: a duplicate gets this again (9.7.5.2.?) */
	qp_resp_schedule(nic, qp);
	return true;
}

/* ---------------------------------------------------------------------- */
/* Sequence checks.                                                        */

/* Opcode sequence (IBTA 9.7.5.2.2 C9-?): inside a multi-packet SEND only
 * SEND MIDDLE/LAST may come, inside a WRITE only WRITE MIDDLE/LAST; outside
 * both, only FIRST or ONLY packets. */
static bool opcode_seq_ok(const struct snic_resp *r, uint32_t fl)
{
	if (r->in_send && !r->in_write)
		return (fl & ROCE_F_SEND) && !(fl & ROCE_F_FIRST);
	if (r->in_write)
		return (fl & ROCE_F_WRITE) && !(fl & ROCE_F_FIRST);
	return (fl & ROCE_F_FIRST) != 0;
}

/* Payload length rules (IBTA 9.7.5.2.? C9-?, as rxe's check_length): FIRST
 * and MIDDLE carry exactly one PMTU, LAST 1..PMTU, ONLY 0..PMTU. */
static bool length_ok(const struct snic_qp *qp, const struct roce_hdrs *h,
		      uint32_t fl)
{
	bool first = fl & ROCE_F_FIRST, last = fl & ROCE_F_LAST;

	if (!(fl & ROCE_F_PAYLOAD))
		return h->payload_len == 0;
	if (first && last)
		return h->payload_len <= qp->mtu;
	if (!last)
		return h->payload_len == qp->mtu;
	return h->payload_len >= 1 && h->payload_len <= qp->mtu;
}

static uint32_t req_psns(const struct snic_qp *qp, const struct roce_hdrs *h)
{
	if (h->opcode != ROCE_RC_READ_REQ || h->reth_len == 0)
		return 1;
	return qp_mtu_div(qp, h->reth_len + qp->mtu - 1);
}

/* The resource of the request owning `psn`, newest first, within the
 * history; its ring index in *idx. */
static struct snic_rd_res *rd_find(struct snic_resp *r, uint32_t psn,
				   uint32_t *idx)
{
	for (uint32_t k = 1; k <= SNIC_MAX_RD_ATOM; k++) {
		uint32_t i = r->rd_tail - k;
		struct snic_rd_res *rd = &r->rd[i % SNIC_MAX_RD_ATOM];

		if (!rd->valid)
			break;
		if (roce_psn_diff(psn, rd->first_psn) >= 0 &&
		    roce_psn_diff(psn, rd->end_psn) <= 0) {
			*idx = i;
			return rd;
		}
	}
	return NULL;
}

/* Point a READ resource at the duplicate's RETH: the requester asks from
 * h->psn on, for the rest of the original (it may have had the start).
 * The rkey is checked again, as for a new request. */
static bool rd_rearm_read(struct snic_nic *nic, struct snic_qp *qp,
			  struct snic_rd_res *rd, const struct roce_hdrs *h)
{
	uint32_t npsn = req_psns(qp, h);

	if (roce_psn_diff(rd->end_psn, h->psn) != (int32_t)npsn - 1)
		return false; /* not the rest of that READ */
	if (!rkey_ok(nic, qp, h->reth_rkey, h->reth_va, h->reth_len,
		     SNIC_ACCESS_REMOTE_READ)) {
		nak_fatal(nic, qp, h->psn, ROCE_NAK_REM_ACCESS);
		return false;
	}
	rd->rkey = h->reth_rkey;
	rd->va = h->reth_va;
	rd->len = h->reth_len;
	rd->sent = 0;
	return true;
}

/* A duplicate READ or atomic (IBTA 9.7.5.2.2): answered again from the
 * responder resources, in PSN order with the other responses.  A READ is
 * executed again from memory from the duplicate's PSN; an atomic is never
 * executed twice: its saved result is sent again. */
static void dup_rd(struct snic_nic *nic, struct snic_qp *qp,
		   const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	bool atomic = roce_opcodes[h->opcode].flags & ROCE_F_ATOMIC_OP;
	struct snic_rd_res *rd;
	uint32_t i;

	rd = rd_find(r, h->psn, &i);
	if (!rd || rd->atomic != atomic ||
	    (atomic && h->psn != rd->first_psn)) {
		CNT_INC(&nic->core, dup_rd_unmatched);
		return;
	}
	if (rd->pending && rd->start_psn == h->psn)
		return; /* already answering exactly this */
	if (!atomic && !rd_rearm_read(nic, qp, rd, h)) {
		if (qp->state != SNIC_QPS_ERR)
			CNT_INC(&nic->core, dup_rd_unmatched);
		return;
	}
	rd->psn = rd->start_psn = h->psn;
	if (!rd->pending) {
		rd->pending = true;
		rd->replay = true;
		r->rd_npend++;
	}
	if ((int32_t)(i - r->rd_head) < 0)
		r->rd_head = i;
	if (atomic)
		CNT_INC(&nic->core, dup_atomics_replayed);
	else
		CNT_INC(&nic->core, dup_reads_replayed);
	qp_resp_schedule(nic, qp);
}

static void on_duplicate(struct snic_nic *nic, struct snic_qp *qp,
			 const struct roce_hdrs *h)
{
	QCNT_INC(nic, qp, rx_dup_requests);
	/* re-ACK so a requester that lost our ACK moves on (9.7.5.2.2) */
	if (h->opcode != ROCE_RC_READ_REQ && !(roce_opcodes[h->opcode].flags &
					       ROCE_F_ATOMIC_OP))
		qp->resp.ack_pending = true;
	else
		dup_rd(nic, qp, h);
}

void resp_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	uint32_t fl = roce_opcodes[h->opcode].flags;
	int32_t d;
	bool ok;

	if (qp->state < SNIC_QPS_RTR || qp->state == SNIC_QPS_ERR) {
		QCNT_INC(nic, qp, rx_drop_qp_state);
		return;
	}
	d = roce_psn_diff(h->psn, r->epsn);
	if (d < 0) {
		on_duplicate(nic, qp, h);
		return;
	}
	if (d > 0) {
		QCNT_INC(nic, qp, rx_drop_bad_psn);
		if (!r->nak_sent) { /* one NAK per sequence error (C9-?) */
			r->nak_sent = true;
			QCNT_INC(nic, qp, nak_seq_sent);
			resp_flush_acks(nic, qp);
			send_aeth(nic, qp, ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ_ERR, r->epsn);
		}
		return;
	}
	r->nak_sent = false;
	if (!opcode_seq_ok(r, fl)) {
		QCNT_INC(nic, qp, rx_drop_opcode_seq);
		nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
		return;
	}
	if (!length_ok(qp, h, fl)) {
		QCNT_INC(nic, qp, rx_drop_bad_length);
		nak_fatal(nic, qp, h->psn, ROCE_NAK_INVALID_REQ);
		return;
	}
	if (fl & ROCE_F_SEND)
		ok = do_send(nic, qp, h, fl);
	else if (fl & ROCE_F_WRITE)
		ok = do_write(nic, qp, h, fl);
	else if (fl & ROCE_F_READ)
		ok = do_read(nic, qp, h);
	else
		ok = do_atomic(nic, qp, h);
	if (!ok)
		return;
	r->epsn = psn_add(r->epsn, req_psns(qp, h));
	if (h->ackreq && !(fl & (ROCE_F_READ | ROCE_F_ATOMIC_OP)))
		r->ack_pending = true;
}

/*
 * A QP destroyed a moment ago (SNIC_LINGER_NS) still answers duplicates of
 * requests it had accepted with an ACK, as TCP's TIME_WAIT answers a
 * repeated FIN: the ACK of the last message may have been lost, and its
 * requester would otherwise retry into silence and fail a message that
 * did arrive.  Only SEND/WRITE duplicates from the same peer, below the
 * PSN the QP expected; nothing is executed.  Returns true when the frame
 * was such a duplicate (answered).
 */
bool resp_linger_rx(struct snic_nic *nic, const struct roce_hdrs *h)
{
	struct snic_qp *qp = &nic->qps[SNIC_QPN_IDX(h->dqpn)];
	uint32_t fl = roce_opcodes[h->opcode].flags;

	if (qp->in_use || qp->qpn != h->dqpn || nic->core.now >= qp->linger_until ||
	    qp->type != SNIC_QPT_RC || h->sip != qp->dip ||
	    h->opcode >= ROCE_UC_BASE ||
	    !(fl & (ROCE_F_SEND | ROCE_F_WRITE)) ||
	    roce_psn_diff(h->psn, qp->resp.epsn) >= 0)
		return false;
	CNT_INC(&nic->core, linger_acks);
	send_aeth(nic, qp, ROCE_AETH_ACK | ACK_CREDIT_NONE,
		  psn_add(qp->resp.epsn, ROCE_PSN_MASK)); /* epsn - 1 */
	return true;
}

/* ---------------------------------------------------------------------- */
/* READ responses.                                                         */

static struct snic_rd_res *rd_at_head(struct snic_resp *r)
{
	return &r->rd[r->rd_head % SNIC_MAX_RD_ATOM];
}

/* Its last response is out: off the pending set, on to the next. */
static void rd_done(struct snic_resp *r, struct snic_rd_res *rd)
{
	rd_unpend(r, rd);
	rd->replay = false;
	r->rd_head++;
}

static uint8_t rd_opcode(const struct snic_qp *qp, const struct snic_rd_res *rd)
{
	bool first = rd->sent == 0;
	bool last = rd->len - rd->sent <= qp->mtu;

	if (first && last)
		return ROCE_RC_READ_RESP_ONLY;
	if (first)
		return ROCE_RC_READ_RESP_FIRST;
	return last ? ROCE_RC_READ_RESP_LAST : ROCE_RC_READ_RESP_MIDDLE;
}

/* One response packet; false when out of buffers or the QP failed. */
static bool atomic_ack(struct snic_nic *nic, struct snic_qp *qp,
		       struct snic_rd_res *rd)
{
	struct snic_resp *r = &qp->resp;
	struct roce_hdrs h;
	struct snic_pkt *p;

	pkt_fill_hdrs(nic, qp, &h, ROCE_RC_ATOMIC_ACK, rd->psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ACK_CREDIT_NONE;
	h.aeth_msn = (r->msn + !rd->replay) & ROCE_PSN_MASK;
	h.atomic_orig = rd->orig;
	p = pkt_build(nic, &h, NULL, 0);
	if (!p)
		return false;
	core_tx(&nic->core, p);
	if (!rd->replay)
		r->msn++; /* counted once */
	rd_done(r, rd);
	return true;
}

static bool rd_packet(struct snic_nic *nic, struct snic_qp *qp,
		      struct snic_rd_res *rd)
{
	struct snic_resp *r = &qp->resp;
	uint8_t op = rd_opcode(qp, rd);
	uint32_t n = rd->len - rd->sent;
	const struct snic_mr *mr = NULL;
	struct roce_hdrs h;
	struct snic_pkt *p;

	if (n > qp->mtu)
		n = qp->mtu;
	if (n && !(mr = mr_check(nic, rd->rkey, qp->pd, SNIC_ACCESS_REMOTE_READ,
				 rd->va + rd->sent, n))) {
		/* deregistered while we answered: access error (C9-?) */
		nak_fatal(nic, qp, rd->psn, ROCE_NAK_REM_ACCESS);
		return false;
	}
	p = core_pkt_alloc(&nic->core);
	if (!p)
		return false;
	/* a failed read is counted in dma_errors by nic_dma_read */
	if (n)
		mr_read(nic, mr, rd->va + rd->sent, p->data + roce_hdr_len(op), n);
	if ((roce_opcodes[op].flags & ROCE_F_LAST) && !rd->replay)
		r->msn++;
	pkt_fill_hdrs(nic, qp, &h, op, rd->psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ACK_CREDIT_NONE;
	h.aeth_msn = r->msn & ROCE_PSN_MASK;
	p->len = (uint16_t)roce_build(p->data, &h, n);
	core_tx(&nic->core, p);
	CNT_INC(&nic->core, read_responses);
	rd->sent += n;
	rd->psn = psn_add(rd->psn, 1);
	if (roce_opcodes[op].flags & ROCE_F_LAST) {
		rd_done(r, rd);
	}
	return true;
}

static bool resp_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_resp *r = &qp->resp;
	unsigned budget = SNIC_QP_TX_BUDGET;

	while (budget-- && nic->core.tx_budget) {
		struct snic_rd_res *rd;
		bool sent;

		if (qp->state == SNIC_QPS_ERR)
			return false;
		while (r->rd_head != r->rd_tail && !rd_at_head(r)->pending)
			r->rd_head++; /* answered already, or never replayed */
		rd = rd_at_head(r);
		if (r->rd_head == r->rd_tail) {
			resp_flush_acks(nic, qp); /* the ACK that waited */
			return false;
		}
		if (!qp->dmac_valid)
			return true;
		sent = rd->atomic ? atomic_ack(nic, qp, rd) : rd_packet(nic, qp, rd);
		if (!sent)
			return qp->state != SNIC_QPS_ERR;
	}
	return true;
}

unsigned resp_poll(struct snic_nic *nic)
{
	uint32_t n = nic->resp_tail - nic->resp_head;
	unsigned work = 0;

	while (n-- && nic->core.tx_budget) {
		struct snic_qp *qp =
			&nic->qps[nic->resp_list[nic->resp_head++ % SNIC_MAX_QP]];
		uint32_t before = nic->core.tx_budget;

		qp->on_resp_list = false;
		if (!qp->in_use)
			continue;
		if (resp_qp(nic, qp))
			qp_resp_schedule(nic, qp);
		work += before - nic->core.tx_budget;
	}
	return work;
}
