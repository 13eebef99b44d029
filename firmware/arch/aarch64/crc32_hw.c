/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 (reflected 0xEDB88320) with the CPU's help, aarch64: the ARMv8
 * CRC32 instructions (CRC32X, 8 bytes each), when ID_AA64ISAR0_EL1 says
 * they are there (readable at EL1 in the bare-metal image, emulated for
 * EL0 by Linux).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/crc32_hw.h"

#if defined(__aarch64__) && !defined(SNIC_NO_SIMD)
#include <arm_acle.h>
#include <string.h>

int crc32_hw_state = -1;

bool crc32_hw_probe(void)
{
	uint64_t isar0;

	__asm__ volatile("mrs %0, ID_AA64ISAR0_EL1" : "=r"(isar0));
	crc32_hw_state = ((isar0 >> 16) & 0xf) >= 1; /* CRC32 field */
	return crc32_hw_state != 0;
}

__attribute__((target("+crc")))
uint32_t crc32_hw(uint32_t c, const uint8_t *p, size_t n)
{
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;

		memcpy(&w, p, 8); /* little-endian, any alignment */
		c = __crc32d(c, w);
	}
	for (; n; p++, n--)
		c = __crc32b(c, *p);
	return c;
}

/* A running register: two runs cost no more than one. */
uint32_t crc32_hw_head(uint32_t c, const uint8_t *head, const uint8_t *p,
		       size_t n)
{
	return crc32_hw(crc32_hw(c, head, 64), p, n);
}

/* Byte by byte instructions need no leading zeros: the first 64 bytes
 * (fewer for a shorter run) with the mask applied, then the rest. */
uint32_t crc32_hw_masked(const uint8_t *p, size_t n, const uint8_t *mask)
{
	const uint8_t *ones = mask + 16;        /* after the zero block */
	uint8_t head[64];
	size_t h = n < sizeof(head) ? n : sizeof(head);

	for (size_t i = 0; i < h; i++)
		head[i] = p[i] | ones[i];
	return crc32_hw(crc32_hw(0, head, h), p + h, n - h);
}

/* The CRC32 instructions take bytes as they come: the copy, then the
 * fold over the copy while it is in the cache. */
uint32_t crc32_hw_copy(uint32_t c, uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t pad = -n & 3u;

	memcpy(dst, src, n);
	memset(dst + n, 0, pad);
	return crc32_hw(c, dst, n + pad);
}

/* Receiving: the fold over the frame's payload and pad, then the copy of
 * the payload while it is in the cache. */
uint32_t crc32_hw_copy_in(uint32_t c, uint8_t *dst, const uint8_t *src,
			  size_t n)
{
	c = crc32_hw(c, src, n + (-n & 3u));
	memcpy(dst, src, n);
	return c;
}

#endif
