/* SPDX-License-Identifier: MIT */
/*
 * Host memory the host hands the NIC by a command (an MR's pages, a
 * queue's ring) announced to the HAL once, on the command path, so a HAL
 * whose window fills on demand does that work here and not at the first
 * packet that lands on each page (issue 11: UCX's first pass over 4,095
 * fresh receive buffers cost a page fault per page on the receive hop).
 */
#include "objects/objects.h"

/* The MTT entries [first, first + n): one call per run of consecutive
 * host pages, so a buffer the host keeps contiguous costs one call. */
void mr_prepare_pages(struct snic_nic *nic, uint32_t first, uint32_t n)
{
	uint32_t run = 0;

	for (uint32_t i = 1; i <= n; i++) {
		if (i < n && nic->mtt[first + i] == nic->mtt[first + i - 1] + 1)
			continue;
		core_dma_prepare(&nic->core,
				 (uint64_t)nic->mtt[first + run] << SNIC_PAGE_SHIFT,
				 (uint64_t)(i - run) << SNIC_PAGE_SHIFT);
		run = i;
	}
}

/* A ring of cnt entries of 2^stride_log bytes at pa (checked already). */
void ring_prepare(struct snic_nic *nic, uint64_t pa, uint32_t cnt,
		  unsigned stride_log)
{
	if (cnt)
		core_dma_prepare(&nic->core, pa, (uint64_t)cnt << stride_log);
}
