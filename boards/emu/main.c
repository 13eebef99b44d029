/* SPDX-License-Identifier: MIT */
/*
 * snic-emu: the emu board.  A Linux process, and a DPDK application, that
 * serves one or more emulated RDMA NICs:
 *  - by default two NICs, snic0 and snic1, wired back to back through an
 *    in-process DPDK ring pair and sharing one host-memory file;
 *  - with --nic, one NIC per --nic on the DPDK port it names (a --vdev such
 *    as net_memif or net_af_packet, or a PCI device), the process being one
 *    host with its own host-memory file.
 * This file only composes: runtime files and clock from hal/posix, ports
 * from hal/dpdk, the RDMA engine from the firmware core; the command line
 * is in opts.c, checks of DPDK device arguments in vdev_check.c.  It holds
 * no protocol logic.
 *
 * One thread polls every NIC.  When they are all idle it backs off (spin,
 * then sched_yield, then futex sleeps on the BARs' kick words, see run())
 * so it does not starve the verbs programs on a small machine.  Every
 * ~10 ms it reclaims dead host contexts, watches the links (restarting a
 * port whose link stayed down, which is how a memif client reconnects to
 * a restarted server) and writes out the captures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_pause.h>

#include "broker.h"
#include "devview.h"
#include "users.h"
#include "emu.h"
#include "emu_fault.h"
#include "hal_dpdk.h"
#include "hal_posix.h"
#include "netaddr.h"
#include "netdev.h"
#include "pcap_file.h"
#include "segment.h"
#include "snic/fw.h"
#include "snic/hostif.h"

/* Idle back-off. */
#define SPIN_ITERS      4u           /* idle passes spun before yielding */
#define YIELD_NS        2000000ull      /* then sched_yield for 2 ms        */
#define SLEEP_NS        1000000ull      /* then futex sleeps of 1 ms        */
#define SLEEP_FALLBACK_NS 200000ull     /* without futex_waitv: 200 us      */
#define HOUSEKEEP_NS    10000000ull     /* dead contexts, links: 10 ms      */
#define PCAP_FLUSH_NS   100000000ull    /* captures written every 100 ms    */
#define LINK_POLL_NS    10000000ull     /* link wait at start-up: 10 ms     */
#define NETDEV_POLL_NS  20000ull        /* the kernel interfaces: 20 us,    */
#define NETDEV_QUIET_NS 320000ull       /* up to 320 us while they are quiet */

struct emu_nic {
	struct snic_posix_nic posix;    /* first: the hal ctx points here   */
	struct snic_dpdk_nic dpdk;
	struct snic_hal hal;
	struct snic_nic_config cfg;
	struct snic_nic *fw;
	void *fw_mem;
	const struct emu_nic_spec *spec;
	struct pcap_file *cap;
	struct emu_netdev netdev;       /* the kernel interface (netdev.h)  */
	uint16_t dpdk_port;             /* DPDK port id of NIC port 0       */
	int bar_open;
	int view_up;                    /* link state the device view shows */
	char dev_name[64];
};

static struct {
	struct emu_nic nic[EMU_MAX_NICS];
	unsigned nnics;
	struct emu_nic_spec pair[2];    /* the default pair's specs          */
	struct snic_hostmem hm;
	char host_mem[64];
	char run_dir[PATH_MAX];
	int hm_open;
	int eal_up;
	long users;                     /* --users (hal/posix/users.h)       */
} emu;

static volatile sig_atomic_t stop_signal;

/* ---------------------------------------------------------------------- */
/* HAL composition: the posix HAL for memory, clock, wake-ups and console,
 * the DPDK HAL for ports.                                                 */

static inline struct emu_nic *E(void *h)
{
	return h;
}

static int emu_dma_read(void *h, uint64_t pa, void *dst, uint32_t len)
{
	return snic_posix_dma_read(&E(h)->posix, pa, dst, len);
}

/* The copy and the payload's ICRC in one pass (hal.h). */
static int emu_dma_read_crc(void *h, uint64_t pa, void *dst, uint32_t len,
			    uint32_t *crc)
{
	const uint8_t *src = snic_posix_hm(&E(h)->posix, pa, len);

	if (src == NULL)
		return -1;
	*crc = snic_dma_copy_crc(*crc, dst, src, len);
	return 0;
}

/* The payload's placement and its ICRC's check in one pass (hal.h). */
static int emu_dma_write_crc(void *h, uint64_t pa, const void *src,
			     uint32_t len, uint32_t *crc)
{
	uint8_t *dst = snic_posix_hm(&E(h)->posix, pa, len);

	if (dst == NULL)
		return -1;
	*crc = snic_dma_copy_crc_in(*crc, dst, src, len);
	return 0;
}

static void emu_dma_prefetch(void *h, uint64_t pa, uint32_t len)
{
	snic_posix_dma_prefetch(&E(h)->posix, pa, len);
}

static int emu_dma_load_acquire32(void *h, uint64_t pa, uint32_t *val)
{
	return snic_posix_dma_load_acquire32(&E(h)->posix, pa, val);
}

static int emu_dma_write(void *h, uint64_t pa, const void *src, uint32_t len)
{
	return snic_posix_dma_write(&E(h)->posix, pa, src, len);
}

static int emu_dma_cmp_swap(void *h, uint64_t pa, uint64_t cmp, uint64_t swap,
			    uint64_t *old)
{
	return snic_posix_dma_cmp_swap(&E(h)->posix, pa, cmp, swap, old);
}

static int emu_dma_fetch_add(void *h, uint64_t pa, uint64_t add,
			     uint64_t *old)
{
	return snic_posix_dma_fetch_add(&E(h)->posix, pa, add, old);
}

static void emu_dma_prepare(void *h, uint64_t pa, uint64_t len)
{
	snic_posix_dma_prepare(&E(h)->posix, pa, len);
}

/* The time of the current loop pass: run() reads the clock once per pass
 * for every NIC it polls and for its own back-off (0 outside run()). */
static _Thread_local uint64_t pass_now; /* each core's loop its own */

/* Firmware cores per NIC (--cores): core 0 in run(), the others each in
 * a thread of its own serving that core of every NIC (core_loop), each
 * sending on a TX queue of its own where the port has one per core. */
static unsigned emu_cores = 1;

static uint64_t emu_now_ns(void *h)
{
	return pass_now ? pass_now : snic_posix_now_ns(&E(h)->posix);
}

static uint16_t emu_rx_burst(void *h, uint16_t port, struct snic_pkt **pkts,
			     uint16_t n)
{
	return snic_dpdk_rx_burst(&E(h)->dpdk, port, pkts, n);
}

static uint16_t emu_tx_burst(void *h, uint16_t port, struct snic_pkt **pkts,
			     uint16_t n)
{
	return snic_dpdk_tx_burst(&E(h)->dpdk, port, pkts, n);
}

static uint16_t emu_tx_queues(void *h)
{
	return snic_dpdk_tx_queues(&E(h)->dpdk);
}

/* Core q's thread (q >= 1): its own TX queue of the port. */
static uint16_t emu_tx_burst_queue(void *h, uint16_t port, uint16_t q,
				   struct snic_pkt **pkts, uint16_t n)
{
	return snic_dpdk_tx_burst_queue(&E(h)->dpdk, port, q, pkts, n);
}

static uint16_t emu_rx_queues(void *h)
{
	return snic_dpdk_rx_queues(&E(h)->dpdk);
}

/* Core q's thread (q >= 1): its own RX queue of the port. */
static uint16_t emu_rx_burst_queue(void *h, uint16_t port, uint16_t q,
				   struct snic_pkt **pkts, uint16_t n)
{
	return snic_dpdk_rx_burst_queue(&E(h)->dpdk, port, q, pkts, n);
}

static int emu_rx_ready(void *h, uint16_t port, uint16_t q)
{
	return snic_dpdk_rx_ready(&E(h)->dpdk, port, q);
}

static uint16_t emu_pkt_alloc(void *h, struct snic_pkt **pkts, uint16_t n)
{
	return snic_dpdk_pkt_alloc(&E(h)->dpdk, pkts, n);
}

static void emu_pkt_free(void *h, struct snic_pkt **pkts, uint16_t n)
{
	snic_dpdk_pkt_free(&E(h)->dpdk, pkts, n);
}

static int emu_link_up(void *h, uint16_t port)
{
	return snic_dpdk_link_up(&E(h)->dpdk, port);
}

/* Command answers notified in this thread's current pass (run()). */
static _Thread_local unsigned cmd_answers;

_Static_assert(SNIC_BAR_CTX_OFF % 4096 == 0 && SNIC_CTX_SLOT_SIZE % 4096 == 0,
	       "context slots start on a page");

static void emu_notify_host(void *h, const void *word)
{
	/* a slot (in the BAR, or a broker's memfd) starts on a page: the
	 * word at cmd_done's offset in a page is a command's answer */
	if (((uintptr_t)word & 4095) == offsetof(struct snic_ctx_slot, cmd_done))
		cmd_answers++;
	snic_posix_notify_host(&E(h)->posix, word);
}

static void emu_log(void *h, int level, const char *msg)
{
	snic_posix_log(&E(h)->posix, level, msg);
}

static void emu_netdev_rx(void *h, uint16_t port, const struct snic_pkt *p)
{
	(void)port;
	emu_netdev_write(&E(h)->netdev, p->data, p->len);
}

#define EMU_HAL_OPS                                                          \
	.dma_read = emu_dma_read,                                            \
	.dma_write = emu_dma_write,                                          \
	.dma_cmp_swap = emu_dma_cmp_swap,                                    \
	.dma_fetch_add = emu_dma_fetch_add,                                  \
	.now_ns = emu_now_ns,                                                \
	.rx_burst = emu_rx_burst,                                            \
	.tx_burst = emu_tx_burst,                                            \
	.tx_queues = emu_tx_queues,                                          \
	.tx_burst_queue = emu_tx_burst_queue,                                \
	.rx_queues = emu_rx_queues,                                          \
	.rx_burst_queue = emu_rx_burst_queue,                                \
	.rx_ready = emu_rx_ready,                                            \
	.pkt_alloc = emu_pkt_alloc,                                          \
	.pkt_free = emu_pkt_free,                                            \
	.link_up = emu_link_up,                                              \
	.notify_host = emu_notify_host,                                      \
	.log = emu_log,                                                      \
	.dma_load_acquire32 = emu_dma_load_acquire32,                        \
	.dma_prepare = emu_dma_prepare,                                      \
	.dma_read_crc = emu_dma_read_crc,                                    \
	.dma_write_crc = emu_dma_write_crc,                                  \
	.dma_prefetch = emu_dma_prefetch

/* A NIC without a kernel interface drops what is not RoCE, counted. */
static const struct snic_hal_ops emu_hal_ops = { EMU_HAL_OPS };
static const struct snic_hal_ops emu_hal_ops_netdev = {
	EMU_HAL_OPS,
	.netdev_rx = emu_netdev_rx,
};

/* ---------------------------------------------------------------------- */
/* Configuration.                                                          */

/* The default pair: snicN at 198.18.0.N+1, MAC 02:00:c6:12:00:0N+1. */
static void pair_specs(int no_netdev)
{
	for (unsigned i = 0; i < 2; i++) {
		struct emu_nic_spec *s = &emu.pair[i];

		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "snic%u", i);
		s->netdev = no_netdev ? EMU_NETDEV_OFF : EMU_NETDEV_AUTO;
		s->ipv4 = 0xc6120000u | (i + 1);
		snic_ipv6_default(s->ipv4, s->ipv6);
		s->mac[0] = 0x02;
		for (int k = 0; k < 4; k++)
			s->mac[2 + k] = (uint8_t)(s->ipv4 >> (24 - 8 * k));
		s->mtu = EMU_ETH_MTU;
	}
}

static void nic_config(struct emu_nic *e, const struct emu_nic_spec *s,
		       uint64_t hm_size)
{
	struct snic_nic_config *c = &e->cfg;
	const uint8_t *m = s->mac;

	e->spec = s;
	memset(c, 0, sizeof(*c));
	c->name = s->name;
	c->host_mem = emu.host_mem;
	c->host_mem_size = hm_size;
	memcpy(c->mac, s->mac, 6);
	c->ipv4 = s->ipv4;
	memcpy(c->ipv6, s->ipv6, 16);
	c->eth_mtu = s->mtu;    /* 0 until the port is known (setup_port) */
	c->ipv4_plen = EMU_IPV4_PREFIX;
	c->nroutes = (uint8_t)s->nroutes;
	memcpy(c->routes, s->routes, sizeof(c->routes));
	/* EUI-64 from the MAC (flip the U/L bit, insert ff:fe). */
	c->node_guid = (uint64_t)(m[0] ^ 0x02) << 56 | (uint64_t)m[1] << 48 |
		       (uint64_t)m[2] << 40 | 0xfffeull << 24 |
		       (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
	c->fw_pid = (uint32_t)getpid();
	c->board_reaps = 1; /* housekeeping() below */
	c->board_maps_dm = 1; /* the broker (broker.c dm_map, dm_cut) */
	/* the BAR file readable by others: no context lives in it */
	c->broker_only = emu.users != SNIC_USERS_NONE;
	/* one segment per process for up to every context slot
	 * (broker.c): address space only, pages as they are touched */
	c->seg_area_size = SNIC_MAX_CTX * hm_size;
}

/* ---------------------------------------------------------------------- */
/* Set-up and tear-down.                                                   */

/* Undo whatever set-up reached; safe to call at any point.  Traffic stops
 * first (firmware down), then the ports (a memif peer sees a clean
 * disconnect with nothing in flight), then EAL and the runtime files. */
static void cores_stop(void);

static void shutdown_all(void)
{
	broker_fini(); /* its contexts end while the firmware still runs */
	cores_stop();  /* then the other cores' loops (core 0's has ended) */
	emu_fault_fini(); /* held frames back to the pools, totals printed */
	for (unsigned i = 0; i < emu.nnics; i++) {
		if (emu.nic[i].fw != NULL)
			snic_nic_fini(emu.nic[i].fw);
		emu_netdev_close(&emu.nic[i].netdev);
	}
	if (emu.eal_up) {
		for (unsigned i = 0; i < emu.nnics; i++)
			snic_dpdk_nic_fini(&emu.nic[i].dpdk);
	}
	for (unsigned i = 0; i < emu.nnics; i++) {
		pcap_file_close(emu.nic[i].cap);
		emu.nic[i].cap = NULL;
	}
	if (emu.eal_up) {
		snic_dpdk_eal_fini();
		emu.eal_up = 0;
	}
	for (unsigned i = 0; i < emu.nnics; i++) {
		if (emu.nic[i].bar_open)
			snic_posix_nic_close(&emu.nic[i].posix, 1);
		emu.nic[i].bar_open = 0;
	}
	devview_remove();
	if (emu.hm_open)
		snic_hostmem_destroy(&emu.hm, 1);
	emu.hm_open = 0;
}

static void die(void)
{
	shutdown_all();
	exit(1);
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;      /* no SA_RESTART: sleeps end early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

static struct rte_mempool *nic_pool(const struct emu_nic *e)
{
	char pool_name[32];
	struct rte_mempool *mp;

	snprintf(pool_name, sizeof(pool_name), "%s_pkts", e->cfg.name);
	mp = snic_dpdk_pool_create(pool_name, SNIC_DPDK_POOL_MBUFS);
	if (mp == NULL)
		die();
	return mp;
}

/* "net_memif0" or a port number -> DPDK port id; -1 with a message. */
static int find_port(const struct emu_nic *e, uint16_t *id)
{
	const char *name = e->spec->port;
	char list[512] = "", pname[RTE_ETH_NAME_MAX_LEN];
	size_t off = 0;
	uint16_t p;

	if (rte_eth_dev_get_port_by_name(name, id) == 0)
		return 0;
	RTE_ETH_FOREACH_DEV(p) {
		if (rte_eth_dev_get_name_by_port(p, pname) == 0 &&
		    off < sizeof(list))
			off += (size_t)snprintf(list + off, sizeof(list) - off,
						"%s%s", off ? ", " : "", pname);
	}
	fprintf(stderr, "snic-emu: %s: no DPDK port named '%s' (ports: %s); "
		"give it to EAL after '--', e.g. --vdev=%s,... (did DPDK "
		"reject that device? see its messages above)\n", e->cfg.name,
		name, off ? list : "none", name);
	return -1;
}

/* MTU: as given, else 4200 or the driver's maximum if lower. */
static int choose_mtu(struct emu_nic *e, uint16_t port_id)
{
	uint32_t max = snic_dpdk_port_max_mtu(port_id);

	if (e->cfg.eth_mtu == 0)
		e->cfg.eth_mtu = max < EMU_ETH_MTU ? max : EMU_ETH_MTU;
	if (e->cfg.eth_mtu > max) {
		fprintf(stderr, "snic-emu: %s: mtu=%u is more than port %s "
			"takes (%u; for memif raise bsize=, for af_packet "
			"framesz=)\n", e->cfg.name, e->cfg.eth_mtu,
			e->spec->port, max);
		return -1;
	}
	return 0;
}

/* RX queues per port of the default pair: one per core, the port
 * steering by destination QPN, where the firmware can use them (a power
 * of two of cores, few enough for the ring pair's queues); else 1, and
 * core 0 steers in software.  --fault keeps a state per queue. */
static unsigned emu_rxq(void)
{
	if (emu_cores < 2 || (emu_cores & (emu_cores - 1)) != 0 ||
	    emu_cores > SNIC_DPDK_MAX_RXQ ||
	    emu_cores * emu_cores > SNIC_DPDK_MAX_TXQ)
		return 1;
	return emu_cores;
}

static void setup_port(struct emu_nic *e, uint16_t port_id, int start)
{
	uint16_t nic_port;
	int r;

	snic_dpdk_nic_init(&e->dpdk, nic_pool(e));
	e->dpdk.want_txq = (uint16_t)emu_cores;
	e->dpdk.want_rxq = (uint16_t)emu_rxq();
	if (choose_mtu(e, port_id) != 0)
		die();
	r = start ? snic_dpdk_port_add(&e->dpdk, port_id, e->cfg.eth_mtu,
				       &nic_port)
		  : snic_dpdk_port_setup(&e->dpdk, port_id, e->cfg.eth_mtu,
					 &nic_port);
	if (r != 0) {
		fprintf(stderr, "snic-emu: %s: port set-up failed\n",
			e->cfg.name);
		die();
	}
	e->dpdk_port = port_id;
	snprintf(e->dev_name, sizeof(e->dev_name), "%s",
		 e->dpdk.port[nic_port].name);
	emu_fault_attach(&e->dpdk, e->cfg.name); /* --fault */
}

static void setup_ports(int eal_argc, char **eal_argv)
{
	uint16_t port[2];

	if (emu.nnics == 2 && emu.nic[0].spec == &emu.pair[0]) {
		if (snic_dpdk_ring_pair("snic0", "snic1", &port[0], &port[1],
					emu_cores, emu_rxq()))
			die();
		for (unsigned i = 0; i < 2; i++)
			setup_port(&emu.nic[i], port[i], 1);
		return;
	}
	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, "snic-emu: DPDK found no ports (give them "
			"after '--': --vdev=... or -a PCI_ADDRESS)\n");
		die();
	}
	for (unsigned i = 0; i < emu.nnics; i++) {
		uint16_t id;

		if (find_port(&emu.nic[i], &id) != 0)
			die();
		/* Started by the link watch: a memif client whose server
		 * is not up yet fails dev_start and retries. */
		setup_port(&emu.nic[i], id, 0);
		snic_dpdk_port_set_restart(&emu.nic[i].dpdk, 0,
					   emu_vdev_restartable(eal_argc,
						eal_argv, emu.nic[i].spec->port));
	}
}

static void setup_captures(const char *pair_pcap)
{
	for (unsigned i = 0; i < emu.nnics; i++) {
		struct emu_nic *e = &emu.nic[i];
		const char *path = e->spec->pcap;

		/* On the pair, snic0's port sees every frame, both ways. */
		if (i == 0 && pair_pcap != NULL)
			path = pair_pcap;
		if (path == NULL)
			continue;
		e->cap = pcap_file_open(path);
		if (e->cap == NULL) {
			fprintf(stderr, "snic-emu: %s: cannot open capture file "
				"%s: %s\n", e->cfg.name, path, strerror(errno));
			die();
		}
		snic_dpdk_port_capture(&e->dpdk, 0, e->cap);
	}
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
}

/* Every port up within the timeout (0: do not wait), or exit 1. */
static void wait_links(unsigned timeout_s)
{
	uint64_t t0 = snic_posix_now_ns(NULL), now = t0;
	uint64_t limit = (uint64_t)timeout_s * 1000000000u;
	unsigned up;

	for (;;) {
		up = 0;
		for (unsigned i = 0; i < emu.nnics; i++)
			up += snic_dpdk_port_watch(&emu.nic[i].dpdk, now) != 0;
		if (up == emu.nnics || timeout_s == 0)
			return;
		if (stop_signal) {
			printf("snic-emu: %s while waiting for links\n",
			       strsignal(stop_signal));
			shutdown_all();
			exit(0);
		}
		if (now - t0 >= limit)
			break;
		sleep_ns(LINK_POLL_NS);
		now = snic_posix_now_ns(NULL);
	}
	for (unsigned i = 0; i < emu.nnics; i++) {
		const struct snic_dpdk_port *p = &emu.nic[i].dpdk.port[0];

		if (p->started && p->link_up)
			continue;
		fprintf(stderr, "snic-emu: %s: port %s did not come up within "
			"%u s (%s%s; is the peer running? --link-timeout "
			"changes the limit)\n", emu.nic[i].cfg.name, p->name,
			timeout_s, p->last_err ? "cannot start: " : "link down",
			p->last_err ? strerror(-p->last_err) : "");
	}
	die();
}

/* emu.h, enum emu_netdev_mode. */
static int want_netdev(const struct emu_nic_spec *s)
{
	static const char *const kernel_ports[] = {
		"net_af_packet", "net_tap", "net_pcap", "net_af_xdp",
	};

	if (s->netdev != EMU_NETDEV_AUTO)
		return s->netdev == EMU_NETDEV_ON;
	for (size_t i = 0; i < sizeof(kernel_ports) / sizeof(kernel_ports[0]); i++)
		if (strncmp(s->port, kernel_ports[i], strlen(kernel_ports[i])) == 0)
			return 0;
	return 1;
}

static pthread_t core_thread[EMU_MAX_CORES];
static unsigned core_threads;
static atomic_int core_stop;

static void setup_nic_fw(struct emu_nic *e)
{
	size_t size = (snic_nic_size_cores(emu_cores) + 63) & ~(size_t)63;

	e->fw_mem = aligned_alloc(64, size);
	if (e->fw_mem == NULL) {
		fprintf(stderr, "snic-emu: %s: cannot allocate %zu bytes of "
			"NIC state\n", e->cfg.name, size);
		die();
	}
	memset(e->fw_mem, 0, size);
	e->netdev.fd = -1;
	if (want_netdev(e->spec))
		emu_netdev_open(&e->netdev, e->cfg.name, e->cfg.mac,
				e->cfg.ipv4, e->cfg.eth_mtu);
	e->hal.ops = e->netdev.fd >= 0 ? &emu_hal_ops_netdev : &emu_hal_ops;
	e->hal.ctx = e;
	e->fw = snic_nic_init_cores(e->fw_mem, &e->cfg, &e->hal, e->posix.bar,
				    emu_cores);
	if (e->fw == NULL) {
		fprintf(stderr, "snic-emu: %s: firmware refused the "
			"configuration (MTU %u too small for RoCE?)\n",
			e->cfg.name, e->cfg.eth_mtu);
		die();
	}
}

static void print_nic(const struct emu_nic *e)
{
	const struct snic_nic_config *c = &e->cfg;
	char ip[16], ip6[INET6_ADDRSTRLEN];

	snprintf(ip, sizeof(ip), "%u.%u.%u.%u", c->ipv4 >> 24,
		 (c->ipv4 >> 16) & 0xff, (c->ipv4 >> 8) & 0xff, c->ipv4 & 0xff);
	if (!inet_ntop(AF_INET6, c->ipv6, ip6, sizeof(ip6)))
		strcpy(ip6, "?");
	printf("%s: MAC %02x:%02x:%02x:%02x:%02x:%02x IPv4 %s GID ::ffff:%s "
	       "IPv6 %s (GID 1) port %u (%s) MTU %u%s%s BAR %s%s%s\n", c->name,
	       c->mac[0], c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5],
	       ip, ip, ip6,
	       e->dpdk_port, e->dev_name, c->eth_mtu,
	       e->netdev.fd >= 0 ? " netdev " : "",
	       e->netdev.fd >= 0 ? e->netdev.name : "", e->posix.bar_path,
	       e->cap ? " capture " : "", e->cap ? (e->spec->pcap ?
	       e->spec->pcap : "on") : "");
}

static void print_port_counters(const struct snic_dpdk_port *p)
{
	if (p->rx_dropped != 0)
		printf("  %-32s %" PRIu64 "\n", "hal_rx_dropped_unusable_mbuf",
		       p->rx_dropped);
	if (p->link_downs != 0)
		printf("  %-32s %" PRIu64 "\n", "hal_link_downs", p->link_downs);
	if (p->restarts != 0)
		printf("  %-32s %" PRIu64 "\n", "hal_port_restarts",
		       p->restarts);
	/* with a TX queue per core: what each core sent itself */
	for (uint16_t q = 0; p->nb_txq > 1 && q < p->nb_txq; q++) {
		char name[40];

		snprintf(name, sizeof(name), "hal_tx_queue%u_frames", q);
		printf("  %-32s %" PRIu64 "\n", name, p->tx_frames_q[q]);
	}
	/* with an RX queue per core: what each core took itself */
	for (uint16_t q = 0; p->nb_rxq > 1 && q < p->nb_rxq; q++) {
		char name[40];

		snprintf(name, sizeof(name), "hal_rx_queue%u_frames", q);
		printf("  %-32s %" PRIu64 "\n", name, p->rx_frames_q[q]);
	}
}

static void print_counters(void)
{
	unsigned n = snic_nic_counter_count();

	for (unsigned i = 0; i < emu.nnics; i++) {
		struct emu_nic *e = &emu.nic[i];

		if (e->fw == NULL)
			continue;
		printf("%s counters (non-zero):\n", e->cfg.name);
		for (unsigned k = 0; k < n; k++) {
			uint64_t v = snic_nic_counter(e->fw, k);

			if (v != 0)
				printf("  %-32s %" PRIu64 "\n",
				       snic_nic_counter_name(k), v);
		}
		for (uint16_t p = 0; p < SNIC_DPDK_MAX_PORTS; p++)
			print_port_counters(&e->dpdk.port[p]);
		if (e->netdev.write_errors != 0)
			printf("  %-32s %" PRIu64 "\n", "netdev_write_errors",
			       e->netdev.write_errors);
	}
}

/* A -DSNIC_TRACE build: every NIC's trace events to $SNIC_TRACE_FILE as
 * "NIC NS POINT ARG" lines (tools/bench-latency.sh reads them). */
static void write_trace(void)
{
	const char *path = getenv("SNIC_TRACE_FILE");
	static struct snic_trace_ev ev[1u << 16];
	FILE *f;

	if (path == NULL || *path == '\0')
		return;
	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "snic-emu: cannot write %s: %s\n", path,
			strerror(errno));
		return;
	}
	for (unsigned i = 0; i < emu.nnics; i++) {
		size_t n = emu.nic[i].fw
			   ? snic_nic_trace_read(emu.nic[i].fw, ev, 1u << 16) : 0;

		for (size_t k = 0; k < n; k++)
			fprintf(f, "%u %" PRIu64 " %u %u\n", i, ev[k].ns,
				ev[k].point, ev[k].arg);
	}
	fclose(f);
}

/* ---------------------------------------------------------------------- */
/* The loop.                                                               */

static struct snic_bar_hdr *bar_hdr(struct emu_nic *e)
{
	return (struct snic_bar_hdr *)((uint8_t *)e->posix.bar +
				       SNIC_BAR_HDR_OFF);
}

static struct snic_ctx_slot *bar_slot(struct emu_nic *e, unsigned i)
{
	return (struct snic_ctx_slot *)((uint8_t *)e->posix.bar +
					SNIC_BAR_CTX_OFF +
					(size_t)i * SNIC_CTX_SLOT_SIZE);
}

/* The device view UCX and MPI libraries look for (devview.h). */
static void view_create(void)
{
	struct devview_nic v[EMU_MAX_NICS];

	for (unsigned i = 0; i < emu.nnics; i++) {
		v[i].name = emu.nic[i].cfg.name;
		v[i].ipv4 = emu.nic[i].cfg.ipv4;
		memcpy(v[i].ipv6, emu.nic[i].cfg.ipv6, 16);
		v[i].node_guid = emu.nic[i].cfg.node_guid;
		v[i].eth_mtu = emu.nic[i].cfg.eth_mtu;
		v[i].netdev = emu.nic[i].netdev.fd >= 0
			      ? emu.nic[i].netdev.name : NULL;
		emu.nic[i].view_up = 1;
	}
	devview_create(emu.run_dir, v, emu.nnics);
}

static void view_link(struct emu_nic *e)
{
	int up = snic_dpdk_link_up(&e->dpdk, 0) != 0;

	if (up != e->view_up) {
		e->view_up = up;
		devview_link(emu.run_dir, e->cfg.name, up);
	}
}

/* Every ~10 ms: reclaim the contexts of processes that are gone (they may
 * have died without closing) and watch the links.  The heartbeat is the
 * firmware's own. */
static void housekeeping(uint64_t now)
{
	static unsigned long truncated;
	unsigned long t = snic_posix_files_restore();

	if (t != truncated) {   /* hal/posix/file_guard.c */
		fprintf(stderr, "snic-emu: a BAR or host-memory file was "
			"truncated by another process: grown back (%lu in "
			"all)\n", t);
		truncated = t;
		for (unsigned i = 0; i < emu.nnics; i++)
			snic_nic_bar_lost(emu.nic[i].fw);
	}
	for (unsigned i = 0; i < emu.nnics; i++) {
		struct emu_nic *e = &emu.nic[i];

		snic_dpdk_port_watch(&e->dpdk, now);
		view_link(e);
		if (i == 0)
			broker_poll();

		for (unsigned s = 0; s < SNIC_MAX_CTX; s++) {
			struct snic_ctx_slot *slot = bar_slot(e, s);
			uint32_t pid;

			if (atomic_load_explicit(&slot->state,
						 memory_order_acquire) ==
			    SNIC_CTX_FREE || broker_owns(i, s))
				continue; /* the broker's end with its socket */
			/* an open context: the pid the firmware took at
			 * CTX_OPEN (the BAR's may have been rewritten by
			 * another process); a slot claimed, not yet open:
			 * the BAR's */
			pid = snic_nic_ctx_pid(e->fw, s);
			if (pid == 0)
				pid = atomic_load_explicit(&slot->owner_pid,
							   memory_order_relaxed);
			if (pid != 0 && !snic_posix_pid_alive(pid))
				snic_nic_ctx_dead(e->fw, s);
		}
	}
}

static void flush_captures(void)
{
	for (unsigned i = 0; i < emu.nnics; i++)
		if (emu.nic[i].cap != NULL)
			pcap_file_flush(emu.nic[i].cap);
}

/* The kernel interfaces every NETDEV_POLL_NS, not every pass: a read()
 * costs more than a pass of an idle NIC.  While they send nothing the
 * period doubles up to NETDEV_QUIET_NS: two reads every 20 us were ~4 %
 * of the NIC thread during a 64-B ib_write_bw (perf: read, tun_chr_read
 * and the syscall path); a frame brings it back to NETDEV_POLL_NS, so
 * only the first frame after a quiet spell waits longer. */
static unsigned poll_all(uint64_t now)
{
	static uint64_t next_netdev, netdev_gap = NETDEV_POLL_NS;
	unsigned work = 0;

	if (now >= next_netdev) {
		for (unsigned i = 0; i < emu.nnics; i++)
			work += emu_netdev_poll(&emu.nic[i].netdev,
						emu.nic[i].fw);
		if (work)
			netdev_gap = NETDEV_POLL_NS;
		else if (netdev_gap < NETDEV_QUIET_NS)
			netdev_gap *= 2;
		next_netdev = now + netdev_gap;
	}
	for (unsigned i = 0; i < emu.nnics; i++)
		work += snic_nic_poll(emu.nic[i].fw);
	return work;
}

static void set_idle(uint32_t v)
{
	/* seq_cst: pairs with the host's doorbell store followed by its
	 * load of fw_idle (Dekker-style: one of the two sides sees the
	 * other's store), and with core k's (core0_kick). */
	for (unsigned i = 0; i < emu.nnics; i++)
		atomic_store(&bar_hdr(&emu.nic[i])->fw_idle, v);
	atomic_thread_fence(memory_order_seq_cst);
}

/* Core k after a pass that did work, which may have handed core 0 frames
 * or CQEs: a sleeping core 0 is kicked as a host's doorbell kicks it
 * (run(): it looks at its rings after flagging fw_idle).  After the
 * caller's full fence (cores_kick). */
static void core0_kick(void)
{
	for (unsigned i = 0; i < emu.nnics; i++) {
		struct snic_bar_hdr *h = bar_hdr(&emu.nic[i]);

		if (atomic_load_explicit(&h->fw_idle, memory_order_relaxed) &&
		    snic_nic_core_input(emu.nic[i].fw, 0)) {
			atomic_fetch_add(&h->kick, 1);
			snic_futex_wake(&h->kick);
		}
	}
}

/* Core k (>= 1) of every NIC: its QPs' transport, fed by core 0 through
 * rings (the firmware's nic/steer.c and nic/xcore.c).  Idle, it spins a
 * few passes, yields for YIELD_NS like core 0, then sleeps on a futex
 * word of its own until core 0 hands it work (cores_wake) or its next
 * timer is due (snic_nic_core_sleep_until).  The yields stay: sleeping
 * at once made every hand-off of a ping-pong on core 1 a futex wake-up
 * (83-157 us a 4 KiB round trip, from 26-43).  The naps of 50 us that
 * the sleep replaces cost an idle core 16 % of a CPU.  The handshake
 * (fw.h): doze = 1, full fence, look at the input once more; core 0:
 * its pass's pushes, full fence, read doze. */
#define CORE_SLEEP_MIN_NS 20000ull    /* a timer nearer than that: yield */
#define CORE_SLEEP_MAX_NS 10000000ull /* a sleep without a timer: 10 ms   */

static struct core_sync {
	_Alignas(64) _Atomic uint32_t doze;  /* core k asleep or going to be */
	_Atomic uint32_t seq;                /* its futex word               */
} core_sync[EMU_MAX_CORES];

static bool core_input(unsigned k)
{
	for (unsigned i = 0; i < emu.nnics; i++)
		if (snic_nic_core_input(emu.nic[i].fw, k))
			return true;
	return false;
}

/* Core k after an idle pass: the earliest time a timer of any NIC's core
 * k needs it (0: it has work now). */
static uint64_t core_sleep_until(unsigned k)
{
	uint64_t until = UINT64_MAX;

	for (unsigned i = 0; i < emu.nnics; i++) {
		uint64_t u = snic_nic_core_sleep_until(
			snic_nic_core(emu.nic[i].fw, k));
		/* a frame --fault holds back on our queue: its delay, not
		 * our sleep's length, decides when the firmware sees it */
		uint64_t f = emu_fault_next_due(&emu.nic[i].dpdk, (uint16_t)k);

		if (u < until)
			until = u;
		if (f < until)
			until = f;
	}
	return until;
}

static void core_sleep(unsigned k, uint64_t now, uint64_t until)
{
	struct core_sync *cs = &core_sync[k];
	uint32_t seq = atomic_load(&cs->seq);
	uint64_t ns = until - now < CORE_SLEEP_MAX_NS ? until - now
						      : CORE_SLEEP_MAX_NS;
	void *word = &cs->seq;

	atomic_store(&cs->doze, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!core_input(k) &&
	    !atomic_load_explicit(&core_stop, memory_order_acquire))
		snic_futex_waitv(&word, &seq, 1, ns, ns);
	atomic_store_explicit(&cs->doze, 0, memory_order_relaxed);
}

/* Core 0's thread after its pass and housekeeping, core k's after a pass
 * that did work: wake each core k that sleeps with input waiting -
 * frames (in a ring from core 0, or on its RX queue, where the pair's
 * ports steer: core j's frames to the other NIC land there), messages,
 * or work a command gave it (the firmware's poke) - or every sleeping one
 * (`all`: the stop).
 * Not every core after every command: that cost each command round trip
 * 9-16 us (bench-cores).  After the caller's full fence (cores_wake,
 * cores_kick): the other side of the sleep handshake. */
static void cores_wake_fenced(bool all)
{
	for (unsigned k = 1; k < emu_cores; k++) {
		struct core_sync *cs = &core_sync[k];

		if (!atomic_load_explicit(&cs->doze, memory_order_relaxed) ||
		    (!all && !core_input(k)))
			continue;
		/* one waker: a core that has not run yet is not woken again */
		if (atomic_exchange(&cs->doze, 0)) {
			atomic_fetch_add(&cs->seq, 1);
			snic_futex_wake(&cs->seq);
		}
	}
}

static void cores_wake(bool all)
{
	atomic_thread_fence(memory_order_seq_cst);
	cores_wake_fenced(all);
}

/* Core k after a pass that did work: its frames may wait on another
 * core's RX queue of the other NIC (the pair steers), its CQEs and
 * frames for core 0 in their rings; one fence for both looks. */
static void cores_kick(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	core0_kick();
	cores_wake_fenced(false);
}

static void *core_loop(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	uint64_t yield_until = 0;
	unsigned idle = 0;
	char name[16];

	snprintf(name, sizeof(name), "snic-core%u", k);
	pthread_setname_np(pthread_self(), name);
	/* an lcore id of its own, so that the packet pools give this thread
	 * a cache (DPDK's are per lcore): without one every frame it
	 * allocates or frees goes through the pool's shared ring, and the
	 * ring hands out the buffer freed longest ago (out of the cache) */
	if (rte_thread_register() != 0)
		fprintf(stderr, "snic-emu: core %u: no DPDK lcore id (%s): its "
			"frame buffers come from the pools' shared rings\n", k,
			rte_strerror(rte_errno));
	while (!atomic_load_explicit(&core_stop, memory_order_acquire)) {
		unsigned work = 0;
		uint64_t now, until;

		for (unsigned i = 0; i < emu.nnics; i++)
			work += snic_nic_poll(snic_nic_core(emu.nic[i].fw, k));
		if (work) {
			cores_kick();
			idle = 0;
			continue;
		}
		now = snic_posix_now_ns(NULL);
		if (++idle < SPIN_ITERS) {
			rte_pause();
			continue;
		}
		if (idle == SPIN_ITERS)
			yield_until = now + YIELD_NS;
		if (now < yield_until ||
		    (until = core_sleep_until(k)) < now + CORE_SLEEP_MIN_NS)
			sched_yield();
		else
			core_sleep(k, now, until);
	}
	rte_thread_unregister(); /* none registered: a no-op */
	return NULL;
}

static void cores_start(void)
{
	for (unsigned k = 1; k < emu_cores; k++) {
		if (pthread_create(&core_thread[k], NULL, core_loop,
				   (void *)(uintptr_t)k) != 0) {
			fprintf(stderr, "snic-emu: cannot start core %u\n", k);
			die();
		}
		core_threads = k;
	}
}

static void cores_stop(void)
{
	atomic_store_explicit(&core_stop, 1, memory_order_release);
	cores_wake(true);
	for (unsigned k = 1; k <= core_threads; k++)
		pthread_join(core_thread[k], NULL);
	core_threads = 0;
}

/* Core 0's sleep from now: SLEEP_NS, or less when a frame --fault holds
 * back on a queue core 0 polls is due sooner (0: it is due). */
static uint64_t core0_sleep_ns(uint64_t now)
{
	uint64_t ns = SLEEP_NS;

	for (unsigned i = 0; i < emu.nnics; i++) {
		uint64_t due = emu_fault_next_due(&emu.nic[i].dpdk, 0);

		if (due <= now)
			return 0;
		if (due - now < ns)
			ns = due - now;
	}
	return ns;
}

/*
 * The sleep handshake with the host driver, which after ringing a doorbell
 * does: if (fw_idle) { kick++; FUTEX_WAKE(kick); }.
 *   1. fw_idle = 1 (seq_cst), on the pass before this one;
 *   2. read every kick word;
 *   3. poll every NIC once more: a doorbell rung before the host could see
 *      fw_idle is picked up here;
 *   4. sleep while every kick still holds the value read in 2: a host that
 *      rang after 3 saw fw_idle and bumped kick, so the sleep ends at once.
 */
static void run(void)
{
	void *kick[EMU_MAX_NICS];
	uint32_t expect[EMU_MAX_NICS];
	uint64_t now, next_hk, next_flush, yield_until = 0, nap;
	unsigned idle = 0;
	int sleeping = 0;

	for (unsigned i = 0; i < emu.nnics; i++)
		kick[i] = &bar_hdr(&emu.nic[i])->kick;
	now = snic_posix_now_ns(NULL);
	next_hk = now + HOUSEKEEP_NS;
	next_flush = now + PCAP_FLUSH_NS;

	while (!stop_signal) {
		if (sleeping) {
			for (unsigned i = 0; i < emu.nnics; i++)
				expect[i] = atomic_load(
					(_Atomic uint32_t *)kick[i]);
		}
		now = snic_posix_now_ns(NULL);
#ifndef SNIC_TRACE /* trace points read the clock at the point itself */
		pass_now = now;
#endif
		unsigned work;

		cmd_answers = 0;
		work = poll_all(now);

		if (now >= next_hk) {
			housekeeping(now);
			next_hk = now + HOUSEKEEP_NS;
			if (now >= next_flush) {
				flush_captures();
				next_flush = now + PCAP_FLUSH_NS;
			}
		}
		if (core_threads)
			cores_wake(false);
		if (work != 0) {
			if (sleeping)
				set_idle(0);
			sleeping = 0;
			idle = 0;
			/* A pass that only answered commands: let the host
			 * that waits for them have the CPU now, not after our
			 * idle passes (SPIN_ITERS, then yields).  Traced: ~3.4
			 * us of a command's round trip when the host shares our
			 * CPU (host-driver/core/command.c, CMD_SWITCH_NS); on a
			 * CPU of our own the yield comes straight back. */
			if (cmd_answers && work <= cmd_answers)
				sched_yield();
			continue;
		}
		if (!sleeping) {
			idle++;
			if (idle < SPIN_ITERS) {
				rte_pause();
			} else if (idle == SPIN_ITERS) {
				yield_until = now + YIELD_NS;
			} else if (now < yield_until) {
				sched_yield();
			} else {
				set_idle(1);
				sleeping = 1;
			}
			continue;
		}
		if ((nap = core0_sleep_ns(now)) == 0)
			continue; /* a held frame is due: poll for it */
		if (snic_futex_waitv(kick, expect, emu.nnics, nap,
				     nap < SLEEP_FALLBACK_NS ? nap
							     : SLEEP_FALLBACK_NS)) {
			/* Kicked: the host has work for us. */
			set_idle(0);
			sleeping = 0;
			idle = 0;
		}
	}
	pass_now = 0;
	set_idle(0);
}

/* The NICs, their BARs and the host memory, before any DPDK work (fail
 * fast when another emulator serves one of the NICs). */
static void setup_runtime_files(const struct emu_opts *o)
{
	const struct emu_nic_spec *specs = o->nnics ? o->nic : emu.pair;

	emu.nnics = o->nnics ? o->nnics : 2;
	if (o->host_mem != NULL)
		snprintf(emu.host_mem, sizeof(emu.host_mem), "%s", o->host_mem);
	else if (o->nnics == 0)
		snprintf(emu.host_mem, sizeof(emu.host_mem), "%s",
			 SNIC_HOSTMEM_DEFAULT);
	else
		snprintf(emu.host_mem, sizeof(emu.host_mem), "%s.mem",
			 specs[0].name);
	snic_posix_set_users(o->users);
	emu.users = o->users;
	if (snic_posix_run_dir(o->run_dir, emu.run_dir, sizeof(emu.run_dir)))
		exit(1);
	for (unsigned i = 0; i < emu.nnics; i++)
		nic_config(&emu.nic[i], &specs[i], o->host_mem_size);
	for (unsigned i = 0; i < emu.nnics; i++) {
		if (snic_posix_nic_open(&emu.nic[i].posix, emu.run_dir,
					emu.nic[i].cfg.name) != 0)
			die();
		emu.nic[i].bar_open = 1;
	}
	if (snic_hostmem_create(&emu.hm, emu.run_dir, emu.host_mem,
				o->host_mem_size) != 0)
		die();
	emu.hm_open = 1;
	if (snic_hostmem_add_area(&emu.hm, emu.nic[0].cfg.seg_area_size) != 0)
		die();
	for (unsigned i = 0; i < emu.nnics; i++)
		snic_posix_nic_set_hostmem(&emu.nic[i].posix, &emu.hm);
}

/* After the firmware is up: contexts through the broker (broker.h).  Our
 * memory and descriptors are then nobody else's to read through /proc
 * (not dumpable): the segments' memfds have no other name. */
static void start_broker(uint64_t seg_len, long users)
{
	struct broker_nic b[EMU_MAX_NICS];

	for (unsigned i = 0; i < emu.nnics; i++)
		b[i] = (struct broker_nic){ .name = emu.nic[i].cfg.name,
					    .fw = emu.nic[i].fw,
					    .bar = emu.nic[i].posix.bar,
					    .bar_fd = emu.nic[i].posix.bar_fd };
	if (broker_init(emu.run_dir, b, emu.nnics, &emu.hm, seg_len,
			users) != 0)
		die();
	prctl(PR_SET_DUMPABLE, 0);
}

int main(int argc, char **argv)
{
	struct emu_opts o;
	char prefix[32];
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* what we make is ours alone unless we say otherwise (users.h gives
	 * the modes, explicitly): an inherited umask 000 made the device
	 * view writable by everybody let in (--users) */
	umask(077);
	rc = emu_parse_opts(argc, argv, &o);
	if (rc != 0)
		return rc;
	install_signals();
	emu_cores = o.cores;
	pair_specs(o.no_netdev);
	setup_runtime_files(&o);
	if (emu_check_vdevs(o.eal_argc, o.eal_argv) != 0)
		die();

	/* One EAL file prefix per process: its first NIC's name. */
	snprintf(prefix, sizeof(prefix), "snic-%s", emu.nic[0].cfg.name);
	if (snic_dpdk_eal_init(argv[0], SNIC_DPDK_EAL_NO_PCI, prefix,
			       o.eal_argc, o.eal_argv) != 0)
		die();
	emu.eal_up = 1;
	setup_ports(o.eal_argc, o.eal_argv);
	setup_captures(o.pcap);
	wait_links(o.link_timeout_s);
	for (unsigned i = 0; i < emu.nnics; i++)
		setup_nic_fw(&emu.nic[i]);

	start_broker(o.host_mem_size, o.users);
	view_create();
	for (unsigned i = 0; i < emu.nnics; i++)
		print_nic(&emu.nic[i]);
	if (o.users != SNIC_USERS_NONE) {
		char who[96];

		printf("users: %s may use the NICs (run dir, BARs and broker "
		       "sockets shared; host memory and admin sockets not)\n",
		       snic_users_text(o.users, who, sizeof(who)));
	}
	if (emu_cores > 1)
		printf("firmware cores per NIC: %u (each QP on one core, by "
		       "its QPN)\n", emu_cores);
	for (unsigned i = 0; emu_cores > 1 && i < emu.nnics; i++) {
		unsigned q = snic_dpdk_tx_queues(&emu.nic[i].dpdk);
		unsigned r = snic_dpdk_rx_queues(&emu.nic[i].dpdk);

		printf("%s: %u TX queue%s, %s; %u RX queue%s, %s\n",
		       emu.nic[i].cfg.name, q, q > 1 ? "s" : "",
		       q >= emu_cores ? "one per core"
		       : "the other cores send through core 0",
		       r, r > 1 ? "s" : "", r == emu_cores
		       ? "one per core, the port steering by destination QPN"
		       : "core 0 steers by destination QPN");
	}
	printf("ready: run dir %s, host memory %s (%" PRIu64 " bytes)%s%s\n",
	       emu.run_dir, emu.hm.path, emu.hm.size,
	       o.pcap != NULL ? ", capture " : "", o.pcap != NULL ? o.pcap : "");

	cores_start();
	run();

	printf("snic-emu: %s, stopping\n", strsignal(stop_signal));
	write_trace();
	shutdown_all();
	print_counters();
	for (unsigned i = 0; i < emu.nnics; i++)
		free(emu.nic[i].fw_mem);
	return 0;
}
