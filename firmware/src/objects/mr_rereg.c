/* SPDX-License-Identifier: MIT */
/*
 * Re-registration of a memory region (ibv_rereg_mr; IBTA 11.2.8.5,
 * "Reregister Memory Region"): a new translation, PD or access for an MR
 * that keeps its key.  All of the new state is checked, and a new page
 * list loaded into a fresh MTT extent, before anything of the MR changes,
 * so a refused re-registration leaves the MR as it was.  Commands run
 * between poll passes: the next access through the key sees the new MR.
 */
#include "objects/objects.h"

#define REREG_KNOWN (SNIC_REREG_TRANSLATION | SNIC_REREG_PD | SNIC_REREG_ACCESS)

/* The registration the MR will have: the fields `flags` names from the
 * command, the others from the MR as it is. */
static void rereg_target(const struct snic_mr *mr,
			 const struct snic_cmd_rereg_mr *in,
			 struct snic_cmd_reg_mr *r)
{
	*r = in->reg;
	if (!(in->flags & SNIC_REREG_ACCESS))
		r->access = mr->access;
	if (!(in->flags & SNIC_REREG_TRANSLATION)) {
		r->iova = mr->iova;
		r->length = mr->length;
		r->npages = mr->npages;
	}
}

int mr_rereg(struct snic_nic *nic, unsigned ctx,
	     const struct snic_cmd_rereg_mr *in)
{
	struct snic_mr *mr = mr_of_key(nic, ctx, in->key);
	struct snic_cmd_reg_mr r;
	uint32_t pd_idx, first = 0;
	int st;

	if (!mr || mr->dying) /* being deregistered: not ours to change */
		return SNIC_ST_NOENT;
	/* bound windows lend its bytes under the rights they were bound
	 * with: they go first, as for deregistration (EBUSY) */
	if (mr->mw_binds)
		return SNIC_ST_BUSY;
	/* a device-memory MR keeps its DM (rdma-core refuses it too) */
	if (!in->flags || (in->flags & ~REREG_KNOWN) ||
	    (mr->npages && (nic->mtt[mr->mtt] & SNIC_MTT_DM)))
		return SNIC_ST_INVAL;
	pd_idx = mr->pd;
	if ((in->flags & SNIC_REREG_PD) && !pd_lookup(nic, ctx, in->reg.pdn, &pd_idx))
		return SNIC_ST_NOENT;
	rereg_target(mr, in, &r);
	st = mr_reg_args_ok(nic, &r);
	if (st)
		return st;
	if (in->flags & SNIC_REREG_TRANSLATION) {
		/* held to the context's MTT share as REG_MR is (issue 10) */
		if (quota_mtt_resize(nic, ctx, mr->npages, r.npages))
			return SNIC_ST_NOMEM;
		if (r.npages && mtt_alloc(nic, r.npages, &first))
			return SNIC_ST_NOMEM;
		st = mr_load_pages(nic, ctx, &r, first);
		if (st) {
			mtt_free(nic, first, r.npages);
			return st;
		}
		mtt_free(nic, mr->mtt, mr->npages);
		mr_slot_resize(nic, ctx, mr->npages, r.npages);
		mr->mtt = first;
		mr->npages = r.npages;
		mr->iova = r.iova;
		mr->length = r.length;
		mr->page_off = (uint32_t)(r.iova & (SNIC_PAGE_SIZE - 1));
	}
	nic->pds[mr->pd].refs--;
	nic->pds[pd_idx].refs++;
	mr->pd = pd_idx;
	mr->access = r.access;
	mr_changed(nic);
	return SNIC_ST_OK;
}
