/* SPDX-License-Identifier: MIT */
/*
 * qemu-virt board: the machine's constants (QEMU `virt`, hw/arm/virt.c
 * memory map) and the physical memory layout agreed with the launcher
 * (tools/snic-qemu), which builds the guest RAM from three NUMA nodes that
 * QEMU places one after the other from 0x40000000:
 *
 *   0x40000000  private RAM (QV_PRIV_SIZE): image, stacks, heap, NIC state
 *   QV_BAR_BASE the NIC's BAR file <run dir>/<name>.bar (QV_BAR_FILE_SIZE,
 *               shared with host processes): the BAR (SNIC_BAR_SIZE bytes)
 *               at offset 0, the board's control page at QV_CTL_OFF
 *   QV_HM_BASE  the host-memory file (config hm_size bytes, shared): the
 *               host-memory window, host pa 0 = QV_HM_BASE
 */
#ifndef SNIC_QV_PLATFORM_H
#define SNIC_QV_PLATFORM_H

#define QV_DEV_BASE        0x08000000ull    /* GIC .. virtio-mmio */
#define QV_DEV_SIZE        0x04000000ull
#define QV_GICD_BASE       0x08000000ull
#define QV_GICC_BASE       0x08010000ull
#define QV_UART_BASE       0x09000000ull
#define QV_VIRTIO_BASE     0x0a000000ull
#define QV_VIRTIO_COUNT    32u
#define QV_VIRTIO_STRIDE   0x200u

#define QV_RAM_BASE        0x40000000ull
#define QV_PRIV_SIZE       (128ull << 20)
#define QV_BAR_BASE        (QV_RAM_BASE + QV_PRIV_SIZE)
#define QV_BAR_FILE_SIZE   (8ull << 20)
#define QV_CTL_OFF         (7ull << 20)
#define QV_HM_BASE         (QV_BAR_BASE + QV_BAR_FILE_SIZE)
#define QV_HM_MAX          (0x100000000ull - QV_HM_BASE)

/*
 * Control page (QV_CTL_OFF in the BAR file), written by the launcher:
 *   [0, QV_CTL_CFG_LEN)  configuration, "key=value" lines, NUL-terminated,
 *                        written before QEMU starts
 *   QV_CTL_STOP_OFF      4 bytes; the launcher writes "STOP" to ask the
 *                        firmware to stop cleanly
 * and by the firmware:
 *   QV_CTL_STATE_OFF     "UP\n" once serving, "DOWN\n" after a clean stop
 */
#define QV_CTL_CFG_LEN     2048u
#define QV_CTL_STOP_OFF    2048u
#define QV_CTL_STATE_OFF   2112u

/* Exit statuses of the image (QEMU's exit status through semihosting). */
#define QV_EXIT_OK         0
#define QV_EXIT_CONFIG     2        /* bad configuration or device set-up */
#define QV_EXIT_EXCEPTION  3        /* an unexpected exception            */

#ifndef __ASSEMBLER__
#include <stdint.h>
/* Provided by exception.c; start.S branches to it with the vector index. */
void qv_exception(uint64_t vector, uint64_t sp);
#endif

#endif /* SNIC_QV_PLATFORM_H */
