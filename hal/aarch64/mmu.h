/* SPDX-License-Identifier: MIT */
/*
 * Stage-1 EL1 MMU with an identity map (VA == PA) over the low 4 GiB:
 * 4 KiB granule, 2 MiB blocks, one level-1 table and four level-2 tables.
 * Two memory types: Device-nGnRnE (never executable) for MMIO and Normal
 * write-back cacheable, inner shareable, for RAM.  What is not mapped
 * faults (a translation fault at FAR_EL1), which is the point: a stray
 * pointer stops the image with a report instead of scribbling.
 */
#ifndef SNIC_MMU_H
#define SNIC_MMU_H

#include <stdint.h>

enum mmu_mem {
	MMU_DEVICE = 0,
	MMU_NORMAL = 1,
};

#define MMU_BLOCK_SIZE (2ull << 20)
#define MMU_VA_LIMIT   (4ull << 30)

/* Map [base, base + size) (both multiples of 2 MiB, below 4 GiB).  Before
 * or after mmu_enable (new entries only: a live mapping is never changed).
 * Returns 0, or -1 on a bad range. */
int mmu_map(uint64_t base, uint64_t size, enum mmu_mem type);
/* Program MAIR/TCR/TTBR0 and turn on the MMU and both caches. */
void mmu_enable(void);

#endif /* SNIC_MMU_H */
