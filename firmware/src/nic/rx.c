/* SPDX-License-Identifier: MIT */
/*
 * Receive: a burst from the port and one of our own loopback, then the
 * port's further bursts while they come full, up to SNIC_RX_BUDGET frames
 * a pass (the looped-back ones counted); each frame classified by the
 * wire layer, then handed to the transport of its QP: the responder
 * (requests) or the completer (responses) for RC, the QP type's receive
 * routine otherwise.  ACKs owed are sent once at the pass's end
 * (coalescing: IBTA 9.7.5.1.2 allows one ACK for several requests).
 */
#include "nic/top.h"
#include "nic/cm.h"
#include "transport/rc_write_only.h"

/* ARP, or IPv6 neighbour discovery (the classifier let only those by) */
static void rx_arp(struct snic_nic *nic, struct snic_pkt *p)
{
	uint8_t mac[6], ip[16];
	bool learnt = p->data[12] == 0x08
		? neigh_rx_arp(nic->neigh, p, ip, mac)
		: ndisc_rx(nic->neigh, p, ip, mac);

	/* rare (once per peer): a scan of the QP table is fine here */
	if (learnt)
		qp_neigh_update(nic, ip, mac);
	netdev_rx_arp(nic, p);
}

/* The QP's P_Key (pkey_index 0: the one entry of the table, the default
 * P_Key) before the transport sees anything (IBTA 10.9.3); the frame
 * counted to the QP that takes it. */
static bool rx_qp_takes(struct snic_nic *nic, struct snic_qp *qp,
			const struct snic_pkt *p, const struct roce_hdrs *h)
{
	if (!roce_pkey_match(h->pkey, ROCE_DEFAULT_PKEY)) {
		CNT_INC(&nic->core, rx_drop_pkey);
		return false;
	}
	qp->qcnt[SNIC_QCNT_rx_frames]++;
	qp->qcnt[SNIC_QCNT_rx_bytes] += p->len;
	return true;
}

/* A WRITE or READ response MIDDLE or LAST, or a SEND MIDDLE, whose ICRC
 * the parse left for later: to the responder's or the completer's step
 * that checks it in the payload's copy (resp_more, comp_read_more), when
 * its QP is an RC QP of that peer and the HAL can.  True: done with
 * (placed, or dropped for a bad ICRC), *ack the QP that may owe an ACK
 * for it (a request: as rc_rx says).  False: checked here, good, and on
 * its usual way (nothing changed).  Out of line: a call per large frame
 * costs nothing, and in line it left rx_poll too big for the parse to
 * be inlined there (+32 instructions on a 64-B WRITE). */
static __attribute__((noinline))
bool rx_fold(struct snic_nic *nic, struct snic_pkt *p, struct roce_hdrs *h,
	     struct snic_qp **ack)
{
	struct snic_qp *qp = qp_by_qpn(nic, h->dqpn);

	*ack = NULL;
	if (qp && qp->type == SNIC_QPT_RC && qp_peer_is(qp, h) &&
	    nic->core.ops->dma_write_crc &&
	    roce_pkey_match(h->pkey, ROCE_DEFAULT_PKEY)) {
		bool req = roce_opcodes[h->opcode].flags & ROCE_F_REQ;

		switch (req ? resp_more(nic, qp, h) : comp_read_more(nic, qp, h)) {
		case RX_FOLD_PLACED:
			rx_qp_takes(nic, qp, p, h);
			*ack = req && qp->resp.ack_pending ? qp : NULL;
			return true;
		case RX_FOLD_BAD_ICRC:
			CNT_INC(&nic->core, rx_drop_icrc);
			return true;
		case RX_FOLD_DECLINED:
			break;
		}
	}
	return !wire_icrc_settle(&nic->core, h);
}

/* Returns the QP that may owe an ACK, or NULL.  h as
 * roce_parse_rx_first leaves it goes to the one steps only (its ICRC
 * maybe not checked yet: rx_fold); anything else gets it
 * checked and finished (roce_parse_rx_finish). */
static struct snic_qp *rx_one(struct snic_nic *nic, struct snic_pkt *p)
{
	struct roce_hdrs h;
	struct snic_qp *qp;

	/* flows first: frames steered to raw QPs (objects/flow.c says
	 * which, and keeps ARP and RoCE out unless named) */
	if (nic->sh->nflows && raw_rx_steer(nic, p))
		return NULL;
	switch (wire_classify(&nic->core, p, &h)) {
	case WIRE_RX_DROP:
		return NULL;
	case WIRE_RX_ARP:
		rx_arp(nic, p);
		return NULL;
	case WIRE_RX_ROCE_MCAST: /* to every QP that joined (ud_mcast.c) */
		ud_mcast_rx(nic, p, &h);
		return NULL;
	case WIRE_RX_OTHER:
		netdev_rx(nic, p);
		return NULL;
	case WIRE_RX_ROCE:
		break;
	}
	if (h.icrc_later && rx_fold(nic, p, &h, &qp))
		return qp;
	if (h.dqpn == SNIC_GSI_QPN) { /* QP1: the CM router (cm_router.c) */
		roce_parse_rx_finish(&h);
		cm_rx(nic, &h);
		return NULL;
	}
	qp = qp_by_qpn(nic, h.dqpn);
	if (!qp) {
		roce_parse_rx_finish(&h);
		if (!resp_linger_rx(nic, &h))
			CNT_INC(&nic->core, rx_drop_unknown_qpn);
		return NULL;
	}
	if (!rx_qp_takes(nic, qp, p, &h))
		return NULL;
	/* RC, the usual type, calls its routine (ops.c) directly rather than
	 * through the table; the usual request goes straight to the
	 * responder's one step: of rc_rx's checks the opcode answers two (an
	 * RC request), the peer's is asked here; anything else, and a
	 * WRITE_ONLY that step does not take (nothing changed then), goes
	 * through rc_rx */
	if (qp->type == SNIC_QPT_RC) {
		if (h.opcode == ROCE_RC_WRITE_ONLY) {
			if (qp_peer_is(qp, &h) && resp_write_only(nic, qp, &h))
				return qp->resp.ack_pending ? qp : NULL;
			roce_parse_rx_finish(&h); /* no other opcode needs it */
		}
		return rc_rx(nic, qp, &h) ? qp : NULL;
	}
	roce_parse_rx_finish(&h);
	return xport_of(qp)->rx(nic, qp, &h) ? qp : NULL;
}

unsigned rx_poll(struct snic_nic *nic)
{
	struct snic_core *c = &nic->core;
	struct snic_pkt *pkts[2 * SNIC_BURST];
	struct snic_qp *acks[SNIC_RX_BUDGET + 2 * SNIC_BURST];
	uint16_t n = c->ops->rx_burst(c->hal_ctx, 0, pkts, SNIC_BURST), k;
	struct snic_qp *last = NULL;    /* acks[nacks - 1], in a register */
	unsigned nacks = 0, total = 0;

	/* then a burst of frames we sent to ourselves (core/tx.c, loopback) */
	k = (uint16_t)(n + core_loop_take(c, pkts + n, SNIC_BURST));
	for (;;) {
		for (uint16_t i = 0; i < k; i++) {
			struct snic_qp *qp;

			CNT_INC(c, rx_frames);
			CNT_ADD(c, rx_bytes, pkts[i]->len);
			core_trace(c, SNIC_TR_RX, pkts[i]->len);
			qp = rx_one(nic, pkts[i]);
			core_trace(c, SNIC_TR_RX_DONE, pkts[i]->len);
			if (qp && qp != last)
				acks[nacks++] = last = qp;
		}
		if (k)
			c->ops->pkt_free(c->hal_ctx, pkts, k);
		total += k;
		/* the port's next burst while they come full (one QP sending
		 * seldom fills one: SNIC_QP_TX_BUDGET frames a turn) */
		if (n != SNIC_BURST || total >= SNIC_RX_BUDGET)
			break;
		k = n = c->ops->rx_burst(c->hal_ctx, 0, pkts, SNIC_BURST);
	}
	for (unsigned i = 0; i < nacks; i++)
		resp_flush_acks(nic, acks[i]);
	return total;
}
