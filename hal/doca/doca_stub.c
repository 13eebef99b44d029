/* SPDX-License-Identifier: MIT */
/*
 * The DOCA seam (doca.h) without DOCA: every entry refuses.
 *
 * On a BlueField the card reaches host memory with its DMA engine, which
 * Linux on the Arm cores drives through NVIDIA DOCA (doca_dma.h,
 * libdoca_dma, with a doca_mmap the host driver exports and the card
 * imports), and the host reaches the firmware's doorbells, command
 * mailboxes and event queues through a PCI function the card emulates
 * (DOCA Device Emulation, doca_devemu_pci, BlueField-3).  Debian does not
 * ship DOCA, so this build can neither move a byte to or from the host nor
 * offer the host a BAR, and says so instead of pretending.  A DOCA build
 * replaces this file.
 */
#include <errno.h>
#include <stdio.h>

#include "doca.h"

/* One sentence: what is missing, from which DOCA library, what for. */
static int refuse(char *why, size_t whylen, const char *what,
		  const char *lib, const char *cannot)
{
	snprintf(why, whylen, "%s is missing (this snic-bluefield was built "
		 "without NVIDIA DOCA's %s, which Debian does not ship), so "
		 "the card cannot %s", what, lib, cannot);
	return -ENOSYS;
}

int snic_doca_host_open(struct snic_doca_host *h, const char *pci,
			char *why, size_t whylen)
{
	(void)pci;
	h->size = 0;
	h->impl = NULL;
	return refuse(why, whylen, "host memory: DOCA DMA",
		      "doca_dma/doca_mmap", "read or write host memory");
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

int snic_doca_bar_open(struct snic_doca_bar *b, const char *pci,
		       char *why, size_t whylen)
{
	(void)pci;
	b->bar = NULL;
	b->impl = NULL;
	return refuse(why, whylen, "host BAR: DOCA Device Emulation",
		      "doca_devemu_pci",
		      "present the snic PCI function the host driver maps");
}

void snic_doca_bar_close(struct snic_doca_bar *b)
{
	b->bar = NULL;
	b->impl = NULL;
}
