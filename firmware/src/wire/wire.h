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

#include "core/core.h"
#include "wire/crc32.h"
#include "wire/roce_wire.h"

#define SNIC_NEIGH_SIZE     64

/* ARP frames looked at per millisecond; beyond, dropped (counted). */
#define SNIC_ARP_PER_MS     32
/* A request of ours is answered within this time, or not at all. */
#define SNIC_ARP_ASK_NS     3000000000ull

struct snic_neigh {
	uint32_t ip;
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
/* Learn ip -> mac; true when the table changed (the caller refreshes
 * whatever waited for this address). */
bool neigh_learn(struct snic_neigh_tbl *t, uint32_t ip, const uint8_t mac[6]);
void neigh_resolve(struct snic_neigh_tbl *t, uint32_t ip);
/* An ARP frame: replies for our address; true with *ip / mac set when it
 * taught us a new or changed neighbour. */
bool neigh_rx_arp(struct snic_neigh_tbl *t, struct snic_pkt *pkt,
		  uint32_t *ip, uint8_t mac[6]);
void neigh_announce(struct snic_neigh_tbl *t);

/* What a received frame is: ARP, a RoCEv2 packet for us (parsed and
 * checked by the codec), another kind of frame (the host's network
 * interface may take it, nic/netdev.c), or a drop counted by its reason
 * (classify.c). */
enum wire_rx_kind {
	WIRE_RX_DROP,           /* counted, nothing more to do             */
	WIRE_RX_ARP,
	WIRE_RX_OTHER,          /* not RoCEv2: IP, other Ethernet types    */
	WIRE_RX_ROCE,           /* h is filled, addressed to us            */
};
void wire_count_drop(struct snic_core *c, enum roce_parse_result r);

static inline enum wire_rx_kind wire_classify(struct snic_core *c,
					      const struct snic_pkt *p,
					      struct roce_hdrs *h)
{
	enum roce_parse_result r;

	if (p->len >= ROCE_ETH_HLEN && p->data[12] == 0x08 && p->data[13] == 0x06)
		return WIRE_RX_ARP;
	r = roce_parse(p->data, p->len, h);
	if (r == ROCE_NOT_ROCE)
		return WIRE_RX_OTHER;
	if (r != ROCE_OK) {
		wire_count_drop(c, r);
		return WIRE_RX_DROP;
	}
	if (h->dip != c->cfg.ipv4) {
		CNT_INC(c, rx_drop_not_for_us);
		return WIRE_RX_DROP;
	}
	return WIRE_RX_ROCE;
}

/* GID -> IPv4 for an IPv4-mapped GID (::ffff:a.b.c.d, RFC 4291 2.5.5.2);
 * *ok is false for any other GID. */
uint32_t gid_to_ipv4(const uint8_t gid[16], bool *ok);

#endif /* SNIC_WIRE_H */
