/* SPDX-License-Identifier: MIT */
/*
 * The DPDK HAL's ring pair on its own (hal/dpdk), through the HAL's public
 * API as snic-emu uses it: refused queue counts create nothing; frames
 * built by hand (RoCEv2 over IPv4 and IPv6, ARP, other UDP, runts) sent
 * from every TX queue land on exactly the RX queue the rule of hal.h
 * snic_hal_rx_queue names, byte for byte, with rx_ready and the per-queue
 * counters agreeing, also when the NIC polls every queue through queue 0;
 * a port stopped while another thread sends on TX queue 1 (the sends
 * after the stop take nothing, every frame accounted for); and frames
 * left in the rings at teardown go back to their pools.
 *
 *   dpdk_ring          (exit 0: all passed; no hugepages or PCI needed)
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "hal_dpdk.h"
#include "../check.h"

/* Whole run; a hang fails it (tests/run.sh allows 60 s). */
#define TIME_LIMIT_S 45
#define POOL_N       1023u  /* per NIC; n + 1 a power of two */
#define ETH_MTU      4200u
#define RX_CAP       64u
#define BUILD_MAX    2048u  /* bytes frame_build may write */

/* Offsets the steering rule reads (IBTA RoCEv2: Ethernet, IP, UDP, BTH). */
#define ETH_HLEN  14
#define IP4_HLEN  20
#define IP6_HLEN  40
#define UDP_HLEN  8
#define BTH_LEN   12
#define BTH_DQPN  5         /* DestQP: bytes 5..7 of the BTH */
#define ROCE_PORT 4791

enum kind { K_V4, K_V4_OPT, K_V6, K_UDP_OTHER, K_ARP };

/* A frame to send and the queue the rule puts it on among 2 and 4 (an
 * independent answer: worked out here, not by snic_hal_rx_queue). */
struct frame_spec {
	const char *what;
	enum kind kind;
	uint32_t dqpn;
	uint16_t len;
	uint8_t q2, q4;
};

static const struct frame_spec frames[] = {
	{ "DestQP 0x10 (even)", K_V4, 0x10, 128, 0, 0 },
	{ "DestQP 0x11 (odd)", K_V4, 0x11, 200, 1, 1 },
	{ "DestQP 0x12", K_V4, 0x12, 96, 0, 2 },
	{ "DestQP 0x13", K_V4, 0x13, 1024, 1, 3 },
	{ "DestQP 0 (QP0)", K_V4, 0, 128, 0, 0 },
	{ "DestQP 1 (QP1, MADs)", K_V4, 1, 300, 0, 0 },
	{ "DestQP 0xffffff (multicast)", K_V4, 0xffffff, 128, 0, 0 },
	{ "DestQP 0xabcdef (large)", K_V4, 0xabcdef, 512, 1, 3 },
	{ "IPv6, DestQP 0x25", K_V6, 0x25, 160, 1, 1 },
	{ "IPv4 options (IHL 6), DestQP 0x16", K_V4_OPT, 0x16, 140, 0, 2 },
	{ "UDP port 4792, DestQP bytes 0x11", K_UDP_OTHER, 0x11, 128, 0, 0 },
	{ "ARP", K_ARP, 0, 60, 0, 0 },
	/* DestQP inside, the BTH's last byte cut off */
	{ "cut 1 byte short of its BTH, DestQP 0x11", K_V4, 0x11,
	  ETH_HLEN + IP4_HLEN + UDP_HLEN + BTH_LEN - 1, 0, 0 },
	{ "10-byte runt", K_V4, 0x11, 10, 0, 0 },
};
#define NF ((unsigned)(sizeof(frames) / sizeof(frames[0])))

/* One NIC's port: what the HAL calls take. */
struct end {
	struct snic_dpdk_nic *nic;
	uint16_t port;
};

static struct rte_mempool *pool[2];     /* NIC A's, NIC B's */
static unsigned pool_full[2];           /* their counts at start */

static void checkf(int ok, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	check(ok, what);
}

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL  dpdk_ring: time limit (a hang)\n";
	ssize_t r = write(STDOUT_FILENO, msg, sizeof(msg) - 1);

	(void)sig;
	(void)r;
	_exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------------- */
/* Frames.                                                                 */

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* IPv4 or IPv6 header at d; the UDP header's offset. */
static unsigned ip_build(uint8_t *d, enum kind k, unsigned len)
{
	static const uint8_t ip6[16] = { 0xfd, 0x00, 0x5e, 0x1c };

	if (k == K_V6) {
		put16(d + 12, 0x86dd);
		d[14] = 0x60;
		put16(d + 14 + 4, len - ETH_HLEN - IP6_HLEN);
		d[14 + 6] = 17;                 /* next header: UDP */
		d[14 + 7] = 64;
		memcpy(d + 14 + 8, ip6, 16);
		memcpy(d + 14 + 24, ip6, 16);
		return ETH_HLEN + IP6_HLEN;
	}
	put16(d + 12, 0x0800);
	d[14] = k == K_V4_OPT ? 0x46 : 0x45;
	put16(d + 14 + 2, len - ETH_HLEN);
	d[14 + 8] = 64;
	d[14 + 9] = 17;                         /* protocol: UDP */
	memcpy(d + 14 + 12, (const uint8_t[]){ 198, 18, 0, 1 }, 4);
	memcpy(d + 14 + 16, (const uint8_t[]){ 198, 18, 0, 2 }, 4);
	if (k == K_V4_OPT)
		memset(d + 14 + IP4_HLEN, 1, 4); /* NOP options */
	return ETH_HLEN + 4u * (d[14] & 0x0f);
}

/* UDP and BTH (RC SEND only, default P_Key, DestQP, PSN i). */
static void roce_build(uint8_t *d, unsigned l4, const struct frame_spec *f,
		       unsigned i, unsigned len)
{
	uint8_t *bth = d + l4 + UDP_HLEN;

	put16(d + l4, 0xc000 | i);
	put16(d + l4 + 2, f->kind == K_UDP_OTHER ? ROCE_PORT + 1 : ROCE_PORT);
	put16(d + l4 + 4, len > l4 ? len - l4 : 0);
	put16(d + l4 + 6, 0);
	bth[0] = 0x04;
	bth[1] = 0;
	put16(bth + 2, 0xffff);
	bth[4] = 0;
	bth[BTH_DQPN] = (uint8_t)(f->dqpn >> 16);
	bth[BTH_DQPN + 1] = (uint8_t)(f->dqpn >> 8);
	bth[BTH_DQPN + 2] = (uint8_t)f->dqpn;
	put16(bth + 8, 0);
	put16(bth + 10, i);
}

static void arp_build(uint8_t *d)
{
	static const uint8_t arp[] = { 0, 1, 8, 0, 6, 4, 0, 1 };

	put16(d + 12, 0x0806);
	memcpy(d + ETH_HLEN, arp, sizeof(arp));
	memcpy(d + ETH_HLEN + 8, d + 6, 6);
	memcpy(d + ETH_HLEN + 14, (const uint8_t[]){ 198, 18, 0, 1 }, 4);
	memset(d + ETH_HLEN + 18, 0, 6);
	memcpy(d + ETH_HLEN + 24, (const uint8_t[]){ 198, 18, 0, 2 }, 4);
}

/* Frame i of the table as TX queue txq sends it, at d (BUILD_MAX bytes);
 * its length.  A pattern of (i, txq) under the headers, and the source
 * MAC carries txq and i (bytes 7 and 8, in even the runt) so that the
 * receiver knows what it got. */
static uint16_t frame_build(uint8_t *d, unsigned i, unsigned txq)
{
	const struct frame_spec *f = &frames[i];
	unsigned len = f->len, full = len < 128 ? 128 : len;

	for (unsigned k = 0; k < full; k++)
		d[k] = (uint8_t)(k * 7u + i * 31u + txq * 101u);
	memcpy(d, (const uint8_t[]){ 0x02, 0, 0, 0, 0, 0xbb }, 6);
	memcpy(d + 6, (const uint8_t[]){ 0x02, (uint8_t)txq, (uint8_t)i,
					 0, 0, 0xaa }, 6);
	if (f->kind == K_ARP)
		arp_build(d);
	else
		roce_build(d, ip_build(d, f->kind, full), f, i, full);
	return (uint16_t)len;
}

static unsigned rule_q(unsigned i, unsigned nq)
{
	return nq == 4 ? frames[i].q4 : nq == 2 ? frames[i].q2 : 0;
}

/* ---------------------------------------------------------------------- */
/* Pairs.                                                                  */

static uint16_t send_q(const struct end *e, uint16_t q, struct snic_pkt **p,
		       uint16_t n)
{
	/* queue 0 is tx_burst's (the NIC's main thread), the others by number */
	return q == 0 ? snic_dpdk_tx_burst(e->nic, e->port, p, n)
		      : snic_dpdk_tx_burst_queue(e->nic, e->port, q, p, n);
}

/* Frames i0 .. i1 - 1 of the table on TX queue q; how many went. */
static unsigned send_frames(const struct end *e, uint16_t q, unsigned i0,
			    unsigned i1)
{
	struct snic_pkt *p[NF];
	uint16_t n = (uint16_t)(i1 - i0), got, sent;

	got = snic_dpdk_pkt_alloc(e->nic, p, n);
	for (uint16_t k = 0; k < got; k++)
		p[k]->len = frame_build(p[k]->data, i0 + k, q);
	sent = send_q(e, q, p, got);
	snic_dpdk_pkt_free(e->nic, p + sent, (uint16_t)(got - sent));
	return got == n ? sent : 0;
}

/* A ring pair and a NIC on each side, as snic-emu sets them up (want_txq,
 * want_rxq before the ports). */
static int pair_up(const char *tag, struct snic_dpdk_nic nic[2],
		   struct end e[2], unsigned ntxq, unsigned nrxq,
		   const uint16_t want_rxq[2])
{
	char name[2][16];
	uint16_t id[2];

	snprintf(name[0], sizeof(name[0]), "%sa", tag);
	snprintf(name[1], sizeof(name[1]), "%sb", tag);
	if (snic_dpdk_ring_pair(name[0], name[1], &id[0], &id[1], ntxq, nrxq))
		return -1;
	for (int s = 0; s < 2; s++) {
		snic_dpdk_nic_init(&nic[s], pool[s]);
		nic[s].want_txq = (uint16_t)ntxq;
		nic[s].want_rxq = want_rxq[s];
		e[s].nic = &nic[s];
		if (snic_dpdk_port_add(&nic[s], id[s], ETH_MTU, &e[s].port))
			return -1;
	}
	return 0;
}

static void pools_full(const char *when)
{
	checkf(rte_mempool_avail_count(pool[0]) == pool_full[0] &&
	       rte_mempool_avail_count(pool[1]) == pool_full[1],
	       "%s: every buffer back in its pool (%u/%u, %u/%u)", when,
	       rte_mempool_avail_count(pool[0]), pool_full[0],
	       rte_mempool_avail_count(pool[1]), pool_full[1]);
}

/* ---------------------------------------------------------------------- */
/* 1. Refused queue counts.                                                */

static void bad_counts(void)
{
	static const struct { unsigned ntxq, nrxq; const char *why; } bad[] = {
		{ 0, 1, "0 TX queues" },
		{ SNIC_DPDK_MAX_TXQ + 1, 1, "TX queues over SNIC_DPDK_MAX_TXQ" },
		{ 1, 0, "0 RX queues" },
		{ 1, 3, "3 RX queues (not a power of two)" },
		{ 1, SNIC_DPDK_MAX_RXQ * 2, "RX queues over SNIC_DPDK_MAX_RXQ "
		  "(a power of two)" },
		{ SNIC_DPDK_MAX_TXQ / 2 + 1, 2, "TX x RX over SNIC_DPDK_MAX_TXQ" },
	};
	uint16_t ports = rte_eth_dev_count_total();

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		uint16_t a = 0xbeef, b = 0xbeef;
		int rc = snic_dpdk_ring_pair("bad", "badb", &a, &b, bad[k].ntxq,
					     bad[k].nrxq);

		checkf(rc == -1 && a == 0xbeef && b == 0xbeef &&
		       rte_eth_dev_count_total() == ports &&
		       rte_ring_lookup("bad>badb.0") == NULL &&
		       rte_ring_lookup("badb>bad.0") == NULL,
		       "ring pair of %u TX, %u RX queues (%s): -1, no port or "
		       "ring made", bad[k].ntxq, bad[k].nrxq, bad[k].why);
	}
}

/* ---------------------------------------------------------------------- */
/* 2. Steering.                                                            */

/* What the receiver saw of one exchange. */
struct seen {
	unsigned got, wrong_q, bad_bytes, dup, unknown, order;
	uint8_t have[SNIC_DPDK_MAX_TXQ][NF];
	int last[SNIC_DPDK_MAX_RXQ][SNIC_DPDK_MAX_TXQ];
};

static void seen_reset(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	memset(s->last, 0xff, sizeof(s->last)); /* -1: none yet */
}

/* One received frame, taken from queue q (-1: from rx_burst, which may
 * poll every queue) of a port steering into nrxq queues. */
static void frame_seen(struct seen *s, const struct snic_pkt *p, int q,
		       unsigned nrxq, uint16_t port)
{
	static uint8_t want[BUILD_MAX];
	unsigned txq, i, r;

	s->got++;
	if (p->len < 9 || (txq = p->data[7]) >= SNIC_DPDK_MAX_TXQ ||
	    (i = p->data[8]) >= NF) {
		s->unknown++;
		return;
	}
	r = rule_q(i, nrxq);
	if (q >= 0 && (unsigned)q != r) {
		printf("  %s from TX queue %u: on RX queue %d, the rule says %u\n",
		       frames[i].what, txq, q, r);
		s->wrong_q++;
	}
	if (p->len != frame_build(want, i, txq) ||
	    memcmp(p->data, want, p->len) != 0 || p->port != port)
		s->bad_bytes++;
	s->dup += s->have[txq][i]++ != 0;
	/* one TX queue's frames keep their order in each ring */
	s->order += (int)i <= s->last[r][txq];
	s->last[r][txq] = (int)i;
}

/* Take everything from queue q (-1: rx_burst) into s; bounded. */
static void drain(const struct end *e, int q, unsigned nrxq, struct seen *s)
{
	struct snic_pkt *p[RX_CAP];
	uint16_t k;

	for (int round = 0; round < 64; round++) {
		k = q < 0 ? snic_dpdk_rx_burst(e->nic, e->port, p, RX_CAP)
			  : snic_dpdk_rx_burst_queue(e->nic, e->port,
						     (uint16_t)q, p, RX_CAP);
		if (k == 0)
			return;
		for (uint16_t j = 0; j < k; j++)
			frame_seen(s, p[j], q, nrxq, e->port);
		snic_dpdk_pkt_free(e->nic, p, k);
	}
}

/* rx_ready on every queue (and one past the last) as expected: queue r
 * holds frames when want[r]; queue 0 also stands for the others when
 * the NIC polls every queue through it (rx_queues 1). */
static int ready_as(const struct end *e, unsigned nrxq, const unsigned *want)
{
	int one = snic_dpdk_rx_queues(e->nic) == 1, any = 0;

	for (unsigned r = 0; r < nrxq; r++)
		any |= want[r] != 0;
	for (unsigned r = 0; r < nrxq; r++) {
		int exp = r == 0 && one ? any : want[r] != 0;

		if (snic_dpdk_rx_ready(e->nic, e->port, (uint16_t)r) != exp)
			return 0;
	}
	return snic_dpdk_rx_ready(e->nic, e->port, (uint16_t)nrxq) == 0;
}

/* Frames waiting in each of the receiving port's rings as counted. */
static int rings_hold(const struct end *e, unsigned nrxq,
		      const unsigned *want)
{
	const struct snic_dpdk_port *p = &e->nic->port[e->port];

	for (unsigned r = 0; r < nrxq; r++)
		if (rte_ring_count(p->rx_ring[r]) != want[r])
			return 0;
	return 1;
}

/* Take all from rx as the firmware would: queue by queue when the NIC
 * says it has nrxq, else through rx_burst alone (and then another
 * queue's call takes nothing: one poller per ring). */
static void take_all(const struct end *rx, unsigned nrxq, struct seen *s,
		     const char *dir)
{
	struct snic_pkt *p[RX_CAP];
	uint16_t k;

	if (snic_dpdk_rx_queues(rx->nic) == nrxq) {
		for (unsigned r = 0; r < nrxq; r++)
			drain(rx, (int)r, nrxq, s);
		return;
	}
	k = snic_dpdk_rx_burst_queue(rx->nic, rx->port, 1, p, RX_CAP);
	for (uint16_t j = 0; j < k; j++)
		frame_seen(s, p[j], 1, nrxq, rx->port);
	snic_dpdk_pkt_free(rx->nic, p, k);
	checkf(k == 0, "%s: rx_queues 1: rx_burst_queue(1) takes nothing "
	       "(took %u)", dir, k);
	drain(rx, -1, nrxq, s);
}

/* The ports' per-queue counters (from zero): NF frames a TX queue,
 * want[r] on RX queue r. */
static int counted(const struct end *tx, const struct end *rx,
		   unsigned ntxq, unsigned nrxq, const unsigned *want)
{
	const struct snic_dpdk_port *tp = &tx->nic->port[tx->port];
	const struct snic_dpdk_port *rp = &rx->nic->port[rx->port];

	for (unsigned q = 0; q < ntxq; q++)
		if (tp->tx_frames_q[q] != NF)
			return 0;
	for (unsigned r = 0; r < nrxq; r++)
		if (rp->rx_frames_q[r] != want[r])
			return 0;
	return 1;
}

/* Every frame of the table from every TX queue of tx; received on rx
 * (nrxq queues) and checked. */
static void exchange(const struct end *tx, const struct end *rx,
		     unsigned ntxq, unsigned nrxq, const char *dir)
{
	static struct seen s;
	unsigned want[SNIC_DPDK_MAX_RXQ] = { 0 }, sent = 0;

	seen_reset(&s);
	for (unsigned i = 0; i < NF; i++)
		want[rule_q(i, nrxq)] += ntxq;
	for (uint16_t q = 0; q < ntxq; q++)
		sent += send_frames(tx, q, 0, NF);
	checkf(sent == ntxq * NF, "%s: %u frames sent from %u TX queues (%u)",
	       dir, ntxq * NF, ntxq, sent);
	checkf(rings_hold(rx, nrxq, want), "%s: each frame in the ring of "
	       "the RX queue the rule names", dir);
	checkf(ready_as(rx, nrxq, want), "%s: rx_ready 1 on the queues "
	       "holding frames, 0 elsewhere", dir);
	take_all(rx, nrxq, &s, dir);
	checkf(s.got == ntxq * NF && !s.unknown && !s.dup && !s.wrong_q,
	       "%s: all %u received once each, each on its queue (got %u, "
	       "unknown %u, twice %u, wrong queue %u)", dir, ntxq * NF,
	       s.got, s.unknown, s.dup, s.wrong_q);
	checkf(!s.bad_bytes && !s.order, "%s: bytes, length and port intact, "
	       "order kept per ring (bad %u, out of order %u)", dir,
	       s.bad_bytes, s.order);
	checkf(ready_as(rx, nrxq, (unsigned[SNIC_DPDK_MAX_RXQ]){ 0 }),
	       "%s: rx_ready 0 everywhere once taken", dir);
	checkf(counted(tx, rx, ntxq, nrxq, want), "%s: tx_frames_q and "
	       "rx_frames_q count them", dir);
}

/* One frame for each queue r >= 1 alone: rx_ready says so before it is
 * taken (only r, and 0 when it stands for all) and not after. */
static void one_each(const struct end *tx, const struct end *rx,
		     unsigned nrxq, const char *dir)
{
	for (unsigned r = 1; r < nrxq; r++) {
		unsigned want[SNIC_DPDK_MAX_RXQ] = { 0 }, i = 0;
		static struct seen s;

		while (i < NF && (frames[i].kind != K_V4 || rule_q(i, nrxq) != r))
			i++;
		want[r] = 1;
		seen_reset(&s);
		send_frames(tx, 0, i, i + 1);
		checkf(ready_as(rx, nrxq, want), "%s: one frame for queue %u: "
		       "rx_ready 1 there only (and on 0 if it polls all)", dir, r);
		take_all(rx, nrxq, &s, dir);
		checkf(s.got == 1 && !s.wrong_q && !s.bad_bytes &&
		       ready_as(rx, nrxq, (unsigned[SNIC_DPDK_MAX_RXQ]){ 0 }),
		       "%s: it is taken from queue %u, intact; rx_ready 0 after",
		       dir, r);
	}
}

/* A pair of ntxq x nrxq queues: A steers for B (B has want_rxq[1]) and
 * B for A (want_rxq[0]). */
static void steer_pair(const char *tag, unsigned ntxq, unsigned nrxq,
		       const uint16_t want_rxq[2])
{
	static struct snic_dpdk_nic nic[2];
	struct end e[2];
	char dir[2][96];

	if (pair_up(tag, nic, e, ntxq, nrxq, want_rxq) != 0) {
		checkf(0, "%s: ring pair of %u TX, %u RX queues and its ports",
		       tag, ntxq, nrxq);
		return;
	}
	for (int s = 0; s < 2; s++)
		snprintf(dir[s], sizeof(dir[s]), "%s %ux%u %s, want_rxq %u "
			 "(rx_queues %u)", tag, ntxq, nrxq, s ? "B->A" : "A->B",
			 want_rxq[!s], snic_dpdk_rx_queues(&nic[!s]));
	checkf(snic_dpdk_tx_queues(&nic[0]) == ntxq &&
	       nic[1].port[e[1].port].nb_rxq == nrxq,
	       "%s: tx_queues %u, %u RX queues a port", tag, ntxq, nrxq);
	for (int s = 0; s < 2; s++) {
		int own = snic_dpdk_rx_queues(&nic[s]) == nrxq, ok = 1;

		for (unsigned r = 0; r < nrxq; r++)
			ok &= snic_dpdk_rx_poller(&nic[s], (uint16_t)r) ==
			      (own ? r : 0);
		checkf(ok, "%s: NIC %c's ring r polled by queue %s", tag,
		       'A' + s, own ? "r" : "0");
	}
	for (int s = 0; s < 2; s++) {
		exchange(&e[s], &e[!s], ntxq, nrxq, dir[s]);
		one_each(&e[s], &e[!s], nrxq, dir[s]);
	}
	snic_dpdk_nic_fini(&nic[0]);
	snic_dpdk_nic_fini(&nic[1]);
	pools_full(tag);
}

/* ---------------------------------------------------------------------- */
/* 3. A stop while another thread sends.                                   */

#define SENDER_BURST 32
#define AFTER_SENDS  64             /* sends once the stop is known */
#define SENDER_MAX_NS 10000000000ull

struct sender {
	struct end a, b;                /* sends on A's TX queue 1, drains B */
	atomic_int stopped;             /* main: snic_dpdk_nic_fini returned */
	atomic_ulong progress;          /* frames sent, for main's wait */
	unsigned long alloc, sent, unsent, received, after, after_sent;
	int timed_out;
};

static void sender_round(struct sender *s, int stopped)
{
	struct snic_pkt *p[SENDER_BURST];
	uint16_t n = snic_dpdk_pkt_alloc(s->a.nic, p, SENDER_BURST), k;

	for (uint16_t i = 0; i < n; i++)
		p[i]->len = frame_build(p[i]->data, i % NF, 1);
	k = snic_dpdk_tx_burst_queue(s->a.nic, s->a.port, 1, p, n);
	/* what the queue did not take stays ours */
	snic_dpdk_pkt_free(s->a.nic, p + k, (uint16_t)(n - k));
	s->alloc += n;
	s->sent += k;
	s->unsent += (unsigned)(n - k);
	s->after += stopped != 0;
	s->after_sent += stopped ? k : 0;
	atomic_store_explicit(&s->progress, s->sent, memory_order_relaxed);
	/* B drained as it goes: a full ring never passes for a stop */
	n = snic_dpdk_rx_burst(s->b.nic, s->b.port, p, SENDER_BURST);
	s->received += n;
	snic_dpdk_pkt_free(s->b.nic, p, n);
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	uint64_t end = now_ns() + SENDER_MAX_NS;

	while (s->after < AFTER_SENDS) {
		sender_round(s, atomic_load_explicit(&s->stopped,
						     memory_order_acquire));
		if (now_ns() > end) {
			s->timed_out = 1;
			break;
		}
	}
	return NULL;
}

/* Until the sender has sent a few bursts (bounded: 5 s). */
static void wait_progress(struct sender *s)
{
	uint64_t end = now_ns() + 5000000000ull;

	while (atomic_load_explicit(&s->progress, memory_order_relaxed) <
	       16 * SENDER_BURST && now_ns() < end)
		sched_yield();
}

/* After the sender ended: what it did, and B's ring holding the rest. */
static void sender_checks(const struct sender *s, unsigned left)
{
	checkf(send_frames(&s->a, 0, 0, 1) == 0,
	       "stop: queue 0 takes nothing after it either");
	checkf(!s->timed_out && s->after == AFTER_SENDS && s->after_sent == 0,
	       "stop: the %u sends on TX queue 1 after it took nothing "
	       "(took %lu)", AFTER_SENDS, s->after_sent);
	checkf(s->alloc == s->sent + s->unsent, "stop: every frame allocated "
	       "was sent or freed (%lu = %lu + %lu)", s->alloc, s->sent,
	       s->unsent);
	checkf(s->sent == s->received + left, "stop: every frame sent was "
	       "received or waits in B's ring (%lu = %lu + %u)", s->sent,
	       s->received, left);
	checkf(s->a.nic->port[s->a.port].tx_frames_q[1] == s->sent,
	       "stop: tx_frames_q[1] counts them (%lu)", s->sent);
	checkf(rte_mempool_avail_count(pool[0]) + left == pool_full[0],
	       "stop: pool A short by exactly the frames in B's ring (%u)",
	       left);
}

/* The frames it left in B's ring, for the teardown's check. */
static unsigned stop_under_way(void)
{
	static struct snic_dpdk_nic nic[2];
	static struct sender s;
	struct snic_dpdk_port *pa;
	struct end e[2];
	pthread_t t;
	unsigned left;

	if (pair_up("st", nic, e, 2, 1, (const uint16_t[2]){ 1, 1 }) != 0 ||
	    snic_dpdk_tx_queues(&nic[0]) != 2) {
		checkf(0, "stop: a pair with 2 TX queues");
		return 0;
	}
	pa = &nic[0].port[e[0].port];
	s.a = e[0];
	s.b = e[1];
	if (pthread_create(&t, NULL, sender_main, &s) != 0) {
		checkf(0, "stop: the sender thread starts");
		return 0;
	}
	wait_progress(&s);
	checkf(atomic_load(&s.progress) > 0, "stop: the sender's frames went "
	       "through TX queue 1 before the stop (%lu)",
	       atomic_load(&s.progress));
	snic_dpdk_nic_fini(&nic[0]);
	atomic_store_explicit(&s.stopped, 1, memory_order_release);
	checkf(!pa->started && atomic_load(&pa->txq_open) == 0 &&
	       nic[0].nb_ports == 0, "stop: snic_dpdk_nic_fini returned "
	       "under way, the port stopped and its queues >= 1 closed");
	pthread_join(t, NULL);
	left = rte_ring_count(nic[1].port[e[1].port].rx_ring[0]);
	sender_checks(&s, left);
	snic_dpdk_nic_fini(&nic[1]);
	return left;
}

/* ---------------------------------------------------------------------- */
/* 4. Frames in flight at teardown.                                        */

#define IN_FLIGHT 100u

static int cleanup_called;

/* snic_dpdk_eal_fini calls this once it has drained the rings (the test
 * is linked with -Wl,--wrap=rte_eal_cleanup): the pools are counted
 * here, while they exist (without hugepages EAL unmaps them). */
int __real_rte_eal_cleanup(void);
int __wrap_rte_eal_cleanup(void);
int __wrap_rte_eal_cleanup(void)
{
	cleanup_called++;
	pools_full("snic_dpdk_eal_fini, before rte_eal_cleanup");
	return __real_rte_eal_cleanup();
}

static void in_flight(unsigned stop_left)
{
	static struct snic_dpdk_nic nic[2];
	struct end e[2];
	unsigned sent[2] = { 0, 0 };

	if (pair_up("fl", nic, e, 1, 1, (const uint16_t[2]){ 1, 1 }) != 0) {
		checkf(0, "teardown: a 1x1 ring pair");
		return;
	}
	/* both ways, never received */
	for (int s = 0; s < 2; s++)
		for (unsigned k = 0; k < IN_FLIGHT / NF + 1; k++)
			sent[s] += send_frames(&e[s], 0, 0, NF);
	snic_dpdk_nic_fini(&nic[0]);
	snic_dpdk_nic_fini(&nic[1]);
	checkf(rte_mempool_avail_count(pool[0]) + sent[0] + stop_left ==
	       pool_full[0] &&
	       rte_mempool_avail_count(pool[1]) + sent[1] == pool_full[1],
	       "teardown: %u + %u frames left in the rings at nic_fini",
	       sent[0] + stop_left, sent[1]);
	snic_dpdk_eal_fini();
	checkf(cleanup_called == 1, "teardown: snic_dpdk_eal_fini ends with "
	       "rte_eal_cleanup, once");
}

int main(int argc, char **argv)
{
	char prefix[64];
	unsigned left;

	(void)argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(TIME_LIMIT_S);
	snprintf(prefix, sizeof(prefix), "snic-dpdk-ring-%d", (int)getpid());
	if (snic_dpdk_eal_init(argv[0], SNIC_DPDK_EAL_NO_PCI, prefix, 0, NULL))
		return 2;
	pool[0] = snic_dpdk_pool_create("drt-a", POOL_N);
	pool[1] = snic_dpdk_pool_create("drt-b", POOL_N);
	if (pool[0] == NULL || pool[1] == NULL)
		return 2;
	for (int s = 0; s < 2; s++)
		pool_full[s] = rte_mempool_avail_count(pool[s]);

	bad_counts();
	/* as snic-emu --cores 2 (want_rxq 2) towards B; A polls all (1) */
	steer_pair("s22", 2, 2, (const uint16_t[2]){ 1, 2 });
	/* B as --cores 4 would; A wants 2 of 4: rx_queues 1 again */
	steer_pair("s14", 1, 4, (const uint16_t[2]){ 2, 4 });
	left = stop_under_way();
	in_flight(left);
	printf("dpdk_ring: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
