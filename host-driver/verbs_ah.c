/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: address handles from work completions.  RC QPs carry
 * their address vector in modify_qp; AHs (UD) are not supported yet.
 */
#include <errno.h>

#include "snic_hd.h"

int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	(void)context;
	(void)port_num;
	(void)wc;
	(void)grh;
	(void)ah_attr;
	return EOPNOTSUPP;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				     struct ibv_grh *grh, uint8_t port_num)
{
	(void)pd;
	(void)wc;
	(void)grh;
	(void)port_num;
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
				struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid)
{
	(void)context;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	return EOPNOTSUPP;
}
