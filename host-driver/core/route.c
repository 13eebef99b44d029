/* SPDX-License-Identifier: MIT */
/*
 * Next hops from the kernel's routing table (route.h).  A RoCE v2 path to
 * a destination behind a router keeps the destination's IP in its
 * packets but carries the router's MAC: as mlx5 and rxe do through the
 * kernel (rdma_resolve_ip / ib_resolve_eth_dmac), the driver asks the
 * kernel for the route on the device's interface and hands the gateway
 * to the NIC, whose own neighbour table then finds its MAC.
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "core.h"
#include "route.h"

#define ROUTE_BUF 4096

struct route_req {
	struct nlmsghdr nh;
	struct rtmsg rt;
	char attrs[64];
};

static void add_attr(struct route_req *q, unsigned short type,
		     const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(void *)((char *)q + NLMSG_ALIGN(q->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	q->nh.nlmsg_len = NLMSG_ALIGN(q->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

static int route_parse(const struct nlmsghdr *nh, struct snic_route4 *r)
{
	const struct rtmsg *rt = NLMSG_DATA(nh);
	const struct rtattr *a = RTM_RTA(rt);
	int len = (int)RTM_PAYLOAD(nh);
	uint32_t v;

	memset(r, 0, sizeof(*r));
	r->type = rt->rtm_type;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (RTA_PAYLOAD(a) < 4)
			continue;
		memcpy(&v, RTA_DATA(a), 4);
		if (a->rta_type == RTA_OIF)
			r->oif = (int)v;
		else if (a->rta_type == RTA_GATEWAY)
			r->gw = ntohl(v);
		else if (a->rta_type == RTA_PREFSRC)
			r->prefsrc = ntohl(v);
	}
	return r->type == RTN_UNICAST || r->type == RTN_LOCAL ? 0 : EHOSTUNREACH;
}

/* One request, one answer (the kernel answers RTM_GETROUTE with one
 * RTM_NEWROUTE, or an error). */
static int route_ask(int fd, struct route_req *q, struct snic_route4 *r)
{
	char buf[ROUTE_BUF] __attribute__((aligned(4)));
	struct nlmsghdr *nh = (struct nlmsghdr *)(void *)buf;
	ssize_t n;

	if (send(fd, q, q->nh.nlmsg_len, 0) < 0)
		return errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return errno == EAGAIN ? ETIMEDOUT : errno;
	if (!NLMSG_OK(nh, (unsigned)n))
		return EPROTO;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);

		return e->error ? -e->error : EPROTO;
	}
	if (nh->nlmsg_type != RTM_NEWROUTE)
		return EPROTO;
	return route_parse(nh, r);
}

int snic_route4_get(uint32_t dst, uint32_t src, int oif, struct snic_route4 *r)
{
	struct route_req q;
	struct timeval tv = { 1, 0 };
	uint32_t d = htonl(dst), s = htonl(src);
	int fd, err;

	memset(&q, 0, sizeof(q));
	q.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	q.nh.nlmsg_type = RTM_GETROUTE;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.rt.rtm_family = AF_INET;
	q.rt.rtm_dst_len = 32;
	add_attr(&q, RTA_DST, &d, 4);
	if (src) {
		q.rt.rtm_src_len = 32;
		add_attr(&q, RTA_SRC, &s, 4);
	}
	if (oif)
		add_attr(&q, RTA_OIF, &oif, 4);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	err = route_ask(fd, &q, r);
	close(fd);
	return err;
}

int snic_ibdev_ifindex(struct ibv_device *dev)
{
	char name[IF_NAMESIZE + 2], dir[IBV_SYSFS_PATH_MAX + 32];
	int n;

	snprintf(dir, sizeof(dir), "%s/ports/1/gid_attrs/ndevs", dev->ibdev_path);
	n = ibv_read_sysfs_file(dir, "0", name, sizeof(name));
	if (n <= 0)
		return 0;
	name[strcspn(name, "\n")] = '\0';
	return (int)if_nametoindex(name);
}

uint32_t snic_next_hop4(struct ibv_device *dev, uint32_t dst)
{
	struct snic_route4 r;
	int ifx = snic_ibdev_ifindex(dev);

	if (!ifx || snic_route4_get(dst, 0, ifx, &r) || r.oif != ifx ||
	    r.type != RTN_UNICAST)
		return 0;
	return r.gw;
}
