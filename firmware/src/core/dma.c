/* SPDX-License-Identifier: MIT */
/* DMA to and from host memory through the HAL, every failure counted.
 * Addresses with SNIC_PA_DM are the card's own device memory (the DM
 * area of the BAR): served here, bounds checked. */
#include <string.h>

#include "arch/crc32_hw.h"
#include "core/core.h"

static uint8_t *dm_at(struct snic_core *c, uint64_t pa, uint32_t len)
{
	uint64_t off = pa & ~SNIC_PA_DM;

	if (off > SNIC_DM_SIZE || len > SNIC_DM_SIZE - off)
		return NULL;
	return c->bar + SNIC_BAR_DM_OFF + off;
}

/* Device memory: copies (for core_dma_read/write, core.h), and atomics on
 * an aligned word. */
int core_dm_copy(struct snic_core *c, uint64_t pa, void *buf, uint32_t len,
		 bool to_dm)
{
	uint8_t *p = dm_at(c, pa, len);

	if (!p)
		return -1;
	if (to_dm)
		memcpy(p, buf, len);
	else
		memcpy(buf, p, len);
	return 0;
}

static _Atomic uint64_t *dm_word(struct snic_core *c, uint64_t pa)
{
	uint8_t *p = dm_at(c, pa, 8);

	return p && !((uintptr_t)p & 7) ? (_Atomic uint64_t *)(void *)p : NULL;
}

/* A producer index the host published with release (doorbell record, SRQ
 * producer index): loaded with acquire, so WQEs read after it are at
 * least as new as it says.  A HAL without the op: the copy, then an
 * acquire fence (our HALs' dma_read is one plain load of coherent
 * memory for an aligned word, which the fence orders before later
 * reads on x86-64 and aarch64 alike). */
int core_dma_load_acquire32(struct snic_core *c, uint64_t pa, uint32_t *val)
{
	int rc;

	if (c->ops->dma_load_acquire32)
		rc = c->ops->dma_load_acquire32(c->hal_ctx, pa, val);
	else if ((rc = c->ops->dma_read(c->hal_ctx, pa, val, 4)) == 0)
		atomic_thread_fence(memory_order_acquire);
	if (rc)
		CNT_INC(c, dma_errors);
	return rc ? -1 : 0;
}

/* [pa, pa + len) was just handed to the NIC by a command: the HAL may
 * make it ready (hal.h).  Not for device memory, which is the card's. */
void core_dma_prepare(struct snic_core *c, uint64_t pa, uint64_t len)
{
	if (c->ops->dma_prepare && len && !(pa & SNIC_PA_DM))
		c->ops->dma_prepare(c->hal_ctx, pa, len);
}

/* RDMA atomics on host memory through the HAL, failures counted. */
int core_dma_cmp_swap(struct snic_core *c, uint64_t pa, uint64_t cmp,
		      uint64_t swap, uint64_t *old)
{
	if (pa & SNIC_PA_DM) {
		_Atomic uint64_t *w = dm_word(c, pa);

		if (!w) {
			CNT_INC(c, dma_errors);
			return -1;
		}
		*old = cmp;
		atomic_compare_exchange_strong(w, old, swap);
		return 0;
	}
	if (c->ops->dma_cmp_swap(c->hal_ctx, pa, cmp, swap, old)) {
		CNT_INC(c, dma_errors);
		return -1;
	}
	return 0;
}

int core_dma_fetch_add(struct snic_core *c, uint64_t pa, uint64_t add,
		       uint64_t *old)
{
	if (pa & SNIC_PA_DM) {
		_Atomic uint64_t *w = dm_word(c, pa);

		if (!w) {
			CNT_INC(c, dma_errors);
			return -1;
		}
		*old = atomic_fetch_add(w, add);
		return 0;
	}
	if (c->ops->dma_fetch_add(c->hal_ctx, pa, add, old)) {
		CNT_INC(c, dma_errors);
		return -1;
	}
	return 0;
}

uint32_t snic_dma_copy_crc(uint32_t crc, void *dst, const void *src,
			   uint32_t len)
{
	return crc32_hw_copy(crc, dst, src, len);
}

uint32_t snic_dma_copy_crc_in(uint32_t crc, void *dst, const void *src,
			      uint32_t len)
{
	return crc32_hw_copy_in(crc, dst, src, len);
}

int snic_dma_crc_ok(void)
{
	return crc32_hw_ok();
}
