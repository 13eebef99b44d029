/* SPDX-License-Identifier: MIT */
/*
 * virtio over MMIO, version 2 ("modern") register layout, and the split
 * virtqueue structures (Virtio 1.1, sections 2.6 and 4.2).  Constants only.
 */
#ifndef SNIC_VIRTIO_MMIO_H
#define SNIC_VIRTIO_MMIO_H

#include <stdint.h>

#define VIRTIO_MMIO_MAGIC            0x74726976u   /* "virt" */

#define VIRTIO_MMIO_MAGIC_VALUE      0x000u
#define VIRTIO_MMIO_VERSION          0x004u
#define VIRTIO_MMIO_DEVICE_ID        0x008u
#define VIRTIO_MMIO_VENDOR_ID        0x00cu
#define VIRTIO_MMIO_DEVICE_FEATURES  0x010u
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL 0x014u
#define VIRTIO_MMIO_DRIVER_FEATURES  0x020u
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL 0x024u
#define VIRTIO_MMIO_QUEUE_SEL        0x030u
#define VIRTIO_MMIO_QUEUE_NUM_MAX    0x034u
#define VIRTIO_MMIO_QUEUE_NUM        0x038u
#define VIRTIO_MMIO_QUEUE_READY      0x044u
#define VIRTIO_MMIO_QUEUE_NOTIFY     0x050u
#define VIRTIO_MMIO_INTERRUPT_STATUS 0x060u
#define VIRTIO_MMIO_INTERRUPT_ACK    0x064u
#define VIRTIO_MMIO_STATUS           0x070u
#define VIRTIO_MMIO_QUEUE_DESC_LOW   0x080u
#define VIRTIO_MMIO_QUEUE_DESC_HIGH  0x084u
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW 0x090u
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH 0x094u
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW 0x0a0u
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH 0x0a4u
#define VIRTIO_MMIO_CONFIG           0x100u

/* Device status bits. */
#define VIRTIO_STATUS_ACKNOWLEDGE    1u
#define VIRTIO_STATUS_DRIVER         2u
#define VIRTIO_STATUS_DRIVER_OK      4u
#define VIRTIO_STATUS_FEATURES_OK    8u
#define VIRTIO_STATUS_FAILED         128u

#define VIRTIO_ID_NET                1u
#define VIRTIO_F_VERSION_1           32u

/* Split virtqueue. */
#define VIRTQ_DESC_F_NEXT            1u
#define VIRTQ_DESC_F_WRITE           2u
#define VIRTQ_AVAIL_F_NO_INTERRUPT   1u
#define VIRTQ_USED_F_NO_NOTIFY       1u

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};

#endif /* SNIC_VIRTIO_MMIO_H */
