/* SPDX-License-Identifier: MIT */
/*
 * The wire layer: RoCEv2 frames and nothing above them.  The opcode table
 * and header codec (roce_wire.h), the ICRC (crc32.h), ARP and the
 * neighbour table (neigh.c), and the classification of a received frame
 * (classify.c).  It uses the core (TX, counters); it never sees a QP.
 */
#ifndef SNIC_WIRE_H
#define SNIC_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "wire/crc32.h"
#include "wire/roce_wire.h"

#define SNIC_NEIGH_SIZE     64

/* ARP frames looked at per millisecond; beyond, dropped (counted). */
#define SNIC_ARP_PER_MS     32
/* One outstanding request per neighbour: a second ask within this time
 * (a QP's modify to RTR, then its first send) sends nothing; the askers'
 * retries (100 ms apart) go out. */
#define SNIC_NEIGH_ASK_GAP_NS 50000000ull
/* A request of ours is answered within this time, or not at all. */
#define SNIC_ARP_ASK_NS     3000000000ull

/* Addresses are 16 bytes: IPv6, or IPv4 mapped (::ffff:a.b.c.d), as in
 * GIDs; ARP (neigh.c) and neighbour discovery (ndisc.c) share the table. */
struct snic_neigh {
	uint8_t ip[16];
	uint8_t mac[6];
	bool valid;             /* mac known                                 */
	bool asked;             /* our request for ip is open, since asked_ns */
	uint64_t asked_ns;
};

struct snic_neigh_tbl {
	struct snic_core *core; /* set by neigh_init                          */
	struct snic_neigh ent[SNIC_NEIGH_SIZE];
	uint32_t next;
	uint64_t rate_ms;       /* the millisecond rate_n counts in          */
	uint32_t rate_n;
};

/* neigh.c */
void neigh_init(struct snic_neigh_tbl *t, struct snic_core *core);
bool neigh_lookup(struct snic_neigh_tbl *t, uint32_t ip, uint8_t mac[6]);
bool neigh_lookup_addr(struct snic_neigh_tbl *t, const uint8_t a[16],
		       uint8_t mac[6]);
/* Learn a -> mac; true when the table changed (the caller refreshes
 * whatever waited for this address). */
bool neigh_learn(struct snic_neigh_tbl *t, const uint8_t a[16],
		 const uint8_t mac[6]);
void neigh_resolve(struct snic_neigh_tbl *t, uint32_t ip);
/* ARP for a mapped IPv4 address, a neighbour solicitation otherwise. */
void neigh_resolve_addr(struct snic_neigh_tbl *t, const uint8_t a[16]);
/* May an answer from a (claiming mac) be learnt (neigh.c, for ARP and
 * ND alike); asks_us: it is the sender's question for our address. */
bool neigh_may_learn(struct snic_neigh_tbl *t, const uint8_t a[16],
		     const uint8_t *mac, bool asks_us);
bool neigh_rate_ok(struct snic_neigh_tbl *t);
/* A zeroed len-byte frame from our MAC to dmac (ARP, ND); NULL when no
 * buffer is free. */
struct snic_pkt *neigh_frame(struct snic_core *c, uint16_t len,
			     const uint8_t dmac[6], uint16_t ethertype);
/* An ARP frame: replies for our address; true with a / mac set when it
 * taught us a new or changed neighbour. */
bool neigh_rx_arp(struct snic_neigh_tbl *t, struct snic_pkt *pkt,
		  uint8_t a[16], uint8_t mac[6]);
void neigh_announce(struct snic_neigh_tbl *t);

/* route.c: the next hop of a destination (the NIC's static routes) */
uint32_t route_gw4(const struct snic_core *c, uint32_t ip);
uint32_t route_next_hop4(const struct snic_core *c, uint32_t ip,
			 uint32_t host_nh);
void route_next_hop(const struct snic_core *c, const uint8_t dst[16],
		    const uint8_t *host_nh, uint8_t nh[16]);
bool route_next_hop4_ok(const struct snic_core *c, uint32_t host_nh);
bool route_next_hop_ok(const struct snic_core *c, const uint8_t dst[16],
		       const uint8_t host_nh[16]);

/* ndisc.c: IPv6 neighbour discovery (RFC 4861), the ARP of IPv6 */
bool ndisc_is_nd(const struct snic_pkt *p);
void ndisc_solicit(struct snic_neigh_tbl *t, const uint8_t a[16]);
bool ndisc_rx(struct snic_neigh_tbl *t, struct snic_pkt *pkt,
	      uint8_t a[16], uint8_t mac[6]);

static inline bool wire_is_my_ip6(const struct snic_core *c,
				  const uint8_t a[16])
{
	static const uint8_t none[16];

	return memcmp(a, c->cfg.ipv6, 16) == 0 && memcmp(a, none, 16) != 0;
}

/* What a received frame is: ARP, a RoCEv2 packet for us (parsed and
 * checked by the codec), another kind of frame (the host's network
 * interface may take it, nic/netdev.c), or a drop counted by its reason
 * (classify.c). */
enum wire_rx_kind {
	WIRE_RX_DROP,           /* counted, nothing more to do             */
	WIRE_RX_ARP,            /* ARP or IPv6 neighbour discovery         */
	WIRE_RX_OTHER,          /* not RoCEv2: IP, other Ethernet types    */
	WIRE_RX_ROCE,           /* h is filled, addressed to us: as
				 * roce_parse_rx_first leaves it (its
				 * ICRC maybe for later: wire_icrc_settle) */
	WIRE_RX_ROCE_MCAST,     /* h is filled, to an IPv4 multicast group */
};
void wire_count_drop(struct snic_core *c, enum roce_parse_result r);

/* IPv4 multicast: 224.0.0.0/4 (RFC 5771). */
static inline bool ipv4_is_mcast(uint32_t ip)
{
	return (ip >> 28) == 0xeu;
}

/* A group's Ethernet address: 01:00:5e and the low 23 bits of the IPv4
 * address (RFC 1112 6.4). */
static inline void ipv4_mcast_mac(uint32_t ip, uint8_t mac[6])
{
	mac[0] = 0x01;
	mac[1] = 0x00;
	mac[2] = 0x5e;
	mac[3] = (uint8_t)((ip >> 16) & 0x7f);
	mac[4] = (uint8_t)(ip >> 8);
	mac[5] = (uint8_t)ip;
}

/* A frame to a multicast group: the group's MAC must go with its IP
 * (which groups this NIC joined is the objects' to say). */
static inline enum wire_rx_kind wire_classify_mcast(struct snic_core *c,
						    const struct roce_hdrs *h)
{
	uint8_t mac[6];

	ipv4_mcast_mac(h->dip, mac);
	if (memcmp(mac, h->dmac, 6) != 0) {
		CNT_INC(c, rx_drop_not_for_us);
		return WIRE_RX_DROP;
	}
	return WIRE_RX_ROCE_MCAST;
}

/* A frame whose ICRC the parse left for later (h->icrc_later, roce_wire.h)
 * going anywhere but the responder's one step that folds the check into
 * the payload's copy: checked now.  False (dropped and counted, as the
 * parse would have) when it is bad. */
static inline bool wire_icrc_settle(struct snic_core *c, struct roce_hdrs *h)
{
	if (!h->icrc_later)
		return true;
	h->icrc_later = 0;
	if (roce_icrc_later_ok(h))
		return true;
	CNT_INC(c, rx_drop_icrc);
	return false;
}

static inline enum wire_rx_kind wire_classify(struct snic_core *c,
					      const struct snic_pkt *p,
					      struct roce_hdrs *h)
{
	enum roce_parse_result r = roce_parse_rx_first(p->data, p->len, h);

	/* ARP is not RoCE (nor is any frame shorter than an Ethernet
	 * header): asked only of frames the parse says are not */
	if (r == ROCE_NOT_ROCE)
		return (p->data[12] == 0x08 && p->data[13] == 0x06) ||
		       ndisc_is_nd(p) ? WIRE_RX_ARP : WIRE_RX_OTHER;
	if (r != ROCE_OK) {
		wire_count_drop(c, r);
		return WIRE_RX_DROP;
	}
	if (h->ip6 ? !wire_is_my_ip6(c, h->dip6) : h->dip != c->cfg.ipv4) {
		/* off the unicast path: costs nothing for frames to us */
		if (!wire_icrc_settle(c, h))
			return WIRE_RX_DROP;
		if (!h->ip6 && ipv4_is_mcast(h->dip)) {
			roce_parse_rx_finish(h);
			return wire_classify_mcast(c, h);
		}
		CNT_INC(c, rx_drop_not_for_us);
		return WIRE_RX_DROP;
	}
	return WIRE_RX_ROCE;
}

/* GID -> IPv4 for an IPv4-mapped GID (::ffff:a.b.c.d, RFC 4291 2.5.5.2);
 * *ok is false for any other GID. */
uint32_t gid_to_ipv4(const uint8_t gid[16], bool *ok);
/* IPv4 -> its mapped GID / neighbour address. */
void ipv4_to_gid(uint32_t ip, uint8_t gid[16]);
/* A GID that can be a unicast IPv6 destination: not mapped IPv4, not
 * unspecified, loopback or multicast (RFC 4291 2.5.2, 2.5.3, 2.7). */
bool gid_is_ip6_unicast(const uint8_t gid[16]);

#endif /* SNIC_WIRE_H */
