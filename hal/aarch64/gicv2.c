/* SPDX-License-Identifier: MIT */
/* GICv2 (IHI 0048B): distributor and CPU interface, enables only. */
#include "gicv2.h"

#include "arch.h"

#define GICD_CTLR       0x000u
#define GICD_ISENABLER  0x100u
#define GICC_CTLR       0x000u
#define GICC_PMR        0x004u

static uintptr_t gicd;

void gicv2_init(uintptr_t dist_base, uintptr_t cpu_base)
{
	gicd = dist_base;
	mmio_write32(gicd + GICD_CTLR, 1);
	mmio_write32(cpu_base + GICC_PMR, 0xff);   /* every priority passes */
	mmio_write32(cpu_base + GICC_CTLR, 1);
}

void gicv2_enable(unsigned intid)
{
	mmio_write32(gicd + GICD_ISENABLER + (intid / 32) * 4,
		     1u << (intid % 32));
}
