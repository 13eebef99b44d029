/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: address handles.  An AH lives on the host only: it
 * holds the destination GID (RoCE v2, IPv4-mapped) and the GRH fields that
 * each UD send WQE carries; the firmware resolves the MAC by ARP.  AHs from
 * work completions: ah_wc.c.
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

