/* SPDX-License-Identifier: MIT */
/*
 * The RoCEv2 ICRC (IBTA vol. 1 Annex A17.3.3): CRC-32 over 8 bytes of
 * 0xFF standing in for the LRH, the IPv4 header with TOS, TTL and header
 * checksum set to all ones, the UDP header with its checksum all ones, the
 * BTH with byte 4 (FECN, BECN, reserved) all ones, then everything after
 * the BTH up to the ICRC; over IPv6 the traffic class, flow label and
 * hop limit are the masked fields (A17.3.3).  The masked fields are the
 * ones routers may rewrite.  Assumes an IPv4 header without options or an
 * IPv6 header without extension headers, which is all roce_parse accepts.
 *
 * Every frame is checked once on receive and computed once on transmit,
 * so for small frames this is the largest single cost of a message: with
 * the CPU's folding (arch/crc32_hw.h) the masked headers and the payload
 * go through in one pass; without it, through wire/crc32.c's tables.
 */
#include <string.h>

#include "arch/crc32_hw.h"
#include "wire/crc32.h"
#include "wire/roce_wire.h"

#define IP          ROCE_ETH_HLEN   /* the ICRC covers the frame from here */
#define LRH_ONES    8               /* the 0xFF bytes standing in for LRH  */
/* Masked headers after the LRH ones: IP + UDP + BTH. */
#define MASKED(l3)  ((l3) + ROCE_UDP_HLEN + ROCE_BTH_LEN)
#define HEAD4       64              /* bytes of folded input built aside   */
#define HEAD6       96              /* (IPv6: 60 masked bytes + 4 + 15)    */
_Static_assert(HEAD6 >= HEAD4 + 16, "icrc_fold's head holds the IPv4 fixed copy");

/* The IP header's length by the EtherType (roce_parse accepted no other). */
static uint32_t l3_len(const uint8_t *frame)
{
	return frame[12] == 0x86 && frame[13] == 0xdd ? ROCE_IPV6_HLEN
						       : ROCE_IPV4_HLEN;
}

/* Set the variant fields of IP + UDP + BTH (ip points at the IP header)
 * to ones: IPv4 TOS, TTL and checksum; IPv6 traffic class,
 * flow label and hop limit; the UDP checksum; BTH byte 4 (A17.3.3). */
static inline __attribute__((always_inline))
void mask_variant(uint8_t *ip, uint32_t l3)
{
	if (l3 == ROCE_IPV6_HLEN) {
		ip[0] |= 0x0f;                  /* version kept, TC high  */
		ip[1] = ip[2] = ip[3] = 0xff;   /* TC low, flow label     */
		ip[7] = 0xff;                   /* hop limit              */
	} else {
		ip[1] = 0xff;                   /* TOS                    */
		ip[8] = 0xff;                   /* TTL                    */
		ip[10] = ip[11] = 0xff;         /* IPv4 checksum          */
	}
	ip[l3 + 6] = ip[l3 + 7] = 0xff;         /* UDP checksum       */
	ip[l3 + ROCE_UDP_HLEN + 4] = 0xff;      /* BTH FECN/BECN/resv */
}

/* The portable way: a masked copy of the headers, then the payload. */
static __attribute__((noinline)) uint32_t icrc_tables(const uint8_t *frame, uint32_t len, uint32_t l3)
{
	uint8_t m[LRH_ONES + MASKED(ROCE_IPV6_HLEN)];
	uint32_t n = LRH_ONES + MASKED(l3);
	uint32_t c;

	memset(m, 0xff, LRH_ONES);
	memcpy(m + LRH_ONES, frame + IP, n - LRH_ONES);
	mask_variant(m + LRH_ONES, l3);
	c = crc32_update(0, m, n);
	return crc32_update(c, frame + IP + MASKED(l3), len - IP - MASKED(l3));
}

/*
 * One pass with the CPU's folding, which takes whole 16-byte blocks.  The
 * register starts as all ones, so the first four 0xFF bytes bring it to
 * zero, and a zero register stays zero over zero bytes: the rest of the
 * input may be preceded by up to 15 zero bytes to make whole blocks
 * without changing the result.  The first HEAD4 (IPv6: HEAD6) bytes of
 * that input (the zeros, four 0xFF, the headers with their variant fields
 * set) are built aside; the rest is folded where it lies in the frame, in
 * the same run (IPv6: a second run from the head's register).
 */
static __attribute__((noinline))
uint32_t icrc_fold6(const uint8_t *frame, uint32_t len, uint32_t l3)
{
	/* HEAD6 >= HEAD4 + 16: room for the IPv4 fixed-size copy below after
	 * any number of zeros; what lands past HEAD4 is not folded from here. */
	_Alignas(16) uint8_t head[HEAD6];
	uint32_t hmax = l3 == ROCE_IPV6_HLEN ? HEAD6 : HEAD4;
	uint32_t n = len - IP + 4;              /* 4 x 0xFF, then IP .. end */
	uint32_t whole = (n + 15u) & ~15u;
	uint32_t zeros = whole - n;
	uint32_t h = whole < hmax ? whole : hmax;
	uint32_t k = h - zeros - 4;             /* frame bytes in head (>= MASKED) */
	uint32_t c;

	memset(head, 0, 16);
	memset(head + zeros, 0xff, 4);
	/* An IPv4 frame longer than HEAD4 - 4 bytes from IP gets a copy of
	 * fixed size (a few vector moves where a copy of k bytes is a call). */
	if (hmax == HEAD4 && whole > HEAD4)
		memcpy(head + zeros + 4, frame + IP, HEAD4 - 4);
	else
		memcpy(head + zeros + 4, frame + IP, k);
	mask_variant(head + zeros + 4, l3);
	if (whole <= hmax)
		c = crc32_hw(0, head, h);
	else if (hmax == HEAD4)
		c = crc32_hw_head(0, head, frame + IP + k, whole - HEAD4);
	else
		c = crc32_hw(crc32_hw(0, head, HEAD6), frame + IP + k,
			     whole - HEAD6);
	return ~c;
}

/* IPv4: the run starts 4 bytes before the IP header, at bytes that the
 * LRH's ones replace; these and the variant fields (mask_variant's, at
 * the same offsets) are ORed in where the run is folded, with no copy.
 * The mask after a block of zeros (crc32_hw_masked's layout). */
#define M4(off) [16 + 4 + (off)] = 0xff
static const uint8_t icrc4_ones[CRC32_HW_MASK_LEN] = {
	[16] = 0xff, 0xff, 0xff, 0xff,
	M4(1), M4(8), M4(10), M4(11),           /* TOS, TTL, checksum  */
	M4(ROCE_IPV4_HLEN + 6), M4(ROCE_IPV4_HLEN + 7),    /* UDP csum */
	M4(ROCE_IPV4_HLEN + ROCE_UDP_HLEN + 4), /* BTH FECN/BECN/resv  */
};
#undef M4

/* IPv4 with the CPU's folding: the masked run, no copy. */
static inline __attribute__((always_inline))
uint32_t icrc4_fold(const uint8_t *frame, uint32_t len_without_icrc)
{
	return ~crc32_hw_masked(frame + IP - 4, len_without_icrc - IP + 4,
				icrc4_ones);
}

/* Every other frame: before the CPU was asked (the first ICRC), without
 * the folding (the tables), and IPv6.  Out of line, so that what is left
 * of roce_icrc_ip is small enough for the link-time optimiser to inline
 * it where its callers (frame parse and build) are. */
static __attribute__((noinline))
uint32_t icrc_other(const uint8_t *frame, uint32_t len_without_icrc, bool ip6)
{
	if (!crc32_hw_ok())
		return icrc_tables(frame, len_without_icrc,
				   ip6 ? ROCE_IPV6_HLEN : ROCE_IPV4_HLEN);
	if (ip6)
		return icrc_fold6(frame, len_without_icrc, ROCE_IPV6_HLEN);
	return icrc4_fold(frame, len_without_icrc);
}

/* The common frame, IPv4 on a CPU with the folding, in two tests and one
 * call (arch/<cpu>/crc32_hw.c's short run for a small frame). */
uint32_t roce_icrc_ip(const uint8_t *frame, uint32_t len_without_icrc,
		      bool ip6)
{
	if (ip6 || __builtin_expect(crc32_hw_state <= 0, 0))
		return icrc_other(frame, len_without_icrc, ip6);
	return icrc4_fold(frame, len_without_icrc);
}

uint32_t roce_icrc4_hdrs(const uint8_t *frame, uint32_t hdr_len)
{
	return crc32_hw_masked(frame + IP - 4, hdr_len - IP + 4, icrc4_ones);
}

/* Returns 0 for a frame too short to carry a BTH. */
uint32_t roce_icrc(const uint8_t *frame, uint32_t len_without_icrc)
{
	uint32_t l3;

	if (len_without_icrc < ROCE_L2L4_LEN + ROCE_BTH_LEN)
		return 0;
	l3 = l3_len(frame);
	if (len_without_icrc < IP + MASKED(l3))
		return 0;
	return roce_icrc_ip(frame, len_without_icrc, l3 == ROCE_IPV6_HLEN);
}
