/* SPDX-License-Identifier: MIT */
/*
 * IPv6 neighbour discovery (RFC 4861) for RoCEv2 over IPv6: what ARP is
 * to IPv4 (neigh.c).  Neighbour solicitations for unknown destinations
 * (to the target's solicited-node multicast address), advertisements in
 * answer to solicitations for our own address, and learning under the
 * same rules as ARP (neigh_may_learn): from the answer to our own
 * question, or from a new neighbour's question for our address; never
 * from an unsolicited advertisement.  The entries live in the shared
 * neighbour table; the rate limit is ARP's.
 */
#include <string.h>

#include "wire/be.h"
#include "wire/wire.h"

#define IP6         ROCE_ETH_HLEN
#define ICMP6       (IP6 + ROCE_IPV6_HLEN)
#define ND_LEN      24              /* type .. target address (4.3, 4.4) */
#define ND_OPT_LEN  8               /* one link-layer address option     */
#define ND_FRAME    (ICMP6 + ND_LEN + ND_OPT_LEN)
#define PROTO_ICMP6 58u
#define ND_NS       135u
#define ND_NA       136u
#define OPT_SLLA    1u              /* source link-layer address          */
#define OPT_TLLA    2u              /* target link-layer address          */
#define NA_SOLICITED 0x40u
#define NA_OVERRIDE  0x20u
#define ND_HOPS     255u            /* 7.1.1: anything else came via a router */

/* RFC 8200 8.1: the ICMPv6 checksum covers a pseudo-header (addresses,
 * upper-layer length, next header) and the message. */
static uint16_t icmp6_sum(const uint8_t *ip6, uint32_t len)
{
	const uint8_t *m = ip6 + ROCE_IPV6_HLEN;
	uint32_t s = len + PROTO_ICMP6;

	for (uint32_t i = 8; i < ROCE_IPV6_HLEN; i += 2)    /* src, dst */
		s += (uint32_t)ip6[i] << 8 | ip6[i + 1];
	for (uint32_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)m[i] << 8 | m[i + 1];
	if (len & 1u)
		s += (uint32_t)m[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)~s;
}

/* ff02::1:ffXX:XXXX, the solicited-node address of a (RFC 4291 2.7.1),
 * and its Ethernet group 33:33:ff:XX:XX:XX (RFC 2464 7). */
static void solicited_node(const uint8_t a[16], uint8_t ip[16], uint8_t mac[6])
{
	static const uint8_t pfx[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0,
					 0, 0x01, 0xff };

	memcpy(ip, pfx, 13);
	memcpy(ip + 13, a + 13, 3);
	mac[0] = mac[1] = 0x33;
	memcpy(mac + 2, ip + 12, 4);
}

/* One NS or NA from our address, with our MAC as its option. */
static void nd_send(struct snic_core *c, uint8_t type, uint8_t flags,
		    const uint8_t dmac[6], const uint8_t dip[16],
		    const uint8_t target[16])
{
	struct snic_pkt *p = neigh_frame(c, ND_FRAME, dmac, ROCE_ETHERTYPE_IPV6);
	uint8_t *f, *m;

	if (!p)
		return;
	f = p->data;
	f[IP6] = 0x60;
	f[IP6 + 5] = ND_LEN + ND_OPT_LEN;       /* payload length */
	f[IP6 + 6] = PROTO_ICMP6;
	f[IP6 + 7] = ND_HOPS;
	memcpy(f + IP6 + 8, c->cfg.ipv6, 16);
	memcpy(f + IP6 + 24, dip, 16);
	m = f + ICMP6;
	m[0] = type;
	m[4] = flags;
	memcpy(m + 8, target, 16);
	m[ND_LEN] = type == ND_NS ? OPT_SLLA : OPT_TLLA;
	m[ND_LEN + 1] = 1;                      /* in units of 8 bytes */
	memcpy(m + ND_LEN + 2, c->cfg.mac, 6);
	be32_put(m, be32_get(m) | icmp6_sum(f + IP6, ND_LEN + ND_OPT_LEN));
	core_tx_ctl(c, p); /* never behind a data burst */
}

void ndisc_solicit(struct snic_neigh_tbl *t, const uint8_t a[16])
{
	uint8_t ip[16], mac[6];

	if (!wire_is_my_ip6(t->core, t->core->cfg.ipv6))
		return; /* no IPv6 address of ours to ask from */
	solicited_node(a, ip, mac);
	CNT_INC(t->core, nd_solicits_sent);
	nd_send(t->core, ND_NS, 0, mac, ip, a);
}

bool ndisc_is_nd(const struct snic_pkt *p)
{
	const uint8_t *f = p->data;

	return p->len >= ICMP6 + ND_LEN && f[12] == 0x86 && f[13] == 0xdd &&
	       f[IP6 + 6] == PROTO_ICMP6 &&
	       (f[ICMP6] == ND_NS || f[ICMP6] == ND_NA);
}

/* The link-layer address option of the wanted type, or NULL (4.6.1);
 * a zero-length option makes the message invalid (7.1.1, 7.1.2). */
static const uint8_t *nd_lladdr(const uint8_t *opt, uint32_t n, uint8_t type,
				bool *bad)
{
	const uint8_t *found = NULL;

	while (n >= 2) {
		uint32_t l = opt[1] * 8u;

		if (l == 0 || l > n) {
			*bad = true;
			return NULL;
		}
		if (opt[0] == type && l >= 8)
			found = opt + 2;
		opt += l;
		n -= l;
	}
	return found;
}

/* RFC 4861 7.1: hop limit 255, code 0, length, checksum, a unicast
 * target; returns the ICMPv6 length, 0 for an invalid message. */
static uint32_t nd_valid(const struct snic_pkt *p)
{
	const uint8_t *f = p->data;
	uint32_t len = (uint32_t)f[IP6 + 4] << 8 | f[IP6 + 5];

	if ((f[IP6] >> 4) != 6 || f[IP6 + 7] != ND_HOPS || f[ICMP6 + 1] != 0 ||
	    len < ND_LEN || len > p->len - (uint32_t)ICMP6 || f[ICMP6 + 8] == 0xff ||
	    icmp6_sum(f + IP6, len) != 0)
		return 0;
	return len;
}

static bool nd_learn(struct snic_neigh_tbl *t, const uint8_t ip[16],
		     const uint8_t *mac, bool asks_us, uint8_t a[16],
		     uint8_t out_mac[6])
{
	if (!mac || !gid_is_ip6_unicast(ip) || wire_is_my_ip6(t->core, ip) ||
	    !neigh_may_learn(t, ip, mac, asks_us) || !neigh_learn(t, ip, mac))
		return false;
	memcpy(a, ip, 16);
	memcpy(out_mac, mac, 6);
	return true;
}

bool ndisc_rx(struct snic_neigh_tbl *t, struct snic_pkt *pkt, uint8_t a[16],
	      uint8_t mac[6])
{
	struct snic_core *c = t->core;
	const uint8_t *f = pkt->data, *m = f + ICMP6, *ll = NULL;
	uint32_t len;
	bool bad = false, ours;

	CNT_INC(c, rx_nd);
	len = nd_valid(pkt);
	if (len)
		ll = nd_lladdr(m + ND_LEN, len - ND_LEN,
			       m[0] == ND_NS ? OPT_SLLA : OPT_TLLA, &bad);
	if (!len || bad) {
		CNT_INC(c, rx_drop_nd);
		return false;
	}
	if (!neigh_rate_ok(t))
		return false;
	ours = wire_is_my_ip6(c, m + 8);
	if (m[0] == ND_NA)      /* target m + 8 is where it is: learn if asked */
		return nd_learn(t, m + 8, ll, false, a, mac);
	if (!ours)
		return false;   /* someone else's question */
	if (!gid_is_ip6_unicast(f + IP6 + 8))
		return false;   /* duplicate address detection (::): nothing to say */
	CNT_INC(c, nd_adverts_sent);
	nd_send(c, ND_NA, NA_SOLICITED | NA_OVERRIDE, f + 6, f + IP6 + 8, m + 8);
	return nd_learn(t, f + IP6 + 8, ll, true, a, mac);
}
