/* SPDX-License-Identifier: MIT */
/*
 * MR-table slots (MRs and memory windows share them): which are free, and
 * what each context holds, kept up to date as slots are taken and given
 * back instead of found by walking all SNIC_MAX_MR slots at every REG_MR
 * (the lowest free slot, and the context's MRs and MTT entries for its
 * quota, objects/quota.c: issue 11, commands next to many objects).
 * The slot chosen is the one the walk chose, the lowest free: keys stay
 * unpredictable through each slot's random first generation (mr.c
 * mr_init), not through the choice of slot.
 */
#include <string.h>

#include "objects/objects.h"

#define WORDS (SNIC_MAX_MR / 64)
_Static_assert(SNIC_MAX_MR % 64 == 0 && WORDS <= 64, "two-level MR slot bitmap");

void mr_slots_init(struct snic_nic *nic)
{
	struct snic_nic_shared *sh = nic->sh;

	for (uint32_t w = 0; w < WORDS; w++)
		sh->mr_free_bits[w] = ~0ull;
	sh->mr_free_sum = WORDS == 64 ? ~0ull : (1ull << (WORDS % 64)) - 1;
	memset(sh->ctx_mrs, 0, sizeof(sh->ctx_mrs));
	memset(sh->ctx_mtt, 0, sizeof(sh->ctx_mtt));
}

uint32_t mr_free_slot(const struct snic_nic *nic)
{
	uint64_t sum = nic->sh->mr_free_sum;
	uint32_t w;

	if (!sum)
		return SNIC_MAX_MR;
	w = (uint32_t)__builtin_ctzll(sum);
	return w * 64 + (uint32_t)__builtin_ctzll(nic->sh->mr_free_bits[w]);
}

void mr_slot_take(struct snic_nic *nic, uint32_t i, unsigned ctx,
		  uint32_t npages)
{
	struct snic_nic_shared *sh = nic->sh;
	uint64_t *word = &sh->mr_free_bits[i / 64];

	*word &= ~(1ull << (i % 64));
	if (!*word)
		sh->mr_free_sum &= ~(1ull << (i / 64));
	sh->ctx_mrs[ctx]++;
	sh->ctx_mtt[ctx] += npages;
}

void mr_slot_put(struct snic_nic *nic, uint32_t i, unsigned ctx,
		 uint32_t npages)
{
	struct snic_nic_shared *sh = nic->sh;

	sh->mr_free_bits[i / 64] |= 1ull << (i % 64);
	sh->mr_free_sum |= 1ull << (i / 64);
	sh->ctx_mrs[ctx]--;
	sh->ctx_mtt[ctx] -= npages;
}

void mr_slot_resize(struct snic_nic *nic, unsigned ctx, uint32_t old_npages,
		    uint32_t new_npages)
{
	nic->sh->ctx_mtt[ctx] += new_npages - old_npages;
}
