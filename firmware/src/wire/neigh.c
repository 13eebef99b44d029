/* SPDX-License-Identifier: MIT */
/*
 * Neighbour resolution for RoCEv2 over IPv4: a small ARP (RFC 826) cache,
 * requests for unknown destinations, replies for our own address.  On a
 * real NIC the host's network stack does this; here the NIC is the whole
 * network stack, so the firmware keeps it.
 */
#include <string.h>

#include "wire/wire.h"

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

void neigh_init(struct snic_neigh_tbl *t, struct snic_core *core)
{
	t->core = core;
}

bool neigh_lookup(struct snic_neigh_tbl *t, uint32_t ip, uint8_t mac[6])
{
	if (ip == t->core->cfg.ipv4) { /* our own address: loopback (core/tx.c) */
		memcpy(mac, t->core->cfg.mac, 6);
		return true;
	}
	for (uint32_t i = 0; i < SNIC_NEIGH_SIZE; i++) {
		if (t->ent[i].valid && t->ent[i].ip == ip) {
			memcpy(mac, t->ent[i].mac, 6);
			return true;
		}
	}
	return false;
}

bool neigh_learn(struct snic_neigh_tbl *t, uint32_t ip, const uint8_t mac[6])
{
	struct snic_neigh *slot = NULL;

	for (uint32_t i = 0; i < SNIC_NEIGH_SIZE; i++) {
		if (t->ent[i].valid && t->ent[i].ip == ip) {
			if (memcmp(t->ent[i].mac, mac, 6) == 0)
				return false;
			slot = &t->ent[i];
			break;
		}
	}
	if (!slot)
		slot = &t->ent[t->next++ % SNIC_NEIGH_SIZE];
	slot->ip = ip;
	memcpy(slot->mac, mac, 6);
	slot->valid = true;
	CNT_INC(t->core, neigh_learned);
	return true;
}

static void arp_send(struct snic_core *c, uint16_t oper, const uint8_t *dmac,
		     const uint8_t *tha, uint32_t tip)
{
	struct snic_pkt *p = core_pkt_alloc(c);
	uint8_t *f;

	if (!p)
		return;
	f = p->data;
	memset(f, 0, ARP_FRAME);
	memcpy(f, dmac, 6);
	memcpy(f + 6, c->cfg.mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	f += ROCE_ETH_HLEN;
	f[1] = 1;            /* htype Ethernet */
	f[2] = 0x08;         /* ptype IPv4 */
	f[4] = 6;
	f[5] = 4;
	f[7] = (uint8_t)oper;
	memcpy(f + 8, c->cfg.mac, 6);
	wr32(f + 14, c->cfg.ipv4);
	memcpy(f + 18, tha, 6);
	wr32(f + 24, tip);
	p->len = ARP_FRAME;
	core_tx_ctl(c, p); /* never behind a data burst */
}

void neigh_resolve(struct snic_neigh_tbl *t, uint32_t ip)
{
	static const uint8_t zero[6];

	CNT_INC(t->core, arp_requests_sent);
	arp_send(t->core, 1, bcast, zero, ip);
}

bool neigh_rx_arp(struct snic_neigh_tbl *t, struct snic_pkt *pkt,
		  uint32_t *ip, uint8_t mac[6])
{
	struct snic_core *c = t->core;
	const uint8_t *a = pkt->data + ROCE_ETH_HLEN;
	uint32_t spa, tpa;
	bool learnt = false;

	CNT_INC(c, rx_arp);
	if (pkt->len < ROCE_ETH_HLEN + ARP_LEN || a[0] != 0 || a[1] != 1 ||
	    a[2] != 0x08 || a[3] != 0 || a[4] != 6 || a[5] != 4) {
		CNT_INC(c, rx_drop_not_roce);
		return false;
	}
	spa = rd32(a + 14);
	tpa = rd32(a + 24);
	if (spa != 0 && spa != c->cfg.ipv4 && neigh_learn(t, spa, a + 8)) {
		*ip = spa;
		memcpy(mac, a + 8, 6);
		learnt = true;
	}
	if (a[7] == 1 && tpa == c->cfg.ipv4) {
		CNT_INC(c, arp_replies_sent);
		arp_send(c, 2, a + 8, a + 8, spa);
	}
	return learnt;
}

/* Gratuitous ARP (a request for our own address): peers that cached an
 * older MAC for our IP, or restarted, learn the current one at once. */
void neigh_announce(struct snic_neigh_tbl *t)
{
	static const uint8_t zero[6];

	CNT_INC(t->core, arp_requests_sent);
	arp_send(t->core, 1, bcast, zero, t->core->cfg.ipv4);
}

uint32_t gid_to_ipv4(const uint8_t gid[16], bool *ok)
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					   0xff, 0xff };

	*ok = memcmp(gid, v4map, 12) == 0;
	return rd32(gid + 12);
}
