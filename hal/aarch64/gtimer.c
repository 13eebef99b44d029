/* SPDX-License-Identifier: MIT */
/* Generic timer: CNTVCT_EL0 as the clock, CNTV_* for the idle wait. */
#include "gtimer.h"

#include "arch.h"

#define CNTV_CTL_ENABLE (1u << 0)

static uint64_t freq;

void gtimer_init(void)
{
	freq = read_sysreg(cntfrq_el0);
	if (freq == 0)
		freq = 62500000;        /* QEMU virt's value; never 0 there */
	write_sysreg(cntv_ctl_el0, 0);
	isb();
}

uint64_t gtimer_freq_hz(void)
{
	return freq;
}

uint64_t gtimer_now_ns(void)
{
	uint64_t t;

	isb();                          /* no speculative early read */
	t = read_sysreg(cntvct_el0);
	return (t / freq) * 1000000000ull + (t % freq) * 1000000000ull / freq;
}

void gtimer_idle_wait(uint64_t ns)
{
	uint64_t ticks = ns * freq / 1000000000ull;

	if (ticks == 0)
		ticks = 1;
	write_sysreg(cntv_tval_el0, ticks);
	write_sysreg(cntv_ctl_el0, CNTV_CTL_ENABLE);
	isb();
	dsb_sy();
	wfi();
	/* Disabling the timer drops its interrupt line again. */
	write_sysreg(cntv_ctl_el0, 0);
	isb();
}
