/* SPDX-License-Identifier: MIT */
/*
 * The RoCEv2 ICRC (IBTA vol. 1 Annex A17.3.3): CRC-32 over 8 bytes of
 * 0xFF standing in for the LRH, the IPv4 header with TOS, TTL and header
 * checksum set to all ones, the UDP header with its checksum all ones, the
 * BTH with byte 4 (FECN, BECN, reserved) all ones, then everything after
 * the BTH up to the ICRC.  The masked fields are the ones routers may
 * rewrite.  Assumes an IPv4 header without options, which is all
 * roce_parse accepts.
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
#define HDRS        (ROCE_L2L4_LEN + ROCE_BTH_LEN)
#define LRH_ONES    8               /* the 0xFF bytes standing in for LRH  */
#define MASKED_LEN  (LRH_ONES + ROCE_IPV4_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN)
#define HEAD        64              /* bytes of folded input built aside   */

/* Set the variant fields of IPv4 + UDP + BTH (ip points at IPv4) to ones. */
static void mask_variant(uint8_t *ip)
{
	ip[1] = 0xff;                           /* TOS                */
	ip[8] = 0xff;                           /* TTL                */
	ip[10] = ip[11] = 0xff;                 /* IPv4 checksum      */
	ip[20 + 6] = ip[20 + 7] = 0xff;         /* UDP checksum       */
	ip[28 + 4] = 0xff;                      /* BTH FECN/BECN/resv */
}

/* The portable way: a masked copy of the headers, then the payload. */
static uint32_t icrc_tables(const uint8_t *frame, uint32_t len)
{
	uint8_t m[MASKED_LEN];
	uint32_t c;

	memset(m, 0xff, LRH_ONES);
	memcpy(m + LRH_ONES, frame + IP, MASKED_LEN - LRH_ONES);
	mask_variant(m + LRH_ONES);
	c = crc32_update(0, m, sizeof(m));
	return crc32_update(c, frame + HDRS, len - HDRS);
}

/*
 * One pass with the CPU's folding, which takes whole 16-byte blocks.  The
 * register starts as all ones, so the first four 0xFF bytes bring it to
 * zero, and a zero register stays zero over zero bytes: the rest of the
 * input may be preceded by up to 15 zero bytes to make whole blocks
 * without changing the result.  The first HEAD bytes of that input (the
 * zeros, four 0xFF, the headers with their variant fields set) are built
 * aside; the rest is folded where it lies in the frame, in the same run.
 */
static uint32_t icrc_fold(const uint8_t *frame, uint32_t len)
{
	/* HEAD + 16: room to copy a fixed HEAD - 4 bytes after any number
	 * of zeros; what lands past HEAD is not folded from here. */
	_Alignas(16) uint8_t head[HEAD + 16];
	uint32_t n = len - IP + 4;              /* 4 x 0xFF, then IPv4 .. end */
	uint32_t whole = (n + 15u) & ~15u;
	uint32_t zeros = whole - n;
	uint32_t h = whole < HEAD ? whole : HEAD;
	uint32_t k = h - zeros - 4;             /* frame bytes in head (>= 44) */
	uint32_t c;

	memset(head, 0, 16);
	memset(head + zeros, 0xff, 4);
	/* A frame longer than HEAD - 4 bytes from IP gets a copy of fixed
	 * size (a few vector moves where a copy of k bytes is a call). */
	if (whole > HEAD)
		memcpy(head + zeros + 4, frame + IP, HEAD - 4);
	else
		memcpy(head + zeros + 4, frame + IP, k);
	mask_variant(head + zeros + 4);
	if (whole > HEAD)
		c = crc32_hw_head(0, head, frame + IP + k, whole - HEAD);
	else
		c = crc32_hw(0, head, h);
	return ~c;
}

/* Returns 0 for a frame too short to carry a BTH. */
uint32_t roce_icrc(const uint8_t *frame, uint32_t len_without_icrc)
{
	if (len_without_icrc < HDRS)
		return 0;
	if (crc32_hw_ok())
		return icrc_fold(frame, len_without_icrc);
	return icrc_tables(frame, len_without_icrc);
}
