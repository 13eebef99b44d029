/* SPDX-License-Identifier: MIT */
/* DMA to and from host memory through the HAL, every failure counted. */
#include "core/core.h"

int core_dma_read(struct snic_core *c, uint64_t pa, void *dst, uint32_t len)
{
	if (c->ops->dma_read(c->hal_ctx, pa, dst, len)) {
		CNT_INC(c, dma_errors);
		return -1;
	}
	return 0;
}

int core_dma_write(struct snic_core *c, uint64_t pa, const void *src,
		   uint32_t len)
{
	if (c->ops->dma_write(c->hal_ctx, pa, src, len)) {
		CNT_INC(c, dma_errors);
		return -1;
	}
	return 0;
}
