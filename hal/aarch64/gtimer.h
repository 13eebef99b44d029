/* SPDX-License-Identifier: MIT */
/*
 * The Arm generic timer (virtual counter) as a monotonic clock, and an idle
 * wait: arm the virtual timer, WFI until it (or any enabled interrupt)
 * fires.  Interrupts stay masked in PSTATE: WFI wakes on a pending
 * interrupt anyway and nothing is ever taken, so no handler is needed.
 * The timer's PPI must be enabled at the interrupt controller (gicv2.h).
 */
#ifndef SNIC_GTIMER_H
#define SNIC_GTIMER_H

#include <stdint.h>

#define GTIMER_VIRT_PPI 27u     /* INTID of the EL1 virtual timer */

void gtimer_init(void);
uint64_t gtimer_now_ns(void);
uint64_t gtimer_freq_hz(void);
/* Sleep in WFI for about ns nanoseconds (less if an interrupt arrives). */
void gtimer_idle_wait(uint64_t ns);

#endif /* SNIC_GTIMER_H */
