/* SPDX-License-Identifier: MIT */
/*
 * The RC responder's answers to READs and atomics: READ responses
 * segmented at the path MTU (FIRST/MIDDLE/LAST/ONLY from the opcode
 * table) and ATOMIC ACKs, in PSN order, within the pass's TX budget.
 */
#include "transport/rc_resp.h"

static struct snic_rd_res *rd_at_head(struct snic_resp *r)
{
	return &r->rd[r->rd_head % SNIC_MAX_RD_ATOM];
}

/* Its last response is out: off the pending set, on to the next. */
static void rd_done(struct snic_resp *r, struct snic_rd_res *rd)
{
	rd_unpend(r, rd);
	rd->replay = false;
	r->rd_head++;
}

/* The READ response's opcode by its place in the message (IBTA 9.2
 * table 36): a table of four, not roce_seg_opcode's guess checked against
 * the opcode table, whose first guess misses for every ONLY (the family
 * has no LAST with immediate: ONLY sits one lower), bench-instr READ. */
static uint8_t rd_opcode(bool first, bool last)
{
	static const uint8_t op[2][2] = {       /* [first][last] */
		{ ROCE_RC_READ_RESP_MIDDLE, ROCE_RC_READ_RESP_LAST },
		{ ROCE_RC_READ_RESP_FIRST, ROCE_RC_READ_RESP_ONLY },
	};

	return op[first][last];
}

/* One response packet; false when out of buffers or the QP failed. */
static bool atomic_ack(struct snic_nic *nic, struct snic_qp *qp,
		       struct snic_rd_res *rd)
{
	struct snic_resp *r = &qp->resp;
	struct roce_hdrs h;
	struct snic_pkt *p;

	pkt_qp_hdrs(qp, &h, ROCE_RC_ATOMIC_ACK, rd->psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ACK_CREDIT_NONE;
	h.aeth_msn = (r->msn + !rd->replay) & ROCE_PSN_MASK;
	h.atomic_orig = rd->orig;
	p = pkt_build_qp_ctl(nic, qp, &h);
	if (!p)
		return false;
	core_tx(&nic->core, p);
	r->rsp_txq_mark = nic->core.txq_tail;
	if (!rd->replay)
		r->msn++; /* counted once */
	rd_done(r, rd);
	return true;
}

static bool rd_packet(struct snic_nic *nic, struct snic_qp *qp,
		      struct snic_rd_res *rd)
{
	struct snic_resp *r = &qp->resp;
	uint32_t n = rd->len - rd->sent;
	bool last = n <= qp->mtu;       /* LAST or ONLY: the MSN moves on */
	uint8_t op = rd_opcode(rd->sent == 0, last);
	const struct snic_mr *mr = NULL;
	struct roce_hdrs h;
	struct snic_pkt *p;

	if (n > qp->mtu)
		n = qp->mtu;
	if (n && !(mr = rkey_check(nic, qp, rd->rkey, SNIC_ACCESS_REMOTE_READ,
				 rd->va + rd->sent, n))) {
		/* deregistered while we answered: access error (9.7.5.2.3) */
		nak_fatal(nic, qp, rd->psn, ROCE_NAK_REM_ACCESS);
		return false;
	}
	p = pkt_alloc_qp(nic, qp, op, n);
	if (!p)
		return false;
	pkt_qp_hdrs(qp, &h, op, rd->psn);
	h.aeth_syndrome = ROCE_AETH_ACK | ACK_CREDIT_NONE;
	h.aeth_msn = (r->msn + (last && !rd->replay)) & ROCE_PSN_MASK;
	/* headers first, then the payload with its ICRC (pkt_gather.c) */
	p->len = (uint16_t)pkt_build_mr(nic, qp, mr, rd->va + rd->sent,
					p->data, &h, n);
	if (!p->len) {
		/* no response without its data: the memory could not be
		 * read, a responder-side error (9.9.3.1.3); counted in
		 * dma_errors by core_dma_read */
		core_pkt_unused(&nic->core, p);
		qp->qcnt[SNIC_QCNT_tx_frames]--; /* pkt_qp_hdrs counted it */
		nak_fatal(nic, qp, rd->psn, ROCE_NAK_REM_OP_ERR);
		return false;
	}
	if (last && !rd->replay)
		r->msn++;
	core_tx(&nic->core, p);
	r->rsp_txq_mark = nic->core.txq_tail;
	CNT_INC(&nic->core, read_responses);
	rd->sent += n;
	rd->psn = psn_add(rd->psn, 1);
	if (last)
		rd_done(r, rd);
	return true;
}

static bool resp_qp(struct snic_nic *nic, struct snic_qp *qp)
{
	struct snic_resp *r = &qp->resp;
	unsigned budget = SNIC_QP_TX_BUDGET;

	while (budget-- && nic->core.tx_budget) {
		struct snic_rd_res *rd;
		bool sent;

		/* a QP reset since it was listed has no connection set (no
		 * responder resources, r->rd NULL): nothing to answer */
		if (qp->state == SNIC_QPS_ERR || !r->rd)
			return false;
		while (r->rd_head != r->rd_tail && !rd_at_head(r)->pending)
			r->rd_head++; /* answered already, or never replayed */
		if (r->rd_head == r->rd_tail) {
			resp_flush_acks(nic, qp); /* the ACK that waited */
			return false;
		}
		rd = rd_at_head(r);
		if (!qp->dmac_valid)
			return true;
		sent = rd->atomic ? atomic_ack(nic, qp, rd) : rd_packet(nic, qp, rd);
		if (!sent)
			return qp->state != SNIC_QPS_ERR;
	}
	return true;
}

unsigned resp_poll(struct snic_nic *nic)
{
	uint32_t n = nic->resp_tail - nic->resp_head;
	unsigned work = 0;

	while (n-- && nic->core.tx_budget) {
		struct snic_qp *qp =
			&nic->qps[nic->resp_list[nic->resp_head++ % SNIC_MAX_QP]];
		uint32_t before = nic->core.tx_budget;

		qp->on_resp_list = false;
		if (!qp->in_use)
			continue;
		if (resp_qp(nic, qp))
			qp_resp_schedule(nic, qp);
		work += before - nic->core.tx_budget;
	}
	return work;
}
