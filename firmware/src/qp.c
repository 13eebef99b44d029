/* SPDX-License-Identifier: MIT */
/*
 * RC queue pairs: the table, creation and destruction, the state machine
 * of ibv_modify_qp (IBTA 10.3.1 and 11.2.4.2, table of required/optional
 * attributes per transition), error and flush (IBTA 10.3.1.14 / C10-39),
 * doorbell handling and the work lists.
 */
#include <string.h>

#include "nic.h"

#define QP_GEN_SHIFT SNIC_QP_IDX_BITS
#define QP_GEN_MASK  ((1u << (24 - SNIC_QP_IDX_BITS)) - 1)

static const char *const qp_state_name[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

static uint32_t qpn_of(const struct snic_qp *qp, uint32_t idx)
{
	return ((uint32_t)qp->gen << QP_GEN_SHIFT) | idx;
}

struct snic_qp *qp_by_qpn(struct snic_nic *nic, uint32_t qpn)
{
	uint32_t i = SNIC_QPN_IDX(qpn);
	struct snic_qp *qp = &nic->qps[i];

	if (!qp->in_use || qp->qpn != qpn)
		return NULL;
	return qp;
}

static struct snic_qp *qp_lookup(struct snic_nic *nic, unsigned ctx,
				 uint32_t qpn)
{
	struct snic_qp *qp = qp_by_qpn(nic, qpn);

	return qp && qp->ctx == ctx ? qp : NULL;
}

/* ---------------------------------------------------------------------- */
/* Create / destroy.                                                       */

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static bool ring_ok(const struct snic_nic *nic, uint64_t pa, uint32_t cnt,
		    uint32_t stride_log)
{
	uint64_t len = (uint64_t)cnt << stride_log;

	return (pa & 63) == 0 && pa + len >= pa &&
	       pa + len <= nic->cfg.host_mem_size;
}

static int create_args_ok(const struct snic_nic *nic,
			  const struct snic_cmd_create_qp *in)
{
	uint32_t sq_need = 64 + (in->max_send_sge * 16 > in->max_inline
				 ? in->max_send_sge * 16 : in->max_inline);
	uint32_t rq_need = 16 + in->max_recv_sge * 16;

	if (in->qp_type != SNIC_QPT_RC && in->qp_type != SNIC_QPT_UC &&
	    in->qp_type != SNIC_QPT_UD)
		return SNIC_ST_NOTSUP; /* XRC, raw packet, ... */
	if (!pow2(in->sq_wqe_cnt) || !pow2(in->rq_wqe_cnt) ||
	    in->sq_wqe_cnt > SNIC_MAX_QP_WR || in->rq_wqe_cnt > SNIC_MAX_QP_WR)
		return SNIC_ST_INVAL;
	if (in->max_send_sge > SNIC_MAX_SGE || in->max_recv_sge > SNIC_MAX_SGE ||
	    in->max_inline > SNIC_MAX_INLINE)
		return SNIC_ST_INVAL;
	if (in->sq_stride_log > 12 || in->rq_stride_log > 12 ||
	    (1u << in->sq_stride_log) < sq_need ||
	    (1u << in->rq_stride_log) < rq_need)
		return SNIC_ST_INVAL;
	if (!ring_ok(nic, in->sq_pa, in->sq_wqe_cnt, in->sq_stride_log) ||
	    !ring_ok(nic, in->rq_pa, in->rq_wqe_cnt, in->rq_stride_log) ||
	    !ring_ok(nic, in->dbrec_pa, 1, 6))
		return SNIC_ST_FAULT;
	return SNIC_ST_OK;
}

/* A free slot, preferring those not lingering after a destroy.  QPN 0
 * and 1 are the special QPs of IBTA 10.2.4: not ours to give. */
static uint32_t qp_free_slot(const struct snic_nic *nic)
{
	uint32_t any = SNIC_MAX_QP;

	for (uint32_t i = 2; i < SNIC_MAX_QP; i++) {
		const struct snic_qp *qp = &nic->qps[i];

		if (qp->in_use)
			continue;
		if (nic->now >= qp->linger_until)
			return i;
		if (any == SNIC_MAX_QP)
			any = i;
	}
	return any;
}

int qp_create(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_create_qp *in, uint32_t *qpn)
{
	uint32_t pd, scq, rcq, i;
	int st = create_args_ok(nic, in);

	if (st)
		return st;
	if (!pd_lookup(nic, ctx, in->pdn, &pd) ||
	    !cq_lookup(nic, ctx, in->send_cqn, &scq) ||
	    !cq_lookup(nic, ctx, in->recv_cqn, &rcq))
		return SNIC_ST_NOENT;
	i = qp_free_slot(nic);
	if (i == SNIC_MAX_QP)
		return SNIC_ST_NOMEM;
	struct snic_qp *qp = &nic->qps[i];
	uint16_t gen = (uint16_t)((qp->gen + 1) & QP_GEN_MASK);
	/* A destroyed QP may still sit on a work list (lists skip unused
	 * QPs): keep its flags so the index is never queued twice. */
	bool on_req = qp->on_req_list, on_resp = qp->on_resp_list;

	memset(qp, 0, sizeof(*qp));
	qp->on_req_list = on_req;
	qp->on_resp_list = on_resp;
	qp->in_use = true;
	qp->ctx = (uint8_t)ctx;
	qp->gen = gen;
	qp->qpn = qpn_of(qp, i);
	qp->pd = pd;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->sq_pa = in->sq_pa;
	qp->rq_pa = in->rq_pa;
	qp->dbrec_pa = in->dbrec_pa;
	qp->sq_cnt = in->sq_wqe_cnt;
	qp->rq_cnt = in->rq_wqe_cnt;
	qp->sq_stride_log = (uint8_t)in->sq_stride_log;
	qp->rq_stride_log = (uint8_t)in->rq_stride_log;
	qp->sq_sig_all = in->sq_sig_all != 0;
	qp->max_send_sge = in->max_send_sge;
	qp->max_recv_sge = in->max_recv_sge;
	qp->max_inline = in->max_inline;
	qp->type = (uint8_t)in->qp_type;
	qp->state = SNIC_QPS_RESET;
	/* A per-QP UDP source port spreads flows (A17.3.3 leaves it free);
	 * >= 0xC000 so dissectors do not take it for a well-known service. */
	qp->sport = (uint16_t)(0xc000 | (qp->qpn & 0x3fff));
	nic->pds[pd].refs++;
	nic->cqs[scq].refs++;
	nic->cqs[rcq].refs++;
	*qpn = qp->qpn;
	return SNIC_ST_OK;
}

static void qp_release(struct snic_nic *nic, struct snic_qp *qp)
{
	timer_cancel(nic, qp); /* its wheel links die with it */
	/* a connected RC QP lingers: see resp_linger_rx */
	qp->linger_until = qp->state >= SNIC_QPS_RTR && qp->state <= SNIC_QPS_SQE
			   ? nic->now + SNIC_LINGER_NS : 0;
	nic->pds[qp->pd].refs--;
	nic->cqs[qp->scq].refs--;
	nic->cqs[qp->rcq].refs--;
	qp->in_use = false;
	qp->state = SNIC_QPS_RESET;
}

int qp_destroy(struct snic_nic *nic, unsigned ctx, uint32_t qpn)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, qpn);

	if (!qp)
		return SNIC_ST_NOENT;
	/* The work lists skip QPs that are no longer in use. */
	qp_release_srq(nic, qp);
	qp_release(nic, qp);
	return SNIC_ST_OK;
}

/* ---------------------------------------------------------------------- */
/* State machine.                                                          */

#define M(x) SNIC_QP_##x

struct qp_trans {
	uint32_t req, opt;
	bool valid;
};

/* RC column of IBTA 11.2.4.2 (the same table the kernel's
 * ib_modify_qp_is_ok encodes). */
static const struct qp_trans qp_trans_tbl[7][7] = {
	[SNIC_QPS_RESET] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_INIT] = { M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
				    0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
	[SNIC_QPS_INIT] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_INIT] = { 0, M(PKEY_INDEX) | M(PORT) |
				       M(ACCESS_FLAGS), true },
		[SNIC_QPS_RTR] = { M(AV) | M(PATH_MTU) | M(DEST_QPN) |
				   M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) |
				   M(MIN_RNR_TIMER),
				   M(ALT_PATH) | M(ACCESS_FLAGS) |
				   M(PKEY_INDEX), true },
	},
	[SNIC_QPS_RTR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) |
				   M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC),
				   M(CUR_STATE) | M(ALT_PATH) |
				   M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) |
				   M(PATH_MIG_STATE), true },
	},
	[SNIC_QPS_RTS] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS) |
				      M(ALT_PATH) | M(PATH_MIG_STATE) |
				      M(MIN_RNR_TIMER), true },
		[SNIC_QPS_SQD] = { 0, M(EN_SQD_ASYNC_NOTIFY), true },
	},
	[SNIC_QPS_SQD] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS) |
				      M(ALT_PATH) | M(MIN_RNR_TIMER) |
				      M(PATH_MIG_STATE), true },
		[SNIC_QPS_SQD] = { 0, M(AV) | M(TIMEOUT) | M(RETRY_CNT) |
				      M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC) |
				      M(MAX_DEST_RD_ATOMIC) | M(CUR_STATE) |
				      M(ALT_PATH) | M(ACCESS_FLAGS) |
				      M(PKEY_INDEX) | M(MIN_RNR_TIMER) |
				      M(PATH_MIG_STATE), true },
	},
	[SNIC_QPS_SQE] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
		[SNIC_QPS_RTS] = { 0, M(CUR_STATE) | M(ACCESS_FLAGS), true },
	},
	[SNIC_QPS_ERR] = {
		[SNIC_QPS_RESET] = { 0, 0, true },
		[SNIC_QPS_ERR] = { 0, 0, true },
	},
};

bool qp_valid_transition(uint8_t cur, uint8_t next, uint32_t mask)
{
	const struct qp_trans *t;

	if (cur > SNIC_QPS_ERR || next > SNIC_QPS_ERR)
		return false;
	t = &qp_trans_tbl[cur][next];
	if (!t->valid)
		return false;
	if ((mask & t->req) != t->req)
		return false;
	/* STATE itself is always allowed; anything else must be listed */
	return (mask & ~(t->req | t->opt | M(STATE))) == 0;
}

/* Attribute values (IBTA 11.2.4.2 ranges, our device limits). */
static int attr_values_ok(const struct snic_nic *nic, uint32_t mask,
			  const struct snic_qp_attr *a)
{
	if ((mask & M(PORT)) && a->port_num != 1)
		return SNIC_ST_INVAL;
	if ((mask & M(PKEY_INDEX)) && a->pkey_index != 0)
		return SNIC_ST_INVAL;
	if ((mask & M(PATH_MTU)) &&
	    (a->path_mtu < 1 || a->path_mtu > nic->active_mtu_enum))
		return SNIC_ST_INVAL;
	if ((mask & M(MAX_DEST_RD_ATOMIC)) && a->max_dest_rd_atomic > SNIC_MAX_RD_ATOM)
		return SNIC_ST_INVAL;
	if ((mask & M(MAX_QP_RD_ATOMIC)) && a->max_rd_atomic > SNIC_MAX_RD_ATOM)
		return SNIC_ST_INVAL;
	if ((mask & M(TIMEOUT)) && a->timeout > 31)
		return SNIC_ST_INVAL;
	if ((mask & M(RETRY_CNT)) && a->retry_cnt > 7)
		return SNIC_ST_INVAL;
	if ((mask & M(RNR_RETRY)) && a->rnr_retry > 7)
		return SNIC_ST_INVAL;
	if ((mask & M(MIN_RNR_TIMER)) && a->min_rnr_timer > 31)
		return SNIC_ST_INVAL;
	if ((mask & M(DEST_QPN)) && a->dest_qp_num > ROCE_QPN_MASK)
		return SNIC_ST_INVAL;
	if ((mask & M(ACCESS_FLAGS)) && (a->qp_access_flags & ~0xfu))
		return SNIC_ST_INVAL;
	if (mask & M(ALT_PATH))
		return SNIC_ST_NOTSUP; /* automatic path migration */
	if (mask & M(AV)) {
		static const uint8_t v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
						   0xff, 0xff };
		/* RoCE needs a GRH; we route IPv4-mapped GIDs only */
		if (!a->is_global || a->sgid_index != 0)
			return SNIC_ST_INVAL;
		if (memcmp(a->dgid, v4map, 12) != 0)
			return SNIC_ST_NOTSUP;
	}
	return SNIC_ST_OK;
}

static uint32_t dgid_ipv4(const uint8_t *gid)
{
	return (uint32_t)gid[12] << 24 | (uint32_t)gid[13] << 16 |
	       (uint32_t)gid[14] << 8 | gid[15];
}

static void apply_attrs(struct snic_nic *nic, struct snic_qp *qp,
			uint32_t mask, const struct snic_qp_attr *a)
{
	struct snic_qp_attr *s = &qp->attr;

	if (mask & M(ACCESS_FLAGS))
		s->qp_access_flags = a->qp_access_flags;
	if (mask & M(PKEY_INDEX))
		s->pkey_index = a->pkey_index;
	if (mask & M(PORT))
		s->port_num = a->port_num;
	if (mask & M(PATH_MTU)) {
		s->path_mtu = a->path_mtu;
		qp->mtu = mtu_enum_to_bytes(a->path_mtu);
	}
	if (mask & M(DEST_QPN))
		s->dest_qp_num = a->dest_qp_num;
	if (mask & M(RQ_PSN)) {
		s->rq_psn = a->rq_psn & ROCE_PSN_MASK;
		qp->resp.epsn = s->rq_psn;
	}
	if (mask & M(SQ_PSN)) {
		s->sq_psn = a->sq_psn & ROCE_PSN_MASK;
		qp->npsn = s->sq_psn;
	}
	if (mask & M(MAX_DEST_RD_ATOMIC))
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & M(MAX_QP_RD_ATOMIC))
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & M(MIN_RNR_TIMER))
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & M(TIMEOUT))
		s->timeout = a->timeout;
	if (mask & M(RETRY_CNT)) {
		s->retry_cnt = a->retry_cnt;
		qp->retry_left = a->retry_cnt;
	}
	if (mask & M(RNR_RETRY)) {
		s->rnr_retry = a->rnr_retry;
		qp->rnr_left = a->rnr_retry;
	}
	if (mask & M(QKEY))
		s->qkey = a->qkey;
	if (mask & M(EN_SQD_ASYNC_NOTIFY))
		s->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & M(AV)) {
		memcpy(s->dgid, a->dgid, 16);
		s->flow_label = a->flow_label;
		s->sgid_index = a->sgid_index;
		s->hop_limit = a->hop_limit;
		s->traffic_class = a->traffic_class;
		s->is_global = a->is_global;
		s->sl = a->sl;
		s->dlid = a->dlid;
		s->static_rate = a->static_rate;
		s->src_path_bits = a->src_path_bits;
		qp->dip = dgid_ipv4(a->dgid);
		qp->dmac_valid = neigh_lookup(nic, qp->dip, qp->dmac);
		if (!qp->dmac_valid)
			neigh_resolve(nic, qp->dip);
	}
}

/* Back to RESET: forget every index and in-flight message (IBTA
 * 10.3.1.1); the host resets its rings likewise. */
static void qp_reset(struct snic_qp *qp)
{
	qp->sq_pi = qp->sq_fetch = 0;
	qp->infl_head = qp->infl_tail = 0;
	qp->rd_out = 0;
	qp->cur.valid = false;
	qp->rd_active = false;
	qp->acked_valid = false; /* else a stale ACK PSN retires new WQEs */
	qp->acked_psn = 0;
	qp->wait_until = 0;
	qp->rd_gap_valid = false;
	memset(&qp->resp, 0, sizeof(qp->resp));
	memset(&qp->attr, 0, sizeof(qp->attr));
	qp->npsn = 0;
}

int qp_modify(struct snic_nic *nic, unsigned ctx,
	      const struct snic_cmd_modify_qp *in)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, in->qpn);
	uint32_t mask = in->attr_mask;
	uint8_t cur, next;
	int st;

	if (!qp)
		return SNIC_ST_NOENT;
	cur = qp->state;
	if ((mask & M(CUR_STATE)) && in->attr.cur_qp_state != cur)
		return SNIC_ST_INVAL;
	if ((mask & M(STATE)) && in->attr.qp_state > SNIC_QPS_ERR)
		return SNIC_ST_INVAL; /* before the narrowing below */
	next = (mask & M(STATE)) ? (uint8_t)in->attr.qp_state : cur;
	if (!qp_valid_transition_type(qp->type, cur, next, mask))
		return SNIC_ST_INVAL;
	st = attr_values_ok(nic, mask, &in->attr);
	if (st)
		return st;
	if (next == SNIC_QPS_RESET) {
		timer_cancel(nic, qp);
		qp_reset(qp);
		qp->state = next;
		return SNIC_ST_OK;
	}
	apply_attrs(nic, qp, mask, &in->attr);
	qp->state = next;
	if (next == SNIC_QPS_ERR && cur != SNIC_QPS_ERR)
		qp_flush(nic, qp);
	else if (next == SNIC_QPS_RTS)
		qp_doorbell(nic, qp); /* WQEs posted before RTS may wait */
	return SNIC_ST_OK;
}

int qp_query(struct snic_nic *nic, unsigned ctx, uint32_t qpn,
	     struct snic_qp_attr *out)
{
	struct snic_qp *qp = qp_lookup(nic, ctx, qpn);

	if (!qp)
		return SNIC_ST_NOENT;
	*out = qp->attr;
	out->qp_state = qp->state;
	out->cur_qp_state = qp->state;
	out->sq_draining = 0;
	out->sq_psn = qp->state >= SNIC_QPS_RTS ? qp->npsn : qp->attr.sq_psn;
	out->max_send_wr = qp->sq_cnt;
	out->max_recv_wr = qp->rq_cnt;
	out->max_send_sge = qp->max_send_sge;
	out->max_recv_sge = qp->max_recv_sge;
	out->max_inline_data = qp->max_inline;
	return SNIC_ST_OK;
}

/* ---------------------------------------------------------------------- */
/* Errors and flushing.                                                    */

void qp_send_cqe(struct snic_nic *nic, struct snic_qp *qp,
		 const struct snic_inflight *f, uint8_t status)
{
	static const uint8_t wc_op[] = {
		[SNIC_WR_RDMA_WRITE] = SNIC_WC_RDMA_WRITE,
		[SNIC_WR_RDMA_WRITE_WITH_IMM] = SNIC_WC_RDMA_WRITE,
		[SNIC_WR_SEND] = SNIC_WC_SEND,
		[SNIC_WR_SEND_WITH_IMM] = SNIC_WC_SEND,
		[SNIC_WR_RDMA_READ] = SNIC_WC_RDMA_READ,
		[SNIC_WR_ATOMIC_CMP_AND_SWP] = SNIC_WC_COMP_SWAP,
		[SNIC_WR_ATOMIC_FETCH_AND_ADD] = SNIC_WC_FETCH_ADD,
	};
	struct snic_cqe cqe;

	/* Unsignaled successes leave no CQE (IBTA 10.8.2.2, C10-97) */
	if (status == SNIC_WC_SUCCESS && !f->signaled)
		return;
	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = f->wr_id;
	cqe.status = status;
	cqe.opcode = f->opcode < sizeof(wc_op) ? wc_op[f->opcode] : 0;
	cqe.byte_len = f->len;
	cqe.qp_num = qp->qpn;
	cqe.wqe_idx = f->wqe_idx;
	cqe.is_send = 1;
	cq_post(nic, qp->scq, &cqe, false);
}

static void recv_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_qp_dbrec db;
	struct snic_resp *r = &qp->resp;

	if (qp->has_srq) { /* the SRQ's WQEs stay for its other QPs */
		srq_flush_qp(nic, qp);
		return;
	}
	if (nic_dma_read(nic, qp->dbrec_pa, &db, 8) == 0) {
		uint32_t pi = atomic_load_explicit(&db.rq_pi, memory_order_relaxed);

		if (pi - r->rq_ci <= qp->rq_cnt)
			r->rq_pi = pi;
	}
	for (; r->rq_ci != r->rq_pi; r->rq_ci++) {
		struct snic_cqe cqe;
		uint64_t wr_id;
		uint64_t pa = qp->rq_pa +
			((uint64_t)(r->rq_ci & (qp->rq_cnt - 1)) << qp->rq_stride_log);

		if (nic_dma_read(nic, pa, &wr_id, 8))
			wr_id = 0;
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = wr_id;
		cqe.status = SNIC_WC_WR_FLUSH_ERR;
		cqe.opcode = SNIC_WC_RECV;
		cqe.qp_num = qp->qpn;
		cqe.wqe_idx = r->rq_ci;
		cq_post(nic, qp->rcq, &cqe, false);
	}
	r->in_send = false;
}

static void send_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_qp_dbrec db;

	/* in flight first, then everything not yet started (C10-39) */
	for (; qp->infl_head != qp->infl_tail; qp->infl_head++) {
		struct snic_inflight *f = &qp->infl[qp->infl_head % SNIC_INFLIGHT];

		qp_send_cqe(nic, qp, f, SNIC_WC_WR_FLUSH_ERR);
	}
	qp->cur.valid = false;
	if (nic_dma_read(nic, qp->dbrec_pa, &db, 8) == 0) {
		uint32_t pi = atomic_load_explicit(&db.sq_pi, memory_order_relaxed);

		if (pi - qp->sq_fetch <= qp->sq_cnt)
			qp->sq_pi = pi;
	}
	for (; qp->sq_fetch != qp->sq_pi; qp->sq_fetch++) {
		struct snic_inflight f;
		struct snic_wqe_ctrl c;
		uint64_t pa = qp->sq_pa +
			((uint64_t)(qp->sq_fetch & (qp->sq_cnt - 1)) << qp->sq_stride_log);

		memset(&f, 0, sizeof(f));
		if (nic_dma_read(nic, pa, &c, sizeof(c)) == 0) {
			f.wr_id = c.wr_id;
			f.opcode = c.opcode;
		}
		f.wqe_idx = qp->sq_fetch;
		qp_send_cqe(nic, qp, &f, SNIC_WC_WR_FLUSH_ERR);
	}
	qp->rd_out = 0;
	qp->rd_active = false;
}

void qp_flush(struct snic_nic *nic, struct snic_qp *qp)
{
	send_flush(nic, qp);
	recv_flush(nic, qp);
}

void qp_to_error(struct snic_nic *nic, struct snic_qp *qp, uint32_t event)
{
	char msg[64];

	if (qp->state == SNIC_QPS_ERR)
		return;
	CNT_INC(nic, qp_errors);
	if (qp->state <= SNIC_QPS_ERR) {
		/* set-up logging only: this happens once per QP */
		const char *p = qp_state_name[qp->state];
		unsigned n = 0;

		memcpy(msg, "qp error from ", 14);
		n = 14;
		while (*p && n < sizeof(msg) - 1)
			msg[n++] = *p++;
		msg[n] = 0;
		nic_log(nic, SNIC_LOG_DEBUG, msg);
	}
	qp->state = SNIC_QPS_ERR;
	if (event != UINT32_MAX)
		nic_event(nic, qp->ctx, event, qp->qpn);
	qp_flush(nic, qp);
}

/* ---------------------------------------------------------------------- */
/* Doorbells and work lists.                                               */

void qp_req_schedule(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->on_req_list)
		return;
	qp->on_req_list = true;
	nic->req_list[nic->req_tail++ % SNIC_MAX_QP] = (uint16_t)qp_idx(nic, qp);
}

void qp_resp_schedule(struct snic_nic *nic, struct snic_qp *qp)
{
	if (qp->on_resp_list)
		return;
	qp->on_resp_list = true;
	nic->resp_list[nic->resp_tail++ % SNIC_MAX_QP] = (uint16_t)qp_idx(nic, qp);
}

/* The host rang this QP: read its doorbell record once. */
void qp_doorbell(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_qp_dbrec db;
	uint32_t sq_pi, rq_pi;

	if (nic_dma_read(nic, qp->dbrec_pa, &db, 8))
		return; /* counted in dma_errors by nic_dma_read */
	sq_pi = atomic_load_explicit(&db.sq_pi, memory_order_relaxed);
	rq_pi = atomic_load_explicit(&db.rq_pi, memory_order_relaxed);
	/* A producer index that runs more than a ring ahead is a host bug:
	 * refuse it rather than read stale WQEs. */
	if (rq_pi - qp->resp.rq_ci <= qp->rq_cnt)
		qp->resp.rq_pi = rq_pi;
	if (sq_pi - qp->sq_fetch <= qp->sq_cnt)
		qp->sq_pi = sq_pi;
	if (qp->state == SNIC_QPS_ERR) {
		qp_flush(nic, qp); /* WQEs posted in ERR flush (C10-39) */
		return;
	}
	if (qp->state == SNIC_QPS_RTS && qp->sq_fetch != qp->sq_pi)
		qp_req_schedule(nic, qp);
}
