/* SPDX-License-Identifier: MIT */
/*
 * QPs on rdma_cm ids: rdma_create_qp (CQs and completion channels made
 * when the caller gives none, the QP taken to INIT, or to RTS for UD),
 * the RTR / RTS transitions the CM exchange decides (rdma_init_qp_attr),
 * SRQs, and the endpoint helpers rdma_create_ep / rdma_get_request /
 * rdma_getaddrinfo.
 */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cma.h"

void cma_peer_ah(const struct cma_id *c, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = c->id.route.addr.addr.ibaddr.dgid;
	/* GID 0 (IPv4 mapped) or 1 (IPv6): the family of the peer's address */
	cma_dev_gid(c->dev, &c->dst_ip, &ah->grh.sgid_index);
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = c->tos;
	ah->port_num = 1;
}

/* The attributes for moving the id's QP to a->qp_state (cma_lock held). */
int cma_qp_attr(struct cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state st = a->qp_state;
	int ud = c->id.qp_type == IBV_QPT_UD;

	memset(a, 0, sizeof(*a));
	a->qp_state = st;
	*mask = IBV_QP_STATE;
	switch (st) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (ud) {
			a->qkey = CMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		if (ud)
			return 0;
		if (c->state != CMA_REP_SENT && c->state != CMA_REQ_RCVD &&
		    c->state != CMA_REQ_SENT && c->state != CMA_REP_RCVD &&
		    c->state != CMA_ESTABLISHED)
			return EINVAL;
		a->path_mtu = c->mtu;
		a->dest_qp_num = c->remote_qpn;
		a->rq_psn = c->my_psn; /* what our REQ/REP announced: see RTS */
		a->max_dest_rd_atomic = c->resp_res;
		a->min_rnr_timer = 12; /* 0.64 ms */
		cma_peer_ah(c, &a->ah_attr);
		*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		/* The Starting PSN of a REQ or REP is the PSN its sender
		 * expects to receive: the peer sends from it.  Linux's CM
		 * (drivers/infiniband/core/cm.c: ib_send_cm_req and
		 * ib_send_cm_rep take their own message's PSN as rq_psn,
		 * cm_req_handler and cm_rep_handler the peer's as sq_psn)
		 * reads it so, and with it every rdma_cm peer there is; the
		 * other reading connects snic to snic only (issue 15). */
		a->sq_psn = ud ? c->my_psn : c->peer_psn;
		*mask |= IBV_QP_SQ_PSN;
		if (ud)
			return 0;
		a->timeout = c->ack_timeout;
		a->retry_cnt = c->retry_cnt;
		a->rnr_retry = c->peer_rnr_retry;
		a->max_rd_atomic = c->init_depth;
		*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			 IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	case IBV_QPS_ERR:
	case IBV_QPS_RESET:
		return 0;
	default:
		return EINVAL;
	}
}

int cma_qp_to(struct cma_id *c, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };
	int mask, err;

	if (!c->id.qp)
		return 0;
	err = cma_qp_attr(c, &a, &mask);
	if (!err)
		err = ibv_modify_qp(c->id.qp, &a, mask);
	if (err)
		errno = err;
	return err;
}

CMA_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
				 int *qp_attr_mask)
{
	int err;

	if (!id || !qp_attr || !qp_attr_mask)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (qp_attr->qp_state == IBV_QPS_RTS && !to_cid(id)->my_psn)
		to_cid(id)->my_psn = 1;
	err = cma_qp_attr(to_cid(id), qp_attr, qp_attr_mask);
	pthread_mutex_unlock(&cma_lock);
	return err ? cma_fail(err) : 0;
}

static struct ibv_pd *default_pd(struct cma_id *c)
{
	if (c->id.pd)
		return c->id.pd;
	if (!c->dev)
		return NULL;
	if (!c->dev->pd)
		c->dev->pd = ibv_alloc_pd(c->dev->verbs);
	return c->dev->pd;
}

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq == id->recv_cq)
			id->send_cq = NULL;
		id->recv_cq = NULL;
	}
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel == id->recv_cq_channel)
			id->send_cq_channel = NULL;
		id->recv_cq_channel = NULL;
	}
	if (id->send_cq) {
		ibv_destroy_cq(id->send_cq);
		id->send_cq = NULL;
	}
	if (id->send_cq_channel) {
		ibv_destroy_comp_channel(id->send_cq_channel);
		id->send_cq_channel = NULL;
	}
}

/* As rdma-core: a CQ with its own completion channel for each queue the
 * caller gave no CQ for. */
static int make_cq(struct rdma_cm_id *id, struct ibv_comp_channel **ch,
		   struct ibv_cq **cq, uint32_t n)
{
	*ch = ibv_create_comp_channel(id->verbs);
	if (!*ch)
		return -1;
	*cq = ibv_create_cq(id->verbs, n ? (int)n : 1, id, *ch, 0);
	return *cq ? 0 : -1;
}

static int create_cqs(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *a)
{
	if (!a->recv_cq && !a->srq) {
		if (make_cq(id, &id->recv_cq_channel, &id->recv_cq, a->cap.max_recv_wr))
			return -1;
		a->recv_cq = id->recv_cq;
	}
	if (!a->send_cq) {
		if (make_cq(id, &id->send_cq_channel, &id->send_cq, a->cap.max_send_wr))
			return -1;
		a->send_cq = id->send_cq;
	}
	return 0;
}

CMA_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cma_id *c = to_cid(id);
	struct ibv_qp *qp;
	int err = 0;

	if (!id || !attr || !id->verbs || id->qp)
		return cma_fail(EINVAL);
	if (attr->qp_type != id->qp_type && !(id->qp_type == IBV_QPT_RC &&
					      attr->qp_type == IBV_QPT_UC))
		return cma_fail(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = default_pd(c);
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (!attr->pd || attr->pd->context != id->verbs)
		return cma_fail(EINVAL);
	if (!attr->srq && id->srq)
		attr->srq = id->srq;
	if (create_cqs(id, attr)) {
		err = errno;
		goto cqs;
	}
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp) {
		err = errno;
		goto cqs;
	}
	pthread_mutex_lock(&cma_lock);
	id->qp = qp;
	id->pd = attr->pd;
	c->my_psn = cma_rand_psn();
	if (cma_qp_to(c, IBV_QPS_INIT) ||
	    (id->qp_type == IBV_QPT_UD &&
	     (cma_qp_to(c, IBV_QPS_RTR) || cma_qp_to(c, IBV_QPS_RTS))))
		err = errno ? errno : EINVAL;
	if (err)
		id->qp = NULL;
	pthread_mutex_unlock(&cma_lock);
	if (!err)
		return 0;
	ibv_destroy_qp(qp);
cqs:
	destroy_cqs(id);
	return cma_fail(err);
}

CMA_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	if (!id || !qp_init_attr)
		return cma_fail(EINVAL);
	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0;
	a.pd = pd;
	ret = rdma_create_qp_ex(id, &a);
	if (!ret) {
		qp_init_attr->send_cq = a.send_cq;
		qp_init_attr->recv_cq = a.recv_cq;
		qp_init_attr->srq = a.srq;
		qp_init_attr->cap = a.cap;
	}
	return ret;
}

CMA_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id || !id->qp)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	destroy_cqs(id);
}

CMA_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a;

	if (!id || !attr || !id->verbs || id->srq)
		return cma_fail(EINVAL);
	if (attr->comp_mask & ~(unsigned)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE |
					  IBV_SRQ_INIT_ATTR_CQ))
		return cma_fail(EOPNOTSUPP);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC)
		return cma_fail(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd)
		attr->pd = default_pd(to_cid(id));
	if (!attr->pd)
		return cma_fail(EINVAL);
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	id->srq = ibv_create_srq(attr->pd, &a);
	if (!id->srq)
		return -1;
	id->pd = attr->pd;
	return 0;
}

CMA_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;
	int ret;

	if (!attr)
		return cma_fail(EINVAL);
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	a.pd = pd;
	ret = rdma_create_srq_ex(id, &a);
	if (!ret)
		attr->attr = a.attr;
	return ret;
}

CMA_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (!id || !id->srq)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

/* ---------------------------------------------------------------------- */
/* Endpoints.                                                              */

CMA_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			      struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm;
	enum rdma_port_space ps;

	if (!id || !res)
		return cma_fail(EINVAL);
	ps = res->ai_port_space ? (enum rdma_port_space)res->ai_port_space :
	     (res->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP);
	if (rdma_create_id(NULL, &cm, NULL, ps))
		return -1;
	if (qp_init_attr) /* as rdma-core: the QP type follows the address */
		qp_init_attr->qp_type = cm->qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm, res->ai_src_addr))
			goto err;
		if (qp_init_attr) {
			to_cid(cm)->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (!to_cid(cm)->ep_qp_attr)
				goto err;
			*to_cid(cm)->ep_qp_attr = *qp_init_attr;
		}
		cm->pd = pd;
		*id = cm;
		return 0;
	}
	if (rdma_resolve_addr(cm, res->ai_src_len ? res->ai_src_addr : NULL,
			      res->ai_dst_addr, 2000) ||
	    rdma_resolve_route(cm, 2000))
		goto err;
	if (qp_init_attr && rdma_create_qp(cm, pd, qp_init_attr))
		goto err;
	*id = cm;
	return 0;
err:
	{
		int e = errno;

		rdma_destroy_id(cm);
		errno = e;
	}
	return -1;
}

CMA_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

CMA_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id *l = to_cid(listen);
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr a;
	struct rdma_cm_id *n;

	if (!listen || !id || !l->sync)
		return cma_fail(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev))
		return -1;
	if (ev->status || ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		int err = ev->status < 0 ? -ev->status : EINVAL;

		rdma_ack_cm_event(ev);
		return cma_fail(err);
	}
	n = ev->id;
	if (rdma_migrate_id(n, NULL))
		goto err;
	if (l->ep_qp_attr) {
		a = *l->ep_qp_attr;
		if (rdma_create_qp(n, listen->pd, &a))
			goto err;
	}
	n->event = ev;
	*id = n;
	return 0;
err:
	{
		int e = errno;

		rdma_ack_cm_event(ev);
		rdma_reject(n, NULL, 0);
		rdma_destroy_id(n);
		errno = e;
	}
	return -1;
}

/* ---------------------------------------------------------------------- */
/* rdma_getaddrinfo: IPv4 and IPv6 through getaddrinfo(3).                 */

static int copy_ai(struct sockaddr **dst, socklen_t *len, const struct addrinfo *ai)
{
	*dst = malloc(ai->ai_addrlen);
	if (!*dst)
		return ENOMEM;
	memcpy(*dst, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	return 0;
}

static int hint_addrs(const struct rdma_addrinfo *h)
{
	return h && ((h->ai_src_addr && h->ai_src_len) ||
		     (h->ai_dst_addr && h->ai_dst_len));
}

static int dup_addr(struct sockaddr **dst, socklen_t *dlen,
		    const struct sockaddr *src, socklen_t len)
{
	if (!src || !len)
		return 0;
	*dst = malloc(len);
	if (!*dst)
		return ENOMEM;
	memcpy(*dst, src, len);
	*dlen = len;
	return 0;
}

/* No node and no service: the addresses the hints carry, as rdma-core
 * does (libfabric's verbs provider passes its peer's address this way). */
static int from_hints(const struct rdma_addrinfo *h, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	const struct sockaddr *a = h->ai_dst_addr ? h->ai_dst_addr : h->ai_src_addr;

	if (!r)
		return EAI_MEMORY;
	r->ai_flags = h->ai_flags;
	r->ai_family = a->sa_family;
	r->ai_port_space = h->ai_port_space ? h->ai_port_space : RDMA_PS_TCP;
	r->ai_qp_type = h->ai_qp_type ? h->ai_qp_type :
			(r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
	if (dup_addr(&r->ai_src_addr, &r->ai_src_len, h->ai_src_addr, h->ai_src_len) ||
	    dup_addr(&r->ai_dst_addr, &r->ai_dst_len, h->ai_dst_addr, h->ai_dst_len)) {
		rdma_freeaddrinfo(r);
		return EAI_MEMORY;
	}
	*res = r;
	return 0;
}

CMA_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints,
				struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_family = AF_INET }, *ai;
	struct rdma_addrinfo *r;
	int passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int ret;

	if (!res || (!node && !service && !hint_addrs(hints))) {
		errno = EINVAL;
		return EAI_FAIL;
	}
	if (!node && !service)
		return from_hints(hints, res);
	if (hints && hints->ai_family && hints->ai_family != AF_INET &&
	    hints->ai_family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return EAI_FAMILY;
	}
	if (hints && (hints->ai_flags & RAI_NUMERICHOST))
		h.ai_flags |= AI_NUMERICHOST;
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	/* the hints' family; without one IPv4 first (as before: "localhost"
	 * is 127.0.0.1), then IPv6 (a numeric IPv6 address, an AAAA name) */
	if (hints && hints->ai_family)
		h.ai_family = hints->ai_family;
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret && !(hints && hints->ai_family)) {
		h.ai_family = AF_INET6;
		ret = getaddrinfo(node, service, &h, &ai);
	}
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r) {
		freeaddrinfo(ai);
		return EAI_MEMORY;
	}
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type :
			(r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
	if (passive)
		ret = copy_ai(&r->ai_src_addr, &r->ai_src_len, ai);
	else
		ret = copy_ai(&r->ai_dst_addr, &r->ai_dst_len, ai);
	if (!ret && !passive && hints && hints->ai_src_len) {
		r->ai_src_addr = malloc(hints->ai_src_len);
		if (r->ai_src_addr) {
			memcpy(r->ai_src_addr, hints->ai_src_addr, hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
		}
	}
	freeaddrinfo(ai);
	if (ret) {
		rdma_freeaddrinfo(r);
		return EAI_MEMORY;
	}
	*res = r;
	return 0;
}

CMA_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = n;
	}
}

/* ---------------------------------------------------------------------- */
/* ECE (rdma-core 1.3): snic has no vendor options; the local ECE is kept
 * and the remote one reads as "none" (vendor_id 0), which is what a peer
 * without ECE looks like. */

CMA_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || !ece)
		return cma_fail(EINVAL);
	return 0;
}

CMA_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || !ece)
		return cma_fail(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}
