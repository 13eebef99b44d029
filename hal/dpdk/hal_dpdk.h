/* SPDX-License-Identifier: MIT */
/*
 * DPDK HAL: a NIC's Ethernet ports as DPDK ethdev ports.
 *
 * Packet buffers are mbufs from pools made by snic_dpdk_pool_create: each
 * mbuf's private area (rte_mbuf_to_priv) holds the struct snic_pkt the core
 * sees, so converting between the two is pointer arithmetic, never an
 * allocation.  RX queue 0 is polled by the NIC's core 0 thread, which
 * also calls every set-up and watch function; TX queue 0 is that
 * thread's too.  A NIC with several firmware cores may ask for a TX queue
 * per core (snic_dpdk_nic.want_txq): core k's thread then sends on queue
 * k (snic_dpdk_tx_burst_queue) beside the others; and for an RX queue per
 * core (want_rxq), which a ring pair made with them has: the port steers
 * by the destination QPN (hal.h snic_hal_rx_queue) and core k's thread
 * polls queue k (snic_dpdk_rx_burst_queue).
 *
 * Set-up functions print what failed (which port, and why) and return -1;
 * the burst functions never print: they count and drop.
 */
#ifndef SNIC_HAL_DPDK_H
#define SNIC_HAL_DPDK_H

#include <stdatomic.h>
#include <stdint.h>

#include "snic/hal.h"

struct rte_mempool;
struct pcap_file;

/* Largest Ethernet frame a buffer holds (path MTU 4096 RoCEv2 frames are
 * ~4.2 KB); the mbuf data room is this plus RTE_PKTMBUF_HEADROOM. */
#define SNIC_DPDK_FRAME_MAX   (4096u + 256u)
#define SNIC_DPDK_MAX_PORTS   4
#define SNIC_DPDK_MAX_TXQ     16      /* TX queues per port (cores)      */
#define SNIC_DPDK_MAX_RXQ     4       /* RX queues of a ring pair's port */
#define SNIC_DPDK_RING_SIZE   1024u   /* descriptors / ring-pair slots   */
/* Buffers per NIC: a full ring pair (1023) plus bursts in the core and
 * the per-lcore cache, with room to spare.  Each costs a page fault at
 * start-up without hugepages (~20-40 us here), so not more. */
#define SNIC_DPDK_POOL_MBUFS  4095u

/* Free hugepage memory wanted before the hugepage mode is chosen. */
#define SNIC_DPDK_HUGE_MIN_MB 128u
#define SNIC_DPDK_NOHUGE_MB   512u

/* EAL start-up.  Memory mode: hugepages (--in-memory) when the kernel has
 * at least SNIC_DPDK_HUGE_MIN_MB free in them, else --no-huge --no-shconf
 * -m SNIC_DPDK_NOHUGE_MB; one line says which.  The main lcore may run on
 * any CPU of the process's affinity mask (--lcores 0@(cpus)).  Arguments
 * the user gave (user_argv, e.g. --vdev=...) are passed after ours; when
 * they choose the memory mode, lcores or PCI devices themselves, ours are
 * left out.  0, or -1 with the reason printed. */
#define SNIC_DPDK_EAL_NO_PCI  1u      /* no PCI scan (vdev ports only)    */
/* file_prefix (may be NULL): --file-prefix given to EAL, unless the user
 * gave one; separate processes need separate prefixes. */
int snic_dpdk_eal_init(const char *prog, unsigned flags,
		       const char *file_prefix, int user_argc,
		       char **user_argv);
/* Free the ring pairs made here, then rte_eal_cleanup (pools stay until
 * the process exits).  Call after snic_dpdk_nic_fini on every NIC. */
void snic_dpdk_eal_fini(void);

/* A pool of n packet buffers (n + 1 a power of two is best). */
struct rte_mempool *snic_dpdk_pool_create(const char *name, unsigned n);

/* Two in-process ethdev ports wired back to back through rings (what a
 * sends, b receives, and the other way round).  Port ids in *a / *b.
 * Each port has nrxq RX queues (1, or a power of two up to
 * SNIC_DPDK_MAX_RXQ), a ring each, and ntxq (1..SNIC_DPDK_MAX_TXQ) TX
 * queues that all reach every ring of the peer (multi-producer rings): a
 * wire and the receiving port's steering in one.  With nrxq > 1 a frame
 * goes into the ring of the queue snic_hal_rx_queue names, as the
 * receiving NIC's RSS or flow rules would place it; the sending thread
 * computes it (ntxq * nrxq <= SNIC_DPDK_MAX_TXQ). */
int snic_dpdk_ring_pair(const char *name_a, const char *name_b,
			uint16_t *a, uint16_t *b, unsigned ntxq,
			unsigned nrxq);

/* Receive hook (fault injection and the like): sees each burst received
 * on RX queue q (n frames in pkts, room for cap) before the core and
 * returns how many frames it left there (it frees what it drops, and may
 * add frames it held back, up to cap).  Called from the thread that
 * polls queue q (several queues: several threads, so its state is per
 * queue).  NULL: none; the data path pays one branch. */
typedef uint16_t (*snic_dpdk_rx_hook)(void *arg, uint16_t port, uint16_t q,
				      struct snic_pkt **pkts, uint16_t n,
				      uint16_t cap);

struct snic_dpdk_port {
	uint16_t port_id;               /* DPDK ethdev port                  */
	uint8_t started;
	uint8_t link_up;                /* cached by snic_dpdk_port_watch    */
	uint8_t restart_said;           /* restarts of this outage announced */
	uint8_t promisc_set;            /* we enabled promiscuous mode        */
	uint8_t restart;                /* restart after a long link loss     */
	uint16_t nb_txq;                /* TX queues configured (>= 1)        */
	uint16_t nb_rxq;                /* RX queues configured (>= 1)        */
	/* a ring pair's port: its peer's RX queues (TX queue q is ethdev
	 * queues q * peer_rxq + r, r the peer's queue), and its own rings */
	uint16_t peer_rxq;
	struct rte_ring *rx_ring[SNIC_DPDK_MAX_RXQ];
	/* frames each RX queue handed over (written by that queue's thread) */
	uint64_t rx_frames_q[SNIC_DPDK_MAX_RXQ];
	/* Queues >= 1, sent on from other threads: open while the port is
	 * started; a stop closes it, then waits for the sends under way
	 * (each queue's busy flag) before rte_eth_dev_stop. */
	_Atomic uint8_t txq_open;
	_Atomic uint8_t txq_busy[SNIC_DPDK_MAX_TXQ];
	/* frames each TX queue took (written by that queue's thread only;
	 * read once the threads are stopped) */
	uint64_t tx_frames_q[SNIC_DPDK_MAX_TXQ];
	struct pcap_file *cap;          /* capture of both directions, or NULL */
	snic_dpdk_rx_hook rx_hook;
	void *rx_hook_arg;
	uint64_t rx_dropped;            /* frames the HAL could not hand over */
	uint64_t down_since_ns;         /* link down (or not started) since   */
	uint64_t next_try_ns;           /* next start attempt                 */
	uint64_t restarts;              /* stop/start after a long link loss  */
	uint64_t link_downs;
	int last_err;                   /* last start error (negative errno)  */
	char name[64];                  /* ethdev name                        */
};

/* One NIC's DPDK side (the void *hal of the ops below). */
struct snic_dpdk_nic {
	struct rte_mempool *pool;       /* pkt_alloc draws from it            */
	uint16_t nb_ports;
	/* TX queues wanted per port (the board sets it after
	 * snic_dpdk_nic_init, before the ports; 0 or 1: one).  A port gets
	 * them when its driver has that many and they reach the same wire
	 * (not memif: its queues are rings the peer must poll); else 1. */
	uint16_t want_txq;
	uint16_t nb_txq;                /* fewest any port got (tx_queues op) */
	/* RX queues wanted per port (0 or 1: one).  Only a ring pair's port
	 * made with them has several; the rx_queues op gives want_rxq when
	 * every port has that many, else 1: then rx_burst polls all of a
	 * port's queues. */
	uint16_t want_rxq;
	uint16_t nb_rxq;
	struct snic_dpdk_port port[SNIC_DPDK_MAX_PORTS];
};

void snic_dpdk_nic_init(struct snic_dpdk_nic *n, struct rte_mempool *pool);

/* Configure (1 RX queue, 1 or want_txq TX queues, MTU eth_mtu,
 * promiscuous when the PMD allows) and start DPDK port port_id as the NIC's next port; its NIC-local
 * number is returned through *nic_port.  0 or -1. */
int snic_dpdk_port_add(struct snic_dpdk_nic *n, uint16_t port_id,
		       uint32_t eth_mtu, uint16_t *nic_port);
/* The same in two steps, for ports that may start late (a memif client
 * whose server is not up yet): configure without starting, then let
 * snic_dpdk_port_watch start it.  0 or -1 (printed). */
int snic_dpdk_port_setup(struct snic_dpdk_nic *n, uint16_t port_id,
			 uint32_t eth_mtu, uint16_t *nic_port);
/* Largest MTU port_id accepts that also fits our packet buffers; 0 when
 * the port is unknown. */
uint32_t snic_dpdk_port_max_mtu(uint16_t port_id);

/* Link watch, every few ms from the board's loop (never from the data
 * path: it may sleep briefly in the driver).  Starts ports not yet started
 * (retrying every SNIC_DPDK_RETRY_NS), refreshes the cached link state
 * that link_up returns, prints each transition, and stops/starts a port
 * marked restartable whose link stayed down for SNIC_DPDK_RESTART_NS (a
 * memif client does not reconnect by itself after its server restarted).
 * Returns the number of ports with link up. */
#define SNIC_DPDK_RETRY_NS   500000000ull   /* 500 ms */
#define SNIC_DPDK_RESTART_NS 1000000000ull  /* 1 s    */
unsigned snic_dpdk_port_watch(struct snic_dpdk_nic *n, uint64_t now_ns);
/* Let the watch restart this port after a long link loss (default: no). */
void snic_dpdk_port_set_restart(struct snic_dpdk_nic *n, uint16_t nic_port,
				int on);

/* Stop and close every port of the NIC. */
void snic_dpdk_nic_fini(struct snic_dpdk_nic *n);

/* Write every frame the port sends and receives to cap (NULL: stop). */
void snic_dpdk_port_capture(struct snic_dpdk_nic *n, uint16_t nic_port,
			    struct pcap_file *cap);

/* HAL ops; void *hal is a struct snic_dpdk_nic *. */
uint16_t snic_dpdk_rx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n);
uint16_t snic_dpdk_tx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n);
uint16_t snic_dpdk_tx_queues(void *hal);
uint16_t snic_dpdk_rx_queues(void *hal);
/* The RX queue whose poll takes the frames of the port's RX ring r: r
 * where the firmware polls a queue per core (rx_queues), else 0 (rx_burst
 * also polls the rings past them).  The one rule for which thread owns a
 * ring's frames (and any state kept per queue, like --fault's). */
uint16_t snic_dpdk_rx_poller(const struct snic_dpdk_nic *nic, uint16_t r);
uint16_t snic_dpdk_rx_burst_queue(void *hal, uint16_t port, uint16_t q,
				  struct snic_pkt **pkts, uint16_t n);
int snic_dpdk_rx_ready(void *hal, uint16_t port, uint16_t q);
uint16_t snic_dpdk_tx_burst_queue(void *hal, uint16_t port, uint16_t q,
				  struct snic_pkt **pkts, uint16_t n);
uint16_t snic_dpdk_pkt_alloc(void *hal, struct snic_pkt **pkts, uint16_t n);
void snic_dpdk_pkt_free(void *hal, struct snic_pkt **pkts, uint16_t n);
int snic_dpdk_link_up(void *hal, uint16_t port);

#endif /* SNIC_HAL_DPDK_H */
