/* SPDX-License-Identifier: MIT */
/*
 * Per-context quotas (hostif.h SNIC_CTX_MAX_*): a context may not hold
 * more than its share of a pool, so one process cannot starve the others.
 * The small pools (PD, CQ, SRQ, XRCD: 1,024 slots at most) are counted
 * by scanning the pool when an object is created, where no counter can
 * drift from the pool; MRs, MTT entries, QPs and connection sets are
 * counted where their slots are taken and given back (mr_slots.c,
 * qp_slots.c, qp_conn.c), so REG_MR, CREATE_QP and MODIFY_QP do not walk
 * 4,096 or 16,384 slots (issue 11).
 */
#include "objects/objects.h"

static uint32_t owned(const void *pool, size_t size, uint32_t n, unsigned ctx)
{
	uint32_t c = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct snic_obj *o = (const void *)((uintptr_t)pool + i * size);

		c += o->in_use && o->ctx == ctx;
	}
	return c;
}

#define OWNED(nic, pool, n, ctx) owned((nic)->pool, sizeof((nic)->pool[0]), n, ctx)
/* NOMEM when ctx already owns quota objects of the pool, else OK. */
#define AT_QUOTA(nic, pool, n, ctx, quota) \
	(OWNED(nic, pool, n, ctx) >= (quota) ? SNIC_ST_NOMEM : SNIC_ST_OK)

/* MR slots and MTT entries of ctx: both limited (counted as slots are
 * taken and given back, objects/mr_slots.c). */
static int mr_quota(const struct snic_nic *nic, unsigned ctx, uint32_t npages)
{
	return nic->sh->ctx_mrs[ctx] >= SNIC_CTX_MAX_MR ||
	       (uint64_t)nic->sh->ctx_mtt[ctx] + npages > SNIC_CTX_MAX_MTT
	       ? SNIC_ST_NOMEM : SNIC_ST_OK;
}

/* OK when ctx may create one more object of command op's kind (in: the
 * command's input, for REG_MR's page count); NOMEM at its quota. */
int quota_check(const struct snic_nic *nic, unsigned ctx, uint16_t op,
		const void *in)
{
	switch (op) {
	case SNIC_CMD_ALLOC_PD:
		return AT_QUOTA(nic, pds, SNIC_MAX_PD, ctx, SNIC_CTX_MAX_PD);
	case SNIC_CMD_REG_MR:
		return mr_quota(nic, ctx, ((const struct snic_cmd_reg_mr *)in)->npages);
	case SNIC_CMD_ALLOC_MW: /* a window takes an MR slot */
		return mr_quota(nic, ctx, 0);
	case SNIC_CMD_CREATE_CQ:
		return AT_QUOTA(nic, cqs, SNIC_MAX_CQ, ctx, SNIC_CTX_MAX_CQ);
	case SNIC_CMD_CREATE_QP: /* counted as slots change (qp_slots.c) */
		return nic->sh->ctx_qps[ctx] >= SNIC_CTX_MAX_QP ? SNIC_ST_NOMEM
								: SNIC_ST_OK;
	case SNIC_CMD_CREATE_SRQ:
		return AT_QUOTA(nic, srqs, SNIC_MAX_SRQ, ctx, SNIC_CTX_MAX_SRQ);
	case SNIC_CMD_OPEN_XRCD:
		return AT_QUOTA(nic, xrcds, SNIC_MAX_XRCD, ctx, SNIC_CTX_MAX_XRCD);
	default:
		return SNIC_ST_OK;
	}
}

/* OK when ctx's MTT share allows one of its MRs to go from old_npages
 * to new_npages of translation (REREG_MR; the MR's own pages are given
 * back first), NOMEM past SNIC_CTX_MAX_MTT. */
int quota_mtt_resize(const struct snic_nic *nic, unsigned ctx,
		     uint32_t old_npages, uint32_t new_npages)
{
	return (uint64_t)nic->sh->ctx_mtt[ctx] - old_npages + new_npages >
	       SNIC_CTX_MAX_MTT ? SNIC_ST_NOMEM : SNIC_ST_OK;
}

/* OK when ctx may hold one more MR of npages (REG_DM_MR, whose page
 * count quota_check cannot read before the DM is looked up). */
int quota_mr(const struct snic_nic *nic, unsigned ctx, uint32_t npages)
{
	return mr_quota(nic, ctx, npages);
}

/* OK when ctx may take one more connection set (a QP leaving RESET,
 * qp_conn.c); NOMEM at SNIC_CTX_MAX_QP_CONN. */
int quota_qp_conn(const struct snic_nic *nic, unsigned ctx)
{
	return nic->sh->ctx_conns[ctx] >= SNIC_CTX_MAX_QP_CONN ? SNIC_ST_NOMEM
								: SNIC_ST_OK;
}
