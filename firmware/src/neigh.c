/* SPDX-License-Identifier: MIT */
/*
 * Neighbour resolution for RoCEv2 over IPv4: a small ARP (RFC 826) cache,
 * requests for unknown destinations, replies for our own address.  On a
 * real NIC the host's network stack does this; here the NIC is the whole
 * network stack, so the firmware keeps it.
 */
#include <string.h>

#include "nic.h"

#define ARP_LEN      28
#define ARP_FRAME    60 /* minimum Ethernet frame without FCS */

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

bool neigh_lookup(struct snic_nic *nic, uint32_t ip, uint8_t mac[6])
{
	if (ip == nic->cfg.ipv4) { /* our own address: loopback (nic.c) */
		memcpy(mac, nic->cfg.mac, 6);
		return true;
	}
	for (uint32_t i = 0; i < SNIC_NEIGH_SIZE; i++) {
		if (nic->neigh[i].valid && nic->neigh[i].ip == ip) {
			memcpy(mac, nic->neigh[i].mac, 6);
			return true;
		}
	}
	return false;
}

/* Refresh QPs that waited for this address. */
static void neigh_update_qps(struct snic_nic *nic, uint32_t ip,
			     const uint8_t mac[6])
{
	for (uint32_t i = 0; i < SNIC_MAX_QP; i++) {
		struct snic_qp *qp = &nic->qps[i];

		if (!qp->in_use || qp->dip != ip)
			continue;
		if (qp->dmac_valid && memcmp(qp->dmac, mac, 6) == 0)
			continue;
		memcpy(qp->dmac, mac, 6);
		qp->dmac_valid = true;
		if (qp->state == SNIC_QPS_RTS)
			qp_req_schedule(nic, qp);
	}
}

void neigh_learn(struct snic_nic *nic, uint32_t ip, const uint8_t mac[6])
{
	struct snic_neigh *slot = NULL;

	for (uint32_t i = 0; i < SNIC_NEIGH_SIZE; i++) {
		if (nic->neigh[i].valid && nic->neigh[i].ip == ip) {
			if (memcmp(nic->neigh[i].mac, mac, 6) == 0)
				return;
			slot = &nic->neigh[i];
			break;
		}
	}
	if (!slot)
		slot = &nic->neigh[nic->neigh_next++ % SNIC_NEIGH_SIZE];
	slot->ip = ip;
	memcpy(slot->mac, mac, 6);
	slot->valid = true;
	CNT_INC(nic, neigh_learned);
	/* rare (once per peer): a scan of the QP table is fine here */
	neigh_update_qps(nic, ip, mac);
}

static void arp_send(struct snic_nic *nic, uint16_t oper, const uint8_t *dmac,
		     const uint8_t *tha, uint32_t tip)
{
	struct snic_pkt *p = nic_pkt_alloc(nic);
	uint8_t *f;

	if (!p)
		return;
	f = p->data;
	memset(f, 0, ARP_FRAME);
	memcpy(f, dmac, 6);
	memcpy(f + 6, nic->cfg.mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f += ROCE_ETH_HLEN;
	f[1] = 1;            /* htype Ethernet */
	f[2] = 0x08;         /* ptype IPv4 */
	f[4] = 6;
	f[5] = 4;
	f[7] = (uint8_t)oper;
	memcpy(f + 8, nic->cfg.mac, 6);
	wr32(f + 14, nic->cfg.ipv4);
	memcpy(f + 18, tha, 6);
	wr32(f + 24, tip);
	p->len = ARP_FRAME;
	nic_tx(nic, p);
}

void neigh_resolve(struct snic_nic *nic, uint32_t ip)
{
	static const uint8_t zero[6];

	CNT_INC(nic, arp_requests_sent);
	arp_send(nic, 1, bcast, zero, ip);
}

void neigh_rx_arp(struct snic_nic *nic, struct snic_pkt *pkt)
{
	const uint8_t *a = pkt->data + ROCE_ETH_HLEN;
	uint32_t spa, tpa;

	CNT_INC(nic, rx_arp);
	if (pkt->len < ROCE_ETH_HLEN + ARP_LEN || a[0] != 0 || a[1] != 1 ||
	    a[2] != 0x08 || a[3] != 0 || a[4] != 6 || a[5] != 4) {
		CNT_INC(nic, rx_drop_not_roce);
		return;
	}
	spa = rd32(a + 14);
	tpa = rd32(a + 24);
	if (spa != 0 && spa != nic->cfg.ipv4)
		neigh_learn(nic, spa, a + 8);
	if (a[7] == 1 && tpa == nic->cfg.ipv4) {
		CNT_INC(nic, arp_replies_sent);
		arp_send(nic, 2, a + 8, a + 8, spa);
	}
}

/* Gratuitous ARP (a request for our own address): peers that cached an
 * older MAC for our IP, or restarted, learn the current one at once. */
void neigh_announce(struct snic_nic *nic)
{
	static const uint8_t zero[6];

	CNT_INC(nic, arp_requests_sent);
	arp_send(nic, 1, bcast, zero, nic->cfg.ipv4);
}
