/* SPDX-License-Identifier: MIT */
/*
 * The top of the firmware: the composition that may use every layer.
 * nic.c (init, the poll pass, fini), doorbell.c, cmd.c (the command
 * channel), rx.c (RX dispatch to the transport), stats.c (the statistics
 * area and link events).
 */
#ifndef SNIC_NIC_TOP_H
#define SNIC_NIC_TOP_H

#include "transport/transport.h"

/* cmd.c */
uint64_t cmd_due(struct snic_nic *nic, uint64_t bits);
unsigned cmd_poll(struct snic_nic *nic, uint64_t bits);
void ctx_destroy(struct snic_nic *nic, unsigned ctx);

/* guard.c; nic.c's bar_header_write puts the header's words back,
 * bar_header_ok says whether they are still there */
void bar_guard(struct snic_nic *nic);
void bar_header_write(struct snic_nic *nic);
bool bar_header_ok(const struct snic_nic *nic);

/* doorbell.c */
unsigned doorbell_poll(struct snic_nic *nic);
unsigned doorbell_poll_core(struct snic_nic *nic);
bool doorbell_core_pending(const struct snic_nic *nic0, unsigned k);
void doorbell_ctx_open(struct snic_nic *nic, unsigned slot, bool open);
void doorbell_masks_init(struct snic_nic *view, unsigned k, unsigned n);

/* netdev.c: the exception path to the host's network interface */
void netdev_rx(struct snic_nic *nic, const struct snic_pkt *p);
void netdev_rx_arp(struct snic_nic *nic, const struct snic_pkt *p);

/* rx.c */
unsigned rx_poll(struct snic_nic *nic);

/* steer.c: the software steering stage of several cores */
const struct snic_hal *steer_port_init(struct snic_xc_port *pt,
				       const struct snic_hal *real,
				       struct snic_nic *view, unsigned k);
unsigned steer_tx_gather(struct snic_nic *nic0);

/* xcore.c: the cores of a NIC */
struct snic_nic_shared *xcore_layout(void *mem, unsigned ncores);
unsigned xcore_poll(struct snic_nic *nic0);
unsigned xcore_pass(struct snic_nic *nic);
uint64_t xcore_counter(const struct snic_nic *nic, unsigned i);
void xcore_counters_reset(struct snic_nic *nic0);
void xcore_fini(struct snic_nic *nic0);
void xcore_park_all(struct snic_nic *nic0);
void xcore_unpark_all(struct snic_nic *nic0);
bool xcore_doorbell(struct snic_nic *nic0, struct snic_qp *qp);

/* stats.c */
void stats_init(struct snic_nic *nic);
void stats_poll(struct snic_nic *nic);

#endif /* SNIC_NIC_TOP_H */
