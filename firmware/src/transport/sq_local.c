/* SPDX-License-Identifier: MIT */
/*
 * Send-queue work requests that stay on the NIC: BIND_MW and LOCAL_INV
 * (IBTA 10.6.7.2 and 10.6.7.2.3 through objects/mw.c).  Nothing goes on
 * the wire; the requester runs them in SQ order once every older message
 * has completed, so a window is bound before a later WQE's peer can use
 * it and completions stay in order (10.8.3).
 */
#include <stddef.h>
#include <string.h>

#include "transport/transport.h"
#include "wire/be.h"

/* Execute the local WQE in qp->cur: its completion status. */
uint8_t sq_local_exec(struct snic_nic *nic, struct snic_qp *qp)
{
	const struct snic_send_wqe *w = &qp->cur.hdr;
	struct snic_wqe_bind b;

	qp->cur.len = 0;
	if (w->ctrl.opcode == SNIC_WR_LOCAL_INV)
		return mw_invalidate(nic, qp,
				     be32_get((const uint8_t *)&w->ctrl.imm_data))
		       ? SNIC_WC_SUCCESS : SNIC_WC_LOC_QP_OP_ERR; /* as rxe */
	/* the bind's operands sit where raddr and atomic are (hostif.h) */
	memcpy(&b, (const uint8_t *)w + offsetof(struct snic_send_wqe, raddr),
	       sizeof(b));
	return mw_bind(nic, qp, &b, w->ctrl.rsvd0 == SNIC_BIND_TYPE_1);
}
