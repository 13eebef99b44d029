/* SPDX-License-Identifier: MIT */
/*
 * Host memory by DMA on a BlueField, without DOCA: refuses.
 *
 * The card reaches host memory with its DMA engine, which Linux on the
 * Arm cores drives through NVIDIA DOCA (doca_dma.h, libdoca_dma, with a
 * doca_mmap the host driver exports and the card imports).  Debian does
 * not ship DOCA, so this build cannot move a byte to or from the host, and
 * says so instead of pretending.
 */
#include <errno.h>
#include <stdio.h>

#include "doca.h"

int snic_doca_host_open(struct snic_doca_host *h, const char *pci,
			char *why, size_t whylen)
{
	(void)pci;
	h->size = 0;
	h->impl = NULL;
	snprintf(why, whylen,
		 "host memory: DOCA DMA is missing (this snic-bluefield was "
		 "built without NVIDIA DOCA: doca_dma.h/libdoca_dma and "
		 "doca_mmap, which Debian does not ship), so the card cannot "
		 "read or write host memory");
	return -ENOSYS;
}

void snic_doca_host_close(struct snic_doca_host *h)
{
	h->impl = NULL;
}

/* Never reached (open fails); refuse every access all the same. */
int snic_doca_dma_read(void *hal, uint64_t pa, void *dst, uint32_t len)
{
	(void)hal, (void)pa, (void)dst, (void)len;
	return -1;
}

int snic_doca_dma_write(void *hal, uint64_t pa, const void *src, uint32_t len)
{
	(void)hal, (void)pa, (void)src, (void)len;
	return -1;
}

int snic_doca_dma_cmp_swap(void *hal, uint64_t pa, uint64_t cmp,
			   uint64_t swap, uint64_t *old)
{
	(void)hal, (void)pa, (void)cmp, (void)swap, (void)old;
	return -1;
}

int snic_doca_dma_fetch_add(void *hal, uint64_t pa, uint64_t add,
			    uint64_t *old)
{
	(void)hal, (void)pa, (void)add, (void)old;
	return -1;
}
