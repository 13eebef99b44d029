/* SPDX-License-Identifier: MIT */
/* CRC-32 with the CPU's help (arch/<cpu>/crc32_hw.c), used by wire/crc32.c. */
#ifndef SNIC_CRC32_HW_H
#define SNIC_CRC32_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the CPU has the instructions: > 0 yes (x86-64: 2 with the AVX
 * encodings too), 0 no, -1 not asked yet (arch/<cpu>/crc32_hw.c);
 * crc32_hw_probe() asks and sets it.  The test
 * is inline: every ICRC makes it (bench-instr). */
extern int crc32_hw_state;
bool crc32_hw_probe(void);

static inline bool crc32_hw_ok(void)
{
	return crc32_hw_state > 0 || (crc32_hw_state < 0 && crc32_hw_probe());
}

/* Advance the CRC register c (not complemented) over n bytes at p;
 * n >= 16 and a multiple of 16. */
uint32_t crc32_hw(uint32_t c, const uint8_t *p, size_t n);

/* The same over 64 bytes at head followed by n bytes at p (n a multiple
 * of 16, may be 0), folded as one run: for input whose first bytes are
 * built aside (the ICRC's masked headers, wire/icrc.c). */
uint32_t crc32_hw_head(uint32_t c, const uint8_t *head, const uint8_t *p,
		       size_t n);

/* The register from 0 over the n (>= 32) bytes at p with every byte whose
 * mask[16 + i] is 0xff (i < 64) taken as 0xff, preceded by zero bytes up
 * to a multiple of 16 (which leave a zero register as it is).  mask holds
 * CRC32_HW_MASK_LEN bytes: 16 zeros (a block's worth the zero padding
 * loads its mask from, no shift), then the 64 for p[0..63].  For the ICRC
 * of an IPv4 frame (wire/icrc.c): the masked fields and the LRH's ones
 * come from the mask, so nothing is copied aside. */
#define CRC32_HW_MASK_LEN 80
uint32_t crc32_hw_masked(const uint8_t *p, size_t n, const uint8_t *mask);

/* Copy n bytes (any n) from src to dst, then zero bytes up to a multiple
 * of 4 (written at dst + n), and return the register c advanced over
 * them all: a payload and its pad with their ICRC in the pass that
 * copies them (IBTA A17.3.3: the pad is covered), each byte read once.
 * Never reads past src + n. */
uint32_t crc32_hw_copy(uint32_t c, uint8_t *dst, const uint8_t *src, size_t n);

/* The receiving side's: copy n bytes (any n) from src to dst and return
 * the register c advanced over them and the -n & 3 bytes that follow them
 * at src, which are not copied (a received payload, its pad covered by
 * the ICRC but not the MR's to get).  Reads src up to src + n + 3. */
uint32_t crc32_hw_copy_in(uint32_t c, uint8_t *dst, const uint8_t *src,
			  size_t n);

#endif
