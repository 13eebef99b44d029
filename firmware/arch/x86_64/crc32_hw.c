/* SPDX-License-Identifier: MIT */
/*
 * CRC-32 (reflected 0xEDB88320) with the CPU's help, x86-64: carry-less
 * multiplication, the folding method of Gopal et al., "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ Instruction" (Intel,
 * 2009).  The ICRC is computed over every byte a NIC sends and receives;
 * the table method runs at ~1.5 GB/s and was ~90 % of the emulator's
 * cycles at 64 KiB messages.
 *
 * Four 128-bit lanes are folded forward 512 bits at a time, then into one
 * lane, then 128 -> 64 -> 32 bits with a Barrett reduction.  Constants are
 * x^n mod P(x) for the fold distances (bit-reflected, 33 bits), and
 * P'(x) / mu for the reduction, as derived in that paper.
 *
 * Two variants, chosen at run time: SSE/PCLMULQDQ (four xmm lanes,
 * ~14 GB/s here) and AVX-512/VPCLMULQDQ (four zmm accumulators, ~50 GB/s
 * here) for runs of 512 bytes and more.
 *
 * Every arch/ file is compiled on every target; each builds only where its
 * CPU is (the #if below), generic/ where none is.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/crc32_hw.h"

#if defined(__x86_64__) && !defined(SNIC_NO_SIMD)
#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#define CLMUL __attribute__((target("pclmul,sse4.1")))

int crc32_hw_state = -1;

bool crc32_hw_probe(void)
{
	/* 2: the AVX encodings too (masked_short_avx) */
	crc32_hw_state = !__builtin_cpu_supports("pclmul") ||
			 !__builtin_cpu_supports("sse4.1") ? 0 :
			 __builtin_cpu_supports("avx") ? 2 : 1;
	return crc32_hw_state != 0;
}

/* Fold lane x forward by the distance whose constants are in k, and add
 * the data d that lies there. */
CLMUL static inline __attribute__((always_inline))
__m128i fold(__m128i x, __m128i k, __m128i d)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), d);
}

static inline __attribute__((always_inline)) __m128i ld(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* 128 -> 32 bits in three multiplications.  The register X stands for
 * the CRC of X(x) x^32 mod P.  Its first 64 bits (X's terms x^127..x^64)
 * are folded onto the rest by x^96 mod P, which leaves D, of degree < 96,
 * with the same remainder; then Barrett reduction with a 64-bit quotient
 * (exact for a dividend of degree < 96): Q = floor(floor(D / x^32) mu /
 * x^64), mu = floor(x^96 / P), and the remainder is D's low 32 bits XOR
 * those of Q P.  Constants bit-reflected: x^96 mod P and P as 33 bits
 * (bit u is x^(32-u)), mu's terms x^64..x^1 as 64 (its x^0 is 0 and
 * falls below the quotient anyway). */
CLMUL static inline __attribute__((always_inline)) uint32_t reduce(__m128i x)
{
	const __m128i kmu = _mm_set_epi64x((long long)0xb4e5b025f7011641ULL,
					   0x00ccaa009eLL);
	const __m128i poly = _mm_set_epi64x(0, 0x01db710641LL);
	__m128i t;

	t = _mm_clmulepi64_si128(x, kmu, 0x00);
	x = _mm_xor_si128(_mm_srli_si128(x, 8), t);     /* D: bits 0..95  */
	t = _mm_clmulepi64_si128(x, kmu, 0x10);         /* Q: bits 0..63  */
	t = _mm_clmulepi64_si128(t, poly, 0x00);
	x = _mm_xor_si128(x, t);
	return (uint32_t)_mm_extract_epi32(x, 2);       /* D - Q P        */
}

/* ---- AVX-512: four 128-bit lanes per instruction ------------------- */

#define CLMUL512 __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")))

/* Atomic (relaxed: a plain load and store here): cores on several
 * threads may ask first at once; each finds the same answer. */
static bool vclmul_ok(void)
{
	static _Atomic int ok = -1;
	int v = atomic_load_explicit(&ok, memory_order_relaxed);

	if (v < 0) {
		v = __builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512vl") &&
		    __builtin_cpu_supports("vpclmulqdq");
		atomic_store_explicit(&ok, v, memory_order_relaxed);
	}
	return v != 0;
}

/* Fold constants for a distance of D bits: x^(D+32) and x^(D-32) mod P,
 * bit-reflected and shifted left by one (the paper's k-pairs; the xmm
 * path's k1k2 and k3k4 are D = 512 and D = 128). */
#define KPAIR(lo, hi) _mm_set_epi64x((long long)(hi), (long long)(lo))

CLMUL512 static inline __m512i fold4(__m512i x, __m512i k, __m512i d)
{
	__m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, d, 0x96); /* lo ^ hi ^ d */
}

CLMUL512 static inline __m512i ld4(const uint8_t *p)
{
	return _mm512_loadu_si512((const void *)p);
}

/* Load 64 bytes at p + off and, when copying, store them at d + off. */
CLMUL512 static inline __attribute__((always_inline))
__m512i ld4st(uint8_t *d, const uint8_t *p, size_t off, bool copy)
{
	__m512i v = ld4(p + off);

	if (copy)
		_mm512_storeu_si512((void *)(d + off), v);
	return v;
}

static inline __attribute__((always_inline))
__m128i ldst(uint8_t *d, const uint8_t *p, size_t off, bool copy)
{
	__m128i v = ld(p + off);

	if (copy)
		_mm_storeu_si128((__m128i *)(void *)(d + off), v);
	return v;
}

/* Four zmm accumulators holding the first 256 bytes, then n (a multiple
 * of 16) at p: folded 256 bytes apart, then into one zmm, its four lanes
 * into one xmm, the rest as the xmm path.  With copy, every block loaded
 * is also stored at d (crc32_hw_copy). */
CLMUL512 static inline __attribute__((always_inline))
uint32_t vclmul_lanes(__m512i z0, __m512i z1, __m512i z2, __m512i z3,
		      uint8_t *d, const uint8_t *p, size_t n, bool copy)
{
	const __m512i k2048 = _mm512_broadcast_i32x4(KPAIR(0x11542778aULL, 0x1322d1430ULL));
	const __m512i k512 = _mm512_broadcast_i32x4(KPAIR(0x154442bd4ULL, 0x1c6e41596ULL));
	const __m128i k384 = KPAIR(0x03db1ecdcULL, 0x174359406ULL);
	const __m128i k256 = KPAIR(0x0f1da05aaULL, 0x15a546366ULL);
	const __m128i k128 = KPAIR(0x1751997d0ULL, 0x0ccaa009eULL);
	__m128i x;

	for (; n >= 256; p += 256, d += copy ? 256 : 0, n -= 256) {
		z0 = fold4(z0, k2048, ld4st(d, p, 0, copy));
		z1 = fold4(z1, k2048, ld4st(d, p, 64, copy));
		z2 = fold4(z2, k2048, ld4st(d, p, 128, copy));
		z3 = fold4(z3, k2048, ld4st(d, p, 192, copy));
	}
	z1 = fold4(z0, k512, z1);
	z2 = fold4(z1, k512, z2);
	z3 = fold4(z2, k512, z3);
	for (; n >= 64; p += 64, d += copy ? 64 : 0, n -= 64)
		z3 = fold4(z3, k512, ld4st(d, p, 0, copy));
	/* lane 0 is the earliest data: fold it 384 bits, lane 1 256, ... */
	x = fold(_mm512_extracti32x4_epi32(z3, 2), k128,
		 _mm512_extracti32x4_epi32(z3, 3));
	x = fold(_mm512_extracti32x4_epi32(z3, 1), k256, x);
	x = fold(_mm512_extracti32x4_epi32(z3, 0), k384, x);
	for (; n >= 16; p += 16, d += copy ? 16 : 0, n -= 16)
		x = fold(x, k128, ldst(d, p, 0, copy));
	return reduce(x);
}

/* n >= 256, a multiple of 16, from register c. */
CLMUL512 static inline __attribute__((always_inline))
uint32_t vclmul_run(uint32_t c, uint8_t *d, const uint8_t *p, size_t n,
		    bool copy)
{
	__m512i z0 = ld4st(d, p, 0, copy), z1 = ld4st(d, p, 64, copy);
	__m512i z2 = ld4st(d, p, 128, copy), z3 = ld4st(d, p, 192, copy);

	z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)c)));
	return vclmul_lanes(z0, z1, z2, z3, d + (copy ? 256 : 0), p + 256,
			    n - 256, copy);
}

CLMUL512 static uint32_t crc32_vclmul(uint32_t c, const uint8_t *p, size_t n)
{
	return vclmul_run(c, (uint8_t *)(uintptr_t)p, p, n, false); /* d unused */
}

CLMUL512 static uint32_t crc32_vclmul_copy(uint32_t c, uint8_t *d,
					   const uint8_t *p, size_t n)
{
	return vclmul_run(c, d, p, n, true);
}

/* The first 64 bytes in four xmm lanes (crc32_hw_masked's, with their
 * mask), then n (>= 192, a multiple of 16) at p: the lanes become the
 * first zmm accumulator as they are, not folded and reduced first. */
CLMUL512 static __attribute__((noinline))
uint32_t crc32_vclmul_from(__m128i x1, __m128i x2, __m128i x3, __m128i x4,
			   const uint8_t *p, size_t n)
{
	__m512i z0 = _mm512_castsi128_si512(x1);

	z0 = _mm512_inserti32x4(z0, x2, 1);
	z0 = _mm512_inserti32x4(z0, x3, 2);
	z0 = _mm512_inserti32x4(z0, x4, 3);
	return vclmul_lanes(z0, ld4(p), ld4(p + 64), ld4(p + 128),
			    (uint8_t *)(uintptr_t)p, p + 192, n - 192, false);
}

/* ---- SSE: four xmm accumulators 64 bytes apart --------------------- */

/* n >= 16, a multiple of 16: one lane, 16 bytes at a time (short runs:
 * the ICRC of a small frame); with copy, stored at d too. */
CLMUL static inline __attribute__((always_inline))
uint32_t lane_run(uint32_t c, uint8_t *d, const uint8_t *p, size_t n, bool copy)
{
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
	__m128i x1 = _mm_xor_si128(ldst(d, p, 0, copy), _mm_cvtsi32_si128((int)c));

	for (p += 16, d += copy ? 16 : 0, n -= 16; n >= 16;
	     p += 16, d += copy ? 16 : 0, n -= 16)
		x1 = fold(x1, k3k4, ldst(d, p, 0, copy));
	return reduce(x1);
}

CLMUL static uint32_t crc32_clmul16(uint32_t c, const uint8_t *p, size_t n)
{
	return lane_run(c, (uint8_t *)(uintptr_t)p, p, n, false); /* d unused */
}

/* Four lanes holding the first 64 bytes, then n (a multiple of 16) at p
 * (with copy, stored at d too).  Its two users below are not inlined: on
 * its own the 64-byte loop keeps its lanes in place (in crc32_hw_masked
 * GCC added three register moves per pass). */
CLMUL static inline __attribute__((always_inline))
uint32_t lanes_run(__m128i x1, __m128i x2, __m128i x3, __m128i x4,
		   uint8_t *d, const uint8_t *p, size_t n, bool copy)
{
	const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);

	for (; n >= 64; p += 64, d += copy ? 64 : 0, n -= 64) {
		x1 = fold(x1, k1k2, ldst(d, p, 0, copy));
		x2 = fold(x2, k1k2, ldst(d, p, 16, copy));
		x3 = fold(x3, k1k2, ldst(d, p, 32, copy));
		x4 = fold(x4, k1k2, ldst(d, p, 48, copy));
	}
	x1 = fold(x1, k3k4, x2);
	x1 = fold(x1, k3k4, x3);
	x1 = fold(x1, k3k4, x4);
	for (; n >= 16; p += 16, d += copy ? 16 : 0, n -= 16)
		x1 = fold(x1, k3k4, ldst(d, p, 0, copy));
	return reduce(x1);
}

/* The lanes compiled twice, as masked_short: SSE, and the AVX encodings
 * where the CPU has them (a 4 KiB frame's 256 blocks in ~1/3 fewer
 * instructions where AVX-512 is not there). */
#define AVX __attribute__((target("avx,pclmul,sse4.1")))

CLMUL static __attribute__((noinline))
uint32_t clmul_lanes_sse(__m128i x1, __m128i x2, __m128i x3, __m128i x4,
			 const uint8_t *p, size_t n)
{
	return lanes_run(x1, x2, x3, x4, (uint8_t *)(uintptr_t)p, p, n, false);
}

AVX static __attribute__((noinline))
uint32_t clmul_lanes_avx(__m128i x1, __m128i x2, __m128i x3, __m128i x4,
			 const uint8_t *p, size_t n)
{
	return lanes_run(x1, x2, x3, x4, (uint8_t *)(uintptr_t)p, p, n, false);
}

CLMUL static inline __attribute__((always_inline))
uint32_t clmul_lanes(__m128i x1, __m128i x2, __m128i x3, __m128i x4,
		     const uint8_t *p, size_t n)
{
	if (crc32_hw_state > 1)
		return clmul_lanes_avx(x1, x2, x3, x4, p, n);
	return clmul_lanes_sse(x1, x2, x3, x4, p, n);
}

/* n >= 64, a multiple of 16, copied to d and folded from register c. */
CLMUL static inline __attribute__((always_inline))
uint32_t lanes_copy(uint32_t c, uint8_t *d, const uint8_t *p, size_t n)
{
	__m128i x1 = _mm_xor_si128(ldst(d, p, 0, true), _mm_cvtsi32_si128((int)c));
	__m128i x2 = ldst(d, p, 16, true), x3 = ldst(d, p, 32, true);
	__m128i x4 = ldst(d, p, 48, true);

	return lanes_run(x1, x2, x3, x4, d + 64, p + 64, n - 64, true);
}

CLMUL static __attribute__((noinline))
uint32_t clmul_lanes_copy_sse(uint32_t c, uint8_t *d, const uint8_t *p,
			      size_t n)
{
	return lanes_copy(c, d, p, n);
}

AVX static __attribute__((noinline))
uint32_t clmul_lanes_copy_avx(uint32_t c, uint8_t *d, const uint8_t *p,
			      size_t n)
{
	return lanes_copy(c, d, p, n);
}

/* The first 64 bytes at head, then n (a multiple of 16) at p. */
CLMUL static uint32_t crc32_clmul128(uint32_t c, const uint8_t *head,
				     const uint8_t *p, size_t n)
{
	return clmul_lanes(_mm_xor_si128(ld(head), _mm_cvtsi32_si128((int)c)),
			   ld(head + 16), ld(head + 32), ld(head + 48), p, n);
}

uint32_t crc32_hw(uint32_t c, const uint8_t *p, size_t n)
{
	/* below 512 bytes the zmm set-up and lane reduction do not pay */
	if (n >= 512 && vclmul_ok())
		return crc32_vclmul(c, p, n);
	if (n < 64)
		return crc32_clmul16(c, p, n);
	return crc32_clmul128(c, p, p + 64, n - 64);
}

uint32_t crc32_hw_head(uint32_t c, const uint8_t *head, const uint8_t *p,
		       size_t n)
{
	if (n + 64 >= 512 && vclmul_ok())
		return crc32_vclmul(crc32_clmul128(c, head, p, 0), p, n);
	return crc32_clmul128(c, head, p, n);
}

/* The block of 16 bytes that starts z (0..15) zero bytes before p: p's
 * bytes move z lanes up; a pshufb control byte with its top bit set
 * gives zero (the control: z bytes 0x80, then 0, 1, ...). */
static const uint8_t after_zeros[32] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};

CLMUL static inline __attribute__((always_inline))
__m128i ld_after_zeros(const uint8_t *p, unsigned z)
{
	return _mm_shuffle_epi8(ld(p), ld(after_zeros + 16 - z));
}

/* x folded forward by the distance whose constants are in k, without
 * data: one lane's share of a sum taken at the end (masked_blocks). */
CLMUL static inline __attribute__((always_inline))
__m128i fwd(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
			     _mm_clmulepi64_si128(x, k, 0x11));
}

/*
 * A run of at most 128 bytes (2 to 8 blocks with the zeros in front): the
 * ICRC of a small frame (an ACK's 48 bytes, a 64-byte WRITE's 124), where
 * the set-up is most of the cost.  Compiled twice: SSE, and with the AVX
 * encodings (three operands, unaligned memory operands: ~1/3 fewer
 * instructions per block) where the CPU has them.  mask: crc32_hw_masked's
 * 80-byte table.
 *
 * b blocks, a constant where this is inlined (n in 16 b - 15 .. 16 b):
 * with z = 16 b - n zeros in front and in = 16 - z = n - 16 (b - 1),
 * block i (i >= 1) lies at p + in + 16 (i - 1), block i's mask at
 * mask + in + 16 i and block 0's shuffle control at after_zeros + in:
 * every address is in on a fixed base plus a constant, and nothing else
 * is computed from n (z and the addresses from it were a third of a
 * small frame's ICRC).
 *
 * Four lanes, block i in lane i mod 4 (folded 512 bits on from block
 * i - 4), then lanes 1..3 blocks short of the last folded that far and
 * summed: the multiplier's latency is paid twice instead of b - 1 times
 * in a row (one lane was a fifth of the NIC thread's time on a 64-B
 * ib_write_bw, the same instructions).
 */
CLMUL static inline __attribute__((always_inline))
uint32_t masked_blocks(const uint8_t *p, size_t n, const uint8_t *mask,
		       const unsigned b)
{
	const __m128i k1 = KPAIR(0x1751997d0ULL, 0x0ccaa009eULL); /* 128 bits */
	const __m128i k2 = KPAIR(0x0f1da05aaULL, 0x15a546366ULL); /* 256 */
	const __m128i k3 = KPAIR(0x03db1ecdcULL, 0x174359406ULL); /* 384 */
	const __m128i k512 = KPAIR(0x154442bd4ULL, 0x1c6e41596ULL);
	/* the offsets in parentheses: each base moves only inside its
	 * object (16 - z, 1..16; after_zeros is 32 bytes, the mask 80) */
	const size_t in = n - 16 * (b - 1);             /* 16 - z */
	const uint8_t *q = p + in;              /* block i at q + 16 (i - 1) */
	const uint8_t *m = mask + in;           /* block i's mask at m + 16 i */
	const unsigned last = b - 1, lanes = b < 4 ? b : 4;
	__m128i x[4], s, t;

	x[0] = _mm_shuffle_epi8(ld(p), ld(after_zeros + in));
	x[0] = _mm_or_si128(x[0], ld(m));
	for (unsigned i = 1; i < b; i++) {
		__m128i d = ld(q + 16 * (i - 1));

		if (i < 4)      /* the mask covers the first four blocks */
			x[i] = _mm_or_si128(d, ld(m + 16 * i));
		else
			x[i & 3] = fold(x[i & 3], k512, d);
	}
	/* the lane holding block last - j folded j blocks on (a tree) */
	s = x[last & 3];
	if (lanes > 1)
		s = _mm_xor_si128(s, fwd(x[(last - 1) & 3], k1));
	if (lanes > 2) {
		t = fwd(x[(last - 2) & 3], k2);
		if (lanes > 3)
			t = _mm_xor_si128(t, fwd(x[(last - 3) & 3], k3));
		s = _mm_xor_si128(s, t);
	}
	return reduce(s);
}

/* The block counts other than a stream of small WRITEs' (below), one
 * straight run each behind one indexed jump; out of line, so that their
 * registers do not cost the two hot ones a move. */
CLMUL static inline __attribute__((always_inline))
uint32_t masked_other(const uint8_t *p, size_t n, const uint8_t *mask)
{
	switch ((n + 15) >> 4) {        /* blocks, 2..8 (crc32_hw_masked) */
	case 3: return masked_blocks(p, n, mask, 3);
	case 4: return masked_blocks(p, n, mask, 4);
	case 5: return masked_blocks(p, n, mask, 5);
	case 6: return masked_blocks(p, n, mask, 6);
	case 7: return masked_blocks(p, n, mask, 7);
	case 8: return masked_blocks(p, n, mask, 8);
	default: return masked_blocks(p, n, mask, 2);
	}
}

CLMUL static __attribute__((noinline))
uint32_t masked_other_sse(const uint8_t *p, size_t n, const uint8_t *mask)
{
	return masked_other(p, n, mask);
}

AVX static __attribute__((noinline))
uint32_t masked_other_avx(const uint8_t *p, size_t n, const uint8_t *mask)
{
	return masked_other(p, n, mask);
}

/* The two frames of a stream of small WRITEs first, each behind one
 * test: the 64-byte WRITE's 8 blocks and the ACK's 3. */
CLMUL static inline __attribute__((always_inline))
uint32_t masked_short(const uint8_t *p, size_t n, const uint8_t *mask,
		      bool avx)
{
	if (n > 112)
		return masked_blocks(p, n, mask, 8);
	if (n - 33 < 16)
		return masked_blocks(p, n, mask, 3);
	return avx ? masked_other_avx(p, n, mask) : masked_other_sse(p, n, mask);
}

CLMUL static __attribute__((noinline))
uint32_t masked_short_sse(const uint8_t *p, size_t n, const uint8_t *mask)
{
	return masked_short(p, n, mask, false);
}

AVX static __attribute__((noinline))
uint32_t masked_short_avx(const uint8_t *p, size_t n,
				 const uint8_t *mask)
{
	return masked_short(p, n, mask, true);
}

CLMUL static __attribute__((noinline))
uint32_t masked_long(const uint8_t *p, size_t n, const uint8_t *mask)
{
	unsigned z = (unsigned)(-n & 15u);
	const uint8_t *q = p + 16 - z;  /* where block 1 starts */
	const uint8_t *m = mask + 32 - z;
	__m128i x1, x2, x3, x4;

	x1 = _mm_or_si128(ld_after_zeros(p, z), ld(mask + 16 - z));
	x2 = _mm_or_si128(ld(q), ld(m));
	x3 = _mm_or_si128(ld(q + 16), ld(m + 16));
	x4 = _mm_or_si128(ld(q + 32), ld(m + 32));
	q += 48;
	n = n + z - 64;
	if (n >= 512 && vclmul_ok())
		return crc32_vclmul_from(x1, x2, x3, x4, q, n);
	return clmul_lanes(x1, x2, x3, x4, q, n);
}

/* Inlined where the ICRC is (link-time optimisation): the AVX call is
 * laid out as the straight path, every x86-64 CPU of the last decade
 * has the encodings (otherwise GCC made it a jump there and one back). */
uint32_t crc32_hw_masked(const uint8_t *p, size_t n, const uint8_t *mask)
{
	if (n > 128)
		return masked_long(p, n, mask);
	if (__builtin_expect(crc32_hw_state > 1, 1))
		return masked_short_avx(p, n, mask);
	return masked_short_sse(p, n, mask);
}

/* The last t bytes of a copy (t = 4, 8, 12 or 16), folded from register
 * c: k (< 16) bytes of p, then t - k bytes that are zeros when sending
 * (the pad the copy writes: all t stored at d) and the frame's own pad
 * when receiving (in: t bytes of p folded, only the k stored).  The block
 * is t bytes after 16 - t zeros with c added into its first four (a zero
 * register stays zero over the zeros; from there, c over the t bytes is
 * the same as 0 over them with c added to the first four).  Small copies
 * through a buffer: no load may reach past what p has (sending, p + k:
 * the source is host memory, the next page may not be there). */
CLMUL static uint32_t copy_tail(uint32_t c, uint8_t *d, const uint8_t *p,
				size_t k, size_t t, bool in)
{
	_Alignas(16) uint8_t b[16] = { 0 };
	uint32_t w;

	memcpy(b + 16 - t, p, in ? t : k);
	memcpy(d, b + 16 - t, in ? k : t);
	memcpy(&w, b + 16 - t, 4);
	w ^= c;
	memcpy(b + 16 - t, &w, 4);
	return reduce(ld(b));
}

/* crc32_hw_copy and crc32_hw_copy_in: the whole blocks copied and
 * folded as they are, then the tail (copy_tail). */
CLMUL static inline __attribute__((always_inline))
uint32_t copy_fold(uint32_t c, uint8_t *dst, const uint8_t *src, size_t n,
		   bool in)
{
	size_t whole = n & ~(size_t)15;
	size_t t = ((n + 3u) & ~(size_t)3) - whole;     /* 0, 4, 8, 12, 16 */

	if (whole >= 512 && vclmul_ok())
		c = crc32_vclmul_copy(c, dst, src, whole);
	else if (whole >= 64)
		c = crc32_hw_state > 1 ? clmul_lanes_copy_avx(c, dst, src, whole)
				       : clmul_lanes_copy_sse(c, dst, src, whole);
	else if (whole)
		c = lane_run(c, dst, src, whole, true);
	if (t)
		c = copy_tail(c, dst + whole, src + whole, n - whole, t, in);
	return c;
}

CLMUL uint32_t crc32_hw_copy(uint32_t c, uint8_t *dst, const uint8_t *src,
			    size_t n)
{
	return copy_fold(c, dst, src, n, false);
}

CLMUL uint32_t crc32_hw_copy_in(uint32_t c, uint8_t *dst, const uint8_t *src,
				size_t n)
{
	return copy_fold(c, dst, src, n, true);
}

#endif
