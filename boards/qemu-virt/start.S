/* SPDX-License-Identifier: MIT */
/*
 * qemu-virt entry and exception vectors.  QEMU enters _start in EL1 with
 * the MMU and caches off.  Set up the stack, FP/SIMD and the vector table,
 * zero .bss, then C (qv_start in boot.c) does the rest.
 */
#include "platform.h"

	.section .text.boot, "ax"
	.global _start
_start:
	mrs	x0, CurrentEL
	lsr	x0, x0, #2
	cmp	x0, #1
	b.ne	1f
	ldr	x0, =__stack_top
	mov	sp, x0
	/* CPACR_EL1.FPEN = 0b11: FP/SIMD not trapped (newlib uses them). */
	mov	x0, #(3 << 20)
	msr	cpacr_el1, x0
	ldr	x0, =qv_vectors
	msr	vbar_el1, x0
	isb
	ldr	x0, =__bss_start
	ldr	x1, =__bss_end
2:	cmp	x0, x1
	b.hs	3f
	stp	xzr, xzr, [x0], #16
	b	2b
3:	bl	qv_start
	/* qv_start does not return */
1:	wfi
	b	1b

/*
 * Vector table: 16 entries of 128 bytes (current EL with SP0, current EL
 * with SPx, lower EL AArch64, lower EL AArch32; each sync/IRQ/FIQ/SError).
 * Nothing here is expected: every entry reports and stops.  The report runs
 * on its own stack, so a blown stack is reported too.
 */
	.text
	.balign	2048
	.global	qv_vectors
qv_vectors:
	.irp	n, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	.balign	128
	mov	x0, #\n
	b	qv_vector_common
	.endr

qv_vector_common:
	mov	x1, sp
	ldr	x2, =__exc_stack_top
	mov	sp, x2
	bl	qv_exception
4:	wfi
	b	4b
