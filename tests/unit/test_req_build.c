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

#include "core/core.h"
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

/* core_pkt_align: a frame's start moved forward (< 64 bytes, cap with
 * it) so that the payload after hl header bytes begins on a 64-byte
 * line; not moved when the buffer would lack need bytes after it. */
static void test_pkt_align(void)
{
	_Alignas(64) static uint8_t buf[256];
	struct snic_pkt p;

	for (uint32_t start = 0; start < 64; start++) {
		for (uint32_t hl = 54; hl <= 110; hl += 4) {
			memset(&p, 0, sizeof(p));
			p.data = buf + start;
			p.cap = (uint16_t)(sizeof(buf) - start);
			core_pkt_align(&p, hl, 100);
			CU_ASSERT_EQUAL((uintptr_t)(p.data + hl) & 63u, 0);
			CU_ASSERT_TRUE(p.data >= buf + start &&
				       p.data < buf + start + 64);
			CU_ASSERT_EQUAL(p.data + p.cap, buf + sizeof(buf));
		}
	}
	/* no room: 70 header bytes at offset 0 need a move of 58, and
	 * need + 58 > cap */
	p.data = buf;
	p.cap = 150;
	core_pkt_align(&p, 70, 100);
	CU_ASSERT_PTR_EQUAL(p.data, buf);
	CU_ASSERT_EQUAL(p.cap, 150);
	/* exactly enough: moved */
	p.cap = 158;
	core_pkt_align(&p, 70, 100);
	CU_ASSERT_PTR_EQUAL(p.data, buf + 58);
	CU_ASSERT_EQUAL(p.cap, 100);
	/* already on a line: nothing to move */
	p.data = buf + 58;
	p.cap = 100;
	core_pkt_align(&p, 70, 100);
	CU_ASSERT_PTR_EQUAL(p.data, buf + 58);
	CU_ASSERT_EQUAL(p.cap, 100);
}

UNIT_SUITE(req_build, NULL, NULL,
	   UNIT_TEST(test_tmpl_req_vs_tmpl),
	   UNIT_TEST(test_pkt_align))
