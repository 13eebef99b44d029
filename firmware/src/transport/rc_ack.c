/* SPDX-License-Identifier: MIT */
/*
 * The RC responder's acknowledgements: coalesced ACKs (IBTA 9.7.5.1.2
 * allows one ACK for several requests), NAKs with their codes (9.7.5.2.1
 * table 44), RNR NAKs (9.7.5.2.8), and the ACKs a destroyed QP still
 * gives for duplicates while it lingers.
 */
#include "transport/rc_resp.h"

void send_aeth(struct snic_nic *nic, struct snic_qp *qp, uint8_t syn,
		      uint32_t psn)
{
	struct roce_hdrs h;
	struct snic_pkt *p;

	pkt_qp_hdrs(qp, &h, ROCE_RC_ACK, psn);
	h.aeth_syndrome = syn;
	h.aeth_msn = qp->resp.msn & ROCE_PSN_MASK;
	p = pkt_build_qp_ctl(nic, qp, &h);
	if (!p)
		return;
	/* ahead of data bursts (core/tx.c), but never ahead of this QP's
	 * own READ responses still queued: responses and ACKs leave in
	 * PSN order (9.7.5.1.2) */
	if ((int32_t)(nic->core.txq_head - qp->resp.rsp_txq_mark) >= 0)
		core_tx_ctl(&nic->core, p);
	else
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
void nak_fatal(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn,
		      uint8_t code)
{
	enum snic_event_type ev = code == ROCE_NAK_REM_ACCESS
				  ? SNIC_EV_QP_ACCESS_ERR : SNIC_EV_QP_REQ_ERR;

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

void rnr_nak(struct snic_nic *nic, struct snic_qp *qp, uint32_t psn)
{
	QCNT_INC(nic, qp, rnr_nak_sent);
	resp_flush_acks(nic, qp);
	send_aeth(nic, qp, ROCE_AETH_RNR_NAK | (qp->attr.min_rnr_timer & 0x1f), psn);
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
	    qp->type != SNIC_QPT_RC || !qp_peer_is(qp, h) ||
	    h->opcode >= ROCE_UC_BASE ||
	    !(fl & (ROCE_F_SEND | ROCE_F_WRITE)) ||
	    roce_psn_diff(h->psn, qp->resp.epsn) >= 0)
		return false;
	CNT_INC(&nic->core, linger_acks);
	send_aeth(nic, qp, ROCE_AETH_ACK | ACK_CREDIT_NONE,
		  psn_add(qp->resp.epsn, ROCE_PSN_MASK)); /* epsn - 1 */
	return true;
}

