/* SPDX-License-Identifier: MIT */
/* The CM router (cm_router.c): QP1 and the routing of CM MADs. */
#ifndef SNIC_NIC_CM_H
#define SNIC_NIC_CM_H

#include "transport/transport.h"

/* A command SNIC_CMD_CM_*; returns an enum snic_status. */
int cm_cmd(struct snic_nic *nic, unsigned ctx, uint16_t op,
	   const uint8_t *in, uint8_t *out);
/* A RoCEv2 packet for QP1. */
void cm_rx(struct snic_nic *nic, const struct roce_hdrs *h);
/* The context is going away: its armed MADs go out, its listeners and
 * queued MADs are dropped. */
void cm_ctx_gone(struct snic_nic *nic, unsigned ctx);
/* Listeners and armed connections into the statistics area (stats.c,
 * inside its seqlock). */
void cm_stats(struct snic_nic *nic, struct snic_stats *st);

#endif /* SNIC_NIC_CM_H */
