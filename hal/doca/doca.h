/* SPDX-License-Identifier: MIT */
/*
 * The BlueField's two paths to the host, both through NVIDIA DOCA:
 *  - host memory by DMA (DOCA DMA over a doca_mmap the host exported):
 *    the snic_hal_ops dma_* operations;
 *  - the BAR the host driver maps (DOCA Device Emulation: a PCI function
 *    the card presents to the host, whose BAR the firmware sees as memory).
 *
 * This build has neither: Debian does not ship DOCA.  The stubs of
 * doca_stub.c refuse with a message that names what is missing; their
 * dma_* entries fail every access (-1, nothing copied).  A DOCA
 * implementation replaces doca_stub.c behind these same declarations.
 */
#ifndef SNIC_HAL_DOCA_H
#define SNIC_HAL_DOCA_H

#include <stddef.h>
#include <stdint.h>

/* Host memory seen through DOCA DMA. */
struct snic_doca_host {
	uint64_t size;          /* bytes of host memory the host exported   */
	void *impl;             /* the DOCA objects (device, mmap, DMA ctx) */
};

/* Open the DMA path of the ConnectX function at `pci` (e.g.
 * "0000:03:00.0").  0, or a negative errno with a sentence in why. */
int snic_doca_host_open(struct snic_doca_host *h, const char *pci,
			char *why, size_t whylen);
void snic_doca_host_close(struct snic_doca_host *h);

/* snic_hal_ops entries; the hal ctx is a struct snic_doca_host *. */
int snic_doca_dma_read(void *hal, uint64_t pa, void *dst, uint32_t len);
int snic_doca_dma_write(void *hal, uint64_t pa, const void *src, uint32_t len);
int snic_doca_dma_cmp_swap(void *hal, uint64_t pa, uint64_t cmp,
			   uint64_t swap, uint64_t *old);
int snic_doca_dma_fetch_add(void *hal, uint64_t pa, uint64_t add,
			    uint64_t *old);

/* The emulated PCI function's BAR (SNIC_BAR_SIZE bytes). */
struct snic_doca_bar {
	void *bar;              /* mapped BAR, shared with the host          */
	void *impl;
};

/* Present the snic PCI function to the host through the ConnectX
 * function at `pci`.  0, or a negative errno with a sentence in why. */
int snic_doca_bar_open(struct snic_doca_bar *b, const char *pci,
		       char *why, size_t whylen);
void snic_doca_bar_close(struct snic_doca_bar *b);

#endif /* SNIC_HAL_DOCA_H */
