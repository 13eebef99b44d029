/* SPDX-License-Identifier: MIT */
/*
 * The QP table: handles, creation (with its SRQ binding), destruction and
 * query.  State changes are qp_modify.c, errors and flushing qp_flush.c.
 */
#include <string.h>

#include "objects/objects.h"

_Static_assert((1u << SNIC_HANDLE_IDX_BITS) == SNIC_MAX_QP, "QP handles");

struct snic_qp *qp_lookup(struct snic_nic *nic, unsigned ctx, uint32_t qpn)
{
	return OBJ_LOOKUP(nic->qps, ctx, qpn, NULL);
}

/* ---------------------------------------------------------------------- */
/* Create / destroy.                                                       */

static bool ring_ok(const struct snic_nic *nic, unsigned ctx, uint64_t pa,
		    uint32_t cnt, uint32_t stride_log)
{
	uint64_t len = (uint64_t)cnt << stride_log;

	return (pa & 63) == 0 && core_ctx_range_ok(&nic->core, ctx, pa, len);
}

int qp_create_args_ok(const struct snic_nic *nic, unsigned ctx,
		      const struct snic_cmd_create_qp *in)
{
	uint32_t sq_need = 64 + (in->max_send_sge * 16 > in->max_inline
				 ? in->max_send_sge * 16 : in->max_inline);
	uint32_t rq_need = 16 + in->max_recv_sge * 16;

	if (in->qp_type != SNIC_QPT_RC && in->qp_type != SNIC_QPT_UC &&
	    in->qp_type != SNIC_QPT_UD && in->qp_type != SNIC_QPT_XRC_SEND &&
	    in->qp_type != SNIC_QPT_XRC_RECV && in->qp_type != SNIC_QPT_RAW_PACKET)
		return SNIC_ST_NOTSUP;
	if (!is_pow2(in->sq_wqe_cnt) || !is_pow2(in->rq_wqe_cnt) ||
	    in->sq_wqe_cnt > SNIC_MAX_QP_WR || in->rq_wqe_cnt > SNIC_MAX_QP_WR)
		return SNIC_ST_INVAL;
	if (in->max_send_sge > SNIC_MAX_SGE || in->max_recv_sge > SNIC_MAX_SGE ||
	    in->max_inline > SNIC_MAX_INLINE)
		return SNIC_ST_INVAL;
	if (in->sq_stride_log > 12 || in->rq_stride_log > 12 ||
	    (1u << in->sq_stride_log) < sq_need ||
	    (1u << in->rq_stride_log) < rq_need)
		return SNIC_ST_INVAL;
	if (!ring_ok(nic, ctx, in->sq_pa, in->sq_wqe_cnt, in->sq_stride_log) ||
	    !ring_ok(nic, ctx, in->rq_pa, in->rq_wqe_cnt, in->rq_stride_log) ||
	    !ring_ok(nic, ctx, in->dbrec_pa, 1, 6))
		return SNIC_ST_FAULT;
	return SNIC_ST_OK;
}

/* The rings and limits CREATE_QP gave (checked by qp_create_args_ok). */
static void qp_set_queues(struct snic_qp *qp, const struct snic_cmd_create_qp *in)
{
	qp->sq_pa = in->sq_pa;
	qp->rq_pa = in->rq_pa;
	qp->dbrec_pa = in->dbrec_pa;
	qp->sq_cnt = in->sq_wqe_cnt;
	qp->rq_cnt = in->rq_wqe_cnt;
	qp->sq_stride_log = (uint8_t)in->sq_stride_log;
	qp->rq_stride_log = (uint8_t)in->rq_stride_log;
	qp->sq_sig_all = in->sq_sig_all != 0;
	qp->max_send_sge = in->max_send_sge;
	qp->max_recv_sge = in->max_recv_sge;
	qp->max_inline = in->max_inline;
	qp->type = (uint8_t)in->qp_type;
	qp->state = SNIC_QPS_RESET;
}

struct snic_qp *qp_claim(struct snic_nic *nic, unsigned ctx,
			 const struct snic_cmd_create_qp *in, int srq)
{
	uint32_t i = qp_free_slot(nic, qp_want_core(nic, in->qp_type, srq));

	if (i == SNIC_MAX_QP)
		return NULL;
	struct snic_qp *qp = &nic->qps[i];
	/* A destroyed QP may still sit on a work list (lists skip unused
	 * QPs): keep its flags so the index is never queued twice. */
	bool on_req = qp->on_req_list, on_resp = qp->on_resp_list;

	obj_claim(qp, sizeof(*qp), ctx);
	if (i >= nic->sh->qp_hw)
		nic->sh->qp_hw = i + 1;
	qp->on_req_list = on_req;
	qp->on_resp_list = on_resp;
	qp->qpn = obj_handle(&qp->obj, i);
	qp->core = (uint8_t)qp_slot_core(nic, i);
	qp_set_queues(qp, in);
	qp_slot_take(nic, i, ctx); /* after its type is set */
	ring_prepare(nic, in->sq_pa, in->sq_wqe_cnt, in->sq_stride_log);
	ring_prepare(nic, in->rq_pa, in->rq_wqe_cnt, in->rq_stride_log);
	/* A per-QP UDP source port spreads flows (A17.3.3 leaves it free);
	 * >= 0xC000 so dissectors do not take it for a well-known service. */
	qp->sport = (uint16_t)(0xc000 | (qp->qpn & 0x3fff));
	return qp;
}

int qp_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_qp *in, int srq, uint32_t *qpn)
{
	uint32_t pd, scq, rcq;
	int st = qp_create_args_ok(nic, ctx, in);

	if (st)
		return st;
	if (!pd_lookup(nic, ctx, in->pdn, &pd) ||
	    !cq_lookup(nic, ctx, in->send_cqn, &scq) ||
	    !cq_lookup(nic, ctx, in->recv_cqn, &rcq))
		return SNIC_ST_NOENT;
	struct snic_qp *qp = qp_claim(nic, ctx, in, srq);

	if (!qp)
		return SNIC_ST_NOMEM;
	qp->pd = pd;
	qp->scq = scq;
	qp->rcq = rcq;
	nic->pds[pd].refs++;
	nic->cqs[scq].refs++;
	nic->cqs[rcq].refs++;
	*qpn = qp->qpn;
	return SNIC_ST_OK;
}

static void qp_release_srq(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->has_srq)
		return;
	nic->srqs[qp->srq].refs--;
	qp->has_srq = false;
}

static void qp_release(struct snic_nic *nic, struct snic_qp *qp)
{
	qp_timer_stop(nic, qp); /* its wheel links die with it */
	qp_conn_give(nic, qp);
	/* a connected RC QP lingers: see resp_linger_rx */
	qp->linger_until = qp->state >= SNIC_QPS_RTR && qp->state <= SNIC_QPS_SQE
			   ? nic->core.now + SNIC_LINGER_NS : 0;
	if (qp->type == SNIC_QPT_XRC_RECV) {
		xrc_recv_qp_release(nic, qp); /* holds its domain only */
	} else {
		qp_release_srq(nic, qp);
		nic->pds[qp->pd].refs--;
		nic->cqs[qp->scq].refs--;
		nic->cqs[qp->rcq].refs--;
	}
	qp->in_use = false;
	qp_slot_put(nic, (uint32_t)(qp - nic->qps), qp->ctx);
	qp->state = SNIC_QPS_RESET;
	while (nic->sh->qp_hw > 0 && !nic->qps[nic->sh->qp_hw - 1].in_use)
		nic->sh->qp_hw--;
}

int qp_destroy(struct snic_nic *nic, unsigned ctx, uint32_t qpn)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, qpn);

	if (!qp)
		return SNIC_ST_NOENT;
	mcast_qp_gone(nic, qpn);
	flow_qp_gone(nic, qpn);
	/* The work lists skip QPs that are no longer in use. */
	qp_release(nic, qp);
	return SNIC_ST_OK;
}

int qp_create_ext(struct snic_nic *nic, unsigned ctx,
		  const struct snic_cmd_create_qp_ext *in, uint32_t *qpn)
{
	struct snic_srq *s = NULL;
	uint32_t si = 0;
	int st;

	if (in->flags & ~SNIC_QP_F_SRQ)
		return SNIC_ST_INVAL;
	if (in->qp.qp_type == SNIC_QPT_XRC_RECV)
		return (in->flags & SNIC_QP_F_SRQ) ? SNIC_ST_INVAL
			: xrc_recv_qp_create(nic, ctx, in, qpn);
	if ((in->flags & SNIC_QP_F_SRQ) && in->qp.qp_type == SNIC_QPT_XRC_SEND)
		return SNIC_ST_INVAL; /* an initiator receives nothing */
	if (in->flags & SNIC_QP_F_SRQ) {
		uint32_t pd;

		s = srq_lookup(nic, ctx, in->srqn, &si);
		if (!s || !pd_lookup(nic, ctx, in->qp.pdn, &pd))
			return SNIC_ST_NOENT;
		if (pd != s->pd || s->xrc)
			return SNIC_ST_INVAL; /* an SRQ serves QPs of its PD;
					       * an XRC SRQ only XRC targets */
	}
	st = qp_create(nic, ctx, &in->qp, s ? (int)si : -1, qpn);
	if (st || !s)
		return st;
	struct snic_qp *qp = qp_by_qpn(nic, *qpn);

	qp->has_srq = true;
	qp->srq = (uint16_t)si;
	s->refs++;
	return SNIC_ST_OK;
}

int qp_query(struct snic_nic *nic, unsigned ctx, uint32_t qpn,
	     struct snic_qp_attr *out)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, qpn);

	if (!qp)
		return SNIC_ST_NOENT;
	*out = qp->attr;
	out->qp_state = qp->state;
	out->cur_qp_state = qp->state;
	out->sq_draining = 0;
	out->sq_psn = qp->state >= SNIC_QPS_RTS ? qp->npsn : qp->attr.sq_psn;
	out->max_send_wr = qp->sq_cnt;
	out->max_recv_wr = qp->rq_cnt;
	out->max_send_sge = qp->max_send_sge;
	out->max_recv_sge = qp->max_recv_sge;
	out->max_inline_data = qp->max_inline;
	return SNIC_ST_OK;
}

