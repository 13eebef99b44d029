/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 without CPU help: crc32_hw_ok() is false and wire/crc32.c's
 * tables do the work.  Built on CPUs arch/ has no folder for, and when
 * SNIC_NO_SIMD asks for the portable path.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/crc32_hw.h"

#if !(defined(__x86_64__) && !defined(SNIC_NO_SIMD)) && \
    !(defined(__aarch64__) && !defined(SNIC_NO_SIMD))

int crc32_hw_state = 0;

bool crc32_hw_probe(void)
{
	return false;
}

uint32_t crc32_hw(uint32_t c, const uint8_t *p, size_t n)
{
	(void)p;
	(void)n;
	return c; /* never called: crc32_hw_ok() is false */
}

uint32_t crc32_hw_head(uint32_t c, const uint8_t *head, const uint8_t *p,
		       size_t n)
{
	(void)head;
	(void)p;
	(void)n;
	return c; /* never called: crc32_hw_ok() is false */
}

uint32_t crc32_hw_masked(const uint8_t *p, size_t n, const uint8_t *mask)
{
	(void)p;
	(void)n;
	(void)mask;
	return 0; /* never called: crc32_hw_ok() is false */
}

uint32_t crc32_hw_copy(uint32_t c, uint8_t *dst, const uint8_t *src, size_t n)
{
	(void)dst;
	(void)src;
	(void)n;
	return c; /* never called: crc32_hw_ok() is false */
}

uint32_t crc32_hw_copy_in(uint32_t c, uint8_t *dst, const uint8_t *src,
			  size_t n)
{
	(void)dst;
	(void)src;
	(void)n;
	return c; /* never called: crc32_hw_ok() is false */
}

#endif
