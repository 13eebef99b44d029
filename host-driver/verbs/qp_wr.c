/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: extended QPs, ibv_create_qp_ex with send ops,
 * ibv_qp_to_qp_ex and the ibv_wr_* calls.
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

/* wr_start takes the SQ lock and keeps it until
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

	hd_spin_lock(&qp->sq.lock);
	qp->ex_pi = qp->sq.pi;
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
	/* RDMA Atomic Write: RC only, and through this call only (as
	 * rdma-core: ibv_send_wr has no field for its 8 bytes) */
	if (op == IBV_WR_ATOMIC_WRITE ? qp->ibqp.qp_type != IBV_QPT_RC
				      : !hd_qp_opcode_ok(qp, op)) {
		qp->ex_err = EINVAL;
		return NULL;
	}
	ci = atomic_load_explicit(&qp->sq.ci, memory_order_acquire);
	if (!hd_wq_room(&qp->sq, qp->ex_pi, &ci, qp->sq.cnt)) {
		qp->ex_err = ENOMEM;
		return NULL;
	}
	qp->ex_wqe = hd_wq_slot(&qp->sq, qp->ex_pi);
	w = (struct snic_send_wqe *)(void *)qp->ex_wqe;
	memset(w, 0, sizeof(*w));
	w->ctrl.wr_id = q->wr_id;
	w->ctrl.opcode = (uint8_t)op;
	w->ctrl.flags = hd_wqe_send_flags(q->wr_flags, qp->sq_sig_all);
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

/* The 8 bytes are copied now, in the order the caller's memory holds
 * them; they land in the remote word in that order. */
static void wrx_atomic_write(struct ibv_qp_ex *q, uint32_t rkey,
			     uint64_t raddr, const void *atomic_wr)
{
	struct snic_send_wqe *w = wrx_new(q, IBV_WR_ATOMIC_WRITE);

	if (!w)
		return;
	w->raddr.remote_addr = raddr;
	w->raddr.rkey = rkey;
	memcpy(&w->atomic.swap, atomic_wr, sizeof(w->atomic.swap));
}

/* Memory windows (mw.c): a type 2B bind, a local invalidate and a SEND
 * with Invalidate (the rkey travels in the IETH, network order). */
static void wrx_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t rkey,
			const struct ibv_mw_bind_info *bind_info)
{
	struct snic_send_wqe *w = wrx_new(q, IBV_WR_BIND_MW);

	if (w && hd_wqe_bind(w, mw, rkey, bind_info, 0))
		qpx(q)->ex_err = EINVAL;
}

static void wrx_local_inv(struct ibv_qp_ex *q, uint32_t invalidate_rkey)
{
	struct snic_send_wqe *w = wrx_new(q, IBV_WR_LOCAL_INV);

	if (w)
		w->ctrl.imm_data = htobe32(invalidate_rkey);
}

static void wrx_send_inv(struct ibv_qp_ex *q, uint32_t invalidate_rkey)
{
	struct snic_send_wqe *w = wrx_new(q, IBV_WR_SEND_WITH_INV);

	if (w)
		w->ctrl.imm_data = htobe32(invalidate_rkey);
}

static void wrx_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah,
			    uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct hd_qp *qp = qpx(q);

	if (!qp->ex_wqe || qp->ibqp.qp_type != IBV_QPT_UD)
		return;
	hd_wqe_set_ud((struct snic_send_wqe *)(void *)qp->ex_wqe, ah,
		      remote_qpn, remote_qkey);
}

static void wrx_set_sge_list(struct ibv_qp_ex *q, size_t n,
			     const struct ibv_sge *sg)
{
	struct hd_qp *qp = qpx(q);
	struct snic_send_wqe *w = (struct snic_send_wqe *)(void *)qp->ex_wqe;

	if (!w)
		return;
	/* an atomic write carries its data in the WQE: no SGE */
	if (n > qp->sq.max_sge || w->ctrl.opcode == IBV_WR_ATOMIC_WRITE) {
		qp->ex_err = EINVAL;
		qp->ex_wqe = NULL;
		return;
	}
	hd_wqe_sges((struct snic_wqe_sge *)(void *)(qp->ex_wqe +
			snic_wqe_data_off(qp->ibqp.qp_type, w->ctrl.opcode)),
		    sg, n);
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
	    w->ctrl.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    w->ctrl.opcode == IBV_WR_ATOMIC_WRITE) {
		qp->ex_err = EINVAL;
		qp->ex_wqe = NULL;
		return;
	}
	dst = qp->ex_wqe + snic_wqe_data_off(qp->ibqp.qp_type, w->ctrl.opcode);
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
		if (qp->ex_pi != qp->sq.pi) {
			qp->sq.pi = qp->ex_pi;
			/* WQEs, then the producer index, then the doorbell */
			atomic_store_explicit(&qp->dbrec->sq_pi, qp->sq.pi,
					      memory_order_release);
			hd_qp_ring_doorbell(qp);
		}
	}
	qp->ex_wqe = NULL;
	hd_spin_unlock(&qp->sq.lock);
	return err;
}

/* XRC initiator: the remote XRC SRQ of the WQE being built. */
static void wrx_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t remote_srqn)
{
	struct hd_qp *qp = qpx(q);

	if (qp->ex_wqe)
		((struct snic_send_wqe *)(void *)qp->ex_wqe)->ctrl.xrc_srqn =
			remote_srqn;
}

static void wrx_abort(struct ibv_qp_ex *q)
{
	struct hd_qp *qp = qpx(q);

	qp->ex_wqe = NULL;
	hd_spin_unlock(&qp->sq.lock);
}

#define HD_QP_EX_OPS                                                       \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |    \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |                \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |      \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE |  \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |                \
	 IBV_QP_EX_WITH_SEND_WITH_INV)

struct ibv_qp *hd_create_qp_ex(struct ibv_context *context,
			       struct ibv_qp_init_attr_ex *a)
{
	uint64_t ops = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		       ? a->send_ops_flags : 0;
	struct ibv_qp_init_attr ia;
	struct ibv_xrcd *xrcd = (a->comp_mask & IBV_QP_INIT_ATTR_XRCD)
				? a->xrcd : NULL;
	struct ibv_pd *pd = (a->comp_mask & IBV_QP_INIT_ATTR_PD) ? a->pd : NULL;
	struct ibv_qp *ibqp;
	struct hd_qp *qp;

	uint32_t cflags = (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS)
			  ? a->create_flags : 0;

	/* TSO, RSS ...: not supported.  CREATE_FLAGS is: a zero value asks
	 * for nothing (rdma-core's tests set the mask with 0 in about half
	 * their QPs), and blocking the loopback of one's own multicast is
	 * passed to the firmware with each attach (verbs/mcast.c). */
	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				       IBV_QP_INIT_ATTR_CREATE_FLAGS |
				       IBV_QP_INIT_ATTR_XRCD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (cflags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) {
		errno = EOPNOTSUPP; /* scatter FCS, source QPN, VLAN strip */
		return NULL;
	}
	/* an XRC target has a domain and no PD; every other QP a PD
	 * (hd_qp_create checks the rest) */
	if (a->qp_type == IBV_QPT_XRC_RECV ? !xrcd || pd || ops
					   : !pd || pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (ops & ~(uint64_t)HD_QP_EX_OPS) {
		errno = EOPNOTSUPP; /* TSO: no segmentation offload */
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
	ibqp = hd_qp_create(context, pd, &ia, xrcd);
	if (!ibqp)
		return NULL;
	a->cap = ia.cap;
	qp = to_hd_qp(ibqp);
	qp->block_mcast_lb = !!(cflags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB);
	if (!ops)
		return ibqp;
	qp->ex = 1;
	qp->ibqpx.comp_mask = 0;
	qp->ibqpx.wr_atomic_cmp_swp = wrx_cmp_swp;
	qp->ibqpx.wr_atomic_fetch_add = wrx_fetch_add;
	qp->ibqpx.wr_atomic_write = wrx_atomic_write;
	qp->ibqpx.wr_rdma_read = wrx_rdma_read;
	qp->ibqpx.wr_rdma_write = wrx_rdma_write;
	qp->ibqpx.wr_rdma_write_imm = wrx_rdma_write_imm;
	qp->ibqpx.wr_send = wrx_send;
	qp->ibqpx.wr_send_imm = wrx_send_imm;
	qp->ibqpx.wr_send_inv = wrx_send_inv;
	qp->ibqpx.wr_bind_mw = wrx_bind_mw;
	qp->ibqpx.wr_local_inv = wrx_local_inv;
	qp->ibqpx.wr_set_ud_addr = wrx_set_ud_addr;
	qp->ibqpx.wr_set_xrc_srqn = wrx_set_xrc_srqn;
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
