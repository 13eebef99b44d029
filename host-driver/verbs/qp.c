/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: queue pairs (RC) and the send/receive data path.
 *
 * A QP is one window extent: a page with its doorbell record, then the SQ
 * ring, then the RQ ring (each page aligned).  Posting writes WQEs into the
 * ring, then (once per call) store-releases the producer index in the
 * doorbell record, sets the QP's doorbell bits and kicks the firmware if
 * it sleeps.  Completions advance the consumer indexes (verbs_cq.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

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

	qp->sq_cnt = hd_roundup_pow2(send_wr);
	qp->sq_log_stride = hd_ilog2(sq_stride);
	qp->rq_cnt = hd_roundup_pow2(recv_wr);
	qp->rq_log_stride = hd_ilog2(rq_stride);
	/* The actual capabilities, which may exceed the request (as mlx5
	 * reports them): whatever fits the stride, within device limits. */
	qp->max_send_sge = (sq_stride - sizeof(struct snic_send_wqe)) / 16;
	if (qp->max_send_sge > SNIC_MAX_SGE)
		qp->max_send_sge = SNIC_MAX_SGE;
	qp->max_inline = sq_stride - sizeof(struct snic_send_wqe);
	if (qp->max_inline > SNIC_MAX_INLINE)
		qp->max_inline = SNIC_MAX_INLINE;
	qp->max_recv_sge = (rq_stride - sizeof(struct snic_recv_wqe)) / 16;
	if (qp->max_recv_sge > SNIC_MAX_SGE)
		qp->max_recv_sge = SNIC_MAX_SGE;
	return 0;
}

static void qp_caps(const struct hd_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = qp->sq_cnt;
	cap->max_recv_wr = qp->rq_cnt;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_sge = qp->max_recv_sge;
	cap->max_inline_data = qp->max_inline;
}

static inline uint32_t pages_for(uint64_t bytes)
{
	return (uint32_t)((bytes + SNIC_PAGE_SIZE - 1) >> SNIC_PAGE_SHIFT);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
			     struct ibv_qp_init_attr *attr)
{
	struct hd_context *ctx = to_hd_ctx(pd->context);
	struct snic_cmd_create_qp_ext inx;
	struct snic_cmd_create_qp *in_p = &inx.qp;
	struct snic_cmd_handle out;
	uint32_t sq_pages, rq_pages;
	struct hd_qp *qp;
	int err;

	if (!attr->send_cq || !attr->recv_cq ||
	    attr->send_cq->context != pd->context ||
	    attr->recv_cq->context != pd->context) {
		errno = EINVAL;
		return NULL;
	}
	/* RC, UC and UD.  The kernel (e.g. rxe_qp_chk_init) answers
	 * EOPNOTSUPP for a QP type the device does not do. */
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->srq && attr->srq->context != pd->context) {
		errno = EINVAL;
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
	qp->ctx = ctx;
	qp->scq = to_hd_cq(attr->send_cq);
	qp->rcq = to_hd_cq(attr->recv_cq);
	qp->sq_sig_all = attr->sq_sig_all ? 1 : 0;
	sq_pages = pages_for((uint64_t)qp->sq_cnt << qp->sq_log_stride);
	rq_pages = pages_for((uint64_t)qp->rq_cnt << qp->rq_log_stride);
	qp->ext_npages = 1 + sq_pages + rq_pages;
	err = hd_hm_alloc(ctx->hm, qp->ext_npages, 1, &qp->ext_page);
	if (err)
		goto fail;
	qp->dbrec = hd_hm_ptr(ctx->hm, hd_page_pa(qp->ext_page));
	qp->sq = hd_hm_ptr(ctx->hm, hd_page_pa(qp->ext_page + 1));
	qp->rq = hd_hm_ptr(ctx->hm,
			     hd_page_pa(qp->ext_page + 1 + sq_pages));
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);

	memset(&inx, 0, sizeof(inx));
	in_p->pdn = pd->handle;
	in_p->qp_type = attr->qp_type;
	in_p->send_cqn = qp->scq->cqn;
	in_p->recv_cqn = qp->rcq->cqn;
	in_p->sq_wqe_cnt = qp->sq_cnt;
	in_p->sq_stride_log = qp->sq_log_stride;
	in_p->rq_wqe_cnt = qp->rq_cnt;
	in_p->rq_stride_log = qp->rq_log_stride;
	in_p->sq_pa = hd_page_pa(qp->ext_page + 1);
	in_p->rq_pa = hd_page_pa(qp->ext_page + 1 + sq_pages);
	in_p->dbrec_pa = hd_page_pa(qp->ext_page);
	in_p->max_send_sge = qp->max_send_sge;
	in_p->max_recv_sge = qp->max_recv_sge;
	in_p->max_inline = qp->max_inline;
	in_p->sq_sig_all = (uint32_t)qp->sq_sig_all;
	if (attr->srq) {
		inx.flags = SNIC_QP_F_SRQ;
		inx.srqn = to_hd_srq(attr->srq)->srqn;
		qp->srq = to_hd_srq(attr->srq);
	}
	err = hd_cmd(ctx, SNIC_CMD_CREATE_QP, &inx, sizeof(inx), &out,
		       sizeof(out));
	if (err) {
		if (!hd_fw_gone(err))
			hd_hm_free(ctx->hm, qp->ext_page, qp->ext_npages);
		pthread_spin_destroy(&qp->sq_lock);
		pthread_spin_destroy(&qp->rq_lock);
		goto fail;
	}

	qp->ibqp.context = pd->context;
	qp->ibqp.qp_context = attr->qp_context;
	qp->ibqp.pd = pd;
	qp->ibqp.send_cq = attr->send_cq;
	qp->ibqp.recv_cq = attr->recv_cq;
	qp->ibqp.srq = attr->srq;
	qp->ibqp.handle = out.handle;
	qp->ibqp.qp_num = out.handle;
	qp->ibqp.state = IBV_QPS_RESET;
	qp->ibqp.qp_type = attr->qp_type;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	qp->ibqp.events_completed = 0;
	qp_caps(qp, &attr->cap);

	pthread_mutex_lock(&ctx->obj_lock);
	if (atomic_load(&ctx->qp_table[SNIC_QPN_IDX(out.handle)]))
		hd_dbg("QPN 0x%x reuses a live table slot\n", out.handle);
	atomic_store_explicit(&ctx->qp_table[SNIC_QPN_IDX(out.handle)], qp,
			      memory_order_release);
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("QP 0x%x: sq %u x %u B, rq %u x %u B, sge %u/%u, inline %u\n",
		 out.handle, qp->sq_cnt, 1u << qp->sq_log_stride, qp->rq_cnt,
		 1u << qp->rq_log_stride, qp->max_send_sge, qp->max_recv_sge,
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

	if (a == b) {
		pthread_spin_lock(&a->lock);
	} else if (a < b) {
		pthread_spin_lock(&a->lock);
		pthread_spin_lock(&b->lock);
	} else {
		pthread_spin_lock(&b->lock);
		pthread_spin_lock(&a->lock);
	}
}

static void unlock_cqs(struct hd_qp *qp)
{
	pthread_spin_unlock(&qp->scq->lock);
	if (qp->rcq != qp->scq)
		pthread_spin_unlock(&qp->rcq->lock);
}

static void clean_cqs_locked(struct hd_qp *qp)
{
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
	pthread_spin_lock(&qp->sq_lock);
	pthread_spin_lock(&qp->rq_lock);
	clean_cqs_locked(qp);
	qp->sq_pi = 0;
	qp->rq_pi = 0;
	atomic_store_explicit(&qp->sq_ci, 0, memory_order_relaxed);
	atomic_store_explicit(&qp->rq_ci, 0, memory_order_relaxed);
	atomic_store_explicit(&qp->dbrec->sq_pi, 0, memory_order_release);
	atomic_store_explicit(&qp->dbrec->rq_pi, 0, memory_order_release);
	pthread_spin_unlock(&qp->rq_lock);
	pthread_spin_unlock(&qp->sq_lock);
	unlock_cqs(qp);
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask)
{
	struct hd_qp *qp = to_hd_qp(ibqp);
	struct snic_cmd_modify_qp in;
	int err;

	memset(&in, 0, sizeof(in));
	in.qpn = ibqp->qp_num;
	in.attr_mask = (uint32_t)attr_mask;
	to_snic_attr(attr, &in.attr);
	err = hd_cmd(qp->ctx, SNIC_CMD_MODIFY_QP, &in, sizeof(in), NULL, 0);
	if (err)
		return err;
	if (attr_mask & IBV_QP_STATE) {
		if (attr->qp_state == IBV_QPS_RESET)
			qp_reset_rings(qp);
		ibqp->state = attr->qp_state;
	}
	return 0;
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct hd_qp *qp = to_hd_qp(ibqp);
	struct snic_cmd_handle in = { .handle = ibqp->qp_num };
	struct snic_qp_attr s;
	int err;

	(void)attr_mask; /* everything is returned */
	err = hd_cmd(qp->ctx, SNIC_CMD_QUERY_QP, &in, sizeof(in), &s,
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
	struct hd_context *ctx = qp->ctx;
	struct snic_cmd_handle in = { .handle = ibqp->qp_num };
	int err;

	err = hd_cmd(ctx, SNIC_CMD_DESTROY_QP, &in, sizeof(in), NULL, 0);
	if (err && !hd_fw_gone(err))
		return err;

	pthread_mutex_lock(&ctx->obj_lock);
	hd_async_purge(ctx, ibqp, 1);
	/* The firmware writes no more CQEs for this QP: drop the ones not
	 * polled yet (as mlx5 does), so a later poll never reports a
	 * completion of a QP that no longer exists. */
	lock_cqs(qp);
	clean_cqs_locked(qp);
	atomic_store_explicit(&ctx->qp_table[SNIC_QPN_IDX(ibqp->qp_num)],
			      NULL, memory_order_release);
	unlock_cqs(qp);
	pthread_mutex_unlock(&ctx->obj_lock);

	/* Wait for the acknowledgement of every async event handed out. */
	hd_wait_events_acked(&ibqp->mutex, &ibqp->cond,
			       &ibqp->events_completed, qp->async_events_got);

	if (!err)
		hd_hm_free(ctx->hm, qp->ext_page, qp->ext_npages);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	pthread_mutex_destroy(&ibqp->mutex);
	pthread_cond_destroy(&ibqp->cond);
	free(qp);
	return 0;
}

/* ibv_close_device: the firmware destroyed the QP with the context. */
void hd_qp_free_leftover(struct hd_qp *qp)
{
	hd_hm_free(qp->ctx->hm, qp->ext_page, qp->ext_npages);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
}

/* ------------------------------------------------------------------ */
/* Data path.                                                           */

static void ring_qp(struct hd_qp *qp)
{
	struct snic_doorbells *db = qp->ctx->db;
	uint32_t i = SNIC_QPN_IDX(qp->ibqp.qp_num);

	atomic_fetch_or_explicit(&db->qp_bits[i / 64], 1ull << (i % 64),
				 memory_order_release);
	atomic_fetch_or_explicit(&db->summary, 1ull << (i / 64),
				 memory_order_seq_cst);
	hd_kick(qp->ctx);
}

/* poll_cq (send CQ lock held): the firmware completed SQ index wqe_idx
 * and, implicitly, every earlier unsignaled WQE. */
void hd_qp_sq_complete(struct hd_qp *qp, uint32_t wqe_idx)
{
	uint32_t ci = atomic_load_explicit(&qp->sq_ci, memory_order_relaxed);
	uint32_t pi = atomic_load_explicit(&qp->dbrec->sq_pi,
					   memory_order_relaxed);
	uint32_t outstanding = pi - ci;
	uint32_t d = wqe_idx - ci;

	if (d >= outstanding) {
		/* Tolerate an index reported modulo the ring size. */
		d = (wqe_idx - ci) & (qp->sq_cnt - 1);
		if (d >= outstanding)
			return;
	}
	atomic_store_explicit(&qp->sq_ci, ci + d + 1, memory_order_release);
}

static int wr_opcode_ok(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return 1;
	default:
		return 0;       /* LOCAL_INV, BIND_MW, SEND_WITH_INV, TSO ... */
	}
}

/* UC: SEND and WRITE (with immediate); UD: SEND (with immediate). */
static int wr_opcode_ok_for(const struct hd_qp *qp, enum ibv_wr_opcode op)
{
	switch (qp->ibqp.qp_type) {
	case IBV_QPT_UD:
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	case IBV_QPT_UC:
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		       op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
	default:
		return wr_opcode_ok(op);
	}
}

static int build_send_wqe(struct hd_qp *qp, struct ibv_send_wr *wr,
			  uint8_t *slot)
{
	struct snic_send_wqe *w = (struct snic_send_wqe *)(void *)slot;
	uint8_t flags = 0;
	int inl;

	if (!wr_opcode_ok_for(qp, wr->opcode))
		return EINVAL;
	if (qp->ibqp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	inl = (wr->send_flags & IBV_SEND_INLINE) &&
	      (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM ||
	       wr->opcode == IBV_WR_RDMA_WRITE ||
	       wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM);
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		flags |= SNIC_SEND_SIGNALED;
	if (wr->send_flags & IBV_SEND_FENCE)
		flags |= SNIC_SEND_FENCE;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		flags |= SNIC_SEND_SOLICITED;

	if (inl) {
		uint8_t *dst = slot + sizeof(*w);
		uint32_t total = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			uint32_t len = wr->sg_list[i].length;

			if (len > qp->max_inline - total)
				return EINVAL;
			memcpy(dst + total,
			       (const void *)(uintptr_t)wr->sg_list[i].addr, len);
			total += len;
		}
		flags |= SNIC_SEND_INLINE;
		w->ctrl.num_sge = 0;
		w->ctrl.inline_len = total;
	} else {
		struct snic_wqe_sge *sge =
			(struct snic_wqe_sge *)(void *)(slot + sizeof(*w));

		for (int i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		w->ctrl.num_sge = (uint8_t)wr->num_sge;
		w->ctrl.inline_len = 0;
	}
	w->ctrl.wr_id = wr->wr_id;
	w->ctrl.opcode = (uint8_t)wr->opcode;
	w->ctrl.flags = flags;
	w->ctrl.rsvd0 = 0;
	w->ctrl.imm_data = (wr->opcode == IBV_WR_SEND_WITH_IMM ||
			    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
				   ? wr->imm_data : 0;
	w->ctrl.rsvd1 = 0;
	w->ctrl.rsvd2 = 0;
	memset(&w->raddr, 0, sizeof(w->raddr));
	memset(&w->atomic, 0, sizeof(w->atomic));
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->raddr.remote_addr = wr->wr.rdma.remote_addr;
		w->raddr.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->raddr.remote_addr = wr->wr.atomic.remote_addr;
		w->raddr.rkey = wr->wr.atomic.rkey;
		w->atomic.compare_add = wr->wr.atomic.compare_add;
		w->atomic.swap = wr->wr.atomic.swap;
		break;
	default:
		break;
	}
	if (qp->ibqp.qp_type == IBV_QPT_UD) {
		struct snic_wqe_ud *ud = (struct snic_wqe_ud *)(void *)&w->raddr;

		*ud = to_hd_ah(wr->wr.ud.ah)->av;
		ud->remote_qpn = wr->wr.ud.remote_qpn;
		ud->remote_qkey = wr->wr.ud.remote_qkey;
	}
	return 0;
}

int hd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct hd_qp *qp = to_hd_qp(ibqp);
	uint32_t pi, ci, mask = qp->sq_cnt - 1;
	int err = 0;

	pthread_spin_lock(&qp->sq_lock);
	/* Posting to the SQ before RTS is refused with EINVAL, as Linux
	 * rxe does (drivers/infiniband/sw/rxe/rxe_verbs.c, rxe_post_send:
	 * "qp not ready to send").  In SQE/SQD/ERR the WQEs are accepted
	 * and the firmware flushes them. */
	if (ibqp->state < IBV_QPS_RTS) {
		*bad_wr = wr;
		pthread_spin_unlock(&qp->sq_lock);
		return EINVAL;
	}
	pi = qp->sq_pi;
	ci = atomic_load_explicit(&qp->sq_ci, memory_order_acquire);
	for (; wr; wr = wr->next) {
		if (pi - ci >= qp->sq_cnt) {
			ci = atomic_load_explicit(&qp->sq_ci,
						  memory_order_acquire);
			if (pi - ci >= qp->sq_cnt) {
				err = ENOMEM;
				break;
			}
		}
		err = build_send_wqe(qp, wr,
				     qp->sq + ((pi & mask) << qp->sq_log_stride));
		if (err)
			break;
		pi++;
	}
	if (err)
		*bad_wr = wr;
	if (pi != qp->sq_pi) {
		qp->sq_pi = pi;
		/* WQEs before the producer index (release), then the
		 * doorbell bits, then the kick. */
		atomic_store_explicit(&qp->dbrec->sq_pi, pi,
				      memory_order_release);
		ring_qp(qp);
	}
	pthread_spin_unlock(&qp->sq_lock);
	return err;
}

int hd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct hd_qp *qp = to_hd_qp(ibqp);
	uint32_t pi, ci, mask = qp->rq_cnt - 1;
	int err = 0;

	pthread_spin_lock(&qp->rq_lock);
	/* Receives may be posted from INIT on; in RESET Linux rxe refuses
	 * them with EINVAL (rxe_post_recv), and a QP with an SRQ has no RQ
	 * of its own (EINVAL, as rxe). */
	if (ibqp->state == IBV_QPS_RESET || qp->srq) {
		*bad_wr = wr;
		pthread_spin_unlock(&qp->rq_lock);
		return EINVAL;
	}
	pi = qp->rq_pi;
	ci = atomic_load_explicit(&qp->rq_ci, memory_order_acquire);
	for (; wr; wr = wr->next) {
		struct snic_recv_wqe *w;
		struct snic_wqe_sge *sge;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_recv_sge) {
			err = EINVAL;
			break;
		}
		if (pi - ci >= qp->rq_cnt) {
			ci = atomic_load_explicit(&qp->rq_ci,
						  memory_order_acquire);
			if (pi - ci >= qp->rq_cnt) {
				err = ENOMEM;
				break;
			}
		}
		w = (struct snic_recv_wqe *)(void *)(
			qp->rq + ((pi & mask) << qp->rq_log_stride));
		sge = (struct snic_wqe_sge *)(void *)(w + 1);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->rsvd = 0;
		for (int i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		pi++;
	}
	if (err)
		*bad_wr = wr;
	if (pi != qp->rq_pi) {
		qp->rq_pi = pi;
		atomic_store_explicit(&qp->dbrec->rq_pi, pi,
				      memory_order_release);
		ring_qp(qp);
	}
	pthread_spin_unlock(&qp->rq_lock);
	return err;
}

/* ------------------------------------------------------------------ */
/* Extended QPs: ibv_create_qp_ex with send ops, ibv_qp_to_qp_ex and the
 * ibv_wr_* calls.  wr_start takes the SQ lock and keeps it until
 * wr_complete or wr_abort (as mlx5).  Each wr_<opcode> starts a WQE in
 * the next SQ slot; the data setters (wr_set_sge*, wr_set_inline_data*)
 * and wr_set_ud_addr fill it.  The first error (full SQ, bad argument)
 * is kept; wr_complete then posts nothing and returns it.              */

static inline struct hd_qp *qpx(struct ibv_qp_ex *q)
{
	return hd_container_of(q, struct hd_qp, ibqpx);
}

static void wrx_start(struct ibv_qp_ex *q)
{
	struct hd_qp *qp = qpx(q);

	pthread_spin_lock(&qp->sq_lock);
	qp->ex_pi = qp->sq_pi;
	qp->ex_wqe = NULL;
	/* like post_send: the SQ takes work from RTS on (rxe: EINVAL) */
	qp->ex_err = qp->ibqp.state < IBV_QPS_RTS ? EINVAL : 0;
}

static struct snic_send_wqe *wrx_new(struct ibv_qp_ex *q, enum ibv_wr_opcode op)
{
	struct hd_qp *qp = qpx(q);
	struct snic_send_wqe *w;
	uint32_t ci;

	if (qp->ex_wqe)
		qp->ex_pi++; /* the previous WQE is complete */
	qp->ex_wqe = NULL;
	if (qp->ex_err)
		return NULL;
	if (!wr_opcode_ok_for(qp, op)) {
		qp->ex_err = EINVAL;
		return NULL;
	}
	ci = atomic_load_explicit(&qp->sq_ci, memory_order_acquire);
	if (qp->ex_pi - ci >= qp->sq_cnt) {
		qp->ex_err = ENOMEM;
		return NULL;
	}
	qp->ex_wqe = qp->sq + ((qp->ex_pi & (qp->sq_cnt - 1)) << qp->sq_log_stride);
	w = (struct snic_send_wqe *)(void *)qp->ex_wqe;
	memset(w, 0, sizeof(*w));
	w->ctrl.wr_id = q->wr_id;
	w->ctrl.opcode = (uint8_t)op;
	if ((q->wr_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		w->ctrl.flags |= SNIC_SEND_SIGNALED;
	if (q->wr_flags & IBV_SEND_FENCE)
		w->ctrl.flags |= SNIC_SEND_FENCE;
	if (q->wr_flags & IBV_SEND_SOLICITED)
		w->ctrl.flags |= SNIC_SEND_SOLICITED;
	return w;
}

static void wrx_rdma(struct ibv_qp_ex *q, enum ibv_wr_opcode op, uint32_t rkey,
		     uint64_t raddr, __be32 imm)
{
	struct snic_send_wqe *w = wrx_new(q, op);

	if (!w)
		return;
	w->raddr.remote_addr = raddr;
	w->raddr.rkey = rkey;
	w->ctrl.imm_data = imm;
}

static void wrx_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t raddr)
{
	wrx_rdma(q, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void wrx_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey,
			       uint64_t raddr, __be32 imm)
{
	wrx_rdma(q, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void wrx_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t raddr)
{
	wrx_rdma(q, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void wrx_send(struct ibv_qp_ex *q)
{
	wrx_new(q, IBV_WR_SEND);
}

static void wrx_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	struct snic_send_wqe *w = wrx_new(q, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->ctrl.imm_data = imm;
}

static void wrx_atomic(struct ibv_qp_ex *q, enum ibv_wr_opcode op, uint32_t rkey,
		       uint64_t raddr, uint64_t cmp_add, uint64_t swap)
{
	struct snic_send_wqe *w = wrx_new(q, op);

	if (!w)
		return;
	w->raddr.remote_addr = raddr;
	w->raddr.rkey = rkey;
	w->atomic.compare_add = cmp_add;
	w->atomic.swap = swap;
}

static void wrx_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey, uint64_t raddr,
			uint64_t compare, uint64_t swap)
{
	wrx_atomic(q, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare, swap);
}

static void wrx_fetch_add(struct ibv_qp_ex *q, uint32_t rkey, uint64_t raddr,
			  uint64_t add)
{
	wrx_atomic(q, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

static void wrx_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah,
			    uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct hd_qp *qp = qpx(q);
	struct snic_wqe_ud *ud;

	if (!qp->ex_wqe || qp->ibqp.qp_type != IBV_QPT_UD)
		return;
	ud = (struct snic_wqe_ud *)(void *)&((struct snic_send_wqe *)(void *)qp->ex_wqe)->raddr;
	*ud = to_hd_ah(ah)->av;
	ud->remote_qpn = remote_qpn;
	ud->remote_qkey = remote_qkey;
}

static void wrx_set_sge_list(struct ibv_qp_ex *q, size_t n,
			     const struct ibv_sge *sg)
{
	struct hd_qp *qp = qpx(q);
	struct snic_send_wqe *w = (struct snic_send_wqe *)(void *)qp->ex_wqe;
	struct snic_wqe_sge *sge;

	if (!w)
		return;
	if (n > qp->max_send_sge) {
		qp->ex_err = EINVAL;
		qp->ex_wqe = NULL;
		return;
	}
	sge = (struct snic_wqe_sge *)(void *)(w + 1);
	for (size_t i = 0; i < n; i++) {
		sge[i].addr = sg[i].addr;
		sge[i].length = sg[i].length;
		sge[i].lkey = sg[i].lkey;
	}
	w->ctrl.num_sge = (uint8_t)n;
}

static void wrx_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr,
			uint32_t length)
{
	struct ibv_sge s = { .addr = addr, .length = length, .lkey = lkey };

	wrx_set_sge_list(q, 1, &s);
}

static void wrx_set_inline_list(struct ibv_qp_ex *q, size_t n,
				const struct ibv_data_buf *buf)
{
	struct hd_qp *qp = qpx(q);
	struct snic_send_wqe *w = (struct snic_send_wqe *)(void *)qp->ex_wqe;
	uint8_t *dst;
	size_t total = 0;

	if (!w)
		return;
	if (w->ctrl.opcode == IBV_WR_RDMA_READ ||
	    w->ctrl.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    w->ctrl.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		qp->ex_err = EINVAL;
		qp->ex_wqe = NULL;
		return;
	}
	dst = (uint8_t *)(w + 1);
	for (size_t i = 0; i < n; i++) {
		if (buf[i].length > qp->max_inline - total) {
			qp->ex_err = EINVAL;
			qp->ex_wqe = NULL;
			return;
		}
		memcpy(dst + total, buf[i].addr, buf[i].length);
		total += buf[i].length;
	}
	w->ctrl.flags |= SNIC_SEND_INLINE;
	w->ctrl.inline_len = (uint32_t)total;
	w->ctrl.num_sge = 0;
}

static void wrx_set_inline(struct ibv_qp_ex *q, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	wrx_set_inline_list(q, 1, &b);
}

static int wrx_complete(struct ibv_qp_ex *q)
{
	struct hd_qp *qp = qpx(q);
	int err = qp->ex_err;

	if (!err) {
		if (qp->ex_wqe)
			qp->ex_pi++;
		if (qp->ex_pi != qp->sq_pi) {
			qp->sq_pi = qp->ex_pi;
			/* WQEs, then the producer index, then the doorbell */
			atomic_store_explicit(&qp->dbrec->sq_pi, qp->sq_pi,
					      memory_order_release);
			ring_qp(qp);
		}
	}
	qp->ex_wqe = NULL;
	pthread_spin_unlock(&qp->sq_lock);
	return err;
}

static void wrx_abort(struct ibv_qp_ex *q)
{
	struct hd_qp *qp = qpx(q);

	qp->ex_wqe = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

#define HD_QP_EX_OPS                                                       \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |    \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |      \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

struct ibv_qp *hd_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *a)
{
	uint64_t ops = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		       ? a->send_ops_flags : 0;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *ibqp;
	struct hd_qp *qp;

	/* XRC domains, create flags, TSO, RSS ...: not supported */
	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd ||
	    a->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (ops & ~(uint64_t)HD_QP_EX_OPS) {
		errno = EOPNOTSUPP; /* MW bind, local invalidate, TSO ... */
		return NULL;
	}
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = a->qp_context;
	ia.send_cq = a->send_cq;
	ia.recv_cq = a->recv_cq;
	ia.srq = a->srq;
	ia.cap = a->cap;
	ia.qp_type = a->qp_type;
	ia.sq_sig_all = a->sq_sig_all;
	ibqp = ibv_create_qp(a->pd, &ia);
	if (!ibqp)
		return NULL;
	a->cap = ia.cap;
	if (!ops)
		return ibqp;
	qp = to_hd_qp(ibqp);
	qp->ex = 1;
	qp->ibqpx.comp_mask = 0;
	qp->ibqpx.wr_atomic_cmp_swp = wrx_cmp_swp;
	qp->ibqpx.wr_atomic_fetch_add = wrx_fetch_add;
	qp->ibqpx.wr_rdma_read = wrx_rdma_read;
	qp->ibqpx.wr_rdma_write = wrx_rdma_write;
	qp->ibqpx.wr_rdma_write_imm = wrx_rdma_write_imm;
	qp->ibqpx.wr_send = wrx_send;
	qp->ibqpx.wr_send_imm = wrx_send_imm;
	qp->ibqpx.wr_set_ud_addr = wrx_set_ud_addr;
	qp->ibqpx.wr_set_inline_data = wrx_set_inline;
	qp->ibqpx.wr_set_inline_data_list = wrx_set_inline_list;
	qp->ibqpx.wr_set_sge = wrx_set_sge;
	qp->ibqpx.wr_set_sge_list = wrx_set_sge_list;
	qp->ibqpx.wr_start = wrx_start;
	qp->ibqpx.wr_complete = wrx_complete;
	qp->ibqpx.wr_abort = wrx_abort;
	return ibqp;
}

/* rdma-core: NULL (errno untouched) for a QP created without send ops. */
struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct hd_qp *qp = to_hd_qp(ibqp);

	return qp->ex ? &qp->ibqpx : NULL;
}
