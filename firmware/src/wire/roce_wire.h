/* SPDX-License-Identifier: MIT */
/*
 * RoCEv2 wire format: Ethernet / IPv4 / UDP 4791 / BTH / extension headers /
 * payload / pad / ICRC (IBTA vol. 1 ch. 9.2-9.4, Annex A17).
 *
 * One opcode table (roce_opcodes[]) says which extension headers each BTH
 * opcode carries; parsing and building both derive from it.  Byte order is
 * converted here and nowhere else: struct roce_hdrs holds host-order values
 * (imm_data excepted: it stays in network order, as verbs hands it over).
 */
#ifndef SNIC_ROCE_WIRE_H
#define SNIC_ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCE_UDP_PORT     4791
#define ROCE_ETH_HLEN     14
#define ROCE_IPV4_HLEN    20
#define ROCE_UDP_HLEN     8
#define ROCE_BTH_LEN      12
#define ROCE_RETH_LEN     16
#define ROCE_AETH_LEN     4
#define ROCE_IMM_LEN      4
#define ROCE_ATOMIC_LEN   28
#define ROCE_ATOMICACK_LEN 8
#define ROCE_DETH_LEN     8
#define ROCE_XRCETH_LEN   4
#define ROCE_ICRC_LEN     4
#define ROCE_IPV6_HLEN    40
/* Eth + IPv4 + UDP: where the BTH starts; IPv6 puts it 20 bytes later. */
#define ROCE_L2L4_LEN     (ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN)
#define ROCE_IPV6_EXTRA   (ROCE_IPV6_HLEN - ROCE_IPV4_HLEN)
#define ROCE_ETHERTYPE_IPV4 0x0800
#define ROCE_ETHERTYPE_IPV6 0x86dd
#define ROCE_ETHERTYPE_ARP  0x0806
#define ROCE_DEFAULT_PKEY 0xffff
#define ROCE_PSN_MASK     0xffffffu

/* P_Key matching (IBTA 10.9.3): the low 15 bits equal, at least one of
 * the two a full member (bit 15); the invalid P_Key (0 / 0x8000) never
 * matches (10.9.1.2). */
static inline bool roce_pkey_match(uint16_t pkt, uint16_t mine)
{
	/* pkt's low bits nonzero, asked of mine's (equal to them): with
	 * mine a constant, that test folds away */
	return (pkt & 0x7fff) == (mine & 0x7fff) && (mine & 0x7fff) != 0 &&
	       ((pkt | mine) & 0x8000);
}
#define ROCE_QPN_MASK     0xffffffu

/* BTH opcodes, RC (IBTA 9.2.1 table 37).  UC = 0x20 | op, UD = 0x60 | op. */
enum roce_opcode {
	ROCE_RC_SEND_FIRST = 0x00,
	ROCE_RC_SEND_MIDDLE = 0x01,
	ROCE_RC_SEND_LAST = 0x02,
	ROCE_RC_SEND_LAST_IMM = 0x03,
	ROCE_RC_SEND_ONLY = 0x04,
	ROCE_RC_SEND_ONLY_IMM = 0x05,
	ROCE_RC_WRITE_FIRST = 0x06,
	ROCE_RC_WRITE_MIDDLE = 0x07,
	ROCE_RC_WRITE_LAST = 0x08,
	ROCE_RC_WRITE_LAST_IMM = 0x09,
	ROCE_RC_WRITE_ONLY = 0x0a,
	ROCE_RC_WRITE_ONLY_IMM = 0x0b,
	ROCE_RC_READ_REQ = 0x0c,
	ROCE_RC_READ_RESP_FIRST = 0x0d,
	ROCE_RC_READ_RESP_MIDDLE = 0x0e,
	ROCE_RC_READ_RESP_LAST = 0x0f,
	ROCE_RC_READ_RESP_ONLY = 0x10,
	ROCE_RC_ACK = 0x11,
	ROCE_RC_ATOMIC_ACK = 0x12,
	ROCE_RC_CMP_SWAP = 0x13,
	ROCE_RC_FETCH_ADD = 0x14,
	ROCE_RC_SEND_LAST_INV = 0x16,
	ROCE_RC_SEND_ONLY_INV = 0x17,
	ROCE_RC_ATOMIC_WRITE = 0x1d, /* IBTA 1.5 (rxe: IB_OPCODE_ATOMIC_WRITE) */
	ROCE_UC_BASE = 0x20,
	ROCE_XRC_BASE = 0xa0,        /* XRC class (Annex A14): RC op | 0xa0 */
	ROCE_CLASS_MASK = 0xe0,
	ROCE_UD_SEND_ONLY = 0x64,
	ROCE_UD_SEND_ONLY_IMM = 0x65,
};

/* Opcode properties (roce_opcodes[op].flags). */
enum roce_op_flags {
	ROCE_F_VALID = 1u << 0,
	ROCE_F_RETH = 1u << 1,
	ROCE_F_AETH = 1u << 2,
	ROCE_F_IMM = 1u << 3,
	ROCE_F_ATOMIC = 1u << 4,     /* AtomicETH                          */
	ROCE_F_ATOMICACK = 1u << 5,  /* AtomicAckETH                       */
	ROCE_F_DETH = 1u << 6,
	ROCE_F_PAYLOAD = 1u << 7,    /* may carry payload                  */
	ROCE_F_FIRST = 1u << 8,      /* FIRST or ONLY                      */
	ROCE_F_LAST = 1u << 9,       /* LAST or ONLY                       */
	ROCE_F_REQ = 1u << 10,       /* request (requester -> responder)   */
	ROCE_F_RESP = 1u << 11,      /* response (ACK, READ resp, atomic ack) */
	ROCE_F_SEND = 1u << 12,
	ROCE_F_WRITE = 1u << 13,
	ROCE_F_READ = 1u << 14,      /* READ request or READ response      */
	ROCE_F_ATOMIC_OP = 1u << 15, /* CMP_SWAP / FETCH_ADD request       */
	ROCE_F_INV = 1u << 16,       /* IETH (send with invalidate)        */
	ROCE_F_ATOMIC_WRITE = 1u << 17, /* RETH + 8 bytes, ACKed like a WRITE */
	ROCE_F_XRCETH = 1u << 18,    /* XRC request: XRCETH after the BTH  */
	ROCE_F_LATER = 1u << 19,     /* RC WRITE and READ response MIDDLE
				      * and LAST, SEND MIDDLE: the receive
				      * parse may leave its ICRC for later
				      * (roce_icrc_later_hdrs)             */
};

/* An RC (or UC, XRC) WRITE_ONLY's flags: the table's entry is made from
 * this constant, which the responder's one-step path folds its checks
 * with (resp_write_only). */
#define ROCE_WRITE_ONLY_FLAGS                                                \
	(ROCE_F_VALID | ROCE_F_REQ | ROCE_F_WRITE | ROCE_F_PAYLOAD |         \
	 ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_RETH)

struct roce_opcode_info {
	const char *name;            /* "RC_SEND_FIRST"                    */
	uint32_t flags;              /* enum roce_op_flags                 */
	uint8_t ext_len;             /* bytes of extension headers after BTH */
	uint8_t layout;              /* which ones: parse_ext's switch key  */
};

extern const struct roce_opcode_info roce_opcodes[256];

/* AETH syndrome (IBTA 9.7.5.2.1 table 44). */
#define ROCE_AETH_ACK          0x00 /* | credit count (5 bits)         */
#define ROCE_AETH_RNR_NAK      0x20 /* | timer (5 bits)                */
#define ROCE_AETH_NAK          0x60 /* | NAK code                      */
#define ROCE_NAK_PSN_SEQ_ERR   0x00
#define ROCE_NAK_INVALID_REQ   0x01
#define ROCE_NAK_REM_ACCESS    0x02
#define ROCE_NAK_REM_OP_ERR    0x03
#define ROCE_NAK_INVALID_RD_REQ 0x04
#define ROCE_AETH_TYPE_MASK    0x60
#define ROCE_AETH_CREDIT_INVALID 0x1f

/* Every header field of one RoCEv2 packet, host order. */
struct roce_hdrs {
	/* Ethernet */
	uint8_t dmac[6], smac[6];
	/* IPv4 (ip6 == 0), or IPv6 (ip6 == 1: sip6/dip6 and flow_label;
	 * sip/dip are 0).  tos is the traffic class, ttl the hop limit.
	 * (ip6 and flow_label sit in what was padding below.) */
	uint32_t sip, dip;
	uint8_t tos, ttl;
	/* UDP */
	uint16_t sport;
	/* BTH */
	uint8_t opcode;
	uint8_t se, mig, pad, tver;
	uint16_t pkey;
	uint8_t fecn, becn, ackreq;
	uint8_t ip6;                 /* IP version 6 (see sip, dip above)   */
	uint8_t icrc_later;          /* ICRC not checked yet (rx_first's)   */
	uint32_t dqpn;               /* 24 bits */
	uint32_t psn;                /* 24 bits */
	uint32_t flow_label;         /* IPv6 only, 20 bits                  */
	/* RETH */
	uint64_t reth_va;
	uint32_t reth_rkey, reth_len;
	/* AETH */
	uint8_t aeth_syndrome;
	uint32_t aeth_msn;           /* 24 bits */
	/* ImmDt / IETH: network order, untouched */
	uint32_t imm;
	/* AtomicETH */
	uint64_t atomic_va;
	uint32_t atomic_rkey;
	uint64_t atomic_swap_add, atomic_cmp;
	/* AtomicAckETH */
	uint64_t atomic_orig;
	/* DETH */
	uint32_t deth_qkey, deth_sqpn;
	/* XRCETH: the XRC SRQ at the target (24 bits) */
	uint32_t xrc_srqn;
	/* payload (parse only: points into the frame) */
	const uint8_t *payload;
	uint32_t payload_len;        /* without pad and ICRC               */
	/* IPv6 addresses, network order, valid only when ip6 is set: last,
	 * so that filling an IPv4 packet's headers clears only what is
	 * above (ROCE_HDRS_CLEAR) */
	uint8_t sip6[16], dip6[16];
};

/* The bytes of struct roce_hdrs to zero before filling it in: all but
 * the IPv6 addresses, which only an IPv6 packet (ip6 = 1) sets and
 * reads. */
#define ROCE_HDRS_CLEAR offsetof(struct roce_hdrs, sip6)

/* Why a frame was not accepted as RoCEv2 (enum values are counter
 * indexes offsets; 0 = accepted). */
enum roce_parse_result {
	ROCE_OK = 0,
	ROCE_NOT_ROCE,               /* not IPv4/IPv6 UDP 4791: ARP, ND... */
	ROCE_ERR_TRUNCATED,          /* shorter than its headers say       */
	ROCE_ERR_IP_HDR,             /* bad version/IHL/length/checksum/frag */
	ROCE_ERR_UDP_LEN,            /* UDP length inconsistent            */
	ROCE_ERR_BAD_OPCODE,         /* opcode not in the table            */
	ROCE_ERR_BTH,                /* tver != 0, pad inconsistent        */
	ROCE_ERR_ICRC,               /* invariant CRC mismatch             */
};

/* Parse and validate a frame (headers, lengths, IPv4 checksum, ICRC). */
/* The opcode of one packet of a multi-packet message, from the opcode
 * table (IBTA 9.2 table 37): `family` is the message's FIRST opcode
 * (SEND_FIRST, WRITE_FIRST or READ_RESP_FIRST, RC or UC); first and last
 * place the packet (both: ONLY); imm asks for the variant with an
 * immediate, which only LAST and ONLY have.  It runs for every packet:
 * the usual layout (FIRST, MIDDLE, LAST[, LAST_IMM], ONLY[, ONLY_IMM]) is
 * tried first and checked against the table's flags; a family laid out
 * otherwise is searched. */
#define ROCE_SEG_KINDS (ROCE_F_SEND | ROCE_F_WRITE | ROCE_F_READ | ROCE_F_REQ | \
			ROCE_F_RESP | ROCE_F_INV)
#define ROCE_SEG_POS   (ROCE_F_FIRST | ROCE_F_LAST | ROCE_F_IMM)

uint8_t roce_seg_search(uint8_t family, uint32_t want);

static inline uint8_t roce_seg_opcode(uint8_t family, bool first, bool last,
				      bool imm)
{
	static const uint8_t guess[4] = { 1, 2, 0, 4 }; /* MIDDLE LAST FIRST ONLY */
	uint32_t want = (first ? ROCE_F_FIRST : 0) | (last ? ROCE_F_LAST : 0) |
			(imm && last ? ROCE_F_IMM : 0);
	uint8_t op = (uint8_t)(family + guess[first * 2 + last] + (imm && last));
	uint32_t k = roce_opcodes[family].flags & ROCE_SEG_KINDS;

	if ((roce_opcodes[op].flags & (ROCE_SEG_POS | ROCE_SEG_KINDS)) == (want | k))
		return op;
	/* READ responses have no LAST_IMM: their ONLY sits one lower */
	if (op > family &&
	    (roce_opcodes[op - 1].flags & (ROCE_SEG_POS | ROCE_SEG_KINDS)) ==
	    (want | k))
		return (uint8_t)(op - 1);
	return roce_seg_search(family, want);
}

enum roce_parse_result roce_parse(const uint8_t *frame, uint32_t len,
				  struct roce_hdrs *h);

/*
 * The receive path's parse: the same checks, verdicts and fields as
 * roce_parse for every field a receive consumer reads, but the usual
 * IPv4 frame (roce_parse_is_plain) leaves out the others:
 * - filled always: dmac, smac, ip6, sip, dip (sip6, dip6 over IPv6),
 *   opcode, se, pkey, dqpn, ackreq, psn, payload, payload_len, and the
 *   DETH's and XRCETH's fields (0 where the opcode carries none: read
 *   before the opcode is looked at);
 * - the RETH's, AETH's, ImmDt/IETH's, AtomicETH's and AtomicAckETH's
 *   fields only where the opcode carries that header (roce_opcodes[op]
 *   .flags): consumers read them only behind that flag or opcode;
 * - not filled: tos, ttl, sport, flow_label, mig, pad, tver, fecn, becn.
 * Unit wire/test_parse_diff compares it with the general path.
 */
enum roce_parse_result roce_parse_rx(const uint8_t *frame, uint32_t len,
				     struct roce_hdrs *h);
/*
 * roce_parse_rx in two halves, for the receive path (wire_classify): the
 * first leaves out, of an IPv4 RC WRITE_ONLY, what the responder's one
 * step (resp_write_only) does not read: dmac, smac, se and the DETH's
 * and XRCETH's fields.  roce_parse_rx_finish fills them in (from the
 * frame h->payload points into, which must still be there) before h goes
 * anywhere else; it leaves any other h as it is.  It also leaves the
 * ICRC of an IPv4 RC WRITE or READ response MIDDLE or LAST, or SEND
 * MIDDLE, for later (h->icrc_later, see
 * roce_icrc_later_hdrs below).  roce_parse_rx is the two in a row, with
 * such an ICRC checked at once (the same verdicts as roce_parse).
 */
enum roce_parse_result roce_parse_rx_first(const uint8_t *frame, uint32_t len,
					   struct roce_hdrs *h);
void roce_parse_rx_finish(struct roce_hdrs *h);
/* For tests: the general path alone (every frame checked step by step,
 * every field filled), and whether the one-pass path takes the frame. */
enum roce_parse_result roce_parse_general(const uint8_t *frame, uint32_t len,
					  struct roce_hdrs *h);
bool roce_parse_is_plain(const uint8_t *frame, uint32_t len);

/* Bytes from the frame start to the payload for this opcode over IPv4. */
static inline uint32_t roce_hdr_len(uint8_t opcode)
{
	return ROCE_L2L4_LEN + ROCE_BTH_LEN + roce_opcodes[opcode].ext_len;
}

/* The same for the frame h describes (IPv4 or IPv6): where its payload
 * goes. */
static inline uint32_t roce_hdrs_len(const struct roce_hdrs *h)
{
	return roce_hdr_len(h->opcode) + (h->ip6 ? ROCE_IPV6_EXTRA : 0u);
}

/* Frame length for a payload of n bytes: headers, payload, pad, ICRC. */
static inline uint32_t roce_frame_len(const struct roce_hdrs *h, uint32_t n)
{
	return roce_hdrs_len(h) + ((n + 3u) & ~3u) + ROCE_ICRC_LEN;
}

/*
 * Build a frame in place: the caller has already put payload_len bytes of
 * payload at frame + roce_hdrs_len(h).  Writes every header from h (IPv4
 * or IPv6 by h->ip6; h->pad is derived from payload_len), zero pad, IPv4
 * checksum and ICRC.
 * Returns the frame length.  The buffer must hold roce_frame_len() bytes.
 */
uint32_t roce_build(uint8_t *frame, const struct roce_hdrs *h,
		    uint32_t payload_len);

/*
 * A peer's frame header template (IPv4): Ethernet, IPv4 and UDP as they go
 * on the wire, built once by roce_tmpl_make from h's addresses (dmac,
 * smac, sip, dip, tos, ttl, sport), with the IPv4 header's sum over all
 * but the total length and checksum.  roce_build_tmpl copies it and
 * patches the lengths and the checksum, then writes the BTH, extension
 * headers, pad and ICRC from h as roce_build does: the same frame, without
 * rebuilding the addresses per packet.  Its owner clears valid when
 * anything it was made from changes (hdr.c: qp_path_changed).
 */
struct roce_tmpl {
	uint8_t l2l4[ROCE_L2L4_LEN];    /* total length, checksum, UDP length 0 */
	uint16_t ipsum;                 /* folded sum, network order value    */
	bool valid;
	/* its destination MAC is the core's loopback MAC (set with valid by
	 * its owner, hdr.c): the frames loop back (core_tx_to) */
	bool loop;
};

void roce_tmpl_make(struct roce_tmpl *t, const struct roce_hdrs *h);
uint32_t roce_build_tmpl(uint8_t *frame, const struct roce_tmpl *t,
			 const struct roce_hdrs *h, uint32_t payload_len);
/* The same without pad and ICRC, for a payload copied after the headers
 * with its ICRC folded into the copy: roce_icrc4_hdrs gives the register
 * the copy goes on from, roce_icrc_put stores the result. */
uint32_t roce_build_tmpl_hdrs(uint8_t *frame, const struct roce_tmpl *t,
			      const struct roce_hdrs *h, uint32_t payload_len);
void roce_icrc_put(uint8_t *frame, uint32_t len, uint32_t icrc);
/* A request's BTH fields and the RETH / ImmDt / IETH its opcode has
 * (no XRCETH, DETH or AtomicETH: those go through roce_build_tmpl), for
 * roce_build_tmpl_req: the frame roce_build_tmpl makes from the same
 * fields (MigReq, TVer, FECN, BECN 0). */
struct roce_req {
	uint8_t opcode;
	bool se, ackreq;
	uint32_t dqpn, psn;
	uint64_t va;                    /* RETH                               */
	uint32_t rkey, dlen;
	uint32_t imm;                   /* ImmDt or IETH, network order       */
};
uint32_t roce_build_tmpl_req(uint8_t *frame, const struct roce_tmpl *t,
			     const struct roce_req *r, uint32_t payload_len);

/* ICRC (IBTA A17.3.3): CRC-32 over the masked invariant fields; IPv4 or
 * IPv6 by the frame's EtherType. */
uint32_t roce_icrc(const uint8_t *frame, uint32_t len_without_icrc);
/* The same for a frame whose family the caller knows and whose headers
 * are all there (roce_parse after its checks, roce_build): no checks. */
uint32_t roce_icrc_ip(const uint8_t *frame, uint32_t len_without_icrc,
		      bool ip6);
/* The ICRC's CRC register (not complemented; crc32_hw's) over an IPv4
 * frame's LRH ones and masked headers, IP to hdr_len: what the payload
 * and pad are folded onto (crc32_hw_copy); the ICRC is its complement
 * after them.  Only where crc32_hw_ok(). */
uint32_t roce_icrc4_hdrs(const uint8_t *frame, uint32_t hdr_len);

/*
 * A frame roce_parse_rx_first accepted with its ICRC left for later
 * (h->icrc_later): an IPv4 RC WRITE or READ response MIDDLE or LAST, or
 * SEND MIDDLE, where the CPU folds CRCs, whose payload the responder's
 * or the completer's one step places with the check folded into the
 * copy (resp_more, comp_read_more).  Its payload lands only inside the
 * message a FIRST packet with a good ICRC opened, whose bytes mean
 * nothing until its LAST is in; a bad one is dropped there before any
 * state moves, and its retransmission writes the same bytes again.
 * Every other use of the frame checks it first: roce_icrc_later_ok.
 * roce_icrc_later_hdrs: the register the payload and pad are folded onto
 * (the masked headers'); roce_icrc_later_is: whether the register after
 * them gives the frame's ICRC.
 */
uint32_t roce_icrc_later_hdrs(const struct roce_hdrs *h);
bool roce_icrc_later_is(const struct roce_hdrs *h, uint32_t reg);
bool roce_icrc_later_ok(const struct roce_hdrs *h);

/* 24-bit PSN arithmetic: signed distance a - b in [-2^23, 2^23). */
static inline int32_t roce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

#endif /* SNIC_ROCE_WIRE_H */
