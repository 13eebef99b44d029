/* SPDX-License-Identifier: MIT */
/*
 * Building a QP's RoCEv2 frames: addresses and BTH fields, from the QP's
 * path (RC, UC) or from a WQE's address handle (UD).
 */
#include <string.h>

#include "transport/transport.h"

static inline void fill_addr(const struct snic_nic *nic,
			     const struct snic_qp *qp, struct roce_hdrs *h,
			     const struct snic_dest *d)
{
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
}

void pkt_fill_hdrs_to(const struct snic_nic *nic, struct snic_qp *qp,
		      struct roce_hdrs *h, const struct snic_dest *d,
		      uint8_t opcode, uint32_t psn)
{
	memset(h, 0, ROCE_HDRS_CLEAR); /* sip6/dip6: set below when used */
	pkt_bth_hdrs(qp, h, d->dqpn, opcode, psn);
	fill_addr(nic, qp, h, d);
}

/* The peer of a connected QP's path. */
static inline struct snic_dest qp_dest(const struct snic_qp *qp)
{
	return (struct snic_dest){
		.dmac = qp->dmac, .dip = qp->dip, .dqpn = qp->attr.dest_qp_num,
		.dip6 = qp->ip6 ? qp->attr.dgid : NULL,
		.flow_label = qp->attr.flow_label,
		.tos = qp->attr.traffic_class, .hop_limit = qp->attr.hop_limit,
	};
}

/* A connected QP's packet: to the peer of its path. */
void pkt_fill_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
		   struct roce_hdrs *h, uint8_t opcode, uint32_t psn)
{
	const struct snic_dest d = qp_dest(qp);

	pkt_fill_hdrs_to(nic, qp, h, &d, opcode, psn);
}

/* Make the QP's template again when its path changed: qp_path_changed
 * clears valid whenever a field the template was made from changes (path,
 * MAC, QP reset); the NIC's own addresses are fixed at boot. */
static inline void tmpl_refresh(const struct snic_nic *nic, struct snic_qp *qp)
{
	if (__builtin_expect(!qp->tmpl.valid, 0)) {
		const struct snic_dest d = qp_dest(qp);
		struct roce_hdrs a;

		memset(&a, 0, ROCE_HDRS_CLEAR);
		fill_addr(nic, qp, &a, &d);
		roce_tmpl_make(&qp->tmpl, &a);
		/* core_tx_is_loop's test, once per path (the core's loopback
		 * MAC is set at boot, before any QP) */
		qp->tmpl.loop = !memcmp(a.dmac, nic->core.loop_mac, 6);
	}
}

uint32_t pkt_build_qp(const struct snic_nic *nic, struct snic_qp *qp,
		      uint8_t *frame, struct roce_hdrs *h, uint32_t len)
{
	if (qp->ip6) {
		const struct snic_dest d = qp_dest(qp);

		fill_addr(nic, qp, h, &d);
		return roce_build(frame, h, len);
	}
	tmpl_refresh(nic, qp);
	return roce_build_tmpl(frame, &qp->tmpl, h, len);
}

/* pkt_build_qp_req's template when the QP's is not valid (transport.h). */
void pkt_tmpl_refresh(const struct snic_nic *nic, struct snic_qp *qp)
{
	tmpl_refresh(nic, qp);
}

uint32_t pkt_build_qp_hdrs(const struct snic_nic *nic, struct snic_qp *qp,
			   uint8_t *frame, struct roce_hdrs *h, uint32_t len)
{
	if (qp->ip6)
		return 0;
	tmpl_refresh(nic, qp);
	return roce_build_tmpl_hdrs(frame, &qp->tmpl, h, len);
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

struct snic_pkt *pkt_build_qp_ctl(struct snic_nic *nic, struct snic_qp *qp,
				  struct roce_hdrs *h)
{
	struct snic_pkt *p = core_pkt_alloc(&nic->core);

	if (p)
		p->len = (uint16_t)pkt_build_qp(nic, qp, p->data, h, 0);
	return p;
}
