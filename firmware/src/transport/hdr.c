/* SPDX-License-Identifier: MIT */
/*
 * Building a QP's RoCEv2 frames: addresses and BTH fields, from the QP's
 * path (RC, UC) or from a WQE's address handle (UD).
 */
#include <string.h>

#include "transport/transport.h"

static inline void fill_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
			     struct roce_hdrs *h, const struct snic_dest *d,
			     uint8_t opcode, uint32_t psn)
{
	/* every frame of a QP starts here: count it for the QP (the NIC
	 * counts frames when the port takes them) */
	qp->qcnt[SNIC_QCNT_tx_frames]++;
	memset(h, 0, ROCE_HDRS_CLEAR); /* sip6/dip6: set below when used */
	memcpy(h->dmac, d->dmac, 6);
	memcpy(h->smac, nic->core.cfg.mac, 6);
	if (d->dip6) {
		h->ip6 = 1;
		memcpy(h->sip6, nic->core.cfg.ipv6, 16);
		memcpy(h->dip6, d->dip6, 16);
		h->flow_label = d->flow_label;
	} else {
		h->sip = nic->core.cfg.ipv4;
		h->dip = d->dip;
	}
	h->tos = d->tos;
	h->ttl = d->hop_limit ? d->hop_limit : 64;
	h->sport = qp->sport;
	/* an XRC target answers in the XRC class (Annex A14): its ACKs and
	 * READ/atomic responses are RC's, opcode | 0xa0 */
	h->opcode = qp->type == SNIC_QPT_XRC_RECV ? opcode | ROCE_XRC_BASE
						 : opcode;
	h->pkey = ROCE_DEFAULT_PKEY;
	h->dqpn = d->dqpn & ROCE_QPN_MASK;
	h->psn = psn & ROCE_PSN_MASK;
}

void pkt_fill_hdrs_to(const struct snic_nic *nic, struct snic_qp *qp,
		      struct roce_hdrs *h, const struct snic_dest *d,
		      uint8_t opcode, uint32_t psn)
{
	fill_hdrs(nic, qp, h, d, opcode, psn);
}

/* A connected QP's packet: to the peer of its path. */
void pkt_fill_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
		   struct roce_hdrs *h, uint8_t opcode, uint32_t psn)
{
	const struct snic_dest d = {
		.dmac = qp->dmac, .dip = qp->dip, .dqpn = qp->attr.dest_qp_num,
		.dip6 = qp->ip6 ? qp->attr.dgid : NULL,
		.flow_label = qp->attr.flow_label,
		.tos = qp->attr.traffic_class, .hop_limit = qp->attr.hop_limit,
	};

	fill_hdrs(nic, qp, h, &d, opcode, psn);
}

/* A frame with the payload copied from `payload` (may be NULL when len is
 * 0).  Data-path callers that DMA straight into the frame use roce_build
 * themselves. */
struct snic_pkt *pkt_build(struct snic_nic *nic, struct roce_hdrs *h,
			   const void *payload, uint32_t len)
{
	struct snic_pkt *p = core_pkt_alloc(&nic->core);

	if (!p)
		return NULL;
	if (len)
		memcpy(p->data + roce_hdrs_len(h), payload, len);
	p->len = (uint16_t)roce_build(p->data, h, len);
	return p;
}
