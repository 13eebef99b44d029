/* SPDX-License-Identifier: MIT */
/*
 * RoCEv2 framing: the opcode table, parse/validate, build (the ICRC itself
 * is computed in wire/icrc.c).
 *
 * Layout (IBTA vol. 1 Annex A17, RoCEv2): Ethernet (14) / IPv4 without options
 * (20) or IPv6 without extension headers (40) / UDP to port 4791 (8) /
 * BTH (12) / extension headers / payload /
 * pad to 4 bytes / ICRC (4).  Extension headers follow the BTH in the order
 * of IBTA 9.2: DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt,
 * IETH (RDETH is RD only, and RD is not supported).
 */
#include <stddef.h>
#include <string.h>

#include "arch/crc32_hw.h"
#include "wire/roce_wire.h"

/* ---- opcode table (IBTA 9.2.1 table 37, 9.3 for the header sets) ---- */

/* An opcode's set of extension headers as one small number, the key of
 * parse_ext's switch: a bit per header kind (the IETH counts as ImmDt:
 * the same 4 bytes in the same place, IBTA 9.2). */
enum {
	L_RETH = 1, L_AETH = 2, L_IMM = 4, L_ATOMIC = 8, L_AACK = 16,
	L_DETH = 32, L_XRC = 64,
};
#define LAYOUT(fl)                                                           \
	(((fl) & ROCE_F_RETH ? L_RETH : 0) |                                 \
	 ((fl) & ROCE_F_AETH ? L_AETH : 0) |                                 \
	 ((fl) & (ROCE_F_IMM | ROCE_F_INV) ? L_IMM : 0) |                    \
	 ((fl) & ROCE_F_ATOMIC ? L_ATOMIC : 0) |                             \
	 ((fl) & ROCE_F_ATOMICACK ? L_AACK : 0) |                            \
	 ((fl) & ROCE_F_DETH ? L_DETH : 0) |                                 \
	 ((fl) & ROCE_F_XRCETH ? L_XRC : 0))
#define OP(name, fl, xl) { name, fl, xl, LAYOUT(fl) }

#define V     ROCE_F_VALID
#define PAY   ROCE_F_PAYLOAD
#define FIRST ROCE_F_FIRST
#define LAST  ROCE_F_LAST
#define ONLY  (ROCE_F_FIRST | ROCE_F_LAST)
#define SREQ  (V | ROCE_F_REQ | ROCE_F_SEND | PAY)
#define WREQ  (V | ROCE_F_REQ | ROCE_F_WRITE | PAY)
#define RRESP (V | ROCE_F_RESP | ROCE_F_READ | PAY)

/* SEND and RDMA WRITE, shared by RC and UC (same low 5 bits); L: the
 * flag of the SEND's MIDDLE and the WRITE's MIDDLE and LAST whose ICRC
 * the receive parse leaves for later (RC only, ROCE_F_LATER: rx.c has
 * an RC step for them). */
#define SEND_WRITE_OPS(base, T, X, XL, L)                                    \
	[(base) | 0x00] = OP(T "_SEND_FIRST", SREQ | FIRST | (X), XL),       \
	[(base) | 0x01] = OP(T "_SEND_MIDDLE", SREQ | (X) | (L), XL),        \
	[(base) | 0x02] = OP(T "_SEND_LAST", SREQ | LAST | (X), XL),         \
	[(base) | 0x03] = OP(T "_SEND_LAST_IMM",                             \
			    SREQ | LAST | ROCE_F_IMM | (X),                  \
			    (XL) + ROCE_IMM_LEN),                            \
	[(base) | 0x04] = OP(T "_SEND_ONLY", SREQ | ONLY | (X), XL),         \
	[(base) | 0x05] = OP(T "_SEND_ONLY_IMM",                             \
			    SREQ | ONLY | ROCE_F_IMM | (X),                  \
			    (XL) + ROCE_IMM_LEN),                            \
	[(base) | 0x06] = OP(T "_WRITE_FIRST",                               \
			    WREQ | FIRST | ROCE_F_RETH | (X),                \
			    (XL) + ROCE_RETH_LEN),                           \
	[(base) | 0x07] = OP(T "_WRITE_MIDDLE", WREQ | (X) | (L), XL),       \
	[(base) | 0x08] = OP(T "_WRITE_LAST", WREQ | LAST | (X) | (L), XL),  \
	[(base) | 0x09] = OP(T "_WRITE_LAST_IMM",                            \
			    WREQ | LAST | ROCE_F_IMM | (X),                  \
			    (XL) + ROCE_IMM_LEN),                            \
	[(base) | 0x0a] = OP(T "_WRITE_ONLY", ROCE_WRITE_ONLY_FLAGS | (X),   \
			    (XL) + ROCE_RETH_LEN),                           \
	[(base) | 0x0b] = OP(T "_WRITE_ONLY_IMM",                            \
			    WREQ | ONLY | ROCE_F_RETH | ROCE_F_IMM | (X),    \
			    (XL) + ROCE_RETH_LEN + ROCE_IMM_LEN)

/* READ, its responses, ACKs and atomics, shared by RC and XRC (X, XL:
 * the XRCETH of XRC requests; responses carry none; L: as
 * SEND_WRITE_OPS's, for the READ response MIDDLE and LAST). */
#define READ_ATOMIC_OPS(base, T, X, XL, L)                                   \
	[(base) | 0x0c] = OP(T "_READ_REQ",                                  \
			    V | ROCE_F_REQ | ROCE_F_READ | ONLY |            \
				    ROCE_F_RETH | (X),                       \
			    (XL) + ROCE_RETH_LEN),                           \
	[(base) | 0x0d] = OP(T "_READ_RESP_FIRST",                           \
			    RRESP | FIRST | ROCE_F_AETH, ROCE_AETH_LEN),     \
	[(base) | 0x0e] = OP(T "_READ_RESP_MIDDLE", RRESP | (L), 0),         \
	[(base) | 0x0f] = OP(T "_READ_RESP_LAST",                            \
			    RRESP | LAST | ROCE_F_AETH | (L), ROCE_AETH_LEN), \
	[(base) | 0x10] = OP(T "_READ_RESP_ONLY",                            \
			    RRESP | ONLY | ROCE_F_AETH, ROCE_AETH_LEN),      \
	[(base) | 0x11] = OP(T "_ACK", V | ROCE_F_RESP | ROCE_F_AETH,        \
			    ROCE_AETH_LEN),                                  \
	[(base) | 0x12] = OP(T "_ATOMIC_ACK",                                \
			    V | ROCE_F_RESP | ROCE_F_AETH | ROCE_F_ATOMICACK, \
			    ROCE_AETH_LEN + ROCE_ATOMICACK_LEN),             \
	[(base) | 0x13] = OP(T "_CMP_SWAP",                                  \
			    V | ROCE_F_REQ | ROCE_F_ATOMIC_OP | ONLY |       \
				    ROCE_F_ATOMIC | (X),                     \
			    (XL) + ROCE_ATOMIC_LEN),                         \
	[(base) | 0x14] = OP(T "_FETCH_ADD",                                 \
			    V | ROCE_F_REQ | ROCE_F_ATOMIC_OP | ONLY |       \
				    ROCE_F_ATOMIC | (X),                     \
			    (XL) + ROCE_ATOMIC_LEN)

/* Single-packet requests (READ request, atomics) are flagged ONLY: the
 * packet is the whole request message. */
const struct roce_opcode_info roce_opcodes[256] = {
	SEND_WRITE_OPS(0x00, "RC", 0, 0, ROCE_F_LATER),
	READ_ATOMIC_OPS(0x00, "RC", 0, 0, ROCE_F_LATER),
	/* 0x15 RESYNC is RD-only in practice and left invalid. */
	[ROCE_RC_SEND_LAST_INV] = OP("RC_SEND_LAST_INV",
				    SREQ | LAST | ROCE_F_INV, ROCE_IMM_LEN),
	[ROCE_RC_SEND_ONLY_INV] = OP("RC_SEND_ONLY_INV",
				    SREQ | ONLY | ROCE_F_INV, ROCE_IMM_LEN),
	/* RDMA Atomic Write (IBTA 1.5, 9.4.x): a RETH for 8 bytes and the 8
	 * bytes, answered by an ACK; RC only.  Wireshark 4.0 does not name
	 * it yet. */
	[ROCE_RC_ATOMIC_WRITE] = OP("RC_ATOMIC_WRITE",
				   V | ROCE_F_REQ | ONLY | PAY | ROCE_F_RETH |
					   ROCE_F_ATOMIC_WRITE,
				   ROCE_RETH_LEN),
	/* UC: SEND and WRITE only, no READ or atomics (IBTA 9.2, table 37). */
	SEND_WRITE_OPS(ROCE_UC_BASE, "UC", 0, 0, 0),
	[ROCE_UD_SEND_ONLY] = OP("UD_SEND_ONLY", SREQ | ONLY | ROCE_F_DETH,
				ROCE_DETH_LEN),
	[ROCE_UD_SEND_ONLY_IMM] = OP("UD_SEND_ONLY_IMM",
				    SREQ | ONLY | ROCE_F_DETH | ROCE_F_IMM,
				    ROCE_DETH_LEN + ROCE_IMM_LEN),
	/* XRC (Annex A14): the RC operations; each request carries the
	 * XRCETH (the target's XRC SRQ), responses are RC's.  No atomic
	 * write or invalidation over XRC here (not offered). */
	SEND_WRITE_OPS(ROCE_XRC_BASE, "XRC", ROCE_F_XRCETH, ROCE_XRCETH_LEN, 0),
	READ_ATOMIC_OPS(ROCE_XRC_BASE, "XRC", ROCE_F_XRCETH, ROCE_XRCETH_LEN, 0),
};

#undef V
#undef PAY
#undef FIRST
#undef LAST
#undef ONLY
#undef SREQ
#undef WREQ
#undef RRESP
#undef SEND_WRITE_OPS
#undef OP
#undef LAYOUT
#undef READ_ATOMIC_OPS

/* ---- big-endian field access (network order on the wire) ---- */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | get24(p + 1);
}

/* Inline: called out of line (GCC's choice once the parse had two
 * users), the call cost more than its one load and byte swap. */
static inline __attribute__((always_inline)) uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* A 32-bit network-order word at p, one load (and a byte swap). */
static inline uint32_t load_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return __builtin_bswap32(v);
}

/* A 32-bit word at p in the CPU's own byte order, one load. */
static inline uint32_t load_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	put16(p + 1, v);
}

/* One byte-swapped store where the byte order allows it: compilers do
 * not always merge the byte stores (the BTH's first two words were
 * byte stores and shifts each, bench-instr). */
static void put32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
#else
	p[0] = (uint8_t)(v >> 24);
	put24(p + 1, v);
#endif
}

static void put64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
#else
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
#endif
}

/* ---- offsets ---- */

#define ETH_TYPE   12
#define IP         ROCE_ETH_HLEN
#define IP_TOS     (IP + 1)
#define IP_TOTLEN  (IP + 2)
#define IP_FRAG    (IP + 6)
#define IP_TTL     (IP + 8)
#define IP_PROTO   (IP + 9)
#define IP_CSUM    (IP + 10)
#define UDP        (IP + ROCE_IPV4_HLEN)
#define BTH        ROCE_L2L4_LEN
#define IP6_PLEN   (IP + 4)
#define IP6_NEXT   (IP + 6)
#define IP6_HOPS   (IP + 7)
#define IP6_SRC    (IP + 8)
#define IP6_DST    (IP + 24)
#define UDP6       (IP + ROCE_IPV6_HLEN)
#define IP_DF      0x4000u
#define IP_MF      0x2000u
#define IP_OFFMASK 0x1fffu
#define IPPROTO_UDP_ 17u

/* RFC 1071 one's-complement sum of the 20-byte IPv4 header, folded. */
static uint16_t ipv4_sum(const uint8_t *ip)
{
	uint32_t w[ROCE_IPV4_HLEN / 4];
	uint64_t s;
	uint16_t r;

	/* Five 32-bit words in the CPU's own byte order: the one's-complement
	 * sum does not care (RFC 1071 2(B)), it comes out in that order and is
	 * read back as network order below.  Ten 16-bit loads cost 3x more. */
	memcpy(w, ip, sizeof(w));
	s = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	r = (uint16_t)s;
	return get16((const uint8_t *)&r);
}

/* The ICRC goes on the wire least-significant byte first (A17.3.3; the
 * same byte order as the Ethernet FCS). */
static void put_icrc(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;           /* spelt out: compilers merge the */
	p[1] = (uint8_t)(icrc >> 8);    /* four stores into one           */
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

static uint32_t get_icrc(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* ---- parse ---- */

/*
 * Is this frame meant to be RoCEv2 at all?  Only Ethernet type, IP
 * protocol (IPv6: next header) and UDP destination port are looked at, so
 * that ARP, neighbour discovery and other traffic is reported as
 * ROCE_NOT_ROCE ahead of any error.  A non-first IP fragment has no UDP
 * header to tell, so it is not ours either; nor is an IPv6 packet with
 * extension headers (RoCEv2 senders use none).  *l3 is the IP
 * header's length.
 */
static enum roce_parse_result classify6(const uint8_t *f, uint32_t len)
{
	if (len < IP + ROCE_IPV6_HLEN)
		return ROCE_ERR_TRUNCATED;
	if (f[IP6_NEXT] != IPPROTO_UDP_)
		return ROCE_NOT_ROCE;
	if ((f[IP] >> 4) != 6)
		return ROCE_ERR_IP_HDR;
	if (len < IP + ROCE_IPV6_HLEN + ROCE_UDP_HLEN)
		return ROCE_ERR_TRUNCATED;
	if (get16(f + UDP6 + 2) != ROCE_UDP_PORT)
		return ROCE_NOT_ROCE;
	return ROCE_OK;
}

static enum roce_parse_result classify(const uint8_t *f, uint32_t len,
				       uint32_t *l3)
{
	uint32_t ihl;

	if (len < ROCE_ETH_HLEN)
		return ROCE_ERR_TRUNCATED;
	if (get16(f + ETH_TYPE) != ROCE_ETHERTYPE_IPV4) {
		if (get16(f + ETH_TYPE) != ROCE_ETHERTYPE_IPV6)
			return ROCE_NOT_ROCE;
		*l3 = ROCE_IPV6_HLEN;
		return classify6(f, len);
	}
	*l3 = ROCE_IPV4_HLEN;
	if (len < IP + ROCE_IPV4_HLEN)
		return ROCE_ERR_TRUNCATED;
	if (f[IP_PROTO] != IPPROTO_UDP_ || (get16(f + IP_FRAG) & IP_OFFMASK))
		return ROCE_NOT_ROCE;
	ihl = (f[IP] & 0x0fu) * 4u;
	if ((f[IP] >> 4) != 4 || ihl < ROCE_IPV4_HLEN)
		return ROCE_ERR_IP_HDR;  /* cannot locate the UDP header */
	if (len < IP + ihl + ROCE_UDP_HLEN)
		return ROCE_ERR_TRUNCATED;
	if (get16(f + IP + ihl + 2) != ROCE_UDP_PORT)
		return ROCE_NOT_ROCE;
	return ROCE_OK;
}

/*
 * IPv4 checks (RFC 791, Annex A17): no options (RoCEv2 senders never use
 * them, and the fixed layout is what the ICRC mask assumes), total length
 * within the frame (anything beyond is Ethernet padding to 60 bytes),
 * header checksum, and no fragmentation (RoCE does not reassemble).
 */
static enum roce_parse_result check_ipv4(const uint8_t *f, uint32_t len,
					 uint32_t *ip_payload)
{
	uint32_t tot = get16(f + IP_TOTLEN);

	*ip_payload = tot - ROCE_IPV4_HLEN;

	if ((f[IP] & 0x0fu) != ROCE_IPV4_HLEN / 4)
		return ROCE_ERR_IP_HDR;
	if (tot < ROCE_IPV4_HLEN + ROCE_UDP_HLEN)
		return ROCE_ERR_IP_HDR;
	if (tot > len - IP)
		return ROCE_ERR_TRUNCATED;
	if (ipv4_sum(f + IP) != 0xffffu)
		return ROCE_ERR_IP_HDR;
	if (get16(f + IP_FRAG) & IP_MF)
		return ROCE_ERR_IP_HDR;
	return ROCE_OK;
}

/* IPv6 checks (RFC 8200): payload length within the frame (the rest is
 * Ethernet padding) and room for the UDP header; there is no header
 * checksum, and classify6 refused extension headers. */
static enum roce_parse_result check_ipv6(const uint8_t *f, uint32_t len,
					 uint32_t *ip_payload)
{
	uint32_t pl = get16(f + IP6_PLEN);

	*ip_payload = pl;
	if (pl < ROCE_UDP_HLEN)
		return ROCE_ERR_IP_HDR;
	if (pl > len - IP - ROCE_IPV6_HLEN)
		return ROCE_ERR_TRUNCATED;
	return ROCE_OK;
}

/*
 * BTH-level checks on the n bytes from the BTH to the end of the ICRC.
 * The ICRC is checked before the BTH contents so that a corrupted opcode
 * or pad count is counted as corruption, not as a protocol error.  Then
 * (IBTA vol. 1 9.6, packet header validation): known opcode,
 * tver == 0, room for the opcode's extension headers, a 4-byte multiple
 * of payload+pad with pad not exceeding it, and no payload on opcodes that
 * carry none.
 */
static enum roce_parse_result check_bth(const uint8_t *f, uint32_t at,
				       uint32_t n)
{
	const uint8_t *bth = f + at;
	const struct roce_opcode_info *op;
	uint32_t pad, rest;

	if (n < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_ERR_TRUNCATED;      /* before touching the BTH */
	op = &roce_opcodes[bth[0]];
	pad = (bth[1] >> 4) & 3u;
	if (roce_icrc_ip(f, at + n - ROCE_ICRC_LEN, at != BTH) !=
	    get_icrc(bth + n - ROCE_ICRC_LEN))
		return ROCE_ERR_ICRC;
	if (!(op->flags & ROCE_F_VALID))
		return ROCE_ERR_BAD_OPCODE;
	if ((bth[1] & 0x0fu) != 0)
		return ROCE_ERR_BTH;
	if (n < ROCE_BTH_LEN + ROCE_ICRC_LEN + (uint32_t)op->ext_len)
		return ROCE_ERR_TRUNCATED;
	rest = n - ROCE_BTH_LEN - ROCE_ICRC_LEN - op->ext_len;
	if ((rest & 3u) || pad > rest)
		return ROCE_ERR_BTH;
	if (rest && !(op->flags & ROCE_F_PAYLOAD))
		return ROCE_ERR_BTH;
	return ROCE_OK;
}

/* The BTH as three big-endian words, each field cut out of them (whole
 * loads: stores into h, bytes among them, may alias the frame, and
 * byte by byte the compiler would load every frame byte again). */
static inline __attribute__((always_inline))
void parse_bth(const uint8_t *bth, struct roce_hdrs *h, bool lean)
{
	uint32_t w0 = load_be32(bth), w1 = load_be32(bth + 4),
		 w2 = load_be32(bth + 8);

	h->opcode = (uint8_t)(w0 >> 24);
	h->pkey = (uint16_t)w0;
	h->dqpn = w1 & ROCE_QPN_MASK;
	if (!lean) {            /* what no receive consumer reads */
		h->mig = (uint8_t)(w0 >> 22 & 1u);
		h->pad = (uint8_t)(w0 >> 20 & 3u);
		h->tver = (uint8_t)(w0 >> 16 & 0x0fu);
		h->fecn = (uint8_t)(w1 >> 31);
		h->becn = (uint8_t)(w1 >> 30 & 1u);
	}
	h->ackreq = (uint8_t)(w2 >> 31);
	h->psn = w2 & ROCE_PSN_MASK;
}

/* One extension header each (IBTA 9.3) at p: read into h, or written
 * from h when put (reserved bytes zero); always inlined, so each use
 * keeps only its direction. */
#define CODEC static inline __attribute__((always_inline)) void

CODEC ext_reth(uint8_t *p, struct roce_hdrs *h, bool put)
{
	if (put) {                              /* VA, R_Key, DMA length */
		put64(p, h->reth_va);
		put32(p + 8, h->reth_rkey);
		put32(p + 12, h->reth_len);
	} else {
		h->reth_va = get64(p);
		h->reth_rkey = get32(p + 8);
		h->reth_len = get32(p + 12);
	}
}

CODEC ext_aeth(uint8_t *p, struct roce_hdrs *h, bool put)
{
	if (put) {                              /* syndrome, MSN */
		p[0] = h->aeth_syndrome;
		put24(p + 1, h->aeth_msn);
	} else {
		uint32_t w = load_be32(p);      /* one load, both fields */

		h->aeth_syndrome = (uint8_t)(w >> 24);
		h->aeth_msn = w & ROCE_PSN_MASK;
	}
}

CODEC ext_aack(uint8_t *p, struct roce_hdrs *h, bool put)
{
	if (put)                                /* original data */
		put64(p, h->atomic_orig);
	else
		h->atomic_orig = get64(p);
}

CODEC ext_atomic(uint8_t *p, struct roce_hdrs *h, bool put)
{
	if (put) {                      /* VA, R_Key, swap/add, compare */
		put64(p, h->atomic_va);
		put32(p + 8, h->atomic_rkey);
		put64(p + 12, h->atomic_swap_add);
		put64(p + 20, h->atomic_cmp);
	} else {
		h->atomic_va = get64(p);
		h->atomic_rkey = get32(p + 8);
		h->atomic_swap_add = get64(p + 12);
		h->atomic_cmp = get64(p + 20);
	}
}

CODEC ext_deth(uint8_t *p, struct roce_hdrs *h, bool put)
{
	if (put) {                              /* Q_Key, rsvd, SrcQP */
		put32(p, h->deth_qkey);
		put32(p + 4, h->deth_sqpn & ROCE_QPN_MASK);
	} else {
		h->deth_qkey = load_be32(p);
		h->deth_sqpn = load_be32(p + 4) & ROCE_QPN_MASK;
	}
}

/* ImmDt or IETH (R_Key): kept in network order. */
CODEC ext_imm(uint8_t *p, struct roce_hdrs *h, bool put)
{
	if (put)
		memcpy(p, &h->imm, ROCE_IMM_LEN);
	else
		memcpy(&h->imm, p, ROCE_IMM_LEN);
}

CODEC ext_xrc(uint8_t *p, struct roce_hdrs *h, bool put)
{
	if (put)                                /* rsvd, XRCSRQ */
		put32(p, h->xrc_srqn & ROCE_QPN_MASK);
	else
		h->xrc_srqn = load_be32(p) & ROCE_QPN_MASK;
}

#define RETH_ ROCE_RETH_LEN
#define XRC_  ROCE_XRCETH_LEN

/*
 * The extension headers of an opcode's layout (the table's, see LAYOUT),
 * each at the fixed offset IBTA 9.2's order gives it in that layout:
 * DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt/IETH.  One
 * switch for parse (put false) and build (put true).
 */
CODEC ext_walk(uint8_t *p, uint8_t layout, struct roce_hdrs *h, bool put)
{
	switch (layout) {
	case L_RETH | L_IMM:
		ext_imm(p + RETH_, h, put);
		/* fall through */
	case L_RETH:
		ext_reth(p, h, put);
		break;
	case L_IMM:
		ext_imm(p, h, put);
		break;
	case L_AETH | L_AACK:
		ext_aack(p + ROCE_AETH_LEN, h, put);
		/* fall through */
	case L_AETH:
		ext_aeth(p, h, put);
		break;
	case L_ATOMIC:
		ext_atomic(p, h, put);
		break;
	case L_DETH | L_IMM:
		ext_imm(p + ROCE_DETH_LEN, h, put);
		/* fall through */
	case L_DETH:
		ext_deth(p, h, put);
		break;
	case L_XRC | L_RETH | L_IMM:
		ext_imm(p + XRC_ + RETH_, h, put);
		/* fall through */
	case L_XRC | L_RETH:
		ext_reth(p + XRC_, h, put);
		ext_xrc(p, h, put);
		break;
	case L_XRC | L_IMM:
		ext_imm(p + XRC_, h, put);
		/* fall through */
	case L_XRC:
		ext_xrc(p, h, put);
		break;
	case L_XRC | L_ATOMIC:
		ext_atomic(p + XRC_, h, put);
		ext_xrc(p, h, put);
		break;
	default:                        /* no header (0) */
		break;
	}
}

#undef RETH_
#undef XRC_
#undef CODEC

/*
 * The fields of the headers the opcode does not carry are 0 (h is not
 * cleared beforehand: a 128-byte clear was a string instruction of 17
 * steps per frame), so nothing of an earlier frame is ever read.  Lean
 * (roce_parse_rx): only the DETH's and XRCETH's (zeroed by parse_rest,
 * before), which a receive consumer may read before it looks at the
 * opcode (ud_mcast's member check); every other header's fields are
 * read only behind the opcode's flag for it (roce_wire.h,
 * roce_parse_rx).  check_bth made sure the headers are all there; the
 * frame is only read (ext_walk in get mode).
 */
static inline __attribute__((always_inline))
void parse_ext(const uint8_t *p, uint8_t layout, struct roce_hdrs *h, bool lean)
{
	if (lean) {
		ext_walk((uint8_t *)p, layout, h, false);
		return;
	}
	/* field by field: a memset of the block is a string instruction */
	h->reth_va = 0;
	h->reth_rkey = h->reth_len = 0;
	h->aeth_syndrome = 0;
	h->aeth_msn = h->imm = 0;
	h->atomic_va = h->atomic_swap_add = h->atomic_cmp = 0;
	h->atomic_rkey = 0;
	h->atomic_orig = 0;
	ext_walk((uint8_t *)p, layout, h, false);
}

static void parse_ip6(const uint8_t *f, struct roce_hdrs *h)
{
	h->ip6 = 1;
	h->sip = h->dip = 0;
	h->tos = (uint8_t)(f[IP] << 4 | f[IP + 1] >> 4);  /* traffic class */
	h->flow_label = (uint32_t)(f[IP + 1] & 0x0fu) << 16 | get16(f + IP + 2);
	h->ttl = f[IP6_HOPS];
	memcpy(h->sip6, f + IP6_SRC, 16);
	memcpy(h->dip6, f + IP6_DST, 16);
}

/* What the responder's one step does not read (roce_parse_rx_first
 * leaves it to roce_parse_rx_finish): dmac, smac, SE, and the DETH's and
 * XRCETH's fields zeroed (parse_ext sets them where the opcode has those
 * headers, after this). */
static inline __attribute__((always_inline))
void parse_rest(const uint8_t *f, const uint8_t *bth, struct roce_hdrs *h)
{
	/* dmac and smac, one copy (the frame's order is the struct's) */
	_Static_assert(offsetof(struct roce_hdrs, smac) ==
		       offsetof(struct roce_hdrs, dmac) + 6, "dmac, smac");
	memcpy((uint8_t *)h + offsetof(struct roce_hdrs, dmac), f, 12);
	h->se = bth[1] >> 7;
	h->deth_qkey = h->deth_sqpn = h->xrc_srqn = 0;
}

/* l3: the IP header's length (IPv4 20, IPv6 40); op: the opcode's
 * entry; payload_len: the payload's bytes (without pad and ICRC).  Both
 * as the checks found them (check_bth, plain_roce4): not read again from
 * the frame, which the stores into h may alias.  Part: parse_rest's
 * fields left out (roce_parse_rx_first's WRITE_ONLY). */
static inline __attribute__((always_inline))
void parse_fields(const uint8_t *f, uint32_t l3,
		  const struct roce_opcode_info *op, uint32_t payload_len,
		  struct roce_hdrs *h, bool lean, bool part)
{
	const uint8_t *bth = f + IP + l3 + ROCE_UDP_HLEN;

	/* every field is set here, in parse_rest, parse_bth or parse_ext
	 * (0 where the frame has none); sip6/dip6 only for IPv6 (ip6 says
	 * which) */
	if (!part)
		parse_rest(f, bth, h);
	if (l3 == ROCE_IPV6_HLEN) {
		parse_ip6(f, h);
	} else {
		h->ip6 = 0;
		h->sip = load_be32(f + IP + 12);
		h->dip = load_be32(f + IP + 16);
		if (!lean) {
			h->flow_label = 0;
			h->tos = f[IP_TOS];
			h->ttl = f[IP_TTL];
		}
	}
	if (!lean)
		h->sport = get16(f + IP + l3);
	parse_bth(bth, h, lean);
	parse_ext(bth + ROCE_BTH_LEN, op->layout, h, lean);
	h->payload = bth + ROCE_BTH_LEN + op->ext_len;
	h->payload_len = payload_len;
	h->icrc_later = 0;
}

/*
 * The usual frame's checks, in a few word compares: IPv4 with IHL 5
 * (bytes 12-14: type 0x0800, 0x45; TOS masked), not a fragment and UDP
 * (bytes 20-23: flags/offset with DF masked, TTL masked, protocol 17),
 * UDP to 4791 with the length the IP header implies, a good header
 * checksum, then check_bth's checks but the ICRC on the BTH's first
 * word.  False when anything is unusual: the general path (classify,
 * check_ipv4, check_bth) runs then and says what is wrong, in its order.
 * True with the IP total length, the opcode's entry and the payload's
 * length (what parse_fields would otherwise work out again).  op1: the
 * opcode's entry where the caller saw the opcode (its flags and lengths
 * fold then), else NULL.
 *
 * The header checksum: the header's one's-complement sum in 64-bit
 * words (two 8-byte loads and one 4-byte, in the CPU's byte order: the
 * sum does not care, RFC 1071 2(B)) is congruent to its folded 16-bit
 * sum modulo 0xffff (2^16 = 1 there, and so is 2^64, the end-around
 * carry), and that folded sum is 0xffff exactly when it is a nonzero
 * multiple of 0xffff; the sum is nonzero (byte 14 is 0x45).
 */
static inline __attribute__((always_inline))
bool plain_roce4(const uint8_t *f, uint32_t len,
		 const struct roce_opcode_info *op1, uint32_t *tot_out,
		 const struct roce_opcode_info **op_out, uint32_t *payload_out)
{
	const struct roce_opcode_info *op;
	uint64_t a, b, c, sum;
	uint32_t tot, udp, w0, rest, pad;

	if (len < BTH + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    (load_be32(f + ETH_TYPE) & 0xffffff00u) != 0x08004500u ||
	    (load_be32(f + IP_FRAG) & 0xbfff00ffu) != IPPROTO_UDP_)
		return false;
	udp = load_be32(f + UDP + 2);           /* dst port, UDP length */
	tot = get16(f + IP_TOTLEN);
	memcpy(&a, f + IP, 8);
	memcpy(&b, f + IP + 8, 8);
	c = load_u32(f + IP + 16);
	sum = a + b;
	sum += sum < a;                         /* end-around carry */
	sum += c;
	sum += sum < c;
	if (udp >> 16 != ROCE_UDP_PORT ||
	    (udp & 0xffffu) != tot - ROCE_IPV4_HLEN || tot > len - IP ||
	    tot < ROCE_IPV4_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    sum % 0xffffu != 0)
		return false;
	w0 = load_be32(f + BTH);
	op = op1 ? op1 : &roce_opcodes[w0 >> 24];
	pad = (w0 >> 20) & 3u;
	rest = tot - (ROCE_IPV4_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN +
		      ROCE_ICRC_LEN);
	if (!(op->flags & ROCE_F_VALID) || (w0 & 0x000f0000u) ||
	    rest < op->ext_len)
		return false;
	rest -= op->ext_len;                    /* payload + pad */
	if ((rest & 3u) || pad > rest || (rest && !(op->flags & ROCE_F_PAYLOAD)))
		return false;
	*tot_out = tot;
	*op_out = op;
	*payload_out = rest - pad;
	return true;
}

/* Anything plain_roce4 did not pass: each check in its order, the first
 * that fails says why. */
static enum roce_parse_result __attribute__((noinline))
roce_parse_slow(const uint8_t *frame, uint32_t len, struct roce_hdrs *h)
{
	enum roce_parse_result r;
	uint32_t n, l3 = ROCE_IPV4_HLEN, ipl = 0;

	r = classify(frame, len, &l3);
	if (r == ROCE_OK)
		r = l3 == ROCE_IPV6_HLEN ? check_ipv6(frame, len, &ipl)
					 : check_ipv4(frame, len, &ipl);
	if (r != ROCE_OK)
		return r;
	/* UDP length must match the IP payload exactly (RFC 768); the UDP
	 * checksum is not checked: RoCEv2 senders set it to 0 (Annex A17,
	 * over IPv6 as well, as Linux rxe does). */
	n = get16(frame + IP + l3 + 4);
	if (n != ipl)
		return ROCE_ERR_UDP_LEN;
	n -= ROCE_UDP_HLEN;                     /* BTH .. ICRC */
	r = check_bth(frame, IP + l3 + ROCE_UDP_HLEN, n);
	if (r == ROCE_OK) {
		const uint8_t *bth = frame + IP + l3 + ROCE_UDP_HLEN;
		const struct roce_opcode_info *op = &roce_opcodes[bth[0]];

		parse_fields(frame, l3, op, n - ROCE_BTH_LEN - op->ext_len -
			     ROCE_ICRC_LEN - ((bth[1] >> 4) & 3u), h, false,
			     false);
	}
	return r;
}

enum roce_parse_result roce_parse_general(const uint8_t *frame, uint32_t len,
					  struct roce_hdrs *h)
{
	return roce_parse_slow(frame, len, h);
}

/* The usual frame: its fields and its ICRC, the last of its checks (h
 * says nothing when the result is not ROCE_OK).  op1: as plain_roce4's;
 * given, the fields are filled after the ICRC's call, so that they stay
 * in registers for the caller's first looks; else before it, so that
 * what the checks found needs no spill across the call.  Lean: only the
 * fields receive consumers read (roce_parse_rx); part: parse_rest's left
 * out (roce_parse_rx_first's WRITE_ONLY). */
static inline __attribute__((always_inline))
enum roce_parse_result parse_op(const uint8_t *frame, uint32_t len,
				struct roce_hdrs *h, bool lean, bool part,
				const struct roce_opcode_info *op1)
{
	const struct roce_opcode_info *op;
	uint32_t tot, payload_len;
	bool icrc_ok;

	if (!plain_roce4(frame, len, op1, &tot, &op, &payload_len))
		return roce_parse_slow(frame, len, h);
	if (!op1)
		parse_fields(frame, ROCE_IPV4_HLEN, op, payload_len, h, lean,
			     part);
	/* a WRITE's MIDDLE or LAST: checked where its payload is copied
	 * (roce_icrc_later_hdrs) */
	if (lean && !op1 && (op->flags & ROCE_F_LATER) && crc32_hw_state > 0) {
		h->icrc_later = 1;
		return ROCE_OK;
	}
	icrc_ok = roce_icrc_ip(frame, IP + tot - ROCE_ICRC_LEN, false) ==
		  get_icrc(frame + IP + tot - ROCE_ICRC_LEN);
	if (icrc_ok && op1)
		parse_fields(frame, ROCE_IPV4_HLEN, op, payload_len, h, lean,
			     part);
	return icrc_ok ? ROCE_OK : ROCE_ERR_ICRC;
}

/* The usual request, a WRITE_ONLY, has its own copy of the one-pass path
 * with its table entry a constant: its BTH checks, its header walk and
 * its payload's offset fold (the same checks in the same order). */
static inline __attribute__((always_inline))
enum roce_parse_result parse(const uint8_t *frame, uint32_t len,
			     struct roce_hdrs *h, bool lean, bool part)
{
	if (lean && len >= BTH + ROCE_BTH_LEN + ROCE_ICRC_LEN &&
	    frame[BTH] == ROCE_RC_WRITE_ONLY)
		return parse_op(frame, len, h, lean, part,
				&roce_opcodes[ROCE_RC_WRITE_ONLY]);
	return parse_op(frame, len, h, lean, false, NULL);
}

enum roce_parse_result roce_parse(const uint8_t *frame, uint32_t len,
				  struct roce_hdrs *h)
{
	return parse(frame, len, h, false, false);
}

enum roce_parse_result roce_parse_rx_first(const uint8_t *frame, uint32_t len,
					   struct roce_hdrs *h)
{
	return parse(frame, len, h, true, true);
}

/* Only an IPv4 RC WRITE_ONLY can lack parse_rest's fields: its headers'
 * length is fixed (plain_roce4, check_ipv4: no IP options), so the
 * frame starts that far before its payload.  Filled again from the same
 * bytes where they are there already. */
void roce_parse_rx_finish(struct roce_hdrs *h)
{
	const uint8_t *f;

	if (h->ip6 || h->opcode != ROCE_RC_WRITE_ONLY)
		return;
	f = h->payload - roce_hdr_len(ROCE_RC_WRITE_ONLY);
	parse_rest(f, f + BTH, h);
}

enum roce_parse_result roce_parse_rx(const uint8_t *frame, uint32_t len,
				     struct roce_hdrs *h)
{
	enum roce_parse_result r = roce_parse_rx_first(frame, len, h);

	if (r != ROCE_OK)
		return r;
	if (h->icrc_later) {    /* every verdict here and now */
		h->icrc_later = 0;
		if (!roce_icrc_later_ok(h))
			return ROCE_ERR_ICRC;
	}
	roce_parse_rx_finish(h);
	return r;
}

bool roce_parse_is_plain(const uint8_t *frame, uint32_t len)
{
	const struct roce_opcode_info *op;
	uint32_t tot, payload_len;

	return plain_roce4(frame, len, NULL, &tot, &op, &payload_len);
}

/* ---- build ---- */

static void build_ip4(uint8_t *f, const struct roce_hdrs *h, uint32_t len)
{
	put16(f + ETH_TYPE, ROCE_ETHERTYPE_IPV4);
	f[IP] = 0x45;                           /* version 4, IHL 5 */
	f[IP_TOS] = h->tos;
	put16(f + IP_TOTLEN, len - IP);
	put16(f + IP + 4, 0);           /* id 0: DF set, never fragmented */
	put16(f + IP_FRAG, IP_DF);
	f[IP_TTL] = h->ttl ? h->ttl : 64;
	f[IP_PROTO] = IPPROTO_UDP_;
	put16(f + IP_CSUM, 0);
	put32(f + IP + 12, h->sip);
	put32(f + IP + 16, h->dip);
	put16(f + IP_CSUM, (uint16_t)~ipv4_sum(f + IP));
}

/* RFC 8200 fixed header; traffic class and flow label from the path or
 * address handle (Annex A17), next header UDP, no extension headers. */
static void build_ip6(uint8_t *f, const struct roce_hdrs *h, uint32_t len)
{
	uint32_t fl = h->flow_label & 0xfffffu;

	put16(f + ETH_TYPE, ROCE_ETHERTYPE_IPV6);
	put32(f + IP, 6u << 28 | (uint32_t)h->tos << 20 | fl);
	put16(f + IP6_PLEN, len - UDP6);
	f[IP6_NEXT] = IPPROTO_UDP_;
	f[IP6_HOPS] = h->ttl ? h->ttl : 64;
	memcpy(f + IP6_SRC, h->sip6, 16);
	memcpy(f + IP6_DST, h->dip6, 16);
}

/* Inlined twice, for a constant l3 (see roce_build). */
static inline __attribute__((always_inline))
void build_l2l4(uint8_t *f, const struct roce_hdrs *h, uint32_t len,
		uint32_t l3)
{
	uint8_t *udp = f + IP + l3;

	memcpy(f, h->dmac, 6);
	memcpy(f + 6, h->smac, 6);
	if (l3 == ROCE_IPV6_HLEN)
		build_ip6(f, h, len);
	else
		build_ip4(f, h, len);
	put16(udp, h->sport);
	put16(udp + 2, ROCE_UDP_PORT);
	put16(udp + 4, (uint16_t)(len - (uint32_t)(udp - f)));
	/* UDP checksum 0, also over IPv6: RoCEv2 leaves it out, the ICRC
	 * covers the packet (Annex A17; Linux rxe and ConnectX send 0 over
	 * both, RFC 6935/6936 allow it for tunnels over IPv6) */
	put16(udp + 6, 0);
}

static void build_bth(uint8_t *b, const struct roce_hdrs *h, uint32_t pad)
{
	b[0] = h->opcode;
	b[1] = (uint8_t)((h->se & 1u) << 7 | (h->mig & 1u) << 6 | pad << 4 |
			 (h->tver & 0x0fu));
	put16(b + 2, h->pkey);
	b[4] = (uint8_t)((h->fecn & 1u) << 7 | (h->becn & 1u) << 6);
	put24(b + 5, h->dqpn & ROCE_QPN_MASK);
	b[8] = (uint8_t)((h->ackreq & 1u) << 7);
	put24(b + 9, h->psn & ROCE_PSN_MASK);
}

/* Mirror of parse_ext (ext_walk in put mode: h is only read). */
static void build_ext(uint8_t *p, uint8_t layout, const struct roce_hdrs *h)
{
	ext_walk(p, layout, (struct roce_hdrs *)h, true);
}

/* The zero pad and the ICRC behind a frame's payload. */
static inline __attribute__((always_inline))
void l5_end(uint8_t *frame, uint32_t len, uint32_t pad, bool ip6)
{
	if (pad) /* tested first: no address to work out for none */
		memset(frame + len - ROCE_ICRC_LEN - pad, 0, pad);
	put_icrc(frame + len - ROCE_ICRC_LEN,
		 roce_icrc_ip(frame, len - ROCE_ICRC_LEN, ip6));
}

/* What follows the UDP header: BTH, extension headers, zero pad, ICRC. */
static inline __attribute__((always_inline))
void build_l5(uint8_t *frame, uint8_t *bth, const struct roce_hdrs *h,
	      uint32_t payload_len, uint32_t len, bool icrc)
{
	uint32_t pad = -payload_len & 3u;       /* BTH PadCnt (IBTA 9.2) */

	build_bth(bth, h, pad);
	build_ext(bth + ROCE_BTH_LEN, roce_opcodes[h->opcode].layout, h);
	if (!icrc)
		return; /* payload, pad and ICRC to come (roce_build_tmpl_hdrs) */
	l5_end(frame, len, pad, bth != frame + BTH);
}

uint32_t roce_build(uint8_t *frame, const struct roce_hdrs *h,
		    uint32_t payload_len)
{
	uint32_t len = roce_frame_len(h, payload_len);

	if (h->ip6) {
		build_l2l4(frame, h, len, ROCE_IPV6_HLEN);
		build_l5(frame, frame + BTH + ROCE_IPV6_EXTRA, h, payload_len,
			 len, true);
	} else {
		build_l2l4(frame, h, len, ROCE_IPV4_HLEN);
		build_l5(frame, frame + BTH, h, payload_len, len, true);
	}
	return len;
}

/* The template's headers are build_l2l4's for a frame of no length; its
 * sum leaves out the total length (patched per frame) and the checksum. */
void roce_tmpl_make(struct roce_tmpl *t, const struct roce_hdrs *h)
{
	build_l2l4(t->l2l4, h, IP, ROCE_IPV4_HLEN);
	put16(t->l2l4 + IP_CSUM, 0);
	put16(t->l2l4 + UDP + 4, 0);
	t->ipsum = ipv4_sum(t->l2l4 + IP);
	t->valid = true;
}

/* The template's Ethernet, IPv4 and UDP headers for a frame of opcode
 * with payload_len bytes of payload; returns the frame's length.  The
 * checksum is the template's sum plus the total length, folded (RFC 1624:
 * the sum of the other words does not change). */
static inline __attribute__((always_inline))
uint32_t tmpl_l2l4(uint8_t *frame, const struct roce_tmpl *t, uint8_t opcode,
		   uint32_t payload_len)
{
	uint32_t len = roce_hdr_len(opcode) + ((payload_len + 3u) & ~3u) +
		       ROCE_ICRC_LEN;
	uint32_t s = (uint32_t)t->ipsum + (len - IP);

	memcpy(frame, t->l2l4, ROCE_L2L4_LEN);
	put16(frame + IP_TOTLEN, len - IP);
	s = (s & 0xffffu) + (s >> 16);
	put16(frame + IP_CSUM, ~s & 0xffffu);
	put16(frame + UDP + 4, len - UDP);
	return len;
}

/* h's BTH and extension headers over IPv4; its addresses are the
 * template's. */
static inline __attribute__((always_inline))
uint32_t build_tmpl(uint8_t *frame, const struct roce_tmpl *t,
		    const struct roce_hdrs *h, uint32_t payload_len, bool icrc)
{
	uint32_t len = tmpl_l2l4(frame, t, h->opcode, payload_len);

	build_l5(frame, frame + BTH, h, payload_len, len, icrc);
	return len;
}

uint32_t roce_build_tmpl(uint8_t *frame, const struct roce_tmpl *t,
			 const struct roce_hdrs *h, uint32_t payload_len)
{
	return build_tmpl(frame, t, h, payload_len, true);
}

uint32_t roce_build_tmpl_hdrs(uint8_t *frame, const struct roce_tmpl *t,
			      const struct roce_hdrs *h, uint32_t payload_len)
{
	return build_tmpl(frame, t, h, payload_len, false);
}

/* The BTH as three words: no struct roce_hdrs to fill and read back, no
 * extension-header walk (issue 11: a 64-B WRITE's frame cost twice
 * this).  The layouts a connected requester's SEND, WRITE and READ use:
 * RETH, then ImmDt or IETH (IBTA 9.2 table 38). */
uint32_t roce_build_tmpl_req(uint8_t *frame, const struct roce_tmpl *t,
			     const struct roce_req *r, uint32_t payload_len)
{
	uint32_t len = tmpl_l2l4(frame, t, r->opcode, payload_len);
	uint32_t pad = -payload_len & 3u;       /* BTH PadCnt (IBTA 9.2) */
	uint32_t fl = roce_opcodes[r->opcode].flags;
	uint8_t *p = frame + BTH;

	/* opcode, SE, M 0, PadCnt, TVer 0, P_Key; FECN, BECN 0, DestQP;
	 * AckReq, PSN */
	put32(p, (uint32_t)r->opcode << 24 | (uint32_t)r->se << 23 |
		 pad << 20 | ROCE_DEFAULT_PKEY);
	put32(p + 4, r->dqpn & ROCE_QPN_MASK);
	put32(p + 8, (uint32_t)r->ackreq << 31 | (r->psn & ROCE_PSN_MASK));
	p += ROCE_BTH_LEN;
	if (fl & ROCE_F_RETH) {
		put64(p, r->va);
		put32(p + 8, r->rkey);
		put32(p + 12, r->dlen);
		p += ROCE_RETH_LEN;
	}
	if (fl & (ROCE_F_IMM | ROCE_F_INV))
		memcpy(p, &r->imm, ROCE_IMM_LEN);
	l5_end(frame, len, pad, false);
	return len;
}

void roce_icrc_put(uint8_t *frame, uint32_t len, uint32_t icrc)
{
	put_icrc(frame + len - ROCE_ICRC_LEN, icrc);
}

/* The frame a later ICRC's h describes (IPv4, headers of fixed length:
 * plain_roce4's) and where its ICRC lies (behind the payload's pad). */
static const uint8_t *later_frame(const struct roce_hdrs *h)
{
	return h->payload - roce_hdr_len(h->opcode);
}

static const uint8_t *later_icrc(const struct roce_hdrs *h)
{
	return h->payload + ((h->payload_len + 3u) & ~3u);
}

uint32_t roce_icrc_later_hdrs(const struct roce_hdrs *h)
{
	return roce_icrc4_hdrs(later_frame(h), roce_hdr_len(h->opcode));
}

bool roce_icrc_later_is(const struct roce_hdrs *h, uint32_t reg)
{
	return ~reg == get_icrc(later_icrc(h));
}

bool roce_icrc_later_ok(const struct roce_hdrs *h)
{
	const uint8_t *f = later_frame(h), *icrc = later_icrc(h);

	return roce_icrc_ip(f, (uint32_t)(icrc - f), false) == get_icrc(icrc);
}

/* roce_seg_opcode's search, for a family whose layout the first guess
 * did not match: the opcode in family .. family + 5 with the same kind of
 * operation and the wanted FIRST/LAST/IMM flags. */
uint8_t roce_seg_search(uint8_t family, uint32_t want)
{
	uint32_t kind = roce_opcodes[family].flags & ROCE_SEG_KINDS;

	for (uint8_t op = family; op < family + 6; op++) {
		uint32_t f = roce_opcodes[op].flags;

		if ((f & ROCE_SEG_KINDS) == kind && (f & ROCE_SEG_POS) == want)
			return op;
	}
	return family; /* not reached for the three families */
}
