/* SPDX-License-Identifier: MIT */
/*
 * A polled virtio-net driver (virtio-mmio v2, split virtqueues) as a snic
 * port: burst RX/TX of struct snic_pkt descriptors from a fixed pool, like
 * the DPDK ports.  No interrupts are taken; the driver asks the device not
 * to raise any.  Generic: the board passes the transport base addresses to
 * probe and its MAC.
 *
 * Frames: each buffer holds the 12-byte virtio-net header and a frame of
 * up to VNET_FRAME_MAX bytes.  virtio-net itself has no 1514-byte limit:
 * without mergeable RX buffers the device needs each posted RX buffer to
 * hold a whole frame, and ours hold VNET_FRAME_MAX, so the port carries an
 * IP MTU of up to VNET_FRAME_MAX - 14 (the firmware's path MTU 4096 needs
 * 4200).  Nothing here allocates after init; every data-path function
 * counts instead of failing loudly.
 */
#ifndef SNIC_VIRTIO_NET_H
#define SNIC_VIRTIO_NET_H

#include <stddef.h>
#include <stdint.h>

#include "snic/hal.h"
#include "virtio_mmio.h"

#define VNET_QSIZE      256u            /* descriptors per queue          */
#define VNET_POOL_PKTS  2048u           /* packet buffers                 */
#define VNET_FRAME_MAX  4224u           /* Ethernet frame bytes (no FCS)  */
#define VNET_HDR_LEN    12u             /* struct virtio_net_hdr, v1      */
#define VNET_BUF_HEAD   16u             /* frame offset in a buffer       */
#define VNET_BUF_SIZE   (VNET_BUF_HEAD + VNET_FRAME_MAX)

struct vnet_buf;

struct vnet_queue {
	struct virtq_desc desc[VNET_QSIZE] __attribute__((aligned(4096)));
	struct {
		uint16_t flags;
		uint16_t idx;
		uint16_t ring[VNET_QSIZE];
		uint16_t used_event;
	} avail __attribute__((aligned(4096)));
	struct {
		uint16_t flags;
		uint16_t idx;
		struct virtq_used_elem ring[VNET_QSIZE];
		uint16_t avail_event;
	} used __attribute__((aligned(4096)));
	struct vnet_buf *buf[VNET_QSIZE];   /* buffer behind each descriptor */
	uint16_t free_desc[VNET_QSIZE];     /* descriptor stack (TX)         */
	uint16_t nfree;
	uint16_t avail_idx;                 /* our copy of avail.idx          */
	uint16_t used_seen;                 /* used entries consumed          */
	uint16_t index;                     /* virtqueue number               */
	uint16_t pending_notify;
};

struct vnet_stats {
	uint64_t rx_frames, tx_frames;
	uint64_t rx_bad_len;                /* used len out of range: dropped */
	uint64_t rx_refill_short;           /* no buffer to repost a slot     */
	uint64_t tx_ring_full;              /* frames tx_burst did not take   */
	uint64_t notifies;
};

struct snic_vnet {
	uintptr_t base;
	uint8_t mac[6];
	uint16_t has_status;                /* VIRTIO_NET_F_STATUS negotiated */
	struct vnet_queue rxq, txq;
	struct vnet_buf *pool;              /* VNET_POOL_PKTS buffers         */
	struct vnet_buf **free_bufs;
	uint32_t nfree_bufs;
	uint16_t rx_unposted[VNET_QSIZE];   /* RX slots waiting for a buffer  */
	uint16_t n_unposted;
	struct vnet_stats st;
};

/* Find the first virtio-net device among n transports at base + i * stride
 * (scanning from the highest slot, where QEMU puts the first -device), set
 * it up with the given MAC, fill its RX ring.  `pool` must hold
 * snic_vnet_pool_size() bytes, 4096-aligned.  Prints what failed through
 * `err` and returns -1; 0 when the port is running. */
size_t snic_vnet_pool_size(void);
int snic_vnet_init(struct snic_vnet *v, uintptr_t base, unsigned n,
		   uintptr_t stride, const uint8_t mac[6], void *pool,
		   void (*err)(const char *msg));

/* HAL ops; the void *hal argument is a struct snic_vnet *. */
uint16_t snic_vnet_rx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n);
uint16_t snic_vnet_tx_burst(void *hal, uint16_t port, struct snic_pkt **pkts,
			    uint16_t n);
uint16_t snic_vnet_pkt_alloc(void *hal, struct snic_pkt **pkts, uint16_t n);
void snic_vnet_pkt_free(void *hal, struct snic_pkt **pkts, uint16_t n);
int snic_vnet_link_up(void *hal, uint16_t port);

#endif /* SNIC_VIRTIO_NET_H */
