/* SPDX-License-Identifier: MIT */
/* AArch64 VMSAv8-64 stage 1, EL1&0 regime, TTBR0 only (ARM DDI 0487 D8). */
#include "mmu.h"

#include "arch.h"

#define L1_ENTRIES  4                   /* T0SZ = 32: 4 x 1 GiB */
#define L2_ENTRIES  512                 /* 512 x 2 MiB */

#define DESC_VALID  (1ull << 0)
#define DESC_TABLE  (1ull << 1)         /* level 1: next-level table */
#define DESC_BLOCK  (0ull << 1)         /* level 2: 2 MiB block */
#define ATTR_IDX(i) ((uint64_t)(i) << 2)
#define AP_RW_EL1   (0ull << 6)
#define SH_INNER    (3ull << 8)
#define AF          (1ull << 10)
#define PXN         (1ull << 53)
#define UXN         (1ull << 54)

/* MAIR_EL1: attr0 Device-nGnRnE (0x00), attr1 Normal WB RA/WA (0xff). */
#define MAIR_VALUE  (0x00ull << 0 | 0xffull << 8)
/* TCR_EL1: T0SZ 32, walks WB cacheable inner shareable, 4 KiB granule,
 * TTBR1 walks off (EPD1), 40-bit IPS. */
#define TCR_T0SZ    (32ull << 0)
#define TCR_IRGN0   (1ull << 8)
#define TCR_ORGN0   (1ull << 10)
#define TCR_SH0     (3ull << 12)
#define TCR_TG0_4K  (0ull << 14)
#define TCR_EPD1    (1ull << 23)
#define TCR_IPS_40  (2ull << 32)
#define TCR_VALUE   (TCR_T0SZ | TCR_IRGN0 | TCR_ORGN0 | TCR_SH0 | \
		     TCR_TG0_4K | TCR_EPD1 | TCR_IPS_40)
#define SCTLR_M     (1ull << 0)
#define SCTLR_A     (1ull << 1)
#define SCTLR_C     (1ull << 2)
#define SCTLR_I     (1ull << 12)

static uint64_t l1[L1_ENTRIES] __attribute__((aligned(4096)));
static uint64_t l2[L1_ENTRIES][L2_ENTRIES] __attribute__((aligned(4096)));

int mmu_map(uint64_t base, uint64_t size, enum mmu_mem type)
{
	uint64_t attr;

	if ((base | size) & (MMU_BLOCK_SIZE - 1) || size == 0 ||
	    base >= MMU_VA_LIMIT || size > MMU_VA_LIMIT - base)
		return -1;
	attr = type == MMU_DEVICE ? ATTR_IDX(0) | PXN | UXN
				  : ATTR_IDX(1) | SH_INNER;
	for (uint64_t a = base; a < base + size; a += MMU_BLOCK_SIZE) {
		unsigned i1 = (unsigned)(a >> 30);
		unsigned i2 = (unsigned)((a >> 21) & (L2_ENTRIES - 1));

		if (!(l1[i1] & DESC_VALID))
			l1[i1] = (uint64_t)(uintptr_t)l2[i1] | DESC_TABLE |
				 DESC_VALID;
		l2[i1][i2] = a | attr | AP_RW_EL1 | AF | DESC_BLOCK |
			     DESC_VALID;
	}
	/* New entries were invalid before: no TLB entry to invalidate, only
	 * make the stores visible to the table walker. */
	dsb_ishst();
	isb();
	return 0;
}

void mmu_enable(void)
{
	uint64_t sctlr;

	write_sysreg(mair_el1, MAIR_VALUE);
	write_sysreg(tcr_el1, TCR_VALUE);
	write_sysreg(ttbr0_el1, (uint64_t)(uintptr_t)l1);
	isb();
	__asm__ volatile("tlbi vmalle1" : : : "memory");
	dsb_ish();
	isb();
	sctlr = read_sysreg(sctlr_el1);
	sctlr |= SCTLR_M | SCTLR_C | SCTLR_I;
	sctlr &= ~SCTLR_A;              /* unaligned normal accesses allowed */
	write_sysreg(sctlr_el1, sctlr);
	isb();
}
