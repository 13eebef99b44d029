/* SPDX-License-Identifier: MIT */
/*
 * The exception path (nic/netdev.c) through the two-NIC simulation: what
 * is not RoCE goes to the host's network interface (the HAL's netdev_rx,
 * recorded here), ARP for the NIC's own address stays with the firmware,
 * and frames from the interface leave through the port after the checks
 * (the NIC's source MAC, the MTU, no ARP replies).  Without the HAL op,
 * such frames are dropped and counted as before.
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "fake_frames.h"
#include "nic/top.h"
#include "unit.h"

#define IP(n) (0xc6120000u | (n))  /* 198.18.0.n */
#define FRAME 98                   /* an ICMP echo of ping's default size */

static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t ZERO[6];
static const uint8_t MAC_A[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
static const uint8_t MAC_B[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
static const uint8_t MAC_X[6] = { 0x02, 0x00, 0x00, 0x00, 0x01, 0x50 };

/* What a's netdev_rx was given. */
static struct {
	unsigned n;
	uint16_t port, len;
	uint8_t last[FRAME];
} got;

static void rec_netdev_rx(void *hal, uint16_t port, const struct snic_pkt *p)
{
	(void)hal;
	got.n++;
	got.port = port;
	got.len = p->len;
	memcpy(got.last, p->data, p->len < FRAME ? p->len : FRAME);
}

struct nd {
	struct fenv *e;
	struct ftap tap;        /* what a transmits */
	struct snic_hal_ops ops;
};

static void nd_setup(struct nd *n, bool with_netdev)
{
	struct snic_core *c;

	memset(&got, 0, sizeof(got));
	n->e = fenv_new(4200, 1u << 18, 64);
	ftap_init(&n->tap, 0);
	fake_link_set_hook(&n->e->s->link, ftap_hook, &n->tap);
	if (!with_netdev)
		return;
	c = &n->e->s->a.nic->core;
	n->ops = *c->ops;
	n->ops.netdev_rx = rec_netdev_rx;
	c->ops = &n->ops;
}

static uint64_t cnt_a(struct nd *n, const char *name)
{
	return fside_counter(&n->e->a, name);
}

/* An IPv4 frame (ICMP echo request, or UDP to port 53) from src to dst. */
static void ip_frame(uint8_t f[FRAME], const uint8_t dmac[6],
		     const uint8_t smac[6], uint8_t proto)
{
	memset(f, 0, FRAME);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = FRAME - 14;
	f[22] = 64;
	f[23] = proto;
	f[26] = 198, f[27] = 18, f[29] = 2;     /* 198.18.0.2 */
	f[30] = 198, f[31] = 18, f[33] = 1;     /* 198.18.0.1 */
	if (proto == 17)
		f[36] = 0, f[37] = 53;          /* UDP destination port 53 */
	else
		f[34] = 8;                      /* ICMP echo request */
	for (unsigned i = 42; i < FRAME; i++)
		f[i] = (uint8_t)i;
}

static void inject_a(struct nd *n, const uint8_t *f, uint16_t len)
{
	CU_ASSERT_EQUAL_FATAL(fake_link_inject(&n->e->s->link, 0, f, len), 0);
	fsim_idle(n->e->s, 4);
}

/* ---------------------------------------------------------------------- */

/* ICMP and UDP other than RoCE reach the host's interface unchanged. */
static void test_netdev_rx_ip(void)
{
	struct nd n;
	uint8_t f[FRAME];

	nd_setup(&n, true);
	ip_frame(f, MAC_A, MAC_B, 1);
	inject_a(&n, f, FRAME);
	CU_ASSERT_EQUAL(got.n, 1);
	CU_ASSERT_EQUAL(got.port, 0);
	CU_ASSERT_EQUAL(got.len, FRAME);
	CU_ASSERT_EQUAL(memcmp(got.last, f, FRAME), 0);
	ip_frame(f, MAC_A, MAC_B, 17);
	inject_a(&n, f, FRAME);
	CU_ASSERT_EQUAL(got.n, 2);
	CU_ASSERT_EQUAL(memcmp(got.last, f, FRAME), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "netdev_rx_frames"), 2);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_not_roce"), 0);
	fenv_free(n.e);
}

/* Without the HAL op: dropped and counted, as on a NIC without one. */
static void test_netdev_absent(void)
{
	struct nd n;
	uint8_t f[FRAME];

	nd_setup(&n, false);
	ip_frame(f, MAC_A, MAC_B, 1);
	inject_a(&n, f, FRAME);
	CU_ASSERT_EQUAL(got.n, 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "netdev_rx_frames"), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_not_roce"), 1);
	fenv_free(n.e);
}

/* ARP: a request for our address is the firmware's (answered, not given
 * to the host); replies and requests for other addresses reach the host
 * too. */
static void test_netdev_rx_arp(void)
{
	struct nd n;
	uint8_t f[FARP_LEN];
	uint16_t len;

	nd_setup(&n, true);
	len = farp_build(f, FARP_REQUEST, BCAST, MAC_X, IP(80), ZERO, IP(1));
	inject_a(&n, f, len);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), 1);
	CU_ASSERT_EQUAL(got.n, 0);
	len = farp_build(f, FARP_REQUEST, BCAST, MAC_X, IP(80), ZERO, IP(7));
	inject_a(&n, f, len);
	CU_ASSERT_EQUAL(got.n, 1);
	CU_ASSERT_EQUAL(memcmp(got.last, f, len), 0);
	len = farp_build(f, FARP_REPLY, MAC_A, MAC_X, IP(80), MAC_A, IP(1));
	inject_a(&n, f, len);
	CU_ASSERT_EQUAL(got.n, 2);
	CU_ASSERT_EQUAL(memcmp(got.last, f, len), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "netdev_rx_frames"), 2);
	fenv_free(n.e);
}

/* Host to port: a good frame leaves unchanged; ARP replies, another
 * source MAC, runt and oversized frames are refused and counted. */
static void test_netdev_tx(void)
{
	static uint8_t big[4200 + 14 + 4 + 1];
	struct snic_nic *a;
	struct nd n;
	uint8_t f[FRAME], arp[FARP_LEN];
	const uint8_t *sent;
	uint64_t before;
	uint16_t len;

	nd_setup(&n, true);
	a = n.e->s->a.nic;
	before = n.tap.frames;
	ip_frame(f, MAC_B, MAC_A, 1);
	CU_ASSERT_EQUAL(snic_nic_netdev_tx(a, f, FRAME), 0);
	fsim_idle(n.e->s, 4);
	CU_ASSERT_EQUAL_FATAL(n.tap.frames, before + 1);
	sent = ftap_frame(&n.tap, before, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sent);
	CU_ASSERT_EQUAL(len, FRAME);
	CU_ASSERT_EQUAL(memcmp(sent, f, FRAME), 0);
	/* b has no interface: it drops the ICMP frame, counted */
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "rx_drop_not_roce"), 1);
	/* the kernel's ARP request goes out, its ARP reply does not */
	len = farp_build(arp, FARP_REQUEST, BCAST, MAC_A, IP(1), ZERO, IP(9));
	CU_ASSERT_EQUAL(snic_nic_netdev_tx(a, arp, len), 0);
	len = farp_build(arp, FARP_REPLY, MAC_B, MAC_A, IP(2), MAC_B, IP(2));
	CU_ASSERT_EQUAL(snic_nic_netdev_tx(a, arp, len), -1);
	CU_ASSERT_EQUAL(cnt_a(&n, "netdev_tx_drop_arp_reply"), 1);
	ip_frame(f, MAC_B, MAC_X, 1);
	CU_ASSERT_EQUAL(snic_nic_netdev_tx(a, f, FRAME), -1);
	CU_ASSERT_EQUAL(snic_nic_netdev_tx(a, f, 13), -1);
	memcpy(big, f, FRAME);
	memcpy(big + 6, MAC_A, 6);
	CU_ASSERT_EQUAL(snic_nic_netdev_tx(a, big, sizeof(big)), -1);
	CU_ASSERT_EQUAL(snic_nic_netdev_tx(a, big, sizeof(big) - 1), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "netdev_tx_drop_bad_frame"), 3);
	CU_ASSERT_EQUAL(cnt_a(&n, "netdev_tx_frames"), 3);
	fsim_idle(n.e->s, 4);
	CU_ASSERT_EQUAL(n.tap.frames, before + 3);
	CU_ASSERT_EQUAL(n.tap.arp, 1);
	fenv_free(n.e);
}

UNIT_SUITE(netdev, NULL, NULL,
	   UNIT_TEST(test_netdev_rx_ip),
	   UNIT_TEST(test_netdev_absent),
	   UNIT_TEST(test_netdev_rx_arp),
	   UNIT_TEST(test_netdev_tx));
