/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: queue pairs (RC, UC, UD): create, modify, query,
 * destroy.  The data path is in qp_post.c, the ibv_wr_* calls in qp_wr.c.
 *
 * A QP is one window extent (hd_rings): a page with its doorbell record,
 * then the SQ ring, then the RQ ring (each page aligned).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/route.h"
#include "verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* Create.                                                              */

static int qp_sizes(struct hd_qp *qp, const struct ibv_qp_cap *cap)
{
	uint32_t send_wr = cap->max_send_wr ? cap->max_send_wr : 1;
	uint32_t recv_wr = cap->max_recv_wr ? cap->max_recv_wr : 1;
	uint32_t seg, sq_stride, rq_stride;

	if (cap->max_send_wr > SNIC_MAX_QP_WR ||
	    cap->max_recv_wr > SNIC_MAX_QP_WR ||
	    cap->max_send_sge > SNIC_MAX_SGE ||
	    cap->max_recv_sge > SNIC_MAX_SGE ||
	    cap->max_inline_data > SNIC_MAX_INLINE)
		return EINVAL;
	seg = 16 * cap->max_send_sge;
	if (cap->max_inline_data > seg)
		seg = cap->max_inline_data;
	sq_stride = hd_roundup_pow2(sizeof(struct snic_send_wqe) + seg);
	rq_stride = hd_roundup_pow2(sizeof(struct snic_recv_wqe) +
				    16 * cap->max_recv_sge);
	if (rq_stride < 32)
		rq_stride = 32;

	qp->sq.cnt = hd_roundup_pow2(send_wr);
	qp->sq.log_stride = hd_ilog2(sq_stride);
	qp->rq.cnt = hd_roundup_pow2(recv_wr);
	qp->rq.log_stride = hd_ilog2(rq_stride);
	/* The actual capabilities, which may exceed the request (as mlx5
	 * reports them): whatever fits the stride, within device limits. */
	qp->sq.max_sge = (sq_stride - sizeof(struct snic_send_wqe)) / 16;
	if (qp->sq.max_sge > SNIC_MAX_SGE)
		qp->sq.max_sge = SNIC_MAX_SGE;
	qp->max_inline = sq_stride - sizeof(struct snic_send_wqe);
	if (qp->max_inline > SNIC_MAX_INLINE)
		qp->max_inline = SNIC_MAX_INLINE;
	qp->rq.max_sge = (rq_stride - sizeof(struct snic_recv_wqe)) / 16;
	if (qp->rq.max_sge > SNIC_MAX_SGE)
		qp->rq.max_sge = SNIC_MAX_SGE;
	return 0;
}

static void qp_caps(const struct hd_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.cnt;
	cap->max_recv_wr = qp->rq.cnt;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline;
}

static struct hd_qp *qp_of(struct hd_obj *o)
{
	return hd_container_of(o, struct hd_qp, obj);
}

static void lock_cqs(struct hd_qp *qp);
static void unlock_cqs(struct hd_qp *qp);
static void clean_cqs_locked(struct hd_qp *qp);

static void qp_forget(struct hd_obj *o)
{
	struct hd_qp *qp = qp_of(o);

	hd_async_purge(o->ctx, o);
	/* The firmware writes no more CQEs for this QP: drop the ones not
	 * polled yet (as mlx5 does), so a later poll never reports a
	 * completion of a QP that no longer exists. */
	lock_cqs(qp);
	clean_cqs_locked(qp);
	atomic_store_explicit(&o->ctx->qp_table[SNIC_QPN_IDX(o->handle)],
			      NULL, memory_order_release);
	unlock_cqs(qp);
}

static void qp_free(struct hd_obj *o)
{
	struct hd_qp *qp = qp_of(o);

	free(qp);
}

static const struct hd_obj_type qp_obj_type = {
	.kind = HD_OBJ_QP,
	.destroy_op = SNIC_CMD_DESTROY_QP,
	.forget = qp_forget,
	.free = qp_free,
};

/* The CQs, PD and SRQ the QP type needs, all of this context: an XRC
 * target has none (its domain instead), an XRC initiator no receive CQ
 * (its send CQ stands in for the firmware) and no SRQ. */
static int create_args_ok(struct ibv_context *context, struct ibv_pd *pd,
			  const struct ibv_qp_init_attr *attr,
			  struct ibv_xrcd *xrcd)
{
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return xrcd && xrcd->context == context && !attr->srq ? 0 : EINVAL;
	if (!pd || pd->context != context || !attr->send_cq ||
	    attr->send_cq->context != context)
		return EINVAL;
	if (attr->qp_type == IBV_QPT_XRC_SEND)
		return attr->srq ? EINVAL : 0;
	if (!attr->recv_cq || attr->recv_cq->context != context ||
	    (attr->srq && attr->srq->context != context))
		return EINVAL;
	/* RC, UC, UD and raw packet.  The kernel (e.g. rxe_qp_chk_init)
	 * answers EOPNOTSUPP for a QP type the device does not do. */
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_RAW_PACKET)
		return EOPNOTSUPP;
	if (attr->qp_type == IBV_QPT_RAW_PACKET && !hd_raw_qp_allowed())
		return EPERM; /* ib_uverbs: raw packet QPs need CAP_NET_RAW */
	return 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
			     struct ibv_qp_init_attr *attr)
{
	return hd_qp_create(pd->context, pd, attr, NULL);
}

struct ibv_qp *hd_qp_create(struct ibv_context *context, struct ibv_pd *pd,
			    struct ibv_qp_init_attr *attr,
			    struct ibv_xrcd *xrcd)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct snic_cmd_create_qp_ext inx;
	struct snic_cmd_create_qp *in_p = &inx.qp;
	uint64_t bytes[2];
	struct hd_qp *qp;
	int err = create_args_ok(context, pd, attr, xrcd);

	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = qp_sizes(qp, &attr->cap);
	if (err)
		goto fail;
	qp->scq = attr->send_cq ? to_hd_cq(attr->send_cq) : NULL;
	qp->rcq = attr->recv_cq && attr->qp_type != IBV_QPT_XRC_SEND
		  ? to_hd_cq(attr->recv_cq) : qp->scq;
	qp->sq_sig_all = attr->sq_sig_all ? 1 : 0;
	bytes[0] = (uint64_t)qp->sq.cnt << qp->sq.log_stride;
	bytes[1] = (uint64_t)qp->rq.cnt << qp->rq.log_stride;
	err = hd_obj_rings(&qp->obj, &qp_obj_type, ctx, bytes, 2);
	if (err)
		goto fail;
	qp->dbrec = qp->obj.rings.dbrec;
	qp->sq.buf = qp->obj.rings.ring[0];
	qp->rq.buf = qp->obj.rings.ring[1];
	hd_spin_init(&qp->sq.lock);
	hd_spin_init(&qp->rq.lock);

	memset(&inx, 0, sizeof(inx));
	in_p->pdn = pd ? pd->handle : 0;
	in_p->qp_type = attr->qp_type;
	in_p->send_cqn = qp->scq ? qp->scq->obj.handle : 0;
	in_p->recv_cqn = qp->rcq ? qp->rcq->obj.handle : 0;
	if (xrcd) {
		inx.xrcd = hd_xrcd_handle(xrcd);
		qp->xrcd = xrcd;
	}
	in_p->sq_wqe_cnt = qp->sq.cnt;
	in_p->sq_stride_log = qp->sq.log_stride;
	in_p->rq_wqe_cnt = qp->rq.cnt;
	in_p->rq_stride_log = qp->rq.log_stride;
	in_p->sq_pa = qp->obj.rings.ring_pa[0];
	in_p->rq_pa = qp->obj.rings.ring_pa[1];
	in_p->dbrec_pa = qp->obj.rings.dbrec_pa;
	in_p->max_send_sge = qp->sq.max_sge;
	in_p->max_recv_sge = qp->rq.max_sge;
	in_p->max_inline = qp->max_inline;
	in_p->sq_sig_all = (uint32_t)qp->sq_sig_all;
	if (attr->srq) {
		inx.flags = SNIC_QP_F_SRQ;
		inx.srqn = to_hd_srq(attr->srq)->obj.handle;
		qp->srq = to_hd_srq(attr->srq);
	}
	err = hd_obj_create(&qp->obj, SNIC_CMD_CREATE_QP, &inx, sizeof(inx));
	if (err) {
		errno = err;
		return NULL;
	}

	qp->ibqp.context = context;
	qp->ibqp.qp_context = attr->qp_context;
	qp->ibqp.pd = pd;
	qp->ibqp.send_cq = attr->send_cq;
	qp->ibqp.recv_cq = attr->recv_cq;
	qp->ibqp.srq = attr->srq;
	qp->ibqp.handle = qp->obj.handle;
	qp->ibqp.qp_num = qp->obj.handle;
	qp->db_core = snic_db_core(SNIC_QPN_IDX(qp->ibqp.qp_num), ctx->db_cores);
	qp->ibqp.state = IBV_QPS_RESET;
	qp->ibqp.qp_type = attr->qp_type;
	qp->ibqp.events_completed = 0;
	hd_obj_events(&qp->obj, &qp->ibqp.mutex, &qp->ibqp.cond,
		      &qp->ibqp.events_completed, NULL);
	qp_caps(qp, &attr->cap);

	pthread_mutex_lock(&ctx->obj_lock);
	if (atomic_load(&ctx->qp_table[SNIC_QPN_IDX(qp->obj.handle)]))
		hd_dbg("QPN 0x%x reuses a live table slot\n", qp->obj.handle);
	atomic_store_explicit(&ctx->qp_table[SNIC_QPN_IDX(qp->obj.handle)], qp,
			      memory_order_release);
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("QP 0x%x: sq %u x %u B, rq %u x %u B, sge %u/%u, inline %u\n",
	       qp->obj.handle, qp->sq.cnt, 1u << qp->sq.log_stride, qp->rq.cnt,
	       1u << qp->rq.log_stride, qp->sq.max_sge, qp->rq.max_sge,
	       qp->max_inline);
	return &qp->ibqp;

fail:
	free(qp);
	errno = err;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Locking both CQs of a QP (same order everywhere: by address).        */

static void lock_cqs(struct hd_qp *qp)
{
	struct hd_cq *a = qp->scq, *b = qp->rcq;

	if (!a) /* an XRC target: its completions are its SRQs' */
		return;
	if (a == b) {
		hd_spin_lock(&a->lock);
	} else if (a < b) {
		hd_spin_lock(&a->lock);
		hd_spin_lock(&b->lock);
	} else {
		hd_spin_lock(&b->lock);
		hd_spin_lock(&a->lock);
	}
}

static void unlock_cqs(struct hd_qp *qp)
{
	if (!qp->scq)
		return;
	hd_spin_unlock(&qp->scq->lock);
	if (qp->rcq != qp->scq)
		hd_spin_unlock(&qp->rcq->lock);
}

static void clean_cqs_locked(struct hd_qp *qp)
{
	if (!qp->scq)
		return;
	hd_cq_clean_locked(qp->scq, qp->ibqp.qp_num);
	if (qp->rcq != qp->scq)
		hd_cq_clean_locked(qp->rcq, qp->ibqp.qp_num);
}

/* ------------------------------------------------------------------ */
/* Modify / query.                                                      */

static void to_snic_attr(const struct ibv_qp_attr *a, struct snic_qp_attr *s)
{
	memset(s, 0, sizeof(*s));
	s->qp_state = a->qp_state;
	s->cur_qp_state = a->cur_qp_state;
	s->path_mtu = a->path_mtu;
	s->qkey = a->qkey;
	s->rq_psn = a->rq_psn;
	s->sq_psn = a->sq_psn;
	s->dest_qp_num = a->dest_qp_num;
	s->qp_access_flags = (uint32_t)a->qp_access_flags;
	s->pkey_index = a->pkey_index;
	s->port_num = a->port_num;
	s->max_rd_atomic = a->max_rd_atomic;
	s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	s->min_rnr_timer = a->min_rnr_timer;
	s->timeout = a->timeout;
	s->retry_cnt = a->retry_cnt;
	s->rnr_retry = a->rnr_retry;
	s->en_sqd_async_notify = a->en_sqd_async_notify;
	memcpy(s->dgid, a->ah_attr.grh.dgid.raw, sizeof(s->dgid));
	s->flow_label = a->ah_attr.grh.flow_label;
	s->sgid_index = a->ah_attr.grh.sgid_index;
	s->hop_limit = a->ah_attr.grh.hop_limit;
	s->traffic_class = a->ah_attr.grh.traffic_class;
	s->is_global = a->ah_attr.is_global;
	s->sl = a->ah_attr.sl;
	s->static_rate = a->ah_attr.static_rate;
	s->src_path_bits = a->ah_attr.src_path_bits;
	s->dlid = a->ah_attr.dlid;
	/* The address vector's port, when the caller set one. */
	if (!s->port_num)
		s->port_num = a->ah_attr.port_num;
	s->max_send_wr = a->cap.max_send_wr;
	s->max_recv_wr = a->cap.max_recv_wr;
	s->max_send_sge = a->cap.max_send_sge;
	s->max_recv_sge = a->cap.max_recv_sge;
	s->max_inline_data = a->cap.max_inline_data;
}

/* QP moved to RESET: the rings start again from index 0 (the firmware
 * resets its side with the transition). */
static void qp_reset_rings(struct hd_qp *qp)
{
	lock_cqs(qp);
	hd_spin_lock(&qp->sq.lock);
	hd_spin_lock(&qp->rq.lock);
	clean_cqs_locked(qp);
	qp->sq.pi = 0;
	qp->rq.pi = 0;
	atomic_store_explicit(&qp->sq.ci, 0, memory_order_relaxed);
	atomic_store_explicit(&qp->rq.ci, 0, memory_order_relaxed);
	atomic_store_explicit(&qp->dbrec->sq_pi, 0, memory_order_release);
	atomic_store_explicit(&qp->dbrec->rq_pi, 0, memory_order_release);
	hd_spin_unlock(&qp->rq.lock);
	hd_spin_unlock(&qp->sq.lock);
	unlock_cqs(qp);
}

/* A path to a destination behind a router: the kernel's route on the
 * device's interface names the router whose MAC the frames carry
 * (core/route.c); without one, the NIC's own routes decide. */
static void qp_next_hop(struct ibv_device *dev, struct snic_cmd_modify_qp *in)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *g = in->attr.dgid;
	uint32_t gw;

	if (memcmp(g, v4map, 12) != 0)
		return; /* IPv6: the NIC's neighbour discovery, on link */
	gw = snic_next_hop4(dev, (uint32_t)g[12] << 24 | (uint32_t)g[13] << 16 |
			    (uint32_t)g[14] << 8 | g[15]);
	if (!gw)
		return;
	memcpy(in->next_hop, v4map, 12);
	in->next_hop[12] = (uint8_t)(gw >> 24);
	in->next_hop[13] = (uint8_t)(gw >> 16);
	in->next_hop[14] = (uint8_t)(gw >> 8);
	in->next_hop[15] = (uint8_t)gw;
	in->attr_mask |= SNIC_QP_NEXT_HOP;
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask)
{
	struct hd_qp *qp = hd_qp_real(to_hd_qp(ibqp));
	struct snic_cmd_modify_qp in;
	int err;

	memset(&in, 0, sizeof(in));
	in.qpn = ibqp->qp_num;
	in.attr_mask = (uint32_t)attr_mask;
	to_snic_attr(attr, &in.attr);
	if (attr_mask & IBV_QP_AV)
		qp_next_hop(ibqp->context->device, &in);
	err = hd_cmd(qp->obj.ctx, SNIC_CMD_MODIFY_QP, &in, sizeof(in), NULL, 0);
	if (err)
		return err;
	if (attr_mask & IBV_QP_STATE) {
		if (attr->qp_state == IBV_QPS_RESET)
			qp_reset_rings(qp);
		ibqp->state = attr->qp_state;
		qp->ibqp.state = attr->qp_state;
	}
	return 0;
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct hd_qp *qp = hd_qp_real(to_hd_qp(ibqp));
	struct snic_cmd_handle in = { .handle = ibqp->qp_num };
	struct snic_qp_attr s;
	int err;

	(void)attr_mask; /* everything is returned */
	err = hd_cmd(qp->obj.ctx, SNIC_CMD_QUERY_QP, &in, sizeof(in), &s,
		     sizeof(s));
	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)s.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)s.cur_qp_state;
	attr->path_mtu = (enum ibv_mtu)s.path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qkey = s.qkey;
	attr->rq_psn = s.rq_psn;
	attr->sq_psn = s.sq_psn;
	attr->dest_qp_num = s.dest_qp_num;
	attr->qp_access_flags = (unsigned int)s.qp_access_flags;
	qp_caps(qp, &attr->cap);
	memcpy(attr->ah_attr.grh.dgid.raw, s.dgid, sizeof(s.dgid));
	attr->ah_attr.grh.flow_label = s.flow_label;
	attr->ah_attr.grh.sgid_index = s.sgid_index;
	attr->ah_attr.grh.hop_limit = s.hop_limit;
	attr->ah_attr.grh.traffic_class = s.traffic_class;
	attr->ah_attr.dlid = s.dlid;
	attr->ah_attr.sl = s.sl;
	attr->ah_attr.src_path_bits = s.src_path_bits;
	attr->ah_attr.static_rate = s.static_rate;
	attr->ah_attr.is_global = s.is_global;
	attr->ah_attr.port_num = s.port_num;
	attr->pkey_index = s.pkey_index;
	attr->en_sqd_async_notify = s.en_sqd_async_notify;
	attr->sq_draining = s.sq_draining;
	attr->max_rd_atomic = s.max_rd_atomic;
	attr->max_dest_rd_atomic = s.max_dest_rd_atomic;
	attr->min_rnr_timer = s.min_rnr_timer;
	attr->port_num = s.port_num;
	attr->timeout = s.timeout;
	attr->retry_cnt = s.retry_cnt;
	attr->rnr_retry = s.rnr_retry;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	qp_caps(qp, &init_attr->cap);
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;

	/* The firmware is the source of truth: the QP may have moved to
	 * the error state by itself. */
	if (s.qp_state <= IBV_QPS_ERR)
		ibqp->state = (enum ibv_qp_state)s.qp_state;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Destroy.                                                             */

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct hd_qp *qp = to_hd_qp(ibqp);

	if (qp->opened_from) /* ibv_open_qp's handle (xrc.c) */
		return hd_xrc_qp_close(qp);
	/* an XRC target opened elsewhere lives on with its openers */
	if (atomic_load(&qp->open_refs))
		return EBUSY;
	return hd_obj_destroy(&qp->obj);
}

