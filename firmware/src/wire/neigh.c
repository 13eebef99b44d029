/* SPDX-License-Identifier: MIT */
/*
 * Neighbour resolution for RoCEv2: a small cache of 16-byte addresses
 * (IPv6, or IPv4 mapped) shared with IPv6 neighbour discovery (ndisc.c),
 * and ARP (RFC 826) for IPv4:
 * requests for unknown destinations, replies for our own address; an
 * address is learnt from the answer to our own request, or, when it is
 * not known yet, from a request for our own address (RFC 826; see
 * neigh_may_learn), and ARP is rate-limited.  On a
 * real NIC the host's network stack does this; here the NIC is the whole
 * network stack, so the firmware keeps it.
 */
#include <string.h>

#include "wire/be.h"
#include "wire/wire.h"

#define ARP_LEN      28
#define ARP_FRAME    60 /* minimum Ethernet frame without FCS */

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };


void neigh_init(struct snic_neigh_tbl *t, struct snic_core *core)
{
	t->core = core;
}

static struct snic_neigh *neigh_find(struct snic_neigh_tbl *t,
				     const uint8_t a[16])
{
	for (uint32_t i = 0; i < SNIC_NEIGH_SIZE; i++)
		if ((t->ent[i].valid || t->ent[i].asked) &&
		    memcmp(t->ent[i].ip, a, 16) == 0)
			return &t->ent[i];
	return NULL;
}

/* The entry of a, or a new one (the oldest entry made, reused). */
static struct snic_neigh *neigh_slot(struct snic_neigh_tbl *t,
				     const uint8_t a[16])
{
	struct snic_neigh *e = neigh_find(t, a);

	if (e)
		return e;
	e = &t->ent[t->next++ % SNIC_NEIGH_SIZE];
	memset(e, 0, sizeof(*e));
	memcpy(e->ip, a, 16);
	return e;
}

static bool is_mine(const struct snic_core *c, const uint8_t a[16])
{
	bool v4;
	uint32_t ip = gid_to_ipv4(a, &v4);

	return v4 ? ip == c->cfg.ipv4 : wire_is_my_ip6(c, a);
}

bool neigh_lookup_addr(struct snic_neigh_tbl *t, const uint8_t a[16],
		       uint8_t mac[6])
{
	struct snic_neigh *e;

	if (is_mine(t->core, a)) { /* our own address: loopback (core/tx.c) */
		memcpy(mac, t->core->cfg.mac, 6);
		return true;
	}
	e = neigh_find(t, a);
	if (!e || !e->valid)
		return false;
	memcpy(mac, e->mac, 6);
	return true;
}

bool neigh_lookup(struct snic_neigh_tbl *t, uint32_t ip, uint8_t mac[6])
{
	uint8_t a[16];

	ipv4_to_gid(ip, a);
	return neigh_lookup_addr(t, a, mac);
}

bool neigh_learn(struct snic_neigh_tbl *t, const uint8_t a[16],
		 const uint8_t mac[6])
{
	struct snic_neigh *slot = neigh_slot(t, a);

	slot->asked = false; /* answered: a second answer is unsolicited */
	if (slot->valid && memcmp(slot->mac, mac, 6) == 0)
		return false;
	memcpy(slot->mac, mac, 6);
	slot->valid = true;
	CNT_INC(t->core, neigh_learned);
	return true;
}

struct snic_pkt *neigh_frame(struct snic_core *c, uint16_t len,
			     const uint8_t dmac[6], uint16_t ethertype)
{
	struct snic_pkt *p = core_pkt_alloc(c);

	if (!p)
		return NULL;
	memset(p->data, 0, len);
	memcpy(p->data, dmac, 6);
	memcpy(p->data + 6, c->cfg.mac, 6);
	p->data[12] = (uint8_t)(ethertype >> 8);
	p->data[13] = (uint8_t)ethertype;
	p->len = len;
	return p;
}

static void arp_send(struct snic_core *c, uint16_t oper, const uint8_t *dmac,
		     const uint8_t *tha, uint32_t tip)
{
	struct snic_pkt *p = neigh_frame(c, ARP_FRAME, dmac, ROCE_ETHERTYPE_ARP);
	uint8_t *f;

	if (!p)
		return;
	f = p->data + ROCE_ETH_HLEN;
	f[1] = 1;            /* htype Ethernet */
	f[2] = 0x08;         /* ptype IPv4 */
	f[4] = 6;
	f[5] = 4;
	f[7] = (uint8_t)oper;
	memcpy(f + 8, c->cfg.mac, 6);
	be32_put(f + 14, c->cfg.ipv4);
	memcpy(f + 18, tha, 6);
	be32_put(f + 24, tip);
	core_tx_ctl(c, p); /* never behind a data burst */
}

void neigh_resolve_addr(struct snic_neigh_tbl *t, const uint8_t a[16])
{
	static const uint8_t zero[6];
	struct snic_neigh *e = neigh_slot(t, a);
	bool v4;
	uint32_t ip = gid_to_ipv4(a, &v4);

	if (e->asked && t->core->now - e->asked_ns < SNIC_NEIGH_ASK_GAP_NS)
		return; /* our request is out: one at a time */
	/* remembered: only an answer to a question we asked is learnt */
	e->asked = true;
	e->asked_ns = t->core->now;
	if (!v4) {
		ndisc_solicit(t, a);
		return;
	}
	CNT_INC(t->core, arp_requests_sent);
	arp_send(t->core, 1, bcast, zero, ip);
}

void neigh_resolve(struct snic_neigh_tbl *t, uint32_t ip)
{
	uint8_t a[16];

	ipv4_to_gid(ip, a);
	neigh_resolve_addr(t, a);
}

/* At most SNIC_ARP_PER_MS ARP (and ND) frames a millisecond are looked
 * at: a flood costs a bounded share of the poll loop and draws few
 * replies. */
bool neigh_rate_ok(struct snic_neigh_tbl *t)
{
	uint64_t ms = t->core->now / 1000000u;

	if (ms != t->rate_ms) {
		t->rate_ms = ms;
		t->rate_n = 0;
	}
	if (t->rate_n >= SNIC_ARP_PER_MS) {
		CNT_INC(t->core, rx_drop_arp_rate);
		return false;
	}
	t->rate_n++;
	return true;
}

/* May the sender's address be learnt?  Only when we asked for it (a
 * reply, or the asked host's own request, within SNIC_ARP_ASK_NS): an
 * unsolicited or gratuitous ARP never creates or changes an entry, so a
 * host on the wire cannot redirect a connection by claiming its peer's
 * address.  A known neighbour claiming a new MAC is asked again
 * (rate-limited by the request interval), and learnt from its answer. */
bool neigh_may_learn(struct snic_neigh_tbl *t, const uint8_t spa[16],
		     const uint8_t *sha, bool asks_us)
{
	struct snic_neigh *e = neigh_find(t, spa);
	uint64_t now = t->core->now;

	bool open = e && e->asked && now - e->asked_ns < SNIC_ARP_ASK_NS;

	if (open)
		return true;
	/* RFC 826's merge rule, for new entries only: a host that asks for
	 * our address is about to talk to us (a CM REQ, an RC connection),
	 * and the answer will need its MAC.  A known entry is never changed
	 * this way, so nobody can redirect an existing peer. */
	if (!e && asks_us)
		return true;
	if (e && e->valid && memcmp(e->mac, sha, 6) == 0)
		return false; /* nothing new */
	CNT_INC(t->core, rx_drop_arp_unsolicited);
	if (e && e->valid && now - e->asked_ns >= SNIC_ARP_ASK_NS)
		neigh_resolve_addr(t, spa); /* one question per interval */
	return false;
}

bool neigh_rx_arp(struct snic_neigh_tbl *t, struct snic_pkt *pkt,
		  uint8_t ip[16], uint8_t mac[6])
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
	if (!neigh_rate_ok(t))
		return false;
	spa = be32_get(a + 14);
	tpa = be32_get(a + 24);
	ipv4_to_gid(spa, ip);
	if (spa != 0 && spa != c->cfg.ipv4 &&
	    neigh_may_learn(t, ip, a + 8, a[7] == 1 && tpa == c->cfg.ipv4) &&
	    neigh_learn(t, ip, a + 8)) {
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
	return be32_get(gid + 12);
}

void ipv4_to_gid(uint32_t ip, uint8_t gid[16])
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	be32_put(gid + 12, ip);
}

bool gid_is_ip6_unicast(const uint8_t gid[16])
{
	static const uint8_t zero[15];
	bool v4;

	gid_to_ipv4(gid, &v4);
	if (v4 || gid[0] == 0xff)               /* mapped IPv4, multicast */
		return false;
	return memcmp(gid, zero, 15) != 0 || gid[15] > 1; /* ::, ::1 */
}
