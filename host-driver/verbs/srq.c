/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: shared receive queues.
 *
 * An SRQ is one window extent (hd_rings): a page with its doorbell record,
 * then the ring of receive WQEs (struct snic_recv_wqe + SGEs), written by
 * the receive-WQE builder QPs use too (wqe.c).  post_srq_recv writes
 * WQEs and store-releases the producer index; the firmware takes WQEs in
 * order and reads the record only when it runs out, so no doorbell is
 * rung.  A slot is free again once its receive has completed: poll_cq
 * counts the receive CQEs of QPs attached to the SRQ (ci).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/verbs.h"

static struct hd_srq *srq_of(struct hd_obj *o)
{
	return hd_container_of(o, struct hd_srq, obj);
}

/* obj_lock held. */
struct hd_srq *hd_find_srq(struct hd_context *ctx, uint32_t srqn)
{
	struct hd_obj *o = hd_obj_find(ctx->srq_list, srqn);

	return o ? srq_of(o) : NULL;
}

static void srq_forget(struct hd_obj *o)
{
	struct hd_srq *s = srq_of(o);

	hd_obj_unlink(&o->ctx->srq_list, o);
	hd_async_purge(o->ctx, o);
	if (s->xrc_cq) { /* under its CQ's lock: no poll_cq still sees it */
		hd_spin_lock(&s->xrc_cq->lock);
		atomic_store_explicit(&o->ctx->xsrq_table[SNIC_QPN_IDX(o->handle)],
				      NULL, memory_order_release);
		hd_spin_unlock(&s->xrc_cq->lock);
	}
}

static void srq_free(struct hd_obj *o)
{
	struct hd_srq *s = srq_of(o);

	free(s);
}

static const struct hd_obj_type srq_obj_type = {
	.kind = HD_OBJ_SRQ,
	.destroy_op = SNIC_CMD_DESTROY_SRQ, /* EBUSY while QPs use it */
	.forget = srq_forget,
	.free = srq_free,
};

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	return hd_srq_create(pd, &attr->attr, attr->srq_context, NULL, NULL);
}

struct ibv_srq *hd_srq_create(struct ibv_pd *pd, struct ibv_srq_attr *a,
			      void *srq_context, struct ibv_xrcd *xrcd,
			      struct ibv_cq *cq)
{
	struct hd_context *ctx = to_hd_ctx(pd->context);
	struct snic_cmd_create_srq in;
	struct hd_srq *s;
	uint32_t wr, stride;
	uint64_t bytes;
	int err;

	/* rdma-core providers: EINVAL beyond the device limits (mlx5,
	 * rxe_srq_chk_init) */
	if (a->max_wr > SNIC_MAX_SRQ_WR || a->max_sge > SNIC_MAX_SGE ||
	    a->srq_limit > a->max_wr) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	wr = a->max_wr ? a->max_wr : 1;
	s->wq.cnt = hd_roundup_pow2(wr + 1); /* srq_limit < max_wr <= cnt - 1 */
	if (s->wq.cnt > SNIC_MAX_SRQ_WR)
		s->wq.cnt = SNIC_MAX_SRQ_WR;
	stride = hd_roundup_pow2(sizeof(struct snic_recv_wqe) +
				 16 * (a->max_sge ? a->max_sge : 1));
	if (stride < 32)
		stride = 32;
	s->wq.log_stride = hd_ilog2(stride);
	s->wq.max_sge = (stride - sizeof(struct snic_recv_wqe)) / 16;
	if (s->wq.max_sge > SNIC_MAX_SGE)
		s->wq.max_sge = SNIC_MAX_SGE;
	bytes = (uint64_t)s->wq.cnt * stride;
	err = hd_obj_rings(&s->obj, &srq_obj_type, ctx, &bytes, 1);
	if (err) {
		free(s);
		errno = err;
		return NULL;
	}
	s->dbrec = s->obj.rings.dbrec;
	s->wq.buf = s->obj.rings.ring[0];
	hd_spin_init(&s->wq.lock);

	memset(&in, 0, sizeof(in));
	in.pdn = pd->handle;
	in.wqe_cnt = s->wq.cnt;
	in.stride_log = s->wq.log_stride;
	in.max_sge = s->wq.max_sge;
	in.srq_limit = a->srq_limit;
	in.ring_pa = s->obj.rings.ring_pa[0];
	in.dbrec_pa = s->obj.rings.dbrec_pa;
	if (xrcd) {
		in.flags = SNIC_SRQ_F_XRC;
		in.xrcd = hd_xrcd_handle(xrcd);
		in.cqn = to_hd_cq(cq)->obj.handle;
		s->xrc_cq = to_hd_cq(cq);
	}
	err = hd_obj_create(&s->obj, SNIC_CMD_CREATE_SRQ, &in, sizeof(in));
	if (err) {
		errno = err;
		return NULL;
	}
	s->ibsrq.context = pd->context;
	s->ibsrq.srq_context = srq_context;
	s->ibsrq.pd = pd;
	s->ibsrq.handle = s->obj.handle;
	s->ibsrq.events_completed = 0;
	hd_obj_events(&s->obj, &s->ibsrq.mutex, &s->ibsrq.cond,
		      &s->ibsrq.events_completed, NULL);
	/* the actual capacities (what fits the ring and the stride) */
	a->max_wr = s->wq.cnt - 1;
	a->max_sge = s->wq.max_sge;
	pthread_mutex_lock(&ctx->obj_lock);
	hd_obj_link(&ctx->srq_list, &s->obj);
	if (xrcd)
		atomic_store_explicit(&ctx->xsrq_table[SNIC_QPN_IDX(s->obj.handle)],
				      s, memory_order_release);
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("SRQ 0x%x: %u x %u B, sge %u\n", s->obj.handle, s->wq.cnt, stride,
	       s->wq.max_sge);
	return &s->ibsrq;
}

int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct hd_srq *s = to_hd_srq(ibsrq);
	struct snic_cmd_modify_srq in;

	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP; /* resizing: not supported (README) */
	if (mask & ~(int)IBV_SRQ_LIMIT)
		return EINVAL;
	memset(&in, 0, sizeof(in));
	in.srqn = s->obj.handle;
	in.attr_mask = (uint32_t)mask;
	in.srq_limit = attr->srq_limit;
	return hd_cmd(s->obj.ctx, SNIC_CMD_MODIFY_SRQ, &in, sizeof(in), NULL, 0);
}

int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct hd_srq *s = to_hd_srq(ibsrq);
	struct snic_cmd_handle in = { .handle = s->obj.handle };
	struct snic_srq_attr out;
	int err;

	err = hd_cmd(s->obj.ctx, SNIC_CMD_QUERY_SRQ, &in, sizeof(in), &out, sizeof(out));
	if (err)
		return err;
	attr->max_wr = out.max_wr - 1;
	attr->max_sge = out.max_sge;
	attr->srq_limit = out.srq_limit;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	return hd_obj_destroy(&to_hd_srq(ibsrq)->obj);
}

int hd_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct hd_srq *s = to_hd_srq(ibsrq);
	uint32_t pi;
	int err;

	hd_spin_lock(&s->wq.lock);
	pi = s->wq.pi;
	/* at most cnt - 1 outstanding: srq_limit < max_wr = cnt - 1 */
	err = hd_wq_post_recv(&s->wq, s->wq.cnt - 1, wr, bad_wr);
	if (pi != s->wq.pi)
		/* the WQEs before the producer index; the firmware reads it
		 * when it runs out, no doorbell needed */
		atomic_store_explicit(&s->dbrec->pi, s->wq.pi,
				      memory_order_release);
	hd_spin_unlock(&s->wq.lock);
	return err;
}
