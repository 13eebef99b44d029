/* SPDX-License-Identifier: MIT */
/*
 * DPDK HAL: EAL start-up, packet pools whose mbufs carry a struct snic_pkt
 * in their private area, in-process ring pairs, and the port ops of hal.h.
 *
 * Data path rules: no allocation, no syscalls, no printing.  Bursts are cut
 * into chunks of HAL_BURST so the mbuf pointer arrays live on the stack.
 */
#include "hal_dpdk.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "pcap_file.h"

#define HAL_BURST 64u
#define POOL_CACHE 256u
#define PKT_PRIV_SIZE RTE_ALIGN(sizeof(struct snic_pkt), RTE_MBUF_PRIV_ALIGN)

/* What this module made, freed by snic_dpdk_eal_fini. */
#define MAX_MADE 16
static struct rte_ring *made_rings[MAX_MADE];
static unsigned nb_made_rings;
static struct rte_mempool *made_pools[MAX_MADE];
static unsigned nb_made_pools;

/* The ring pairs' ports: their own rings and their peer's RX queues
 * (port_setup takes them from here). */
static struct ring_port {
	uint16_t port_id, nrx, peer_rxq;
	struct rte_ring *rx[SNIC_DPDK_MAX_RXQ];
} ring_ports[MAX_MADE];
static unsigned nb_ring_ports;

/* ---------------------------------------------------------------------- */
/* EAL.                                                                    */

/* Does the user's argument list contain option opt (long options also as
 * "--opt=value", short ones also as "-xVALUE")? */
static int user_has(int argc, char **argv, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], opt, n) != 0)
			continue;
		if (argv[i][n] == '\0' || opt[1] != '-' || argv[i][n] == '=')
			return 1;
	}
	return 0;
}

static long read_long_file(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Free hugepages of the default size and that size in kB (from
 * /proc/meminfo); -1 when unknown. */
static long huge_free_pages(long *page_kb)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long free_pages = -1;

	*page_kb = 0;
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		sscanf(line, "HugePages_Free: %ld", &free_pages);
		sscanf(line, "Hugepagesize: %ld kB", page_kb);
	}
	fclose(f);
	return *page_kb > 0 ? free_pages : -1;
}

/* "--lcores=0@(a,b,...)": lcore 0 may run on every CPU we may use. */
static int lcores_arg(char *buf, size_t len)
{
	cpu_set_t set;
	size_t off;
	int first = 1;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	off = (size_t)snprintf(buf, len, "--lcores=0@(");
	for (int cpu = 0; cpu < CPU_SETSIZE && off < len; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%d",
					first ? "" : ",", cpu);
		first = 0;
	}
	if (first || off + 2 > len)
		return -1;
	snprintf(buf + off, len - off, ")");
	return 0;
}

/* Choose the memory mode; append its arguments to argv. */
static int memory_args(char **argv, int argc, int user_argc, char **user_argv)
{
	static char in_memory[] = "--in-memory";
	static char no_huge[] = "--no-huge", no_shconf[] = "--no-shconf";
	static char m_opt[] = "-m", m_val[16];
	static const char *const user_mem[] = {
		"--no-huge", "--in-memory", "-m", "--socket-mem",
		"--huge-dir", "--legacy-mem",
	};
	long nr, page_kb, free_pages;
	char why[128];

	for (size_t i = 0; i < sizeof(user_mem) / sizeof(user_mem[0]); i++) {
		if (user_has(user_argc, user_argv, user_mem[i])) {
			printf("snic: DPDK memory: as given after '--'\n");
			return argc;
		}
	}
	nr = read_long_file("/proc/sys/vm/nr_hugepages");
	free_pages = huge_free_pages(&page_kb);
	if (nr > 0 && free_pages > 0 &&
	    (uint64_t)free_pages * (uint64_t)page_kb >=
	    (uint64_t)SNIC_DPDK_HUGE_MIN_MB * 1024u) {
		printf("snic: DPDK memory: hugepages (--in-memory; %ld free "
		       "%ld kB pages)\n", free_pages, page_kb);
		argv[argc++] = in_memory;
		return argc;
	}
	if (nr <= 0)
		snprintf(why, sizeof(why), "nr_hugepages is %ld", nr < 0 ? 0 : nr);
	else
		snprintf(why, sizeof(why), "%ld free %ld kB hugepages, want %u MB",
			 free_pages < 0 ? 0 : free_pages, page_kb,
			 SNIC_DPDK_HUGE_MIN_MB);
	snprintf(m_val, sizeof(m_val), "%u", SNIC_DPDK_NOHUGE_MB);
	printf("snic: DPDK memory: no hugepages (%s): --no-huge --no-shconf "
	       "-m %s\n", why, m_val);
	argv[argc++] = no_huge;
	argv[argc++] = no_shconf;
	argv[argc++] = m_opt;
	argv[argc++] = m_val;
	return argc;
}

int snic_dpdk_eal_init(const char *prog, unsigned flags,
		       const char *file_prefix, int user_argc,
		       char **user_argv)
{
	static char prog_buf[64], lcores[512], prefix[128];
	static char no_pci[] = "--no-pci", no_tel[] = "--no-telemetry";
	static char quiet[] = "--log-level=lib.eal:warning";
	char **argv;
	int argc = 0, ret;

	argv = calloc((size_t)user_argc + 16, sizeof(*argv));
	if (argv == NULL) {
		fprintf(stderr, "snic: DPDK EAL init: out of memory\n");
		return -1;
	}
	snprintf(prog_buf, sizeof(prog_buf), "%s", prog);
	argv[argc++] = prog_buf;
	argv[argc++] = quiet;
	argv[argc++] = no_tel;
	if (!user_has(user_argc, user_argv, "-l") &&
	    !user_has(user_argc, user_argv, "-c") &&
	    !user_has(user_argc, user_argv, "--lcores") &&
	    lcores_arg(lcores, sizeof(lcores)) == 0)
		argv[argc++] = lcores;
	if ((flags & SNIC_DPDK_EAL_NO_PCI) &&
	    !user_has(user_argc, user_argv, "-a") &&
	    !user_has(user_argc, user_argv, "--allow") &&
	    !user_has(user_argc, user_argv, "-b") &&
	    !user_has(user_argc, user_argv, "--block") &&
	    !user_has(user_argc, user_argv, "--no-pci"))
		argv[argc++] = no_pci;
	if (file_prefix != NULL &&
	    !user_has(user_argc, user_argv, "--file-prefix")) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=%s", file_prefix);
		argv[argc++] = prefix;
	}
	argc = memory_args(argv, argc, user_argc, user_argv);
	for (int i = 0; i < user_argc; i++)
		argv[argc++] = user_argv[i];
	fflush(stdout);

	ret = rte_eal_init(argc, argv);
	free(argv);     /* EAL keeps no pointer to the array itself */
	if (ret < 0) {
		fprintf(stderr, "snic: DPDK EAL init failed: %s (see EAL's "
			"messages above; were the arguments after '--' "
			"right?)\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

void snic_dpdk_eal_fini(void)
{
	struct rte_mbuf *m[HAL_BURST];
	unsigned k;

	/* Frames still in flight in a ring pair go back to their pools
	 * before the pools go. */
	for (unsigned i = 0; i < nb_made_rings; i++) {
		while ((k = rte_ring_dequeue_burst(made_rings[i], (void **)m,
						   HAL_BURST, NULL)) != 0)
			rte_pktmbuf_free_bulk(m, k);
		rte_ring_free(made_rings[i]);
	}
	nb_made_rings = 0;
	nb_ring_ports = 0;
	/* The pools are not freed one by one: DPDK's heap zeroes what it
	 * frees, which faults in every untouched page of the packet buffers
	 * (~0.5 s without hugepages).  The process is about to exit and EAL
	 * memory (--in-memory / --no-shconf) goes with it. */
	nb_made_pools = 0;
	rte_eal_cleanup();
}

/* ---------------------------------------------------------------------- */
/* Pools.                                                                  */

static void pkt_init(struct rte_mempool *mp, void *opaque, void *obj,
		     unsigned idx)
{
	struct rte_mbuf *m = obj;
	struct snic_pkt *pkt = rte_mbuf_to_priv(m);

	(void)mp;
	(void)opaque;
	(void)idx;
	memset(pkt, 0, sizeof(*pkt));
	pkt->priv = m;
	pkt->data = (uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM;
	pkt->cap = SNIC_DPDK_FRAME_MAX;
}

struct rte_mempool *snic_dpdk_pool_create(const char *name, unsigned n)
{
	struct rte_mempool *mp;

	if (nb_made_pools == MAX_MADE) {
		fprintf(stderr, "snic: pool %s: too many pools\n", name);
		return NULL;
	}
	mp = rte_pktmbuf_pool_create(name, n, POOL_CACHE, PKT_PRIV_SIZE,
				     RTE_PKTMBUF_HEADROOM + SNIC_DPDK_FRAME_MAX,
				     (int)rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "snic: cannot create packet pool %s (%u buffers "
			"of %u bytes): %s\n", name, n,
			RTE_PKTMBUF_HEADROOM + SNIC_DPDK_FRAME_MAX,
			rte_strerror(rte_errno));
		return NULL;
	}
	rte_mempool_obj_iter(mp, pkt_init, NULL);
	made_pools[nb_made_pools++] = mp;
	return mp;
}

/* ---------------------------------------------------------------------- */
/* Ports.                                                                  */

static struct rte_ring *make_ring(const char *from, const char *to,
				  unsigned q, unsigned size, unsigned producers)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;

	snprintf(name, sizeof(name), "%s>%s.%u", from, to, q);
	if (nb_made_rings == MAX_MADE) {
		fprintf(stderr, "snic: ring %s: too many rings\n", name);
		return NULL;
	}
	/* One thread receives from it; one or each TX queue's sends. */
	r = rte_ring_create(name, size, (int)rte_socket_id(),
			    (producers > 1 ? 0 : RING_F_SP_ENQ) | RING_F_SC_DEQ);
	if (r == NULL) {
		fprintf(stderr, "snic: cannot create ring %s: %s\n", name,
			rte_strerror(rte_errno));
		return NULL;
	}
	made_rings[nb_made_rings++] = r;
	return r;
}

static struct ring_port *ring_port_of(uint16_t port_id)
{
	for (unsigned i = 0; i < nb_ring_ports; i++)
		if (ring_ports[i].port_id == port_id)
			return &ring_ports[i];
	return NULL;
}

/* One port of a pair: it receives from rx[0 .. nrxq), and its TX queue
 * q, ring r of the peer's is ethdev queue q * nrxq + r. */
static int ring_port(const char *name, struct rte_ring **rx,
		     struct rte_ring **peer_rx, unsigned ntxq, unsigned nrxq)
{
	struct rte_ring *tx[SNIC_DPDK_MAX_TXQ];
	struct ring_port *rp = NULL;
	int id;

	for (unsigned q = 0; q < ntxq; q++)
		for (unsigned r = 0; r < nrxq; r++)
			tx[q * nrxq + r] = peer_rx[r];
	id = rte_eth_from_rings(name, rx, nrxq, tx, ntxq * nrxq,
				rte_socket_id());
	/* closing a port frees its id for the next one: a closed pair's
	 * entry is this port's now, not a stale one before it */
	if (id >= 0)
		rp = ring_port_of((uint16_t)id);
	if (id < 0 || (rp == NULL && nb_ring_ports == MAX_MADE)) {
		fprintf(stderr, "snic: cannot create ring port %s: %s\n", name,
			id < 0 ? rte_strerror(rte_errno) : "too many");
		return -1;
	}
	if (rp == NULL)
		rp = &ring_ports[nb_ring_ports++];
	rp->port_id = (uint16_t)id;
	rp->nrx = (uint16_t)nrxq;
	rp->peer_rxq = (uint16_t)nrxq;
	for (unsigned r = 0; r < nrxq; r++)
		rp->rx[r] = rx[r];
	return id;
}

int snic_dpdk_ring_pair(const char *name_a, const char *name_b,
			uint16_t *a, uint16_t *b, unsigned ntxq,
			unsigned nrxq)
{
	struct rte_ring *ab[SNIC_DPDK_MAX_RXQ], *ba[SNIC_DPDK_MAX_RXQ];
	unsigned size;
	int pa, pb;

	if (ntxq < 1 || ntxq > SNIC_DPDK_MAX_TXQ || nrxq < 1 ||
	    nrxq > SNIC_DPDK_MAX_RXQ || (nrxq & (nrxq - 1)) != 0 ||
	    ntxq * nrxq > SNIC_DPDK_MAX_TXQ) {
		fprintf(stderr, "snic: ring pair %s/%s: %u TX and %u RX queues "
			"(TX 1..%d, RX a power of two up to %d, TX x RX up to "
			"%d)\n", name_a, name_b, ntxq, nrxq, SNIC_DPDK_MAX_TXQ,
			SNIC_DPDK_MAX_RXQ, SNIC_DPDK_MAX_TXQ);
		return -1;
	}
	/* the pool holds about two directions' worth of slots */
	size = SNIC_DPDK_RING_SIZE / nrxq;
	for (unsigned r = 0; r < nrxq; r++) {
		ab[r] = make_ring(name_a, name_b, r, size, ntxq);
		ba[r] = make_ring(name_b, name_a, r, size, ntxq);
		if (ab[r] == NULL || ba[r] == NULL)
			return -1;
	}
	pa = ring_port(name_a, ba, ab, ntxq, nrxq);
	pb = pa < 0 ? -1 : ring_port(name_b, ab, ba, ntxq, nrxq);
	if (pa < 0 || pb < 0)
		return -1;
	*a = (uint16_t)pa;
	*b = (uint16_t)pb;
	return 0;
}

void snic_dpdk_nic_init(struct snic_dpdk_nic *n, struct rte_mempool *pool)
{
	memset(n, 0, sizeof(*n));
	n->pool = pool;
}

static int port_fail(const struct snic_dpdk_port *p, const char *what,
		     int err)
{
	fprintf(stderr, "snic: port %u (%s): %s: %s\n", p->port_id, p->name,
		what, rte_strerror(err < 0 ? -err : err));
	return -1;
}

/* TX queues for a port of this driver: want_txq where it has them and
 * they all reach the wire that queue 0 does.  A memif queue is a ring of
 * its own that the peer must poll (a peer with fewer RX queues would
 * never see it), so memif keeps one. */
static uint16_t port_txq(const struct snic_dpdk_nic *n,
			 const struct rte_eth_dev_info *info)
{
	uint16_t want = n->want_txq;

	if (want <= 1 || want > SNIC_DPDK_MAX_TXQ || info->max_tx_queues < want)
		return 1;
	if (info->driver_name && strstr(info->driver_name, "memif"))
		return 1;
	return want;
}

/* Close queues >= 1 to the other threads and wait for the sends under
 * way: the port may then be stopped (hal_dpdk.h, txq_open). */
static void txq_close(struct snic_dpdk_port *p)
{
	atomic_store(&p->txq_open, 0); /* seq_cst: against the busy flags */
	for (uint16_t q = 1; q < p->nb_txq; q++)
		while (atomic_load(&p->txq_busy[q]))
			rte_pause();
}

static void port_stop(struct snic_dpdk_port *p)
{
	txq_close(p);
	rte_eth_dev_stop(p->port_id);
	p->started = 0;
}

uint32_t snic_dpdk_port_max_mtu(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	uint32_t fit = SNIC_DPDK_FRAME_MAX - RTE_ETHER_HDR_LEN - RTE_VLAN_HLEN;
	uint32_t max, overhead = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	if (!rte_eth_dev_is_valid_port(port_id) ||
	    rte_eth_dev_info_get(port_id, &info) != 0)
		return 0;
	/* ethdev checks MTU + overhead against max_rx_pktlen too (memif:
	 * 1518 whatever its max_mtu says); overhead as ethdev computes it */
	if (info.max_mtu != UINT16_MAX && info.max_rx_pktlen > info.max_mtu)
		overhead = info.max_rx_pktlen - info.max_mtu;
	max = info.max_mtu;
	if (info.max_rx_pktlen > overhead && info.max_rx_pktlen - overhead < max)
		max = info.max_rx_pktlen - overhead;
	return max < fit ? max : fit;
}

int snic_dpdk_port_setup(struct snic_dpdk_nic *n, uint16_t port_id,
			 uint32_t eth_mtu, uint16_t *nic_port)
{
	struct snic_dpdk_port *p;
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	const struct ring_port *rp;
	uint16_t nb_rxd = SNIC_DPDK_RING_SIZE, nb_txd = SNIC_DPDK_RING_SIZE;
	int socket, ret;

	if (n->nb_ports == SNIC_DPDK_MAX_PORTS) {
		fprintf(stderr, "snic: port %u: a NIC has at most %d ports\n",
			port_id, SNIC_DPDK_MAX_PORTS);
		return -1;
	}
	p = &n->port[n->nb_ports];
	memset(p, 0, sizeof(*p));
	p->port_id = port_id;
	if (!rte_eth_dev_is_valid_port(port_id)) {
		fprintf(stderr, "snic: port %u: no such DPDK port (%u available)"
			"\n", port_id, rte_eth_dev_count_avail());
		return -1;
	}
	rte_eth_dev_get_name_by_port(port_id, p->name);
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0)
		return port_fail(p, "cannot get device info", ret);
	if (eth_mtu < info.min_mtu || eth_mtu > info.max_mtu) {
		fprintf(stderr, "snic: port %u (%s): MTU %u outside the "
			"driver's range %u..%u\n", port_id, p->name, eth_mtu,
			info.min_mtu, info.max_mtu);
		return -1;
	}
	if (eth_mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN > SNIC_DPDK_FRAME_MAX) {
		fprintf(stderr, "snic: port %u (%s): MTU %u does not fit the "
			"%u-byte packet buffers\n", port_id, p->name, eth_mtu,
			SNIC_DPDK_FRAME_MAX);
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = eth_mtu;
	p->nb_txq = port_txq(n, &info);
	p->nb_rxq = 1;
	p->peer_rxq = 1;
	rp = ring_port_of(port_id);
	if (rp != NULL) {
		/* every ring is read and reached: it has them all */
		p->nb_rxq = rp->nrx;
		p->peer_rxq = rp->peer_rxq;
		memcpy(p->rx_ring, rp->rx, sizeof(p->rx_ring));
		if ((unsigned)p->nb_txq * p->peer_rxq > info.max_tx_queues)
			p->nb_txq = 1;
	}
	ret = rte_eth_dev_configure(port_id, p->nb_rxq,
				    (uint16_t)(p->nb_txq * p->peer_rxq), &conf);
	if (ret != 0)
		return port_fail(p, "cannot configure its queues", ret);
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	if (ret != 0)
		return port_fail(p, "cannot adjust descriptor counts", ret);
	socket = rte_eth_dev_socket_id(port_id);
	if (socket < 0)
		socket = SOCKET_ID_ANY;
	for (uint16_t q = 0; q < p->nb_rxq; q++) {
		ret = rte_eth_rx_queue_setup(port_id, q, nb_rxd,
					     (unsigned)socket, NULL, n->pool);
		if (ret != 0)
			return port_fail(p, "cannot set up an RX queue", ret);
	}
	for (uint16_t q = 0; q < p->nb_txq * p->peer_rxq; q++) {
		ret = rte_eth_tx_queue_setup(port_id, q, nb_txd,
					     (unsigned)socket, NULL);
		if (ret != 0)
			return port_fail(p, "cannot set up a TX queue", ret);
	}
	if (n->nb_ports == 0 || p->nb_txq < n->nb_txq)
		n->nb_txq = p->nb_txq;
	if (n->nb_ports == 0 || p->nb_rxq < n->nb_rxq)
		n->nb_rxq = p->nb_rxq;
	*nic_port = n->nb_ports++;
	return 0;
}

/* Start a configured port.  0, or the driver's negative errno (quiet: the
 * callers decide whether a failure is final). */
static int port_start(struct snic_dpdk_port *p, uint64_t now_ns)
{
	struct rte_eth_link link;
	int ret = rte_eth_dev_start(p->port_id);

	p->last_err = ret;
	if (ret != 0)
		return ret;
	p->started = 1;
	atomic_store_explicit(&p->txq_open, 1, memory_order_release);
	/* A fresh start gets the full grace period before a restart: a
	 * memif client stopped mid-handshake can crash its server. */
	p->down_since_ns = now_ns;
	/* The NIC filters by its own MAC; on a shared medium (af_packet,
	 * tap) the port must hand it every frame.  Not every PMD can. */
	if (!rte_eth_promiscuous_get(p->port_id)) {
		ret = rte_eth_promiscuous_enable(p->port_id);
		if (ret != 0 && ret != -ENOTSUP)
			return port_fail(p, "cannot enable promiscuous mode",
					 ret);
		p->promisc_set = ret == 0;
	}
	if (rte_eth_link_get_nowait(p->port_id, &link) == 0)
		p->link_up = link.link_status == RTE_ETH_LINK_UP;
	return 0;
}

int snic_dpdk_port_add(struct snic_dpdk_nic *n, uint16_t port_id,
		       uint32_t eth_mtu, uint16_t *nic_port)
{
	int ret = snic_dpdk_port_setup(n, port_id, eth_mtu, nic_port);

	if (ret != 0)
		return ret;
	ret = port_start(&n->port[*nic_port], 0);
	if (ret != 0)
		return port_fail(&n->port[*nic_port], "cannot start", ret);
	return 0;
}

/* Stop the port; the watch starts it again at once.  Said once per outage
 * (a port waiting for its peer restarts every second, quietly). */
static void port_restart(struct snic_dpdk_port *p, uint64_t now_ns)
{
	if (!p->restart_said)
		printf("snic: port %u (%s): link down for %llu ms, restarting "
		       "the port (every %llu ms until it comes up)\n",
		       p->port_id, p->name,
		       (unsigned long long)((now_ns - p->down_since_ns) /
					    1000000u),
		       SNIC_DPDK_RESTART_NS / 1000000u);
	p->restart_said = 1;
	port_stop(p);
	p->restarts++;
	p->down_since_ns = now_ns;
	p->next_try_ns = now_ns;
}

static void port_watch_one(struct snic_dpdk_port *p, uint64_t now_ns)
{
	struct rte_eth_link link;
	uint8_t up = 0;

	if (!p->started) {
		if (now_ns < p->next_try_ns)
			return;
		p->next_try_ns = now_ns + SNIC_DPDK_RETRY_NS;
		if (port_start(p, now_ns) != 0)
			return;
	}
	if (rte_eth_link_get_nowait(p->port_id, &link) == 0)
		up = link.link_status == RTE_ETH_LINK_UP;
	if (up != p->link_up) {
		printf("snic: port %u (%s): link %s\n", p->port_id, p->name,
		       up ? "up" : "down");
		if (!up) {
			p->down_since_ns = now_ns;
			p->link_downs++;
		}
		p->restart_said = 0;
		p->link_up = up;
	}
	if (!up && p->restart &&
	    now_ns - p->down_since_ns >= SNIC_DPDK_RESTART_NS)
		port_restart(p, now_ns);
}

void snic_dpdk_port_set_restart(struct snic_dpdk_nic *n, uint16_t nic_port,
				int on)
{
	if (nic_port < n->nb_ports)
		n->port[nic_port].restart = on != 0;
}

unsigned snic_dpdk_port_watch(struct snic_dpdk_nic *n, uint64_t now_ns)
{
	unsigned up = 0;

	for (uint16_t i = 0; i < n->nb_ports; i++) {
		struct snic_dpdk_port *p = &n->port[i];

		if (p->down_since_ns == 0)
			p->down_since_ns = now_ns;
		port_watch_one(p, now_ns);
		up += p->link_up;
	}
	return up;
}

void snic_dpdk_nic_fini(struct snic_dpdk_nic *n)
{
	for (uint16_t i = 0; i < n->nb_ports; i++) {
		struct snic_dpdk_port *p = &n->port[i];

		/* af_packet sets IFF_PROMISC on the kernel interface and does
		 * not clear it on close: leave the interface as we found it. */
		if (p->promisc_set)
			rte_eth_promiscuous_disable(p->port_id);
		if (p->started)
			port_stop(p);
		rte_eth_dev_close(p->port_id);
		p->cap = NULL;
	}
	n->nb_ports = 0;
}

void snic_dpdk_port_capture(struct snic_dpdk_nic *n, uint16_t nic_port,
			    struct pcap_file *cap)
{
	if (nic_port < n->nb_ports)
		n->port[nic_port].cap = cap;
}

/* ---------------------------------------------------------------------- */
/* Data path.                                                              */

static inline uint16_t burst_chunk(uint16_t left)
{
	return left < HAL_BURST ? left : (uint16_t)HAL_BURST;
}

/*
 * Frame buffers change threads inside DPDK (a ring port's ring, a pool's
 * shared ring), whose code is not built with ThreadSanitizer, so TSan
 * (tools/tsan.sh) would see the new owner's first touch race with the
 * old owner's last.  Under TSan each hand-off is told: a release on the
 * mbuf where we give it to DPDK (TX, free), an acquire where we take it
 * back (RX, alloc); the pool's own code is split so that nothing of ours
 * touches the mbuf between the release and the put, or between the get
 * and the acquire.  Without TSan the plain DPDK calls, as before.
 */
#ifdef __SANITIZE_THREAD__
#include <sanitizer/tsan_interface.h>

static inline void mbuf_give(struct rte_mbuf *m)
{
	__tsan_release(m);
}

static inline void mbuf_take(struct rte_mbuf *m)
{
	__tsan_acquire(m);
}

static inline int mbuf_alloc_bulk(struct rte_mempool *pool,
				  struct rte_mbuf **m, unsigned n)
{
	if (rte_mempool_get_bulk(pool, (void **)m, n) != 0)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		mbuf_take(m[i]);
		rte_pktmbuf_reset(m[i]);
	}
	return 0;
}

static inline void mbuf_free_bulk(struct rte_mbuf **m, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		/* every segment: rx_queue_burst drops chained frames here */
		for (struct rte_mbuf *s = m[i], *next; s != NULL; s = next) {
			struct rte_mbuf *f;

			next = s->next;
			f = rte_pktmbuf_prefree_seg(s);
			if (f != NULL) {
				mbuf_give(f);
				rte_mempool_put(f->pool, f);
			}
		}
	}
}
#else
static inline void mbuf_give(struct rte_mbuf *m)
{
	(void)m;
}

static inline void mbuf_take(struct rte_mbuf *m)
{
	(void)m;
}

static inline int mbuf_alloc_bulk(struct rte_mempool *pool,
				  struct rte_mbuf **m, unsigned n)
{
	return rte_pktmbuf_alloc_bulk(pool, m, n);
}

static inline void mbuf_free_bulk(struct rte_mbuf **m, unsigned n)
{
	rte_pktmbuf_free_bulk(m, n);
}
#endif

static inline struct snic_pkt *mbuf_pkt(struct rte_mbuf *m, uint16_t port)
{
	struct snic_pkt *pkt = rte_mbuf_to_priv(m);

	pkt->data = rte_pktmbuf_mtod(m, uint8_t *);
	pkt->len = m->data_len;
	pkt->cap = (uint16_t)(m->buf_len - m->data_off);
	pkt->port = port;
	pkt->priv = m;
	return pkt;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A burst from RX queue q of a started port. */
static uint16_t rx_queue_burst(struct snic_dpdk_port *p, uint16_t port,
			       uint16_t q, struct snic_pkt **pkts, uint16_t n)
{
	struct rte_mbuf *m[HAL_BURST];
	uint16_t nb, k = 0;

	nb = rte_eth_rx_burst(p->port_id, q, m, n < HAL_BURST ? n : HAL_BURST);
	for (uint16_t i = 0; i < nb; i++) {
		mbuf_take(m[i]);
		/* Only single-segment frames in our own kind of buffer reach
		 * the core (a chained jumbo frame from a PMD with small
		 * buffers, or a foreign mbuf, is dropped and counted). */
		if (unlikely(m[i]->nb_segs != 1 ||
			     m[i]->priv_size < sizeof(struct snic_pkt))) {
			mbuf_free_bulk(&m[i], 1);
			p->rx_dropped++;
			continue;
		}
		pkts[k++] = mbuf_pkt(m[i], port);
	}
	/* The receive hook (e.g. fault injection) sees frames before the
	 * capture: the capture shows what the core got. */
	if (unlikely(p->rx_hook != NULL))
		k = p->rx_hook(p->rx_hook_arg, port, q, pkts, k,
			       n < HAL_BURST ? n : HAL_BURST);
	if (unlikely(p->cap != NULL && k != 0)) {
		uint64_t ts = wall_ns();

		for (uint16_t i = 0; i < k; i++)
			pcap_file_write(p->cap, pkts[i]->data, pkts[i]->len, ts);
	}
	if (q < SNIC_DPDK_MAX_RXQ)
		p->rx_frames_q[q] += k;
	return k;
}

/* The RX queues the firmware polls a core each (the rx_queues op):
 * want_rxq where every port has that many, else 1.  Queue 0's poll also
 * takes the queues past them (snic_dpdk_rx_poller). */
static inline uint16_t own_rxq(const struct snic_dpdk_nic *nic)
{
	return nic->nb_rxq <= 1 || nic->nb_rxq != nic->want_rxq ? 1
								 : nic->nb_rxq;
}

uint16_t snic_dpdk_rx_poller(const struct snic_dpdk_nic *nic, uint16_t r)
{
	return r < own_rxq(nic) ? r : 0;
}

/* The NIC's port `port` when it exists and is started, else NULL. */
static inline struct snic_dpdk_port *started_port(struct snic_dpdk_nic *nic,
						  uint16_t port)
{
	if (unlikely(port >= nic->nb_ports || !nic->port[port].started))
		return NULL;
	return &nic->port[port];
}

uint16_t snic_dpdk_rx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	struct snic_dpdk_nic *nic = hal;
	struct snic_dpdk_port *p = started_port(nic, port);
	uint16_t k;

	if (p == NULL)
		return 0;
	k = rx_queue_burst(p, port, 0, pkts, n);
	/* queues no core of its own polls (snic_dpdk_rx_poller) */
	for (uint16_t q = own_rxq(nic); q < p->nb_rxq && k < n; q++)
		k = (uint16_t)(k + rx_queue_burst(p, port, q, pkts + k,
						  (uint16_t)(n - k)));
	return k;
}

/* From core q's thread.  A ring pair's port never stops (its link is
 * always up), the only kind with several RX queues. */
uint16_t snic_dpdk_rx_burst_queue(void *hal, uint16_t port, uint16_t q,
				  struct snic_pkt **pkts, uint16_t n)
{
	struct snic_dpdk_nic *nic = hal;
	struct snic_dpdk_port *p = started_port(nic, port);

	if (q == 0)
		return snic_dpdk_rx_burst(hal, port, pkts, n);
	/* one poller per ring: rx_burst's queues are not also served here */
	if (p == NULL || unlikely(q >= own_rxq(nic)))
		return 0;
	return rx_queue_burst(p, port, q, pkts, n);
}

uint16_t snic_dpdk_rx_queues(void *hal)
{
	return own_rxq(hal);
}

/* Frames wait on queue q (from any thread): a ring pair's ring count;
 * other ports cannot tell (0). */
int snic_dpdk_rx_ready(void *hal, uint16_t port, uint16_t q)
{
	const struct snic_dpdk_nic *nic = hal;
	const struct snic_dpdk_port *p;

	if (port >= nic->nb_ports)
		return 0;
	p = &nic->port[port];
	if (q >= p->nb_rxq || p->rx_ring[0] == NULL)
		return 0;
	/* ring q, and for queue 0 also the rings its poll takes */
	for (uint16_t r = q; r < p->nb_rxq; r++)
		if ((r == q || snic_dpdk_rx_poller(nic, r) == q) &&
		    rte_ring_count(p->rx_ring[r]) != 0)
			return 1;
	return 0;
}

/* The core may have changed len (and in principle data) since the buffer
 * was allocated or received: bring the mbuf up to date. */
static inline struct rte_mbuf *pkt_mbuf_for_tx(struct snic_pkt *pkt)
{
	struct rte_mbuf *m = pkt->priv;
	uint16_t len = pkt->len <= pkt->cap ? pkt->len : pkt->cap;

	m->data_off = (uint16_t)(pkt->data - (uint8_t *)m->buf_addr);
	m->data_len = len;
	m->pkt_len = len;
	m->ol_flags = 0;
	return m;
}

/* TX with capture: hold an extra reference so the frames the driver took
 * (and may already have freed) can still be written; the capture holds
 * exactly the frames sent, once each, even when some are refused. */
static uint16_t tx_captured(struct snic_dpdk_port *p, uint16_t q,
			    struct rte_mbuf **m, uint16_t n)
{
	uint16_t sent;
	uint64_t ts = wall_ns();

	for (uint16_t i = 0; i < n; i++) {
		rte_mbuf_refcnt_update(m[i], 1);
		mbuf_give(m[i]);
	}
	sent = rte_eth_tx_burst(p->port_id, q, m, n);
	for (uint16_t i = 0; i < sent; i++) {
		pcap_file_write(p->cap, rte_pktmbuf_mtod(m[i], uint8_t *),
				m[i]->data_len, ts);
		mbuf_free_bulk(&m[i], 1);
	}
	for (uint16_t i = sent; i < n; i++)
		rte_mbuf_refcnt_update(m[i], -1);
	return sent;
}

/* How many of the first frames go to the same queue of the peer's (a
 * ring pair steering, peer_rxq > 1; else all), and which: *eq, the
 * ethdev TX queue of TX queue q that reaches it. */
static uint16_t tx_run(const struct snic_dpdk_port *p, uint16_t q,
		       struct snic_pkt **pkts, uint16_t n, uint16_t *eq)
{
	uint16_t r, run = 1;

	if (likely(p->peer_rxq <= 1)) {
		*eq = q;
		return n;
	}
	r = snic_hal_rx_queue(pkts[0]->data, pkts[0]->len, p->peer_rxq);
	while (run < n &&
	       snic_hal_rx_queue(pkts[run]->data, pkts[run]->len,
				 p->peer_rxq) == r)
		run++;
	*eq = (uint16_t)(q * p->peer_rxq + r);
	return run;
}

/* Frames onto TX queue q of a started port, in order: a run that the
 * wire takes only in part ends the burst. */
static uint16_t tx_queue_burst(struct snic_dpdk_port *p, uint16_t q,
			       struct snic_pkt **pkts, uint16_t n)
{
	struct rte_mbuf *m[HAL_BURST];
	uint16_t done = 0;

	while (done < n) {
		uint16_t eq, chunk = tx_run(p, q, pkts + done,
					    burst_chunk((uint16_t)(n - done)),
					    &eq);
		uint16_t sent;

		for (uint16_t i = 0; i < chunk; i++)
			m[i] = pkt_mbuf_for_tx(pkts[done + i]);
		if (likely(p->cap == NULL)) {
			for (uint16_t i = 0; i < chunk; i++)
				mbuf_give(m[i]);
			sent = rte_eth_tx_burst(p->port_id, eq, m, chunk);
		}
		else
			sent = tx_captured(p, eq, m, chunk);
		done += sent;
		if (sent < chunk)
			break;
	}
	p->tx_frames_q[q] += done;
	return done;
}

uint16_t snic_dpdk_tx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	struct snic_dpdk_port *p = started_port(hal, port);

	return p != NULL ? tx_queue_burst(p, 0, pkts, n) : 0;
}

uint16_t snic_dpdk_tx_queues(void *hal)
{
	const struct snic_dpdk_nic *nic = hal;

	return nic->nb_txq ? nic->nb_txq : 1;
}

/* From core q's thread while the NIC's main thread may stop the port:
 * the busy flag, then the open gate (seq_cst both, against txq_close's
 * store then loads), so a stop either waits for this send or is seen by
 * it.  The capture file takes its own lock. */
uint16_t snic_dpdk_tx_burst_queue(void *hal, uint16_t port, uint16_t q,
				  struct snic_pkt **pkts, uint16_t n)
{
	struct snic_dpdk_nic *nic = hal;
	struct snic_dpdk_port *p;
	uint16_t sent = 0;

	if (q == 0)
		return snic_dpdk_tx_burst(hal, port, pkts, n);
	if (unlikely(port >= nic->nb_ports))
		return 0;
	p = &nic->port[port];
	if (unlikely(q >= p->nb_txq))
		return 0;
	atomic_store(&p->txq_busy[q], 1);
	if (likely(atomic_load(&p->txq_open)))
		sent = tx_queue_burst(p, q, pkts, n);
	atomic_store_explicit(&p->txq_busy[q], 0, memory_order_release);
	return sent;
}

uint16_t snic_dpdk_pkt_alloc(void *hal, struct snic_pkt **pkts, uint16_t n)
{
	struct snic_dpdk_nic *nic = hal;
	struct rte_mbuf *m[HAL_BURST];
	uint16_t got = 0;

	while (got < n) {
		uint16_t chunk = burst_chunk((uint16_t)(n - got));
		int partial = 0;

		if (unlikely(mbuf_alloc_bulk(nic->pool, m, chunk) != 0)) {
			/* The pool is nearly dry: take what is left. */
			uint16_t k = 0;

			while (k < chunk && mbuf_alloc_bulk(nic->pool, &m[k], 1) == 0)
				k++;
			chunk = k;
			partial = 1;
		}
		for (uint16_t i = 0; i < chunk; i++) {
			struct snic_pkt *pkt = mbuf_pkt(m[i], 0);

			pkt->len = 0;
			pkts[got + i] = pkt;
		}
		got += chunk;
		if (partial)
			break;
	}
	return got;
}

void snic_dpdk_pkt_free(void *hal, struct snic_pkt **pkts, uint16_t n)
{
	struct rte_mbuf *m[HAL_BURST];
	uint16_t done = 0;

	(void)hal;
	while (done < n) {
		uint16_t chunk = burst_chunk((uint16_t)(n - done));
		uint16_t k = 0;

		for (uint16_t i = 0; i < chunk; i++)
			if (pkts[done + i] != NULL)
				m[k++] = pkts[done + i]->priv;
		mbuf_free_bulk(m, k);
		done += chunk;
	}
}

/* The state snic_dpdk_port_watch last saw: no driver call (and so no
 * syscall, e.g. af_packet's ioctl) on the firmware's path. */
int snic_dpdk_link_up(void *hal, uint16_t port)
{
	struct snic_dpdk_nic *nic = hal;

	if (port >= nic->nb_ports)
		return 0;
	return nic->port[port].started && nic->port[port].link_up;
}
