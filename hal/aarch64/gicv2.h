/* SPDX-License-Identifier: MIT */
/*
 * Minimal GICv2 set-up for a polled system: the distributor and CPU
 * interface on, chosen interrupts enabled, so that they wake WFI.  No
 * interrupt is ever taken (PSTATE.I stays set) or acknowledged.
 */
#ifndef SNIC_GICV2_H
#define SNIC_GICV2_H

#include <stdint.h>

void gicv2_init(uintptr_t dist_base, uintptr_t cpu_base);
void gicv2_enable(unsigned intid);

#endif /* SNIC_GICV2_H */
