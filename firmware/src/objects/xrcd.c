/* SPDX-License-Identifier: MIT */
/*
 * XRC domains and what lives in them (IBTA vol. 1 Annex A14, XRC): the
 * domain objects of OPEN_XRCD / CLOSE_XRCD, the XRC SRQs (an SRQ bound
 * to a domain and to the CQ its RECVs complete on), and the XRC_RECV
 * (target) QPs, which have no PD, CQ or receive queue of their own: each
 * request names, in its XRCETH, the XRC SRQ it takes its RECV from, and
 * that SRQ must be in the target's domain (xrc_recv_bind).  The wire side
 * is transport/xrc.c; hostif.h "XRC" has the host's view.
 */
#include "objects/objects.h"

static struct snic_xrcd *xrcd_lookup(struct snic_nic *nic, unsigned ctx,
				     uint32_t xrcdn, uint32_t *idx)
{
	return OBJ_LOOKUP(nic->xrcds, ctx, xrcdn, idx);
}

/* The domain tied to the file (dev, ino), in any context, or NULL. */
static struct snic_xrcd *xrcd_of_inode(struct snic_nic *nic, uint64_t dev,
				       uint64_t ino, uint32_t *idx)
{
	for (uint32_t i = 0; i < SNIC_MAX_XRCD; i++) {
		struct snic_xrcd *x = &nic->xrcds[i];

		if (x->in_use && x->inode && x->dev == dev && x->ino == ino) {
			*idx = i;
			return x;
		}
	}
	return NULL;
}

/* ibv_open_xrcd's rules for the file (xrcd(7) in rdma-core's terms):
 * the same file gives the same domain; O_CREAT makes one, O_EXCL wants
 * a new one.  Sharing with another context is not implemented. */
int xrcd_open(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_open_xrcd *in, uint32_t *xrcdn)
{
	const uint32_t known = SNIC_XRCD_F_INODE | SNIC_XRCD_F_CREATE |
			       SNIC_XRCD_F_EXCL;
	bool inode = in->flags & SNIC_XRCD_F_INODE;
	struct snic_xrcd *x = NULL;
	uint32_t i = 0;

	if (in->flags & ~known)
		return SNIC_ST_INVAL;
	if (inode)
		x = xrcd_of_inode(nic, in->dev, in->ino, &i);
	if (x) {
		if (x->ctx != ctx)
			return SNIC_ST_NOTSUP;
		if (in->flags & SNIC_XRCD_F_EXCL)
			return SNIC_ST_INVAL; /* the kernel's answer to O_EXCL */
		x->opens++;
		*xrcdn = obj_handle(&x->obj, i);
		return SNIC_ST_OK;
	}
	if (inode && !(in->flags & SNIC_XRCD_F_CREATE))
		return SNIC_ST_NOENT;
	i = OBJ_FREE_SLOT(nic->xrcds);
	if (i == SNIC_MAX_XRCD)
		return SNIC_ST_NOMEM;
	x = &nic->xrcds[i];
	obj_claim(x, sizeof(*x), ctx);
	x->inode = inode;
	x->dev = in->dev;
	x->ino = in->ino;
	x->opens = 1;
	*xrcdn = obj_handle(&x->obj, i);
	return SNIC_ST_OK;
}

/* The last close destroys the domain: BUSY while SRQs or QPs use it. */
int xrcd_close(struct snic_nic *nic, unsigned ctx, uint32_t xrcdn)
{
	struct snic_xrcd *x = xrcd_lookup(nic, ctx, xrcdn, NULL);

	if (!x)
		return SNIC_ST_NOENT;
	if (x->opens > 1) {
		x->opens--;
		return SNIC_ST_OK;
	}
	return obj_release(&x->obj);
}

/* The context is gone (its SRQs and QPs first, nic/cmd.c). */
void xrcd_ctx_gone(struct snic_nic *nic, unsigned ctx)
{
	for (uint32_t i = 0; i < SNIC_MAX_XRCD; i++)
		if (nic->xrcds[i].in_use && nic->xrcds[i].ctx == ctx)
			nic->xrcds[i].in_use = false;
}

/* ---------------------------------------------------------------------- */
/* XRC SRQs.                                                                */

int xrc_srq_bind(struct snic_nic *nic, unsigned ctx, struct snic_srq *s,
		 const struct snic_cmd_create_srq *in)
{
	uint32_t xi, ci;

	if (!xrcd_lookup(nic, ctx, in->xrcd, &xi) ||
	    !cq_lookup(nic, ctx, in->cqn, &ci))
		return SNIC_ST_NOENT;
	s->xrc = true;
	s->xrcd = (uint16_t)xi;
	s->cq = ci;
	nic->xrcds[xi].refs++;
	nic->cqs[ci].refs++;
	return SNIC_ST_OK;
}

/* A target QP bound to this SRQ by its last request lets go of it: a
 * message half received there is lost (its next packets are out of
 * sequence and NAKed), and no completion goes to the SRQ's CQ, which may
 * go away now. */
void xrc_srq_release(struct snic_nic *nic, uint32_t srq_idx)
{
	struct snic_srq *s = &nic->srqs[srq_idx];

	for (uint32_t i = 0; i < nic->sh->qp_hw; i++) { /* none above */
		struct snic_qp *qp = &nic->qps[i];

		if (qp->in_use && qp->type == SNIC_QPT_XRC_RECV &&
		    qp->srq == srq_idx) {
			qp->resp.in_send = false;
			qp->srq = 0;
			qp->rcq = 0;
			qp->has_srq = false;
		}
	}
	nic->xrcds[s->xrcd].refs--;
	nic->cqs[s->cq].refs--;
}

/* ---------------------------------------------------------------------- */
/* XRC_RECV (target) QPs.                                                   */

int xrc_recv_qp_create(struct snic_nic *nic, unsigned ctx,
		       const struct snic_cmd_create_qp_ext *in, uint32_t *qpn)
{
	uint32_t xi;
	int st = qp_create_args_ok(nic, ctx, &in->qp);

	if (st)
		return st;
	if (!xrcd_lookup(nic, ctx, in->xrcd, &xi))
		return SNIC_ST_NOENT;
	struct snic_qp *qp = qp_claim(nic, ctx, &in->qp, -1);

	if (!qp)
		return SNIC_ST_NOMEM;
	/* No SRQ until a request names one: has_srq stays false, and
	 * nothing completes before then (transport/xrc.c binds first). */
	qp->xrcd = (uint16_t)xi;
	nic->xrcds[xi].refs++;
	*qpn = qp->qpn;
	return SNIC_ST_OK;
}

void xrc_recv_qp_release(struct snic_nic *nic, struct snic_qp *qp)
{
	nic->xrcds[qp->xrcd].refs--;
	qp->has_srq = false;
}

/* Annex A14: the XRC SRQ must exist and be in the target QP's domain.
 * An SRQ number that names nothing is a malformed request (NAK invalid
 * request); an SRQ of another domain is one this QP may not reach, as a
 * foreign R_Key (NAK remote access error).  The SRQ's PD then stands
 * for the QP's in every check of the request (RECV SGEs, R_Keys), and
 * its CQ takes the completion. */
int xrc_recv_bind(struct snic_nic *nic, struct snic_qp *qp, uint32_t srqn)
{
	uint32_t si = handle_idx(srqn);
	/* the index is the wire's: no slot address before it is checked */
	struct snic_srq *s = si < SNIC_MAX_SRQ ? &nic->srqs[si] : NULL;

	if (!s || !s->in_use || !s->xrc || obj_handle(&s->obj, si) != srqn ||
	    /* the packets of one message go to one SRQ */
	    (qp->resp.in_send && qp->has_srq && qp->srq != si)) {
		CNT_INC(&nic->core, xrc_bad_srq);
		return ROCE_NAK_INVALID_REQ;
	}
	if (s->xrcd != qp->xrcd || s->ctx != qp->ctx) {
		CNT_INC(&nic->core, xrc_bad_srq);
		return ROCE_NAK_REM_ACCESS;
	}
	qp->has_srq = true;
	qp->srq = (uint16_t)si;
	qp->pd = s->pd;
	qp->rcq = s->cq;
	return SNIC_WC_SUCCESS;
}
