/* SPDX-License-Identifier: MIT */
/*
 * UD, the unreliable datagram service (IBTA 9.8.3).  No ACKs, retries or
 * responder resources: a send completes once its packet is queued, and
 * the receiver drops what it cannot take (counted).
 *
 * One packet per message (up to the port's MTU) with a DETH carrying the
 * Q_Key and the source QPN; the destination comes from each WQE (the
 * host's address handle), its MAC from the ARP cache.  A packet whose
 * Q_Key differs from the QP's is dropped and counted (C10-15).  The
 * receive buffer starts with the 40-byte GRH area: 20 zero bytes, then the
 * IPv4 header of the packet (RoCE v2 over IPv4, as Linux rxe and mlx5 do),
 * or the packet's IPv6 header (RoCE v2 over IPv6).  The AH's GID decides
 * the family of a datagram: IPv4-mapped or IPv6.
 */
#include <string.h>

#include "transport/transport.h"

/* ARP requests for a UD destination before its datagram is given up as
 * lost (one every SNIC_ARP_RETRY_NS: about a second). */
#define UD_ARP_TRIES 10

enum ud_route { UD_ROUTED, UD_ARP_WAIT, UD_UNROUTABLE, UD_NO_NEIGH };

/* Headers from the WQE's address handle. */
static enum ud_route ud_hdrs(struct snic_nic *nic, struct snic_qp *qp,
			     struct roce_hdrs *h)
{
	struct snic_req_cur *cur = &qp->cur;
	const struct snic_wqe_ud *a =
		(const struct snic_wqe_ud *)(const void *)&cur->hdr.raddr;
	uint8_t mac[6], nh[16];
	bool v4;
	struct snic_dest d = { .dmac = mac, .dqpn = a->remote_qpn,
			       .tos = a->traffic_class, .hop_limit = a->hop_limit,
			       .flow_label = a->flow_label };

	/* the AH's GID decides the family: mapped IPv4, or IPv6 from our
	 * IPv6 address (GID 1) */
	d.dip = gid_to_ipv4(a->dgid, &v4);
	if (!v4) {
		if (!gid_is_ip6_unicast(a->dgid) ||
		    !wire_is_my_ip6(&nic->core, nic->core.cfg.ipv6))
			return UD_UNROUTABLE;
		d.dip6 = a->dgid;
		d.dip = 0;
	}
	if (v4 && ipv4_is_mcast(d.dip)) {
		ipv4_mcast_mac(d.dip, mac); /* no ARP for a group */
	} else if (route_next_hop(&nic->core, a->dgid, NULL, nh),
		   !neigh_lookup_addr(nic->neigh, nh, mac)) {
		/* an AH carries no next hop: the NIC's routes (route.c) */
		if (nic->core.now >= qp->arp_next_ns && cur->npkts++ >= UD_ARP_TRIES)
			return UD_NO_NEIGH;
		sq_arp_retry(nic, qp, nh);
		return UD_ARP_WAIT;
	}
	pkt_fill_hdrs_to(nic, qp, h, &d, cur->hdr.ctrl.opcode == SNIC_WR_SEND
			 ? ROCE_UD_SEND_ONLY : ROCE_UD_SEND_ONLY_IMM, qp->npsn);
	sq_fill_ext(cur, h);
	h->deth_qkey = (a->remote_qkey & 0x80000000u) ? qp->attr.qkey : a->remote_qkey;
	h->deth_sqpn = qp->qpn;
	return UD_ROUTED;
}

/* The datagram of the current WQE; false while waiting (buffer, ARP). */
static bool ud_send(struct snic_nic *nic, struct snic_qp *qp)
{
	struct roce_hdrs h;

	switch (ud_hdrs(nic, qp, &h)) {
	case UD_ROUTED:
		return sq_unrel_packet(nic, qp, &h, nic->core.active_mtu);
	case UD_ARP_WAIT:
		return false;
	case UD_NO_NEIGH:
		/* unreliable datagram: lost on the way, not an error of the
		 * QP (which may talk to many other peers) */
		CNT_INC(&nic->core, tx_drop_no_neigh);
		sq_complete(nic, qp, SNIC_WC_SUCCESS);
		return true;
	case UD_UNROUTABLE:
		break;
	}
	sq_complete(nic, qp, SNIC_WC_LOC_QP_OP_ERR);
	return true;
}

/* The requester's turn (req_poll); true to stay scheduled. */
bool ud_req_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->state != SNIC_QPS_RTS)
		return false;
	return sq_unrel_run(nic, qp, nic->core.active_mtu, ud_send);
}

/* The GRH area and the payload into the RECV's buffer. */
static uint8_t ud_deliver(struct snic_nic *nic, struct snic_qp *qp,
			  const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	const uint8_t *frame = h->payload - roce_hdrs_len(h);
	uint8_t grh[SNIC_GRH_LEN];

	if (r->rsgl.total < SNIC_GRH_LEN + h->payload_len)
		return SNIC_WC_LOC_LEN_ERR;
	if (h->ip6) {           /* the whole IPv6 header is the GRH */
		memcpy(grh, frame + ROCE_ETH_HLEN, ROCE_IPV6_HLEN);
	} else {
		memset(grh, 0, 20);
		memcpy(grh + 20, frame + ROCE_ETH_HLEN, ROCE_IPV4_HLEN);
	}
	if (sgl_copy_in(nic, &r->rsgl, grh, SNIC_GRH_LEN) ||
	    (h->payload_len &&
	     sgl_copy_in(nic, &r->rsgl, h->payload, h->payload_len)))
		return SNIC_WC_LOC_PROT_ERR;
	return SNIC_WC_SUCCESS;
}

static void ud_recv(struct snic_nic *nic, struct snic_qp *qp,
		    const struct roce_hdrs *h)
{
	uint8_t st;

	if (h->deth_qkey != qp->attr.qkey) {
		CNT_INC(&nic->core, rx_drop_qkey); /* C10-15: silently dropped */
		return;
	}
	if (!recv_take(nic, qp, &st)) {
		CNT_INC(&nic->core, rx_drop_no_recv); /* UD: no RNR, the packet is lost */
		return;
	}
	if (st == SNIC_WC_SUCCESS)
		st = ud_deliver(nic, qp, h);
	qp->resp.recv_len = SNIC_GRH_LEN + h->payload_len;
	qp_recv_cqe(nic, qp, st, SNIC_WC_RECV, h);
	/* A datagram longer than the RECV is the sender's doing: that RECV
	 * completes with IBV_WC_LOC_LEN_ERR and the QP lives on (IBTA 9.9.3,
	 * responder errors of the unreliable services: an error of one
	 * message, not of a QP that serves many peers; Linux rxe's "class
	 * D").  Otherwise anyone knowing the QPN and Q_Key could end it. */
	if (st == SNIC_WC_LOC_LEN_ERR)
		CNT_INC(&nic->core, rx_ud_too_long);
	else if (st != SNIC_WC_SUCCESS)
		qp_to_error(nic, qp, SNIC_EV_QP_FATAL);
}

/* A packet for a UD QP (RX dispatch); never owes an ACK. */
bool ud_rx(struct snic_nic *nic, struct snic_qp *qp, const struct roce_hdrs *h)
{
	if (h->opcode != ROCE_UD_SEND_ONLY && h->opcode != ROCE_UD_SEND_ONLY_IMM) {
		CNT_INC(&nic->core, rx_drop_unknown_qpn); /* no such QP of that type */
		return false;
	}
	if (recv_state_ok(nic, qp))
		ud_recv(nic, qp, h);
	return false;
}
