/* SPDX-License-Identifier: MIT */
/*
 * rdma_cm ids: create / destroy, addresses (bind, resolve_addr,
 * resolve_route), listen, options, migration, the device list.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cma.h"

struct cma_id *cma_ids;

#define CMA_EPHEMERAL_LO 32768
#define CMA_EPHEMERAL_N  28232
#define CMA_OWNER_WAIT_NS (200 * 1000 * 1000)
#define CMA_ARP_EVERY_NS  (100 * 1000 * 1000)
#define CMA_ADDR_POLL_NS  (5 * 1000 * 1000)

/* route.addr.addr.ibaddr and the path record from the id's addresses. */
void cma_id_fill_route(struct cma_id *id)
{
	struct rdma_ib_addr *ib = &id->id.route.addr.addr.ibaddr;
	struct ibv_sa_path_rec *p = &id->path;

	if (id->dev)
		ib->sgid = *cma_dev_gid(id->dev, &id->dst_ip, NULL);
	memcpy(ib->dgid.raw, id->dst_ip.b, 16);
	ib->pkey = htons(0xffff);
	memset(p, 0, sizeof(*p));
	p->sgid = ib->sgid;
	p->dgid = ib->dgid;
	p->pkey = ib->pkey;
	p->hop_limit = 64;
	p->traffic_class = id->tos;
	p->reversible = htonl(0x80000000u);
	p->numb_path = 1;
	p->mtu_selector = 2;
	p->mtu = id->dev ? id->dev->mtu : IBV_MTU_1024;
	p->rate_selector = 2;
	p->rate = 16; /* 25 Gb/s, as ibv_query_port says */
	p->packet_life_time_selector = 2;
	p->packet_life_time = 14;
}

struct cma_id *cma_id_new(struct rdma_event_channel *ch, void *ctx,
			  enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct cma_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	if (!ch) {
		ch = rdma_create_event_channel();
		if (!ch) {
			free(id);
			return NULL;
		}
		id->sync = 1;
	}
	pthread_cond_init(&id->cv, NULL);
	id->id.channel = ch;
	id->id.context = ctx;
	id->id.ps = ps;
	id->id.qp_type = qpt;
	id->id.route.path_rec = &id->path;
	id->ack_timeout = CMA_QP_TIMEOUT;
	id->state = CMA_IDLE;
	id->next = cma_ids;
	cma_ids = id;
	return id;
}

void cma_id_unlink(struct cma_id *id)
{
	for (struct cma_id **pp = &cma_ids; *pp; pp = &(*pp)->next) {
		if (*pp == id) {
			*pp = id->next;
			return;
		}
	}
}

CMA_EXPORT int rdma_create_id(struct rdma_event_channel *channel,
			      struct rdma_cm_id **id, void *context,
			      enum rdma_port_space ps)
{
	enum ibv_qp_type qpt;
	struct cma_id *c;
	int err;

	if (!id)
		return cma_fail(EINVAL);
	switch (ps) {
	case RDMA_PS_TCP: case RDMA_PS_IB: qpt = IBV_QPT_RC; break;
	case RDMA_PS_UDP: case RDMA_PS_IPOIB: qpt = IBV_QPT_UD; break;
	default: return cma_fail(EINVAL);
	}
	err = cma_init();
	if (err)
		return cma_fail(err);
	pthread_mutex_lock(&cma_lock);
	c = cma_id_new(channel, context, ps, qpt);
	pthread_mutex_unlock(&cma_lock);
	if (!c)
		return -1;
	*id = &c->id;
	return 0;
}

CMA_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id *c = to_cid(id);
	struct rdma_event_channel *ch;

	if (!id)
		return cma_fail(EINVAL);
	if (id->event) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&cma_lock);
	c->destroying = 1;
	c->timer = CMA_T_NONE;
	cma_chan_free_events_of((struct cma_chan *)(void *)id->channel, c);
	/* as rdma-core: events handed out must be acked first */
	while (c->events_out > 0)
		pthread_cond_wait(&c->cv, &cma_lock);
	cma_conn_abort(c);
	if (c->state == CMA_LISTEN)
		for (int i = 0; i < cma_ndev; i++) {
			struct snic_cm_listen l = {
				.service_id = CMA_SID_BASE | (uint64_t)id->ps << 16 | c->src_port };

			if (!c->dev || c->dev == &cma_devs[i])
				cma_cmd(&cma_devs[i], SNIC_CMD_CM_UNLISTEN, &l, sizeof(l), NULL, 0);
		}
	if (c->parent && c->state == CMA_REQ_RCVD)
		c->parent->pending--;
	for (struct cma_id *o = cma_ids; o; o = o->next)
		if (o->parent == c)
			o->parent = NULL;
	cma_id_unlink(c);
	pthread_mutex_unlock(&cma_lock);
	ch = c->sync ? id->channel : NULL;
	free(c->ep_qp_attr);
	pthread_cond_destroy(&c->cv);
	free(c);
	if (ch)
		rdma_destroy_event_channel(ch);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Binding.                                                                */

static int port_taken(struct cma_id *me, const struct cma_ip *ip, uint16_t port)
{
	for (struct cma_id *o = cma_ids; o; o = o->next) {
		if (o == me || !o->bound || o->id.ps != me->id.ps ||
		    o->src_port != port || o->parent)
			continue;
		if (!cma_ip_is_any(&o->src_ip) && !cma_ip_is_any(ip) &&
		    !cma_ip_eq(&o->src_ip, ip))
			continue;
		if (o->reuseaddr && me->reuseaddr && o->state != CMA_LISTEN)
			continue;
		return 1;
	}
	return 0;
}

/* The id's source address as the application sees it (its family as it
 * bound, or as the destination's). */
static void set_src(struct cma_id *c)
{
	cma_ip_sockaddr(&c->id.route.addr.src_storage, &c->src_ip, c->src_port,
			c->bound6);
}

static int bind_locked(struct cma_id *c, const struct cma_ip *ip, uint16_t port)
{
	struct cma_dev *d = NULL;

	if (c->bound || c->state != CMA_IDLE)
		return EINVAL;
	if (!cma_ip_is_any(ip)) {
		d = cma_dev_by_addr(ip);
		if (!d)
			return EADDRNOTAVAIL;
	}
	if (port == 0) {
		uint16_t start = (uint16_t)(CMA_EPHEMERAL_LO + (uint32_t)(cma_rand64() % CMA_EPHEMERAL_N));

		for (uint32_t i = 0; i < CMA_EPHEMERAL_N; i++) {
			uint16_t p = (uint16_t)(CMA_EPHEMERAL_LO +
				(start - CMA_EPHEMERAL_LO + i) % CMA_EPHEMERAL_N);

			if (!port_taken(c, ip, p)) {
				port = p;
				break;
			}
		}
		if (!port)
			return EADDRINUSE;
	} else if (port_taken(c, ip, port)) {
		return EADDRINUSE;
	}
	c->dev = d;
	c->src_ip = *ip;
	c->src_port = port;
	c->bound = 1;
	c->id.verbs = d ? d->verbs : NULL;
	c->id.port_num = d ? 1 : 0;
	set_src(c);
	if (d)
		c->id.route.addr.addr.ibaddr.sgid = *cma_dev_gid(d, ip, NULL);
	return 0;
}

/* An IPv6 sockaddr holding an IPv4-mapped or unspecified address is the
 * IPv4 one (reported back as sockaddr_in6); another IPv6 address is an
 * IPv6 id. */
static int is_v6_sockaddr(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6;
}

CMA_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_ip ip;
	uint16_t port;
	int err, loopback;

	if (!id || !addr)
		return cma_fail(EINVAL);
	err = cma_sockaddr_ip(addr, &ip, &port);
	if (err)
		return cma_fail(err);
	/* 127/8 and ::1 bind no NIC, like the wildcard (the id keeps the
	 * address it was given): libfabric's verbs provider binds
	 * "localhost" to learn whether a device is implied, and otherwise
	 * takes each device's addresses from getifaddrs (the NICs'
	 * interfaces). */
	loopback = cma_ip_is_loopback(&ip);
	pthread_mutex_lock(&cma_lock);
	to_cid(id)->bound6 = is_v6_sockaddr(addr);
	if (loopback) {
		struct cma_ip any = cma_ip_v4(0);

		err = bind_locked(to_cid(id), &any, port);
		if (!err) {
			to_cid(id)->src_ip = ip;
			set_src(to_cid(id));
			to_cid(id)->src_ip = any;
		}
	} else {
		err = bind_locked(to_cid(id), &ip, port);
	}
	pthread_mutex_unlock(&cma_lock);
	return err ? cma_fail(err) : 0;
}

/* ---------------------------------------------------------------------- */
/* Address resolution: which NIC reaches the destination.  When the
 * kernel's route to it leaves by a snic device's interface (cma_route.c,
 * IPv4: the NICs' interfaces carry no IPv6), that device, and the MAC of
 * the route's router or of the destination itself, by the NIC's ARP
 * (CM_RESOLVE6).  Otherwise by the NICs' own ARP or IPv6 neighbour
 * discovery: for an IPv6 destination the NICs whose IPv6 address is on
 * its /64 (RFC 4291 2.5.4: the link's prefix) when there are such, else
 * every NIC with an IPv6 address; a NIC other than the one that owns the
 * address is preferred, so that two NICs of one host talk over their
 * link; the owner answers (loopback) when no other NIC does. */

static int try_dev(struct cma_dev *d, const struct cma_ip *ip, int ask)
{
	struct snic_cm_resolve6 in = { .send_req = (uint32_t)ask }, out;

	memcpy(in.addr, ip->b, 16);
	return cma_cmd(d, SNIC_CMD_CM_RESOLVE6, &in, sizeof(in), &out, sizeof(out));
}

#define CMA_IP6_PREFIX 8 /* bytes: the /64 of an IPv6 unicast address */

static bool on_prefix6(const struct cma_dev *d, const struct cma_ip *dst)
{
	static const uint8_t none[16];

	return memcmp(d->gid6.raw, none, 16) != 0 &&
	       memcmp(d->gid6.raw, dst->b, CMA_IP6_PREFIX) == 0;
}

/* May d carry traffic to dst (before asking its neighbour table)? */
static bool dev_may_reach(const struct cma_dev *d, const struct cma_ip *dst)
{
	static const uint8_t none[16];
	bool prefixed = false;

	if (cma_ip_is_v4(dst, NULL))
		return true;
	for (int i = 0; i < cma_ndev; i++)
		prefixed |= on_prefix6(&cma_devs[i], dst);
	return prefixed ? on_prefix6(d, dst) : memcmp(d->gid6.raw, none, 16) != 0;
}

static void addr_done(struct cma_id *c, struct cma_dev *d)
{
	c->timer = CMA_T_NONE;
	c->dev = d;
	c->id.verbs = d->verbs;
	c->id.port_num = 1;
	if (cma_ip_is_any(&c->src_ip)) {
		uint32_t ip4;

		if (cma_ip_is_v4(&c->dst_ip, &ip4))
			c->src_ip = cma_ip_v4(d->ip);
		else
			memcpy(c->src_ip.b, d->gid6.raw, 16);
		set_src(c);
	}
	c->mtu = d->mtu;
	cma_id_fill_route(c);
	c->state = CMA_ADDR_RESOLVED;
	cma_post(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0, NULL);
}

static void addr_error(struct cma_id *c)
{
	c->timer = CMA_T_NONE;
	c->state = CMA_IDLE;
	cma_post(c, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, NULL, 0, NULL);
}

/* The kernel's route chose the device: only its next hop is asked for. */
static void addr_routed(struct cma_id *c, int64_t now, int arp)
{
	struct cma_ip nh = c->route_gw ? cma_ip_v4(c->route_gw) : c->dst_ip;

	if (try_dev(c->route_dev, &nh, arp) == 0) {
		addr_done(c, c->route_dev);
		return;
	}
	if (arp)
		c->addr_next_arp_ns = now + CMA_ARP_EVERY_NS;
	if (now >= c->addr_end_ns) {
		addr_error(c);
		return;
	}
	c->deadline_ns = now + CMA_ADDR_POLL_NS;
}

void cma_addr_timer(struct cma_id *c, int64_t now)
{
	struct cma_dev *owner = cma_dev_by_addr(&c->dst_ip);
	int arp = now >= c->addr_next_arp_ns;
	int others = 0;

	if (c->route_dev) {
		addr_routed(c, now, arp);
		return;
	}
	for (int i = 0; i < cma_ndev; i++) {
		struct cma_dev *d = &cma_devs[i];

		/* a bound id asks its own device only, whatever its prefix */
		if (d == owner || (c->dev ? c->dev != d : !dev_may_reach(d, &c->dst_ip)))
			continue;
		others++;
		if (try_dev(d, &c->dst_ip, arp) == 0) {
			addr_done(c, d);
			return;
		}
	}
	if (arp)
		c->addr_next_arp_ns = now + CMA_ARP_EVERY_NS;
	if (owner && (!c->dev || c->dev == owner) &&
	    (!others || now >= c->addr_owner_ns)) {
		addr_done(c, owner);
		return;
	}
	if (now >= c->addr_end_ns) {
		addr_error(c);
		return;
	}
	c->deadline_ns = now + CMA_ADDR_POLL_NS;
}

/* The kernel's resolve_prepare_src: the id's family (as bound, else the
 * source's, else the destination's) must be the destination's, or EINVAL
 * (an IPv4-mapped AF_INET6 source for an AF_INET destination too). */
static int family_mismatch(const struct cma_id *c, const struct sockaddr *src,
			   const struct sockaddr *dst)
{
	sa_family_t f = dst->sa_family;

	if (c->bound)
		f = c->bound6 ? AF_INET6 : AF_INET;
	else if (src && src->sa_family)
		f = src->sa_family;
	return f != dst->sa_family;
}

CMA_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
				 struct sockaddr *dst_addr, int timeout_ms)
{
	struct cma_id *c = to_cid(id);
	struct cma_ip sip = cma_ip_v4(0), dip;
	uint16_t sport = 0, dport;
	uint32_t dip4 = 0;
	int64_t now;
	int err;

	if (!id || !dst_addr || timeout_ms < 0)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	err = family_mismatch(c, src_addr, dst_addr) ? EINVAL : 0;
	pthread_mutex_unlock(&cma_lock);
	if (err)
		return cma_fail(err);
	err = cma_sockaddr_ip(dst_addr, &dip, &dport);
	if (!err && src_addr)
		err = cma_sockaddr_ip(src_addr, &sip, &sport);
	if (err)
		return cma_fail(err);
	if (cma_ip_bad_dst(&dip))
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (!c->bound) {
		c->bound6 = is_v6_sockaddr(src_addr ? src_addr : dst_addr);
		err = bind_locked(c, &sip, sport);
	}
	if (!err && c->state != CMA_IDLE)
		err = EINVAL;
	if (err) {
		pthread_mutex_unlock(&cma_lock);
		return cma_fail(err);
	}
	/* 127/8 or ::1: the loopback of the first NIC (or the bound one) */
	if (cma_ip_is_loopback(&dip)) {
		struct cma_dev *d = c->dev ? c->dev : &cma_devs[0];

		if (cma_ip_is_v4(&dip, NULL))
			dip = cma_ip_v4(d->ip);
		else
			memcpy(dip.b, d->gid6.raw, 16);
	}
	memcpy(&id->route.addr.dst_storage, dst_addr,
	       dst_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					       : sizeof(struct sockaddr_in));
	c->dst_ip = dip;
	c->dst_port = dport;
	c->route_gw = 0;
	c->route_dev = NULL;
	if (cma_ip_is_v4(&dip, &dip4)) {
		uint32_t sip4 = 0;

		cma_ip_is_v4(&c->src_ip, &sip4);
		c->route_dev = cma_route_dev(dip4, sip4, c->dev, &c->route_gw);
	}
	now = cma_now_ns();
	c->state = CMA_ADDR_QUERY;
	c->addr_end_ns = now + (int64_t)(timeout_ms ? timeout_ms : 2000) * 1000000;
	c->addr_next_arp_ns = now;
	c->addr_owner_ns = now + CMA_OWNER_WAIT_NS;
	if (c->addr_owner_ns > now + (c->addr_end_ns - now) / 2)
		c->addr_owner_ns = now + (c->addr_end_ns - now) / 2;
	c->deadline_ns = now;
	c->timer = CMA_T_ADDR;
	cma_addr_timer(c, now);
	pthread_mutex_unlock(&cma_lock);
	return c->sync ? cma_sync_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED) : 0;
}

CMA_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id *c = to_cid(id);

	(void)timeout_ms;
	if (!id)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_ADDR_RESOLVED) {
		pthread_mutex_unlock(&cma_lock);
		return cma_fail(EINVAL);
	}
	/* RoCE: the route is the resolved address (no SA to ask) */
	cma_id_fill_route(c);
	id->route.num_paths = 1;
	c->state = CMA_ROUTE_RESOLVED;
	cma_post(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0, NULL);
	pthread_mutex_unlock(&cma_lock);
	return c->sync ? cma_sync_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED) : 0;
}

/* ---------------------------------------------------------------------- */
/* Listening.                                                              */

static int listen_dev(struct cma_id *c, struct cma_dev *d, int on)
{
	struct snic_cm_listen l = {
		.service_id = CMA_SID_BASE | (uint64_t)c->id.ps << 16 | c->src_port };

	return cma_cmd(d, on ? SNIC_CMD_CM_LISTEN : SNIC_CMD_CM_UNLISTEN,
		       &l, sizeof(l), NULL, 0);
}

CMA_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *c = to_cid(id);
	int err = 0, i;

	if (!id)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (!c->bound) {
		struct cma_ip any = cma_ip_v4(0);

		err = bind_locked(c, &any, 0);
	}
	if (!err && c->state != CMA_IDLE)
		err = EINVAL;
	for (i = 0; !err && i < cma_ndev; i++)
		if (!c->dev || c->dev == &cma_devs[i])
			err = listen_dev(c, &cma_devs[i], 1);
	if (err) {
		while (--i >= 0)
			if (!c->dev || c->dev == &cma_devs[i])
				listen_dev(c, &cma_devs[i], 0);
		pthread_mutex_unlock(&cma_lock);
		return cma_fail(err);
	}
	c->backlog = backlog > 0 ? backlog : 1024;
	c->state = CMA_LISTEN;
	pthread_mutex_unlock(&cma_lock);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Options, getters, migration, devices.                                   */

CMA_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname,
			       void *optval, size_t optlen)
{
	struct cma_id *c = to_cid(id);

	if (!id || !optval)
		return cma_fail(EINVAL);
	if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH)
		return cma_fail(ENOSYS); /* RoCE: no SA path records to set */
	if (level != RDMA_OPTION_ID)
		return cma_fail(EINVAL);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return cma_fail(EINVAL);
		c->tos = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (optlen != sizeof(int))
			return cma_fail(EINVAL);
		c->reuseaddr = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return cma_fail(EINVAL);
		c->afonly = *(int *)optval != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return cma_fail(EINVAL);
		c->ack_timeout = *(uint8_t *)optval;
		return 0;
	default:
		return cma_fail(ENOSYS);
	}
}

/* sin_port and sin6_port sit at the same offset */
CMA_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id->route.addr.src_sin.sin_port;
}

CMA_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id->route.addr.dst_sin.sin_port;
}

/* Queued (not yet read) events of the id follow it to its new channel. */
static void move_events(struct cma_chan *from, struct cma_chan *to, struct cma_id *c)
{
	struct cma_event **pp = &from->head, *prev = NULL;
	uint64_t one = 1;

	while (*pp) {
		struct cma_event *e = *pp;

		if (e->ev.id != &c->id) {
			prev = e;
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		if (from->tail == e)
			from->tail = prev;
		e->next = NULL;
		if (to->tail)
			to->tail->next = e;
		else
			to->head = e;
		to->tail = e;
		if (write(to->wfd, &one, sizeof(one)) != sizeof(one))
			break;
	}
}

CMA_EXPORT int rdma_migrate_id(struct rdma_cm_id *id,
			       struct rdma_event_channel *channel)
{
	struct cma_id *c = to_cid(id);
	struct rdma_event_channel *old;
	int was_sync, new_sync = 0;

	if (!id)
		return cma_fail(EINVAL);
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		new_sync = 1;
	}
	pthread_mutex_lock(&cma_lock);
	old = id->channel;
	was_sync = c->sync;
	if (old != channel)
		move_events((struct cma_chan *)(void *)old,
			    (struct cma_chan *)(void *)channel, c);
	id->channel = channel;
	c->sync = new_sync;
	pthread_mutex_unlock(&cma_lock);
	if (was_sync && old != channel)
		rdma_destroy_event_channel(old);
	return 0;
}

CMA_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **v;

	cma_init();
	v = calloc((size_t)cma_ndev + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (int i = 0; i < cma_ndev; i++)
		v[i] = cma_devs[i].verbs;
	if (num_devices)
		*num_devices = cma_ndev;
	return v;
}

CMA_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
