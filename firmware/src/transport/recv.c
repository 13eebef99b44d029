/* SPDX-License-Identifier: MIT */
/*
 * Receive-side work shared by every transport: whether the QP takes
 * packets, the RECV a message lands in (from the QP's SRQ, IBTA 10.2.9, or
 * its own RQ), placing a SEND's payload in it, and the R_Key check and
 * placement of a WRITE's payload.
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
	QCNT_INC(nic, qp, recv_wqes);
	if (*st == SNIC_WC_SUCCESS)
		*st = (uint8_t)sgl_load(nic, &r->rsgl, w.sge, w.hdr.num_sge, qp->pd,
					SNIC_ACCESS_LOCAL_WRITE);
	return true;
}

static bool srq_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st)
{
	struct snic_srq *s = &nic->srqs[qp->srq];
	uint64_t pa;

	if (!s->in_use)
		return false;
	if (s->ci == s->pi) {
		uint32_t pi;

		if (core_dma_load_acquire32(&nic->core, s->dbrec_pa, &pi))
			return false;
		if (pi - s->ci <= s->cnt) /* more than a ring ahead: host bug */
			s->pi = pi;
		if (s->ci == s->pi)
			return false;
	}
	pa = ring_slot_pa(s->ring_pa, s->ci, s->cnt, s->stride_log);
	s->ci++;
	take_at(nic, qp, pa, s->max_sge, st);
	/* IBTA 10.2.9.6: below the limit, one event, then disarmed.  The
	 * count uses the producer index last read, so re-read it first. */
	if (s->limit && s->pi - s->ci < s->limit) {
		uint32_t pi;

		if (core_dma_load_acquire32(&nic->core, s->dbrec_pa, &pi) == 0 &&
		    pi - s->ci <= s->cnt)
			s->pi = pi;
		if (s->pi - s->ci < s->limit) {
			s->limit = 0;
			core_event(&nic->core, s->ctx, SNIC_EV_SRQ_LIMIT_REACHED,
				  obj_handle(&s->obj, qp->srq));
		}
	}
	return true;
}

/* The next RECV for qp into qp->resp (recv_wr_id, rsgl, in_send); *st
 * says whether it is usable.  False when none is posted (RC: RNR). */
bool recv_take(struct snic_nic *nic, struct snic_qp *qp, uint8_t *st)
{
	struct snic_resp *r = &qp->resp;

	if (qp->has_srq)
		return srq_take(nic, qp, st);
	if (r->rq_ci == r->rq_pi) /* posted since it was last read? */
		qp_read_rq_pi(nic, qp);
	if (r->rq_ci == r->rq_pi)
		return false;
	return take_at(nic, qp, qp_rq_wqe_pa(qp, r->rq_ci), qp->max_recv_sge, st);
}

/* Packets reach the receive side from RTR on, and not in error. */
bool recv_state_ok(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->state >= SNIC_QPS_RTR && qp->state != SNIC_QPS_ERR)
		return true;
	QCNT_INC(nic, qp, rx_drop_qp_state);
	return false;
}
