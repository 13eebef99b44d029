/* SPDX-License-Identifier: MIT */
/*
 * What a received frame is: ARP, a RoCEv2 packet for us (parsed and
 * checked by the codec), or a drop counted by its reason.
 */
#include "wire/wire.h"

static void count_parse_drop(struct snic_core *c, enum roce_parse_result r)
{
	switch (r) {
	case ROCE_NOT_ROCE: CNT_INC(c, rx_drop_not_roce); break;
	case ROCE_ERR_TRUNCATED: CNT_INC(c, rx_drop_truncated); break;
	case ROCE_ERR_IP_HDR: CNT_INC(c, rx_drop_ip_hdr); break;
	case ROCE_ERR_UDP_LEN: CNT_INC(c, rx_drop_udp_len); break;
	case ROCE_ERR_BAD_OPCODE: CNT_INC(c, rx_drop_bad_opcode); break;
	case ROCE_ERR_BTH: CNT_INC(c, rx_drop_bth); break;
	case ROCE_ERR_ICRC: CNT_INC(c, rx_drop_icrc); break;
	case ROCE_OK: break;
	}
}

static bool is_arp(const struct snic_pkt *p)
{
	return p->len >= ROCE_ETH_HLEN && p->data[12] == 0x08 &&
	       p->data[13] == 0x06;
}

enum wire_rx_kind wire_classify(struct snic_core *c, const struct snic_pkt *p,
				struct roce_hdrs *h)
{
	enum roce_parse_result r;

	if (is_arp(p))
		return WIRE_RX_ARP;
	r = roce_parse(p->data, p->len, h);
	if (r != ROCE_OK) {
		count_parse_drop(c, r);
		return WIRE_RX_DROP;
	}
	if (h->dip != c->cfg.ipv4) {
		CNT_INC(c, rx_drop_not_for_us);
		return WIRE_RX_DROP;
	}
	return WIRE_RX_ROCE;
}
