/* SPDX-License-Identifier: MIT */
/*
 * The CM protocol (IBTA vol. 1 ch. 12) as the rdma_cm uses it: REQ / REP
 * / RTU to connect, MRA when the passive side needs time, REJ to refuse,
 * DREQ / DREP to disconnect, SIDR_REQ / SIDR_REP for UD ids; each MAD
 * resent on its response timeout (12.6.1) until the retries run out.
 * The REQ and SIDR_REQ carry the rdma_cm IP header in their private data
 * (struct cma_hdr of rdma-core / Linux cma.c: version 0, IP version in
 * the high nibble, source port, source and destination addresses), and
 * the ServiceID is 0x0000000001000000 | port space << 16 | port.
 */
#include <stdlib.h>
#include <string.h>

#include "cma.h"

#define M(mad) ((mad) + SNIC_CM_HDR_LEN)

/* REJ reasons (12.6.7.2, table 112) */
#define REJ_TIMEOUT        1
#define REJ_INVALID_SID    8
#define REJ_STALE_CONN     10
#define REJ_CONSUMER       28
#define REJ_VENDOR_OPTION  35

void cma_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint32_t cma_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	cma_put32(p, (uint32_t)(v >> 32));
	cma_put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)cma_get32(p) << 32 | cma_get32(p + 4);
}

static uint16_t mad_attr(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

/* MAD base header (13.4.3): version 1, class CM, class version 2, Send. */
void cma_mad_hdr(uint8_t *mad, uint16_t attr, uint64_t tid)
{
	memset(mad, 0, SNIC_CM_MAD_SIZE);
	mad[0] = 1;
	mad[1] = SNIC_MAD_CLASS_CM;
	mad[2] = 2;
	mad[3] = SNIC_MAD_METHOD_SEND;
	put64(mad + 8, tid);
	put16(mad + 16, attr);
}

static int64_t cm_timeout_ns(unsigned t)
{
	return (int64_t)4096 << t; /* 4.096 us * 2^t */
}

static uint64_t sid_of(const struct cma_id *c)
{
	return CMA_SID_BASE | (uint64_t)c->id.ps << 16 |
	       (c->parent ? c->src_port : c->dst_port);
}

/* Send last_mad and (re)start its response timer. */
static void send_tracked(struct cma_id *c, int64_t wait_ns)
{
	c->tries = 0;
	c->timer = CMA_T_MAD;
	c->deadline_ns = cma_now_ns() + wait_ns;
	cma_send_mad(c->dev, &c->dst_ip, c->last_mad, 0);
}

/* struct cma_hdr (Linux cma.c): cma_version 0, ip_version in bits 7:4,
 * the source port, then two 16-byte addresses: an IPv6 address whole,
 * an IPv4 one in the last word (union cma_ip_addr; the first 12 bytes
 * zero, not the ::ffff: of a mapped address). */
static void ip_hdr_put(uint8_t *h, const struct cma_ip *sip, uint16_t sport,
		       const struct cma_ip *dip)
{
	uint32_t s4, d4;

	memset(h, 0, CMA_IP_HDR_LEN);
	h[0] = 0;
	put16(h + 2, sport);
	if (cma_ip_is_v4(dip, &d4)) {
		cma_ip_is_v4(sip, &s4);
		h[1] = 4 << 4;
		cma_put32(h + 16, s4);
		cma_put32(h + 32, d4);
	} else {
		h[1] = 6 << 4;
		memcpy(h + 4, sip->b, 16);
		memcpy(h + 20, dip->b, 16);
	}
}

/* The addresses of a received cma_hdr (version 4 or 6). */
static void ip_hdr_get(const uint8_t *h, struct cma_ip *sip, struct cma_ip *dip)
{
	if ((h[1] >> 4) == 4) {
		*sip = cma_ip_v4(cma_get32(h + 16));
		*dip = cma_ip_v4(cma_get32(h + 32));
	} else {
		memcpy(sip->b, h + 4, 16);
		memcpy(dip->b, h + 20, 16);
	}
}

/* ---------------------------------------------------------------------- */
/* Building messages.                                                      */

static void build_req(struct cma_id *c, uint32_t qpn, const void *pd, uint8_t len)
{
	uint8_t *m = M(c->last_mad);
	struct cma_dev *d = c->dev;

	cma_mad_hdr(c->last_mad, SNIC_CM_ATTR_REQ, c->tid);
	cma_put32(m + 0, c->local_cid);
	put64(m + 8, sid_of(c));
	memcpy(m + 16, &d->guid, 8);
	cma_put32(m + 32, qpn << 8 | c->resp_res);
	cma_put32(m + 36, c->init_depth);
	m[43] = (uint8_t)(CMA_RESP_TIMEOUT << 3 | (c->id.qp_type == IBV_QPT_UC) << 1 |
			  c->flow_control);
	cma_put32(m + 44, c->my_psn << 8 | CMA_RESP_TIMEOUT << 3 | c->retry_cnt);
	put16(m + 48, 0xffff);
	m[50] = (uint8_t)(c->mtu << 4 | c->rnr_retry);
	m[51] = (uint8_t)(15 << 4 | c->srq << 3);
	put16(m + 52, 0xffff); /* permissive LIDs: RoCE has none */
	put16(m + 54, 0xffff);
	/* primary path (12.7.11-12): RoCE v2 GIDs are the IP addresses,
	 * IPv4 mapped or IPv6 (A17.4.5.1) */
	memcpy(m + 56, cma_dev_gid(d, &c->dst_ip, NULL)->raw, 16);
	memcpy(m + 72, c->id.route.addr.addr.ibaddr.dgid.raw, 16);
	m[92] = c->tos;
	m[93] = 64;            /* hop limit: routed (RoCE v2) */
	m[95] = (uint8_t)(c->ack_timeout << 3);
	ip_hdr_put(m + 140, &c->src_ip, c->src_port, &c->dst_ip);
	if (len)
		memcpy(m + 140 + CMA_IP_HDR_LEN, pd, len);
}

static void build_rep(struct cma_id *c, uint32_t qpn, const void *pd, uint8_t len)
{
	uint8_t *m = M(c->last_mad);

	cma_mad_hdr(c->last_mad, SNIC_CM_ATTR_REP, c->tid);
	cma_put32(m + 0, c->local_cid);
	cma_put32(m + 4, c->remote_cid);
	cma_put32(m + 12, qpn << 8);
	cma_put32(m + 20, c->my_psn << 8);
	m[24] = c->resp_res;
	m[25] = c->init_depth;
	m[26] = (uint8_t)(CMA_QP_TIMEOUT << 3 | c->flow_control);
	m[27] = (uint8_t)(c->rnr_retry << 5 | c->srq << 4);
	memcpy(m + 28, &c->dev->guid, 8);
	if (len)
		memcpy(m + 36, pd, len);
}

/* RTU, DREQ, DREP: local and remote IDs, then private data. */
static void build_short(struct cma_id *c, uint8_t *mad, uint16_t attr)
{
	cma_mad_hdr(mad, attr, c->tid);
	cma_put32(M(mad) + 0, c->local_cid);
	cma_put32(M(mad) + 4, c->remote_cid);
	if (attr == SNIC_CM_ATTR_DREQ)
		cma_put32(M(mad) + 8, c->remote_qpn << 8);
}

static void send_rej(struct cma_dev *d, const struct cma_ip *ip, uint64_t tid, uint32_t local,
		     uint32_t remote, uint8_t msg, uint16_t reason,
		     const void *pd, uint8_t len)
{
	uint8_t mad[SNIC_CM_MAD_SIZE];

	cma_mad_hdr(mad, SNIC_CM_ATTR_REJ, tid);
	cma_put32(M(mad) + 0, local);
	cma_put32(M(mad) + 4, remote);
	M(mad)[8] = (uint8_t)(msg << 6);
	put16(M(mad) + 10, reason);
	if (len)
		memcpy(M(mad) + 84, pd, len);
	cma_send_mad(d, ip, mad, 0);
}

static void send_mra(struct cma_id *c, uint8_t msg)
{
	uint8_t mad[SNIC_CM_MAD_SIZE];

	build_short(c, mad, SNIC_CM_ATTR_MRA);
	M(mad)[8] = (uint8_t)(msg << 6);
	M(mad)[9] = (uint8_t)(CMA_MRA_TIMEOUT << 3);
	cma_send_mad(c->dev, &c->dst_ip, mad, 0);
}

/* If this process dies while connected, the firmware sends our DREQ. */
static void arm_dreq(struct cma_id *c)
{
	uint8_t mad[SNIC_CM_MAD_SIZE];

	build_short(c, mad, SNIC_CM_ATTR_DREQ);
	cma_arm(c->dev, c->local_cid, &c->dst_ip, mad);
}

static void disarm(struct cma_id *c)
{
	if (c->dev && c->local_cid)
		cma_arm(c->dev, c->local_cid, &c->dst_ip, NULL);
}

/* ---------------------------------------------------------------------- */
/* Events with connection parameters.                                      */

static void post_conn(struct cma_id *c, enum rdma_cm_event_type t, int status,
		      const uint8_t *pd, unsigned len, struct cma_id *listen)
{
	struct rdma_conn_param *p;

	if (cma_post(c, t, status, pd, len, listen))
		return;
	p = &cma_last_posted(c)->ev.param.conn;
	p->responder_resources = c->resp_res;
	p->initiator_depth = c->init_depth;
	p->flow_control = c->flow_control;
	p->retry_count = c->retry_cnt;
	p->rnr_retry_count = c->peer_rnr_retry;
	p->srq = c->srq;
	p->qp_num = c->remote_qpn;
}

static void post_ud(struct cma_id *c, enum rdma_cm_event_type t, int status,
		    const uint8_t *pd, unsigned len, struct cma_id *listen)
{
	struct rdma_ud_param *u;

	if (cma_post(c, t, status, pd, len, listen))
		return;
	u = &cma_last_posted(c)->ev.param.ud;
	u->qp_num = c->remote_qpn;
	u->qkey = c->remote_qkey;
	if (t == RDMA_CM_EVENT_ESTABLISHED)
		cma_peer_ah(c, &u->ah_attr);
}

/* ---------------------------------------------------------------------- */
/* Active side.                                                            */

static uint8_t min8(unsigned a, unsigned b)
{
	return (uint8_t)(a < b ? a : b);
}

static int connect_sidr(struct cma_id *c, const struct rdma_conn_param *p)
{
	uint8_t *m = M(c->last_mad);
	uint8_t len = p ? p->private_data_len : 0;

	if (len > CMA_SIDR_REQ_PD - CMA_IP_HDR_LEN)
		return EINVAL;
	c->local_cid = cma_alloc_cid(c->dev);
	c->tid = cma_rand64();
	cma_mad_hdr(c->last_mad, SNIC_CM_ATTR_SIDR_REQ, c->tid);
	cma_put32(m + 0, c->local_cid);
	put16(m + 4, 0xffff);
	put64(m + 8, sid_of(c));
	ip_hdr_put(m + 16, &c->src_ip, c->src_port, &c->dst_ip);
	if (len)
		memcpy(m + 16 + CMA_IP_HDR_LEN, p->private_data, len);
	c->state = CMA_SIDR_REQ_SENT;
	send_tracked(c, cm_timeout_ns(CMA_RESP_TIMEOUT));
	return 0;
}

static int connect_locked(struct cma_id *c, const struct rdma_conn_param *p)
{
	uint32_t qpn = c->id.qp ? c->id.qp->qp_num : (p ? p->qp_num : 0);
	uint8_t len = p ? p->private_data_len : 0;

	if (c->state != CMA_ROUTE_RESOLVED)
		return EINVAL;
	if (c->id.qp_type == IBV_QPT_UD)
		return connect_sidr(c, p);
	if (len > CMA_REQ_PD - CMA_IP_HDR_LEN || (len && !p->private_data) || !qpn)
		return EINVAL;
	c->resp_res = min8(p ? p->responder_resources : c->dev->max_rd_atom, c->dev->max_rd_atom);
	c->init_depth = min8(p ? p->initiator_depth : c->dev->max_rd_atom, c->dev->max_rd_atom);
	c->retry_cnt = min8(p ? p->retry_count : 7, 7);
	c->rnr_retry = min8(p ? p->rnr_retry_count : 7, 7);
	c->flow_control = p ? !!p->flow_control : 1;
	c->srq = c->id.qp ? c->id.srq != NULL || c->id.qp->srq != NULL : (p && p->srq);
	if (!c->id.qp || !c->my_psn)
		c->my_psn = cma_rand_psn();
	c->local_cid = cma_alloc_cid(c->dev);
	c->tid = cma_rand64();
	build_req(c, qpn, len ? p->private_data : NULL, len);
	c->state = CMA_REQ_SENT;
	send_tracked(c, cm_timeout_ns(CMA_RESP_TIMEOUT));
	return 0;
}

CMA_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = to_cid(id);
	int err;

	if (!id)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	err = connect_locked(c, conn_param);
	pthread_mutex_unlock(&cma_lock);
	if (err)
		return cma_fail(err);
	return c->sync ? cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

static void rep_in(struct cma_id *c, const uint8_t *mad)
{
	const uint8_t *m = M(mad);
	uint8_t rtu[SNIC_CM_MAD_SIZE];

	if (c->state == CMA_ESTABLISHED && mad_attr(c->last_mad) == SNIC_CM_ATTR_RTU) {
		cma_send_mad(c->dev, &c->dst_ip, c->last_mad, 1); /* our RTU was lost */
		return;
	}
	if (c->state != CMA_REQ_SENT)
		return;
	c->timer = CMA_T_NONE;
	c->remote_cid = cma_get32(m + 0);
	c->remote_qpn = cma_get32(m + 12) >> 8;
	c->peer_psn = cma_get32(m + 20) >> 8;
	/* what we may have in flight is what the peer can take (12.7.28) */
	c->init_depth = min8(c->init_depth, m[24]);
	c->resp_res = min8(c->resp_res, m[25]);
	c->peer_rnr_retry = m[27] >> 5;
	c->srq = (m[27] >> 4) & 1;
	if (!c->id.qp) { /* the application moves its QP, then rdma_establish */
		c->state = CMA_REP_RCVD;
		post_conn(c, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, m + 36, CMA_REP_PD, NULL);
		return;
	}
	if (cma_qp_to(c, IBV_QPS_RTR) || cma_qp_to(c, IBV_QPS_RTS)) {
		send_rej(c->dev, &c->dst_ip, c->tid, c->local_cid, c->remote_cid, 1,
			 REJ_CONSUMER, NULL, 0);
		c->state = CMA_DISCONNECTED;
		post_conn(c, RDMA_CM_EVENT_CONNECT_ERROR, -errno, NULL, 0, NULL);
		return;
	}
	build_short(c, rtu, SNIC_CM_ATTR_RTU);
	memcpy(c->last_mad, rtu, sizeof(rtu));
	cma_send_mad(c->dev, &c->dst_ip, rtu, 0);
	c->state = CMA_ESTABLISHED;
	arm_dreq(c);
	post_conn(c, RDMA_CM_EVENT_ESTABLISHED, 0, m + 36, CMA_REP_PD, NULL);
}

CMA_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	struct cma_id *c = to_cid(id);

	if (!id)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_REP_RCVD) {
		pthread_mutex_unlock(&cma_lock);
		return cma_fail(EINVAL);
	}
	if (id->qp && (cma_qp_to(c, IBV_QPS_RTR) || cma_qp_to(c, IBV_QPS_RTS))) {
		int err = errno;

		pthread_mutex_unlock(&cma_lock);
		return cma_fail(err);
	}
	build_short(c, c->last_mad, SNIC_CM_ATTR_RTU);
	cma_send_mad(c->dev, &c->dst_ip, c->last_mad, 0);
	c->state = CMA_ESTABLISHED;
	arm_dreq(c);
	pthread_mutex_unlock(&cma_lock);
	return 0;
}

static void sidr_rep_in(struct cma_id *c, const uint8_t *mad)
{
	const uint8_t *m = M(mad);

	if (c->state != CMA_SIDR_REQ_SENT)
		return;
	c->timer = CMA_T_NONE;
	if (m[4] != 0) { /* 12.11.2: the ServiceID is not served there */
		c->state = CMA_DISCONNECTED;
		post_ud(c, RDMA_CM_EVENT_UNREACHABLE, m[4], m + 96, CMA_SIDR_REP_PD, NULL);
		return;
	}
	c->remote_qpn = cma_get32(m + 8) >> 8;
	c->remote_qkey = cma_get32(m + 20);
	c->state = CMA_ESTABLISHED;
	post_ud(c, RDMA_CM_EVENT_ESTABLISHED, 0, m + 96, CMA_SIDR_REP_PD, NULL);
}

/* ---------------------------------------------------------------------- */
/* Passive side.                                                           */

/* Does listener l take a request from an IPv4 (v4) or IPv6 peer?  As
 * Linux cma.c's cma_match_private_data: a wildcard without AFONLY takes
 * both families, anything else the family it was bound with. */
static bool listener_takes(const struct cma_id *l, bool v4)
{
	if (cma_ip_is_any(&l->src_ip))
		return !l->afonly || (l->bound6 ? !v4 : v4);
	return cma_ip_is_v4(&l->src_ip, NULL) == v4;
}

static struct cma_id *find_listener(struct cma_dev *d, uint64_t sid,
				    const struct cma_ip *peer)
{
	uint16_t ps = (uint16_t)(sid >> 16), port = (uint16_t)sid;
	bool v4 = cma_ip_is_v4(peer, NULL);

	if ((sid & ~0xffffffffull) != 0 || (sid & 0xff000000u) != CMA_SID_BASE)
		return NULL;
	for (struct cma_id *c = cma_ids; c; c = c->next)
		if (c->state == CMA_LISTEN && c->id.ps == ps && c->src_port == port &&
		    (!c->dev || c->dev == d) && !c->destroying &&
		    listener_takes(c, v4))
			return c;
	return NULL;
}

/* An id already made for this request (a duplicate REQ / SIDR_REQ). */
static struct cma_id *find_remote(struct cma_dev *d, const struct cma_ip *ip,
				  uint32_t rcid)
{
	for (struct cma_id *c = cma_ids; c; c = c->next)
		if (c->dev == d && c->parent && cma_ip_eq(&c->dst_ip, ip) &&
		    c->remote_cid == rcid)
			return c;
	for (struct cma_id *c = cma_ids; c; c = c->next)
		if (c->dev == d && cma_ip_eq(&c->dst_ip, ip) && c->remote_cid == rcid &&
		    c->state != CMA_IDLE && c->local_cid)
			return c;
	return NULL;
}

/* A passive id for a request from ip: our address of the request's
 * family, the peer's from the CM header (Linux cma_save_ip_info), each
 * reported in that family. */
static struct cma_id *new_child(struct cma_id *l, struct cma_dev *d,
				const struct cma_ip *ip, const uint8_t *iph)
{
	struct cma_id *c = cma_id_new(l->id.channel, l->id.context, l->id.ps,
				      l->id.qp_type);
	struct cma_ip hsrc, hdst;
	int v6 = !cma_ip_is_v4(ip, NULL);

	if (!c)
		return NULL;
	c->parent = l;
	c->dev = d;
	c->id.verbs = d->verbs;
	c->id.port_num = 1;
	if (v6)
		memcpy(c->src_ip.b, d->gid6.raw, 16);
	else
		c->src_ip = cma_ip_v4(d->ip);
	c->src_port = l->src_port;
	c->dst_ip = *ip;
	c->dst_port = (uint16_t)(iph[2] << 8 | iph[3]);
	c->bound6 = v6;
	c->mtu = d->mtu;
	c->tos = l->tos;
	ip_hdr_get(iph, &hsrc, &hdst);
	cma_ip_sockaddr(&c->id.route.addr.src_storage, &c->src_ip, c->src_port, v6);
	cma_ip_sockaddr(&c->id.route.addr.dst_storage, &hsrc, c->dst_port, v6);
	cma_id_fill_route(c);
	c->id.route.num_paths = 1;
	l->pending++;
	return c;
}

/* cma_hdr version 0, and the IP version of the frame it came in (a
 * header naming IPv4 addresses over IPv6 is refused, as the kernel's
 * cma_check_req_qp_type / cma_save_net_info would mismatch). */
static int ip_hdr_ok(const uint8_t *iph, const struct cma_ip *peer)
{
	return iph[0] == 0 &&
	       (iph[1] >> 4) == (cma_ip_is_v4(peer, NULL) ? 4 : 6);
}

static void req_in(struct cma_dev *d, const struct cma_ip *ip, const uint8_t *mad)
{
	const uint8_t *m = M(mad);
	uint32_t rcid = cma_get32(m + 0);
	struct cma_id *c = find_remote(d, ip, rcid), *l;

	if (c) {
		if (c->state == CMA_REQ_RCVD)
			send_mra(c, 0);      /* the application is deciding */
		else if (c->state == CMA_REP_SENT)
			cma_send_mad(d, ip, c->last_mad, 1);
		else if (c->state == CMA_DISCONNECTED && c->local_cid && c->parent)
			send_rej(d, ip, c->tid, c->local_cid, rcid, 0, REJ_CONSUMER,
				 NULL, 0); /* our REJ was lost (12.6.7) */
		return;
	}
	l = find_listener(d, get64(m + 8), ip);
	if (!l || !ip_hdr_ok(m + 140, ip)) {
		send_rej(d, ip, get64(mad + 8), cma_alloc_cid(d), rcid, 0,
			 l ? REJ_CONSUMER : REJ_INVALID_SID, NULL, 0);
		return;
	}
	if (l->pending >= l->backlog)
		return; /* the backlog is full: the REQ is retried */
	c = new_child(l, d, ip, m + 140);
	if (!c)
		return;
	c->tid = get64(mad + 8);
	c->remote_cid = rcid;
	c->remote_qpn = cma_get32(m + 32) >> 8;
	c->init_depth = m[35];     /* as the event reports them: ours = theirs swapped */
	c->resp_res = m[39];
	c->flow_control = m[43] & 1;
	c->peer_psn = cma_get32(m + 44) >> 8;
	c->retry_cnt = m[47] & 7;
	c->mtu = (enum ibv_mtu)min8(m[50] >> 4, d->mtu);
	c->peer_rnr_retry = m[50] & 7;
	c->srq = (m[51] >> 3) & 1;
	c->state = CMA_REQ_RCVD;
	post_conn(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m + 140 + CMA_IP_HDR_LEN,
		  CMA_REQ_PD - CMA_IP_HDR_LEN, l);
}

static void sidr_req_in(struct cma_dev *d, const struct cma_ip *ip, const uint8_t *mad)
{
	const uint8_t *m = M(mad);
	uint32_t rid = cma_get32(m + 0);
	struct cma_id *c = find_remote(d, ip, rid), *l;

	if (c) {
		if (c->state == CMA_ESTABLISHED) /* our SIDR_REP was lost */
			cma_send_mad(d, ip, c->last_mad, 1);
		return;
	}
	l = find_listener(d, get64(m + 8), ip);
	if (!l || !ip_hdr_ok(m + 16, ip) || l->pending >= l->backlog)
		return; /* the firmware answers unknown ServiceIDs */
	c = new_child(l, d, ip, m + 16);
	if (!c)
		return;
	c->tid = get64(mad + 8);
	c->remote_cid = rid;
	c->state = CMA_SIDR_REQ_RCVD;
	post_ud(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m + 16 + CMA_IP_HDR_LEN,
		CMA_SIDR_REQ_PD - CMA_IP_HDR_LEN, l);
}

static int accept_sidr(struct cma_id *c, const struct rdma_conn_param *p)
{
	uint8_t *m = M(c->last_mad);
	uint8_t len = p ? p->private_data_len : 0;
	uint32_t qpn = c->id.qp ? c->id.qp->qp_num : (p ? p->qp_num : 0);

	if (len > CMA_SIDR_REP_PD)
		return EINVAL;
	cma_mad_hdr(c->last_mad, SNIC_CM_ATTR_SIDR_REP, c->tid);
	cma_put32(m + 0, c->remote_cid);
	cma_put32(m + 8, qpn << 8);
	put64(m + 12, sid_of(c));
	cma_put32(m + 20, CMA_UDP_QKEY);
	if (len)
		memcpy(m + 96, p->private_data, len);
	cma_send_mad(c->dev, &c->dst_ip, c->last_mad, 0);
	if (c->parent)
		c->parent->pending--;
	c->state = CMA_ESTABLISHED;
	return 0;
}

static int accept_locked(struct cma_id *c, const struct rdma_conn_param *p)
{
	uint8_t len = p ? p->private_data_len : 0;
	uint32_t qpn = c->id.qp ? c->id.qp->qp_num : (p ? p->qp_num : 0);

	if (c->state == CMA_SIDR_REQ_RCVD)
		return accept_sidr(c, p);
	if (c->state != CMA_REQ_RCVD)
		return EINVAL;
	if (len > CMA_REP_PD || (len && !p->private_data) || !qpn)
		return EINVAL;
	/* the event offered resp_res / init_depth; the application may lower them */
	if (p) {
		c->resp_res = min8(p->responder_resources, c->resp_res);
		c->init_depth = min8(p->initiator_depth, c->init_depth);
	}
	c->resp_res = min8(c->resp_res, c->dev->max_rd_atom);
	c->init_depth = min8(c->init_depth, c->dev->max_rd_atom);
	c->rnr_retry = min8(p ? p->rnr_retry_count : 7, 7);
	if (!c->id.qp || !c->my_psn)
		c->my_psn = cma_rand_psn();
	if (c->id.qp && (cma_qp_to(c, IBV_QPS_RTR) || cma_qp_to(c, IBV_QPS_RTS)))
		return errno;
	c->local_cid = cma_alloc_cid(c->dev);
	build_rep(c, qpn, len ? p->private_data : NULL, len);
	c->state = CMA_REP_SENT;
	if (c->parent)
		c->parent->pending--;
	send_tracked(c, cm_timeout_ns(CMA_RESP_TIMEOUT));
	arm_dreq(c);
	return 0;
}

CMA_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = to_cid(id);
	int err, ud;

	if (!id)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	ud = c->state == CMA_SIDR_REQ_RCVD;
	err = accept_locked(c, conn_param);
	pthread_mutex_unlock(&cma_lock);
	if (err)
		return cma_fail(err);
	return c->sync && !ud ? cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

static int reject_locked(struct cma_id *c, const void *pd, uint8_t len, uint16_t reason)
{
	uint8_t *m = M(c->last_mad);

	if (c->state == CMA_SIDR_REQ_RCVD) {
		if (len > CMA_SIDR_REP_PD)
			return EINVAL;
		cma_mad_hdr(c->last_mad, SNIC_CM_ATTR_SIDR_REP, c->tid);
		cma_put32(m + 0, c->remote_cid);
		m[4] = 2; /* rejected */
		put64(m + 12, sid_of(c));
		if (len)
			memcpy(m + 96, pd, len);
		cma_send_mad(c->dev, &c->dst_ip, c->last_mad, 0);
	} else if (c->state == CMA_REQ_RCVD) {
		if (len > CMA_REJ_PD)
			return EINVAL;
		c->local_cid = cma_alloc_cid(c->dev);
		send_rej(c->dev, &c->dst_ip, c->tid, c->local_cid, c->remote_cid, 0,
			 reason, pd, len);
	} else {
		return EINVAL;
	}
	if (c->parent)
		c->parent->pending--;
	c->state = CMA_DISCONNECTED;
	return 0;
}

static int reject_call(struct rdma_cm_id *id, const void *pd, uint8_t len,
		       uint16_t reason)
{
	int err;

	if (!id || (len && !pd))
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	err = reject_locked(to_cid(id), pd, len, reason);
	pthread_mutex_unlock(&cma_lock);
	return err ? cma_fail(err) : 0;
}

CMA_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len)
{
	return reject_call(id, private_data, private_data_len, REJ_CONSUMER);
}

/* ECE: snic has no vendor options to refuse but these (12.6.7.2, 35) */
CMA_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
			       uint8_t private_data_len)
{
	return reject_call(id, private_data, private_data_len, REJ_VENDOR_OPTION);
}

static void established_in(struct cma_id *c, const uint8_t *pd, unsigned len)
{
	if (c->state != CMA_REP_SENT)
		return;
	c->timer = CMA_T_NONE;
	c->state = CMA_ESTABLISHED;
	post_conn(c, RDMA_CM_EVENT_ESTABLISHED, 0, pd, len, NULL);
}

CMA_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	if (!id)
		return cma_fail(EINVAL);
	/* data before the RTU: the connection is up (IBTA 12.9.7.2) */
	if (event == IBV_EVENT_COMM_EST) {
		pthread_mutex_lock(&cma_lock);
		established_in(to_cid(id), NULL, 0);
		pthread_mutex_unlock(&cma_lock);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Disconnection, rejection, timeouts.                                     */

static void drep_send(struct cma_id *c)
{
	uint8_t mad[SNIC_CM_MAD_SIZE];

	build_short(c, mad, SNIC_CM_ATTR_DREP);
	cma_send_mad(c->dev, &c->dst_ip, mad, 0);
}

static void dreq_in(struct cma_id *c)
{
	enum cma_state was = c->state;

	if (was != CMA_ESTABLISHED && was != CMA_DREQ_SENT && was != CMA_REP_SENT &&
	    was != CMA_DISCONNECTED)
		return;
	drep_send(c);
	if (was == CMA_DISCONNECTED)
		return; /* our DREP was lost: answered again */
	c->timer = CMA_T_NONE;
	c->state = CMA_DISCONNECTED;
	disarm(c);
	post_conn(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
}

static void rej_in(struct cma_id *c, const uint8_t *mad)
{
	const uint8_t *m = M(mad);
	uint16_t reason = (uint16_t)(m[10] << 8 | m[11]);

	switch (c->state) {
	case CMA_REQ_SENT: case CMA_REP_SENT: case CMA_REP_RCVD:
		break;
	default:
		return;
	}
	c->timer = CMA_T_NONE;
	c->state = CMA_DISCONNECTED;
	disarm(c);
	post_conn(c, RDMA_CM_EVENT_REJECTED, reason, m + 84, CMA_REJ_PD, NULL);
}

CMA_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id *c = to_cid(id);
	int err = 0, wait = 0;

	if (!id)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (id->qp && id->qp_type != IBV_QPT_UD)
		cma_qp_to(c, IBV_QPS_ERR); /* as rdma-core: no more work */
	switch (c->state) {
	case CMA_ESTABLISHED:
	case CMA_REP_SENT:
		if (id->qp_type == IBV_QPT_UD) {
			c->state = CMA_DISCONNECTED;
			break;
		}
		build_short(c, c->last_mad, SNIC_CM_ATTR_DREQ);
		c->state = CMA_DREQ_SENT;
		disarm(c);
		send_tracked(c, cm_timeout_ns(CMA_RESP_TIMEOUT));
		wait = 1;
		break;
	case CMA_DREQ_SENT:
	case CMA_DISCONNECTED:
		wait = c->state == CMA_DREQ_SENT;
		break;
	default:
		err = EINVAL;
	}
	pthread_mutex_unlock(&cma_lock);
	if (err)
		return cma_fail(err);
	return c->sync && wait ? cma_sync_wait(c, RDMA_CM_EVENT_DISCONNECTED) : 0;
}

/* rdma_destroy_id of an id still in a connection: tell the peer. */
void cma_conn_abort(struct cma_id *c)
{
	uint8_t mad[SNIC_CM_MAD_SIZE];

	switch (c->state) {
	case CMA_REQ_SENT: case CMA_REP_SENT: case CMA_REP_RCVD:
		send_rej(c->dev, &c->dst_ip, c->tid, c->local_cid, c->remote_cid,
			 c->state == CMA_REQ_SENT ? 0 : 1, REJ_CONSUMER, NULL, 0);
		break;
	case CMA_REQ_RCVD: case CMA_SIDR_REQ_RCVD:
		reject_locked(c, NULL, 0, REJ_CONSUMER);
		break;
	case CMA_ESTABLISHED:
		if (c->id.qp_type != IBV_QPT_UD) {
			build_short(c, mad, SNIC_CM_ATTR_DREQ);
			cma_send_mad(c->dev, &c->dst_ip, mad, 0);
		}
		break;
	default:
		break;
	}
	disarm(c);
	c->state = CMA_DISCONNECTED;
}

void cma_conn_abandon(struct cma_id *c)
{
	cma_conn_abort(c);  /* REQ_RCVD: REJ, and the listener's backlog */
	cma_id_unlink(c);
	pthread_cond_destroy(&c->cv);
	free(c);
}

void cma_mad_timer(struct cma_id *c, int64_t now)
{
	enum cma_state was = c->state;

	if (c->tries < CMA_MAX_RETRIES) {
		c->tries++;
		c->deadline_ns = now + cm_timeout_ns(CMA_RESP_TIMEOUT);
		cma_send_mad(c->dev, &c->dst_ip, c->last_mad, 1);
		return;
	}
	c->timer = CMA_T_NONE;
	cma_note_timeout(c->dev);
	c->state = CMA_DISCONNECTED;
	disarm(c);
	switch (was) {
	case CMA_REQ_SENT: case CMA_REP_SENT:
		send_rej(c->dev, &c->dst_ip, c->tid, c->local_cid, c->remote_cid,
			 was == CMA_REQ_SENT ? 0 : 1, REJ_TIMEOUT, NULL, 0);
		post_conn(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0, NULL);
		break;
	case CMA_SIDR_REQ_SENT:
		post_ud(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0, NULL);
		break;
	case CMA_DREQ_SENT:
		post_conn(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* A MAD from the firmware (cma_lock held).                                */

static struct cma_id *by_local(struct cma_dev *d, uint32_t cid)
{
	for (struct cma_id *c = cma_ids; c; c = c->next)
		if (c->dev == d && c->local_cid == cid && !c->destroying)
			return c;
	return NULL;
}

void cma_mad_in(struct cma_dev *d, const struct cma_ip *ip, const uint8_t *mad)
{
	const uint8_t *m = M(mad);
	uint16_t attr = mad_attr(mad);
	struct cma_id *c;

	if (attr == SNIC_CM_ATTR_REQ) {
		req_in(d, ip, mad);
		return;
	}
	if (attr == SNIC_CM_ATTR_SIDR_REQ) {
		sidr_req_in(d, ip, mad);
		return;
	}
	c = by_local(d, cma_get32(m + (attr == SNIC_CM_ATTR_SIDR_REP ? 0 : 4)));
	if (!c || !cma_ip_eq(&c->dst_ip, ip))
		return;
	if (attr != SNIC_CM_ATTR_SIDR_REP && attr != SNIC_CM_ATTR_REP &&
	    c->remote_cid != cma_get32(m + 0) &&
	    !(attr == SNIC_CM_ATTR_REJ && c->state == CMA_REQ_SENT))
		return; /* not from our peer's connection: stale (12.9.8.3.1) */
	switch (attr) {
	case SNIC_CM_ATTR_REP: rep_in(c, mad); break;
	case SNIC_CM_ATTR_RTU: established_in(c, m + 8, CMA_RTU_PD); break;
	case SNIC_CM_ATTR_REJ: rej_in(c, mad); break;
	case SNIC_CM_ATTR_MRA:
		if (c->timer == CMA_T_MAD)
			c->deadline_ns = cma_now_ns() + cm_timeout_ns(m[9] >> 3);
		break;
	case SNIC_CM_ATTR_DREQ: dreq_in(c); break;
	case SNIC_CM_ATTR_DREP:
		if (c->state == CMA_DREQ_SENT) {
			c->timer = CMA_T_NONE;
			c->state = CMA_DISCONNECTED;
			post_conn(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0, NULL);
		}
		break;
	case SNIC_CM_ATTR_SIDR_REP: sidr_rep_in(c, mad); break;
	default: break; /* LAP / APR: no alternate paths on RoCE */
	}
}
