/* SPDX-License-Identifier: MIT */
/*
 * From start.S to main(): console, MMU (device window and private RAM plus
 * the BAR file; main() maps the host window once it knows its size), then
 * newlib's constructors, main, exit.
 */
#include <stdlib.h>

#include "mmu.h"
#include "pl011.h"
#include "platform.h"
#include "sysexit.h"

int main(void);
void qv_start(void);
extern void __libc_init_array(void);

void qv_start(void)
{
	pl011_init(QV_UART_BASE);
	if (mmu_map(QV_DEV_BASE, QV_DEV_SIZE, MMU_DEVICE) != 0 ||
	    mmu_map(QV_RAM_BASE, QV_PRIV_SIZE + QV_BAR_FILE_SIZE,
		    MMU_NORMAL) != 0) {
		pl011_puts("snic-fw: bad memory map\n");
		aarch64_exit(QV_EXIT_CONFIG);
	}
	mmu_enable();
	__libc_init_array();
	exit(main());
}
