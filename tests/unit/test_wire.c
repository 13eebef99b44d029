/* SPDX-License-Identifier: MIT */
/* RoCEv2 framing (roce_wire.c) and CRC-32 (crc32.c). */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/crc32_hw.h"
#include "wire/crc32.h"
#include "wire/roce_wire.h"
#include "fake_frames.h"
#include "unit.h"

#define BUF 2048
#define OFF_IP    ROCE_ETH_HLEN
#define OFF_UDP   (ROCE_ETH_HLEN + ROCE_IPV4_HLEN)
#define OFF_BTH   ROCE_L2L4_LEN

/* ---- helpers ---- */

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t ip_csum(const uint8_t *ip)
{
	uint32_t s = 0;

	for (int i = 0; i < ROCE_IPV4_HLEN; i += 2)
		if (i != 10)
			s += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void fix_ip_csum(uint8_t *f)
{
	put16(f + OFF_IP + 10, ip_csum(f + OFF_IP));
}

static void put_icrc(uint8_t *f, uint32_t len)
{
	uint32_t c = roce_icrc(f, len - ROCE_ICRC_LEN);

	for (int i = 0; i < 4; i++)
		f[len - 4 + i] = (uint8_t)(c >> (8 * i));
}

/* Make f a consistent len-byte frame: IP and UDP lengths, IP checksum and
 * ICRC rewritten, so only the property under test is wrong. */
static void reframe(uint8_t *f, uint32_t len)
{
	put16(f + OFF_IP + 2, len - OFF_IP);
	put16(f + OFF_UDP + 4, len - OFF_UDP);
	fix_ip_csum(f);
	put_icrc(f, len);
}

/* Headers with a distinct value in every field the opcode carries. */
static void fill_hdrs(struct roce_hdrs *h, uint8_t op)
{
	uint32_t fl = roce_opcodes[op].flags;
	static const uint8_t imm[4] = { 0xa1, 0xb2, 0xc3, 0xd4 };

	memset(h, 0, sizeof(*h));
	memcpy(h->dmac, "\x02\x11\x22\x33\x44\x55", 6);
	memcpy(h->smac, "\x02\x66\x77\x88\x99\xaa", 6);
	h->sip = 0xc0a80001;
	h->dip = 0xc0a80102;
	h->tos = 0x02;
	h->ttl = 17;
	h->sport = 0xc123;
	h->opcode = op;
	h->se = 1;
	h->mig = 1;
	h->pkey = 0x8001;
	h->fecn = 1;
	h->becn = 1;
	h->ackreq = 1;
	h->dqpn = 0xabcdef;
	h->psn = 0xfedcba;
	if (fl & ROCE_F_RETH) {
		h->reth_va = 0x0123456789abcdefull;
		h->reth_rkey = 0xdeadbeef;
		h->reth_len = 0x10000;
	}
	if (fl & ROCE_F_AETH) {
		h->aeth_syndrome = ROCE_AETH_NAK | ROCE_NAK_REM_OP_ERR;
		h->aeth_msn = 0x123456;
	}
	if (fl & (ROCE_F_IMM | ROCE_F_INV))
		memcpy(&h->imm, imm, 4);
	if (fl & ROCE_F_ATOMIC) {
		h->atomic_va = 0x1020304050607080ull;
		h->atomic_rkey = 0xcafef00d;
		h->atomic_swap_add = 0x1111222233334444ull;
		h->atomic_cmp = 0x5555666677778888ull;
	}
	if (fl & ROCE_F_ATOMICACK)
		h->atomic_orig = 0x99aabbccddeeff00ull;
	if (fl & ROCE_F_DETH) {
		h->deth_qkey = 0x80010000;
		h->deth_sqpn = 0x654321;
	}
	if (fl & ROCE_F_XRCETH)
		h->xrc_srqn = 0xabcdef;
}

static void assert_hdrs_equal(const struct roce_hdrs *a,
			      const struct roce_hdrs *b)
{
	CU_ASSERT(memcmp(a->dmac, b->dmac, 6) == 0);
	CU_ASSERT(memcmp(a->smac, b->smac, 6) == 0);
	CU_ASSERT_EQUAL(a->sip, b->sip);
	CU_ASSERT_EQUAL(a->dip, b->dip);
	CU_ASSERT_EQUAL(a->tos, b->tos);
	CU_ASSERT_EQUAL(a->ttl, b->ttl);
	CU_ASSERT_EQUAL(a->sport, b->sport);
	CU_ASSERT_EQUAL(a->opcode, b->opcode);
	CU_ASSERT_EQUAL(a->se, b->se);
	CU_ASSERT_EQUAL(a->mig, b->mig);
	CU_ASSERT_EQUAL(a->pad, b->pad);
	CU_ASSERT_EQUAL(a->tver, b->tver);
	CU_ASSERT_EQUAL(a->pkey, b->pkey);
	CU_ASSERT_EQUAL(a->fecn, b->fecn);
	CU_ASSERT_EQUAL(a->becn, b->becn);
	CU_ASSERT_EQUAL(a->ackreq, b->ackreq);
	CU_ASSERT_EQUAL(a->dqpn, b->dqpn);
	CU_ASSERT_EQUAL(a->psn, b->psn);
	CU_ASSERT_EQUAL(a->reth_va, b->reth_va);
	CU_ASSERT_EQUAL(a->reth_rkey, b->reth_rkey);
	CU_ASSERT_EQUAL(a->reth_len, b->reth_len);
	CU_ASSERT_EQUAL(a->aeth_syndrome, b->aeth_syndrome);
	CU_ASSERT_EQUAL(a->aeth_msn, b->aeth_msn);
	CU_ASSERT_EQUAL(a->imm, b->imm);
	CU_ASSERT_EQUAL(a->atomic_va, b->atomic_va);
	CU_ASSERT_EQUAL(a->atomic_rkey, b->atomic_rkey);
	CU_ASSERT_EQUAL(a->atomic_swap_add, b->atomic_swap_add);
	CU_ASSERT_EQUAL(a->atomic_cmp, b->atomic_cmp);
	CU_ASSERT_EQUAL(a->atomic_orig, b->atomic_orig);
	CU_ASSERT_EQUAL(a->deth_qkey, b->deth_qkey);
	CU_ASSERT_EQUAL(a->deth_sqpn, b->deth_sqpn);
	CU_ASSERT_EQUAL(a->xrc_srqn, b->xrc_srqn);
	CU_ASSERT_PTR_EQUAL(a->payload, b->payload);
	CU_ASSERT_EQUAL(a->payload_len, b->payload_len);
}

/* Build opcode op with n payload bytes into f; returns the length. */
static uint32_t build_op(uint8_t *f, uint8_t op, uint32_t n)
{
	struct roce_hdrs h;

	fill_hdrs(&h, op);
	for (uint32_t i = 0; i < n; i++)
		f[roce_hdr_len(op) + i] = (uint8_t)(i * 7 + 3);
	return roce_build(f, &h, n);
}

/* Parse a copy placed at the very end of a buffer, so that a read past
 * the frame runs into the sanitizer's redzone (make asan). */
static enum roce_parse_result parse(const uint8_t *f, uint32_t len)
{
	static uint8_t tail[BUF];
	struct roce_hdrs h;

	memcpy(tail + BUF - len, f, len);
	return roce_parse(tail + BUF - len, len, &h);
}

/* ---- CRC-32 ---- */

static void test_crc32_vectors(void)
{
	static const char fox[] =
		"The quick brown fox jumps over the lazy dog";
	uint32_t c;

	CU_ASSERT_EQUAL(crc32_update(0, "123456789", 9), CRC32_CHECK_VALUE);
	CU_ASSERT_EQUAL(crc32_update(0, "123456789", 9), 0xCBF43926u);
	CU_ASSERT_EQUAL(crc32_update(0, "", 0), 0);
	CU_ASSERT_EQUAL(crc32_update(0, fox, sizeof(fox) - 1), 0x414FA339u);
	/* Chaining equals one pass. */
	c = crc32_update(0, "1234", 4);
	CU_ASSERT_EQUAL(crc32_update(c, "56789", 5), 0xCBF43926u);
	/* ~CRC(8 x 0xFF): the ICRC seed used by Linux rxe (PLATFORM-NOTES). */
	CU_ASSERT_EQUAL(~crc32_update(0, "\xff\xff\xff\xff\xff\xff\xff\xff",
				      8), 0xdebb20e3u);
}

/* Every alignment and many lengths against the bitwise reference: checks
 * the slice-by-8 tables and the head/tail handling. */
static void test_crc32_vs_reference(void)
{
	static uint8_t buf[4096 + 16];
	uint32_t x = 12345;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	/* every length across the table / carry-less multiplication switch
	 * (128 bytes) and every lane/fold boundary up to 1 KiB */
	for (size_t off = 0; off < 16; off++)
		for (size_t n = 0; n < 1040; n++)
			CU_ASSERT_EQUAL(crc32_update(0, buf + off, n),
					fcrc32_bits(buf + off, n));
	CU_ASSERT_EQUAL(crc32_update(0, buf + 3, 4096),
			fcrc32_bits(buf + 3, 4096));
	/* chaining through both paths */
	CU_ASSERT_EQUAL(crc32_update(crc32_update(0, buf, 77), buf + 77, 3000),
			fcrc32_bits(buf, 3077));
}

/* crc32_hw_copy (a payload copied with its ICRC folded in) against the
 * table CRC over the same bytes: the register from any start value over
 * the bytes and their zero pad to a multiple of 4; every length to 700
 * (every 16/64/256/512-byte boundary of its SSE and AVX-512 paths), then
 * a stride to 5,000, at every source and destination alignment mod 4 and
 * some odd ones; the copy exact, the pad zeros, nothing written around. */
static void copy_check(const uint8_t *src, uint32_t n, uint32_t doff,
		       uint32_t c)
{
	static uint8_t dst[5200], want[5200];
	uint32_t pad = -n & 3u;

	memset(dst, 0xa7, sizeof(dst));
	memset(want, 0xa7, sizeof(want));
	memcpy(want + doff, src, n);
	memset(want + doff + n, 0, pad);
	CU_ASSERT_EQUAL(crc32_hw_copy(c, dst + doff, src, n),
			~crc32_update(~c, want + doff, n + pad));
	CU_ASSERT_EQUAL(memcmp(dst, want, sizeof(dst)), 0);
}

static void test_crc32_copy_vs_reference(void)
{
	static const uint32_t offs[] = { 0, 1, 2, 3, 5, 13, 63 };
	static uint8_t buf[5200];
	uint32_t x = 777;

	if (!crc32_hw_ok())
		return; /* never called without the CPU's folding */
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	/* the CPU's best, then (x86-64) its SSE-only variant */
	for (int st = crc32_hw_state; st > 0; st = st > 1 ? 1 : 0) {
		crc32_hw_state = st;
		for (uint32_t n = 0; n <= 5000; n += n < 700 ? 1 : 61)
			for (uint32_t so = 0; so < 7; so++) {
				x = x * 1103515245u + 12345u;
				copy_check(buf + offs[so], n,
					   offs[(so + n) % 7], x);
			}
		copy_check(buf, 4096, 0, 0);
		copy_check(buf + 1, 4096, 3, 0xffffffffu);
	}
	crc32_hw_probe();
}

/* The copy never reads past its source: the source ends at a page whose
 * next page is not mapped (host memory may end there). */
static void test_crc32_copy_no_overread(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m, dst[600];

	if (!crc32_hw_ok())
		return;
	m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CU_ASSERT_FATAL(m != MAP_FAILED);
	CU_ASSERT_EQUAL_FATAL(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	memset(m, 0x5a, (size_t)pg);
	for (uint32_t n = 0; n <= 560; n++) {
		const uint8_t *src = m + pg - n;
		uint32_t pad = -n & 3u;
		uint8_t want[600] = { 0 };

		memcpy(want, src, n);
		CU_ASSERT_EQUAL(crc32_hw_copy(1234, dst, src, n),
				~crc32_update(~1234u, want, n + pad));
	}
	munmap(m, 2 * (size_t)pg);
}

/* ---- opcode table ---- */

static void test_opcode_table(void)
{
	for (unsigned op = 0; op < 256; op++) {
		const struct roce_opcode_info *o = &roce_opcodes[op];
		uint32_t fl = o->flags;
		unsigned ext = 0;

		if (!(fl & ROCE_F_VALID)) {
			CU_ASSERT_EQUAL(fl, 0);
			continue;
		}
		CU_ASSERT_PTR_NOT_NULL(o->name);
		ext += fl & ROCE_F_RETH ? ROCE_RETH_LEN : 0;
		ext += fl & ROCE_F_AETH ? ROCE_AETH_LEN : 0;
		ext += fl & (ROCE_F_IMM | ROCE_F_INV) ? ROCE_IMM_LEN : 0;
		ext += fl & ROCE_F_ATOMIC ? ROCE_ATOMIC_LEN : 0;
		ext += fl & ROCE_F_ATOMICACK ? ROCE_ATOMICACK_LEN : 0;
		ext += fl & ROCE_F_DETH ? ROCE_DETH_LEN : 0;
		ext += fl & ROCE_F_XRCETH ? ROCE_XRCETH_LEN : 0;
		CU_ASSERT_EQUAL(o->ext_len, ext);
		CU_ASSERT(!!(fl & ROCE_F_REQ) != !!(fl & ROCE_F_RESP));
	}
	/* RC 0x00-0x14, 0x16, 0x17; UC SEND/WRITE 0x20-0x2b; UD 0x64/0x65;
	 * XRC 0xa0-0xb4 (Annex A14: RC's, requests with the XRCETH). */
	for (unsigned op = 0; op <= 0x17; op++)
		CU_ASSERT_EQUAL(!!(roce_opcodes[op].flags & ROCE_F_VALID),
				op != 0x15);
	for (unsigned op = 0x20; op < 0x40; op++)
		CU_ASSERT_EQUAL(!!(roce_opcodes[op].flags & ROCE_F_VALID),
				op <= 0x2b);
	for (unsigned op = 0x40; op < 256; op++)
		CU_ASSERT_EQUAL(!!(roce_opcodes[op].flags & ROCE_F_VALID),
				op == 0x64 || op == 0x65 || (op >= 0xa0 && op <= 0xb4));
	for (unsigned op = 0xa0; op <= 0xb4; op++)
		CU_ASSERT_EQUAL(!!(roce_opcodes[op].flags & ROCE_F_XRCETH),
				!!(roce_opcodes[op].flags & ROCE_F_REQ));
	CU_ASSERT_STRING_EQUAL(roce_opcodes[0x0a].name, "RC_WRITE_ONLY");
	CU_ASSERT_STRING_EQUAL(roce_opcodes[0x2a].name, "UC_WRITE_ONLY");
	CU_ASSERT_EQUAL(roce_opcodes[ROCE_RC_ATOMIC_ACK].ext_len, 12);
	CU_ASSERT_EQUAL(roce_opcodes[ROCE_RC_WRITE_ONLY_IMM].ext_len, 20);
	CU_ASSERT_EQUAL(roce_opcodes[ROCE_UD_SEND_ONLY_IMM].ext_len, 12);
	CU_ASSERT(roce_opcodes[ROCE_RC_SEND_ONLY_INV].flags & ROCE_F_INV);
}

/* ---- round trips ---- */

static void roundtrip(uint8_t op, uint32_t n)
{
	static uint8_t f[BUF];
	struct roce_hdrs in, out;
	uint32_t len;

	memset(f, 0xee, sizeof(f));
	len = build_op(f, op, n);
	fill_hdrs(&in, op);
	CU_ASSERT_EQUAL(len, roce_frame_len(&in, n));
	CU_ASSERT_EQUAL(len, roce_hdr_len(op) + ((n + 3u) & ~3u) + ROCE_ICRC_LEN);
	CU_ASSERT_EQUAL(len % 2, 0);
	in.pad = (uint8_t)(-n & 3u);
	in.payload = f + roce_hdr_len(op);
	in.payload_len = n;
	memset(&out, 0x5a, sizeof(out));
	CU_ASSERT_EQUAL_FATAL(roce_parse(f, len, &out), ROCE_OK);
	assert_hdrs_equal(&in, &out);
	for (uint32_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(f[roce_hdr_len(op) + i], (uint8_t)(i * 7 + 3));
	for (uint32_t i = n; i < n + in.pad; i++)
		CU_ASSERT_EQUAL(f[roce_hdr_len(op) + i], 0);
}

/* Every valid opcode (RC, UC, UD classes), each pad count. */
static void test_roundtrip_all_opcodes(void)
{
	static const uint32_t sizes[] = { 0, 1, 2, 3, 4, 61, 1024, 1025 };

	for (unsigned op = 0; op < 256; op++) {
		uint32_t fl = roce_opcodes[op].flags;

		if (!(fl & ROCE_F_VALID))
			continue;
		if (!(fl & ROCE_F_PAYLOAD)) {
			roundtrip((uint8_t)op, 0);
			continue;
		}
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			roundtrip((uint8_t)op, sizes[i]);
	}
}

static void test_build_defaults(void)
{
	static uint8_t f[BUF];
	struct roce_hdrs h;

	fill_hdrs(&h, ROCE_RC_ACK);
	h.ttl = 0;                              /* 0 means default 64 */
	roce_build(f, &h, 0);
	CU_ASSERT_EQUAL(f[OFF_IP], 0x45);
	CU_ASSERT_EQUAL(f[OFF_IP + 6], 0x40);   /* DF */
	CU_ASSERT_EQUAL(f[OFF_IP + 8], 64);
	CU_ASSERT_EQUAL(f[OFF_IP + 9], 17);
	CU_ASSERT_EQUAL(f[OFF_UDP + 2] << 8 | f[OFF_UDP + 3], 4791);
	CU_ASSERT_EQUAL(f[OFF_UDP + 6] | f[OFF_UDP + 7], 0);
}

/* The header template (roce_tmpl_make + roce_build_tmpl) gives the frame
 * roce_build gives, byte for byte: every IPv4 opcode, payload sizes
 * around the pad and the MTU, and paths whose checksum sums carry
 * differently (addresses, TOS, TTL 0 = 64). */
static void test_build_tmpl_matches_build(void)
{
	static const uint32_t sizes[] = { 0, 1, 3, 4, 61, 1024, 4093 };
	static const uint32_t dips[] = { 0xc0a80102, 0xffffffff, 0x0a000001 };
	static uint8_t want[BUF + 4096], got[BUF + 4096];
	struct roce_tmpl t;
	struct roce_hdrs h;

	for (unsigned v = 0; v < 3; v++) {
		for (unsigned op = 0; op < 256; op++) {
			uint32_t fl = roce_opcodes[op].flags;
			unsigned ns = fl & ROCE_F_PAYLOAD ? 7 : 1;

			if (!(fl & ROCE_F_VALID))
				continue;
			fill_hdrs(&h, (uint8_t)op);
			h.dip = dips[v];
			h.tos = (uint8_t)(0x5a * v);
			h.ttl = (uint8_t)(v == 1 ? 0 : 255 - v);
			memset(&t, 0xee, sizeof(t));
			roce_tmpl_make(&t, &h);
			CU_ASSERT(t.valid);
			for (unsigned i = 0; i < ns; i++) {
				uint32_t a, b;

				memset(want, 0x5c, sizeof(want));
				memset(got, 0xa3, sizeof(got));
				memset(want + roce_hdr_len((uint8_t)op), 0x77, sizes[i]);
				memset(got + roce_hdr_len((uint8_t)op), 0x77, sizes[i]);
				a = roce_build(want, &h, sizes[i]);
				b = roce_build_tmpl(got, &t, &h, sizes[i]);
				CU_ASSERT_EQUAL(a, b);
				CU_ASSERT_EQUAL(memcmp(want, got, a), 0);
			}
		}
	}
}

/* Ethernet pads frames to 60 bytes: bytes beyond the IP length are not
 * part of the packet. */
static void test_parse_eth_padding(void)
{
	static uint8_t f[BUF];
	struct roce_hdrs h;
	uint32_t len = build_op(f, ROCE_RC_SEND_ONLY, 0);

	CU_ASSERT_EQUAL(len, 58);
	memset(f + len, 0, 2);
	CU_ASSERT_EQUAL(roce_parse(f, 60, &h), ROCE_OK);
	CU_ASSERT_EQUAL(h.payload_len, 0);
	len = build_op(f, ROCE_RC_ACK, 0);
	memset(f + len, 0xaa, 30);
	CU_ASSERT_EQUAL(roce_parse(f, len + 30, &h), ROCE_OK);
	CU_ASSERT_EQUAL(h.opcode, ROCE_RC_ACK);
}

/* ---- ICRC ---- */

/*
 * Known-answer vector, independent of this code: built with Debian's
 * python3-scapy 2.5 (whose contrib.roce ICRC matches a ConnectX-4 Lx
 * capture), /usr/bin/python3:
 *
 *   p = (Ether(dst="02:00:00:00:00:0b", src="02:00:00:00:00:0a") /
 *        IP(src="10.0.0.1", dst="10.0.0.2", tos=0x02, ttl=63, id=0,
 *           flags="DF") /
 *        UDP(sport=0xc011, dport=4791, chksum=0) /
 *        BTH(opcode=0x04, solicited=1, padcount=2, pkey=0xffff, fecn=1,
 *            dqpn=0x000022, ackreq=1, psn=0x123456) /
 *        Raw(b"snic-wire\0" + b"\0\0"))
 *   raw(p)
 *
 * The last four bytes (c8 39 6e b5) are scapy's ICRC; TOS, TTL and FECN
 * are non-zero so the masking is exercised.
 */
static const uint8_t icrc_vec[70] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a,
	0x08, 0x00, 0x45, 0x02, 0x00, 0x38, 0x00, 0x00, 0x40, 0x00, 0x3f, 0x11,
	0x27, 0xb1, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x11,
	0x12, 0xb7, 0x00, 0x24, 0x00, 0x00, 0x04, 0xa0, 0xff, 0xff, 0x80, 0x00,
	0x00, 0x22, 0x80, 0x12, 0x34, 0x56, 0x73, 0x6e, 0x69, 0x63, 0x2d, 0x77,
	0x69, 0x72, 0x65, 0x00, 0x00, 0x00, 0xc8, 0x39, 0x6e, 0xb5,
};

static void test_icrc_known_vector(void)
{
	static uint8_t f[BUF];
	struct roce_hdrs h;

	CU_ASSERT_EQUAL(roce_icrc(icrc_vec, 66), 0xb56e39c8u);
	CU_ASSERT_EQUAL_FATAL(roce_parse(icrc_vec, 70, &h), ROCE_OK);
	CU_ASSERT_EQUAL(h.opcode, ROCE_RC_SEND_ONLY);
	CU_ASSERT_EQUAL(h.dqpn, 0x22);
	CU_ASSERT_EQUAL(h.psn, 0x123456);
	CU_ASSERT_EQUAL(h.pad, 2);
	CU_ASSERT_EQUAL(h.payload_len, 10);
	CU_ASSERT(memcmp(h.payload, "snic-wire", 10) == 0);
	/* roce_build reproduces scapy's frame byte for byte. */
	memcpy(f + roce_hdr_len(h.opcode), h.payload, h.payload_len);
	CU_ASSERT_EQUAL(roce_build(f, &h, h.payload_len), 70);
	CU_ASSERT(memcmp(f, icrc_vec, 70) == 0);
}

/* A17.3.3: TOS, TTL, IP checksum, UDP checksum and BTH byte 4 are masked;
 * everything else counts. */
static void test_icrc_masking(void)
{
	static uint8_t f[BUF];
	static const unsigned masked[] = { OFF_IP + 1, OFF_IP + 8, OFF_IP + 10,
					   OFF_IP + 11, OFF_UDP + 6,
					   OFF_UDP + 7, OFF_BTH + 4 };
	uint32_t ref;

	memcpy(f, icrc_vec, sizeof(icrc_vec));
	ref = roce_icrc(f, 66);
	for (unsigned i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
		f[masked[i]] ^= 0x5a;
		CU_ASSERT_EQUAL(roce_icrc(f, 66), ref);
	}
	memcpy(f, icrc_vec, sizeof(icrc_vec));
	for (unsigned i = OFF_IP; i < 66; i++) {
		bool is_masked = false;

		for (unsigned k = 0; k < sizeof(masked) / sizeof(*masked); k++)
			is_masked |= masked[k] == i;
		if (is_masked)
			continue;
		f[i] ^= 0x01;
		CU_ASSERT_NOT_EQUAL(roce_icrc(f, 66), ref);
		f[i] ^= 0x01;
	}
	/* Ethernet header is not covered. */
	f[0] ^= 0xff;
	CU_ASSERT_EQUAL(roce_icrc(f, 66), ref);
}

/* The ICRC as A17.3.3 spells it, byte by byte with the bitwise CRC: 8 x
 * 0xFF, the masked IPv4 + UDP + BTH, the rest.  roce_icrc folds this in
 * one pass with zero padding in front; every length and alignment of the
 * padding must give the same value. */
static uint32_t icrc_ref(const uint8_t *f, uint32_t len)
{
	static uint8_t m[8 + BUF];
	uint32_t n = 8 + len - OFF_IP;

	memset(m, 0xff, 8);
	memcpy(m + 8, f + OFF_IP, len - OFF_IP);
	m[8 + 1] = m[8 + 8] = m[8 + 10] = m[8 + 11] = 0xff;
	m[8 + 26] = m[8 + 27] = m[8 + 32] = 0xff;
	return fcrc32_bits(m, n);
}

static void test_icrc_every_length(void)
{
	static uint8_t f[BUF];
	uint32_t x = 12345;

	for (uint32_t i = 0; i < sizeof(f); i++) {
		x = x * 1103515245u + 12345u;
		f[i] = (uint8_t)(x >> 16);
	}
	for (uint32_t len = ROCE_L2L4_LEN + ROCE_BTH_LEN; len <= 600; len++)
		CU_ASSERT_EQUAL(roce_icrc(f, len), icrc_ref(f, len));
	for (uint32_t len = 600; len + 4 <= 4300 && len + 4 <= BUF; len += 97)
		CU_ASSERT_EQUAL(roce_icrc(f, len), icrc_ref(f, len));
	CU_ASSERT_EQUAL(roce_icrc(f + 1, 133), icrc_ref(f + 1, 133));
}

/* Every way the ICRC is computed (crc32_hw_state: the CPU's best, x86-64's
 * SSE-only variant, the tables of a CPU without folding), every covered
 * length from the bare headers to 300 bytes after them (a frame's short
 * and long paths and each block count between) at every frame alignment
 * mod 16, against the bitwise reference; roce_icrc4_hdrs (the register
 * the TX fold goes on from) too.  A wrong constant, block count or mask
 * offset in any variant changes the value at some length. */
static void test_icrc_every_path(void)
{
	static uint8_t f[16 + BUF];
	const int probed = crc32_hw_ok() ? crc32_hw_state : 0;
	const int states[] = { probed, 1, 0 };
	uint32_t x = 4242;

	for (uint32_t i = 0; i < sizeof(f); i++) {
		x = x * 1103515245u + 12345u;
		f[i] = (uint8_t)(x >> 16);
	}
	for (uint32_t s = 0; s < 3; s++) {
		if (states[s] > probed)
			continue;       /* the CPU has not got it */
		crc32_hw_state = states[s];
		for (uint32_t a = 0; a < 16; a++)
			for (uint32_t len = OFF_BTH + ROCE_BTH_LEN;
			     len <= OFF_BTH + ROCE_BTH_LEN + 300; len++) {
				CU_ASSERT_EQUAL(roce_icrc(f + a, len),
						icrc_ref(f + a, len));
				if (states[s] > 0)
					CU_ASSERT_EQUAL(~roce_icrc4_hdrs(f + a, len),
							icrc_ref(f + a, len));
			}
	}
	crc32_hw_state = probed;
}

/* Any single-bit error after the UDP header (except the masked BTH byte 4)
 * is an ICRC error; one in the covered IP addresses too. */
static void test_parse_icrc_bitflip(void)
{
	static uint8_t f[BUF];
	uint32_t len = build_op(f, ROCE_RC_WRITE_ONLY_IMM, 37);

	for (uint32_t i = OFF_BTH; i < len; i++) {
		if (i == OFF_BTH + 4)
			continue;
		for (int b = 0; b < 8; b++) {
			f[i] ^= (uint8_t)(1u << b);
			CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_ICRC);
			f[i] ^= (uint8_t)(1u << b);
		}
	}
	f[OFF_BTH + 4] ^= 0x01;                 /* reserved, masked */
	CU_ASSERT_EQUAL(parse(f, len), ROCE_OK);
	f[OFF_BTH + 4] ^= 0x01;
	f[OFF_IP + 15] ^= 0x10;                 /* source address */
	fix_ip_csum(f);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_ICRC);
}

/* ---- parse errors ---- */

static void test_parse_not_roce(void)
{
	static uint8_t f[BUF];
	uint32_t len;

	len = build_op(f, ROCE_RC_SEND_ONLY, 8);
	put16(f + 12, ROCE_ETHERTYPE_ARP);
	CU_ASSERT_EQUAL(parse(f, 42), ROCE_NOT_ROCE);
	CU_ASSERT_EQUAL(parse(f, 14), ROCE_NOT_ROCE);
	put16(f + 12, 0x86dd);                  /* IPv6: unsupported */
	CU_ASSERT_EQUAL(parse(f, len), ROCE_NOT_ROCE);
	put16(f + 12, ROCE_ETHERTYPE_IPV4);
	/* Other UDP port: not RoCE even with a broken IP checksum. */
	put16(f + OFF_UDP + 2, 53);
	f[OFF_IP + 10] ^= 0xff;
	CU_ASSERT_EQUAL(parse(f, len), ROCE_NOT_ROCE);
	put16(f + OFF_UDP + 2, ROCE_UDP_PORT);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_IP_HDR);
	f[OFF_IP + 10] ^= 0xff;
	f[OFF_IP + 9] = 6;                      /* TCP */
	CU_ASSERT_EQUAL(parse(f, len), ROCE_NOT_ROCE);
	f[OFF_IP + 9] = 17;
	put16(f + OFF_IP + 6, 0x0010);          /* non-first fragment */
	CU_ASSERT_EQUAL(parse(f, len), ROCE_NOT_ROCE);
}

/* Cut anywhere: the frame is shorter than its IP length says. */
static void test_parse_truncated_frame(void)
{
	static uint8_t f[BUF];
	uint32_t len = build_op(f, ROCE_RC_WRITE_ONLY_IMM, 64);

	CU_ASSERT_EQUAL(parse(f, len), ROCE_OK);
	for (uint32_t k = 0; k < len; k++)
		CU_ASSERT_EQUAL(parse(f, k), ROCE_ERR_TRUNCATED);
}

/* Lengths consistent, but the packet ends inside the BTH or inside the
 * extension headers (4-byte steps: the ICRC is recomputed). */
static void test_parse_truncated_headers(void)
{
	static const uint8_t ops[] = { ROCE_RC_WRITE_ONLY_IMM,
				       ROCE_RC_ATOMIC_ACK, ROCE_RC_FETCH_ADD,
				       ROCE_UD_SEND_ONLY_IMM };

	static uint8_t f[BUF];

	/* Empty UDP payload, frame ending right after the UDP header. */
	build_op(f, ROCE_RC_ACK, 0);
	put16(f + OFF_IP + 2, ROCE_IPV4_HLEN + ROCE_UDP_HLEN);
	put16(f + OFF_UDP + 4, ROCE_UDP_HLEN);
	fix_ip_csum(f);
	CU_ASSERT_EQUAL(parse(f, OFF_BTH), ROCE_ERR_TRUNCATED);
	for (unsigned i = 0; i < sizeof(ops); i++) {
		uint32_t full = OFF_BTH + ROCE_BTH_LEN +
				roce_opcodes[ops[i]].ext_len;

		for (uint32_t end = OFF_BTH; end < full; end += 4) {
			build_op(f, ops[i], 0);
			reframe(f, end + ROCE_ICRC_LEN);
			CU_ASSERT_EQUAL(parse(f, end + ROCE_ICRC_LEN),
					ROCE_ERR_TRUNCATED);
		}
		build_op(f, ops[i], 0);
		reframe(f, full + ROCE_ICRC_LEN);
		CU_ASSERT_EQUAL(parse(f, full + ROCE_ICRC_LEN), ROCE_OK);
	}
}

static void test_parse_ip_errors(void)
{
	static uint8_t f[BUF];
	uint32_t len = build_op(f, ROCE_RC_SEND_ONLY, 16);

	f[OFF_IP + 12] ^= 1;                    /* checksum no longer fits */
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_IP_HDR);
	f[OFF_IP + 12] ^= 1;
	CU_ASSERT_EQUAL(parse(f, len), ROCE_OK);
	f[OFF_IP] = 0x65;                       /* version 6 */
	fix_ip_csum(f);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_IP_HDR);
	f[OFF_IP] = 0x44;                       /* IHL 4 < 5 */
	fix_ip_csum(f);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_IP_HDR);
	/* IHL 6: 4 option bytes (NOPs) inserted, port still 4791. */
	len = build_op(f, ROCE_RC_SEND_ONLY, 16);
	memmove(f + OFF_UDP + 4, f + OFF_UDP, len - OFF_UDP);
	memset(f + OFF_UDP, 1, 4);
	f[OFF_IP] = 0x46;
	CU_ASSERT_EQUAL(parse(f, len + 4), ROCE_ERR_IP_HDR);
	/* More-fragments flag. */
	len = build_op(f, ROCE_RC_SEND_ONLY, 16);
	put16(f + OFF_IP + 6, 0x2000);
	fix_ip_csum(f);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_IP_HDR);
	/* IP total length too small to hold UDP. */
	len = build_op(f, ROCE_RC_SEND_ONLY, 16);
	put16(f + OFF_IP + 2, 24);
	fix_ip_csum(f);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_IP_HDR);
}

static void test_parse_udp_len(void)
{
	static uint8_t f[BUF];
	uint32_t len = build_op(f, ROCE_RC_SEND_ONLY, 16);

	put16(f + OFF_UDP + 4, len - OFF_UDP + 4);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_UDP_LEN);
	put16(f + OFF_UDP + 4, len - OFF_UDP - 4);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_UDP_LEN);
	put16(f + OFF_UDP + 4, 0);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_UDP_LEN);
}

static void test_parse_bad_opcode(void)
{
	static const uint8_t bad[] = { 0x15, 0x18, 0x1f, 0x2c, 0x2d, 0x34,
				       0x40, 0x60, 0x66, 0x81, 0xff };
	static uint8_t f[BUF];

	for (unsigned i = 0; i < sizeof(bad); i++) {
		uint32_t len = build_op(f, bad[i], 0);

		CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_BAD_OPCODE);
	}
}

static void test_parse_bth_errors(void)
{
	static uint8_t f[BUF];
	struct roce_hdrs h;
	uint32_t len;

	fill_hdrs(&h, ROCE_RC_SEND_ONLY);
	h.tver = 1;
	len = roce_build(f, &h, 8);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_BTH);
	/* Pad count larger than what follows the headers. */
	len = build_op(f, ROCE_RC_SEND_ONLY, 0);
	f[OFF_BTH + 1] |= 0x30;
	put_icrc(f, len);
	CU_ASSERT_EQUAL(parse(f, len), ROCE_ERR_BTH);
	/* Payload + pad not a multiple of 4. */
	len = build_op(f, ROCE_RC_SEND_ONLY, 8);
	reframe(f, len - 1);
	CU_ASSERT_EQUAL(parse(f, len - 1), ROCE_ERR_BTH);
	/* Payload on an opcode that carries none (ACK). */
	len = build_op(f, ROCE_RC_ACK, 0);
	reframe(f, len + 4);
	CU_ASSERT_EQUAL(parse(f, len + 4), ROCE_ERR_BTH);
}

/* ---- PSN arithmetic ---- */

static void test_psn_diff(void)
{
	CU_ASSERT_EQUAL(roce_psn_diff(5, 3), 2);
	CU_ASSERT_EQUAL(roce_psn_diff(3, 5), -2);
	CU_ASSERT_EQUAL(roce_psn_diff(0, 0xffffff), 1);
	CU_ASSERT_EQUAL(roce_psn_diff(0xffffff, 0), -1);
	CU_ASSERT_EQUAL(roce_psn_diff(0x10, 0xfffff0), 0x20);
	CU_ASSERT_EQUAL(roce_psn_diff(0xfffff0, 0x10), -0x20);
	CU_ASSERT_EQUAL(roce_psn_diff(0x7fffff, 0), 0x7fffff);
	CU_ASSERT_EQUAL(roce_psn_diff(0, 0x7fffff), -0x7fffff);
	/* Exactly half the space apart: the implementation yields -2^23
	 * (so the range is [-2^23, 2^23), not (-2^23, 2^23] as the header
	 * comment says). */
	CU_ASSERT_EQUAL(roce_psn_diff(0x800000, 0), -0x800000);
	CU_ASSERT_EQUAL(roce_psn_diff(0, 0x800000), -0x800000);
	/* Bits above 24 are ignored. */
	CU_ASSERT_EQUAL(roce_psn_diff(0x1000005, 5), 0);
	CU_ASSERT_EQUAL(roce_psn_diff((0 - 1u) & ROCE_PSN_MASK, 1), -2);
}

/* FIRST/MIDDLE/LAST/ONLY (and the immediate variants) picked from the
 * opcode table, for each family and both RC and UC prefixes. */
static void test_seg_opcode(void)
{
	static const struct {
		uint8_t family;
		bool first, last, imm;
		uint8_t want;
	} v[] = {
		{ ROCE_RC_SEND_FIRST, true, true, false, ROCE_RC_SEND_ONLY },
		{ ROCE_RC_SEND_FIRST, true, true, true, ROCE_RC_SEND_ONLY_IMM },
		{ ROCE_RC_SEND_FIRST, true, false, true, ROCE_RC_SEND_FIRST },
		{ ROCE_RC_SEND_FIRST, false, false, true, ROCE_RC_SEND_MIDDLE },
		{ ROCE_RC_SEND_FIRST, false, true, false, ROCE_RC_SEND_LAST },
		{ ROCE_RC_SEND_FIRST, false, true, true, ROCE_RC_SEND_LAST_IMM },
		{ ROCE_RC_WRITE_FIRST, true, true, false, ROCE_RC_WRITE_ONLY },
		{ ROCE_RC_WRITE_FIRST, true, true, true, ROCE_RC_WRITE_ONLY_IMM },
		{ ROCE_RC_WRITE_FIRST, true, false, false, ROCE_RC_WRITE_FIRST },
		{ ROCE_RC_WRITE_FIRST, false, false, false, ROCE_RC_WRITE_MIDDLE },
		{ ROCE_RC_WRITE_FIRST, false, true, false, ROCE_RC_WRITE_LAST },
		{ ROCE_RC_WRITE_FIRST, false, true, true, ROCE_RC_WRITE_LAST_IMM },
		{ ROCE_RC_READ_RESP_FIRST, true, true, false, ROCE_RC_READ_RESP_ONLY },
		{ ROCE_RC_READ_RESP_FIRST, true, false, false, ROCE_RC_READ_RESP_FIRST },
		{ ROCE_RC_READ_RESP_FIRST, false, false, false, ROCE_RC_READ_RESP_MIDDLE },
		{ ROCE_RC_READ_RESP_FIRST, false, true, false, ROCE_RC_READ_RESP_LAST },
		{ ROCE_UC_BASE | ROCE_RC_SEND_FIRST, true, true, true,
		  ROCE_UC_BASE | ROCE_RC_SEND_ONLY_IMM },
		{ ROCE_UC_BASE | ROCE_RC_WRITE_FIRST, false, true, false,
		  ROCE_UC_BASE | ROCE_RC_WRITE_LAST },
	};

	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CU_ASSERT_EQUAL(roce_seg_opcode(v[i].family, v[i].first, v[i].last,
						v[i].imm), v[i].want);
}

UNIT_SUITE(wire, NULL, NULL,
	   UNIT_TEST(test_crc32_vectors),
	   UNIT_TEST(test_crc32_vs_reference),
	   UNIT_TEST(test_crc32_copy_vs_reference),
	   UNIT_TEST(test_crc32_copy_no_overread),
	   UNIT_TEST(test_opcode_table),
	   UNIT_TEST(test_seg_opcode),
	   UNIT_TEST(test_roundtrip_all_opcodes),
	   UNIT_TEST(test_build_defaults),
	   UNIT_TEST(test_build_tmpl_matches_build),
	   UNIT_TEST(test_parse_eth_padding),
	   UNIT_TEST(test_icrc_known_vector),
	   UNIT_TEST(test_icrc_masking),
	   UNIT_TEST(test_icrc_every_length),
	   UNIT_TEST(test_icrc_every_path),
	   UNIT_TEST(test_parse_icrc_bitflip),
	   UNIT_TEST(test_parse_not_roce),
	   UNIT_TEST(test_parse_truncated_frame),
	   UNIT_TEST(test_parse_truncated_headers),
	   UNIT_TEST(test_parse_ip_errors),
	   UNIT_TEST(test_parse_udp_len),
	   UNIT_TEST(test_parse_bad_opcode),
	   UNIT_TEST(test_parse_bth_errors),
	   UNIT_TEST(test_psn_diff))
