/* SPDX-License-Identifier: MIT */
/*
 * AArch64 helpers for the bare-metal drivers: system registers, barriers,
 * device (MMIO) accessors.  Header only; no state.
 */
#ifndef SNIC_AARCH64_ARCH_H
#define SNIC_AARCH64_ARCH_H

#include <stdint.h>

#define read_sysreg(r) ({ uint64_t v_; \
	__asm__ volatile("mrs %0, " #r : "=r"(v_)); v_; })
#define write_sysreg(r, v) \
	__asm__ volatile("msr " #r ", %0" : : "r"((uint64_t)(v)) : "memory")

static inline void isb(void) { __asm__ volatile("isb" : : : "memory"); }
static inline void dsb_sy(void) { __asm__ volatile("dsb sy" : : : "memory"); }
static inline void dsb_ish(void) { __asm__ volatile("dsb ish" : : : "memory"); }
static inline void dsb_ishst(void) { __asm__ volatile("dsb ishst" : : : "memory"); }
/* Orders normal-memory stores (ring updates) before a device write. */
static inline void dsb_st(void) { __asm__ volatile("dsb st" : : : "memory"); }
static inline void dmb_ish(void) { __asm__ volatile("dmb ish" : : : "memory"); }
static inline void wfi(void) { __asm__ volatile("wfi" : : : "memory"); }

/* Device registers: single, naturally aligned accesses. */
static inline uint32_t mmio_read32(uintptr_t a)
{
	return *(volatile uint32_t *)a;
}

static inline uint16_t mmio_read16(uintptr_t a)
{
	return *(volatile uint16_t *)a;
}

static inline uint8_t mmio_read8(uintptr_t a)
{
	return *(volatile uint8_t *)a;
}

static inline void mmio_write32(uintptr_t a, uint32_t v)
{
	*(volatile uint32_t *)a = v;
}

#endif /* SNIC_AARCH64_ARCH_H */
