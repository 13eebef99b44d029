/* SPDX-License-Identifier: MIT */
/* Protection domains: the unit of isolation for MRs and QPs (IBTA 10.2.3). */
#include "objects/objects.h"

/* PDN = generation << 10 | index: a stale PDN is refused after reuse. */
_Static_assert(SNIC_MAX_PD <= (1u << SNIC_HANDLE_IDX_BITS), "PD handles"); /* obj_lookup bounds the index */

struct snic_pd *pd_lookup(struct snic_nic *nic, unsigned ctx, uint32_t pdn,
			  uint32_t *idx)
{
	return OBJ_LOOKUP(nic->pds, ctx, pdn, idx);
}

int pd_alloc(struct snic_nic *nic, unsigned ctx, uint32_t *pdn)
{
	uint32_t i = OBJ_FREE_SLOT(nic->pds);

	if (i == SNIC_MAX_PD)
		return SNIC_ST_NOMEM;
	obj_claim(&nic->pds[i], sizeof(nic->pds[i]), ctx);
	*pdn = obj_handle(&nic->pds[i].obj, i);
	return SNIC_ST_OK;
}

int pd_dealloc(struct snic_nic *nic, unsigned ctx, uint32_t pdn)
{
	struct snic_pd *pd = pd_lookup(nic, ctx, pdn, NULL);

	return obj_release(pd ? &pd->obj : NULL);
}
