/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: address handles from a work completion, to answer a
 * UD sender (ibv_init_ah_from_wc, ibv_create_ah_from_wc), as rdma-core 44
 * does it (libibverbs/verbs.c): the 40-byte GRH area of the receive buffer
 * holds, for RoCE v2 over IPv4, the IPv4 header in its last 20 bytes (the
 * first 20 undefined, ours zero); an IPv6 GRH is a whole IPv6 header.  The
 * reply goes from the GID the datagram was sent to (found in our table)
 * to the GID it came from.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

enum { GRH_V4_OFF = 20, HD_GID_SCAN_MAX = 256 };

/* The IPv4 header at the end of the GRH area (byte offsets, RFC 791). */
struct hd_ip4 {
	uint8_t ver_ihl, tos;
	uint16_t tot_len, id, frag_off;
	uint8_t ttl, protocol;
	uint16_t check;
	uint32_t saddr, daddr;
};

static uint16_t ip4_csum(const struct hd_ip4 *h)
{
	const uint8_t *p = (const uint8_t *)h;
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* 4 or 6, as rdma-core's get_grh_header_version(): not IPv6 by the GRH's
 * first nibble means IPv4 if the header says so; a nibble of 6 is IPv4
 * only with IHL 5 and a valid IPv4 checksum.  -1 (EPROTONOSUPPORT)
 * otherwise. */
static int grh_version(const struct ibv_grh *grh, struct hd_ip4 *ip4)
{
	unsigned v6 = (ntohl(grh->version_tclass_flow) >> 28) & 0xf;

	memcpy(ip4, (const uint8_t *)grh + GRH_V4_OFF, sizeof(*ip4));
	if (v6 != 6) {
		if ((ip4->ver_ihl >> 4) == 4)
			return 4;
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if ((ip4->ver_ihl & 0xf) != 5)
		return 6;
	return ip4_csum(ip4) == 0 ? 4 : 6;
}

/* The index of a RoCE v2 GID of ours, or -1 (errno ENOENT). */
static int find_gid_index(struct ibv_context *context, uint8_t port_num,
			  const union ibv_gid *gid)
{
	enum ibv_gid_type_sysfs type;
	union ibv_gid g;

	for (int i = 0; i < HD_GID_SCAN_MAX; i++) {
		if (ibv_query_gid(context, port_num, i, &g))
			break;
		if (memcmp(&g, gid, sizeof(g)) == 0 &&
		    !ibv_query_gid_type(context, port_num, (unsigned)i, &type) &&
		    type == IBV_GID_TYPE_SYSFS_ROCE_V2)
			return i;
	}
	errno = ENOENT;
	return -1;
}

static void ipv4_to_gid(uint32_t addr_be, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &addr_be, 4);
}

static int ah_by_ipv4(struct ibv_context *context, uint8_t port_num,
		      const struct hd_ip4 *ip4, struct ibv_ah_attr *a)
{
	union ibv_gid ours;
	int idx;

	/* a multicast destination is in no GID table */
	if ((ntohl(ip4->daddr) >> 28) == 0xe) {
		errno = EINVAL;
		return -1;
	}
	ipv4_to_gid(ip4->daddr, &ours);
	idx = find_gid_index(context, port_num, &ours);
	if (idx < 0)
		return -1;
	ipv4_to_gid(ip4->saddr, &a->grh.dgid);
	a->grh.sgid_index = (uint8_t)idx;
	a->grh.hop_limit = ip4->ttl;
	a->grh.traffic_class = ip4->tos;
	return 0;
}

static int ah_by_ipv6(struct ibv_context *context, uint8_t port_num,
		      const struct ibv_grh *grh, struct ibv_ah_attr *a)
{
	/* the datagram's destination must be our IPv6 GID (index 1) */
	int idx = find_gid_index(context, port_num, &grh->dgid);

	if (idx < 0)
		return -1;
	a->grh.dgid = grh->sgid;
	a->grh.sgid_index = (uint8_t)idx;
	a->grh.hop_limit = grh->hop_limit;
	a->grh.traffic_class =
		(uint8_t)((ntohl(grh->version_tclass_flow) >> 20) & 0xff);
	return 0;
}

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	struct hd_ip4 ip4;

	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	ah_attr->grh.flow_label = ntohl(grh->version_tclass_flow) & 0xfffff;
	switch (grh_version(grh, &ip4)) {
	case 4:
		return ah_by_ipv4(context, port_num, &ip4, ah_attr);
	case 6:
		return ah_by_ipv6(context, port_num, grh, ah_attr);
	default:
		return -1;
	}
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a))
		return NULL;
	return ibv_create_ah(pd, &a);
}
