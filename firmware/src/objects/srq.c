/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues (IBTA 10.2.9): a ring of receive WQEs in host
 * memory that several QPs of one PD take from, in order.  The firmware is
 * the only consumer; it reads the host's producer index from the doorbell
 * record only when its cached copy runs out, so an SRQ costs nothing while
 * idle.  The limit event (IBTA 10.2.9.6, IBV_EVENT_SRQ_LIMIT_REACHED) fires
 * once per arming, when the WQEs left drop below the armed limit.
 * The RECV take is transport/recv.c; CREATE_QP's SRQ binding is qp.c.
 */
#include <string.h>

#include "objects/objects.h"

_Static_assert(SNIC_MAX_SRQ <= (1u << SNIC_HANDLE_IDX_BITS), "SRQ handles"); /* obj_lookup bounds the index */

struct snic_srq *srq_lookup(struct snic_nic *nic, unsigned ctx, uint32_t srqn,
			    uint32_t *idx)
{
	return OBJ_LOOKUP(nic->srqs, ctx, srqn, idx);
}

int srq_create(struct snic_nic *nic, unsigned ctx,
	       const struct snic_cmd_create_srq *in, uint32_t *srqn)
{
	uint64_t len;
	uint32_t pd, i;

	if (!is_pow2(in->wqe_cnt) || in->wqe_cnt > SNIC_MAX_SRQ_WR ||
	    in->max_sge > SNIC_MAX_SGE || in->stride_log < 5 ||
	    in->stride_log > 12 || (1u << in->stride_log) < 16 + 16 * in->max_sge ||
	    in->srq_limit >= in->wqe_cnt || (in->flags & ~SNIC_SRQ_F_XRC))
		return SNIC_ST_INVAL;
	len = (uint64_t)in->wqe_cnt << in->stride_log;
	if ((in->ring_pa & 63) || (in->dbrec_pa & 63) ||
	    !core_ctx_range_ok(&nic->core, ctx, in->ring_pa, len) ||
	    !core_ctx_range_ok(&nic->core, ctx, in->dbrec_pa, 64))
		return SNIC_ST_FAULT;
	if (!pd_lookup(nic, ctx, in->pdn, &pd))
		return SNIC_ST_NOENT;
	i = OBJ_FREE_SLOT(nic->srqs);
	if (i == SNIC_MAX_SRQ)
		return SNIC_ST_NOMEM;
	struct snic_srq *s = &nic->srqs[i];

	obj_claim(s, sizeof(*s), ctx);
	if (in->flags & SNIC_SRQ_F_XRC) {
		int st = xrc_srq_bind(nic, ctx, s, in);

		if (st) {
			s->in_use = false;
			return st;
		}
	}
	s->pd = pd;
	s->cnt = in->wqe_cnt;
	s->stride_log = (uint8_t)in->stride_log;
	s->max_sge = in->max_sge;
	s->limit = in->srq_limit;
	s->ring_pa = in->ring_pa;
	s->dbrec_pa = in->dbrec_pa;
	ring_prepare(nic, in->ring_pa, in->wqe_cnt, in->stride_log);
	nic->pds[pd].refs++;
	*srqn = obj_handle(&s->obj, i);
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
	int st = obj_release(s ? &s->obj : NULL);

	if (st == SNIC_ST_OK) {
		nic->pds[s->pd].refs--;
		if (s->xrc)
			xrc_srq_release(nic, (uint32_t)(s - nic->srqs));
	}
	return st;
}

