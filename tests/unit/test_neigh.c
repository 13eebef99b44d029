/* SPDX-License-Identifier: MIT */
/*
 * ARP and the neighbour table (RFC 826) through the two-NIC simulation,
 * black-box: frames injected into a NIC's port, what it transmits seen on
 * the link, the table's effect seen in the destination MAC of RoCE frames
 * and in the counters.  The rules (issue 10 item 9): requests for our
 * address answered; an address learned from the answer to our own
 * request, or, while unknown, from a request for our own address (RFC
 * 826's merge rule; never from other unsolicited or gratuitous ARP, never
 * our own address or 0.0.0.0); a known neighbour claiming another MAC is asked
 * again and keeps its MAC unless the answer changes it; ARP rate-limited;
 * a gratuitous request when the link comes back up; a full table reusing
 * its oldest entry.
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "fake_frames.h"
#include "nic/top.h"
#include "unit.h"

#define STEPS 4000
#define QKEY  0x7777u
#define IP(n) (0xc6120000u | (n))  /* 198.18.0.n */

static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t ZERO[6];
static const uint8_t MAC_A[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
static const uint8_t MAC_B[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };

struct nenv {
	struct fenv *e;
	struct ftap tap;        /* what a transmits */
};

static void nenv_setup(struct nenv *n)
{
	n->e = fenv_new(4200, 1u << 18, 64);
	ftap_init(&n->tap, 0);
	fake_link_set_hook(&n->e->s->link, ftap_hook, &n->tap);
}

/* n with an RC pair qa (on a) - qb (on b), connected, ARP done. */
static void nenv_rc_pair(struct nenv *n, struct fqp *qa, struct fqp *qb)
{
	struct fconn conn;

	nenv_setup(n);
	fconn_default(&conn);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&n->e->a, qa, SNIC_QPT_RC, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&n->e->b, qb, SNIC_QPT_RC, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(qa, qb, &conn), SNIC_ST_OK);
	fsim_idle(n->e->s, 10);
}

static void mac_n(uint8_t mac[6], uint32_t n)
{
	static const uint8_t base[6] = { 0x02, 0x00, 0x00, 0x00, 0x01, 0x00 };

	memcpy(mac, base, 6);
	mac[4] = (uint8_t)(1 + (n >> 8));
	mac[5] = (uint8_t)n;
}

/* An ARP frame into a's port, then a few steps. */
static void inject_a(struct nenv *n, uint16_t oper, const uint8_t dmac[6],
		     const uint8_t sha[6], uint32_t spa, const uint8_t tha[6],
		     uint32_t tpa)
{
	uint8_t f[FARP_LEN];
	uint16_t len = farp_build(f, oper, dmac, sha, spa, tha, tpa);

	CU_ASSERT_EQUAL_FATAL(fake_link_inject(&n->e->s->link, 0, f, len), 0);
	fsim_idle(n->e->s, 4);
}

/* The last frame a sent, as ARP (fails the test when it is none). */
static bool last_arp(struct nenv *n, struct farp *out)
{
	uint16_t len = 0;
	const uint8_t *f = ftap_frame(&n->tap, n->tap.frames - 1, &len);

	return f && farp_parse(f, len, out);
}

/* The destination MAC of the last frame a sent. */
static const uint8_t *last_dmac(struct nenv *n)
{
	uint16_t len = 0;
	const uint8_t *f = ftap_frame(&n->tap, n->tap.frames - 1, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	return f;
}

static uint64_t cnt_a(struct nenv *n, const char *name)
{
	return fside_counter(&n->e->a, name);
}

/* A UD datagram from QP ua to (ip, qpn) with 64 bytes of a's buffer. */
static void ud_to(struct nenv *n, struct fqp *ua, uint64_t wr_id, uint32_t ip,
		  uint32_t qpn)
{
	struct snic_wqe_sge sge = fside_sge(&n->e->a, 0, 64);
	struct snic_wqe_ud ud;
	struct fwr wr = { .wr_id = wr_id, .opcode = SNIC_WR_SEND,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge,
			  .num_sge = 1, .ud = &ud };

	fud_addr(&ud, ip, qpn, QKEY);
	fqp_post_send(ua, &wr);
}

static void ud_qp(struct fside *s, struct fqp *qp)
{
	CU_ASSERT_EQUAL_FATAL(fside_qp(s, qp, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(qp, QKEY, 1), SNIC_ST_OK);
}

/* ---------------------------------------------------------------------- */

/* A request for our address gets a reply to the asker, who is learned
 * (still unknown: RFC 826's merge rule); a request for another address
 * is not answered and teaches nothing. */
static void test_arp_request_answered(void)
{
	struct nenv n;
	struct farp r;
	uint8_t x[6], y[6];

	nenv_setup(&n);
	mac_n(x, 80);
	mac_n(y, 81);
	inject_a(&n, FARP_REQUEST, BCAST, x, IP(80), ZERO, IP(1));
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_arp"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_arp_unsolicited"), 0);
	CU_ASSERT_EQUAL(n.tap.arp, 1);
	CU_ASSERT_FATAL(last_arp(&n, &r));
	CU_ASSERT_EQUAL(r.oper, FARP_REPLY);
	CU_ASSERT_EQUAL(memcmp(r.dmac, x, 6), 0);
	CU_ASSERT_EQUAL(memcmp(r.smac, MAC_A, 6), 0);
	CU_ASSERT_EQUAL(memcmp(r.sha, MAC_A, 6), 0);
	CU_ASSERT_EQUAL(r.spa, IP(1));
	CU_ASSERT_EQUAL(memcmp(r.tha, x, 6), 0);
	CU_ASSERT_EQUAL(r.tpa, IP(80));
	/* the reply also reached b, which did not ask: nothing learned */
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "rx_arp"), 1);
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "neigh_learned"), 0);
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "rx_drop_arp_unsolicited"), 1);
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "arp_replies_sent"), 0);
	/* a request for someone else */
	inject_a(&n, FARP_REQUEST, BCAST, y, IP(81), ZERO, IP(77));
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_arp"), 2);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_arp_unsolicited"), 1);
	CU_ASSERT_EQUAL(n.tap.arp, 1);
	fenv_free(n.e);
}

/* A reply nobody asked for is not learned: a datagram to that address
 * asks first.  An unknown address is asked for (broadcast); the reply
 * completes the waiting datagram. */
static void test_arp_reply_learned(void)
{
	struct nenv n;
	struct fqp ua;
	struct farp r;
	struct snic_cqe c;
	uint8_t z[6], w[6];

	nenv_setup(&n);
	ud_qp(&n.e->a, &ua);
	mac_n(z, 60);
	mac_n(w, 61);
	inject_a(&n, FARP_REPLY, MAC_A, z, IP(60), MAC_A, IP(1));
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_arp_unsolicited"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), 0);
	ud_to(&n, &ua, 1, IP(60), 0x99);
	fsim_idle(n.e->s, 10);
	CU_ASSERT_FALSE(fcq_poll(&n.e->a.cq, &c));
	CU_ASSERT_EQUAL(n.tap.arp, 1);
	CU_ASSERT_EQUAL(n.tap.roce, 0);
	inject_a(&n, FARP_REPLY, MAC_A, z, IP(60), MAC_A, IP(1));
	CU_ASSERT_FATAL(fsim_poll_cq(n.e->s, &n.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(n.tap.roce, 1);
	CU_ASSERT_EQUAL(memcmp(last_dmac(&n), z, 6), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 1);
	fsim_idle(n.e->s, 4);
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "rx_drop_not_for_us"), 1);
	/* unknown: asked for (once the QP's ARP interval has passed), then
	 * sent when the reply comes */
	n.e->s->clock += SNIC_ARP_RETRY_NS;
	ud_to(&n, &ua, 2, IP(61), 0x99);
	fsim_idle(n.e->s, 10);
	CU_ASSERT_FALSE(fcq_poll(&n.e->a.cq, &c));
	CU_ASSERT_EQUAL(n.tap.arp, 2);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_requests_sent"), 2);
	CU_ASSERT_FATAL(last_arp(&n, &r));
	CU_ASSERT_EQUAL(r.oper, FARP_REQUEST);
	CU_ASSERT_EQUAL(memcmp(r.dmac, BCAST, 6), 0);
	CU_ASSERT_EQUAL(memcmp(r.tha, ZERO, 6), 0);
	CU_ASSERT_EQUAL(r.spa, IP(1));
	CU_ASSERT_EQUAL(r.tpa, IP(61));
	inject_a(&n, FARP_REPLY, MAC_A, w, IP(61), MAC_A, IP(1));
	CU_ASSERT_FATAL(fsim_poll_cq(n.e->s, &n.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.wr_id, 2);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(n.tap.roce, 2);
	CU_ASSERT_EQUAL(memcmp(last_dmac(&n), w, 6), 0);
	/* the question is answered: a second "reply" changes nothing */
	inject_a(&n, FARP_REPLY, MAC_A, z, IP(61), MAC_A, IP(1));
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 2);
	CU_ASSERT_EQUAL(cnt_a(&n, "tx_drop_no_neigh"), 0);
	fenv_free(n.e);
}

/* A connected RC QP does not follow a gratuitous ARP (request or reply)
 * that claims its peer's address for another MAC: not learned, counted,
 * and the peer is asked again; its own answer (the same MAC) keeps the
 * connection where it was.  ARP claiming our own address or sent from
 * 0.0.0.0 teaches nothing (a request for our address is still answered). */
static void test_arp_gratuitous(void)
{
	struct nenv n;
	struct fqp qa, qb;
	struct snic_cqe c;
	struct snic_wqe_sge sge;
	struct fwr wr = { .opcode = SNIC_WR_RDMA_WRITE, .flags = SNIC_SEND_SIGNALED,
			  .sge = &sge, .num_sge = 1 };
	uint8_t moved[6];
	uint64_t learned, req, rep;

	nenv_rc_pair(&n, &qa, &qb);
	learned = cnt_a(&n, "neigh_learned");
	CU_ASSERT_EQUAL(learned, 1);        /* b, from its reply */
	req = cnt_a(&n, "arp_requests_sent");
	rep = cnt_a(&n, "arp_replies_sent"); /* to b, which asked for a */
	n.e->s->clock += SNIC_ARP_ASK_NS;   /* our question to b is closed */
	mac_n(moved, 0xb0);
	/* someone claims b's address for `moved` */
	inject_a(&n, FARP_REQUEST, BCAST, moved, IP(2), ZERO, IP(2));
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), learned);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_arp_unsolicited"), 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), rep);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_requests_sent"), req + 1);
	fsim_idle(n.e->s, 10);              /* b answers: the same MAC */
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), learned);
	/* and as an unsolicited reply, twice: asked again only once */
	inject_a(&n, FARP_REPLY, BCAST, moved, IP(2), ZERO, IP(2));
	inject_a(&n, FARP_REPLY, BCAST, moved, IP(2), ZERO, IP(2));
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), learned);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_arp_unsolicited"), 3);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_requests_sent"), req + 1);
	fpattern(fside_ptr(&n.e->a, 0), 3000, 5);
	sge = fside_sge(&n.e->a, 0, 3000);
	wr.wr_id = 1;
	wr.remote_addr = n.e->b.buf + 0x8000;
	wr.rkey = n.e->b.mr;
	fqp_post_send(&qa, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(n.e->s, &n.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(last_dmac(&n), MAC_B, 6), 0);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&n.e->b, 0x8000), fside_ptr(&n.e->a, 0),
			       3000), 0);
	/* someone claims our address: not learned, but answered */
	inject_a(&n, FARP_REQUEST, BCAST, moved, IP(1), ZERO, IP(1));
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), learned);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), rep + 1);
	/* a probe from 0.0.0.0 (RFC 5227): not learned, answered */
	inject_a(&n, FARP_REQUEST, BCAST, moved, 0, ZERO, IP(1));
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), learned);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), rep + 2);
	fenv_free(n.e);
}

/* A connected QP's frames are built from a header template made from its
 * path: when the peer's MAC changes (qp_neigh_set, as a learned answer
 * does), the next frame goes to the new MAC with a good IPv4 checksum and
 * ICRC (qp_path_changed makes the template again), and back. */
static void test_rc_mac_change_template(void)
{
	struct nenv n;
	struct fqp qa, qb;
	struct snic_cqe c;
	struct snic_wqe_sge sge;
	struct fwr wr = { .opcode = SNIC_WR_RDMA_WRITE, .flags = SNIC_SEND_SIGNALED,
			  .sge = &sge, .num_sge = 1 };
	struct snic_nic *nic;
	struct snic_qp *q;
	struct roce_hdrs h;
	const uint8_t *f;
	uint16_t len = 0;
	uint8_t moved[6];
	bool done = false;

	nenv_rc_pair(&n, &qa, &qb);
	nic = n.e->s->a.nic;
	q = &nic->qps[SNIC_QPN_IDX(qa.qpn)];
	fpattern(fside_ptr(&n.e->a, 0), 32, 3); /* the frame fits the tap */
	sge = fside_sge(&n.e->a, 0, 32);
	wr.wr_id = 1;
	wr.remote_addr = n.e->b.buf;
	wr.rkey = n.e->b.mr;
	fqp_post_send(&qa, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(n.e->s, &n.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(last_dmac(&n), MAC_B, 6), 0);
	/* the peer moves: the next WRITE goes to the new MAC */
	mac_n(moved, 0xc0);
	qp_neigh_set(nic, q, moved);
	wr.wr_id = 2;
	fqp_post_send(&qa, &wr);
	fsim_idle(n.e->s, 10);
	f = ftap_frame(&n.tap, n.tap.frames - 1, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(memcmp(f, moved, 6), 0);
	CU_ASSERT_EQUAL(memcmp(f + 6, MAC_A, 6), 0);
	CU_ASSERT_EQUAL_FATAL(roce_parse(f, len, &h), ROCE_OK);
	CU_ASSERT_EQUAL(h.dip, IP(2));
	CU_ASSERT_EQUAL(h.opcode, ROCE_RC_WRITE_ONLY);
	/* and back: sent again to b, which takes it */
	qp_neigh_set(nic, q, MAC_B);
	for (unsigned i = 0; i < 100 && !done; i++) {
		n.e->s->clock += 10000000;
		done = fsim_poll_cq(n.e->s, &n.e->a.cq, &c, 50);
	}
	CU_ASSERT_FATAL(done);
	CU_ASSERT_EQUAL(c.wr_id, 2);
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&n.e->b, 0), fside_ptr(&n.e->a, 0), 32), 0);
	fenv_free(n.e);
}

/* A flood of ARP: at most SNIC_ARP_PER_MS frames a millisecond are looked
 * at (and answered), the rest dropped and counted. */
static void test_arp_rate_limit(void)
{
	struct nenv n;
	uint8_t f[FARP_LEN], x[6];
	uint16_t len;

	nenv_setup(&n);
	mac_n(x, 70);
	len = farp_build(f, FARP_REQUEST, BCAST, x, IP(70), ZERO, IP(1));
	/* all within one millisecond: its start, 1 us steps */
	n.e->s->clock = (n.e->s->clock / 1000000 + 1) * 1000000;
	n.e->s->step_ns = 1000;
	for (unsigned i = 0; i < 2 * SNIC_ARP_PER_MS; i++)
		CU_ASSERT_EQUAL_FATAL(fake_link_inject(&n.e->s->link, 0, f, len), 0);
	fsim_idle(n.e->s, 8);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_arp"), 2 * SNIC_ARP_PER_MS);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), SNIC_ARP_PER_MS);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_arp_rate"), SNIC_ARP_PER_MS);
	/* the next millisecond is served again */
	n.e->s->clock += 1000000;
	CU_ASSERT_EQUAL_FATAL(fake_link_inject(&n.e->s->link, 0, f, len), 0);
	fsim_idle(n.e->s, 2);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), SNIC_ARP_PER_MS + 1);
	fenv_free(n.e);
}

/* When the link comes back up the NIC announces itself: a gratuitous
 * request (sender = target = our address), which the peer learns. */
static void test_arp_announce_on_link_up(void)
{
	struct nenv n;
	struct farp r;

	nenv_setup(&n);
	n.e->s->step_ns = 100 * 1000;   /* the link is looked at every 1 ms */
	fsim_idle(n.e->s, 30);
	CU_ASSERT_EQUAL(n.tap.arp, 0);
	n.e->s->a.hal.link_is_up = 0;
	fsim_idle(n.e->s, 30);
	CU_ASSERT_EQUAL(cnt_a(&n, "link_down_events"), 1);
	CU_ASSERT_EQUAL(n.tap.arp, 0);
	n.e->s->a.hal.link_is_up = 1;
	fsim_idle(n.e->s, 30);
	CU_ASSERT_EQUAL(n.tap.arp, 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_requests_sent"), 1);
	CU_ASSERT_FATAL(last_arp(&n, &r));
	CU_ASSERT_EQUAL(r.oper, FARP_REQUEST);
	CU_ASSERT_EQUAL(memcmp(r.dmac, BCAST, 6), 0);
	CU_ASSERT_EQUAL(memcmp(r.sha, MAC_A, 6), 0);
	CU_ASSERT_EQUAL(r.spa, IP(1));
	CU_ASSERT_EQUAL(r.tpa, IP(1));
	/* b did not ask: it learns nothing from it */
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "neigh_learned"), 0);
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "rx_drop_arp_unsolicited"), 1);
	CU_ASSERT_EQUAL(fside_counter(&n.e->b, "arp_replies_sent"), 0);
	fenv_free(n.e);
}

/* Malformed ARP (wrong hardware type, wrong address lengths, truncated)
 * is dropped and counted; nothing is learned or answered. */
static void test_arp_malformed(void)
{
	struct nenv n;
	uint8_t f[FARP_LEN], x[6];

	nenv_setup(&n);
	mac_n(x, 90);
	farp_build(f, FARP_REQUEST, BCAST, x, IP(90), ZERO, IP(1));
	f[14 + 1] = 6;                          /* htype IEEE 802 */
	CU_ASSERT_EQUAL(fake_link_inject(&n.e->s->link, 0, f, FARP_LEN), 0);
	farp_build(f, FARP_REQUEST, BCAST, x, IP(90), ZERO, IP(1));
	f[14 + 4] = 8;                          /* hlen */
	CU_ASSERT_EQUAL(fake_link_inject(&n.e->s->link, 0, f, FARP_LEN), 0);
	farp_build(f, FARP_REQUEST, BCAST, x, IP(90), ZERO, IP(1));
	CU_ASSERT_EQUAL(fake_link_inject(&n.e->s->link, 0, f, 14 + 27), 0);
	fsim_idle(n.e->s, 4);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_arp"), 3);
	CU_ASSERT_EQUAL(cnt_a(&n, "rx_drop_not_roce"), 3);
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_replies_sent"), 0);
	CU_ASSERT_EQUAL(n.tap.frames, 0);
	fenv_free(n.e);
}

/* 64 entries: the 65th address learned reuses the oldest entry (b's).  A
 * connected QP keeps the MAC it has; a datagram to b asks again; addresses
 * still in the table need no request. */
static void test_neigh_table_full(void)
{
	const unsigned table = 64;
	struct nenv n;
	struct fqp qa, qb, ua, ub;
	struct fconn conn;
	struct snic_cqe c;
	struct snic_wqe_sge sge;
	struct fwr wr = { .wr_id = 7, .opcode = SNIC_WR_RDMA_WRITE,
			  .flags = SNIC_SEND_SIGNALED, .sge = &sge, .num_sge = 1 };
	uint8_t mac[6];
	uint64_t req;

	nenv_setup(&n);
	fconn_default(&conn);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&n.e->a, &qa, SNIC_QPT_RC, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&n.e->b, &qb, SNIC_QPT_RC, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_connect(&qa, &qb, &conn), SNIC_ST_OK);
	ud_qp(&n.e->a, &ua);
	ud_qp(&n.e->b, &ub);
	fsim_idle(n.e->s, 10);
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 1);
	for (unsigned i = 0; i < table; i++) {
		/* asked (as a datagram to it would), then answered */
		n.e->s->clock += 1000000; /* under the ARP rate limit */
		neigh_resolve(n.e->s->a.nic->neigh, IP(100 + i));
		mac_n(mac, 100 + i);
		inject_a(&n, FARP_REPLY, MAC_A, mac, IP(100 + i), MAC_A, IP(1));
	}
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 1 + table);
	req = cnt_a(&n, "arp_requests_sent");
	/* the RC QP still sends to b's MAC without asking */
	fpattern(fside_ptr(&n.e->a, 0x1000), 512, 9);
	sge = fside_sge(&n.e->a, 0x1000, 512);
	wr.remote_addr = n.e->b.buf;
	wr.rkey = n.e->b.mr;
	fqp_post_send(&qa, &wr);
	CU_ASSERT_FATAL(fsim_poll_cq(n.e->s, &n.e->a.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(last_dmac(&n), MAC_B, 6), 0);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&n.e->b, 0), fside_ptr(&n.e->a, 0x1000),
			       512), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_requests_sent"), req);
	/* the second address learned is still there */
	ud_to(&n, &ua, 8, IP(100), 0x55);
	CU_ASSERT_FATAL(fsim_poll_cq(n.e->s, &n.e->a.cq, &c, STEPS));
	mac_n(mac, 100);
	CU_ASSERT_EQUAL(memcmp(last_dmac(&n), mac, 6), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_requests_sent"), req);
	/* b was the oldest: asked for again, then reached */
	sge = fside_sge(&n.e->b, 0x4000, 1024);
	fqp_post_recv(&ub, 9, &sge, 1);
	ud_to(&n, &ua, 10, IP(2), ub.qpn);
	CU_ASSERT_FATAL(fsim_poll_cq(n.e->s, &n.e->b.cq, &c, STEPS));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 9);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&n.e->b, 0x4000 + SNIC_GRH_LEN),
			       fside_ptr(&n.e->a, 0), 64), 0);
	CU_ASSERT_EQUAL(cnt_a(&n, "arp_requests_sent"), req + 1);
	CU_ASSERT_EQUAL(cnt_a(&n, "neigh_learned"), 2 + table);
	fenv_free(n.e);
}

UNIT_SUITE(neigh, NULL, NULL,
	   UNIT_TEST(test_arp_request_answered),
	   UNIT_TEST(test_arp_reply_learned),
	   UNIT_TEST(test_arp_gratuitous),
	   UNIT_TEST(test_rc_mac_change_template),
	   UNIT_TEST(test_arp_rate_limit),
	   UNIT_TEST(test_arp_announce_on_link_up),
	   UNIT_TEST(test_arp_malformed),
	   UNIT_TEST(test_neigh_table_full));
