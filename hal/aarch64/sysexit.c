/* SPDX-License-Identifier: MIT */
/* Semihosting (Arm IHI 0056) SYS_EXIT, PSCI (DEN 0022) SYSTEM_OFF. */
#include "sysexit.h"

#include <stdint.h>

#include "arch.h"

#define SH_SYS_EXIT                 0x18u
#define ADP_STOPPED_APPLICATIONEXIT 0x20026u
#define PSCI_SYSTEM_OFF             0x84000008u

static void semihost_exit(int status)
{
	/* AArch64: x1 points at {reason, subcode}; the subcode is the exit
	 * status. */
	static uint64_t block[2];
	register uint64_t x0 __asm__("x0") = SH_SYS_EXIT;
	register uint64_t x1 __asm__("x1");

	block[0] = ADP_STOPPED_APPLICATIONEXIT;
	block[1] = (uint64_t)(int64_t)status;
	x1 = (uint64_t)(uintptr_t)block;
	__asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
}

static void psci_system_off(void)
{
	register uint64_t x0 __asm__("x0") = PSCI_SYSTEM_OFF;

	__asm__ volatile("hvc #0" : "+r"(x0) : : "memory");
}

_Noreturn void aarch64_exit(int status)
{
	semihost_exit(status);
	psci_system_off();
	for (;;)
		wfi();
}
