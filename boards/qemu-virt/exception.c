/* SPDX-License-Identifier: MIT */
/*
 * The exception report: which vector, ESR (with its exception class), ELR,
 * FAR, SPSR and the stack pointer, printed on the UART without newlib (its
 * state may be what broke), then QEMU exits with QV_EXIT_EXCEPTION.
 */
#include <stdint.h>

#include "arch.h"
#include "pl011.h"
#include "platform.h"
#include "sysexit.h"

static const char *const vector_names[16] = {
	"sync (EL1t)", "IRQ (EL1t)", "FIQ (EL1t)", "SError (EL1t)",
	"sync (EL1h)", "IRQ (EL1h)", "FIQ (EL1h)", "SError (EL1h)",
	"sync (EL0, AArch64)", "IRQ (EL0, AArch64)", "FIQ (EL0, AArch64)",
	"SError (EL0, AArch64)",
	"sync (EL0, AArch32)", "IRQ (EL0, AArch32)", "FIQ (EL0, AArch32)",
	"SError (EL0, AArch32)",
};

/* ESR_ELx.EC values worth a name (ARM DDI 0487, D17.2.37). */
static const char *ec_name(unsigned ec)
{
	switch (ec) {
	case 0x00: return "unknown reason / undefined instruction";
	case 0x01: return "WFI/WFE trapped";
	case 0x07: return "FP/SIMD access trapped";
	case 0x0e: return "illegal execution state";
	case 0x15: return "SVC";
	case 0x16: return "HVC";
	case 0x18: return "MSR/MRS trapped";
	case 0x20: return "instruction abort (lower EL)";
	case 0x21: return "instruction abort";
	case 0x22: return "PC alignment fault";
	case 0x24: return "data abort (lower EL)";
	case 0x25: return "data abort";
	case 0x26: return "SP alignment fault";
	case 0x2f: return "SError";
	case 0x3c: return "BRK";
	default: return "other";
	}
}

static void field(const char *name, uint64_t v)
{
	pl011_puts(name);
	pl011_put_hex(v);
	pl011_puts("\n");
}

void qv_exception(uint64_t vector, uint64_t sp)
{
	static int nested;
	uint64_t esr = read_sysreg(esr_el1);

	if (nested++) {
		pl011_puts("\nsnic-fw: exception while reporting an exception; "
			   "halted\n");
		for (;;)
			wfi();
	}
	pl011_puts("\nsnic-fw: EXCEPTION: ");
	pl011_puts(vector < 16 ? vector_names[vector] : "?");
	pl011_puts(": ");
	pl011_puts(ec_name((unsigned)(esr >> 26) & 0x3f));
	pl011_puts("\n");
	field("  ESR_EL1  ", esr);
	field("  ELR_EL1  ", read_sysreg(elr_el1));
	field("  FAR_EL1  ", read_sysreg(far_el1));
	field("  SPSR_EL1 ", read_sysreg(spsr_el1));
	field("  SP       ", sp);
	pl011_puts("snic-fw: stopped (exit status 3)\n");
	aarch64_exit(QV_EXIT_EXCEPTION);
}
