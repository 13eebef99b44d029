/* SPDX-License-Identifier: MIT */
/*
 * Errors and flushing (IBTA 10.3.1.14, C10-39): a QP in error completes
 * every outstanding and posted WQE with IBV_WC_WR_FLUSH_ERR.
 */
#include <string.h>

#include "objects/objects.h"

void qp_send_cqe(struct snic_nic *nic, struct snic_qp *qp,
		 const struct snic_inflight *f, uint8_t status)
{
	static const uint8_t wc_op[] = {
		[SNIC_WR_RDMA_WRITE] = SNIC_WC_RDMA_WRITE,
		[SNIC_WR_RDMA_WRITE_WITH_IMM] = SNIC_WC_RDMA_WRITE,
		[SNIC_WR_SEND] = SNIC_WC_SEND,
		[SNIC_WR_SEND_WITH_IMM] = SNIC_WC_SEND,
		[SNIC_WR_RDMA_READ] = SNIC_WC_RDMA_READ,
		[SNIC_WR_ATOMIC_CMP_AND_SWP] = SNIC_WC_COMP_SWAP,
		[SNIC_WR_ATOMIC_FETCH_AND_ADD] = SNIC_WC_FETCH_ADD,
	};
	struct snic_cqe cqe;

	/* Unsignaled successes leave no CQE (IBTA 10.8.2.2, C10-97) */
	if (status == SNIC_WC_SUCCESS && !f->signaled)
		return;
	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = f->wr_id;
	cqe.status = status;
	cqe.opcode = f->opcode < sizeof(wc_op) ? wc_op[f->opcode] : 0;
	cqe.byte_len = f->len;
	cqe.qp_num = qp->qpn;
	cqe.wqe_idx = f->wqe_idx;
	cqe.is_send = 1;
	cq_post(nic, qp->scq, &cqe, false);
}

/* The QP's RQ is the SRQ's: only a RECV it already took (a message half
 * received) completes with a flush error; the rest stay for other QPs. */
static void srq_flush_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_resp *r = &qp->resp;
	struct snic_cqe cqe;

	if (!r->in_send && !qp->uc_keep)
		return;
	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = r->recv_wr_id;
	cqe.status = SNIC_WC_WR_FLUSH_ERR;
	cqe.opcode = SNIC_WC_RECV;
	cqe.qp_num = qp->qpn;
	cq_post(nic, qp->rcq, &cqe, false);
	r->in_send = false;
	qp->uc_keep = false;
}

static void recv_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_qp_dbrec db;
	struct snic_resp *r = &qp->resp;

	if (qp->has_srq) { /* the SRQ's WQEs stay for its other QPs */
		srq_flush_qp(nic, qp);
		return;
	}
	if (core_dma_read(&nic->core, qp->dbrec_pa, &db, 8) == 0) {
		uint32_t pi = atomic_load_explicit(&db.rq_pi, memory_order_relaxed);

		if (pi - r->rq_ci <= qp->rq_cnt)
			r->rq_pi = pi;
	}
	for (; r->rq_ci != r->rq_pi; r->rq_ci++) {
		struct snic_cqe cqe;
		uint64_t wr_id;
		uint64_t pa = qp->rq_pa +
			((uint64_t)(r->rq_ci & (qp->rq_cnt - 1)) << qp->rq_stride_log);

		if (core_dma_read(&nic->core, pa, &wr_id, 8))
			wr_id = 0;
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = wr_id;
		cqe.status = SNIC_WC_WR_FLUSH_ERR;
		cqe.opcode = SNIC_WC_RECV;
		cqe.qp_num = qp->qpn;
		cqe.wqe_idx = r->rq_ci;
		cq_post(nic, qp->rcq, &cqe, false);
	}
	r->in_send = false;
}

static void send_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_qp_dbrec db;

	/* in flight first, then everything not yet started (C10-39) */
	for (; qp->infl_head != qp->infl_tail; qp->infl_head++) {
		struct snic_inflight *f = &qp->infl[qp->infl_head % SNIC_INFLIGHT];

		qp_send_cqe(nic, qp, f, SNIC_WC_WR_FLUSH_ERR);
	}
	qp->cur.valid = false;
	if (core_dma_read(&nic->core, qp->dbrec_pa, &db, 8) == 0) {
		uint32_t pi = atomic_load_explicit(&db.sq_pi, memory_order_relaxed);

		if (pi - qp->sq_fetch <= qp->sq_cnt)
			qp->sq_pi = pi;
	}
	for (; qp->sq_fetch != qp->sq_pi; qp->sq_fetch++) {
		struct snic_inflight f;
		struct snic_wqe_ctrl c;
		uint64_t pa = qp->sq_pa +
			((uint64_t)(qp->sq_fetch & (qp->sq_cnt - 1)) << qp->sq_stride_log);

		memset(&f, 0, sizeof(f));
		if (core_dma_read(&nic->core, pa, &c, sizeof(c)) == 0) {
			f.wr_id = c.wr_id;
			f.opcode = c.opcode;
		}
		f.wqe_idx = qp->sq_fetch;
		qp_send_cqe(nic, qp, &f, SNIC_WC_WR_FLUSH_ERR);
	}
	qp->rd_out = 0;
	qp->rd_active = false;
}

void qp_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	send_flush(nic, qp);
	recv_flush(nic, qp);
}

void qp_to_error(struct snic_nic *nic, struct snic_qp *qp, uint32_t event)
{
	char msg[64];

	if (qp->state == SNIC_QPS_ERR)
		return;
	CNT_INC(&nic->core, qp_errors);
	if (qp->state <= SNIC_QPS_ERR) {
		/* set-up logging only: this happens once per QP */
		const char *p = qp_state_name(qp->state);
		unsigned n = 0;

		memcpy(msg, "qp error from ", 14);
		n = 14;
		while (*p && n < sizeof(msg) - 1)
			msg[n++] = *p++;
		msg[n] = 0;
		core_log(&nic->core, SNIC_LOG_DEBUG, msg);
	}
	qp->state = SNIC_QPS_ERR;
	if (event != UINT32_MAX)
		core_event(&nic->core, qp->ctx, event, qp->qpn);
	qp_flush(nic, qp);
}
