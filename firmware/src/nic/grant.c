/* SPDX-License-Identifier: MIT */
/*
 * Contexts the board opens for a host process it vouches for (the emu's
 * broker: identity from the kernel, death = its socket closed), with the
 * pages of host memory that are that context's alone.  The page owner
 * table (core.h seg_first/seg_npages) is written here and nowhere else;
 * every page list, ring and CQ a command names is checked against it
 * (core_ctx_range_ok), so one context cannot register, or point a ring
 * at, another's pages.  What an IOMMU does for a real RNIC.
 *
 * Device memory: the board maps a DM page into a context's process only
 * when that context holds it (snic_nic_dm_owner); pages such a context
 * frees stay taken (dm_held, when the board says it maps DM pages:
 * cfg.board_maps_dm) until the board has cut the old mapping and gives
 * them back (snic_nic_dm_release).
 */
#include "nic/top.h"

int snic_nic_ctx_grant(struct snic_nic *nic, unsigned slot, uint32_t pid,
		       uint32_t first_page, uint32_t npages)
{
	struct snic_core *c = &nic->core;
	uint64_t lo = c->cfg.host_mem_size >> SNIC_PAGE_SHIFT;
	uint64_t hi = core_window_size(c) >> SNIC_PAGE_SHIFT;
	struct snic_ctx_slot *s;

	if (slot >= SNIC_MAX_CTX || c->ctx_open[slot] || c->ctx_granted[slot] ||
	    npages == 0 || first_page < lo || first_page > hi ||
	    npages > hi - first_page)
		return -1;
	s = core_ctx_slot(c, slot);
	c->ctx_granted[slot] = true;
	c->own_pages |= 1ull << slot;
	c->seg_first[slot] = first_page;
	c->seg_npages[slot] = npages;
	doorbell_ctx_open(nic, slot, true);
	c->ctx_pid[slot] = pid;
	c->eq_pi[slot] = 0;
	atomic_store_explicit(&s->eq_ci, 0, memory_order_relaxed);
	atomic_store_explicit(&s->eq_pi, 0, memory_order_relaxed);
	atomic_store_explicit(&s->owner_pid, pid, memory_order_relaxed);
	/* a command the slot's last holder left unanswered (or wrote after
	 * its end, if it still maps the slot) is not the new context's: it
	 * starts with nothing pending (the host driver counts on from
	 * cmd_done) */
	atomic_store_explicit(&s->cmd_done,
			      atomic_load_explicit(&s->cmd_seq,
						   memory_order_relaxed),
			      memory_order_relaxed);
	c->cmd_wait &= ~(1ull << slot);
	atomic_store_explicit(&s->state, SNIC_CTX_OPEN, memory_order_release);
	return 0;
}

int snic_nic_dm_owner(const struct snic_nic *nic, unsigned page)
{
	for (unsigned i = 0; i < SNIC_MAX_DM; i++) {
		const struct snic_dm *dm = &nic->dms[i];

		if (dm->in_use && page >= dm->first &&
		    page < dm->first + dm->npages)
			return dm->ctx;
	}
	return -1;
}

uint32_t snic_nic_dm_held(const struct snic_nic *nic)
{
	return nic->sh->dm_held;
}

void snic_nic_dm_release(struct snic_nic *nic, uint32_t pages)
{
	pages &= nic->sh->dm_held;
	nic->sh->dm_held &= ~pages;
	nic->sh->dm_used &= ~pages;
}
