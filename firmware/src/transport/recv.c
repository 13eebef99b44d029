/* SPDX-License-Identifier: MIT */
/*
 * Receive-queue work: taking the RECV a message lands in, from the QP's
 * SRQ (IBTA 10.2.9) or its own RQ, the same for every transport.
 */
#include "transport/transport.h"

/* Read the WQE at pa (validated against max_sge), load its SGEs into the
 * responder's cursor. */
static bool take_at(struct snic_nic *nic, struct snic_qp *qp, uint64_t pa,
		    uint32_t max_sge, uint8_t *st)
{
	struct snic_resp *r = &qp->resp;
	struct {
		struct snic_recv_wqe hdr;
		struct snic_wqe_sge sge[SNIC_MAX_SGE];
	} w;

	*st = SNIC_WC_SUCCESS;
	if (core_dma_read(&nic->core, pa, &w.hdr, sizeof(w.hdr)) ||
	    w.hdr.num_sge > max_sge ||
	    (w.hdr.num_sge && core_dma_read(&nic->core, pa + sizeof(w.hdr), w.sge,
					   w.hdr.num_sge * 16u))) {
		w.hdr.num_sge = 0;
		*st = SNIC_WC_LOC_QP_OP_ERR;
	}
	r->recv_wr_id = w.hdr.wr_id;
	r->recv_len = 0;
	r->in_send = true;
	CNT_INC(&nic->core, recv_wqes);
	if (*st == SNIC_WC_SUCCESS)
		*st = (uint8_t)sgl_load(nic, &r->rsgl, w.sge, w.hdr.num_sge, qp->pd,
					SNIC_ACCESS_LOCAL_WRITE);
	return true;
}

bool srq_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st)
{
	struct snic_srq *s = &nic->srqs[qp->srq];
	uint64_t pa;

	if (!s->in_use)
		return false;
	if (s->ci == s->pi) {
		uint32_t pi;

		if (core_dma_read(&nic->core, s->dbrec_pa, &pi, sizeof(pi)))
			return false;
		if (pi - s->ci <= s->cnt) /* more than a ring ahead: host bug */
			s->pi = pi;
		if (s->ci == s->pi)
			return false;
	}
	pa = s->ring_pa + ((uint64_t)(s->ci & (s->cnt - 1)) << s->stride_log);
	s->ci++;
	take_at(nic, qp, pa, s->max_sge, st);
	/* IBTA 10.2.9.6: below the limit, one event, then disarmed.  The
	 * count uses the producer index last read, so re-read it first. */
	if (s->limit && s->pi - s->ci < s->limit) {
		uint32_t pi;

		if (core_dma_read(&nic->core, s->dbrec_pa, &pi, sizeof(pi)) == 0 &&
		    pi - s->ci <= s->cnt)
			s->pi = pi;
		if (s->pi - s->ci < s->limit) {
			s->limit = 0;
			core_event(&nic->core, s->ctx, SNIC_EVENT_SRQ_LIMIT,
				  srqn_of(s, qp->srq));
		}
	}
	return true;
}

bool recv_take_any(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st)
{
	struct snic_resp *r = &qp->resp;

	if (qp->has_srq)
		return srq_take(nic, qp, st);
	if (r->rq_ci == r->rq_pi)
		qp_doorbell(nic, qp); /* posted but not yet rung for? */
	if (r->rq_ci == r->rq_pi)
		return false;
	return take_at(nic, qp, qp->rq_pa + ((uint64_t)(r->rq_ci & (qp->rq_cnt - 1))
					     << qp->rq_stride_log),
		       qp->max_recv_sge, st);
}

