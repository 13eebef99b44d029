/* SPDX-License-Identifier: MIT */
/*
 * RoCE v2 over IPv6: the codec (build, parse, ICRC with the IPv6 mask,
 * malformed IPv6 frames), neighbour discovery (RFC 4861: solicitations
 * answered, learning only what was asked for, invalid messages dropped),
 * and RC and UD traffic between the two simulated NICs over their IPv6
 * GIDs (GID 1), black-box through the fake host and the link.
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "fake_frames.h"
#include "wire/crc32.h"
#include "wire/roce_wire.h"
#include "unit.h"

#define BUF      2048
#define IP6      ROCE_ETH_HLEN
#define UDP6     (IP6 + ROCE_IPV6_HLEN)
#define BTH6     (UDP6 + ROCE_UDP_HLEN)
#define STEPS    4000
#define QKEY     0x66660000u

/* An RC SEND ONLY over IPv6 (payload "snic-wire6", pad 2, traffic class
 * 0x02, flow label 0x12345, hop limit 64, fd00:5e1c::c612:1 ->
 * fd00:5e1c::c612:2), its ICRC computed with Python's zlib over the
 * masked fields as Annex A17.3.3 lists them: independent of this code. */
static const uint8_t vec6[90] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x21, 0x23, 0x45, 0x00, 0x24, 0x11, 0x40, 0xfd, 0x00,
	0x5e, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc6, 0x12,
	0x00, 0x01, 0xfd, 0x00, 0x5e, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xc6, 0x12, 0x00, 0x02, 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x24,
	0x00, 0x00, 0x04, 0x20, 0xff, 0xff, 0x00, 0x00, 0x00, 0x22, 0x80, 0x12,
	0x34, 0x56, 0x73, 0x6e, 0x69, 0x63, 0x2d, 0x77, 0x69, 0x72, 0x65, 0x36,
	0x00, 0x00, 0x86, 0xb1, 0xdd, 0x28,
};

/* ---- codec ---- */

static void fill6(struct roce_hdrs *h, uint8_t op)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->dmac, "\x02\x11\x22\x33\x44\x55", 6);
	memcpy(h->smac, "\x02\x66\x77\x88\x99\xaa", 6);
	h->ip6 = 1;
	memcpy(h->sip6, vec6 + IP6 + 8, 16);
	memcpy(h->dip6, vec6 + IP6 + 24, 16);
	h->flow_label = 0xabcde;
	h->tos = 0x5c;
	h->ttl = 9;
	h->sport = 0xc321;
	h->opcode = op;
	h->pkey = 0xffff;
	h->dqpn = 0x123456;
	h->psn = 0x654321;
	h->ackreq = 1;
	h->reth_va = 0x1122334455667788ull;
	h->reth_rkey = 0x99aabbcc;
	h->reth_len = 77;
	h->aeth_syndrome = 0x1f;
	h->aeth_msn = 0x777;
	h->deth_qkey = 0x80010000;
	h->deth_sqpn = 0xabcdef;
}

static uint32_t build6(uint8_t *f, uint8_t op, uint32_t n, struct roce_hdrs *h)
{
	fill6(h, op);
	for (uint32_t i = 0; i < n; i++)
		f[roce_hdrs_len(h) + i] = (uint8_t)(i * 5 + 1);
	return roce_build(f, h, n);
}

/* Every opcode that carries payload or not, each pad count: the frame
 * parses back to the same fields, 20 bytes longer than over IPv4. */
static void test_ip6_roundtrip(void)
{
	static uint8_t f[BUF];
	static const uint8_t ops[] = { ROCE_RC_SEND_ONLY, ROCE_RC_WRITE_FIRST,
				       ROCE_RC_READ_REQ, ROCE_RC_ACK,
				       ROCE_RC_READ_RESP_LAST, ROCE_UD_SEND_ONLY,
				       ROCE_UC_BASE | ROCE_RC_WRITE_ONLY };

	for (unsigned k = 0; k < sizeof(ops); k++) {
		uint8_t op = ops[k];
		uint32_t nmax = (roce_opcodes[op].flags & ROCE_F_PAYLOAD) ? 4 : 0;

		for (uint32_t n = 0; n <= nmax; n++) {
			struct roce_hdrs in, out;
			uint32_t len = build6(f, op, n, &in);

			CU_ASSERT_EQUAL(len, roce_hdr_len(op) + ROCE_IPV6_EXTRA +
					((n + 3u) & ~3u) + ROCE_ICRC_LEN);
			CU_ASSERT_EQUAL(f[12], 0x86);
			CU_ASSERT_EQUAL(f[13], 0xdd);
			CU_ASSERT_EQUAL_FATAL(roce_parse(f, len, &out), ROCE_OK);
			CU_ASSERT_EQUAL(out.ip6, 1);
			CU_ASSERT_EQUAL(out.sip, 0);
			CU_ASSERT_EQUAL(out.dip, 0);
			CU_ASSERT(memcmp(out.sip6, in.sip6, 16) == 0);
			CU_ASSERT(memcmp(out.dip6, in.dip6, 16) == 0);
			CU_ASSERT_EQUAL(out.flow_label, 0xabcde);
			CU_ASSERT_EQUAL(out.tos, 0x5c);
			CU_ASSERT_EQUAL(out.ttl, 9);
			CU_ASSERT_EQUAL(out.sport, 0xc321);
			CU_ASSERT_EQUAL(out.opcode, op);
			CU_ASSERT_EQUAL(out.dqpn, 0x123456);
			CU_ASSERT_EQUAL(out.psn, 0x654321);
			CU_ASSERT_EQUAL(out.pad, (uint8_t)(-n & 3u));
			CU_ASSERT_EQUAL(out.payload_len, n);
			CU_ASSERT_PTR_EQUAL(out.payload, f + roce_hdrs_len(&in));
			if (roce_opcodes[op].flags & ROCE_F_RETH)
				CU_ASSERT_EQUAL(out.reth_va, in.reth_va);
			if (roce_opcodes[op].flags & ROCE_F_DETH)
				CU_ASSERT_EQUAL(out.deth_sqpn, in.deth_sqpn);
			if (roce_opcodes[op].flags & ROCE_F_AETH)
				CU_ASSERT_EQUAL(out.aeth_msn, in.aeth_msn);
			for (uint32_t i = 0; i < n; i++)
				CU_ASSERT_EQUAL(out.payload[i], (uint8_t)(i * 5 + 1));
			/* UDP length = IPv6 payload length; checksum 0 */
			CU_ASSERT_EQUAL((uint32_t)(f[UDP6 + 4] << 8 | f[UDP6 + 5]),
					len - UDP6);
			CU_ASSERT_EQUAL((uint32_t)(f[IP6 + 4] << 8 | f[IP6 + 5]),
					len - UDP6);
			CU_ASSERT_EQUAL(f[UDP6 + 6] | f[UDP6 + 7], 0);
			CU_ASSERT_EQUAL(f[IP6 + 6], 17);
		}
	}
}

/* The independent vector: its ICRC, its fields, and roce_build
 * reproducing it byte for byte. */
static void test_ip6_known_vector(void)
{
	static uint8_t f[BUF];
	struct roce_hdrs h;

	CU_ASSERT_EQUAL(roce_icrc(vec6, 86), 0x28ddb186u);
	CU_ASSERT_EQUAL_FATAL(roce_parse(vec6, 90, &h), ROCE_OK);
	CU_ASSERT_EQUAL(h.ip6, 1);
	CU_ASSERT_EQUAL(h.tos, 0x02);
	CU_ASSERT_EQUAL(h.flow_label, 0x12345);
	CU_ASSERT_EQUAL(h.ttl, 64);
	CU_ASSERT_EQUAL(h.dqpn, 0x22);
	CU_ASSERT_EQUAL(h.payload_len, 10);
	CU_ASSERT(memcmp(h.payload, "snic-wire6", 10) == 0);
	memset(f, 0xee, sizeof(f));
	memcpy(f + roce_hdrs_len(&h), h.payload, h.payload_len);
	CU_ASSERT_EQUAL(roce_build(f, &h, h.payload_len), 90);
	CU_ASSERT(memcmp(f, vec6, 90) == 0);
}

/* A17.3.3 over IPv6: traffic class, flow label, hop limit, the UDP
 * checksum and BTH byte 4 are masked; every other bit from the IPv6
 * header on counts (the version nibble too). */
static void test_ip6_icrc_masking(void)
{
	static uint8_t f[BUF];
	uint32_t ref = roce_icrc(vec6, 86);

	for (unsigned i = IP6; i < 86; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			bool masked = (i == IP6 && bit < 4) || i == IP6 + 1 ||
				      i == IP6 + 2 || i == IP6 + 3 ||
				      i == IP6 + 7 || i == UDP6 + 6 ||
				      i == UDP6 + 7 || i == BTH6 + 4;

			memcpy(f, vec6, sizeof(vec6));
			f[i] ^= (uint8_t)(1u << bit);
			if (i == IP6 && bit >= 4)
				continue; /* no longer IPv6: another header */
			if (masked) {
				CU_ASSERT_EQUAL(roce_icrc(f, 86), ref);
			} else {
				CU_ASSERT_NOT_EQUAL(roce_icrc(f, 86), ref);
			}
		}
	}
}

/* The ICRC spelt out: 8 x 0xFF, the masked IPv6 + UDP + BTH, the rest,
 * bit by bit.  roce_icrc folds it in one or two runs with zero padding
 * in front: every length must agree. */
static uint32_t icrc6_ref(const uint8_t *f, uint32_t len)
{
	static uint8_t m[8 + BUF];

	memset(m, 0xff, 8);
	memcpy(m + 8, f + IP6, len - IP6);
	m[8] |= 0x0f;
	m[8 + 1] = m[8 + 2] = m[8 + 3] = m[8 + 7] = 0xff;
	m[8 + 46] = m[8 + 47] = m[8 + 52] = 0xff;
	return fcrc32_bits(m, 8 + len - IP6);
}

static void test_ip6_icrc_every_length(void)
{
	static uint8_t f[BUF];
	uint32_t x = 777;

	for (uint32_t i = 0; i < sizeof(f); i++) {
		x = x * 1103515245u + 12345u;
		f[i] = (uint8_t)(x >> 16);
	}
	f[12] = 0x86;
	f[13] = 0xdd;
	for (uint32_t len = BTH6 + ROCE_BTH_LEN; len <= 700; len++)
		CU_ASSERT_EQUAL(roce_icrc(f, len), icrc6_ref(f, len));
	for (uint32_t len = 700; len + 4 <= BUF; len += 89)
		CU_ASSERT_EQUAL(roce_icrc(f, len), icrc6_ref(f, len));
}

/* Malformed IPv6 frames: each refused with its reason. */
static void test_ip6_parse_errors(void)
{
	static uint8_t f[BUF], g[BUF];
	struct roce_hdrs h, in;
	uint32_t len = build6(f, ROCE_RC_SEND_ONLY, 40, &in);

	memcpy(g, f, len);
	g[IP6 + 6] = 0;                 /* hop-by-hop options: not ours */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_NOT_ROCE);
	memcpy(g, f, len);
	g[IP6 + 6] = 58;                /* ICMPv6 */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_NOT_ROCE);
	memcpy(g, f, len);
	g[UDP6 + 2] = 0;                /* another UDP port */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_NOT_ROCE);
	memcpy(g, f, len);
	g[IP6] = 0x50;                  /* version 5 under EtherType IPv6 */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_ERR_IP_HDR);
	memcpy(g, f, len);
	g[IP6 + 4] = 0x10;              /* payload length beyond the frame */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_ERR_TRUNCATED);
	memcpy(g, f, len);
	g[IP6 + 4] = 0;
	g[IP6 + 5] = 4;                 /* no room for UDP */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_ERR_IP_HDR);
	memcpy(g, f, len);
	g[UDP6 + 5] ^= 4;               /* UDP length != IPv6 payload */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_ERR_UDP_LEN);
	memcpy(g, f, len);
	g[IP6 + 8 + 15] ^= 1;           /* the source address is covered */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_ERR_ICRC);
	memcpy(g, f, len);
	g[IP6 + 7] = 1;                 /* hop limit: masked, still fine */
	CU_ASSERT_EQUAL(roce_parse(g, len, &h), ROCE_OK);
	for (uint32_t n = 0; n < UDP6 + ROCE_UDP_HLEN; n++)
		CU_ASSERT_EQUAL(roce_parse(f, n, &h),
				n < IP6 + ROCE_IPV6_HLEN + ROCE_UDP_HLEN &&
				n >= ROCE_ETH_HLEN ? ROCE_ERR_TRUNCATED :
				n < ROCE_ETH_HLEN ? ROCE_ERR_TRUNCATED : ROCE_OK);
	/* Ethernet padding after the IPv6 packet is ignored */
	memcpy(g, f, len);
	memset(g + len, 0, 20);
	CU_ASSERT_EQUAL(roce_parse(g, len + 20, &h), ROCE_OK);
}

/* ---- neighbour discovery, through snic0's port ---- */

#define ND_LEN (IP6 + ROCE_IPV6_HLEN + 32) /* NS/NA with one option */

static const uint8_t HOST_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x99 };

/* The ICMPv6 checksum as RFC 8200 8.1 and RFC 4443 2.3 define it. */
static uint16_t icmp6_csum(const uint8_t *ip6, uint32_t n)
{
	uint32_t s = n + 58;

	for (uint32_t i = 8; i < 40; i += 2)
		s += (uint32_t)ip6[i] << 8 | ip6[i + 1];
	for (uint32_t i = 0; i < n; i += 2)
		s += (uint32_t)ip6[40 + i] << 8 | ip6[41 + i];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* An NS (135) or NA (136) from src (MAC HOST_MAC) for target. */
static void nd_frame(uint8_t *f, uint8_t type, const uint8_t src[16],
		     const uint8_t dst[16], const uint8_t target[16])
{
	uint8_t *ip = f + IP6, *m = ip + 40;
	uint16_t c;

	memset(f, 0, ND_LEN);
	memset(f, 0x33, 2);
	memcpy(f + 2, dst + 12, 4);
	memcpy(f + 6, HOST_MAC, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = 32;
	ip[6] = 58;
	ip[7] = 255;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	m[0] = type;
	if (type == 136)
		m[4] = 0x60;            /* solicited, override */
	memcpy(m + 8, target, 16);
	m[24] = type == 135 ? 1 : 2;    /* source / target link-layer */
	m[25] = 1;
	memcpy(m + 26, HOST_MAC, 6);
	c = icmp6_csum(ip, 32);
	m[2] = (uint8_t)(c >> 8);
	m[3] = (uint8_t)c;
}

struct nd_env {
	struct fenv *e;
	struct ftap tap;        /* what a transmits */
	uint8_t a6[16], host6[16];
};

static void nd_setup(struct nd_env *n)
{
	n->e = fenv_new(4200, 1u << 18, 64);
	ftap_init(&n->tap, 0);
	fake_link_set_hook(&n->e->s->link, ftap_hook, &n->tap);
	memcpy(n->a6, n->e->s->a.cfg.ipv6, 16);
	fdev_ipv6(0xc61200aa, n->host6);        /* a host on the link */
}

static void nd_inject(struct nd_env *n, uint8_t type, const uint8_t src[16],
		      const uint8_t target[16], void (*spoil)(uint8_t *))
{
	uint8_t f[ND_LEN];

	nd_frame(f, type, src, n->a6, target);
	if (spoil)
		spoil(f);
	CU_ASSERT_EQUAL_FATAL(fake_link_inject(&n->e->s->link, 0, f, ND_LEN), 0);
	fsim_idle(n->e->s, 4);
}

static void spoil_csum(uint8_t *f) { f[IP6 + 40 + 2] ^= 0x10; }
static void spoil_hops(uint8_t *f) { f[IP6 + 7] = 64; }

static uint64_t cnt_a(struct nd_env *n, const char *name)
{
	return fside_counter(&n->e->a, name);
}

/* An NS for our address: an NA to the asker (its MAC and address), our
 * MAC as the target link-layer address, hop limit 255, a valid checksum;
 * the asker is learnt (RFC 4861 7.2.3). */
static void test_nd_solicit_answered(void)
{
	struct nd_env n;
	uint16_t len = 0;
	const uint8_t *f;
	uint64_t sent;

	nd_setup(&n);
	sent = n.tap.frames;
	nd_inject(&n, 135, n.host6, n.a6, NULL);
	CU_ASSERT_EQUAL_FATAL(n.tap.frames, sent + 1);
	f = ftap_frame(&n.tap, n.tap.frames - 1, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(len, ND_LEN);
	CU_ASSERT(memcmp(f, HOST_MAC, 6) == 0);
	CU_ASSERT(memcmp(f + 6, n.e->s->a.cfg.mac, 6) == 0);
	CU_ASSERT_EQUAL(f[IP6 + 6], 58);
	CU_ASSERT_EQUAL(f[IP6 + 7], 255);
	CU_ASSERT(memcmp(f + IP6 + 8, n.a6, 16) == 0);
	CU_ASSERT(memcmp(f + IP6 + 24, n.host6, 16) == 0);
	CU_ASSERT_EQUAL(f[IP6 + 40], 136);
	CU_ASSERT_EQUAL(f[IP6 + 40 + 4] & 0x60, 0x60);  /* S and O */
	CU_ASSERT(memcmp(f + IP6 + 40 + 8, n.a6, 16) == 0);
	CU_ASSERT_EQUAL(f[IP6 + 40 + 24], 2);
	CU_ASSERT(memcmp(f + IP6 + 40 + 26, n.e->s->a.cfg.mac, 6) == 0);
	CU_ASSERT_EQUAL(icmp6_csum(f + IP6, 32), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "nd_adverts_sent"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 1);
	fenv_free(n.e);
}

/* Not ours to answer or learn: an NS for another address, an
 * unsolicited NA, an NS with a bad checksum or a hop limit below 255
 * (RFC 4861 7.1.1: it crossed a router). */
static void test_nd_rules(void)
{
	struct nd_env n;
	uint8_t other[16];
	uint64_t sent;

	nd_setup(&n);
	fdev_ipv6(0xc61200bb, other);
	sent = n.tap.frames;
	nd_inject(&n, 135, n.host6, other, NULL);       /* someone else's */
	nd_inject(&n, 136, n.host6, n.host6, NULL);     /* never asked     */
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_arp_unsolicited"), 1);
	nd_inject(&n, 135, n.host6, n.a6, spoil_csum);
	nd_inject(&n, 135, n.host6, n.a6, spoil_hops);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_nd"), 2);
	CU_ASSERT_EQUAL(n.tap.frames, sent);            /* nothing answered */
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_nd"), 4);
	fenv_free(n.e);
}

/* ---- traffic over IPv6 between snic0 and snic1 ---- */

/* WRITE, READ and SEND on an RC connection over the IPv6 GIDs: the data
 * arrives, every RoCE frame on the link is IPv6 with the path's flow
 * label and traffic class, the MACs came from neighbour discovery. */
static void test_ip6_rc(void)
{
	struct fsim *s = fsim_new(4200);
	struct ftap tap;
	struct fpair p;
	struct fconn c;
	struct snic_cqe cqe;
	struct snic_wqe_sge sge;
	struct fwr wr = { 0 };
	uint8_t *src, *dst;
	bool saw_roce6 = false, saw_roce4 = false;

	fconn_default(&c);
	c.ip6 = true;
	c.flow_label = 0x5a5a5;
	c.traffic_class = 0x68;
	ftap_init(&tap, 0);
	fake_link_set_hook(&s->link, ftap_hook, &tap);
	CU_ASSERT_EQUAL_FATAL(fpair_setup(&p, s, &c, 1u << 16, 64), SNIC_ST_OK);
	src = fdev_ptr(&s->a, p.bufa);
	dst = fdev_ptr(&s->b, p.bufb);
	fpattern(src, 5000, 6);
	memset(dst, 0, 16384);
	sge = (struct snic_wqe_sge){ .addr = p.bufa, .length = 5000, .lkey = p.mra };
	wr = (struct fwr){ .wr_id = 1, .opcode = SNIC_WR_RDMA_WRITE,
			   .flags = SNIC_SEND_SIGNALED, .remote_addr = p.bufb,
			   .rkey = p.mrb, .sge = &sge, .num_sge = 1 };
	fqp_post_send(&p.qa, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(s, &p.cqa, &cqe, STEPS));
	CU_ASSERT_EQUAL(cqe.status, SNIC_WC_SUCCESS);
	CU_ASSERT(memcmp(src, dst, 5000) == 0);
	/* READ it back into a's buffer at 8192 */
	sge = (struct snic_wqe_sge){ .addr = p.bufa + 8192, .length = 5000, .lkey = p.mra };
	wr.wr_id = 2;
	wr.opcode = SNIC_WR_RDMA_READ;
	fqp_post_send(&p.qa, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(s, &p.cqa, &cqe, STEPS));
	CU_ASSERT_EQUAL(cqe.status, SNIC_WC_SUCCESS);
	CU_ASSERT(memcmp(src, src + 8192, 5000) == 0);
	for (uint64_t k = 0; k < tap.frames; k++) {
		uint16_t len = 0;
		const uint8_t *f = ftap_frame(&tap, k, &len);

		if (!f || len < BTH6)
			continue;
		saw_roce4 |= f[12] == 0x08 && f[13] == 0x00;
		if (f[12] == 0x86 && f[13] == 0xdd && f[IP6 + 6] == 17) {
			saw_roce6 = true;
			CU_ASSERT_EQUAL(f[IP6] & 0x0f, 0x6);     /* TC 0x68 */
			CU_ASSERT_EQUAL(f[IP6 + 1], 0x85);       /* TC low, FL */
			CU_ASSERT_EQUAL(f[IP6 + 2], 0xa5);
			CU_ASSERT_EQUAL(f[IP6 + 3], 0xa5);
			CU_ASSERT_EQUAL(f[IP6 + 7], 64);
			CU_ASSERT(memcmp(f + IP6 + 8, s->a.cfg.ipv6, 16) == 0);
			CU_ASSERT(memcmp(f + IP6 + 24, s->b.cfg.ipv6, 16) == 0);
			CU_ASSERT(memcmp(f, s->b.cfg.mac, 6) == 0);
		}
	}
	CU_ASSERT(saw_roce6);
	CU_ASSERT(!saw_roce4);
	CU_ASSERT(fdev_counter(&s->a, "nd_solicits_sent") >= 1);
	CU_ASSERT(fdev_counter(&s->b, "nd_adverts_sent") >= 1);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "arp_requests_sent"), 0);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "rx_drop_icrc"), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* UD to an IPv6 GID: the datagram arrives after a GRH area that is the
 * packet's IPv6 header, and the CQE says IPv6 (sl 1, mlx5's network
 * header type); an AH to the IPv6 loopback address fails the WQE. */
static void test_ip6_ud(void)
{
	struct fenv *e = fenv_new(4200, 1u << 20, 64);
	struct fqp qa, qb;
	struct snic_cqe c;
	struct snic_wqe_ud ud;
	struct snic_wqe_sge sge = fside_sge(&e->a, 0, 300);
	struct snic_wqe_sge rsge = fside_sge(&e->b, 0x10000, SNIC_GRH_LEN + 512);
	struct fwr wr = { .wr_id = 7, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1,
			  .ud = &ud };
	const uint8_t *grh = fside_ptr(&e->b, 0x10000);

	CU_ASSERT_EQUAL_FATAL(fside_qp(&e->a, &qa, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&e->b, &qb, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&qa, QKEY, 1), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&qb, QKEY, 2), SNIC_ST_OK);
	fpattern(fside_ptr(&e->a, 0), 300, 9);
	fud_addr(&ud, 0, qb.qpn, QKEY);
	memcpy(ud.dgid, e->s->b.cfg.ipv6, 16);
	ud.hop_limit = 33;
	ud.traffic_class = 0x10;
	ud.flow_label = 0x11111;
	fqp_post_recv(&qb, 70, &rsge, 1);
	fqp_post_send(&qa, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(e->s, &e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_FATAL(fsim_poll_cq(e->s, &e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.byte_len, SNIC_GRH_LEN + 300);
	CU_ASSERT_EQUAL(c.sl, SNIC_CQE_SL_ROCE_IPV6);
	CU_ASSERT_EQUAL(c.src_qp, qa.qpn);
	CU_ASSERT_EQUAL(grh[0], 0x61);                  /* 6, TC 0x10 */
	CU_ASSERT_EQUAL(grh[1], 0x01);                  /* TC low 0, FL */
	CU_ASSERT_EQUAL(grh[2], 0x11);
	CU_ASSERT_EQUAL(grh[3], 0x11);
	CU_ASSERT_EQUAL((uint32_t)(grh[4] << 8 | grh[5]), 8 + 12 + 8 + 300 + 4);
	CU_ASSERT_EQUAL(grh[6], 17);
	CU_ASSERT_EQUAL(grh[7], 33);
	CU_ASSERT(memcmp(grh + 8, e->s->a.cfg.ipv6, 16) == 0);
	CU_ASSERT(memcmp(grh + 24, e->s->b.cfg.ipv6, 16) == 0);
	CU_ASSERT(memcmp(grh + SNIC_GRH_LEN, fside_ptr(&e->a, 0), 300) == 0);
	/* ::1 is no destination on a wire */
	memset(ud.dgid, 0, 16);
	ud.dgid[15] = 1;
	wr.wr_id = 8;
	fqp_post_send(&qa, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(e->s, &e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.wr_id, 8);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_QP_OP_ERR);
	fenv_free(e);
}

UNIT_SUITE(ipv6, NULL, NULL,
	   UNIT_TEST(test_ip6_roundtrip),
	   UNIT_TEST(test_ip6_known_vector),
	   UNIT_TEST(test_ip6_icrc_masking),
	   UNIT_TEST(test_ip6_icrc_every_length),
	   UNIT_TEST(test_ip6_parse_errors),
	   UNIT_TEST(test_nd_solicit_answered),
	   UNIT_TEST(test_nd_rules),
	   UNIT_TEST(test_ip6_rc),
	   UNIT_TEST(test_ip6_ud))
