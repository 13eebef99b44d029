/* SPDX-License-Identifier: MIT */
/*
 * Receive: one burst per pass, each frame parsed and checked by the wire
 * codec, then handed to the responder (requests) or the completer
 * (responses) of its QP.  Every drop is counted by reason.  ACKs owed for
 * the burst are sent once at its end (coalescing, IBTA 9.7.5.1.2 allows
 * one ACK for several requests).
 */
#include "nic.h"

static void count_parse_drop(struct snic_nic *nic, enum roce_parse_result r)
{
	switch (r) {
	case ROCE_NOT_ROCE: CNT_INC(nic, rx_drop_not_roce); break;
	case ROCE_ERR_TRUNCATED: CNT_INC(nic, rx_drop_truncated); break;
	case ROCE_ERR_IP_HDR: CNT_INC(nic, rx_drop_ip_hdr); break;
	case ROCE_ERR_UDP_LEN: CNT_INC(nic, rx_drop_udp_len); break;
	case ROCE_ERR_BAD_OPCODE: CNT_INC(nic, rx_drop_bad_opcode); break;
	case ROCE_ERR_BTH: CNT_INC(nic, rx_drop_bth); break;
	case ROCE_ERR_ICRC: CNT_INC(nic, rx_drop_icrc); break;
	case ROCE_OK: break;
	}
}

static bool is_arp(const struct snic_pkt *p)
{
	return p->len >= ROCE_ETH_HLEN && p->data[12] == 0x08 &&
	       p->data[13] == 0x06;
}

/* Returns the QP that may owe an ACK, or NULL. */
static struct snic_qp *rx_one(struct snic_nic *nic, struct snic_pkt *p)
{
	struct roce_hdrs h;
	enum roce_parse_result r;
	struct snic_qp *qp;
	uint32_t fl;

	if (is_arp(p)) {
		neigh_rx_arp(nic, p);
		return NULL;
	}
	r = roce_parse(p->data, p->len, &h);
	if (r != ROCE_OK) {
		count_parse_drop(nic, r);
		return NULL;
	}
	if (h.dip != nic->cfg.ipv4) {
		CNT_INC(nic, rx_drop_not_for_us);
		return NULL;
	}
	qp = qp_by_qpn(nic, h.dqpn);
	fl = roce_opcodes[h.opcode].flags;
	if (!qp) {
		if (!resp_linger_rx(nic, &h))
			CNT_INC(nic, rx_drop_unknown_qpn);
		return NULL;
	}
	qp->qcnt[SNIC_QCNT_rx_frames]++;
	qp->qcnt[SNIC_QCNT_rx_bytes] += p->len;
	if (qp->type != SNIC_QPT_RC || h.opcode >= ROCE_UC_BASE) {
		ud_rx(nic, qp, &h); /* UD and UC (ud.c) */
		return NULL;
	}
	/* A connected QP takes packets from its peer only (IBTA 9.6.1.5:
	 * the source must match the QP's path). */
	if (h.sip != qp->dip) {
		CNT_INC(nic, rx_drop_wrong_peer);
		return NULL;
	}
	if (fl & ROCE_F_REQ) {
		resp_rx(nic, qp, &h);
		return qp->resp.ack_pending ? qp : NULL;
	}
	comp_rx(nic, qp, &h);
	return NULL;
}

unsigned rx_poll(struct snic_nic *nic)
{
	struct snic_pkt *pkts[2 * SNIC_BURST];
	struct snic_qp *acks[2 * SNIC_BURST];
	uint16_t n = nic->ops->rx_burst(nic->hal_ctx, 0, pkts, SNIC_BURST);
	unsigned nacks = 0;

	/* then a burst of frames we sent to ourselves (nic.c, loopback) */
	n = (uint16_t)(n + nic_loop_take(nic, pkts + n, SNIC_BURST));

	for (uint16_t i = 0; i < n; i++) {
		struct snic_qp *qp;

		CNT_INC(nic, rx_frames);
		CNT_ADD(nic, rx_bytes, pkts[i]->len);
		qp = rx_one(nic, pkts[i]);
		if (qp && (nacks == 0 || acks[nacks - 1] != qp))
			acks[nacks++] = qp;
	}
	if (n)
		nic->ops->pkt_free(nic->hal_ctx, pkts, n);
	for (unsigned i = 0; i < nacks; i++)
		resp_flush_acks(nic, acks[i]);
	return n;
}
