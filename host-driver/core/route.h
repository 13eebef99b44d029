/* SPDX-License-Identifier: MIT */
/*
 * The kernel's IPv4 routes, as real RoCE drivers use them to find a
 * path's next hop (rtnetlink(7) RTM_GETROUTE), and the kernel network
 * interface of a snic device.  In libibverbs (route.c), exported to our
 * librdmacm through version node SNIC_PRIVATE_1.
 */
#ifndef SNIC_HD_ROUTE_H
#define SNIC_HD_ROUTE_H

#include <stdint.h>

#include <infiniband/verbs.h>

struct snic_route4 {
	int oif;            /* output interface index                     */
	uint32_t gw;        /* next-hop router, host order; 0 = on link   */
	uint32_t prefsrc;   /* the source address the kernel would use    */
	uint8_t type;       /* RTN_UNICAST, RTN_LOCAL, ...                 */
};

/* The kernel's route to dst (host order), from src (0 = any) out of oif
 * (0 = any): 0, or an errno (ENETUNREACH, EHOSTUNREACH, ...). */
int snic_route4_get(uint32_t dst, uint32_t src, int oif, struct snic_route4 *r);

/* The index of dev's kernel network interface in this network namespace
 * (its sysfs gid_attrs/ndevs/0, as snic-emu made it); 0 = none here. */
int snic_ibdev_ifindex(struct ibv_device *dev);

/* The router through which dev reaches dst (host order) by the kernel's
 * routes on dev's interface; 0 = on link, or no interface / no route
 * here (the NIC's own routes then decide). */
uint32_t snic_next_hop4(struct ibv_device *dev, uint32_t dst);

#endif
