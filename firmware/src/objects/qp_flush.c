/* SPDX-License-Identifier: MIT */
/*
 * Errors and flushing (IBTA 10.3.1.14, C10-39): a QP in error completes
 * every outstanding and posted WQE with IBV_WC_WR_FLUSH_ERR.
 */
#include <string.h>

#include "objects/objects.h"

/* The QP's RQ is the SRQ's: only a RECV it already took (a message half
 * received) completes with a flush error; the rest stay for other QPs. */
static void srq_flush_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->resp.in_send && !qp->uc_keep)
		return;
	qp->resp.recv_len = 0;
	qp_recv_cqe(nic, qp, SNIC_WC_WR_FLUSH_ERR, SNIC_WC_RECV, NULL);
}

static void recv_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_resp *r = &qp->resp;

	if (qp->has_srq) { /* the SRQ's WQEs stay for its other QPs */
		srq_flush_qp(nic, qp);
		return;
	}
	while (r->rq_ci != r->rq_pi) {
		if (core_dma_read(&nic->core, qp_rq_wqe_pa(qp, r->rq_ci),
				  &r->recv_wr_id, 8))
			r->recv_wr_id = 0;
		r->recv_len = 0;
		qp_recv_cqe(nic, qp, SNIC_WC_WR_FLUSH_ERR, SNIC_WC_RECV, NULL);
	}
	r->in_send = false;
}

static void send_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	/* in flight first, then everything not yet started (C10-39) */
	for (; qp->infl_head != qp->infl_tail; qp->infl_head++) {
		struct snic_inflight *f = &qp->infl[qp->infl_head % SNIC_INFLIGHT];

		qp_send_cqe(nic, qp, f, SNIC_WC_WR_FLUSH_ERR);
	}
	qp->cur.valid = false;
	for (; qp->sq_fetch != qp->sq_pi; qp->sq_fetch++) {
		struct snic_inflight f;
		struct snic_wqe_ctrl c;

		memset(&f, 0, sizeof(f));
		if (core_dma_read(&nic->core, qp_sq_wqe_pa(qp, qp->sq_fetch), &c,
				  sizeof(c)) == 0) {
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
	qp_read_dbrec(nic, qp);
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
