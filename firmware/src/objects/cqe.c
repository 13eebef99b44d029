/* SPDX-License-Identifier: MIT */
/*
 * The two CQE builders: a send WQE's completion and the completion of the
 * RECV a QP holds (qp->resp).  Every transport and the flush build their
 * CQEs here (IBTA 11.4.2.1 lists the work completion's fields), and here
 * a QP whose CQE its CQ dropped goes to the error state (qp_cq_lost).
 */
#include <string.h>

#include "objects/objects.h"

/* The send CQE of f into cqe; false when none is due. */
static bool send_cqe_fill(const struct snic_qp *qp,
			  const struct snic_inflight *f, uint8_t status,
			  struct snic_cqe *cqe)
{
	/* indexed by the whole byte: any value of f->opcode has an entry
	 * (0 where there is no send WR of it), so no bounds test */
	static const uint8_t wc_op[UINT8_MAX + 1] = {
		[SNIC_WR_RDMA_WRITE] = SNIC_WC_RDMA_WRITE,
		[SNIC_WR_RDMA_WRITE_WITH_IMM] = SNIC_WC_RDMA_WRITE,
		[SNIC_WR_SEND] = SNIC_WC_SEND,
		[SNIC_WR_SEND_WITH_IMM] = SNIC_WC_SEND,
		[SNIC_WR_RDMA_READ] = SNIC_WC_RDMA_READ,
		[SNIC_WR_ATOMIC_CMP_AND_SWP] = SNIC_WC_COMP_SWAP,
		[SNIC_WR_ATOMIC_FETCH_AND_ADD] = SNIC_WC_FETCH_ADD,
		[SNIC_WR_ATOMIC_WRITE] = SNIC_WC_ATOMIC_WRITE,
		[SNIC_WR_LOCAL_INV] = SNIC_WC_LOCAL_INV,
		[SNIC_WR_BIND_MW] = SNIC_WC_BIND_MW,
		[SNIC_WR_SEND_WITH_INV] = SNIC_WC_SEND,
	};

	/* Unsignaled successes leave no CQE (IBTA 10.8.2.2, C10-97); an XRC
	 * target has no send queue nor send CQ (Annex A14): whatever a
	 * host wrote into its unused ring completes nowhere */
	if ((status == SNIC_WC_SUCCESS && !f->signaled) ||
	    qp->type == SNIC_QPT_XRC_RECV)
		return false;
	_Static_assert(sizeof(f->opcode) == 1, "wc_op covers every opcode");
	/* one assignment, the rest zero: fewer stores than a memset and
	 * then each field over it */
	*cqe = (struct snic_cqe){
		.wr_id = f->wr_id, .byte_len = f->len, .qp_num = qp->qpn,
		.wqe_idx = f->wqe_idx, .status = status,
		.opcode = wc_op[f->opcode], .is_send = 1,
	};
	return true;
}

/* A CQ in error takes no more CQEs (cq.c, which calls us, on the QP's
 * core, for each CQE it drops): a work queue that then tries to complete
 * into it gets a Local Work Queue Catastrophic Error, an affiliated
 * asynchronous error that puts its QP in the error state (IBTA vol. 1
 * ch. 11, affiliated asynchronous errors; IBV_EVENT_QP_FATAL), after the
 * CQ's own CQ Error event.  The QP's WRs not completed yet then flush where their CQ still
 * takes CQEs (a QP whose other queue has a healthy CQ); into the failed
 * one they are dropped like the one that was lost.  The flush waits for
 * the requester's work list: we may be inside a loop retiring the QP's
 * WQEs.  Once per QP: in error, a dropped CQE (a flush's) is expected. */
void __attribute__((noinline, cold))
qp_cq_lost(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->state != SNIC_QPS_ERR)
		qp_to_error_later(nic, qp, SNIC_EV_QP_FATAL);
}

void qp_send_cqe(struct snic_nic *nic, struct snic_qp *qp,
		 const struct snic_inflight *f, uint8_t status)
{
	struct snic_cqe cqe;

	if (send_cqe_fill(qp, f, status, &cqe))
		cq_post(nic, qp->scq, &cqe, false);
}

void qp_send_cqe_run(struct snic_nic *nic, struct snic_qp *qp,
		     const struct snic_inflight *f, uint8_t status,
		     struct cq_run *r)
{
	if (send_cqe_fill(qp, f, status, &r->cqe[r->n]) &&
	    ++r->n == SNIC_CQ_RUN)
		cq_run_flush(nic, r);
}

/* The RECV the QP holds completes (recv_wr_id, recv_len; wqe_idx is the
 * RQ index).  h: the packet that completed it, for the immediate, the
 * solicited bit and, on UD, the source QP; NULL for flushes and errors
 * found before a packet could count. */
void qp_recv_cqe(struct snic_nic *nic, struct snic_qp *qp, uint8_t status,
		 uint8_t opcode, const struct roce_hdrs *h)
{
	struct snic_resp *r = &qp->resp;
	struct snic_cqe cqe;

	/* an XRC target's RECVs are its SRQ's: none bound (yet, or any
	 * more), nothing of it to complete, and no CQ to complete on */
	if (qp->type == SNIC_QPT_XRC_RECV && !qp->has_srq)
		return;
	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = r->recv_wr_id;
	cqe.status = status;
	cqe.opcode = opcode;
	cqe.byte_len = r->recv_len;
	cqe.qp_num = qp->qpn;
	cqe.src_qp = qp->attr.dest_qp_num;
	cqe.wqe_idx = r->rq_ci;
	if (qp->type == SNIC_QPT_XRC_RECV) { /* the host frees the SRQ's slot */
		cqe.xrc = 1;
		cqe.xrc_srqn = obj_handle(&nic->srqs[qp->srq].obj, qp->srq);
	}
	if (qp->type == SNIC_QPT_UD && h) {
		/* UD: the sender and the GRH area at the buffer's start */
		cqe.src_qp = h->deth_sqpn;
		if (status == SNIC_WC_SUCCESS) {
			cqe.wc_flags = SNIC_WC_GRH;
			/* RoCE v2 has no SL on the wire.  For UD the CQE
			 * carries what Annex A17.4.5.1 asks for instead, the
			 * received frame's network header type, where
			 * rdma-core's mlx5 provider puts it and UCX reads it:
			 * in sl, 2 = IPv4 (the GRH area then holds the IPv4
			 * header in its last 20 bytes, as rdma-core lays out
			 * RoCE v2 over IPv4), 1 = IPv6 (the IPv6 header). */
			cqe.sl = h->ip6 ? SNIC_CQE_SL_ROCE_IPV6
					: SNIC_CQE_SL_ROCE_IPV4;
		}
	}
	if (h && (roce_opcodes[h->opcode].flags & ROCE_F_IMM)) {
		cqe.imm_data = h->imm;
		cqe.wc_flags |= SNIC_WC_WITH_IMM;
	}
	/* a SEND with Invalidate: the IETH's R_Key (the window is
	 * invalidated already, rc_responder.c) */
	if (h && status == SNIC_WC_SUCCESS &&
	    (roce_opcodes[h->opcode].flags & ROCE_F_INV)) {
		cqe.imm_data = h->imm;
		cqe.wc_flags |= SNIC_WC_WITH_INV;
	}
	r->rq_ci++;
	r->in_send = false;
	qp->uc_keep = false;
	cq_post(nic, qp->rcq, &cqe, h && h->se);
}
