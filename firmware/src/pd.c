/* SPDX-License-Identifier: MIT */
/* Protection domains: the unit of isolation for MRs and QPs (IBTA 10.2.3). */
#include "nic.h"

/* PDN = generation << 10 | index: a stale PDN is refused after reuse. */
#define PD_IDX_BITS 10
_Static_assert((1u << PD_IDX_BITS) == SNIC_MAX_PD, "PD index bits");

static uint32_t pdn_of(const struct snic_pd *pd, uint32_t idx)
{
	return ((uint32_t)pd->gen << PD_IDX_BITS) | idx;
}

struct snic_pd *pd_lookup(struct snic_nic *nic, unsigned ctx, uint32_t pdn,
			  uint32_t *idx)
{
	uint32_t i = pdn & (SNIC_MAX_PD - 1);
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
		pd->gen = (uint16_t)((pd->gen + 1) & 0x3fff);
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
