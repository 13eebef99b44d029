/* SPDX-License-Identifier: MIT */
/*
 * snic host driver: completion queues, polled with ibv_poll_cq or, for
 * CQs from ibv_create_cq_ex, ibv_start_poll / ibv_next_poll / ibv_end_poll.
 *
 * A CQ is one window extent (hd_rings): a page holding its doorbell
 * record, then the ring of 64-byte CQEs.  The firmware writes CQE number n
 * with owner bit ((n / cnt) & 1) ^ 1; poll_cq accepts the CQE at ci when
 * its owner bit has that value for ci, and publishes ci in the doorbell
 * record.
 */
#include <errno.h>
#include <stdlib.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include "verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* CQ objects.                                                          */

static struct hd_cq *cq_of(struct hd_obj *o)
{
	return hd_container_of(o, struct hd_cq, obj);
}

/* obj_lock held. */
struct hd_cq *hd_find_cq(struct hd_context *ctx, uint32_t cqn)
{
	struct hd_obj *o = hd_obj_find(ctx->cq_list, cqn);

	return o ? cq_of(o) : NULL;
}

static void cq_forget(struct hd_obj *o)
{
	struct hd_cq *cq = cq_of(o);

	hd_obj_unlink(&o->ctx->cq_list, o);
	hd_async_purge(o->ctx, o);
	if (cq->ibcq.channel)
		hd_channel_detach_cq(to_hd_chan(cq->ibcq.channel), cq);
}

static void cq_free(struct hd_obj *o)
{
	struct hd_cq *cq = cq_of(o);

	free(cq);
}

static const struct hd_obj_type cq_obj_type = {
	.kind = HD_OBJ_CQ,
	.destroy_op = SNIC_CMD_DESTROY_CQ, /* EBUSY while QPs use it */
	.forget = cq_forget,
	.free = cq_free,
};

static struct hd_cq *cq_create(struct ibv_context *context, int cqe,
			       void *cq_context, struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct hd_context *ctx = to_hd_ctx(context);
	struct snic_cmd_create_cq in;
	struct hd_cq *cq;
	uint64_t bytes;
	uint32_t cnt;
	int err;

	if (cqe < 1 || (uint32_t)cqe >= SNIC_MAX_CQE ||
	    comp_vector < 0 || comp_vector >= context->num_comp_vectors ||
	    (channel && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	cnt = hd_roundup_pow2((uint32_t)cqe + 1);
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	bytes = (uint64_t)cnt * sizeof(struct snic_cqe);
	err = hd_obj_rings(&cq->obj, &cq_obj_type, ctx, &bytes, 1);
	if (err) {
		free(cq);
		errno = err;
		return NULL;
	}
	cq->cnt = cnt;
	cq->log_cnt = hd_ilog2(cnt);
	cq->dbrec = cq->obj.rings.dbrec;
	cq->ring = (struct snic_cqe *)(void *)cq->obj.rings.ring[0];
	hd_spin_init(&cq->lock);

	memset(&in, 0, sizeof(in));
	in.ring_pa = cq->obj.rings.ring_pa[0];
	in.dbrec_pa = cq->obj.rings.dbrec_pa;
	in.cqe_cnt = cnt;
	err = hd_obj_create(&cq->obj, SNIC_CMD_CREATE_CQ, &in, sizeof(in));
	if (err) {
		errno = err;
		return NULL;
	}
	cq->ibcq.context = context;
	cq->ibcq.channel = channel;
	cq->ibcq.cq_context = cq_context;
	cq->ibcq.handle = cq->obj.handle;
	cq->ibcq.cqe = (int)(cnt - 1);
	hd_obj_events(&cq->obj, &cq->ibcq.mutex, &cq->ibcq.cond,
		      &cq->ibcq.async_events_completed,
		      &cq->ibcq.comp_events_completed);
	if (channel) {
		struct hd_channel *ch = to_hd_chan(channel);

		pthread_mutex_lock(&ch->lock);
		channel->refcnt++;
		pthread_mutex_unlock(&ch->lock);
	}
	pthread_mutex_lock(&ctx->obj_lock);
	hd_obj_link(&ctx->cq_list, &cq->obj);
	pthread_mutex_unlock(&ctx->obj_lock);
	hd_dbg("CQ 0x%x: %u entries\n", cq->obj.handle, cnt);
	return cq;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
			     void *cq_context, struct ibv_comp_channel *channel,
			     int comp_vector)
{
	struct hd_cq *cq = cq_create(context, cqe, cq_context, channel,
				     comp_vector);

	return cq ? &cq->ibcq : NULL;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	return hd_obj_destroy(&to_hd_cq(ibcq)->obj);
}

/* Resizing: a new extent (doorbell record and ring); RESIZE_CQ moves the
 * CQEs not yet polled to its first entries and starts its record at ci 0
 * with our arm state.  The CQ lock is held across the command, so neither
 * our ci nor the old ring changes under the firmware (hostif.h). */
int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct hd_cq *cq = to_hd_cq(ibcq);
	struct hd_context *ctx = cq->obj.ctx;
	struct snic_cmd_resize_cq in;
	struct snic_cmd_handle out;
	struct hd_rings nr, old;
	uint64_t bytes;
	uint32_t cnt;
	int err;

	if (cqe < 1 || (uint32_t)cqe >= SNIC_MAX_CQE)
		return EINVAL;
	cnt = hd_roundup_pow2((uint32_t)cqe + 1);
	bytes = (uint64_t)cnt * sizeof(struct snic_cqe);
	err = hd_rings_alloc(&nr, ctx->hm, &bytes, 1);
	if (err)
		return err;
	memset(&in, 0, sizeof(in));
	in.cqn = cq->obj.handle;
	in.cqe_cnt = cnt;
	in.ring_pa = nr.ring_pa[0];
	in.dbrec_pa = nr.dbrec_pa;
	hd_spin_lock(&cq->lock);
	err = hd_cmd(ctx, SNIC_CMD_RESIZE_CQ, &in, sizeof(in), &out, sizeof(out));
	if (err) {
		hd_spin_unlock(&cq->lock);
		hd_extent_release(&nr.ext, err);
		hd_dbg("resize_cq 0x%x to %u failed: %s\n", cq->obj.handle, cnt,
		       strerror(err));
		return err;
	}
	old = cq->obj.rings;
	cq->obj.rings = nr;
	cq->ring = (struct snic_cqe *)(void *)nr.ring[0];
	cq->dbrec = nr.dbrec;
	cq->cnt = cnt;
	cq->log_cnt = hd_ilog2(cnt);
	cq->ci = 0;
	cq->cur = NULL;
	ibcq->cqe = (int)(cnt - 1);
	hd_spin_unlock(&cq->lock);
	hd_extent_release(&old.ext, 0);
	hd_dbg("CQ 0x%x: resized to %u entries, %u CQEs moved\n",
	       cq->obj.handle, cnt, out.handle);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Polling.                                                             */

static inline struct snic_cqe *cqe_at(struct hd_cq *cq, uint32_t idx)
{
	return &cq->ring[idx & (cq->cnt - 1)];
}

static inline uint8_t owner_for(struct hd_cq *cq, uint32_t idx)
{
	return (uint8_t)(((idx >> cq->log_cnt) & 1) ^ 1);
}

/* Acquire-load of the owner byte: the rest of the CQE is read after it. */
static inline int cqe_valid(struct hd_cq *cq, uint32_t idx)
{
	struct snic_cqe *c = cqe_at(cq, idx);

	return (__atomic_load_n(&c->owner, __ATOMIC_ACQUIRE) & 1) ==
	       owner_for(cq, idx);
}

/* A CQE was read: its WQE's ring slot is free again (CQ lock held). */
static void cqe_consume(struct hd_cq *cq, const struct snic_cqe *c)
{
	struct hd_qp *qp = hd_find_qp(cq->obj.ctx, c->qp_num);

	if (c->xrc) { /* a RECV of an XRC SRQ: its slot is free again */
		hd_xrc_srq_consumed(cq->obj.ctx, c->xrc_srqn);
		qp = NULL;
	}
	if (qp) {
		if (c->is_send)
			hd_qp_sq_complete(qp, c->wqe_idx);
		else if (qp->srq) /* one SRQ slot is free again */
			atomic_fetch_add_explicit(&qp->srq->wq.ci, 1,
						  memory_order_release);
		else
			atomic_fetch_add_explicit(&qp->rq.ci, 1,
						  memory_order_release);
	}
	cq->ci++;
}

/* Up to ne CQEs into wc; CQ lock held.  Out of line: poll_cq's empty
 * answer then saves no registers for it. */
static __attribute__((noinline)) int cq_take_locked(struct hd_cq *cq, int ne, struct ibv_wc *wc)
{
	int n = 0;

	while (n < ne && cqe_valid(cq, cq->ci)) {
		const struct snic_cqe *c = cqe_at(cq, cq->ci);
		struct ibv_wc *w = &wc[n];

		w->wr_id = c->wr_id;
		w->status = (enum ibv_wc_status)c->status;
		w->opcode = (enum ibv_wc_opcode)c->opcode;
		w->vendor_err = c->vendor_err;
		w->byte_len = c->byte_len;
		w->imm_data = c->imm_data;      /* already network order */
		if (c->wc_flags & IBV_WC_WITH_INV) /* the IETH's, host order */
			w->invalidated_rkey = be32toh(c->imm_data);
		w->qp_num = c->qp_num;
		w->src_qp = c->src_qp;
		w->wc_flags = c->wc_flags;
		w->pkey_index = c->pkey_index;
		w->slid = c->slid;
		w->sl = c->sl;
		w->dlid_path_bits = c->dlid_path_bits;
		cqe_consume(cq, c);
		n++;
	}
	if (n) {
		atomic_store_explicit(&cq->dbrec->ci, cq->ci,
				      memory_order_release);
		cq->empty_polls = 0;
	}
	return n;
}

/*
 * The emulated NIC runs on the host's own cores: an application spinning
 * on an empty CQ would starve the very firmware it waits for (2 cores, 3
 * busy threads: milliseconds per message).  Every so many empty polls,
 * give the core away once, and then look again: a caller acts on "empty"
 * (ofi_rxm then reads its CM events, and on a disconnect destroys the QP
 * with whatever it has not polled), so the answer must not be a time
 * slice old (README "libfabric (verbs provider)").  A hardware NIC would
 * not need this; it costs a busy poller nothing while CQEs flow.  CQ lock
 * held; returns with it held.
 */
static bool cq_yield_locked(struct hd_cq *cq)
{
	if (++cq->empty_polls % HD_EMPTY_POLLS_YIELD != 0)
		return false;
	hd_spin_unlock(&cq->lock);
	sched_yield();
	hd_spin_lock(&cq->lock);
	return true;
}

int hd_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct hd_cq *cq = to_hd_cq(ibcq);
	int n;

	hd_spin_lock(&cq->lock);
	/* A busy poller mostly finds the CQ empty (perftest polls after
	 * every post): that answer is one look at the owner byte, without
	 * the take loop's call. */
	if (cqe_valid(cq, cq->ci) ||
	    (cq_yield_locked(cq) && cqe_valid(cq, cq->ci)))
		n = cq_take_locked(cq, ne, wc);
	else
		n = 0;
	hd_spin_unlock(&cq->lock);
	return n;
}

int hd_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct hd_cq *cq = to_hd_cq(ibcq);

	atomic_store_explicit(&cq->dbrec->arm_solicited, solicited_only ? 1 : 0,
			      memory_order_relaxed);
	/*
	 * Dekker-style handshake with the firmware, which writes a CQE,
	 * fences, then reads arm_sn to decide whether to raise an event.
	 * This seq_cst RMW orders the arm before the application's next
	 * poll of the ring: either the firmware sees the new arm_sn (and
	 * raises the event) or the poll after arming sees the CQE.
	 */
	atomic_fetch_add_explicit(&cq->dbrec->arm_sn, 1, memory_order_seq_cst);
	return 0;
}

/*
 * Drop the CQEs of `qpn` still in the ring (destroy_qp, modify to RESET),
 * like mlx5's __mlx5_cq_clean: walk the valid CQEs from the newest back to
 * ci, move the survivors up over the removed ones (keeping each
 * destination's owner bit), then advance ci by the number removed.  The
 * firmware only writes beyond the last valid CQE, so it never races with
 * the slots moved here.  CQ lock held.
 */
void hd_cq_clean_locked(struct hd_cq *cq, uint32_t qpn)
{
	uint32_t nvalid = 0, nfreed = 0;

	while (nvalid < cq->cnt && cqe_valid(cq, cq->ci + nvalid))
		nvalid++;
	for (uint32_t i = cq->ci + nvalid; i-- != cq->ci;) {
		struct snic_cqe *c = cqe_at(cq, i);

		if (c->qp_num == qpn) {
			nfreed++;
			/* mlx5 drops these silently; an application that
			 * destroys a QP before polling loses them (SNIC_DEBUG
			 * says which, to tell that from a lost CQE) */
			hd_dbg("cq %p: QP %u gone, unpolled %s CQE dropped "
			       "(status %u, opcode %u, %u bytes)\n", (void *)cq,
			       qpn, c->is_send ? "send" : "receive", c->status,
			       c->opcode, c->byte_len);
		} else if (nfreed) {
			struct snic_cqe *d = cqe_at(cq, i + nfreed);

			memcpy(d, c, offsetof(struct snic_cqe, owner));
		}
	}
	if (nfreed) {
		cq->ci += nfreed;
		atomic_store_explicit(&cq->dbrec->ci, cq->ci,
				      memory_order_release);
	}
}

/* ------------------------------------------------------------------ */
/* Extended CQs (ibv_create_cq_ex): the standard work-completion fields.
 * start_poll takes the CQ lock and keeps it until end_poll (as mlx5);
 * when it finds nothing it releases it and returns ENOENT.             */

static inline struct hd_cq *cqx(struct ibv_cq_ex *c)
{
	return hd_container_of(c, struct hd_cq, ibcq_ex);
}

static void cqx_load(struct hd_cq *cq)
{
	cq->cur = cqe_at(cq, cq->ci);
	cq->ibcq_ex.status = (enum ibv_wc_status)cq->cur->status;
	cq->ibcq_ex.wr_id = cq->cur->wr_id;
}

static int cqx_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct hd_cq *cq = cqx(ibcq);

	if (attr && attr->comp_mask)
		return EINVAL;
	hd_spin_lock(&cq->lock);
	if (cqe_valid(cq, cq->ci) || (cq_yield_locked(cq) && cqe_valid(cq, cq->ci))) {
		cq->empty_polls = 0;
		cqx_load(cq);
		return 0;
	}
	cq->cur = NULL;
	hd_spin_unlock(&cq->lock);
	return ENOENT;
}

static int cqx_next_poll(struct ibv_cq_ex *ibcq)
{
	struct hd_cq *cq = cqx(ibcq);

	if (cq->cur)
		cqe_consume(cq, cq->cur);
	cq->cur = NULL;
	if (!cqe_valid(cq, cq->ci))
		return ENOENT;
	cqx_load(cq);
	return 0;
}

static void cqx_end_poll(struct ibv_cq_ex *ibcq)
{
	struct hd_cq *cq = cqx(ibcq);

	if (cq->cur)
		cqe_consume(cq, cq->cur);
	cq->cur = NULL;
	atomic_store_explicit(&cq->dbrec->ci, cq->ci, memory_order_release);
	hd_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode cqx_opcode(struct ibv_cq_ex *c)
{
	return (enum ibv_wc_opcode)cqx(c)->cur->opcode;
}

static uint32_t cqx_vendor_err(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->vendor_err;
}

static uint32_t cqx_byte_len(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->byte_len;
}

static __be32 cqx_imm_data(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->imm_data; /* network order already */
}

static uint32_t cqx_qp_num(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->qp_num;
}

static uint32_t cqx_src_qp(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->src_qp;
}

static unsigned int cqx_wc_flags(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->wc_flags;
}

static uint32_t cqx_slid(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->slid;
}

static uint8_t cqx_sl(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->sl;
}

static uint8_t cqx_dlid_path_bits(struct ibv_cq_ex *c)
{
	return cqx(c)->cur->dlid_path_bits;
}

struct ibv_cq_ex *hd_create_cq_ex(struct ibv_context *context,
				  struct ibv_cq_init_attr_ex *attr)
{
	struct hd_cq *cq;

	/* rdma-core's providers: unknown mask bits EINVAL; fields the
	 * device cannot report (timestamps, flow tags...), parent domains
	 * and CQ flags EOPNOTSUPP */
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) ||
	    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_create(context, (int)attr->cqe, attr->cq_context, attr->channel,
		       (int)attr->comp_vector);
	if (!cq)
		return NULL;
	cq->ibcq_ex.comp_mask = 0;
	cq->ibcq_ex.start_poll = cqx_start_poll;
	cq->ibcq_ex.next_poll = cqx_next_poll;
	cq->ibcq_ex.end_poll = cqx_end_poll;
	cq->ibcq_ex.read_opcode = cqx_opcode;
	cq->ibcq_ex.read_vendor_err = cqx_vendor_err;
	cq->ibcq_ex.read_byte_len = cqx_byte_len;
	cq->ibcq_ex.read_imm_data = cqx_imm_data;
	cq->ibcq_ex.read_qp_num = cqx_qp_num;
	cq->ibcq_ex.read_src_qp = cqx_src_qp;
	cq->ibcq_ex.read_wc_flags = cqx_wc_flags;
	cq->ibcq_ex.read_slid = cqx_slid;
	cq->ibcq_ex.read_sl = cqx_sl;
	cq->ibcq_ex.read_dlid_path_bits = cqx_dlid_path_bits;
	return &cq->ibcq_ex;
}
