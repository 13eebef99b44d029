/* SPDX-License-Identifier: MIT */
/*
 * UD multicast on the wire (IBTA 10.5; RoCE v2 A17.4.5 maps a group's
 * GID to an IPv4 multicast address).  A send to a group leaves once
 * through the port, to the group's Ethernet address, and a copy goes
 * round to this NIC's own receive path when a QP here joined the group
 * (the loopback a real NIC does).  A received datagram for a group goes
 * to each member QP in turn, through the same UD receive (Q_Key, RECV,
 * GRH) as a unicast one; DestQP must be 0xFFFFFF (IBTA 9.6.1.4.1).
 */
#include "transport/transport.h"

/* A datagram to a group (sq.c, before the frame is queued for the port). */
void ud_mcast_loop(struct snic_nic *nic, const struct snic_pkt *p, uint32_t dip)
{
	if (mcast_group(nic, dip))
		core_loop_copy(&nic->core, p);
}

/* Member i of g, unless it is the sender and blocks its own loopback
 * (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB). */
static struct snic_qp *member_qp(struct snic_nic *nic,
				 const struct snic_mcast_grp *g, int i,
				 const struct roce_hdrs *h)
{
	if (((g->block_self >> i) & 1u) && h->sip == nic->core.cfg.ipv4 &&
	    h->deth_sqpn == g->qpn[i])
		return NULL;
	return qp_by_qpn(nic, g->qpn[i]);
}

void ud_mcast_rx(struct snic_nic *nic, const struct snic_pkt *p,
		 const struct roce_hdrs *h)
{
	const struct snic_mcast_grp *g = mcast_group(nic, h->dip);

	if (!g) {
		CNT_INC(&nic->core, rx_drop_mcast_not_joined);
		return;
	}
	if (h->dqpn != SNIC_MCAST_QPN) {
		CNT_INC(&nic->core, rx_drop_unknown_qpn);
		return;
	}
	if (!roce_pkey_match(h->pkey, ROCE_DEFAULT_PKEY)) { /* IBTA 10.9.3 */
		CNT_INC(&nic->core, rx_drop_pkey);
		return;
	}
	CNT_INC(&nic->core, rx_mcast_frames);
	for (int i = 0; i < g->n; i++) {
		struct snic_qp *qp = member_qp(nic, g, i, h);

		if (!qp)
			continue;
		qp->qcnt[SNIC_QCNT_rx_frames]++;
		qp->qcnt[SNIC_QCNT_rx_bytes] += p->len;
		ud_rx(nic, qp, h);
	}
}
