/* SPDX-License-Identifier: MIT */
/*
 * qemu-virt board: the machine's constants (QEMU `virt`, hw/arm/virt.c
 * memory map) and the physical memory layout agreed with the launcher
 * (tools/snic-qemu), which builds the guest RAM from three NUMA nodes that
 * QEMU places one after the other from 0x40000000:
 *
 *   0x40000000  private RAM (QV_PRIV_SIZE): image, stacks, heap, NIC state
 *   QV_BAR_BASE the NIC's BAR (QV_BAR_FILE_SIZE): the BAR (SNIC_BAR_SIZE
 *               bytes) at offset 0, the board's control page at QV_CTL_OFF
 *   QV_HM_BASE  the host-memory file (config host_mem_size bytes, shared):
 *               the host-memory window, host pa 0 = QV_HM_BASE; then the
 *               segment area (config seg_area_size bytes), the contexts'
 *               own pages
 *
 * The BAR is several files laid out contiguously (the host agent,
 * boards/qemu-virt/agent/, makes all but the first and hands each slot and
 * segment to one process only): the first SNIC_BAR_CTX_OFF bytes of
 * <run dir>/<name>.bar (header, NIC doorbell page), one memfd per context
 * slot, one for the statistics area, one for the rest (device memory and
 * the control page, the agent's alone); the segment area is one memfd per
 * segment.
 */
#ifndef SNIC_QV_PLATFORM_H
#define SNIC_QV_PLATFORM_H

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

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
 * Control page (QV_CTL_OFF in the BAR, in the host agent's "rest" memfd),
 * written by the agent:
 *   [0, QV_CTL_CFG_LEN)  configuration, "key=value" lines, NUL-terminated:
 *                        the launcher's, then fw_pid, before QEMU starts
 *   QV_CTL_STOP_OFF      4 bytes; the agent writes "STOP" (on the
 *                        launcher's SIGUSR1) to ask the firmware to stop
 *                        cleanly
 * and by the firmware:
 *   QV_CTL_STATE_OFF     "UP\n" once serving, "DOWN\n" after a clean stop
 */
#define QV_CTL_CFG_LEN     2048u
#define QV_CTL_STOP_OFF    2048u
#define QV_CTL_STATE_OFF   2112u

/*
 * The agent's mailbox (QV_CTL_MBOX_OFF in the control page): the agent
 * fills op and arguments, then stores req = done + 1; the firmware, which
 * looks at req every loop pass, runs the op once, writes result and then
 * done = req.  One request at a time (the agent waits for done).
 *   QV_MBOX_GRANT  snic_nic_ctx_grant(slot, pid, first_page, npages)
 *   QV_MBOX_DEAD   snic_nic_ctx_dead(slot): the context's socket closed
 * result: 0, or -1 (refused: bad slot, pages outside the segment area).
 */
#define QV_CTL_MBOX_OFF    2176u
#ifndef __ASSEMBLER__
enum { QV_MBOX_GRANT = 1, QV_MBOX_DEAD = 2 };
struct qv_mbox {
	uint32_t req;
	uint32_t op;
	uint32_t slot;
	uint32_t pid;
	uint32_t first_page;
	uint32_t npages;
	uint32_t done;
	int32_t result;
};
#endif

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
