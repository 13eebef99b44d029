/* SPDX-License-Identifier: MIT */
/*
 * roce_build_tmpl_req (a request's BTH, RETH and ImmDt/IETH written
 * straight from struct roce_req) against roce_build_tmpl (the same fields
 * through struct roce_hdrs and the generic extension-header walk): random
 * requests of every opcode the former takes, random paths and payloads,
 * the two frames byte for byte.  A fixed-seed PRNG: the same cases on
 * every run.
 */
#include <string.h>

#include "unit.h"
#include "wire/roce_wire.h"

#define MAXPAY 600u
#define FRAME (128u + MAXPAY + 8u) /* headers, payload, pad, ICRC */

static uint64_t rng_state;

/* splitmix64: deterministic, no libc state */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The opcodes roce_build_tmpl_req builds: requests with at most a RETH
 * and an ImmDt or IETH (no XRCETH, DETH, AtomicETH). */
static bool req_op(unsigned op)
{
	uint32_t fl = roce_opcodes[op].flags;

	return (fl & ROCE_F_VALID) && (fl & ROCE_F_REQ) &&
	       !(fl & (ROCE_F_XRCETH | ROCE_F_DETH | ROCE_F_ATOMIC |
		       ROCE_F_ATOMIC_WRITE | ROCE_F_AETH));
}

static void random_path(struct roce_hdrs *a)
{
	uint64_t x = rng();

	memset(a, 0, ROCE_HDRS_CLEAR);
	for (unsigned i = 0; i < 6; i++) {
		a->dmac[i] = (uint8_t)(x >> (8 * i));
		a->smac[i] = (uint8_t)(x >> (8 * i + 13));
	}
	x = rng();
	a->sip = (uint32_t)x;
	a->dip = (uint32_t)(x >> 32);
	x = rng();
	a->tos = (uint8_t)x;
	a->ttl = (uint8_t)(x >> 8);
	a->sport = (uint16_t)(x >> 16);
}

static void random_req(struct roce_req *r, uint8_t op)
{
	uint64_t x = rng();

	r->opcode = op;
	r->se = x & 1;
	r->ackreq = (x >> 1) & 1;
	r->dqpn = (uint32_t)(x >> 8);           /* may exceed 24 bits */
	r->psn = (uint32_t)(x >> 40);
	r->va = rng();
	x = rng();
	r->rkey = (uint32_t)x;
	r->dlen = (uint32_t)(x >> 32);
	r->imm = (uint32_t)rng();
}

/* The same request as roce_hdrs, as the general path fills it
 * (pkt_bth_hdrs, sq_fill_ext). */
static void req_to_hdrs(const struct roce_req *r, struct roce_hdrs *h)
{
	uint32_t fl = roce_opcodes[r->opcode].flags;

	memset(h, 0, ROCE_HDRS_CLEAR);
	h->opcode = r->opcode;
	h->se = r->se;
	h->ackreq = r->ackreq;
	h->pkey = ROCE_DEFAULT_PKEY;
	h->dqpn = r->dqpn & ROCE_QPN_MASK;
	h->psn = r->psn & ROCE_PSN_MASK;
	if (fl & ROCE_F_RETH) {
		h->reth_va = r->va;
		h->reth_rkey = r->rkey;
		h->reth_len = r->dlen;
	}
	if (fl & (ROCE_F_IMM | ROCE_F_INV))
		h->imm = r->imm;
}

static void test_tmpl_req_vs_tmpl(void)
{
	static uint8_t want[FRAME], got[FRAME];
	uint8_t ops[256];
	unsigned nops = 0, bad = 0;

	for (unsigned op = 0; op < 256; op++)
		if (req_op(op))
			ops[nops++] = (uint8_t)op;
	CU_ASSERT(nops >= 20); /* RC and UC SEND/WRITE/READ families */
	rng_state = 11;
	for (unsigned i = 0; i < 4000; i++) {
		struct roce_hdrs a, h;
		struct roce_tmpl t;
		struct roce_req r;
		uint8_t op = ops[rng() % nops];
		uint32_t n = 0, la, lb;

		if (roce_opcodes[op].flags & ROCE_F_PAYLOAD)
			n = (uint32_t)(rng() % (i & 1 ? 68 : MAXPAY));
		random_path(&a);
		roce_tmpl_make(&t, &a);
		random_req(&r, op);
		req_to_hdrs(&r, &h);
		memset(want, 0x5c, sizeof(want));
		memset(got, 0xa3, sizeof(got));
		for (uint32_t k = 0; k < n; k++)
			want[roce_hdr_len(op) + k] = got[roce_hdr_len(op) + k] =
				(uint8_t)(k * 31 + i);
		la = roce_build_tmpl(want, &t, &h, n);
		lb = roce_build_tmpl_req(got, &t, &r, n);
		if (la != lb || memcmp(want, got, la))
			bad++;
		/* nothing past the frame written */
		if (got[lb] != 0xa3)
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
}

UNIT_SUITE(req_build, NULL, NULL,
	   UNIT_TEST(test_tmpl_req_vs_tmpl))
