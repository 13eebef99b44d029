/* SPDX-License-Identifier: MIT */
/*
 * snic-emu --fault SPEC: the fault injection of hal/fault on the receive
 * path of every NIC's ports (each port its own seeded generator: seed,
 * seed + 1, ...; each of a port's RX queues too, a queue per core: seed
 * + 1000 q on queue q), through the DPDK HAL's receive hook.
 */
#ifndef SNIC_EMU_FAULT_H
#define SNIC_EMU_FAULT_H

#include <stdint.h>

struct snic_dpdk_nic;

/* Remember SPEC ("loss=0.05,dup=0.01,reorder=0.01,corrupt=0.001,seed=N").
 * 0, or -1 after a message. */
int emu_fault_parse(const char *spec);
/* Hook every port of the NIC (no-op without --fault). */
void emu_fault_attach(struct snic_dpdk_nic *n, const char *nic_name);
/* The earliest time a frame held back on the NIC's RX queue q is due
 * (UINT64_MAX: none), for the thread that polls q before it sleeps:
 * the rings whose poller q is (snic_dpdk_rx_poller).  From that thread
 * only: the fault state of a queue is its poller's. */
uint64_t emu_fault_next_due(const struct snic_dpdk_nic *n, uint16_t q);
/* Print what was injected, one line per port (per queue where it has
 * several); give back held frames. */
void emu_fault_fini(void);

#endif /* SNIC_EMU_FAULT_H */
