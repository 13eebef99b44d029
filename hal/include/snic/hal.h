/* SPDX-License-Identifier: MIT */
/*
 * snic HAL: the only way the firmware core touches hardware or an OS.
 *
 * A board composes one `struct snic_hal` per NIC from the implementations
 * in hal/ (posix: host-memory window, clock, console, host wake-ups; dpdk:
 * ports) and hands it to the core at init.  The ops table is const and
 * chosen once; the core never tests which implementation it runs on.
 *
 * Mandatory: every op below must be non-NULL.
 */
#ifndef SNIC_HAL_H
#define SNIC_HAL_H

#include <stddef.h>
#include <stdint.h>

/* A packet buffer owned by the HAL (DPDK: lives in the mbuf's private
 * area).  The core reads/writes data[0 .. cap) and sets len before TX.
 * Before it writes a frame into a buffer from pkt_alloc, the core may
 * move data forward (by less than 64 bytes, taking as much off cap) to
 * put the frame's payload on a cache line: tx_burst sends from data as
 * it is then, and pkt_alloc and rx_burst hand out buffers whose data and
 * cap are the implementation's own again. */
struct snic_pkt {
	uint8_t *data;          /* first byte of the Ethernet frame           */
	uint16_t len;           /* frame length                               */
	uint16_t cap;           /* bytes available from data                  */
	uint16_t port;          /* NIC-local port the frame arrived on        */
	uint16_t rsvd;
	void *priv;             /* the implementation's own handle (mbuf)     */
};

enum snic_log_level {
	SNIC_LOG_ERR = 0,
	SNIC_LOG_WARN = 1,
	SNIC_LOG_INFO = 2,
	SNIC_LOG_DEBUG = 3,
};

struct snic_hal_ops {
	/* Host memory by DMA.  pa is a host physical address (offset into
	 * the window).  Return 0, or -1 when [pa, pa + len) is not inside
	 * the window (nothing is copied then). */
	int (*dma_read)(void *hal, uint64_t pa, void *dst, uint32_t len);
	int (*dma_write)(void *hal, uint64_t pa, const void *src, uint32_t len);
	/* Atomic 64-bit operations on host memory (aligned pa), for RDMA
	 * atomics: executed atomically with respect to every other atomic
	 * through this HAL.  Return 0 / -1 as above; *old gets the prior
	 * value.  cmp_swap stores swap when *pa == cmp. */
	int (*dma_cmp_swap)(void *hal, uint64_t pa, uint64_t cmp,
			    uint64_t swap, uint64_t *old);
	int (*dma_fetch_add)(void *hal, uint64_t pa, uint64_t add,
			     uint64_t *old);

	/* Monotonic time in nanoseconds. */
	uint64_t (*now_ns)(void *hal);

	/* Ports.  rx_burst hands the core up to n received frames (the core
	 * frees them).  pkt_alloc gives up to n empty buffers.  tx_burst
	 * takes ownership of the first k frames it returns; the rest stay
	 * with the core (retry or free).  It only reads the pkts array,
	 * never writes it: the core bursts straight from its transmit ring
	 * (core/tx.c, tx_ring_flush). */
	uint16_t (*rx_burst)(void *hal, uint16_t port, struct snic_pkt **pkts,
			     uint16_t n);
	uint16_t (*tx_burst)(void *hal, uint16_t port, struct snic_pkt **pkts,
			     uint16_t n);
	uint16_t (*pkt_alloc)(void *hal, struct snic_pkt **pkts, uint16_t n);
	void (*pkt_free)(void *hal, struct snic_pkt **pkts, uint16_t n);
	/* 1 when the port's link is up. */
	int (*link_up)(void *hal, uint16_t port);

	/* Wake host threads waiting on a 32-bit word in the BAR (futex in
	 * the posix HAL; a no-op where the host polls). */
	void (*notify_host)(void *hal, const void *word);

	/* Console. */
	void (*log)(void *hal, int level, const char *msg);

	/* Optional (may be NULL): load the 32-bit word at pa (4-byte
	 * aligned) with acquire semantics, for the producer indexes the host
	 * publishes with a release store (doorbell records, SRQ producer
	 * index): WQEs read after it are at least as new.  Return 0 / -1 as
	 * dma_read.  NULL: the core uses dma_read and an acquire fence. */
	int (*dma_load_acquire32)(void *hal, uint64_t pa, uint32_t *val);

	/* Optional (may be NULL): the exception path.  A received frame that
	 * is not RoCE (IP other than RoCEv2, ARP the firmware does not answer
	 * itself, other Ethernet types) for the host's network interface.
	 * The HAL copies what it keeps: the core frees p afterwards.  NULL:
	 * such frames are dropped (rx_drop_not_roce).  Frames the other way
	 * come in through snic_nic_netdev_tx (fw.h). */
	void (*netdev_rx)(void *hal, uint16_t port, const struct snic_pkt *p);

	/* Optional (may be NULL): the host has just handed the NIC
	 * [pa, pa + len) (a registration, a ring), which it will reach by
	 * DMA from now on.  Called on the command path only, never per
	 * packet.  A HAL whose window fills on demand (posix: a shared
	 * mapping, a page fault at each page's first touch) fills it here,
	 * without changing the contents; errors are ignored (the DMA ops
	 * still check every access).  NULL: nothing to prepare. */
	void (*dma_prepare)(void *hal, uint64_t pa, uint64_t len);

	/* Optional (may be NULL): dma_read that also advances the CRC-32
	 * register *crc over the bytes copied, followed by zero bytes up
	 * to a multiple of 4 that it writes after them in dst: a payload's
	 * ICRC in the pass that copies it (snic_dma_copy_crc, fw.h, does
	 * both with the CPU's folding).  Called only where the CPU folds
	 * CRCs.  Return 0 / -1 as dma_read (on -1, *crc is not used).
	 * NULL: the core copies with dma_read and computes the ICRC over
	 * the frame afterwards. */
	int (*dma_read_crc)(void *hal, uint64_t pa, void *dst, uint32_t len,
			    uint32_t *crc);

	/* Optional (may be NULL): dma_write that also advances the CRC-32
	 * register *crc over the len bytes it copies from src and the
	 * -len & 3 bytes after them at src, which it does not write: a
	 * received payload placed with its ICRC checked in the same pass
	 * (snic_dma_copy_crc_in, fw.h, does both).  Called only where the
	 * CPU folds CRCs.  Return 0 / -1 as dma_write; on -1 nothing was
	 * written and *crc is not used.  NULL: the core checks the ICRC
	 * over the frame first, then copies with dma_write. */
	int (*dma_write_crc)(void *hal, uint64_t pa, const void *src,
			     uint32_t len, uint32_t *crc);

	/* Optional (may be NULL): a hint that the core will soon read
	 * [pa, pa + len) of host memory (a WQE the host has posted): start
	 * bringing it close (a CPU prefetch in the posix HAL, a DMA engine's
	 * read-ahead on a card), so that its transfer overlaps other work.
	 * Copies nothing, never fails or faults; an address outside the
	 * window is ignored.  The later dma_read checks as always.  NULL:
	 * no read-ahead. */
	void (*dma_prefetch)(void *hal, uint64_t pa, uint32_t len);

	/* Optional (both or neither; may be NULL): TX queues of their own
	 * for the cores of a NIC with several (DESIGN.md "Many cores").
	 * tx_queues: how many queues every port has, queue 0 being
	 * tx_burst's; fixed once the firmware is initialised.
	 * tx_burst_queue: tx_burst on queue q (1 <= q < tx_queues), called
	 * only from the thread of core q, while other threads call the
	 * other ops; frames of all queues go out on the same wire.  NULL,
	 * or tx_queues 1: core k >= 1 hands its frames to core 0, which
	 * transmits them on queue 0. */
	uint16_t (*tx_queues)(void *hal);
	uint16_t (*tx_burst_queue)(void *hal, uint16_t port, uint16_t q,
				   struct snic_pkt **pkts, uint16_t n);

	/* Optional (both or neither; may be NULL): RX queues of their own
	 * for the cores of a NIC, the port steering by the BTH destination
	 * QPN as a NIC's RSS or flow rules would (DESIGN.md "Many cores").
	 * rx_queues: how many queues every port has, queue 0 being
	 * rx_burst's; each frame arrives on queue snic_hal_rx_queue(frame,
	 * len, rx_queues); a power of two, fixed once the firmware is
	 * initialised.  rx_burst_queue: rx_burst on queue q (1 <= q <
	 * rx_queues), called only from the thread of core q.  NULL, or a
	 * count the firmware cannot use (not its number of cores): every
	 * frame comes through rx_burst and core 0 steers it in software. */
	uint16_t (*rx_queues)(void *hal);
	uint16_t (*rx_burst_queue)(void *hal, uint16_t port, uint16_t q,
				   struct snic_pkt **pkts, uint16_t n);
	/* Optional (may be NULL: not known): nonzero when frames wait on RX
	 * queue q of the port; from any thread, a hint (a board wakes a
	 * sleeping core with it, fw.h snic_nic_core_input). */
	int (*rx_ready)(void *hal, uint16_t port, uint16_t q);
};

/* The RX queue of nq (a power of two) that a port steering for the
 * firmware puts a frame on: a RoCEv2 frame (IPv4 or IPv6, UDP port 4791)
 * on the queue of the low bits of its BTH destination QPN (IBTA 9.2),
 * the core that runs that QP (the firmware places QPs so); everything
 * else - QP1's MADs, multicast (QPN 0xffffff), ARP, ND, other traffic -
 * on queue 0.  A rule a NIC's flow steering can express with nq
 * patterns on the destination QPN's low bits. */
static inline uint32_t snic_hal_frame_dqpn(const uint8_t *d, uint32_t len)
{
	uint32_t l4;

	if (len < 14)
		return ~0u;
	if (d[12] == 0x08 && d[13] == 0x00) {
		if (len < 14 + 20 || d[14 + 9] != 17)
			return ~0u;
		l4 = 14 + 4u * (d[14] & 0x0f);
	} else if (d[12] == 0x86 && d[13] == 0xdd) {
		if (len < 14 + 40 || d[14 + 6] != 17)
			return ~0u;
		l4 = 14 + 40;
	} else {
		return ~0u;
	}
	if (len < l4 + 8 + 12 ||
	    (((uint32_t)d[l4 + 2] << 8) | d[l4 + 3]) != 4791)
		return ~0u;
	d += l4 + 8; /* BTH: DestQP in bytes 5..7 */
	return ((uint32_t)d[5] << 16) | ((uint32_t)d[6] << 8) | d[7];
}

static inline uint16_t snic_hal_rx_queue(const uint8_t *frame, uint32_t len,
					 uint16_t nq)
{
	uint32_t dqpn = snic_hal_frame_dqpn(frame, len);

	if (nq <= 1 || dqpn <= 1 || dqpn >= 0xffffff)
		return 0;
	return (uint16_t)(dqpn & (nq - 1u));
}

struct snic_hal {
	const struct snic_hal_ops *ops;
	void *ctx;              /* passed back as the first argument          */
};

#endif /* SNIC_HAL_H */
