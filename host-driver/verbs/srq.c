/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: shared receive queues.
 *
 * An SRQ is one window extent: a page with its doorbell record, then the
 * ring of receive WQEs (struct snic_recv_wqe + SGEs).  post_srq_recv writes
 * WQEs and store-releases the producer index; the firmware takes WQEs in
 * order and reads the record only when it runs out, so no doorbell is
 * rung.  A slot is free again once its receive has completed: poll_cq
 * counts the receive CQEs of QPs attached to the SRQ (ci).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* obj_lock held. */
struct hd_srq *hd_find_srq(struct hd_context *ctx, uint32_t srqn)
{
	for (struct hd_srq *s = ctx->srq_list; s; s = s->next)
		if (s->srqn == srqn)
			return s;
	return NULL;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct hd_context *ctx = to_hd_ctx(pd->context);
	struct snic_cmd_create_srq in;
	struct snic_cmd_handle out;
	struct hd_srq *s;
	uint32_t wr, stride, ring_pages;
	int err;

	/* rdma-core providers: EINVAL beyond the device limits (mlx5,
	 * rxe_srq_chk_init) */
	if (attr->attr.max_wr > SNIC_MAX_SRQ_WR ||
	    attr->attr.max_sge > SNIC_MAX_SGE ||
	    attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	wr = attr->attr.max_wr ? attr->attr.max_wr : 1;
	s->cnt = hd_roundup_pow2(wr + 1); /* srq_limit < max_wr <= cnt - 1 */
	if (s->cnt > SNIC_MAX_SRQ_WR)
		s->cnt = SNIC_MAX_SRQ_WR;
	stride = hd_roundup_pow2(sizeof(struct snic_recv_wqe) +
				   16 * (attr->attr.max_sge ? attr->attr.max_sge : 1));
	if (stride < 32)
		stride = 32;
	s->log_stride = hd_ilog2(stride);
	s->max_sge = (stride - sizeof(struct snic_recv_wqe)) / 16;
	if (s->max_sge > SNIC_MAX_SGE)
		s->max_sge = SNIC_MAX_SGE;
	ring_pages = (uint32_t)(((uint64_t)s->cnt * stride + SNIC_PAGE_SIZE - 1) >>
				SNIC_PAGE_SHIFT);
	s->ext_npages = 1 + ring_pages;
	err = hd_hm_alloc(ctx->hm, s->ext_npages, 1, &s->ext_page);
	if (err) {
		free(s);
		errno = err;
		return NULL;
	}
	s->ctx = ctx;
	s->dbrec = hd_hm_ptr(ctx->hm, hd_page_pa(s->ext_page));
	s->ring = hd_hm_ptr(ctx->hm, hd_page_pa(s->ext_page + 1));
	pthread_spin_init(&s->lock, PTHREAD_PROCESS_PRIVATE);

	memset(&in, 0, sizeof(in));
	in.pdn = pd->handle;
	in.wqe_cnt = s->cnt;
	in.stride_log = s->log_stride;
	in.max_sge = s->max_sge;
	in.srq_limit = attr->attr.srq_limit;
	in.ring_pa = hd_page_pa(s->ext_page + 1);
	in.dbrec_pa = hd_page_pa(s->ext_page);
	err = hd_cmd(ctx, SNIC_CMD_CREATE_SRQ, &in, sizeof(in), &out, sizeof(out));
	if (err) {
		if (!hd_fw_gone(err))
			hd_hm_free(ctx->hm, s->ext_page, s->ext_npages);
		pthread_spin_destroy(&s->lock);
		free(s);
		errno = err;
		return NULL;
	}
	s->srqn = out.handle;
	s->ibsrq.context = pd->context;
	s->ibsrq.srq_context = attr->srq_context;
	s->ibsrq.pd = pd;
	s->ibsrq.handle = out.handle;
	pthread_mutex_init(&s->ibsrq.mutex, NULL);
	pthread_cond_init(&s->ibsrq.cond, NULL);
	s->ibsrq.events_completed = 0;
	/* the actual capacities (what fits the ring and the stride) */
	attr->attr.max_wr = s->cnt - 1;
	attr->attr.max_sge = s->max_sge;
	pthread_mutex_lock(&ctx->obj_lock);
	s->next = ctx->srq_list;
	ctx->srq_list = s;
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("SRQ 0x%x: %u x %u B, sge %u\n", s->srqn, s->cnt, stride, s->max_sge);
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
	in.srqn = s->srqn;
	in.attr_mask = (uint32_t)mask;
	in.srq_limit = attr->srq_limit;
	return hd_cmd(s->ctx, SNIC_CMD_MODIFY_SRQ, &in, sizeof(in), NULL, 0);
}

int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct hd_srq *s = to_hd_srq(ibsrq);
	struct snic_cmd_handle in = { .handle = s->srqn };
	struct snic_srq_attr out;
	int err;

	err = hd_cmd(s->ctx, SNIC_CMD_QUERY_SRQ, &in, sizeof(in), &out, sizeof(out));
	if (err)
		return err;
	attr->max_wr = out.max_wr - 1;
	attr->max_sge = out.max_sge;
	attr->srq_limit = out.srq_limit;
	return 0;
}

static void srq_unlink(struct hd_context *ctx, struct hd_srq *s)
{
	struct hd_srq **pp = &ctx->srq_list;

	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct hd_srq *s = to_hd_srq(ibsrq);
	struct hd_context *ctx = s->ctx;
	struct snic_cmd_handle in = { .handle = s->srqn };
	int err;

	/* EBUSY while QPs use it */
	err = hd_cmd(ctx, SNIC_CMD_DESTROY_SRQ, &in, sizeof(in), NULL, 0);
	if (err && !hd_fw_gone(err))
		return err;
	pthread_mutex_lock(&ctx->obj_lock);
	srq_unlink(ctx, s);
	hd_async_purge(ctx, ibsrq, 2);
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_wait_events_acked(&ibsrq->mutex, &ibsrq->cond,
			       &ibsrq->events_completed, s->async_events_got);
	if (!err)
		hd_hm_free(ctx->hm, s->ext_page, s->ext_npages);
	pthread_spin_destroy(&s->lock);
	pthread_mutex_destroy(&ibsrq->mutex);
	pthread_cond_destroy(&ibsrq->cond);
	free(s);
	return 0;
}

void hd_srq_free_leftover(struct hd_srq *s)
{
	hd_hm_free(s->ctx->hm, s->ext_page, s->ext_npages);
	pthread_spin_destroy(&s->lock);
	free(s);
}

int hd_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct hd_srq *s = to_hd_srq(ibsrq);
	uint32_t pi, ci, mask = s->cnt - 1;
	int err = 0;

	pthread_spin_lock(&s->lock);
	pi = s->pi;
	ci = atomic_load_explicit(&s->ci, memory_order_acquire);
	for (; wr; wr = wr->next) {
		struct snic_recv_wqe *w;
		struct snic_wqe_sge *sge;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > s->max_sge) {
			err = EINVAL;
			break;
		}
		if (pi - ci >= s->cnt - 1) {
			ci = atomic_load_explicit(&s->ci, memory_order_acquire);
			if (pi - ci >= s->cnt - 1) {
				err = ENOMEM;
				break;
			}
		}
		w = (struct snic_recv_wqe *)(void *)(s->ring + ((pi & mask) << s->log_stride));
		sge = (struct snic_wqe_sge *)(void *)(w + 1);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->rsvd = 0;
		for (int i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		pi++;
	}
	if (err)
		*bad_wr = wr;
	if (pi != s->pi) {
		s->pi = pi;
		/* the WQEs before the producer index; the firmware reads it
		 * when it runs out, no doorbell needed */
		atomic_store_explicit(&s->dbrec->pi, pi, memory_order_release);
	}
	pthread_spin_unlock(&s->lock);
	return err;
}
