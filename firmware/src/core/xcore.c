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
