/* SPDX-License-Identifier: MIT */
/*
 * qemu-virt board: one NIC as a bare-metal aarch64 image.  This file only
 * composes: host-memory window and clock from hal/aarch64, the port from
 * hal/virtio, the RDMA engine from the firmware core.  The launcher
 * (tools/snic-qemu) writes the configuration into the control page of the
 * BAR file before QEMU starts and asks for a clean stop through the same
 * page (platform.h).
 *
 * With a host agent (config seg_area_size, tools/snic-qemu starts one),
 * the agent alone opens contexts and says when they die, through the
 * mailbox in the control page (platform.h; the agent's file alone maps
 * it), looked at every loop pass: the firmware then ignores
 * SNIC_CTX_ORPHAN (board_reaps) and a context's pages are its segment.
 *
 * The loop polls the NIC; when idle for a while it naps in WFI on a short
 * timer (50 us, 500 us once idle for 5 ms), so an idle guest does not burn
 * a host core; nothing can wake it sooner, since the host's doorbells are
 * plain stores to the BAR.  It checks the control page for a stop request
 * every millisecond.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gicv2.h"
#include "gtimer.h"
#include "hostwin.h"
#include "mmu.h"
#include "netaddr.h"
#include "platform.h"
#include "snic/fw.h"
#include "snic/hostif.h"
#include "virtio_net.h"

_Static_assert(SNIC_BAR_SIZE <= QV_CTL_OFF, "BAR overlaps the control page");
_Static_assert(QV_CTL_OFF + 4096 <= QV_BAR_FILE_SIZE, "control page");

#define QV_ETH_MTU_DEFAULT 4200u
#define QV_SPIN_PASSES     2000u         /* idle passes before sleeping   */
#define QV_NAP_SHORT_NS    50000ull      /* WFI naps while recently busy  */
#define QV_NAP_LONG_NS     500000ull     /* ... and after QV_NAP_LONG_AFTER */
#define QV_NAP_LONG_AFTER  5000000ull
#define QV_HOUSEKEEP_NS    1000000ull    /* stop-request check            */

struct qv_nic {
	struct snic_hostwin win;        /* host-memory window (DMA)         */
	struct snic_vnet vnet;          /* the port                         */
	struct snic_hal hal;
	struct snic_nic_config cfg;
	struct snic_nic *fw;
	int log_level;
	int have_ip6;                   /* ipv6= given, else derived       */
	uint64_t mbox_served;           /* agent requests                   */
	char name[16];
	char host_mem[64];
};

static struct qv_nic qv;

static volatile uint8_t *ctl(void)
{
	return (volatile uint8_t *)(uintptr_t)(QV_BAR_BASE + QV_CTL_OFF);
}

/* ---------------------------------------------------------------------- */
/* HAL composition.                                                        */

static inline struct qv_nic *Q(void *h)
{
	return h;
}

static int qv_dma_read(void *h, uint64_t pa, void *dst, uint32_t len)
{
	return snic_hostwin_dma_read(&Q(h)->win, pa, dst, len);
}

static int qv_dma_load_acquire32(void *h, uint64_t pa, uint32_t *val)
{
	return snic_hostwin_dma_load_acquire32(&Q(h)->win, pa, val);
}

static int qv_dma_write(void *h, uint64_t pa, const void *src, uint32_t len)
{
	return snic_hostwin_dma_write(&Q(h)->win, pa, src, len);
}

static int qv_cmp_swap(void *h, uint64_t pa, uint64_t cmp, uint64_t swap,
		       uint64_t *old)
{
	return snic_hostwin_cmp_swap(&Q(h)->win, pa, cmp, swap, old);
}

static int qv_fetch_add(void *h, uint64_t pa, uint64_t add, uint64_t *old)
{
	return snic_hostwin_fetch_add(&Q(h)->win, pa, add, old);
}

static uint64_t qv_now_ns(void *h)
{
	(void)h;
	return gtimer_now_ns();
}

static uint16_t qv_rx_burst(void *h, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	return snic_vnet_rx_burst(&Q(h)->vnet, port, pkts, n);
}

static uint16_t qv_tx_burst(void *h, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n)
{
	return snic_vnet_tx_burst(&Q(h)->vnet, port, pkts, n);
}

static uint16_t qv_pkt_alloc(void *h, struct snic_pkt **pkts, uint16_t n)
{
	return snic_vnet_pkt_alloc(&Q(h)->vnet, pkts, n);
}

static void qv_pkt_free(void *h, struct snic_pkt **pkts, uint16_t n)
{
	snic_vnet_pkt_free(&Q(h)->vnet, pkts, n);
}

static int qv_link_up(void *h, uint16_t port)
{
	return snic_vnet_link_up(&Q(h)->vnet, port);
}

/* Host threads cannot be woken from inside the guest: the host driver
 * waits with 1 ms futex timeouts and finds the update then. */
static void qv_notify_host(void *h, const void *word)
{
	(void)h;
	(void)word;
}

static void qv_log(void *h, int level, const char *msg)
{
	static const char *const lv[] = { "error", "warning", "info", "debug" };

	if (level > Q(h)->log_level)
		return;
	printf("snic-fw: %s: %s: %s\n", Q(h)->name,
	       level >= 0 && level <= 3 ? lv[level] : "?", msg);
}

static const struct snic_hal_ops qv_hal_ops = {
	.dma_read = qv_dma_read,
	.dma_write = qv_dma_write,
	.dma_cmp_swap = qv_cmp_swap,
	.dma_fetch_add = qv_fetch_add,
	.now_ns = qv_now_ns,
	.rx_burst = qv_rx_burst,
	.tx_burst = qv_tx_burst,
	.pkt_alloc = qv_pkt_alloc,
	.pkt_free = qv_pkt_free,
	.link_up = qv_link_up,
	.notify_host = qv_notify_host,
	.log = qv_log,
	.dma_load_acquire32 = qv_dma_load_acquire32,
};

/* ---------------------------------------------------------------------- */
/* Configuration: "key=value" lines from the launcher.                     */

static _Noreturn void config_error(const char *what, const char *val)
{
	printf("snic-fw: configuration: %s%s%s\n", what, val ? ": " : "",
	       val ? val : "");
	exit(QV_EXIT_CONFIG);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s == '\0' || *s == '-')
		return -1;
	*out = strtoull(s, &end, 0);
	return *end == '\0' ? 0 : -1;
}

static void config_set(struct qv_nic *q, const char *k, const char *v)
{
	struct snic_nic_config *c = &q->cfg;
	uint64_t n;

	if (strcmp(k, "name") == 0) {
		if (strlen(v) == 0 || strlen(v) >= sizeof(q->name))
			config_error("bad name", v);
		strcpy(q->name, v);
	} else if (strcmp(k, "host_mem") == 0) {
		if (strlen(v) == 0 || strlen(v) >= sizeof(q->host_mem) ||
		    strchr(v, '/'))
			config_error("bad host_mem file name", v);
		strcpy(q->host_mem, v);
	} else if (strcmp(k, "host_mem_size") == 0) {
		if (parse_u64(v, &n) || n == 0 || n % MMU_BLOCK_SIZE ||
		    n > QV_HM_MAX)
			config_error("host_mem_size must be a multiple of 2 MiB "
				     "up to 2.8 GiB", v);
		c->host_mem_size = n;
	} else if (strcmp(k, "ipv4") == 0) {
		if (snic_parse_ipv4(v, &c->ipv4))
			config_error("bad ipv4", v);
	} else if (strcmp(k, "ipv6") == 0) {
		if (snic_parse_ipv6(v, c->ipv6))
			config_error("bad ipv6", v);
		q->have_ip6 = 1;
	} else if (strcmp(k, "mac") == 0) {
		if (snic_parse_mac(v, c->mac))
			config_error("bad mac", v);
	} else if (strcmp(k, "eth_mtu") == 0) {
		if (parse_u64(v, &n) || n < 576 ||
		    n > VNET_FRAME_MAX - 14)
			config_error("eth_mtu out of range", v);
		c->eth_mtu = (uint32_t)n;
	} else if (strcmp(k, "fw_pid") == 0) {
		if (parse_u64(v, &n) || n > UINT32_MAX)
			config_error("bad fw_pid", v);
		c->fw_pid = (uint32_t)n;
	} else if (strcmp(k, "seg_area_size") == 0) {
		if (parse_u64(v, &n) || n % MMU_BLOCK_SIZE || n > QV_HM_MAX)
			config_error("seg_area_size must be a multiple of 2 MiB",
				     v);
		c->seg_area_size = n;
	} else if (strcmp(k, "log_level") == 0) {
		if (parse_u64(v, &n) || n > 3)
			config_error("log_level must be 0..3", v);
		q->log_level = (int)n;
	}
	/* Unknown keys are ignored: a newer launcher may say more. */
}

static void config_read(struct qv_nic *q)
{
	char text[QV_CTL_CFG_LEN];
	char *line;
	struct snic_nic_config *c = &q->cfg;

	for (unsigned i = 0; i < QV_CTL_CFG_LEN; i++)
		text[i] = (char)ctl()[i];
	text[QV_CTL_CFG_LEN - 1] = '\0';
	memset(c, 0, sizeof(*c));
	c->eth_mtu = QV_ETH_MTU_DEFAULT;
	q->log_level = SNIC_LOG_INFO;
	for (line = strtok(text, "\n"); line;
	     line = strtok(NULL, "\n")) {
		char *eq = strchr(line, '=');

		if (eq == NULL)
			continue;
		*eq = '\0';
		config_set(q, line, eq + 1);
	}
	if (!q->name[0] || !q->host_mem[0] || !c->host_mem_size || !c->ipv4 ||
	    !(c->mac[0] | c->mac[1] | c->mac[2] | c->mac[3] | c->mac[4] |
	      c->mac[5]))
		config_error("the launcher must give name, host_mem, "
			     "host_mem_size, ipv4 and mac (is the control page "
			     "written? start the image with tools/snic-qemu)",
			     NULL);
	if (c->host_mem_size + c->seg_area_size > QV_HM_MAX)
		config_error("host_mem_size + seg_area_size over 2.8 GiB", NULL);
	/* an agent opens the contexts and sees their deaths: SNIC_CTX_ORPHAN
	 * in the BAR, which any host process could write, is ignored */
	c->board_reaps = c->seg_area_size != 0;
	if (!q->have_ip6) /* GID 1: as the emu board derives it */
		snic_ipv6_default(c->ipv4, c->ipv6);
	c->name = q->name;
	c->host_mem = q->host_mem;
	/* EUI-64 from the MAC (flip the U/L bit, insert ff:fe). */
	c->node_guid = (uint64_t)(c->mac[0] ^ 0x02) << 56 |
		       (uint64_t)c->mac[1] << 48 | (uint64_t)c->mac[2] << 40 |
		       0xfffeull << 24 | (uint64_t)c->mac[3] << 16 |
		       (uint64_t)c->mac[4] << 8 | c->mac[5];
}

/* ---------------------------------------------------------------------- */

static void port_error(const char *msg)
{
	printf("snic-fw: %s\n", msg);
}

static void ctl_state(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		ctl()[QV_CTL_STATE_OFF + i] = (uint8_t)s[i];
	ctl()[QV_CTL_STATE_OFF + i] = 0;
}

static int stop_requested(void)
{
	return memcmp((const void *)(uintptr_t)(QV_BAR_BASE + QV_CTL_OFF +
						 QV_CTL_STOP_OFF),
		      "STOP", 4) == 0;
}

/* ---------------------------------------------------------------------- */
/* The agent's mailbox (platform.h).                                        */

static volatile struct qv_mbox *mbox(void)
{
	return (volatile struct qv_mbox *)(uintptr_t)(QV_BAR_BASE + QV_CTL_OFF +
						      QV_CTL_MBOX_OFF);
}

/* One load when there is nothing to do (every loop pass: a grant or a
 * death waits for no idle moment). */
static void mbox_serve(struct qv_nic *q)
{
	volatile struct qv_mbox *m = mbox();
	uint32_t req = __atomic_load_n(&m->req, __ATOMIC_ACQUIRE);
	int32_t res = -1;

	if (req == m->done)
		return;
	if (!q->cfg.seg_area_size) {
		res = -1;       /* no agent configured: nothing to grant */
	} else if (m->op == QV_MBOX_GRANT) {
		res = snic_nic_ctx_grant(q->fw, m->slot, m->pid, m->first_page,
					 m->npages);
	} else if (m->op == QV_MBOX_DEAD && m->slot < SNIC_MAX_CTX) {
		snic_nic_ctx_dead(q->fw, m->slot);
		res = 0;
	}
	q->mbox_served++;
	m->result = res;
	__atomic_store_n(&m->done, req, __ATOMIC_RELEASE);
}

static void print_counters(const struct qv_nic *q)
{
	unsigned n = snic_nic_counter_count();
	const struct vnet_stats *s = &q->vnet.st;

	printf("%s counters (non-zero):\n", q->name);
	for (unsigned k = 0; k < n; k++) {
		uint64_t v = snic_nic_counter(q->fw, k);

		if (v != 0)
			printf("  %-32s %" PRIu64 "\n", snic_nic_counter_name(k),
			       v);
	}
#define VSTAT(f) do { if (s->f) printf("  %-32s %" PRIu64 "\n", \
				       "virtio_" #f, s->f); } while (0)
	VSTAT(rx_frames);
	VSTAT(tx_frames);
	VSTAT(rx_bad_len);
	VSTAT(rx_refill_short);
	VSTAT(tx_ring_full);
	VSTAT(notifies);
#undef VSTAT
	if (q->mbox_served)
		printf("  %-32s %" PRIu64 "\n", "agent_requests", q->mbox_served);
}

static void run(struct qv_nic *q)
{
	uint64_t next_hk = 0, idle_since = 0;
	unsigned idle = 0;

	for (;;) {
		unsigned work = snic_nic_poll(q->fw);
		uint64_t now;

		mbox_serve(q);
		if (work != 0) {
			idle = 0;
			continue;
		}
		now = gtimer_now_ns();
		if (now >= next_hk) {
			if (stop_requested())
				return;
			next_hk = now + QV_HOUSEKEEP_NS;
		}
		if (idle++ == 0)
			idle_since = now;
		if (idle >= QV_SPIN_PASSES)
			gtimer_idle_wait(now - idle_since < QV_NAP_LONG_AFTER ?
					 QV_NAP_SHORT_NS : QV_NAP_LONG_NS);
	}
}

#ifdef QV_FAULT_TEST
/* The fault image (build/qemu-virt/snic-fw-fault.elf): a read of an
 * address nothing maps must end in the exception report. */
#define QV_FAULT_ADDR 0x00dead00ull
static void fault_test(void)
{
	printf("snic-fw: fault test: reading unmapped address 0x%llx\n",
	       (unsigned long long)QV_FAULT_ADDR);
	(void)*(volatile uint64_t *)(uintptr_t)QV_FAULT_ADDR;
	printf("snic-fw: fault test: the read did not fault\n");
}
#endif

int main(void)
{
	struct qv_nic *q = &qv;
	void *pool, *fw_mem;
	size_t fw_size = (snic_nic_size() + 63) & ~(size_t)63;
	uint64_t t_ready;

	printf("snic-fw: qemu-virt board, firmware core with newlib\n");
	gtimer_init();
	gicv2_init(QV_GICD_BASE, QV_GICC_BASE);
	gicv2_enable(GTIMER_VIRT_PPI);
#ifdef QV_FAULT_TEST
	fault_test();
#endif
	config_read(q);
	if (mmu_map(QV_HM_BASE, q->cfg.host_mem_size + q->cfg.seg_area_size,
		    MMU_NORMAL) != 0)
		config_error("host memory does not fit the address map", NULL);
	q->win.base = (uint8_t *)(uintptr_t)QV_HM_BASE;
	/* the DMA window: the shared file, then the contexts' segments */
	q->win.size = q->cfg.host_mem_size + q->cfg.seg_area_size;

	pool = memalign(4096, snic_vnet_pool_size());
	fw_mem = memalign(64, fw_size);
	if (pool == NULL || fw_mem == NULL)
		config_error("out of private memory", NULL);
	if (snic_vnet_init(&q->vnet, QV_VIRTIO_BASE, QV_VIRTIO_COUNT,
			   QV_VIRTIO_STRIDE, q->cfg.mac, pool, port_error) != 0)
		exit(QV_EXIT_CONFIG);

	memset(fw_mem, 0, fw_size);
	q->hal.ops = &qv_hal_ops;
	q->hal.ctx = q;
	q->fw = snic_nic_init(fw_mem, &q->cfg, &q->hal,
			      (void *)(uintptr_t)QV_BAR_BASE);
	if (q->fw == NULL)
		config_error("the firmware refused the configuration", NULL);
	t_ready = gtimer_now_ns();
	ctl_state("UP\n");
	printf("snic-fw: %s: MAC %02x:%02x:%02x:%02x:%02x:%02x IPv4 %u.%u.%u.%u "
	       "MTU %u host memory %s (%" PRIu64 " MiB at 0x%llx) pid %u\n",
	       q->name, q->cfg.mac[0], q->cfg.mac[1], q->cfg.mac[2],
	       q->cfg.mac[3], q->cfg.mac[4], q->cfg.mac[5],
	       q->cfg.ipv4 >> 24, (q->cfg.ipv4 >> 16) & 0xff,
	       (q->cfg.ipv4 >> 8) & 0xff, q->cfg.ipv4 & 0xff, q->cfg.eth_mtu,
	       q->host_mem, q->cfg.host_mem_size >> 20,
	       (unsigned long long)QV_HM_BASE, q->cfg.fw_pid);
	printf("snic-fw: ready %" PRIu64 ".%03" PRIu64 " ms after reset\n",
	       t_ready / 1000000, t_ready / 1000 % 1000);

	run(q);

	printf("snic-fw: %s: stop requested, stopping\n", q->name);
	snic_nic_fini(q->fw);
	print_counters(q);
	ctl_state("DOWN\n");
	return QV_EXIT_OK;
}
