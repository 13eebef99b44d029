/* SPDX-License-Identifier: MIT */
/*
 * UD (IBTA 9.8.3, 10.2.x) through the two-NIC simulation, black-box: QPs,
 * WQEs and CQEs through the fake host, results read from host memory and
 * from the NIC's counters by name.  Datagrams with the GRH area, Q_Key
 * checks (C10-15), the message-size limit, a destination ARP never
 * resolves, a receive buffer too small.
 */
#include <stdint.h>
#include <string.h>

#include "fake_env.h"
#include "fake_frames.h"
#include "unit.h"

#define STEPS  4000
#define QKEY   0x11110000u
#define RBUF   0x100000u        /* receive buffers start here in b's buffer */

struct ud_env {
	struct fenv *e;
	struct fqp qa, qb;
};

static void ud_setup(struct ud_env *u)
{
	u->e = fenv_new(4200, 1u << 21, 256);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&u->e->a, &u->qa, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&u->e->b, &u->qb, SNIC_QPT_UD, 0), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&u->qa, QKEY, 0x10), SNIC_ST_OK);
	CU_ASSERT_EQUAL_FATAL(fqp_ud_ready(&u->qb, QKEY, 0x20), SNIC_ST_OK);
}

/* Post a datagram of len bytes from a's buffer at off to (ip, qpn, qkey). */
static void ud_send(struct ud_env *u, uint64_t wr_id, uint64_t off, uint32_t len,
		    uint32_t ip, uint32_t qpn, uint32_t qkey, uint8_t opcode,
		    uint32_t imm)
{
	struct snic_wqe_sge sge = fside_sge(&u->e->a, off, len);
	struct snic_wqe_ud ud;
	struct fwr wr = { .wr_id = wr_id, .opcode = opcode,
			  .flags = SNIC_SEND_SIGNALED, .imm = imm, .sge = &sge,
			  .num_sge = 1, .ud = &ud };

	fud_addr(&ud, ip, qpn, qkey);
	ud.hop_limit = 17;
	ud.traffic_class = 0x28;
	fqp_post_send(&u->qa, &wr);
}

static void ud_recv(struct ud_env *u, uint64_t wr_id, uint64_t off, uint32_t len)
{
	struct snic_wqe_sge sge = fside_sge(&u->e->b, off, len);

	fqp_post_recv(&u->qb, wr_id, &sge, 1);
}

static bool cqe(struct ud_env *u, struct fcq *cq, struct snic_cqe *c)
{
	memset(c, 0xee, sizeof(*c));
	return fsim_poll_cq(u->e->s, cq, c, STEPS);
}

/* Datagrams of several sizes arrive whole, after the 40-byte GRH area
 * whose last 20 bytes are the packet's IPv4 header. */
static void test_ud_send_recv_grh(void)
{
	static const uint32_t sizes[] = { 0, 1, 100, 1024, 4096 };
	struct falign al = { 0, 0 };
	struct ud_env u;
	struct snic_cqe c;

	ud_setup(&u);
	fake_link_set_hook(&u.e->s->link, falign_hook, &al);
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		uint64_t roff = RBUF + i * 8192;
		uint8_t *src = fside_ptr(&u.e->a, i * 8192);
		const uint8_t *grh = fside_ptr(&u.e->b, roff);
		static const uint8_t zero[20];

		fpattern(src, len, i + 1);
		memset(fside_ptr(&u.e->b, roff), 0xcc, 8192);
		ud_recv(&u, 100 + i, roff, SNIC_GRH_LEN + 4096);
		ud_send(&u, 10 + i, i * 8192, len, FSIM_IP_B, u.qb.qpn, QKEY,
			SNIC_WR_SEND_WITH_IMM, 0x01020304u + i);
		CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 10 + i);
		CU_ASSERT_EQUAL(c.opcode, SNIC_WC_SEND);
		CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
		CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
		CU_ASSERT_EQUAL(c.wr_id, 100 + i);
		CU_ASSERT_EQUAL(c.opcode, SNIC_WC_RECV);
		CU_ASSERT_EQUAL(c.byte_len, SNIC_GRH_LEN + len);
		CU_ASSERT_EQUAL(c.qp_num, u.qb.qpn);
		CU_ASSERT_EQUAL(c.src_qp, u.qa.qpn);
		CU_ASSERT_EQUAL(c.wc_flags, SNIC_WC_GRH | SNIC_WC_WITH_IMM);
		CU_ASSERT_EQUAL(c.imm_data, 0x01020304u + i);
		/* GRH area: 20 zero bytes, then IPv4 a -> b, UDP */
		CU_ASSERT_EQUAL(memcmp(grh, zero, 20), 0);
		CU_ASSERT_EQUAL(grh[20], 0x45);
		CU_ASSERT_EQUAL(grh[21], 0x28);            /* traffic class */
		CU_ASSERT_EQUAL(grh[20 + 8], 17);          /* TTL = hop limit */
		CU_ASSERT_EQUAL(grh[20 + 9], 17);          /* UDP */
		/* IP + UDP + BTH + DETH + ImmDt + payload padded to 4 + ICRC */
		CU_ASSERT_EQUAL((uint32_t)(grh[22] << 8 | grh[23]),
				20 + 8 + 12 + 8 + 4 + ((len + 3) & ~3u) + 4);
		CU_ASSERT_EQUAL(memcmp(grh + 32, "\xc6\x12\x00\x01", 4), 0);
		CU_ASSERT_EQUAL(memcmp(grh + 36, "\xc6\x12\x00\x02", 4), 0);
		CU_ASSERT_EQUAL(memcmp(grh + SNIC_GRH_LEN, src, len), 0);
		CU_ASSERT_EQUAL(grh[SNIC_GRH_LEN + len], 0xcc); /* nothing past it */
	}
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "recv_wqes"), 5);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "send_wqes"), 5);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_qkey"), 0);
	/* the 1024- and 4096-byte datagrams' payloads on a line, after
	 * headers with a DETH and an ImmDt (core_pkt_align) */
	CU_ASSERT_EQUAL(al.big, 2);
	CU_ASSERT_EQUAL(al.aligned, 2);
	fenv_free(u.e);
}

/* A Q_Key other than the receiver's: dropped and counted, the RECV stays
 * for the next datagram; the sender completes (UD has no ACK).  A Q_Key
 * with the MSB set means "the sender QP's own Q_Key" (C10-15). */
static void test_ud_qkey(void)
{
	struct ud_env u;
	struct snic_cqe c;

	ud_setup(&u);
	fpattern(fside_ptr(&u.e->a, 0), 256, 7);
	fpattern(fside_ptr(&u.e->a, 4096), 256, 8);
	ud_recv(&u, 1, RBUF, 4096);
	ud_send(&u, 10, 0, 256, FSIM_IP_B, u.qb.qpn, QKEY + 1, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	fsim_idle(u.e->s, 50);
	CU_ASSERT_FALSE(fcq_poll(&u.e->b.cq, &c));
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_qkey"), 1);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "recv_wqes"), 0);
	/* the QP's own Q_Key, by the MSB rule: accepted into the same RECV */
	ud_send(&u, 11, 4096, 256, FSIM_IP_B, u.qb.qpn, 0x80000000u,
		SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(c.byte_len, SNIC_GRH_LEN + 256);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, RBUF + SNIC_GRH_LEN),
			       fside_ptr(&u.e->a, 4096), 256), 0);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_qkey"), 1);
	fenv_free(u.e);
}

/* No RECV posted: the datagram is lost and counted (no RNR in UD). */
static void test_ud_no_recv(void)
{
	struct ud_env u;
	struct snic_cqe c;

	ud_setup(&u);
	ud_send(&u, 10, 0, 64, FSIM_IP_B, u.qb.qpn, QKEY, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	fsim_idle(u.e->s, 50);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_no_recv"), 1);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rnr_nak_sent"), 0);
	CU_ASSERT_EQUAL(fqp_state(&u.qb), SNIC_QPS_RTS);
	fenv_free(u.e);
}

/* One packet per datagram: longer than the path MTU completes with
 * LOC_LEN_ERR and nothing goes on the wire. */
static void test_ud_too_long(void)
{
	struct ud_env u;
	struct snic_cqe c;
	uint64_t tx;

	ud_setup(&u);
	fsim_idle(u.e->s, 10);
	tx = fside_counter(&u.e->a, "tx_frames");
	ud_send(&u, 10, 0, 4097, FSIM_IP_B, u.qb.qpn, QKEY, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(c.wr_id, 10);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "tx_frames"), tx);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "wqe_errors"), 1);
	fenv_free(u.e);
}

/* A receive buffer smaller than GRH + payload: the RECV completes with
 * LOC_LEN_ERR (counted rx_ud_too_long) and the QP lives on: the next
 * datagram that fits is received (issue 10 item 4: a remote sender must
 * not be able to end a UD QP). */
static void test_ud_recv_too_small(void)
{
	struct ud_env u;
	struct snic_cqe c;

	ud_setup(&u);
	ud_recv(&u, 1, RBUF, SNIC_GRH_LEN + 99);
	ud_send(&u, 10, 0, 100, FSIM_IP_B, u.qb.qpn, QKEY, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(c.wr_id, 1);
	CU_ASSERT_EQUAL(fqp_state(&u.qb), SNIC_QPS_RTS);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_ud_too_long"), 1);
	ud_recv(&u, 2, RBUF, SNIC_GRH_LEN + 99);
	ud_send(&u, 11, 0, 99, FSIM_IP_B, u.qb.qpn, QKEY, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 2);
	CU_ASSERT_EQUAL(c.byte_len, SNIC_GRH_LEN + 99);
	fenv_free(u.e);
}

/* A destination nobody answers ARP for: SNIC_ARP_RETRY_NS apart, ten
 * requests, then the datagram is given up as lost (tx_drop_no_neigh) and
 * completes successfully; the QP keeps working for other peers. */
static void test_ud_unresolved_dest(void)
{
	const uint32_t nobody = 0xc6120063u; /* 198.18.0.99 */
	struct ud_env u;
	struct snic_cqe c;
	uint64_t arp0, t0;

	ud_setup(&u);
	fsim_idle(u.e->s, 10);
	arp0 = fside_counter(&u.e->a, "arp_requests_sent");
	u.e->s->step_ns = 1000 * 1000; /* 1 ms steps: the give-up takes ~1 s */
	t0 = u.e->s->clock;
	ud_send(&u, 10, 0, 64, nobody, 0x123, QKEY, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(c.wr_id, 10);
	CU_ASSERT(u.e->s->clock - t0 >= 900ull * 1000 * 1000);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "arp_requests_sent") - arp0, 10);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "tx_drop_no_neigh"), 1);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "arp_replies_sent"), 0);
	CU_ASSERT_EQUAL(fqp_state(&u.qa), SNIC_QPS_RTS);
	/* the same QP still reaches b */
	u.e->s->step_ns = FSIM_STEP_NS;
	fpattern(fside_ptr(&u.e->a, 0), 64, 3);
	ud_recv(&u, 1, RBUF, 4096);
	ud_send(&u, 11, 0, 64, FSIM_IP_B, u.qb.qpn, QKEY, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->b.cq, &c));
	CU_ASSERT_EQUAL(c.status, SNIC_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(fside_ptr(&u.e->b, RBUF + SNIC_GRH_LEN),
			       fside_ptr(&u.e->a, 0), 64), 0);
	CU_ASSERT_EQUAL(fside_counter(&u.e->a, "tx_drop_no_neigh"), 1);
	fenv_free(u.e);
}

/* A UD datagram to an RC QP's number is not for it: dropped, counted. */
static void test_ud_to_rc_qp(void)
{
	struct ud_env u;
	struct fqp rc;
	struct snic_cqe c;

	ud_setup(&u);
	CU_ASSERT_EQUAL_FATAL(fside_qp(&u.e->b, &rc, SNIC_QPT_RC, 0), SNIC_ST_OK);
	ud_send(&u, 10, 0, 64, FSIM_IP_B, rc.qpn, QKEY, SNIC_WR_SEND, 0);
	CU_ASSERT_FATAL(cqe(&u, &u.e->a.cq, &c));
	fsim_idle(u.e->s, 50);
	CU_ASSERT_EQUAL(fside_counter(&u.e->b, "rx_drop_unknown_qpn"), 1);
	fenv_free(u.e);
}

UNIT_SUITE(ud, NULL, NULL,
	   UNIT_TEST(test_ud_send_recv_grh),
	   UNIT_TEST(test_ud_qkey),
	   UNIT_TEST(test_ud_no_recv),
	   UNIT_TEST(test_ud_too_long),
	   UNIT_TEST(test_ud_recv_too_small),
	   UNIT_TEST(test_ud_unresolved_dest),
	   UNIT_TEST(test_ud_to_rc_qp));
