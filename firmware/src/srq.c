/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues (IBTA 10.2.9): a ring of receive WQEs in host
 * memory that several QPs of one PD take from, in order.  The firmware is
 * the only consumer; it reads the host's producer index from the doorbell
 * record only when its cached copy runs out, so an SRQ costs nothing while
 * idle.  The limit event (IBTA 10.2.9.6, IBV_EVENT_SRQ_LIMIT_REACHED) fires
 * once per arming, when the WQEs left drop below the armed limit.
 *
 * Also here: the RECV take shared by every transport (SRQ or the QP's own
 * RQ), and CREATE_QP's SRQ binding.
 */
#include <string.h>

#include "nic.h"

#define SRQ_IDX_BITS 10
_Static_assert((1u << SRQ_IDX_BITS) == SNIC_MAX_SRQ, "SRQ index bits");

static uint32_t srqn_of(const struct snic_srq *s, uint32_t idx)
{
	return ((uint32_t)s->gen << SRQ_IDX_BITS) | idx;
}

struct snic_srq *srq_lookup(struct snic_nic *nic, unsigned ctx, uint32_t srqn,
			    uint32_t *idx)
{
	uint32_t i = srqn & (SNIC_MAX_SRQ - 1);
	struct snic_srq *s = &nic->srqs[i];

	if (!s->in_use || s->ctx != ctx || srqn_of(s, i) != srqn)
		return NULL;
	if (idx)
		*idx = i;
	return s;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int srq_create(struct snic_nic *nic, unsigned ctx,
	       const struct snic_cmd_create_srq *in, uint32_t *srqn)
{
	uint64_t len;
	uint32_t pd, i;

	if (!pow2(in->wqe_cnt) || in->wqe_cnt > SNIC_MAX_SRQ_WR ||
	    in->max_sge > SNIC_MAX_SGE || in->stride_log < 5 ||
	    in->stride_log > 12 || (1u << in->stride_log) < 16 + 16 * in->max_sge ||
	    in->srq_limit >= in->wqe_cnt)
		return SNIC_ST_INVAL;
	len = (uint64_t)in->wqe_cnt << in->stride_log;
	if ((in->ring_pa & 63) || (in->dbrec_pa & 63) ||
	    in->ring_pa + len < in->ring_pa ||
	    in->ring_pa + len > nic->cfg.host_mem_size ||
	    in->dbrec_pa + 64 > nic->cfg.host_mem_size)
		return SNIC_ST_FAULT;
	if (!pd_lookup(nic, ctx, in->pdn, &pd))
		return SNIC_ST_NOENT;
	for (i = 0; i < SNIC_MAX_SRQ && nic->srqs[i].in_use; i++)
		;
	if (i == SNIC_MAX_SRQ)
		return SNIC_ST_NOMEM;
	struct snic_srq *s = &nic->srqs[i];
	uint16_t gen = (uint16_t)((s->gen + 1) & 0x3fff);

	memset(s, 0, sizeof(*s));
	s->in_use = true;
	s->ctx = (uint8_t)ctx;
	s->gen = gen;
	s->pd = pd;
	s->cnt = in->wqe_cnt;
	s->stride_log = (uint8_t)in->stride_log;
	s->max_sge = in->max_sge;
	s->limit = in->srq_limit;
	s->ring_pa = in->ring_pa;
	s->dbrec_pa = in->dbrec_pa;
	nic->pds[pd].refs++;
	*srqn = srqn_of(s, i);
	return SNIC_ST_OK;
}

int srq_modify(struct snic_nic *nic, unsigned ctx,
	       const struct snic_cmd_modify_srq *in)
{
	struct snic_srq *s = srq_lookup(nic, ctx, in->srqn, NULL);

	if (!s)
		return SNIC_ST_NOENT;
	if (in->attr_mask & ~(SNIC_SRQ_MAX_WR | SNIC_SRQ_LIMIT))
		return SNIC_ST_INVAL;
	if (in->attr_mask & SNIC_SRQ_MAX_WR)
		return SNIC_ST_NOTSUP; /* resizing (IBV_SRQ_RESIZE) */
	if ((in->attr_mask & SNIC_SRQ_LIMIT) && in->srq_limit >= s->cnt)
		return SNIC_ST_INVAL;
	if (in->attr_mask & SNIC_SRQ_LIMIT)
		s->limit = in->srq_limit;
	return SNIC_ST_OK;
}

int srq_query(struct snic_nic *nic, unsigned ctx, uint32_t srqn,
	      struct snic_srq_attr *out)
{
	struct snic_srq *s = srq_lookup(nic, ctx, srqn, NULL);

	if (!s)
		return SNIC_ST_NOENT;
	memset(out, 0, sizeof(*out));
	out->max_wr = s->cnt;
	out->max_sge = s->max_sge;
	out->srq_limit = s->limit;
	return SNIC_ST_OK;
}

int srq_destroy(struct snic_nic *nic, unsigned ctx, uint32_t srqn)
{
	struct snic_srq *s = srq_lookup(nic, ctx, srqn, NULL);

	if (!s)
		return SNIC_ST_NOENT;
	if (s->refs)
		return SNIC_ST_BUSY; /* QPs still take from it */
	nic->pds[s->pd].refs--;
	s->in_use = false;
	return SNIC_ST_OK;
}

/* ---------------------------------------------------------------------- */
/* QP binding.                                                             */

int qp_create_ext(struct snic_nic *nic, unsigned ctx,
		  const struct snic_cmd_create_qp_ext *in, uint32_t *qpn)
{
	struct snic_srq *s = NULL;
	uint32_t si = 0;
	int st;

	if (in->flags & ~SNIC_QP_F_SRQ)
		return SNIC_ST_INVAL;
	if (in->flags & SNIC_QP_F_SRQ) {
		uint32_t pd;

		s = srq_lookup(nic, ctx, in->srqn, &si);
		if (!s || !pd_lookup(nic, ctx, in->qp.pdn, &pd))
			return SNIC_ST_NOENT;
		if (pd != s->pd)
			return SNIC_ST_INVAL; /* an SRQ serves QPs of its PD */
	}
	st = qp_create(nic, ctx, &in->qp, qpn);
	if (st || !s)
		return st;
	struct snic_qp *qp = qp_by_qpn(nic, *qpn);

	qp->has_srq = true;
	qp->srq = (uint16_t)si;
	s->refs++;
	return SNIC_ST_OK;
}

void qp_release_srq(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->has_srq)
		return;
	nic->srqs[qp->srq].refs--;
	qp->has_srq = false;
}

/* ---------------------------------------------------------------------- */
/* Taking receive WQEs.                                                    */

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
	if (nic_dma_read(nic, pa, &w.hdr, sizeof(w.hdr)) ||
	    w.hdr.num_sge > max_sge ||
	    (w.hdr.num_sge && nic_dma_read(nic, pa + sizeof(w.hdr), w.sge,
					   w.hdr.num_sge * 16u))) {
		w.hdr.num_sge = 0;
		*st = SNIC_WC_LOC_QP_OP_ERR;
	}
	r->recv_wr_id = w.hdr.wr_id;
	r->recv_len = 0;
	r->in_send = true;
	CNT_INC(nic, recv_wqes);
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

		if (nic_dma_read(nic, s->dbrec_pa, &pi, sizeof(pi)))
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

		if (nic_dma_read(nic, s->dbrec_pa, &pi, sizeof(pi)) == 0 &&
		    pi - s->ci <= s->cnt)
			s->pi = pi;
		if (s->pi - s->ci < s->limit) {
			s->limit = 0;
			nic_event(nic, s->ctx, SNIC_EVENT_SRQ_LIMIT,
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

/* The QP's RQ is the SRQ's: only a RECV it already took (a message half
 * received) completes with a flush error; the rest stay for other QPs. */
void srq_flush_qp(struct snic_nic *nic, struct snic_qp *qp)
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
