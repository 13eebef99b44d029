/* SPDX-License-Identifier: MIT */
/*
 * Device memory (ibv_alloc_dm): SNIC_DM_SIZE bytes of the card's own
 * memory, the DM area of the BAR, handed out in 4 KiB pages.  The host
 * reads and writes its DMs through its BAR mapping (ibv_memcpy_to_dm);
 * the NIC reaches them through MRs (REG_DM_MR) whose translation entries
 * carry SNIC_MTT_DM: core/dma.c serves those addresses from the DM area
 * instead of host memory.  A DM is zeroed when handed out, so nothing of
 * a previous owner is ever seen.
 */
#include <string.h>

#include "objects/objects.h"

#define DM_PAGES (SNIC_DM_SIZE / SNIC_PAGE_SIZE)

_Static_assert(DM_PAGES <= 32, "dm_used is a 32-bit page bitmap");

static uint32_t run_mask(uint32_t first, uint32_t n)
{
	return (n >= 32 ? ~0u : ((1u << n) - 1)) << first;
}

/* First free run of n pages starting at a multiple of align pages. */
static int dm_find(const struct snic_nic *nic, uint32_t n, uint32_t align,
		   uint32_t *first)
{
	for (uint32_t f = 0; f + n <= DM_PAGES; f += align)
		if (!(nic->sh->dm_used & run_mask(f, n))) {
			*first = f;
			return 0;
		}
	return -1;
}

int dm_alloc(struct snic_nic *nic, unsigned ctx,
	     const struct snic_cmd_alloc_dm *in,
	     struct snic_cmd_alloc_dm_out *out)
{
	uint32_t n, align, first, i;

	if (in->length == 0 || in->length > SNIC_DM_SIZE || in->log_align > 31)
		return SNIC_ST_INVAL;
	n = (uint32_t)((in->length + SNIC_PAGE_SIZE - 1) >> SNIC_PAGE_SHIFT);
	align = in->log_align <= SNIC_PAGE_SHIFT
		? 1 : 1u << (in->log_align - SNIC_PAGE_SHIFT);
	if (align > DM_PAGES)
		return SNIC_ST_INVAL;
	i = OBJ_FREE_SLOT(nic->dms);
	if (i == SNIC_MAX_DM || dm_find(nic, n, align, &first))
		return SNIC_ST_NOMEM;
	struct snic_dm *dm = &nic->dms[i];

	obj_claim(dm, sizeof(*dm), ctx);
	dm->first = first;
	dm->npages = n;
	nic->sh->dm_used |= run_mask(first, n);
	memset(nic->core.bar + SNIC_BAR_DM_OFF + (size_t)first * SNIC_PAGE_SIZE,
	       0, (size_t)n * SNIC_PAGE_SIZE);
	out->handle = obj_handle(&dm->obj, i);
	out->offset = first * SNIC_PAGE_SIZE;
	return SNIC_ST_OK;
}

int dm_free(struct snic_nic *nic, unsigned ctx, uint32_t handle)
{
	struct snic_dm *dm = OBJ_LOOKUP(nic->dms, ctx, handle, NULL);
	int st = obj_release(dm ? &dm->obj : NULL);

	if (st != SNIC_ST_OK)
		return st;
	/* a broker's context may still map these pages: the board cuts that
	 * mapping before they are handed out again (nic/grant.c) */
	if (nic->core.ctx_granted[ctx] && nic->core.cfg.board_maps_dm)
		nic->sh->dm_held |= run_mask(dm->first, dm->npages);
	else
		nic->sh->dm_used &= ~run_mask(dm->first, dm->npages);
	return st;
}

/* A zero-based MR over [offset, offset + length) of the DM: iova is the
 * offset, the translation the DM's pages. */
int dm_reg_mr(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_reg_dm_mr *in, uint32_t *key)
{
	struct snic_dm *dm = OBJ_LOOKUP(nic->dms, ctx, in->dm, NULL);
	uint64_t size;
	uint32_t pd_idx, first = 0, i;
	struct snic_cmd_reg_mr r;
	int st;

	if (!dm || !pd_lookup(nic, ctx, in->pdn, &pd_idx))
		return SNIC_ST_NOENT;
	size = (uint64_t)dm->npages * SNIC_PAGE_SIZE;
	if (in->length == 0 || in->offset > size || in->length > size - in->offset)
		return SNIC_ST_INVAL;
	memset(&r, 0, sizeof(r));
	r.access = in->access;
	r.iova = in->offset;
	r.length = in->length;
	r.npages = (uint32_t)(((in->offset & (SNIC_PAGE_SIZE - 1)) + in->length +
			       SNIC_PAGE_SIZE - 1) >> SNIC_PAGE_SHIFT);
	st = mr_reg_args_ok(nic, &r);
	if (!st)
		st = quota_mr(nic, ctx, r.npages); /* an MR slot and MTT share */
	if (st)
		return st;
	i = mr_free_slot(nic);
	if (i == SNIC_MAX_MR || mtt_alloc(nic, r.npages, &first))
		return SNIC_ST_NOMEM;
	for (uint32_t p = 0; p < r.npages; p++)
		nic->mtt[first + p] = SNIC_MTT_DM |
			(dm->first + (uint32_t)(in->offset >> SNIC_PAGE_SHIFT) + p);
	dm->refs++;
	*key = mr_install(nic, ctx, i, pd_idx, &r, first);
	return SNIC_ST_OK;
}

/* An MR goes away: if it was on a DM, that DM has one user less. */
void dm_mr_gone(struct snic_nic *nic, const struct snic_mr *mr)
{
	uint32_t page;

	if (!mr->npages || !(nic->mtt[mr->mtt] & SNIC_MTT_DM))
		return;
	page = nic->mtt[mr->mtt] & ~SNIC_MTT_DM;
	for (uint32_t i = 0; i < SNIC_MAX_DM; i++) {
		struct snic_dm *dm = &nic->dms[i];

		if (dm->in_use && page >= dm->first && page < dm->first + dm->npages) {
			dm->refs--;
			return;
		}
	}
}
