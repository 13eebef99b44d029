/* SPDX-License-Identifier: MIT */
/*
 * Connection sets: the in-flight window, responder resources and retained
 * SGEs (struct snic_qp_conn, 16 KiB) of a QP that is out of RESET.  An idle
 * QP (created, in RESET) holds none, so the NIC can have many more QPs
 * than connections.  A QP takes a set when it leaves RESET and gives it
 * back when it returns to RESET or is destroyed; with all SNIC_QP_CONNS in
 * use, MODIFY_QP out of RESET fails with NOMEM (ENOMEM) and the QP stays
 * in RESET.  Taking and giving are O(1): sets never handed out are above
 * conn_hw, returned ones on a free stack.
 */
#include <string.h>

#include "objects/objects.h"

_Static_assert(SNIC_QP_CONNS <= 0xffff, "conn index + 1 in a uint16_t");

static void qp_conn_attach(struct snic_qp *qp, struct snic_qp_conn *c)
{
	qp->infl = c ? c->infl : NULL;
	qp->resp.rd = c ? c->rd : NULL;
	qp->retain = c ? c->retain : NULL;
}

bool qp_conn_take(struct snic_nic *nic, struct snic_qp *qp)
{
	uint32_t i;

	if (qp->conn)
		return true;
	if (nic->sh->conn_nfree)
		i = nic->conn_free[--nic->sh->conn_nfree];
	else if (nic->sh->conn_hw < SNIC_QP_CONNS)
		i = nic->sh->conn_hw++;
	else
		return false;
	qp->conn = (uint16_t)(i + 1);
	nic->sh->ctx_conns[qp->ctx]++; /* its quota (objects/quota.c) */
	/* no responder resource of the set's last owner: rd_find would match
	 * a duplicate against it, rd_new would unpend it (its counts were
	 * reset with the QP's responder state) */
	memset(nic->conns[i].rd, 0, sizeof(nic->conns[i].rd));
	qp_conn_attach(qp, &nic->conns[i]);
	return true;
}

void qp_conn_give(struct snic_nic *nic, struct snic_qp *qp)
{
	if (!qp->conn)
		return;
	nic->conn_free[nic->sh->conn_nfree++] = (uint16_t)(qp->conn - 1);
	nic->sh->ctx_conns[qp->ctx]--;
	qp->conn = 0;
	qp_conn_attach(qp, NULL);
}
