/* SPDX-License-Identifier: MIT */
/*
 * The receive parse's two paths against each other (roce_wire.c): the
 * one-pass path of the usual IPv4 frame (plain_roce4, roce_parse_rx's
 * lean fields and roce_parse's full ones) and the general path alone
 * (roce_parse_general: classify, check_ipv4/6, check_bth, every field).
 * Frames from a deterministic PRNG: valid frames of every opcode with
 * random header values and payload lengths, over IPv4 and IPv6, and the
 * same mutated (bits flipped, bytes set, lengths cut or grown), half of
 * the mutants given back a good IPv4 checksum, lengths or ICRC so that
 * the mutation reaches the later checks.  For every frame: the same
 * verdict, the same counter counted (wire_count_drop), and for accepted
 * frames the same value in every field a receive consumer reads
 * (roce_parse_rx's list in roce_wire.h) and, for roce_parse, in every
 * field.  PARSE_DIFF_SEED=N replays another seed, PARSE_DIFF_N=N
 * changes the number of frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "wire/roce_wire.h"
#include "wire/wire.h"
#include "unit.h"

#define BUF 2048
#define OFF_IP  ROCE_ETH_HLEN
#define OFF_UDP (ROCE_ETH_HLEN + ROCE_IPV4_HLEN)

static uint64_t rng;

static uint64_t next(void)              /* xorshift64* */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(next() % n);
}

static uint8_t valid_opcode(void)
{
	for (;;) {
		uint8_t op = (uint8_t)next();

		if (roce_opcodes[op].flags & ROCE_F_VALID)
			return op;
	}
}

/* A random frame of a valid opcode, with random values in every field
 * it carries; returns its length (Ethernet padding sometimes behind). */
static uint32_t random_frame(uint8_t *f)
{
	struct roce_hdrs h;
	uint8_t op = valid_opcode();
	uint32_t n = 0, len;

	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 6; i++) {
		h.dmac[i] = (uint8_t)next();
		h.smac[i] = (uint8_t)next();
	}
	h.ip6 = below(4) == 0;
	h.sip = (uint32_t)next();
	h.dip = (uint32_t)next();
	for (int i = 0; i < 16; i++) {
		h.sip6[i] = (uint8_t)next();
		h.dip6[i] = (uint8_t)next();
	}
	h.flow_label = (uint32_t)next() & 0xfffffu;
	h.tos = (uint8_t)next();
	h.ttl = (uint8_t)next();
	h.sport = (uint16_t)next();
	h.opcode = op;
	h.se = next() & 1;
	h.mig = next() & 1;
	h.tver = below(16) == 0 ? (uint8_t)(1 + below(15)) : 0;
	h.pkey = (uint16_t)next();
	h.fecn = next() & 1;
	h.becn = next() & 1;
	h.ackreq = next() & 1;
	h.dqpn = (uint32_t)next() & ROCE_QPN_MASK;
	h.psn = (uint32_t)next() & ROCE_PSN_MASK;
	h.reth_va = next();
	h.reth_rkey = (uint32_t)next();
	h.reth_len = (uint32_t)next();
	h.aeth_syndrome = (uint8_t)next();
	h.aeth_msn = (uint32_t)next() & ROCE_PSN_MASK;
	h.imm = (uint32_t)next();
	h.atomic_va = next();
	h.atomic_rkey = (uint32_t)next();
	h.atomic_swap_add = next();
	h.atomic_cmp = next();
	h.atomic_orig = next();
	h.deth_qkey = (uint32_t)next();
	h.deth_sqpn = (uint32_t)next() & ROCE_QPN_MASK;
	h.xrc_srqn = (uint32_t)next() & ROCE_QPN_MASK;
	if (roce_opcodes[op].flags & ROCE_F_PAYLOAD)
		n = below(4) == 0 ? 0 : below(300);
	for (uint32_t i = 0; i < n; i++)
		f[roce_hdrs_len(&h) + i] = (uint8_t)next();
	len = roce_build(f, &h, n);
	if (below(4) == 0) {                    /* Ethernet padding */
		uint32_t pad = below(40);

		memset(f + len, 0, pad);
		len += pad;
	}
	return len;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Good IPv4 lengths and checksum again (as far as the frame is IPv4
 * with a 20-byte header), for a frame of len bytes. */
static void refix_ip(uint8_t *f, uint32_t len)
{
	uint32_t s = 0;

	if (len < OFF_UDP + ROCE_UDP_HLEN || f[12] != 0x08 || f[13] != 0x00)
		return;
	if (below(2)) {
		put16(f + OFF_IP + 2, len - OFF_IP);
		put16(f + OFF_UDP + 4, len - OFF_UDP);
	}
	put16(f + OFF_IP + 10, 0);
	for (int i = 0; i < ROCE_IPV4_HLEN; i += 2)
		s += (uint32_t)(f[OFF_IP + i] << 8 | f[OFF_IP + i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	put16(f + OFF_IP + 10, ~s & 0xffffu);
}

/* A good ICRC at the end of the frame's IP packet (or of len bytes). */
static void refix_icrc(uint8_t *f, uint32_t len)
{
	uint32_t end = len, c;

	if (f[12] == 0x08 && f[13] == 0x00 && len >= OFF_UDP)
		end = OFF_IP + (uint32_t)(f[OFF_IP + 2] << 8 | f[OFF_IP + 3]);
	if (end > len || end < ROCE_L2L4_LEN + ROCE_IPV6_EXTRA +
				ROCE_BTH_LEN + ROCE_ICRC_LEN)
		end = len;
	if (end < ROCE_L2L4_LEN + ROCE_IPV6_EXTRA + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return;
	c = roce_icrc(f, end - ROCE_ICRC_LEN);
	for (int i = 0; i < 4; i++)
		f[end - 4 + i] = (uint8_t)(c >> (8 * i));
}

/* One to three changes, then maybe the checks before them made good. */
static uint32_t mutate(uint8_t *f, uint32_t len)
{
	uint32_t k = 1 + below(3);

	for (uint32_t i = 0; i < k; i++) {
		/* mostly the headers: the first 90 bytes */
		uint32_t at = below(4) ? below(90) : below(len ? len : 1);

		switch (below(6)) {
		case 5:         /* the BTH's opcode or its SE/M/pad/TVer byte */
			f[ROCE_L2L4_LEN + (f[12] == 0x86 ? ROCE_IPV6_EXTRA : 0) +
			  below(2)] = (uint8_t)next();
			break;
		case 0:
		case 1:
			f[at] ^= (uint8_t)(1u << below(8));
			break;
		case 2:
			f[at] = (uint8_t)next();
			break;
		case 3:
			len = below(len + 1);   /* cut */
			break;
		default:
			len += below(40);       /* grow (bytes after stay) */
			break;
		}
	}
	if (below(2))
		refix_ip(f, len);
	if (below(2))
		refix_icrc(f, len);
	return len;
}

/* The first field a receive consumer reads that differs, or NULL. */
static const char *rx_fields_differ(const struct roce_hdrs *a,
				    const struct roce_hdrs *b)
{
	uint32_t fl = roce_opcodes[b->opcode].flags;

#define SAME(x) do { if (a->x != b->x) return #x; } while (0)
	if (memcmp(a->dmac, b->dmac, 6) || memcmp(a->smac, b->smac, 6))
		return "dmac/smac";
	SAME(ip6);
	if (b->ip6 ? memcmp(a->sip6, b->sip6, 16) || memcmp(a->dip6, b->dip6, 16)
		   : a->sip != b->sip || a->dip != b->dip)
		return "sip/dip";
	SAME(opcode); SAME(se); SAME(pkey); SAME(dqpn); SAME(ackreq);
	SAME(psn); SAME(payload); SAME(payload_len);
	SAME(deth_qkey); SAME(deth_sqpn); SAME(xrc_srqn);
	if (fl & ROCE_F_RETH) {
		SAME(reth_va); SAME(reth_rkey); SAME(reth_len);
	}
	if (fl & ROCE_F_AETH) {
		SAME(aeth_syndrome); SAME(aeth_msn);
	}
	if (fl & (ROCE_F_IMM | ROCE_F_INV))
		SAME(imm);
	if (fl & ROCE_F_ATOMIC) {
		SAME(atomic_va); SAME(atomic_rkey); SAME(atomic_swap_add);
		SAME(atomic_cmp);
	}
	if (fl & ROCE_F_ATOMICACK)
		SAME(atomic_orig);
	return NULL;
}

/* The first field of all that differs, or NULL (roce_parse). */
static const char *all_fields_differ(const struct roce_hdrs *a,
				     const struct roce_hdrs *b)
{
	const char *d = rx_fields_differ(a, b);

	if (d)
		return d;
	SAME(tos); SAME(ttl); SAME(sport); SAME(flow_label); SAME(mig);
	SAME(pad); SAME(tver); SAME(fecn); SAME(becn);
	SAME(reth_va); SAME(reth_rkey); SAME(reth_len);
	SAME(aeth_syndrome); SAME(aeth_msn); SAME(imm);
	SAME(atomic_va); SAME(atomic_rkey); SAME(atomic_swap_add);
	SAME(atomic_cmp); SAME(atomic_orig);
	return NULL;
#undef SAME
}

static struct snic_core core_fast, core_gen;

/* Both paths on one frame; false (and a line saying why) on the first
 * difference. */
static bool compare(const uint8_t *f, uint32_t len, unsigned i,
		    unsigned *plain)
{
	struct roce_hdrs a, b, c;
	enum roce_parse_result ra, rb, rc;
	const char *d = NULL;

	/* different garbage in each, so a field left unset shows */
	memset(&a, 0xa5, sizeof(a));
	memset(&b, 0x5a, sizeof(b));
	memset(&c, 0x3c, sizeof(c));
	ra = roce_parse_rx(f, len, &a);
	rb = roce_parse_general(f, len, &b);
	rc = roce_parse(f, len, &c);
	wire_count_drop(&core_fast, ra);
	wire_count_drop(&core_gen, rb);
	*plain += roce_parse_is_plain(f, len);
	if (ra != rb || rc != rb)
		d = "verdict";
	else if (memcmp(core_fast.cnt, core_gen.cnt, sizeof(core_gen.cnt)))
		d = "counters";
	else if (rb == ROCE_OK && !(d = rx_fields_differ(&a, &b)))
		d = all_fields_differ(&c, &b);
	if (d) {
		/* the next frame is judged on its own */
		memcpy(core_fast.cnt, core_gen.cnt, sizeof(core_gen.cnt));
		printf("\nparse_diff: frame %u (len %u, opcode 0x%02x): %s "
		       "differs (rx %d, roce_parse %d, general %d)\n", i, len,
		       len > ROCE_L2L4_LEN ? f[ROCE_L2L4_LEN] : 0, d, ra, rc, rb);
	}
	return d == NULL;
}

static void test_parse_diff(void)
{
	static uint8_t f[BUF];
	const char *s = getenv("PARSE_DIFF_SEED"), *sn = getenv("PARSE_DIFF_N");
	unsigned n = sn ? (unsigned)strtoul(sn, NULL, 0) : 50000;
	unsigned plain = 0, verdicts[ROCE_ERR_ICRC + 1] = { 0 }, bad = 0;
	uint64_t seed = s ? strtoull(s, NULL, 0) : 0x5eed0011;

	printf("\nparse_diff: seed %llu, %u frames\n", (unsigned long long)seed, n);
	rng = seed | 1;
	memset(&core_fast, 0, sizeof(core_fast));
	memset(&core_gen, 0, sizeof(core_gen));
	for (unsigned i = 0; i < n; i++) {
		struct roce_hdrs h;
		uint32_t len;

		memset(f, 0, sizeof(f));
		len = random_frame(f);
		if (below(4))
			len = mutate(f, len);
		if (!compare(f, len, i, &plain) && ++bad >= 5)
			break;
		verdicts[roce_parse_general(f, len, &h)]++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* the mix reached both paths and every verdict (else it proves
	 * little) */
	printf("parse_diff: %u one-pass; verdicts", plain);
	for (unsigned v = 0; v <= ROCE_ERR_ICRC; v++)
		printf(" %u", verdicts[v]);
	printf("\n");
	CU_ASSERT(plain >= n / 4);
	CU_ASSERT(n - plain >= n / 4);
	for (unsigned v = 0; v <= ROCE_ERR_ICRC; v++)
		CU_ASSERT(verdicts[v] >= n / 1000);
}

UNIT_SUITE(parse_diff, NULL, NULL,
	   UNIT_TEST(test_parse_diff))
