/* SPDX-License-Identifier: MIT */
/*
 * snic-emu: the emu board.  A Linux process that serves two NICs, snic0 and
 * snic1, wired back to back through an in-process DPDK ring pair and
 * sharing one host-memory file.  This file only composes: runtime files
 * and clock from hal/posix, ports from hal/dpdk, the RDMA engine from the
 * firmware core.  It holds no protocol logic.
 *
 * One thread polls every NIC.  When they are all idle it backs off (spin,
 * then sched_yield, then futex sleeps on the BARs' kick words, see
 * idle_sleep) so it does not starve the verbs programs on a small machine.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_pause.h>

#include "hal_dpdk.h"
#include "hal_posix.h"
#include "pcap_file.h"
#include "snic/fw.h"
#include "snic/hostif.h"

#define EMU_NICS        2
/* IP MTU of the ports: a path-MTU-4096 RoCEv2 packet carries 4096 bytes of
 * payload behind IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4 + ICRC 4
 * bytes (IPv6: 20 more), so 4200 leaves room; frames are up to 4214 bytes
 * and fit SNIC_DPDK_FRAME_MAX. */
#define EMU_ETH_MTU     4200u

/* Idle back-off. */
#define SPIN_ITERS      4096u           /* idle passes spun before yielding */
#define YIELD_NS        2000000ull      /* then sched_yield for 2 ms        */
#define SLEEP_NS        1000000ull      /* then futex sleeps of 1 ms        */
#define SLEEP_FALLBACK_NS 200000ull     /* without futex_waitv: 200 us      */
#define HOUSEKEEP_NS    10000000ull     /* heartbeat + dead contexts: 10 ms */
#define PCAP_FLUSH_NS   100000000ull    /* capture written out every 100 ms */

struct emu_nic {
	struct snic_posix_nic posix;    /* first: the hal ctx points here   */
	struct snic_dpdk_nic dpdk;
	struct snic_hal hal;
	struct snic_nic_config cfg;
	struct snic_nic *fw;
	void *fw_mem;
	uint16_t dpdk_port;             /* DPDK port id of NIC port 0       */
	int bar_open;
	char dev_name[64];
};

static struct {
	struct emu_nic nic[EMU_NICS];
	struct snic_hostmem hm;
	struct pcap_file *cap;
	char run_dir[PATH_MAX];
	int hm_open;
	int eal_up;
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

static uint64_t emu_now_ns(void *h)
{
	return snic_posix_now_ns(&E(h)->posix);
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

static void emu_notify_host(void *h, const void *word)
{
	snic_posix_notify_host(&E(h)->posix, word);
}

static void emu_log(void *h, int level, const char *msg)
{
	snic_posix_log(&E(h)->posix, level, msg);
}

static const struct snic_hal_ops emu_hal_ops = {
	.dma_read = emu_dma_read,
	.dma_write = emu_dma_write,
	.dma_cmp_swap = emu_dma_cmp_swap,
	.dma_fetch_add = emu_dma_fetch_add,
	.now_ns = emu_now_ns,
	.rx_burst = emu_rx_burst,
	.tx_burst = emu_tx_burst,
	.pkt_alloc = emu_pkt_alloc,
	.pkt_free = emu_pkt_free,
	.link_up = emu_link_up,
	.notify_host = emu_notify_host,
	.log = emu_log,
};

/* ---------------------------------------------------------------------- */
/* Options.                                                                */

struct emu_opts {
	const char *pcap;
	const char *run_dir;
	uint64_t host_mem_size;
	int eal_argc;
	char **eal_argv;
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options] [-- DPDK EAL arguments]\n"
		"Serve two emulated RDMA NICs, snic0 and snic1, wired back to\n"
		"back, until SIGINT or SIGTERM.\n"
		"  --pcap FILE            capture every frame of the pair (snic0's\n"
		"                         port, both directions) to FILE\n"
		"  --run-dir DIR          runtime files (default $SNIC_RUN_DIR or\n"
		"                         " SNIC_RUN_DIR_DEFAULT ")\n"
		"  --host-mem-size BYTES  host-memory window (default 1G; K/M/G\n"
		"                         suffixes, multiple of 4096)\n"
		"  --help                 this text\n", prog);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end != '\0' || (shift != 0 && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_opts(int argc, char **argv, struct emu_opts *o)
{
	static const struct option longopts[] = {
		{ "pcap", required_argument, NULL, 'p' },
		{ "run-dir", required_argument, NULL, 'r' },
		{ "host-mem-size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->host_mem_size = SNIC_HOSTMEM_SIZE_DEFAULT;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->pcap = optarg;
			break;
		case 'r':
			o->run_dir = optarg;
			break;
		case 's':
			if (parse_size(optarg, &o->host_mem_size) != 0) {
				fprintf(stderr, "snic-emu: bad --host-mem-size "
					"'%s'\n", optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout, argv[0]);
			exit(0);
		default:
			usage(stderr, argv[0]);
			return -1;
		}
	}
	/* getopt stops after "--" (optind past it) or at a non-option. */
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
		fprintf(stderr, "snic-emu: unexpected argument '%s' (DPDK EAL "
			"arguments go after '--')\n", argv[optind]);
		return -1;
	}
	o->eal_argc = argc - optind;
	o->eal_argv = argv + optind;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Set-up and tear-down.                                                   */

static void nic_config(struct emu_nic *e, unsigned i, uint64_t hm_size)
{
	struct snic_nic_config *c = &e->cfg;
	static const char *const names[EMU_NICS] = { "snic0", "snic1" };

	memset(c, 0, sizeof(*c));
	c->name = names[i];
	c->host_mem = SNIC_HOSTMEM_DEFAULT;
	c->host_mem_size = hm_size;
	/* 02:00:c6:12:00:0N (locally administered), 198.18.0.N (RFC 2544
	 * benchmarking range). */
	c->mac[0] = 0x02;
	c->mac[1] = 0x00;
	c->mac[2] = 0xc6;
	c->mac[3] = 0x12;
	c->mac[4] = 0x00;
	c->mac[5] = (uint8_t)(i + 1);
	c->ipv4 = 0xc6120000u | (i + 1);
	c->eth_mtu = EMU_ETH_MTU;
	/* EUI-64 from the MAC (flip the U/L bit, insert ff:fe). */
	c->node_guid = (uint64_t)(c->mac[0] ^ 0x02) << 56 |
		       (uint64_t)c->mac[1] << 48 | (uint64_t)c->mac[2] << 40 |
		       0xfffeull << 24 | (uint64_t)c->mac[3] << 16 |
		       (uint64_t)c->mac[4] << 8 | c->mac[5];
	c->fw_pid = (uint32_t)getpid();
}

/* Undo whatever set-up reached; safe to call at any point. */
static void shutdown_all(void)
{
	for (unsigned i = 0; i < EMU_NICS; i++) {
		if (emu.nic[i].fw != NULL)
			snic_nic_fini(emu.nic[i].fw);
	}
	if (emu.eal_up) {
		for (unsigned i = 0; i < EMU_NICS; i++)
			snic_dpdk_nic_fini(&emu.nic[i].dpdk);
	}
	if (emu.cap != NULL) {
		pcap_file_close(emu.cap);
		emu.cap = NULL;
	}
	if (emu.eal_up) {
		snic_dpdk_eal_fini();
		emu.eal_up = 0;
	}
	for (unsigned i = 0; i < EMU_NICS; i++) {
		if (emu.nic[i].bar_open)
			snic_posix_nic_close(&emu.nic[i].posix, 1);
		emu.nic[i].bar_open = 0;
	}
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

static void setup_ports(void)
{
	uint16_t port[EMU_NICS], nic_port;
	char pool_name[32];

	if (snic_dpdk_ring_pair("snic0", "snic1", &port[0], &port[1]) != 0)
		die();
	for (unsigned i = 0; i < EMU_NICS; i++) {
		struct emu_nic *e = &emu.nic[i];
		struct rte_mempool *mp;

		snprintf(pool_name, sizeof(pool_name), "%s_pkts", e->cfg.name);
		mp = snic_dpdk_pool_create(pool_name, SNIC_DPDK_POOL_MBUFS);
		if (mp == NULL)
			die();
		snic_dpdk_nic_init(&e->dpdk, mp);
		if (snic_dpdk_port_add(&e->dpdk, port[i], e->cfg.eth_mtu,
				       &nic_port) != 0) {
			fprintf(stderr, "snic-emu: %s: port set-up failed\n",
				e->cfg.name);
			die();
		}
		e->dpdk_port = port[i];
		snprintf(e->dev_name, sizeof(e->dev_name), "%s",
			 e->dpdk.port[nic_port].name);
	}
}

static void setup_nic_fw(struct emu_nic *e)
{
	size_t size = (snic_nic_size() + 63) & ~(size_t)63;

	e->fw_mem = aligned_alloc(64, size);
	if (e->fw_mem == NULL) {
		fprintf(stderr, "snic-emu: %s: cannot allocate %zu bytes of "
			"NIC state\n", e->cfg.name, size);
		die();
	}
	memset(e->fw_mem, 0, size);
	e->hal.ops = &emu_hal_ops;
	e->hal.ctx = e;
	e->fw = snic_nic_init(e->fw_mem, &e->cfg, &e->hal, e->posix.bar);
	if (e->fw == NULL) {
		fprintf(stderr, "snic-emu: %s: firmware refused the "
			"configuration\n", e->cfg.name);
		die();
	}
}

static void print_nic(const struct emu_nic *e)
{
	const struct snic_nic_config *c = &e->cfg;
	char ip[16];

	snprintf(ip, sizeof(ip), "%u.%u.%u.%u", c->ipv4 >> 24,
		 (c->ipv4 >> 16) & 0xff, (c->ipv4 >> 8) & 0xff, c->ipv4 & 0xff);
	printf("%s: MAC %02x:%02x:%02x:%02x:%02x:%02x IPv4 %s GID ::ffff:%s "
	       "port %u (%s) MTU %u BAR %s\n", c->name, c->mac[0], c->mac[1],
	       c->mac[2], c->mac[3], c->mac[4], c->mac[5], ip, ip,
	       e->dpdk_port, e->dev_name, c->eth_mtu, e->posix.bar_path);
}

static void print_counters(void)
{
	unsigned n = snic_nic_counter_count();

	for (unsigned i = 0; i < EMU_NICS; i++) {
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
		for (uint16_t p = 0; p < SNIC_DPDK_MAX_PORTS; p++) {
			if (e->dpdk.port[p].rx_dropped != 0)
				printf("  %-32s %" PRIu64 "\n",
				       "hal_rx_dropped_unusable_mbuf",
				       e->dpdk.port[p].rx_dropped);
		}
	}
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

/* Every ~10 ms: reclaim the contexts of processes that are gone (they may
 * have died without closing).  The heartbeat is the firmware's own. */
static void housekeeping(void)
{
	for (unsigned i = 0; i < EMU_NICS; i++) {
		struct emu_nic *e = &emu.nic[i];

		for (unsigned s = 0; s < SNIC_MAX_CTX; s++) {
			struct snic_ctx_slot *slot = bar_slot(e, s);
			uint32_t pid;

			if (atomic_load_explicit(&slot->state,
						 memory_order_acquire) ==
			    SNIC_CTX_FREE)
				continue;
			pid = atomic_load_explicit(&slot->owner_pid,
						   memory_order_relaxed);
			if (pid != 0 && !snic_posix_pid_alive(pid))
				snic_nic_ctx_dead(e->fw, s);
		}
	}
}

static unsigned poll_all(void)
{
	unsigned work = 0;

	for (unsigned i = 0; i < EMU_NICS; i++)
		work += snic_nic_poll(emu.nic[i].fw);
	return work;
}

static void set_idle(uint32_t v)
{
	/* seq_cst: pairs with the host's doorbell store followed by its
	 * load of fw_idle (Dekker-style: one of the two sides sees the
	 * other's store). */
	for (unsigned i = 0; i < EMU_NICS; i++)
		atomic_store(&bar_hdr(&emu.nic[i])->fw_idle, v);
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
	void *kick[EMU_NICS];
	uint32_t expect[EMU_NICS];
	uint64_t now, next_hk, next_flush, yield_until = 0;
	unsigned idle = 0;
	int sleeping = 0;

	for (unsigned i = 0; i < EMU_NICS; i++)
		kick[i] = &bar_hdr(&emu.nic[i])->kick;
	now = snic_posix_now_ns(NULL);
	next_hk = now + HOUSEKEEP_NS;
	next_flush = now + PCAP_FLUSH_NS;

	while (!stop_signal) {
		if (sleeping) {
			for (unsigned i = 0; i < EMU_NICS; i++)
				expect[i] = atomic_load(
					(_Atomic uint32_t *)kick[i]);
		}
		unsigned work = poll_all();

		now = snic_posix_now_ns(NULL);
		if (now >= next_hk) {
			housekeeping();
			next_hk = now + HOUSEKEEP_NS;
			if (emu.cap != NULL && now >= next_flush) {
				pcap_file_flush(emu.cap);
				next_flush = now + PCAP_FLUSH_NS;
			}
		}
		if (work != 0) {
			if (sleeping)
				set_idle(0);
			sleeping = 0;
			idle = 0;
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
		if (snic_futex_waitv(kick, expect, EMU_NICS, SLEEP_NS,
				     SLEEP_FALLBACK_NS)) {
			/* Kicked: the host has work for us. */
			set_idle(0);
			sleeping = 0;
			idle = 0;
		}
	}
	set_idle(0);
}

int main(int argc, char **argv)
{
	struct emu_opts o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_opts(argc, argv, &o) != 0)
		return 2;
	install_signals();

	/* Runtime files first (fail fast when another emulator runs). */
	if (snic_posix_run_dir(o.run_dir, emu.run_dir, sizeof(emu.run_dir)) != 0)
		return 1;
	for (unsigned i = 0; i < EMU_NICS; i++)
		nic_config(&emu.nic[i], i, o.host_mem_size);
	for (unsigned i = 0; i < EMU_NICS; i++) {
		if (snic_posix_nic_open(&emu.nic[i].posix, emu.run_dir,
					emu.nic[i].cfg.name) != 0)
			die();
		emu.nic[i].bar_open = 1;
	}
	if (snic_hostmem_create(&emu.hm, emu.run_dir, SNIC_HOSTMEM_DEFAULT,
				o.host_mem_size) != 0)
		die();
	emu.hm_open = 1;
	for (unsigned i = 0; i < EMU_NICS; i++)
		snic_posix_nic_set_hostmem(&emu.nic[i].posix, &emu.hm);

	if (snic_dpdk_eal_init(argv[0], SNIC_DPDK_EAL_NO_PCI, o.eal_argc,
			       o.eal_argv) != 0)
		die();
	emu.eal_up = 1;
	setup_ports();
	if (o.pcap != NULL) {
		emu.cap = pcap_file_open(o.pcap);
		if (emu.cap == NULL) {
			fprintf(stderr, "snic-emu: cannot open capture file %s: "
				"%s\n", o.pcap, strerror(errno));
			die();
		}
		/* snic0's port sees every frame of the pair, both ways. */
		snic_dpdk_port_capture(&emu.nic[0].dpdk, 0, emu.cap);
	}
	for (unsigned i = 0; i < EMU_NICS; i++)
		setup_nic_fw(&emu.nic[i]);

	for (unsigned i = 0; i < EMU_NICS; i++)
		print_nic(&emu.nic[i]);
	printf("ready: run dir %s, host memory %s (%" PRIu64 " bytes)%s%s\n",
	       emu.run_dir, emu.hm.path, emu.hm.size,
	       o.pcap != NULL ? ", capture " : "", o.pcap != NULL ? o.pcap : "");

	run();

	printf("snic-emu: %s, stopping\n", strsignal(stop_signal));
	shutdown_all();
	print_counters();
	for (unsigned i = 0; i < EMU_NICS; i++)
		free(emu.nic[i].fw_mem);
	return 0;
}
