/* SPDX-License-Identifier: MIT */
/*
 * The host-memory window of a bare-metal NIC: host physical memory appears
 * at a fixed place in the NIC's own physical address space (on QEMU, a
 * shared file mapped as guest RAM; on a DPU, a PCIe window).  A host pa is
 * an offset into the window.  DMA is a bounds-checked copy; RDMA atomics
 * are the CPU's 64-bit atomics on the window (LL/SC or LSE, whatever the
 * compiler emits for the target CPU).
 *
 * The HAL ops' void *hal argument is a struct snic_hostwin *.
 */
#ifndef SNIC_HOSTWIN_H
#define SNIC_HOSTWIN_H

#include <stdint.h>

struct snic_hostwin {
	uint8_t *base;
	uint64_t size;
};

int snic_hostwin_dma_read(void *hal, uint64_t pa, void *dst, uint32_t len);
int snic_hostwin_dma_load_acquire32(void *hal, uint64_t pa, uint32_t *val);
int snic_hostwin_dma_write(void *hal, uint64_t pa, const void *src,
			   uint32_t len);
int snic_hostwin_cmp_swap(void *hal, uint64_t pa, uint64_t cmp,
			  uint64_t swap, uint64_t *old);
int snic_hostwin_fetch_add(void *hal, uint64_t pa, uint64_t add,
			   uint64_t *old);

#endif /* SNIC_HOSTWIN_H */
