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

/* RECVs: up to `budget` flushed; returns what is left of the budget. */
static unsigned recv_flush(struct snic_nic *nic, struct snic_qp *qp,
			   unsigned budget)
{
	struct snic_resp *r = &qp->resp;

	if (qp->has_srq) { /* the SRQ's WQEs stay for its other QPs */
		srq_flush_qp(nic, qp);
		return budget;
	}
	for (; budget && r->rq_ci != r->rq_pi; budget--) {
		if (core_dma_read(&nic->core, qp_rq_wqe_pa(qp, r->rq_ci),
				  &r->recv_wr_id, 8))
			r->recv_wr_id = 0;
		r->recv_len = 0;
		qp_recv_cqe(nic, qp, SNIC_WC_WR_FLUSH_ERR, SNIC_WC_RECV, NULL);
	}
	if (r->rq_ci == r->rq_pi)
		r->in_send = false;
	return budget;
}

/* The message being sent is in the in-flight window already (RC enters
 * it with its first packet): the SQ part of the flush starts after it,
 * so it completes once. */
static void skip_current(struct snic_qp *qp)
{
	const struct snic_inflight *last;

	if (!qp->cur.valid || qp->infl_head == qp->infl_tail)
		return;
	last = &qp->infl[(qp->infl_tail - 1) % SNIC_INFLIGHT];
	if (last->wqe_idx == qp->cur.wqe_idx)
		qp->sq_fetch = qp->cur.wqe_idx + 1;
}

/* Send WQEs: in flight first, then everything not yet started (C10-39),
 * up to `budget`; returns what is left of it. */
static unsigned send_flush(struct snic_nic *nic, struct snic_qp *qp,
			   unsigned budget)
{
	skip_current(qp);
	qp->cur.valid = false;
	for (; budget && qp->infl_head != qp->infl_tail; budget--, qp->infl_head++)
		qp_send_cqe(nic, qp, &qp->infl[qp->infl_head % SNIC_INFLIGHT],
			    SNIC_WC_WR_FLUSH_ERR);
	for (; budget && qp->infl_head == qp->infl_tail &&
	       qp->sq_fetch != qp->sq_pi; budget--, qp->sq_fetch++) {
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
	return budget;
}

/* Complete what the QP holds with flush errors, SNIC_FLUSH_BUDGET WQEs
 * per call: a QP with full 16K-entry rings would otherwise write 32K
 * CQEs in one poll pass.  What is left waits on the requester's work
 * list (req_poll calls us again). */
void qp_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	unsigned budget = SNIC_FLUSH_BUDGET;

	qp_read_dbrec(nic, qp);
	budget = send_flush(nic, qp, budget);
	budget = recv_flush(nic, qp, budget);
	qp->flush_pending = budget == 0;
	if (qp->flush_pending)
		qp_req_schedule(nic, qp);
}

/* The QP enters the error state: counted, logged once, the event. */
static bool enter_error(struct snic_nic *nic, struct snic_qp *qp,
			enum snic_event_type ev)
{
	char msg[64];

	if (qp->state == SNIC_QPS_ERR)
		return false;
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
	if (ev != SNIC_EV_NONE)
		core_event(&nic->core, qp->ctx, ev, qp->qpn);
	return true;
}

void qp_to_error(struct snic_nic *nic, struct snic_qp *qp,
		 enum snic_event_type ev)
{
	if (enter_error(nic, qp, ev))
		qp_flush(nic, qp);
}

/* As qp_to_error, the flush left to the requester's work list (req_poll):
 * for a caller inside a loop that retires the QP's WQEs, whose window the
 * flush would move under it. */
void qp_to_error_later(struct snic_nic *nic, struct snic_qp *qp,
		       enum snic_event_type ev)
{
	if (!enter_error(nic, qp, ev))
		return;
	qp->flush_pending = true;
	qp_req_schedule(nic, qp);
}
