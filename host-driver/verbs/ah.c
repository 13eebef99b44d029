/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: address handles.  An AH lives on the host only: it
 * holds the destination GID (RoCE v2, IPv4-mapped) and the GRH fields that
 * each UD send WQE carries; the firmware resolves the MAC by ARP.  AHs from
 * work completions: the reply address of an IPv4 GRH.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct hd_context *ctx = to_hd_ctx(pd->context);
	struct hd_ah *ah;

	/* RoCE needs a GRH (rdma-core: EINVAL without one on Ethernet) */
	if (!attr->is_global || attr->port_num < 1 ||
	    attr->port_num > ctx->dattr.phys_port_cnt ||
	    attr->grh.sgid_index != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (memcmp(attr->grh.dgid.raw, v4map, sizeof(v4map)) != 0) {
		errno = EOPNOTSUPP; /* only IPv4-mapped GIDs are routed */
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

/* The reply address of a UD receive (udaddy, the rdma_cm UD servers).
 * RoCE v2 over IPv4: the GRH area holds the packet's IPv4 header in its
 * last 20 bytes (hostif.h, SNIC_GRH_LEN); the reply goes to its source
 * address from the GID that carries its destination (index 0, our only
 * one), as rdma-core's ibv_init_ah_from_wc does for IPv4 GRHs. */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	const uint8_t *ip = (const uint8_t *)grh + 20;
	union ibv_gid gid;

	if (!context || !wc || !ah_attr || port_num != 1)
		return EINVAL;
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH) || !grh)
		return 0;
	if ((ip[0] >> 4) != 4)
		return EOPNOTSUPP; /* only IPv4 GRHs are ever written */
	if (ibv_query_gid(context, port_num, 0, &gid) || memcmp(gid.raw + 12, ip + 16, 4))
		return ENOENT;      /* not addressed to our GID */
	ah_attr->is_global = 1;
	ah_attr->grh.dgid.raw[10] = ah_attr->grh.dgid.raw[11] = 0xff;
	memcpy(ah_attr->grh.dgid.raw + 12, ip + 12, 4);
	ah_attr->grh.sgid_index = 0;
	ah_attr->grh.hop_limit = 0xff;
	ah_attr->grh.traffic_class = ip[1];
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr a;
	int err;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	err = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a);
	if (err) {
		errno = err;
		return NULL;
	}
	return ibv_create_ah(pd, &a);
}

