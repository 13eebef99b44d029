/* SPDX-License-Identifier: MIT */
/*
 * Routes: which snic device reaches a destination and through which
 * router, from the kernel's routing table (libibverbs' core/route.c,
 * RTM_GETROUTE), as the kernel's rdma_cm does (rdma_resolve_ip).  The
 * device is the one whose network interface is the route's output
 * interface, or whose address is its preferred source; the router, when
 * the route has one, is the next hop whose MAC the NIC puts on the CM
 * MADs (snic_cm_mad.next_hop) and on the connection's QP (libibverbs
 * passes it with modify-QP).  Without a route through a snic interface
 * (no interfaces, --no-netdev, another namespace) the NICs' own ARP and
 * routes decide, as before.
 */
#include <string.h>
#include <linux/rtnetlink.h>

#include "cma.h"
#include "core/route.h"

#define CMA_NH_CACHE  8
#define CMA_NH_TTL_NS (1000 * 1000 * 1000) /* a route change is seen within 1 s */

/* Recent answers, so that each MAD of a handshake does not ask the
 * kernel again. */
static struct {
	struct cma_dev *dev;
	uint32_t dst, gw;
	int64_t at_ns;
} nh_cache[CMA_NH_CACHE];
static unsigned nh_next;
static pthread_mutex_t nh_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t cma_next_hop(struct cma_dev *d, uint32_t dst)
{
	int64_t now = cma_now_ns();
	uint32_t gw;

	pthread_mutex_lock(&nh_lock);
	for (unsigned i = 0; i < CMA_NH_CACHE; i++)
		if (nh_cache[i].dev == d && nh_cache[i].dst == dst &&
		    now - nh_cache[i].at_ns < CMA_NH_TTL_NS) {
			gw = nh_cache[i].gw;
			pthread_mutex_unlock(&nh_lock);
			return gw;
		}
	pthread_mutex_unlock(&nh_lock);
	gw = dst == d->ip ? 0 : snic_next_hop4(d->verbs->device, dst);
	pthread_mutex_lock(&nh_lock);
	nh_cache[nh_next % CMA_NH_CACHE].dev = d;
	nh_cache[nh_next % CMA_NH_CACHE].dst = dst;
	nh_cache[nh_next % CMA_NH_CACHE].gw = gw;
	nh_cache[nh_next % CMA_NH_CACHE].at_ns = now;
	nh_next++;
	pthread_mutex_unlock(&nh_lock);
	return gw;
}

struct cma_dev *cma_route_dev(uint32_t dst, uint32_t src, struct cma_dev *bound,
			      uint32_t *gw)
{
	struct snic_route4 r;
	int oif = bound ? snic_ibdev_ifindex(bound->verbs->device) : 0;

	if (snic_route4_get(dst, src, oif, &r) || r.type != RTN_UNICAST)
		return NULL; /* local, unreachable, or no kernel to ask */
	for (int i = 0; i < cma_ndev; i++) {
		struct cma_dev *d = &cma_devs[i];

		if (bound && d != bound)
			continue;
		if ((r.oif && r.oif == snic_ibdev_ifindex(d->verbs->device)) ||
		    (r.prefsrc && r.prefsrc == d->ip)) {
			*gw = r.gw;
			cma_dbg("route to %08x: %s via %08x\n", dst,
				ibv_get_device_name(d->verbs->device), r.gw);
			return d;
		}
	}
	return NULL;
}
