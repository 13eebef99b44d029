/* SPDX-License-Identifier: MIT */
/*
 * snic-bluefield: the bluefield board.  The snic firmware as a Linux
 * process on a BlueField-2/3 DPU's Arm cores:
 *  - the port: the card's ConnectX function (p0) through DPDK's mlx5
 *    driver, optionally a representor (eal_args.c), found in sysfs
 *    (card.c);
 *  - the Arm cores: EAL pins the poll loop to the first core of -l
 *    (default 1..n-1, core 0 stays with Linux); hugepages as the DPU's
 *    Linux reserved them;
 *  - host memory and the host's BAR: NVIDIA DOCA (DMA, Device
 *    Emulation), behind hal/doca/doca.h.  This build has only the stubs,
 *    which refuse: Debian does not ship DOCA.
 * Before it touches DPDK it checks all three and, when anything is
 * missing, names every missing piece and exits 1.  It never falls back to
 * a pretend host memory.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "bluefield.h"
#include "doca.h"
#include "hal_dpdk.h"
#include "hal_posix.h"
#include "snic/fw.h"

#define BF_ETH_MTU       4200u
#define BF_LINK_WAIT_NS  30000000000ull  /* 30 s for the port to come up */
#define BF_WATCH_NS      10000000ull     /* link watch every 10 ms       */
#define BF_MISSING_MAX   3

struct bf_nic {
	struct snic_dpdk_nic dpdk;      /* first: the DPDK HAL's ctx       */
	struct snic_doca_host host;
	struct snic_doca_bar bar;
	struct snic_hal hal;
	struct snic_nic_config cfg;
	struct snic_nic *fw;
	void *fw_mem;
	char name[16];
};

static volatile sig_atomic_t stop_signal;

/* ---------------------------------------------------------------------- */
/* HAL composition: DOCA for host memory, DPDK for the port, the posix
 * clock.                                                                   */

static inline struct bf_nic *B(void *h)
{
	return h;
}

static int bf_dma_read(void *h, uint64_t pa, void *dst, uint32_t len)
{
	return snic_doca_dma_read(&B(h)->host, pa, dst, len);
}

static int bf_dma_write(void *h, uint64_t pa, const void *src, uint32_t len)
{
	return snic_doca_dma_write(&B(h)->host, pa, src, len);
}

static int bf_dma_cmp_swap(void *h, uint64_t pa, uint64_t cmp, uint64_t swap,
			   uint64_t *old)
{
	return snic_doca_dma_cmp_swap(&B(h)->host, pa, cmp, swap, old);
}

static int bf_dma_fetch_add(void *h, uint64_t pa, uint64_t add, uint64_t *old)
{
	return snic_doca_dma_fetch_add(&B(h)->host, pa, add, old);
}

/* The host polls its rings; waking it (MSI-X through Device Emulation)
 * comes with the DOCA BAR. */
static void bf_notify_host(void *h, const void *word)
{
	(void)h, (void)word;
}

static void bf_log(void *h, int level, const char *msg)
{
	fprintf(stderr, "%s: %s%s\n", B(h)->name,
		level <= SNIC_LOG_ERR ? "error: " :
		level == SNIC_LOG_WARN ? "warning: " : "", msg);
}

static const struct snic_hal_ops bf_hal_ops = {
	.dma_read = bf_dma_read,
	.dma_write = bf_dma_write,
	.dma_cmp_swap = bf_dma_cmp_swap,
	.dma_fetch_add = bf_dma_fetch_add,
	.now_ns = snic_posix_now_ns,
	.rx_burst = snic_dpdk_rx_burst,
	.tx_burst = snic_dpdk_tx_burst,
	.pkt_alloc = snic_dpdk_pkt_alloc,
	.pkt_free = snic_dpdk_pkt_free,
	.link_up = snic_dpdk_link_up,
	.notify_host = bf_notify_host,
	.log = bf_log,
};

/* ---------------------------------------------------------------------- */
/* What the card needs, checked before anything starts.                    */

struct bf_missing {
	unsigned n;
	char why[BF_MISSING_MAX][512];
};

static void check_card(struct bf_nic *b, const struct bf_config *c,
		       char *pci, size_t pcilen, struct bf_missing *m)
{
	const char *model = NULL;

	if (bf_card_find(c, pci, pcilen, &model, m->why[m->n],
			 sizeof(m->why[0])) != 0) {
		m->n++;
		snprintf(pci, pcilen, "%s", c->pci ? c->pci : "(no card)");
	} else {
		printf("%s: %s ConnectX function %s\n", c->name, model, pci);
	}
	if (snic_doca_host_open(&b->host, pci, m->why[m->n],
				sizeof(m->why[0])) != 0)
		m->n++;
	if (snic_doca_bar_open(&b->bar, pci, m->why[m->n],
			       sizeof(m->why[0])) != 0)
		m->n++;
}

/* ---------------------------------------------------------------------- */
/* Running on the card.                                                     */

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int setup_port(struct bf_nic *b, const struct bf_config *c,
		      uint16_t *nic_port)
{
	/* With a representor, mlx5 lists the PF first and the
	 * representor after it: the NIC serves the last port. */
	uint16_t n = rte_eth_dev_count_avail(), port_id;
	uint32_t max;
	struct rte_ether_addr mac;
	char pool[32];

	if (n == 0) {
		fprintf(stderr, "%s: DPDK's mlx5 driver opened no port\n",
			c->name);
		return -1;
	}
	port_id = (uint16_t)(n - 1);
	max = snic_dpdk_port_max_mtu(port_id);
	snprintf(pool, sizeof(pool), "%s_pkts", c->name);
	snic_dpdk_nic_init(&b->dpdk, snic_dpdk_pool_create(pool,
							   SNIC_DPDK_POOL_MBUFS));
	if (b->dpdk.pool == NULL || rte_eth_macaddr_get(port_id, &mac) != 0)
		return -1;
	memcpy(b->cfg.mac, mac.addr_bytes, 6);
	b->cfg.eth_mtu = max < BF_ETH_MTU ? max : BF_ETH_MTU;
	return snic_dpdk_port_add(&b->dpdk, port_id, b->cfg.eth_mtu, nic_port);
}

static int wait_link(struct bf_nic *b)
{
	uint64_t t0 = snic_posix_now_ns(NULL), now = t0;
	struct timespec ts = { 0, (long)BF_WATCH_NS };

	while (snic_dpdk_port_watch(&b->dpdk, now) == 0) {
		if (stop_signal || now - t0 > BF_LINK_WAIT_NS)
			return -1;
		nanosleep(&ts, NULL);
		now = snic_posix_now_ns(NULL);
	}
	return 0;
}

static int setup_fw(struct bf_nic *b, const struct bf_config *c)
{
	size_t size = (snic_nic_size() + 63) & ~(size_t)63;

	b->cfg.name = c->name;
	b->cfg.host_mem_size = b->host.size;
	b->cfg.ipv4 = c->ipv4;
	b->cfg.fw_pid = (uint32_t)getpid();
	for (int i = 0; i < 6; i++)
		b->cfg.node_guid = b->cfg.node_guid << 8 | b->cfg.mac[i];
	b->fw_mem = aligned_alloc(64, size);
	if (b->fw_mem == NULL)
		return -1;
	memset(b->fw_mem, 0, size);
	b->hal.ops = &bf_hal_ops;
	b->hal.ctx = b;
	b->fw = snic_nic_init(b->fw_mem, &b->cfg, &b->hal, b->bar.bar);
	return b->fw != NULL ? 0 : -1;
}

/* The run-to-completion loop on this (pinned) core. */
static void run(struct bf_nic *b)
{
	uint64_t next = 0, now;

	while (!stop_signal) {
		snic_nic_poll(b->fw);
		now = snic_posix_now_ns(NULL);
		if (now >= next) {
			snic_dpdk_port_watch(&b->dpdk, now);
			next = now + BF_WATCH_NS;
		}
	}
}

static int run_card(struct bf_nic *b, const struct bf_config *c,
		    const char *prog, const char *pci)
{
	char buf[1024], *eal[BF_MAX_EAL_ARGS];
	int n = bf_eal_args(c, prog, pci, eal, buf, sizeof(buf)), rc = 1;
	uint16_t nic_port;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (n < 0 || snic_dpdk_eal_init(prog, 0, NULL, n - 1, eal + 1) != 0)
		return 1;
	if (setup_port(b, c, &nic_port) != 0 || wait_link(b) != 0)
		fprintf(stderr, "%s: port %s did not come up\n", c->name, pci);
	else if (setup_fw(b, c) != 0)
		fprintf(stderr, "%s: the firmware refused the configuration\n",
			c->name);
	else {
		printf("ready: %s on %s\n", c->name, pci);
		run(b);
		snic_nic_fini(b->fw);
		rc = 0;
	}
	snic_dpdk_nic_fini(&b->dpdk);
	snic_dpdk_eal_fini();
	free(b->fw_mem);
	return rc;
}

int main(int argc, char **argv)
{
	static struct bf_nic bf;
	struct bf_config c;
	struct bf_missing m = { 0 };
	char pci[64];
	int rc = bf_parse_opts(argc, argv, &c);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(bf.name, sizeof(bf.name), "%s", c.name);
	if (c.print_eal) {
		char buf[1024], *eal[BF_MAX_EAL_ARGS];
		const char *model;
		char why[512];

		if (bf_card_find(&c, pci, sizeof(pci), &model, why, sizeof(why)))
			snprintf(pci, sizeof(pci), "%s", c.pci ? c.pci : "0000:03:00.0");
		for (int i = 0, n = bf_eal_args(&c, argv[0], pci, eal, buf,
						 sizeof(buf)); i < n; i++)
			printf("%s%s", i ? " " : "", eal[i]);
		printf("\n");
		return 0;
	}
	check_card(&bf, &c, pci, sizeof(pci), &m);
	if (m.n != 0) {
		fprintf(stderr, "snic-bluefield: cannot start %s: %u missing:\n",
			c.name, m.n);
		for (unsigned i = 0; i < m.n; i++)
			fprintf(stderr, "  - %s\n", m.why[i]);
		snic_doca_bar_close(&bf.bar);
		snic_doca_host_close(&bf.host);
		return 1;
	}
	rc = run_card(&bf, &c, argv[0], pci);
	snic_doca_bar_close(&bf.bar);
	snic_doca_host_close(&bf.host);
	return rc;
}
