/* SPDX-License-Identifier: MIT */
/*
 * XRC on the wire (IBTA vol. 1 Annex A14): XRC is RC with the opcodes of
 * the XRC class (RC opcode | 0xa0) and, in every request, an XRCETH
 * naming the XRC SRQ at the target.  The RC requester, responder and
 * completer do the work: the initiator's requests get their class and
 * XRCETH from the opcode table (ops.c bth_base, sq_fill_ext) and the
 * target's responses theirs from hdr.c; here a received XRC packet is
 * turned back into its RC opcode for them, and a request first binds the
 * target QP to the SRQ its XRCETH names (objects/xrcd.c has the rules).
 */
#include "transport/rc_write_only.h"

/* A request for a target QP.  At the PSN expected it is bound to the SRQ
 * its XRCETH names, or refused with the NAK the binding asks for.  A
 * duplicate or an early packet takes no RECV: the RC responder re-ACKs
 * or NAKs the sequence as for RC, and the binding stays that of the
 * message in progress (a duplicate of an older message may name another
 * SRQ). */
static bool xrc_recv_rx(struct snic_nic *nic, struct snic_qp *qp,
			const struct roce_hdrs *h)
{
	bool expected = h->psn == qp->resp.epsn;
	int nak;

	if (!recv_state_ok(nic, qp))
		return false;
	if (expected || !qp->has_srq) {
		nak = xrc_recv_bind(nic, qp, h->xrc_srqn);
		if (nak != SNIC_WC_SUCCESS) {
			if (expected)
				nak_fatal(nic, qp, h->psn, (uint8_t)nak);
			return false;
		}
	}
	/* the one step first, as nic/rx.c does for RC (the XRC opcode is
	 * its RC one here) */
	if (!resp_write_only(nic, qp, h))
		resp_rx(nic, qp, h);
	return qp->resp.ack_pending;
}

/* An XRC packet for an XRC QP: requests to targets, responses to
 * initiators, both only from the QP's peer (IBTA 9.6.1.5). */
bool xrc_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	struct roce_hdrs rc;
	bool req = roce_opcodes[h->opcode].flags & ROCE_F_REQ;

	if ((h->opcode & ROCE_CLASS_MASK) != ROCE_XRC_BASE ||
	    req != (qp->type == SNIC_QPT_XRC_RECV)) {
		CNT_INC(&nic->core, rx_drop_unknown_qpn); /* no such QP of that type */
		return false;
	}
	if (!rx_peer_ok(nic, qp, h))
		return false;
	rc = *h;
	rc.opcode = (uint8_t)(h->opcode & ~ROCE_CLASS_MASK);
	if (req)
		return xrc_recv_rx(nic, qp, &rc);
	comp_rx(nic, qp, &rc);
	return false;
}

/* A target has no send queue (Annex A14): nothing to send of its own;
 * its responses leave from the responder (rc_ack.c, rc_read_resp.c). */
bool xrc_recv_req_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	(void)nic;
	(void)qp;
	return false;
}
