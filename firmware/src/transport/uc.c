/* SPDX-License-Identifier: MIT */
/*
 * UC, the unreliable connected service (IBTA 9.8.2): SEND and RDMA WRITE
 * (with immediate) segmented at the path MTU like RC, PSNs checked, but no
 * ACKs, retries or NAKs.  A send completes once its last packet is
 * queued; a PSN gap drops the message in progress (9.8.2.2) and an R_Key
 * violation drops the message silently.
 */
#include "transport/transport.h"

/* The next packet of the current message; false while waiting. */
static bool uc_send(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_req_cur *cur = &qp->cur;
	struct roce_hdrs h;

	pkt_fill_hdrs(nic, qp, &h, sq_opcode(qp, cur),
		      cur->first_psn + qp_mtu_div(qp, cur->sent));
	sq_fill_ext(cur, &h);
	return sq_unrel_packet(nic, qp, &h, qp->mtu);
}

/* The requester's turn (req_poll); true to stay scheduled. */
bool uc_req_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->state != SNIC_QPS_RTS)
		return false;
	if (!qp->dmac_valid) {
		sq_arp_retry(nic, qp, qp->nh);
		return true;
	}
	return sq_unrel_run(nic, qp, SNIC_MAX_MSG_SIZE, uc_send);
}

/* Abandon the message in progress (lost packet, bad R_Key).  A RECV it
 * had taken is kept for the next message (9.8.2.2). */
static void uc_drop_msg(struct snic_qp *qp)
{
	struct snic_resp *r = &qp->resp;

	if (r->in_send) {
		qp->uc_keep = true;
		r->in_send = false;
	}
	r->in_write = false;
}

/* The RECV for a new message: the kept one (rewound) or a new one. */
static bool uc_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st)
{
	struct snic_resp *r = &qp->resp;

	*st = SNIC_WC_SUCCESS;
	if (qp->uc_keep) {
		r->rsgl.idx = 0;
		r->rsgl.off = 0;
		r->recv_len = 0;
		r->in_send = true;
		qp->uc_keep = false;
		return true;
	}
	return recv_take(nic, qp, st);
}

/* PSN and opcode sequence; false when the packet is dropped. */
static bool uc_seq_ok(struct snic_nic *nic, struct snic_qp *qp,
		      const struct roce_hdrs *h, uint32_t fl)
{
	struct snic_resp *r = &qp->resp;
	bool send = fl & ROCE_F_SEND;

	if (h->psn != r->epsn) {
		QCNT_INC(nic, qp, rx_drop_bad_psn);
		uc_drop_msg(qp); /* 9.8.2.2: resynchronise on this packet */
	}
	r->epsn = (h->psn + 1) & ROCE_PSN_MASK;
	/* in a message only its MIDDLE/LAST; outside, only FIRST/ONLY */
	if ((r->in_send || r->in_write)
	    ? ((fl & ROCE_F_FIRST) || (send ? !r->in_send : !r->in_write))
	    : !(fl & ROCE_F_FIRST)) {
		QCNT_INC(nic, qp, rx_drop_opcode_seq);
		uc_drop_msg(qp);
		if (!(fl & ROCE_F_FIRST))
			return false;
	}
	if (h->payload_len > qp->mtu ||
	    (!(fl & ROCE_F_LAST) && h->payload_len != qp->mtu)) {
		QCNT_INC(nic, qp, rx_drop_bad_length);
		uc_drop_msg(qp);
		return false;
	}
	return true;
}

/* A receive error: the RECV completes with st, the QP is lost. */
static void uc_recv_fail(struct snic_nic *nic, struct snic_qp *qp, uint8_t st)
{
	qp_recv_cqe(nic, qp, st, SNIC_WC_RECV, NULL);
	qp_to_error(nic, qp, SNIC_EV_QP_FATAL);
}

static void uc_recv_send(struct snic_nic *nic, struct snic_qp *qp,
			 const struct roce_hdrs *h, uint32_t fl)
{
	uint8_t st = SNIC_WC_SUCCESS;

	if ((fl & ROCE_F_FIRST) && !uc_take(nic, qp, &st)) {
		CNT_INC(&nic->core, rx_drop_no_recv);
		return;
	}
	if (st == SNIC_WC_SUCCESS)
		st = recv_place(nic, qp, h);
	if (st != SNIC_WC_SUCCESS) {
		uc_recv_fail(nic, qp, st);
		return;
	}
	if (fl & ROCE_F_LAST)
		qp_recv_cqe(nic, qp, SNIC_WC_SUCCESS, SNIC_WC_RECV, h);
}

static void uc_recv_write(struct snic_nic *nic, struct snic_qp *qp,
			  const struct roce_hdrs *h, uint32_t fl)
{
	struct snic_resp *r = &qp->resp;
	const struct snic_mr *mr = NULL;
	uint8_t st;

	if ((fl & ROCE_F_FIRST) && !resp_write_start(nic, qp, h, &mr)) {
		QCNT_INC(nic, qp, nak_access_sent); /* counted; UC sends no NAK */
		return;
	}
	if (h->payload_len > r->wr_left ||
	    ((fl & ROCE_F_LAST) && h->payload_len != r->wr_left)) {
		QCNT_INC(nic, qp, rx_drop_bad_length);
		uc_drop_msg(qp);
		return;
	}
	if (!resp_write_payload(nic, qp, h, mr)) {
		uc_drop_msg(qp);
		return;
	}
	if (!(fl & ROCE_F_LAST))
		return;
	r->in_write = false;
	if (!(fl & ROCE_F_IMM))
		return;
	if (!uc_take(nic, qp, &st)) {
		CNT_INC(&nic->core, rx_drop_no_recv);
		return;
	}
	r->recv_len = r->wr_len;
	qp_recv_cqe(nic, qp, st, SNIC_WC_RECV_RDMA_WITH_IMM, h);
}

/* A packet for a UC QP (RX dispatch); never owes an ACK. */
bool uc_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	uint32_t fl = roce_opcodes[h->opcode].flags;

	if (h->opcode < ROCE_UC_BASE || h->opcode >= ROCE_UC_BASE + 0x0c) {
		CNT_INC(&nic->core, rx_drop_unknown_qpn); /* no such QP of that type */
		return false;
	}
	if (!rx_peer_ok(nic, qp, h) || !recv_state_ok(nic, qp) ||
	    !uc_seq_ok(nic, qp, h, fl))
		return false;
	if (fl & ROCE_F_SEND)
		uc_recv_send(nic, qp, h, fl);
	else
		uc_recv_write(nic, qp, h, fl);
	return false;
}
