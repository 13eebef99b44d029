/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: XRC (IBTA vol. 1 Annex A14).  Domains
 * (ibv_open_xrcd / ibv_close_xrcd), XRC SRQs (ibv_create_srq_ex with
 * IBV_SRQT_XRC, ibv_get_srq_num), target QPs (ibv_create_qp_ex with
 * IBV_QPT_XRC_RECV, qp.c) and ibv_open_qp.
 *
 * Sharing: a domain is tied to the file behind ibv_open_xrcd's fd; the
 * same file opened again by the same context gives the same domain (the
 * firmware counts the openings).  Another process (another context)
 * asking for a file a domain is tied to gets EOPNOTSUPP: domains, XRC
 * SRQs and target QPs are not shared between processes.  ibv_open_qp
 * therefore finds only the context's own target QPs: it hands out a new
 * handle to one, the QP lives on until every handle is destroyed (the
 * creator's handle refuses destruction with EBUSY while others are open),
 * and its asynchronous events go to the creator's handle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verbs/verbs.h"

struct hd_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t handle;            /* the firmware's                       */
	struct hd_context *ctx;
};

static struct hd_xrcd *to_hd_xrcd(struct ibv_xrcd *x)
{
	return hd_container_of(x, struct hd_xrcd, xrcd);
}

uint32_t hd_xrcd_handle(struct ibv_xrcd *xrcd)
{
	return to_hd_xrcd(xrcd)->handle;
}

/* The firmware's OPEN_XRCD flags for ibv_open_xrcd's fd and oflags (the
 * kernel's rules: both attributes required, O_CREAT and O_EXCL only). */
static int open_args(const struct ibv_xrcd_init_attr *a,
		     struct snic_cmd_open_xrcd *in)
{
	const uint32_t need = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct stat st;

	if ((a->comp_mask & need) != need || (a->oflags & ~(O_CREAT | O_EXCL)))
		return EINVAL;
	memset(in, 0, sizeof(*in));
	if (a->oflags & O_CREAT)
		in->flags |= SNIC_XRCD_F_CREATE;
	if (a->oflags & O_EXCL)
		in->flags |= SNIC_XRCD_F_EXCL;
	if (a->fd == -1) /* a domain of its own */
		return 0;
	if (fstat(a->fd, &st))
		return errno;
	in->flags |= SNIC_XRCD_F_INODE;
	in->dev = (uint64_t)st.st_dev;
	in->ino = (uint64_t)st.st_ino;
	return 0;
}

struct ibv_xrcd *hd_open_xrcd(struct ibv_context *context,
			      struct ibv_xrcd_init_attr *attr)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct snic_cmd_open_xrcd in;
	struct snic_cmd_handle out;
	struct hd_xrcd *x;
	int err = open_args(attr, &in);

	if (err) {
		errno = err;
		return NULL;
	}
	x = hd_cmd_new(ctx, sizeof(*x), SNIC_CMD_OPEN_XRCD, &in, sizeof(in),
		       &out, sizeof(out));
	if (!x)
		return NULL;
	x->xrcd.context = context;
	x->handle = out.handle;
	x->ctx = ctx;
	return &x->xrcd;
}

/* EBUSY while SRQs or target QPs use it (its last opening). */
int hd_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct hd_xrcd *x = to_hd_xrcd(xrcd);
	struct snic_cmd_handle in = { .handle = x->handle };
	int err = hd_cmd(x->ctx, SNIC_CMD_CLOSE_XRCD, &in, sizeof(in), NULL, 0);

	if (err && !hd_fw_gone(err))
		return err;
	free(x);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SRQs of the extended call.                                           */

struct ibv_srq *hd_create_srq_ex(struct ibv_context *context,
				 struct ibv_srq_init_attr_ex *a)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	const uint32_t xrc = IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	enum ibv_srq_type t = (a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
			      ? a->srq_type : IBV_SRQT_BASIC;

	if ((a->comp_mask & ~known) || t == IBV_SRQT_TM) {
		errno = EOPNOTSUPP; /* tag matching */
		return NULL;
	}
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !a->pd ||
	    a->pd->context != context ||
	    (t != IBV_SRQT_BASIC && t != IBV_SRQT_XRC)) {
		errno = EINVAL;
		return NULL;
	}
	if (t == IBV_SRQT_BASIC)
		return hd_srq_create(a->pd, &a->attr, a->srq_context, NULL, NULL);
	if ((a->comp_mask & xrc) != xrc || !a->xrcd || !a->cq ||
	    a->xrcd->context != context || a->cq->context != context) {
		errno = EINVAL;
		return NULL;
	}
	return hd_srq_create(a->pd, &a->attr, a->srq_context, a->xrcd, a->cq);
}

/* The number an XRC initiator names (its remote_srqn / XRCETH). */
int hd_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	struct hd_srq *s = to_hd_srq(srq);

	if (!s->xrc_cq)
		return EINVAL; /* only XRC SRQs are addressed by number */
	*srq_num = s->obj.handle;
	return 0;
}

void hd_xrc_srq_consumed(struct hd_context *ctx, uint32_t srqn)
{
	struct hd_srq *s = atomic_load_explicit(
		&ctx->xsrq_table[SNIC_QPN_IDX(srqn)], memory_order_acquire);

	if (s && s->obj.handle == srqn)
		atomic_fetch_add_explicit(&s->wq.ci, 1, memory_order_release);
}

/* ------------------------------------------------------------------ */
/* ibv_open_qp.                                                         */

struct ibv_qp *hd_open_qp(struct ibv_context *context,
			  struct ibv_qp_open_attr *a)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			      IBV_QP_OPEN_ATTR_TYPE;
	struct hd_context *ctx = to_hd_ctx(context);
	struct hd_qp *orig, *qp;

	if ((a->comp_mask & need) != need ||
	    (a->comp_mask & ~(need | IBV_QP_OPEN_ATTR_CONTEXT)) ||
	    a->qp_type != IBV_QPT_XRC_RECV || !a->xrcd ||
	    a->xrcd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	orig = hd_find_qp(ctx, a->qp_num);
	if (!orig || orig->opened_from || orig->ibqp.qp_type != IBV_QPT_XRC_RECV ||
	    hd_xrcd_handle(orig->xrcd) != hd_xrcd_handle(a->xrcd)) {
		errno = EINVAL; /* no target QP of this domain in this context */
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->opened_from = orig;
	qp->xrcd = a->xrcd;
	qp->obj.ctx = ctx;
	qp->obj.handle = orig->obj.handle;
	qp->ibqp.context = context;
	qp->ibqp.qp_context = (a->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT)
			      ? a->qp_context : NULL;
	qp->ibqp.handle = orig->ibqp.handle;
	qp->ibqp.qp_num = orig->ibqp.qp_num;
	qp->db_core = orig->db_core;
	qp->ibqp.state = orig->ibqp.state;
	qp->ibqp.qp_type = IBV_QPT_XRC_RECV;
	pthread_mutex_init(&qp->ibqp.mutex, NULL);
	pthread_cond_init(&qp->ibqp.cond, NULL);
	atomic_fetch_add(&orig->open_refs, 1);
	return &qp->ibqp;
}

int hd_xrc_qp_close(struct hd_qp *opened)
{
	atomic_fetch_sub(&opened->opened_from->open_refs, 1);
	pthread_mutex_destroy(&opened->ibqp.mutex);
	pthread_cond_destroy(&opened->ibqp.cond);
	free(opened);
	return 0;
}
