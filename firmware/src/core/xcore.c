/* SPDX-License-Identifier: MIT */
/* Messages between a NIC's cores (core/xcore.h). */
#include "core/core.h"

bool core_xc_send(struct snic_core *c, unsigned to,
		  const struct snic_xc_msg *m)
{
	if (xc_ring_push(c->xc->msg[c->core_id][to], m, 1))
		return true;
	CNT_INC(c, xcore_ring_full);
	return false;
}

/* A message that must not be lost (a CQE, an event): a full ring is
 * counted once, then we wait for the receiver to make room. */
void core_xc_send_wait(struct snic_core *c, unsigned to,
		       const struct snic_xc_msg *m)
{
	struct snic_xc_ring *r = c->xc->msg[c->core_id][to];

	if (xc_ring_push(r, m, 1))
		return;
	CNT_INC(c, xcore_ring_full);
	do
		c->xc->ring_wait(c->xc, c->core_id, to);
	while (!xc_ring_push(r, m, 1));
}
