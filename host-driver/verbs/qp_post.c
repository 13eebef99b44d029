/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the QP data path, ibv_post_send and ibv_post_recv.
 *
 * Posting writes WQEs into the ring, then (once per call) store-releases
 * the producer index in the doorbell record, sets the QP's doorbell bits
 * and kicks the firmware if it sleeps.  Completions advance the consumer
 * indexes (cq.c).
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* Data path.                                                           */

void hd_qp_ring_doorbell(struct hd_qp *qp)
{
	struct hd_context *ctx = qp->obj.ctx;

	if (ctx->broker_fd >= 0) /* the firmware looks at our page */
		snic_db_ring_own(ctx->cdb, SNIC_QPN_IDX(qp->ibqp.qp_num),
				 qp->db_core);
	else
		snic_db_ring_ctx(ctx->db, ctx->cdb, ctx->slot_idx,
				 SNIC_QPN_IDX(qp->ibqp.qp_num), qp->db_core);
	hd_kick(ctx);
}

/* poll_cq (send CQ lock held): the firmware completed SQ index wqe_idx
 * and, implicitly, every earlier unsignaled WQE. */
void hd_qp_sq_complete(struct hd_qp *qp, uint32_t wqe_idx)
{
	uint32_t ci = atomic_load_explicit(&qp->sq.ci, memory_order_relaxed);
	uint32_t pi = atomic_load_explicit(&qp->dbrec->sq_pi,
					   memory_order_relaxed);
	uint32_t outstanding = pi - ci;
	uint32_t d = wqe_idx - ci;

	if (d >= outstanding) {
		/* Tolerate an index reported modulo the ring size. */
		d = (wqe_idx - ci) & (qp->sq.cnt - 1);
		if (d >= outstanding)
			return;
	}
	atomic_store_explicit(&qp->sq.ci, ci + d + 1, memory_order_release);
}

/* BIND_MW and LOCAL_INV: no data; BIND_MW of a type 1 window only from
 * ibv_bind_mw (type1 set). */
static int build_local_wqe(struct snic_send_wqe *w, struct ibv_send_wr *wr,
			   int type1)
{
	if (wr->opcode == IBV_WR_BIND_MW)
		return hd_wqe_bind(w, wr->bind_mw.mw, wr->bind_mw.rkey,
				   &wr->bind_mw.bind_info, type1);
	w->ctrl.imm_data = htobe32(wr->invalidate_rkey);
	return 0;
}

/* The WQE's data, SGEs or inline bytes, at dst (snic_wqe_data_off:
 * written after the header's fields, which it may overlay). */
static int build_send_data(struct hd_qp *qp, struct ibv_send_wr *wr,
			   struct snic_send_wqe *w, uint8_t *dst, int inl)
{
	if (inl) {
		uint32_t total = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			uint32_t len = wr->sg_list[i].length;

			if (len > qp->max_inline - total)
				return EINVAL;
			memcpy(dst + total,
			       (const void *)(uintptr_t)wr->sg_list[i].addr, len);
			total += len;
		}
		w->ctrl.flags |= SNIC_SEND_INLINE;
		w->ctrl.num_sge = 0;
		w->ctrl.inline_len = total;
	} else {
		hd_wqe_sges((struct snic_wqe_sge *)(void *)dst, wr->sg_list,
			    (size_t)wr->num_sge);
		w->ctrl.num_sge = (uint8_t)wr->num_sge;
		w->ctrl.inline_len = 0;
	}
	return 0;
}

static int build_send_wqe(struct hd_qp *qp, struct ibv_send_wr *wr,
			  uint8_t *slot, int type1)
{
	struct snic_send_wqe *w = (struct snic_send_wqe *)(void *)slot;
	int inl, err;

	if (!hd_qp_opcode_ok(qp, wr->opcode))
		return EINVAL;
	if (qp->ibqp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	inl = (wr->send_flags & IBV_SEND_INLINE) &&
	      (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM ||
	       wr->opcode == IBV_WR_RDMA_WRITE ||
	       wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM);
	w->ctrl.wr_id = wr->wr_id;
	w->ctrl.opcode = (uint8_t)wr->opcode;
	w->ctrl.flags = hd_wqe_send_flags(wr->send_flags, qp->sq_sig_all);
	w->ctrl.rsvd0 = 0;
	w->ctrl.imm_data = (wr->opcode == IBV_WR_SEND_WITH_IMM ||
			    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
				   ? wr->imm_data
			   : wr->opcode == IBV_WR_SEND_WITH_INV /* the IETH */
				   ? htobe32(wr->invalidate_rkey) : 0;
	w->ctrl.xrc_srqn = qp->ibqp.qp_type == IBV_QPT_XRC_SEND
			   ? wr->qp_type.xrc.remote_srqn : 0;
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
	if (qp->ibqp.qp_type == IBV_QPT_UD)
		hd_wqe_set_ud(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
			      wr->wr.ud.remote_qkey);
	/* after the header's fields: at 48 the data takes the atomic
	 * operands' place */
	err = build_send_data(qp, wr, w,
			      slot + snic_wqe_data_off(qp->ibqp.qp_type,
						       wr->opcode), inl);
	if (err || (wr->opcode != IBV_WR_BIND_MW &&
		    wr->opcode != IBV_WR_LOCAL_INV))
		return err;
	return build_local_wqe(w, wr, type1);
}

static int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr, int type1)
{
	struct hd_qp *qp = to_hd_qp(ibqp);
	struct hd_wq *sq = &qp->sq;
	uint32_t pi, ci;
	int err = 0;

	hd_spin_lock(&sq->lock);
	/* Posting to the SQ before RTS is refused with EINVAL, as Linux
	 * rxe does (drivers/infiniband/sw/rxe/rxe_verbs.c, rxe_post_send:
	 * "qp not ready to send").  In SQE/SQD/ERR the WQEs are accepted
	 * and the firmware flushes them. */
	if (ibqp->state < IBV_QPS_RTS) {
		*bad_wr = wr;
		hd_spin_unlock(&sq->lock);
		return EINVAL;
	}
	pi = sq->pi;
	ci = atomic_load_explicit(&sq->ci, memory_order_acquire);
	for (; wr; wr = wr->next) {
		if (!hd_wq_room(sq, pi, &ci, sq->cnt)) {
			err = ENOMEM;
			break;
		}
		err = build_send_wqe(qp, wr, hd_wq_slot(sq, pi), type1);
		if (err)
			break;
		pi++;
	}
	if (err)
		*bad_wr = wr;
	if (pi != sq->pi) {
		sq->pi = pi;
		/* WQEs before the producer index (release), then the
		 * doorbell bits, then the kick. */
		atomic_store_explicit(&qp->dbrec->sq_pi, pi,
				      memory_order_release);
		hd_qp_ring_doorbell(qp);
	}
	hd_spin_unlock(&sq->lock);
	return err;
}

int hd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad_wr)
{
	return post_send(ibqp, wr, bad_wr, 0);
}

int hd_post_send_bind(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	return post_send(ibqp, wr, bad_wr, 1);
}

int hd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad_wr)
{
	struct hd_qp *qp = to_hd_qp(ibqp);
	struct hd_wq *rq = &qp->rq;
	uint32_t pi;
	int err;

	hd_spin_lock(&rq->lock);
	/* Receives may be posted from INIT on; in RESET Linux rxe refuses
	 * them with EINVAL (rxe_post_recv), and a QP with an SRQ has no RQ
	 * of its own (EINVAL, as rxe), nor has either kind of XRC QP. */
	if (ibqp->state == IBV_QPS_RESET || qp->srq ||
	    ibqp->qp_type == IBV_QPT_XRC_SEND || ibqp->qp_type == IBV_QPT_XRC_RECV) {
		*bad_wr = wr;
		hd_spin_unlock(&rq->lock);
		return EINVAL;
	}
	pi = rq->pi;
	err = hd_wq_post_recv(rq, rq->cnt, wr, bad_wr);
	if (pi != rq->pi) {
		atomic_store_explicit(&qp->dbrec->rq_pi, rq->pi,
				      memory_order_release);
		hd_qp_ring_doorbell(qp);
	}
	hd_spin_unlock(&rq->lock);
	return err;
}
