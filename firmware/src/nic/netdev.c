/* SPDX-License-Identifier: MIT */
/*
 * The exception path: the host's network interface for this NIC (a TAP
 * the board made, named after the NIC, with the NIC's MAC and address)
 * sends and receives every frame that is not RoCE through the NIC's port,
 * as the Ethernet side of a RoCE NIC does.
 *
 * Who answers ARP for the NIC's address: the firmware (wire/neigh.c),
 * with or without a host interface, because RoCE depends on it and the
 * host interface may be absent, down, or in another network namespace.
 * So a request for our own address is not given to the host, and an ARP
 * reply the host's kernel makes is not sent: a Linux kernel answers for
 * any of its addresses on any interface (arp_ignore=0), and such a reply
 * would teach the peer a wrong MAC.  Every other ARP frame (replies to the
 * kernel's own requests, gratuitous ARP, requests for other addresses)
 * goes to the host as well, so the kernel's neighbour table fills as on
 * any Ethernet NIC; the firmware learns from them by its own rules.
 */
#include <string.h>

#include "nic/top.h"
#include "wire/be.h"

#define ARP_OPER_OFF  (ROCE_ETH_HLEN + 6)   /* 16-bit operation          */
#define ARP_TPA_OFF   (ROCE_ETH_HLEN + 24)  /* target protocol address   */
#define ARP_MIN_FRAME (ROCE_ETH_HLEN + 28)
#define ETH_VLAN_LEN  4u

static bool is_arp(const uint8_t *f, uint32_t len, uint16_t oper)
{
	return len >= ARP_MIN_FRAME && f[12] == 0x08 && f[13] == 0x06 &&
	       f[ARP_OPER_OFF] == 0 && f[ARP_OPER_OFF + 1] == oper;
}

void netdev_rx(struct snic_nic *nic, const struct snic_pkt *p)
{
	struct snic_core *c = &nic->core;

	if (c->ops->netdev_rx == NULL) {
		CNT_INC(c, rx_drop_not_roce);
		return;
	}
	CNT_INC(c, netdev_rx_frames);
	c->ops->netdev_rx(c->hal_ctx, p->port, p);
}

void netdev_rx_arp(struct snic_nic *nic, const struct snic_pkt *p)
{
	/* a request for our address: answered by neigh_rx_arp already */
	if (is_arp(p->data, p->len, 1) &&
	    be32_get(p->data + ARP_TPA_OFF) == nic->core.cfg.ipv4)
		return;
	if (nic->core.ops->netdev_rx != NULL)
		netdev_rx(nic, p);
}

int snic_nic_netdev_tx(struct snic_nic *nic, const void *frame, uint32_t len)
{
	struct snic_core *c = &nic->core;
	const uint8_t *f = frame;
	struct snic_pkt *p;

	/* the host's interface has the NIC's MAC and MTU (a VLAN tag
	 * allowed); anything else is not a frame this port sends */
	if (len < ROCE_ETH_HLEN ||
	    len > c->cfg.eth_mtu + ROCE_ETH_HLEN + ETH_VLAN_LEN ||
	    memcmp(f + 6, c->cfg.mac, 6) != 0) {
		CNT_INC(c, netdev_tx_drop_bad_frame);
		return -1;
	}
	if (is_arp(f, len, 2)) {
		CNT_INC(c, netdev_tx_drop_arp_reply);
		return -1;
	}
	p = core_pkt_alloc(c);
	if (p == NULL)
		return -1;      /* counted: tx_no_buffer */
	if (len > p->cap) {
		core_pkt_unused(c, p);
		CNT_INC(c, netdev_tx_drop_bad_frame);
		return -1;
	}
	memcpy(p->data, f, len);
	p->len = (uint16_t)len;
	CNT_INC(c, netdev_tx_frames);
	core_tx(c, p);
	return 0;
}
