/* SPDX-License-Identifier: MIT */
/*
 * Raw packet QPs (IBV_QPT_RAW_PACKET): no transport at all.  A send WQE
 * is one whole Ethernet frame, handed to the port as it is (a frame to
 * our own MAC goes round through our receive path, as any other); a
 * received frame that a flow steers here (objects/flow.c) fills one RECV
 * whole, byte_len its length.  Too short or too long a frame to send is
 * a local error of its WQE (LOC_LEN_ERR, the QP to error as for every
 * type); a frame larger than the RECV completes it with LOC_LEN_ERR and
 * the QP lives on (the sender's doing, as UD).
 */
#include "transport/transport.h"

static bool raw_send(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_req_cur *cur = &qp->cur;
	struct snic_pkt *p;

	if (cur->len < ROCE_ETH_HLEN) {
		sq_complete(nic, qp, SNIC_WC_LOC_LEN_ERR);
		return true;
	}
	p = core_pkt_alloc(&nic->core);
	if (!p)
		return false;
	if (cur->len > p->cap || sq_gather(nic, cur, p->data, cur->len)) {
		core_pkt_unused(&nic->core, p);
		sq_complete(nic, qp, cur->len > p->cap ? SNIC_WC_LOC_LEN_ERR
			    : SNIC_WC_LOC_PROT_ERR);
		return true;
	}
	p->len = (uint16_t)cur->len;
	qp->qcnt[SNIC_QCNT_tx_frames]++;
	core_tx(&nic->core, p);
	cur->sent = cur->len;
	sq_complete(nic, qp, SNIC_WC_SUCCESS);
	return true;
}

/* The requester's turn (req_poll); true to stay scheduled.  A frame is
 * at most the port's MTU of payload after its Ethernet header. */
bool raw_req_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->state != SNIC_QPS_RTS)
		return false;
	return sq_unrel_run(nic, qp, nic->core.cfg.eth_mtu + ROCE_ETH_HLEN,
			    raw_send);
}

static void raw_recv(struct snic_nic *nic, struct snic_qp *qp,
		     const struct snic_pkt *p)
{
	uint8_t st;

	if (!recv_state_ok(nic, qp))
		return;
	if (!recv_take(nic, qp, &st)) {
		CNT_INC(&nic->core, rx_drop_no_recv);
		return;
	}
	if (st == SNIC_WC_SUCCESS && qp->resp.rsgl.total < p->len)
		st = SNIC_WC_LOC_LEN_ERR;
	else if (st == SNIC_WC_SUCCESS &&
		 sgl_copy_in(nic, &qp->resp.rsgl, p->data, p->len))
		st = SNIC_WC_LOC_PROT_ERR;
	qp->qcnt[SNIC_QCNT_rx_frames]++;
	qp->qcnt[SNIC_QCNT_rx_bytes] += p->len;
	qp->resp.recv_len = p->len;
	qp_recv_cqe(nic, qp, st, SNIC_WC_RECV, NULL);
	if (st != SNIC_WC_SUCCESS && st != SNIC_WC_LOC_LEN_ERR)
		qp_to_error(nic, qp, SNIC_EV_QP_FATAL);
}

/* RX, before any classification: true when a flow took the frame. */
bool raw_rx_steer(struct snic_nic *nic, const struct snic_pkt *p)
{
	struct snic_qp *qp = flow_match(nic, p->data, p->len);

	if (!qp)
		return false;
	CNT_INC(&nic->core, rx_flow_steered);
	raw_recv(nic, qp, p);
	return true;
}

/* A RoCE packet addressed to a raw QP's number: no such QP of its type. */
bool raw_rx_roce(struct snic_nic *nic, struct snic_qp *qp,
		 const struct roce_hdrs *h)
{
	(void)qp;
	(void)h;
	CNT_INC(&nic->core, rx_drop_unknown_qpn);
	return false;
}
