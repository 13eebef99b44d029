/* SPDX-License-Identifier: MIT */
/* Protection domains: the unit of isolation for MRs and QPs (IBTA 10.2.3). */
#include "objects/objects.h"

/* PDN = generation << 10 | index: a stale PDN is refused after reuse. */
_Static_assert((1u << SNIC_HANDLE_IDX_BITS) == SNIC_MAX_PD, "PD handles");

static uint32_t pdn_of(const struct snic_pd *pd, uint32_t idx)
{
	return handle_make(pd->gen, idx);
}

struct snic_pd *pd_lookup(struct snic_nic *nic, unsigned ctx, uint32_t pdn,
			  uint32_t *idx)
{
	uint32_t i = handle_idx(pdn);
	struct snic_pd *pd = &nic->pds[i];

	if (!pd->in_use || pd->ctx != ctx || pdn_of(pd, i) != pdn)
		return NULL;
	if (idx)
		*idx = i;
	return pd;
}

int pd_alloc(struct snic_nic *nic, unsigned ctx, uint32_t *pdn)
{
	for (uint32_t i = 0; i < SNIC_MAX_PD; i++) {
		struct snic_pd *pd = &nic->pds[i];

		if (pd->in_use)
			continue;
		pd->in_use = true;
		pd->ctx = (uint8_t)ctx;
		pd->gen = handle_next_gen(pd->gen);
		pd->refs = 0;
		*pdn = pdn_of(pd, i);
		return SNIC_ST_OK;
	}
	return SNIC_ST_NOMEM;
}

int pd_dealloc(struct snic_nic *nic, unsigned ctx, uint32_t pdn)
{
	struct snic_pd *pd = pd_lookup(nic, ctx, pdn, NULL);

	if (!pd)
		return SNIC_ST_NOENT;
	if (pd->refs)
		return SNIC_ST_BUSY; /* ibv_dealloc_pd: EBUSY while in use */
	pd->in_use = false;
	return SNIC_ST_OK;
}
