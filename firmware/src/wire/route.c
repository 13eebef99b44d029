/* SPDX-License-Identifier: MIT */
/*
 * Next hops: which neighbour's MAC a frame for a destination carries.
 * The destination IP stays the packet's; only the Ethernet address comes
 * from the next hop, as in any IP router's forwarding (RFC 1812 5.2.1).
 * A path's host may name the next hop (its kernel's route, given with
 * modify-QP or a CM MAD); otherwise the NIC's own static routes from the
 * board's configuration decide, and with none every destination is on
 * the link.
 */
#include "wire/be.h"
#include "wire/wire.h"

static bool in_prefix(uint32_t ip, uint32_t net, uint8_t plen)
{
	uint32_t mask = plen == 0 ? 0 : ~0u << (32 - (plen > 32 ? 32 : plen));

	return (ip & mask) == (net & mask);
}

/* The gateway of the longest configured route to ip; 0 = on the link. */
uint32_t route_gw4(const struct snic_core *c, uint32_t ip)
{
	const struct snic_nic_config *cfg = &c->cfg;
	uint32_t gw = 0;
	int best = -1;

	if (cfg->nroutes == 0 || ip == cfg->ipv4 ||
	    (cfg->ipv4_plen && in_prefix(ip, cfg->ipv4, cfg->ipv4_plen)))
		return 0;
	for (uint32_t i = 0; i < cfg->nroutes && i < SNIC_MAX_ROUTES; i++) {
		const struct snic_ipv4_route *r = &cfg->routes[i];

		if (in_prefix(ip, r->dst, r->plen) && (int)r->plen > best) {
			best = r->plen;
			gw = r->gw;
		}
	}
	return gw;
}

/* The IPv4 neighbour whose MAC reaches ip: the host's next hop host_nh
 * when it named one (not 0), else the NIC's route, else ip itself. */
uint32_t route_next_hop4(const struct snic_core *c, uint32_t ip,
			 uint32_t host_nh)
{
	uint32_t gw;

	if (host_nh)
		return host_nh;
	gw = route_gw4(c, ip);
	return gw ? gw : ip;
}

/* Can the host's next hop host_nh be a neighbour for frames to us-or-not?
 * A router is a unicast neighbour other than ourselves: not 0.0.0.0/8
 * ("this network"), 127/8 (loopback), 224/4 (multicast), 240/4 (reserved;
 * 255.255.255.255 broadcast is in it) (RFC 1122 3.2.1.3, RFC 5771), nor
 * the NIC's own address; 0 = none given, valid. */
bool route_next_hop4_ok(const struct snic_core *c, uint32_t host_nh)
{
	uint32_t top = host_nh >> 24;

	if (host_nh == 0)
		return true;
	return top != 0 && top != 127 && top < 224 && host_nh != c->cfg.ipv4;
}

/* The same for a 16-byte next hop of a path to dst: all zero (none given)
 * or of dst's family (IPv4 mapped for an IPv4 destination, unicast IPv6
 * for an IPv6 one) and a valid neighbour, not the NIC's own address. */
bool route_next_hop_ok(const struct snic_core *c, const uint8_t dst[16],
		       const uint8_t host_nh[16])
{
	static const uint8_t none[16];
	bool dst4, nh4;
	uint32_t ip;

	if (memcmp(host_nh, none, 16) == 0)
		return true;
	gid_to_ipv4(dst, &dst4);
	ip = gid_to_ipv4(host_nh, &nh4);
	if (dst4 != nh4)
		return false;
	if (nh4)
		return ip != 0 && route_next_hop4_ok(c, ip);
	return gid_is_ip6_unicast(host_nh) && !wire_is_my_ip6(c, host_nh);
}

/* The neighbour whose MAC reaches dst (16-byte addresses, IPv4 mapped):
 * the host's next hop when it named one (not all zero), else the NIC's
 * route for an IPv4 destination, else dst itself. */
void route_next_hop(const struct snic_core *c, const uint8_t dst[16],
		    const uint8_t *host_nh, uint8_t nh[16])
{
	static const uint8_t none[16];
	uint32_t ip;
	bool v4;

	if (host_nh && memcmp(host_nh, none, 16) != 0) {
		memcpy(nh, host_nh, 16);
		return;
	}
	ip = gid_to_ipv4(dst, &v4);
	if (v4)
		ipv4_to_gid(route_next_hop4(c, ip, 0), nh);
	else
		memcpy(nh, dst, 16);
}
