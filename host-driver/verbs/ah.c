/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: address handles.  An AH lives on the host only: it
 * holds the destination GID (RoCE v2: IPv4-mapped from GID 0, or IPv6
 * from GID 1) and the GRH fields that each UD send WQE carries; the
 * firmware resolves the MAC (ARP, IPv6 neighbour discovery).  AHs from
 * work completions: ah_wc.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

/* The source GID decides the family and the destination must match it:
 * GID 0 (IPv4) with an IPv4-mapped GID, GID 1 (IPv6, when the port has
 * one) with a unicast IPv6 GID.  0 or an errno. */
static int ah_gid_check(struct ibv_context *context, const struct ibv_ah_attr *attr)
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[16];
	bool mapped = memcmp(attr->grh.dgid.raw, v4map, sizeof(v4map)) == 0;
	union ibv_gid ours;

	if (attr->grh.sgid_index == 0)
		return mapped ? 0 : EINVAL;
	if (attr->grh.sgid_index != 1 || mapped)
		return EINVAL;
	if (attr->grh.dgid.raw[0] == 0xff)
		return EOPNOTSUPP; /* IPv6 multicast: not routed (README) */
	if (memcmp(attr->grh.dgid.raw, zero, 15) == 0)
		return EINVAL;     /* :: or ::1 */
	if (ibv_query_gid(context, attr->port_num, 1, &ours) ||
	    memcmp(ours.raw, zero, sizeof(zero)) == 0)
		return EINVAL;     /* this port has no IPv6 address */
	return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct hd_context *ctx = to_hd_ctx(pd->context);
	struct hd_ah *ah;
	int err;

	/* RoCE needs a GRH (rdma-core: EINVAL without one on Ethernet) */
	if (!attr->is_global || attr->port_num < 1 ||
	    attr->port_num > ctx->dattr.phys_port_cnt) {
		errno = EINVAL;
		return NULL;
	}
	err = ah_gid_check(pd->context, attr);
	if (err) {
		errno = err;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(ah->av.dgid, attr->grh.dgid.raw, sizeof(ah->av.dgid));
	ah->av.hop_limit = attr->grh.hop_limit;
	ah->av.traffic_class = attr->grh.traffic_class;
	ah->av.flow_label = attr->grh.flow_label;
	ah->ibah.context = pd->context;
	ah->ibah.pd = pd;
	ah->ibah.handle = 0;
	return &ah->ibah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	free(to_hd_ah(ah));
	return 0;
}

