/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: the first registration's copy into window pages with
 * non-temporal stores.
 *
 * The window page a large first registration writes was last used long
 * ago or never (a freed backing, reused lowest first) and the NIC reads
 * it only when a transfer comes: an ordinary store first reads each
 * destination line into the cache (three memory streams for a copy, two
 * for a fill) and fills the cache with lines nobody reads soon.
 * Streaming stores write whole lines without reading them.  Measured on
 * this machine (a VM, 2 cores shared with other users, thread CPU time,
 * medians of 9-31, one stream of lines), destination window pages not
 * in the cache: 1 MiB 144-206 -> 85-88 us, 4 MiB 739-944 -> 466-733 us,
 * 16 MiB 3.2-4.3 -> 2.5-2.9 ms; source and destination both in the
 * cache (copied just before): 256 KiB 9.5 -> 22 us, 1 MiB 55 -> 84 us, 2 MiB 232 -> 237 us,
 * 4 MiB 494 -> 422 us.  So from HD_STREAM_MIN, 2 MiB (this machine's L2
 * per core; there the cached case breaks even), streaming; below it the
 * plain memcpy/memset (a 16-page stashed extent, small buffers).
 *
 * SSE2 (every x86-64 has it; AVX2 streams measured the same: the copy is
 * bound by memory, not by the width of a store).  From 41 MiB here
 * glibc's memcpy streams too (glibc.cpu.x86_non_temporal_threshold,
 * from the cache size), four pages at a time: this copy does the same
 * and measured as fast there.  Other architectures take memcpy/memset.  dst must be 16-byte aligned and len a multiple of
 * 64 (window pages: both hold).
 */
#include <stdint.h>
#include <string.h>

#include "memory/memory.h"

#if defined(__x86_64__)
#include <emmintrin.h>

/* len bytes (a multiple of 64) in 64-byte lines of streaming stores */
static void stream_lines(uint8_t *d, const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len; i += 64) {
		const __m128i *sp = (const __m128i *)(const void *)(s + i);
		__m128i *dp = (__m128i *)(void *)(d + i);
		__m128i a = _mm_loadu_si128(sp), b = _mm_loadu_si128(sp + 1);
		__m128i c = _mm_loadu_si128(sp + 2), e = _mm_loadu_si128(sp + 3);

		_mm_stream_si128(dp, a);
		_mm_stream_si128(dp + 1, b);
		_mm_stream_si128(dp + 2, c);
		_mm_stream_si128(dp + 3, e);
	}
}

void hd_stream_copy(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t i = 0;

	if (len < HD_STREAM_MIN || ((uintptr_t)dst & 15) || (len & 63)) {
		memcpy(dst, src, len);
		return;
	}
	/* four pages at a time, a line of each in turn, the source read
	 * ahead (glibc's large copy does the same: fewer open DRAM rows
	 * than one long stream; 16 MiB 2.4-2.6 -> 2.0-2.2 ms, 64 MiB
	 * 11.6-12.0 -> 9.2-9.9 ms against one stream) */
	for (; i + 4 * 4096 <= len; i += 4 * 4096)
		for (size_t l = 0; l < 4096; l += 64)
			for (size_t p = 0; p < 4 * 4096; p += 4096) {
				_mm_prefetch((const char *)(s + i + p + l + 256),
					     _MM_HINT_T0);
				stream_lines(d + i + p + l, s + i + p + l, 64);
			}
	stream_lines(d + i, s + i, len - i);
	/* streaming stores are weakly ordered: visible before the REG_MR
	 * command that hands the pages to the NIC */
	_mm_sfence();
}

void hd_stream_zero(void *dst, size_t len)
{
	__m128i *d = dst;
	const __m128i z = _mm_setzero_si128();

	if (len < HD_STREAM_MIN || ((uintptr_t)dst & 15) || (len & 63)) {
		memset(dst, 0, len);
		return;
	}
	for (size_t i = 0; i < len / 16; i += 4) {
		_mm_stream_si128(d + i, z);
		_mm_stream_si128(d + i + 1, z);
		_mm_stream_si128(d + i + 2, z);
		_mm_stream_si128(d + i + 3, z);
	}
	_mm_sfence();
}

#else

void hd_stream_copy(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}

void hd_stream_zero(void *dst, size_t len)
{
	memset(dst, 0, len);
}

#endif
