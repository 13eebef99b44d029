/* SPDX-License-Identifier: MIT */
/*
 * The CM router (nic/cm_router.c) across two simulated NICs: MADs reach
 * only the listener of their ServiceID or the owner of their
 * communication ID, a context cannot send for another's ID, the firmware
 * answers what has no owner (REJ for an unknown ServiceID, DREP for a
 * dead connection), and a dying context's armed DREQ goes out.
 * Suite cm_ip6: the same over IPv6 (the SNIC_CMD_CM_*6 commands): a
 * peer's MAC by neighbour discovery, CM MADs on QP1 as RoCE v2 over IPv6
 * frames between the NICs' IPv6 addresses (GID 1), the receiver told the
 * IPv6 source, the firmware's REJ and a dying context's armed DREQ back
 * over IPv6, the IPv4 commands unchanged beside them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_frames.h"
#include "fake_host.h"
#include "nic/top.h"
#include "wire/be.h"
#include "wire/roce_wire.h"
#include "wire/wire.h"
#include "unit.h"

#define SID_X 0x0000000001061d2full
#define SID_Y 0x0000000001061d30ull

/* A CM MAD's bytes: attribute, our ID, the peer's ID or the ServiceID. */
static void mad_bytes(uint8_t *mad, uint16_t attr, uint32_t local, uint32_t remote,
		      uint64_t sid)
{
	uint8_t *c = mad + SNIC_CM_HDR_LEN;

	memset(mad, 0, SNIC_CM_MAD_SIZE);
	mad[0] = 1;
	mad[1] = SNIC_MAD_CLASS_CM;
	mad[2] = 2;
	mad[3] = SNIC_MAD_METHOD_SEND;
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
	be32_put(c, local);
	if (attr == SNIC_CM_ATTR_REQ)
		be64_put(c + 8, sid);
	else
		be32_put(c + 4, remote);
}

/* The same MAD to an IPv4 peer (CM_SEND) ... */
static void mad(struct snic_cm_mad *m, uint32_t ip, uint16_t attr, uint32_t local,
		uint32_t remote, uint64_t sid)
{
	memset(m, 0, sizeof(*m));
	m->peer_ip = ip;
	mad_bytes(m->mad, attr, local, remote, sid);
}

/* ... and to a 16-byte address, IPv6 or IPv4 mapped (CM_SEND6). */
static void mad6(struct snic_cm_mad6 *m, const uint8_t peer[16], uint16_t attr,
		 uint32_t local, uint32_t remote, uint64_t sid)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->peer, peer, 16);
	mad_bytes(m->mad, attr, local, remote, sid);
}

static uint32_t cm_open(struct fctx *c)
{
	struct snic_cm_open o;

	CU_ASSERT_EQUAL_FATAL(fctx_cmd(c, SNIC_CMD_CM_OPEN, NULL, 0, &o, sizeof(o)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(o.cid_mask, 0xfffffu);
	return o.cid_base;
}

static int cm_recv(struct fctx *c, struct snic_cm_mad *m)
{
	return fctx_cmd(c, SNIC_CMD_CM_RECV, NULL, 0, m, sizeof(*m));
}

static uint16_t attr_of(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

/* b1 arms its DREQ (m, len bytes, through arm, CM_ARM or CM_ARM6) and
 * dies: b2 may not arm it for b1's ID, b1 may, and b1's close sends it;
 * what a then receives (through recv, into got) is for the caller to
 * check. */
static void armed_dreq_on_death(struct fsim *s, struct fctx *a, struct fctx *b1,
				struct fctx *b2, uint16_t arm, const void *m,
				uint32_t len, uint16_t recv, void *got)
{
	CU_ASSERT_EQUAL(fctx_cmd(b2, arm, m, len, NULL, 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(fctx_cmd(b1, arm, m, len, NULL, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_cmd(b1, SNIC_CMD_CTX_CLOSE, NULL, 0, NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(fctx_cmd(a, recv, NULL, 0, got, len), SNIC_ST_OK);
}

static void test_cm_routing(void)
{
	struct fsim *s = fsim_new(4200);
	struct fctx a, b1, b2;
	struct snic_cm_listen l = { .service_id = SID_X };
	struct snic_cm_resolve r = { .ip = FSIM_IP_B, .send_arp = 1 }, ro;
	struct snic_cm_mad m, got;
	uint32_t ba, bb1, bb2, w0;

	CU_ASSERT_EQUAL_FATAL(fctx_open(&a, &s->a, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&b1, &s->b, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&b2, &s->b, 1), SNIC_ST_OK);
	/* no CM command before CM_OPEN */
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_INVAL);
	ba = cm_open(&a);
	bb1 = cm_open(&b1);
	bb2 = cm_open(&b2);
	CU_ASSERT_NOT_EQUAL(bb1, bb2);
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_BUSY);
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_UNLISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_PERM);

	/* the peer's MAC by ARP */
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE, &r, sizeof(r), &ro, sizeof(ro)), SNIC_ST_NOENT);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE, &r, sizeof(r), &ro, sizeof(ro)), SNIC_ST_OK);
	CU_ASSERT_EQUAL(ro.mac[5], 0x0b);

	/* REQ to the listener only */
	w0 = atomic_load(&fdev_slot(&s->b, 0)->cm_pi);
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_REQ, ba | 1, 0, SID_X);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_NOT_EQUAL(atomic_load(&fdev_slot(&s->b, 0)->cm_pi), w0);
	CU_ASSERT_EQUAL(cm_recv(&b2, &got), SNIC_ST_NOENT);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&b1, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(got.peer_ip, FSIM_IP_A);
	CU_ASSERT_EQUAL(got.peer_qpn, 1);
	CU_ASSERT_EQUAL(memcmp(got.mad, m.mad, SNIC_CM_MAD_SIZE), 0);
	CU_ASSERT_EQUAL(cm_recv(&b1, &got), SNIC_ST_NOENT);

	/* nobody speaks for another context's ID */
	mad(&m, FSIM_IP_A, SNIC_CM_ATTR_REP, bb1 | 5, ba | 1, 0);
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cm_send_refused"), 1);
	/* the owner may; the REP reaches A, addressed by A's ID */
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(got.mad), SNIC_CM_ATTR_REP);

	/* a REQ for a ServiceID nobody listens on: REJ reason 8 from the NIC */
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_REQ, ba | 2, 0, SID_Y);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(got.mad), SNIC_CM_ATTR_REJ);
	CU_ASSERT_EQUAL(be32_get(got.mad + SNIC_CM_HDR_LEN + 4), ba | 2);
	CU_ASSERT_EQUAL(got.mad[SNIC_CM_HDR_LEN + 11], 8);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cm_fw_replies"), 1);

	/* B1 arms its DREQ and dies: A hears it */
	mad(&m, FSIM_IP_A, SNIC_CM_ATTR_DREQ, bb1 | 5, ba | 1, 0);
	m.cid = bb1 | 5;
	armed_dreq_on_death(s, &a, &b1, &b2, SNIC_CMD_CM_ARM, &m, sizeof(m),
			    SNIC_CMD_CM_RECV, &got);
	CU_ASSERT_EQUAL(attr_of(got.mad), SNIC_CM_ATTR_DREQ);
	CU_ASSERT_EQUAL(be32_get(got.mad + SNIC_CM_HDR_LEN), bb1 | 5);

	/* its DREP reaches nobody; a DREQ for the dead connection gets a DREP */
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_DREQ, ba | 1, bb1 | 5, 0);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(cm_recv(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(got.mad), SNIC_CM_ATTR_DREP);
	CU_ASSERT_EQUAL(be32_get(got.mad + SNIC_CM_HDR_LEN + 4), ba | 1);
	/* the dead listener's ServiceID is free again */
	CU_ASSERT_EQUAL(fctx_cmd(&b2, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_OK);

	/* not a CM MAD: refused */
	mad(&m, FSIM_IP_B, SNIC_CM_ATTR_REQ, ba | 3, 0, SID_X);
	m.mad[1] = 0x04; /* performance management */
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_SEND, &m, sizeof(m), NULL, 0), SNIC_ST_PERM);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* ---- over IPv6 (the SNIC_CMD_CM_*6 commands) ---- */

#define IP6   ROCE_ETH_HLEN
#define UDP6  (IP6 + ROCE_IPV6_HLEN)
#define BTH6  (UDP6 + ROCE_UDP_HLEN)

static int recv6(struct fctx *c, struct snic_cm_mad6 *m)
{
	return fctx_cmd(c, SNIC_CMD_CM_RECV6, NULL, 0, m, sizeof(*m));
}

static int send6(struct fctx *c, const struct snic_cm_mad6 *m)
{
	return fctx_cmd(c, SNIC_CMD_CM_SEND6, m, sizeof(*m), NULL, 0);
}

/* The last CM frame side a sent: RoCE v2 over IPv6 from a6 to b6, UD
 * SEND ONLY to QP1 carrying mad, to b's MAC. */
static void check_last_frame6(const struct ftap *t, const struct fsim *s,
			      const uint8_t *mad)
{
	uint16_t len = 0;
	const uint8_t *f = ftap_frame(t, t->frames - 1, &len);

	CU_ASSERT_FATAL(f != NULL && len >= FTAP_BYTES);
	CU_ASSERT(memcmp(f, s->b.cfg.mac, 6) == 0);
	CU_ASSERT(f[12] == 0x86 && f[13] == 0xdd);              /* IPv6 */
	CU_ASSERT_EQUAL(f[IP6] >> 4, 6);
	CU_ASSERT_EQUAL(f[IP6 + 6], 17);                        /* UDP */
	CU_ASSERT(memcmp(f + IP6 + 8, s->a.cfg.ipv6, 16) == 0);
	CU_ASSERT(memcmp(f + IP6 + 24, s->b.cfg.ipv6, 16) == 0);
	CU_ASSERT_EQUAL(f[UDP6 + 2] << 8 | f[UDP6 + 3], ROCE_UDP_PORT);
	CU_ASSERT_EQUAL(f[BTH6], ROCE_UD_SEND_ONLY);
	CU_ASSERT_EQUAL(be32_get(f + BTH6 + 4) & 0xffffff, SNIC_GSI_QPN);
	/* DETH: Q_Key 0x80010000, source QP 1; then the MAD's first bytes */
	CU_ASSERT_EQUAL(be32_get(f + BTH6 + 12), SNIC_GSI_QKEY);
	CU_ASSERT_EQUAL(be32_get(f + BTH6 + 16) & 0xffffff, SNIC_GSI_QPN);
	CU_ASSERT(memcmp(f + BTH6 + 20, mad, FTAP_BYTES - BTH6 - 20) == 0);
}

static void test_cm_ip6_exchange(void)
{
	struct fsim *s = fsim_new(4200);
	struct fctx a, b1, b2;
	struct snic_cm_listen l = { .service_id = SID_X };
	struct snic_cm_resolve6 r = { .send_req = 1 }, ro;
	struct snic_cm_mad6 m, got;
	struct snic_cm_mad got4;
	struct ftap tap;
	uint32_t ba, bb1;
	const uint8_t *a6 = s->a.cfg.ipv6, *b6 = s->b.cfg.ipv6;

	ftap_init(&tap, 0);
	fake_link_set_hook(&s->link, ftap_hook, &tap);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&a, &s->a, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&b1, &s->b, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&b2, &s->b, 1), SNIC_ST_OK);
	/* no CM command before CM_OPEN, the IPv6 ones included */
	CU_ASSERT_EQUAL(recv6(&a, &got), SNIC_ST_INVAL);
	ba = cm_open(&a);
	bb1 = cm_open(&b1);
	cm_open(&b2);
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_LISTEN, &l, sizeof(l), NULL, 0), SNIC_ST_OK);

	/* the peer's MAC by neighbour discovery (RFC 4861), not ARP */
	memcpy(r.addr, b6, 16);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_NOENT);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_OK);
	CU_ASSERT(memcmp(ro.mac, s->b.cfg.mac, 6) == 0);
	CU_ASSERT(memcmp(ro.addr, b6, 16) == 0);
	CU_ASSERT(fdev_counter(&s->a, "nd_solicits_sent") >= 1);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "arp_requests_sent"), 0);

	/* REQ over IPv6 to the listener; it learns the IPv6 source */
	mad6(&m, b6, SNIC_CM_ATTR_REQ, ba | 1, 0, SID_X);
	CU_ASSERT_EQUAL(send6(&a, &m), SNIC_ST_OK);
	check_last_frame6(&tap, s, m.mad);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL(recv6(&b2, &got), SNIC_ST_NOENT);
	CU_ASSERT_EQUAL_FATAL(recv6(&b1, &got), SNIC_ST_OK);
	CU_ASSERT(memcmp(got.peer, a6, 16) == 0);
	CU_ASSERT_EQUAL(got.peer_qpn, 1);
	CU_ASSERT_EQUAL(memcmp(got.mad, m.mad, SNIC_CM_MAD_SIZE), 0);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cm_drop_bad_mad"), 0);

	/* the REP back to that source: over IPv6 again */
	mad6(&m, a6, SNIC_CM_ATTR_REP, bb1 | 5, ba | 1, 0);
	CU_ASSERT_EQUAL(send6(&b2, &m), SNIC_ST_PERM);  /* not b2's ID */
	CU_ASSERT_EQUAL(send6(&b1, &m), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(recv6(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(got.mad), SNIC_CM_ATTR_REP);
	CU_ASSERT(memcmp(got.peer, b6, 16) == 0);

	/* unknown ServiceID: the firmware's REJ (reason 8) goes back the way
	 * the REQ came, over IPv6 */
	mad6(&m, b6, SNIC_CM_ATTR_REQ, ba | 2, 0, SID_Y);
	CU_ASSERT_EQUAL(send6(&a, &m), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(recv6(&a, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(attr_of(got.mad), SNIC_CM_ATTR_REJ);
	CU_ASSERT(memcmp(got.peer, b6, 16) == 0);
	CU_ASSERT_EQUAL(be32_get(got.mad + SNIC_CM_HDR_LEN + 4), ba | 2);
	CU_ASSERT_EQUAL(got.mad[SNIC_CM_HDR_LEN + 11], 8);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cm_fw_replies"), 1);

	/* the IPv4 CM_RECV cannot name an IPv6 peer: such a MAD is dropped
	 * (counted), the next IPv4 one handed out */
	mad6(&m, b6, SNIC_CM_ATTR_REQ, ba | 3, 0, SID_X);
	CU_ASSERT_EQUAL(send6(&a, &m), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL(fctx_cmd(&b1, SNIC_CMD_CM_RECV, NULL, 0, &got4, sizeof(got4)),
			SNIC_ST_NOENT);
	CU_ASSERT_EQUAL(fdev_counter(&s->b, "cm_drop_bad_mad"), 1);
	/* over IPv4 (a mapped address: ARP, then the MAD), CM_RECV6 names
	 * the mapped source */
	ipv4_to_gid(FSIM_IP_B, r.addr);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_NOENT);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_OK);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "arp_requests_sent"), 1);
	ipv4_to_gid(FSIM_IP_B, m.peer);
	be32_put(m.mad + SNIC_CM_HDR_LEN, ba | 4);
	CU_ASSERT_EQUAL(send6(&a, &m), SNIC_ST_OK);
	fsim_idle(s, 50);
	CU_ASSERT_EQUAL_FATAL(recv6(&b1, &got), SNIC_ST_OK);
	CU_ASSERT_EQUAL(got.peer[10], 0xff);
	CU_ASSERT_EQUAL(be32_get(got.peer + 12), FSIM_IP_A);

	/* b1 arms its DREQ to a's IPv6 address and dies: a hears it, from
	 * b's IPv6 address */
	mad6(&m, a6, SNIC_CM_ATTR_DREQ, bb1 | 5, ba | 1, 0);
	m.cid = bb1 | 5;
	armed_dreq_on_death(s, &a, &b1, &b2, SNIC_CMD_CM_ARM6, &m, sizeof(m),
			    SNIC_CMD_CM_RECV6, &got);
	CU_ASSERT_EQUAL(attr_of(got.mad), SNIC_CM_ATTR_DREQ);
	CU_ASSERT(memcmp(got.peer, b6, 16) == 0);
	CU_ASSERT_EQUAL(recv6(&a, &got), SNIC_ST_NOENT);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

/* Addresses no CM peer can have are refused; a NIC without an IPv6
 * address cannot speak to IPv6 peers. */
static void test_cm_ip6_refused(void)
{
	static const uint8_t mcast[16] = { 0xff, 0x02, [15] = 1 };
	static const uint8_t lo6[16] = { [15] = 1 };
	static const uint8_t none[16];
	struct fsim *s = fsim_new(4200);
	struct snic_cm_resolve6 r = { .send_req = 1 }, ro;
	struct snic_cm_mad6 m;
	struct fctx a;
	uint32_t ba;
	uint8_t b6[16];

	memcpy(b6, s->b.cfg.ipv6, 16);
	CU_ASSERT_EQUAL_FATAL(fctx_open(&a, &s->a, 0), SNIC_ST_OK);
	ba = cm_open(&a);
	memcpy(r.addr, mcast, 16);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_INVAL);
	memcpy(r.addr, lo6, 16);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_INVAL);
	memcpy(r.addr, none, 16);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_INVAL);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "nd_solicits_sent"), 0);

	/* a without IPv6 (its GID 1 gone): NOTSUP, nothing on the wire */
	memset(s->a.nic->core.cfg.ipv6, 0, 16);
	memcpy(r.addr, b6, 16);
	CU_ASSERT_EQUAL(fctx_cmd(&a, SNIC_CMD_CM_RESOLVE6, &r, sizeof(r), &ro, sizeof(ro)),
			SNIC_ST_NOTSUP);
	mad6(&m, b6, SNIC_CM_ATTR_REQ, ba | 1, 0, SID_X);
	CU_ASSERT_EQUAL(send6(&a, &m), SNIC_ST_NOTSUP);
	CU_ASSERT_EQUAL(fdev_counter(&s->a, "cm_mads_sent"), 0);
	CU_ASSERT_EQUAL(fsim_free(s), 0);
}

UNIT_SUITE(cm, NULL, NULL,
	   UNIT_TEST(test_cm_routing));

UNIT_SUITE(cm_ip6, NULL, NULL,
	   UNIT_TEST(test_cm_ip6_exchange),
	   UNIT_TEST(test_cm_ip6_refused));
